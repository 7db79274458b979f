"""Jobs the CLI runs, as library functions: a crawl or ingest into a database, recorded in ``runs``."""

from __future__ import annotations

import shutil
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from crawler.db import skills
from crawler.db.closing import close_missing
from crawler.db.runs import finish_run, start_run
from crawler.db.schema import open_db
from crawler.run import SpiderRun, run_spiders
from crawler.safety import summary_note
from normalize.skills import load_taxonomy

MAX_STAGE_PROCESSES = 2
"""Crawlers of one run that get a stage worker process each; with more, stages run inline."""
INLINE_STAGES_MAX_BYTES = 2 * 2**20
"""Ingests of at most this many bytes of files run their stages inline: the stage worker's start-up
(about 2 s of imports, which the crawl waits for when it closes) costs more than the second core
saves (bench: 300 dump postings in 2.4 MB took 4.6 s inline and 5.7–6.5 s with the worker; 2,000
CSV rows in 2 MB 6.8–7.2 s and 6.9–7.7 s)."""
DEDUPE_PROCESS_MIN = 20_000
"""From this many postings on, the dedupe step runs in a fresh process: its index (123 MB at 100,000
postings, about 1.3 KB each) and the engine's own memory are then not held by one process."""

COUNT_STATS = {
    "files": "jobcrawl/files",
    "found": "jobcrawl/postings_found",
    "new": "jobcrawl/new",
    "updated": "jobcrawl/updated",
    "unchanged": "jobcrawl/unchanged",
    "quarantined": "jobcrawl/quarantined",
    "requests": "jobcrawl/http/requests",
}
# Stats too bulky for the runs row (kept in RunResult.stats).
BULKY_STATS = ("jobcrawl/quarantine_log", "jobcrawl/error_log", "jobcrawl/listings")


@dataclass
class RunResult:
    """What a run did: its row id, counts, one line per quarantined input, status and all stats.

    Crawls also carry the source name, responses by status and one line per failed request.
    """

    run_id: int
    counts: dict[str, int]
    problems: list[str]
    status: str
    total_postings: int
    stats: dict[str, Any] = field(repr=False)
    steps: dict[str, dict[str, int]] = field(default_factory=dict)
    source: str | None = None
    responses: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        c = self.counts
        skipped = c.get("files_unchanged", 0)
        noun, their = ("file", "its") if skipped == 1 else ("files", "their")
        return (f"files read {c['files']} · postings found {c['found']} · new {c['new']} · updated {c['updated']} · "
                f"unchanged {c['unchanged']} · quarantined {c['quarantined']}"
                + (f" · not stored (errors) {c['errors']}" if c["errors"] else "")
                + (f" · {skipped} {noun} unchanged since {their} last parse, not stored again" if skipped else ""))

    def crawl_summary(self) -> str:
        """One line for a crawl: network, postings, closing, problems, status."""
        c = self.counts
        statuses = " ".join(f"{code}×{n}" for code, n in sorted(self.responses.items())) or "none"
        return (f"{self.source}: requests {c['requests']} · responses {statuses} · postings found {c['found']} · "
                f"new {c['new']} · updated {c['updated']} · unchanged {c['unchanged']} · closed {c['closed']} · "
                f"reopened {c['reopened']} · quarantined {c['quarantined']} · errors {c['errors']}"
                f"{summary_note(self.stats)} · {self.status} (run {self.run_id})")


@dataclass
class Job:
    """One spider run, recorded as one ``runs`` row: the spider, what to record as its arguments,
    the keyword arguments of the spider and its own Scrapy settings (``JOBDIR`` among them)."""

    spidercls: type | str
    kind: str
    args: dict[str, Any]
    spider_kwargs: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    source: str | None = None


def run_status(kind: str, stats: dict[str, Any], counts: dict[str, int]) -> str:
    """``ok``; ``partial`` (something quarantined or failed, or the request cap was reached);
    ``interrupted`` (a crawl stopped by a signal: resumable with its JOBDIR); ``failed``."""
    reason = stats.get("finish_reason")
    if stats.get("jobcrawl/stage_failed"):  # normalizing, tagging or storing broke: data may be missing
        return "failed"
    if reason == "finished":
        return "partial" if counts["quarantined"] or counts["errors"] else "ok"
    if reason in ("request_cap", "closespider_pagecount"):
        return "partial"
    if reason == "shutdown" and kind == "crawl":
        return "interrupted"
    return "failed"


def _counts(stats: dict[str, Any]) -> dict[str, int]:
    counts = {name: int(stats.get(key, 0)) for name, key in COUNT_STATS.items()}
    # Files the spider did not parse again (crawler/ledger.py): their postings are unchanged.
    counts["files_unchanged"] = int(stats.get("jobcrawl/files_unchanged", 0))
    counts["unchanged"] += int(stats.get("jobcrawl/postings_unchanged_unparsed", 0))
    counts["errors"] = int(stats.get("jobcrawl/errors", 0)) + sum(
        int(v) for k, v in stats.items() if k.startswith("spider_exceptions/"))
    return counts


def run_jobs_into_db(jobs: list[Job], db: str, *, settings: dict[str, Any] | None = None,
                     on_response: Callable[[], None] | None = None) -> list[RunResult]:
    """Run the jobs' spiders at once in this process, through the pipelines into ``db``.

    Each job is a ``runs`` row. After the crawl: the closing step per job (postings missing from
    the complete listings it read are marked closed), a retag if the skill taxonomy changed, and
    the corpus steps (recorded in the last job's stats). A crawl that finished removes its JOBDIR,
    so the next scheduled run starts afresh; an interrupted one keeps it to resume.
    """
    taxonomy = load_taxonomy((settings or {}).get("JOBCRAWL_TAXONOMY"))
    database = open_db(db)
    run_ids = [start_run(database, job.kind, job.args, source=job.source, mark_stale=not i) for i, job in enumerate(jobs)]
    stale_skills = skills.prepare(database, taxonomy)
    database.close()

    runs = [SpiderRun(job.spidercls, {"JOBCRAWL_RUN_ID": run_id, **job.settings}, job.spider_kwargs)
            for job, run_id in zip(jobs, run_ids)]
    overrides = {"JOBCRAWL_DB": db, **(settings or {})}
    # Stages inline: one stage worker per crawler would be too many processes, or the input too small to pay for one.
    size = _input_bytes(jobs)
    if len(runs) > MAX_STAGE_PROCESSES or (size is not None and size <= INLINE_STAGES_MAX_BYTES):
        overrides.setdefault("JOBCRAWL_STAGE_PROCESS", False)
    all_stats = run_spiders(runs, overrides, on_response=on_response)

    database = open_db(db)
    results = []
    for job, run_id, stats in zip(jobs, run_ids, all_stats):
        counts = _counts(stats)
        closing = close_missing(database, stats.get("jobcrawl/listings") or {}, run_id=run_id)
        counts.update(closed=closing["closed"], reopened=closing["reopened"])
        kept = {k: v for k, v in stats.items() if k not in BULKY_STATS}
        kept["jobcrawl/listings_complete"] = closing["listings"]
        responses = {k.rsplit("/", 1)[1]: int(v) for k, v in stats.items() if k.startswith("jobcrawl/http/status/")}
        status = run_status(job.kind, stats, counts)
        jobdir = job.settings.get("JOBDIR")
        if jobdir and stats.get("finish_reason") == "finished":
            shutil.rmtree(Path(jobdir), ignore_errors=True)
        results.append(RunResult(run_id, counts, list(stats.get("jobcrawl/quarantine_log", [])), status, 0, kept,
                                 source=job.source, responses=responses,
                                 errors=[*stats.get("jobcrawl/error_log", []), *stats.get("jobcrawl/item_error_log", [])]))
    last = results[-1]
    if stale_skills:  # the taxonomy changed since the stored postings were tagged
        last.stats["jobcrawl/retagged"] = skills.retag(database, taxonomy)["postings"]
    try:
        steps = after_run(database)
    except StepFailed as failed:  # the postings are stored; the runs say so, the step can be re-run
        steps = failed.steps
        last.stats["jobcrawl/step_failed"] = {"step": failed.step, "error": failed.detail}
        for result in results:
            result.status = "failed"
        last.errors.append(f"{failed}; the postings are stored: run `jobcrawl {failed.step} --db {db}` to retry")
    last.stats.update({f"jobcrawl/{step}/{k}": v for step, result in steps.items() for k, v in result.items()})
    total = database["postings"].count
    for result in results:
        result.steps, result.total_postings = steps, total
        finish_run(database, result.run_id, result.counts, status=result.status, stats=result.stats,
                   responses=result.responses)
    database.close()
    return results


def _input_bytes(jobs: list[Job]) -> int | None:
    """Bytes of the files the jobs ingest; None when a job is not an ingest of files (a crawl)."""
    total = 0
    for job in jobs:
        inputs = job.spider_kwargs.get("inputs")
        if inputs is None:
            return None
        for inp in inputs:
            try:
                total += inp.path.stat().st_size
            except OSError:  # gone since it was listed: the spider reports it
                pass
    return total


def run_into_db(spidercls, db: str, *, kind: str, args: dict[str, Any], spider_kwargs: dict[str, Any],
                settings: dict[str, Any] | None = None, on_response: Callable[[], None] | None = None) -> RunResult:
    """Run one spider through the engine and the pipelines into ``db``; record the run.

    Status: ``ok``, ``partial`` (something quarantined) or ``failed`` (the crawl did not finish).
    """
    job = Job(spidercls, kind, args, spider_kwargs)
    return run_jobs_into_db([job], db, settings=settings, on_response=on_response)[0]


class StepFailed(RuntimeError):
    """A corpus step failed after the crawl had stored its postings.

    ``step`` names it, ``steps`` holds the results of the steps that finished before it and
    ``detail`` the error with its traceback (the child's, when the step ran in a process of its own).
    """

    def __init__(self, step: str, error: BaseException, steps: dict[str, dict[str, int]], detail: str) -> None:
        from crawler.procs import ChildFailed

        # The error's last line, as a traceback ends: "sqlite3.OperationalError: database or disk is full".
        text = str(error) if isinstance(error, ChildFailed) else traceback.format_exception_only(error)[-1]
        super().__init__(f"the {step} step failed: {text.strip().splitlines()[-1]}")
        self.step, self.steps, self.detail = step, steps, detail


def after_run(database, *, fresh_process: bool | None = None) -> dict[str, dict[str, int]]:
    """Corpus steps run at the end of every ingest and crawl: dedupe (incremental), then market
    statistics and our evaluation of every active posting (``jobcrawl-v1``).

    ``fresh_process``: dedupe in a process of its own (default: from ``DEDUPE_PROCESS_MIN`` postings on).
    Scoring stays here: it runs in worker processes of its own anyway. A step that raises ends the
    steps with :class:`StepFailed` (each step commits as a whole, so re-running it is safe).
    """
    from crawler.procs import call_in_fresh_process
    from crawler.steps.dedupe import dedupe, dedupe_at
    from crawler.steps.score import score_corpus

    if fresh_process is None:
        fresh_process = database["postings"].count >= DEDUPE_PROCESS_MIN
    steps: dict[str, dict[str, int]] = {}
    step = "dedupe"
    try:
        if fresh_process:
            path = database.execute("PRAGMA database_list").fetchone()[2]
            steps["dedupe"] = call_in_fresh_process(dedupe_at, path, name="jobcrawl-dedupe")
        else:
            steps["dedupe"] = dedupe(database)
        step = "score"
        scored = score_corpus(database)
    except Exception as err:
        raise StepFailed(step, err, steps, traceback.format_exc()) from err
    steps["score"] = {k: v for k, v in scored.items() if isinstance(v, int)}
    return steps
