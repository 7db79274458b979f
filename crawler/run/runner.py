"""A run, from its jobs to the database: plan, shard, crawl, write, close, corpus steps.

1. **Plan.** Each job is one ``runs`` row. For an ingest, text dumps unchanged since their last complete
   parse (crawler/ingest/ledger.py: same path, bytes, anchor and parser) are counted here and never reach a
   spider; the ledger of table inputs is handed to the spider as an argument. Ingest and crawl spiders
   never read the database (the ``reparse`` spider's inputs are the raw inputs stored in it).
2. **Shard.** Worker processes (how many: crawler/procs.py, the one rule) each run the Scrapy engine
   with the whole pipeline chain over a shard: files for an ingest (balanced by bytes), sources for a crawl. A
   crawl of one source runs in one worker too, so that its engine does not share a core with the writer.
3. **Write.** The store stage hands batches of plain rows to a sink (crawler/run/sinks.py). In this process
   they go straight to a background writer; from worker processes they come over a pipe to this process,
   which owns the one writer (crawler/store/writer.py) and its SQLite connection.
4. **Close.** Each job's complete listings close the postings missing from them; a changed skill
   taxonomy retags the stored postings; then the corpus steps (dedupe, score) run, and each job's
   :class:`~crawler.report.RunReport` is stored in ``runs`` and returned.

Signals: workers ignore SIGINT/SIGTERM; this process, on the first one, tells every worker to stop
gracefully (a crawl with a JOBDIR saves its queue and resumes on the next run) and goes on storing what
they send; on the second it kills them. A worker whose parent is gone stops (its pipe is closed).
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Callable

from crawler import procs as rule
from crawler.procs import settle_gc
from crawler.run.progress import NullProgress, Progress
from crawler.report import CrawlReport, RunReport
from crawler.run.project import SpiderRun, run_spiders
from crawler.run.steps import StepFailed, alerts_step, corpus_steps

ORPHAN_GRACE = 20.0
"""Seconds a worker whose parent is gone has to stop gracefully (a JOBDIR saved) before it exits."""


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


# --------------------------------------------------------------------------- plan


def _plan_ingest(job: Job, db: str, overrides: dict[str, Any]) -> CrawlReport:
    """Take the text dumps unchanged since their last complete parse out of an ingest job's inputs and
    hand the table ledger to its spider; returns the report of what was skipped."""
    from crawler.files import Problem, open_regular, saved_at, stat_of
    from crawler.ingest.ledger import parser_version, unchanged_inputs
    from crawler.store.queries import raw_hashes
    from crawler.ingest.table import format_for
    from crawler.report import FILES, FILES_UNCHANGED, FOUND, UNPARSED
    from crawler.settings import project_settings
    from normalize.clock import iso_utc
    from normalize.text import sha256_hex

    skipped = CrawlReport()
    kwargs = job.spider_kwargs
    if overrides.get("JOBCRAWL_REPARSE") or "inputs" not in kwargs:
        return skipped
    settings = project_settings(overrides)
    # The spider's own reading options: the versions its parses are recorded under (built, not crawled).
    options = job.spidercls(**kwargs).reading_options()
    parsers = {source: parser_version(settings.getint("JOBCRAWL_MAX_TITLE_CHARS"), digest)
               for source, digest in options.items()}
    ledger = {source: unchanged_inputs(db, source, parser) for source, parser in parsers.items()}
    named = kwargs.get("source")  # one source for dumps and tables, named by the ingest
    kwargs["unchanged"] = {named or "tabular": ledger.get(named or "tabular", {})}
    kwargs["known"] = {source: raw_hashes(db, source) for source in parsers}
    dumps = ledger.get(named or "textdump") or {}
    if not dumps:
        return skipped
    by_locator: dict[str, list[tuple[str, str, int]]] = {}
    for (locator, sha), (as_of, postings) in dumps.items():
        by_locator.setdefault(locator, []).append((sha, as_of, postings))
    anchor = kwargs.get("as_of")
    keep, unread = [], []
    files = postings = 0
    for inp in kwargs["inputs"]:
        known = by_locator.get(inp.locator)
        if known is None or inp.problem is not None or format_for(inp.path, kwargs.get("format", "auto")) != "text":
            keep.append(inp)
            continue
        st = stat_of(inp.path)
        # Read as the spider would: a path that became a FIFO or a link to /dev/zero is never read here either.
        body = open_regular(inp.path, settings.getint("JOBCRAWL_MAX_FILE_SIZE"))
        if isinstance(st, Problem) or isinstance(body, Problem):  # the spider reports it
            keep.append(inp)
            continue
        as_of = iso_utc(anchor) if anchor else iso_utc(saved_at(st)[0])
        sha = sha256_hex(body)
        match = next(((a, n) for s, a, n in known if s == sha and a == as_of), None)
        if match is None:
            keep.append(inp)
            continue
        files += 1
        postings += match[1]
        unread.append((inp.locator, sha))
    kwargs["inputs"] = keep
    if files:
        skipped.stats = {FILES: files, FILES_UNCHANGED: files, FOUND: postings, UNPARSED: postings}
    if unread and kwargs.get("listing"):  # their postings are still part of the listing
        from crawler.store.queries import input_posting_keys

        skipped.listings[kwargs["listing"]] = input_posting_keys(db, named or "textdump", unread)
    return skipped


def _input_bytes(job: Job) -> int | None:
    """Bytes of the files a job ingests; None when it is not an ingest of files (a crawl)."""
    inputs = job.spider_kwargs.get("inputs")
    if inputs is None:
        return None
    total = 0
    for inp in inputs:
        try:
            total += inp.path.stat().st_size
        except OSError:  # gone since it was listed: the spider reports it
            pass
    return total


def _shards(jobs: list[Job], workers: int) -> list[list[tuple[int, Job]]]:
    """Split the jobs over at most ``workers`` processes: a crawl job whole (one per source), an ingest
    job's files in parts of about equal bytes. Each entry is (index of the job, the job or its part)."""
    if len(jobs) == 1 and jobs[0].spider_kwargs.get("inputs") is not None:
        job = jobs[0]
        inputs = job.spider_kwargs["inputs"]
        n = max(1, min(workers, len(inputs)))
        parts: list[list] = [[] for _ in range(n)]
        loads = [0] * n
        for inp in sorted(inputs, key=lambda i: _size(i.path), reverse=True):
            k = loads.index(min(loads))
            parts[k].append(inp)
            loads[k] += _size(inp.path) + 1
        order = {inp.path: i for i, inp in enumerate(inputs)}
        return [[(0, Job(job.spidercls, job.kind, job.args,
                         {**job.spider_kwargs, "inputs": sorted(part, key=lambda i: order[i.path])},
                         job.settings, job.source))] for part in parts if part]
    n = max(1, min(workers, len(jobs)))
    shards: list[list[tuple[int, Job]]] = [[] for _ in range(n)]
    for i, job in enumerate(jobs):
        shards[i % n].append((i, job))
    return shards


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# --------------------------------------------------------------------------- execute


def _spider_runs(entries: list[tuple[int, Job]], run_ids: list[int]) -> list[SpiderRun]:
    return [SpiderRun(job.spidercls, {"JOBCRAWL_RUN_ID": run_ids[i], **job.settings}, job.spider_kwargs)
            for i, job in entries]


def _run_inline(jobs: list[Job], run_ids: list[int], db: str, overrides: dict[str, Any],
                on_progress: Callable[[int], None] | None, progress: Progress
                ) -> tuple[list[CrawlReport], dict[int | None, dict]]:
    """Every job in this process; the store stage writes through a background writer of this process."""
    from crawler.run.sinks import WriterSink

    def responded(inputs: int) -> None:
        progress.advance(inputs=inputs)
        if on_progress:
            on_progress(inputs)

    sink = WriterSink(db)
    reports = run_spiders(_spider_runs(list(enumerate(jobs)), run_ids), overrides, sink=sink,
                          on_response=responded, on_stored=progress.advance)
    try:
        sink.close()
    except Exception as err:  # the writer failed: what it did not store is missing
        for report in reports:
            report.stage_failed = report.stage_failed or f"storing failed: {err!r}"
    return reports, {run_id: counts for run_id, counts in sink.writer.counts.items()}


def _worker(conn, entries: list[tuple[int, Job]], run_ids: list[int], overrides: dict[str, Any]) -> None:
    """A worker process: run its shard's spiders with the pipe to the parent as the sink; send the reports."""
    from crawler.run.sinks import PipeSink

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop (module docstring)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sink = PipeSink(conn)
    progress = _Ticker(sink)

    stopping = threading.Event()

    def listen(process) -> None:
        from scrapy import signals
        from twisted.internet import reactor

        settle_gc()  # the crawlers are built: what is alive now lives as long as the process

        def control() -> None:
            gone = False
            try:
                conn.recv()  # "stop", or EOF: the parent is gone
            except (EOFError, OSError):
                gone = True
            stopping.set()
            reactor.callFromThread(process.stop)
            if gone:  # nothing it fetches can be stored any more: a stop that hangs ends the process
                time.sleep(ORPHAN_GRACE)
                os._exit(1)

        def started(crawler) -> None:
            # A stop asked before an engine ran does not reach it (Scrapy drops it): stop it once it runs.
            if stopping.is_set():
                reactor.callLater(0, crawler.engine.close)

        for crawler in process.crawlers:
            crawler.signals.connect(lambda crawler=crawler: started(crawler), signal=signals.engine_started,
                                    weak=False)
        threading.Thread(target=control, name="jobcrawl-control", daemon=True).start()

    try:
        reports = run_spiders(_spider_runs(entries, run_ids), overrides, sink=sink, on_response=progress.tick,
                              on_stored=progress.advance, on_started=listen, install_signal_handlers=False)
        progress.flush()
        try:
            sink.close()
        except Exception as err:
            for report in reports:
                report.stage_failed = report.stage_failed or f"storing failed: {err}"
        sink.send("reports", [(i, report) for (i, _), report in zip(entries, reports)])
    except BaseException:
        try:
            sink.send("failed", traceback.format_exc())
        except Exception:  # the parent is gone: nothing to tell
            pass
        raise


class _Ticker:
    """Counts responses, postings and input bytes in a worker; sends them to the parent at most every 0.25 s."""

    def __init__(self, sink):
        self.sink, self.last = sink, time.monotonic()
        self.counts = {"inputs": 0, "postings": 0, "nbytes": 0}

    def tick(self, inputs: int) -> None:
        self.advance(inputs=inputs)

    def advance(self, **counts: int) -> None:
        for key, value in counts.items():
            self.counts[key] += value
        self._maybe_flush()

    def _maybe_flush(self) -> None:
        if time.monotonic() - self.last >= 0.25:
            self.flush()

    def flush(self) -> None:
        if any(self.counts.values()):
            try:
                self.sink.send("progress", dict(self.counts))
            except Exception:  # the parent is gone: the sink reports it
                pass
            self.counts = dict.fromkeys(self.counts, 0)
            self.last = time.monotonic()


def _run_workers(jobs: list[Job], shards: list[list[tuple[int, Job]]], run_ids: list[int], db: str,
                 overrides: dict[str, Any], on_progress: Callable[[int], None] | None, progress: Progress
                 ) -> tuple[list[CrawlReport], dict[int | None, dict]]:
    """Each shard in a worker process; their rows are written here, by the one writer."""
    from crawler.store.writer import BackgroundWriter

    context = rule.context()
    writer = BackgroundWriter(db, depth=2)
    workers = {}
    for n, entries in enumerate(shards):
        parent, child = context.Pipe()
        target, args = rule.with_environment(_worker, child, entries, run_ids, overrides)
        process = context.Process(target=target, args=args, name=f"jobcrawl-worker-{n + 1}", daemon=False)
        process.start()
        child.close()
        workers[parent] = (process, entries)
    reports: list[CrawlReport | None] = [None] * len(jobs)
    parts: dict[int, list[CrawlReport]] = {}
    stop = _Stopper(list(workers))
    failure: str | None = None
    try:
        with stop.installed():
            live = dict(workers)
            while live:
                for conn in wait(list(live), timeout=1.0):
                    process, entries = live[conn]
                    try:
                        kind, payload = conn.recv()
                    except (EOFError, OSError):
                        process.join(timeout=10)
                        failure = failure or (f"worker process {process.name} ended unexpectedly "
                                              f"(exit code {process.exitcode})")
                        del live[conn]
                        continue
                    if kind == "batch":
                        if writer.error is None:
                            try:
                                writer.write(payload)
                            except Exception:
                                stop.stop_all()
                        else:
                            stop.stop_all()
                    elif kind == "progress":
                        progress.advance(**payload)
                        if on_progress and payload["inputs"]:
                            on_progress(payload["inputs"])
                    elif kind == "reports":
                        for i, report in payload:
                            parts.setdefault(i, []).append(report)
                        del live[conn]
                    elif kind == "failed":
                        failure = failure or payload.strip().splitlines()[-1]
                        del live[conn]
    finally:
        for process, _ in workers.values():
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
        for conn in workers:
            conn.close()
    try:
        writer.close()
    except Exception as err:
        failure = failure or f"storing failed: {err!r}"
    for i, job in enumerate(jobs):
        merged = CrawlReport()
        got = parts.get(i, [])
        for report in got:
            merged.merge(report)
        expected = sum(1 for entries in shards for j, _ in entries if j == i)
        if len(got) < expected:
            merged.stage_failed = merged.stage_failed or failure or "a worker process sent no report"
            merged.finish_reason = merged.finish_reason or "failed"
        elif failure and writer.error is not None:
            merged.stage_failed = merged.stage_failed or failure
        reports[i] = merged
    return reports, dict(writer.counts)


class _Stopper:
    """SIGINT/SIGTERM while workers run: the first asks each to stop gracefully, the second kills them."""

    def __init__(self, conns):
        self.conns = conns
        self.signals = 0

    def stop_all(self) -> None:
        for conn in self.conns:
            try:
                conn.send("stop")
            except (OSError, ValueError):  # gone already
                pass

    def _handle(self, signum, frame) -> None:
        self.signals += 1
        if self.signals == 1:
            self.stop_all()
        else:
            for conn in self.conns:
                conn.close()
            raise KeyboardInterrupt

    def installed(self):
        from contextlib import contextmanager

        @contextmanager
        def handlers():
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            old = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for s, h in old.items():
                    signal.signal(s, h)

        return handlers()


# --------------------------------------------------------------------------- the run


def run_jobs(jobs: list[Job], db: str, *, settings: dict[str, Any] | None = None, workers: int | None = None,
             on_progress: Callable[[int], None] | None = None, progress: Progress | None = None,
             alerts: bool = True) -> list[RunReport]:
    """Run the jobs into ``db`` (see the module docstring); one :class:`RunReport` per job, in order.

    ``workers``: the switch of crawler/procs.py (default: the number of cores). ``progress`` hears of each
    phase (reading, storing, dedupe, scoring) and, while reading, of the inputs, postings and bytes read
    (crawler/run/progress.py shows it); ``on_progress`` gets the number of responses read since its last call.
    ``alerts``: end with the alerts step (``jobcrawl replay`` runs it once, after its last version).

    A crawl that finished removes its JOBDIR, so the next scheduled run starts afresh; an interrupted
    one keeps it to resume.
    """
    from crawler.store import skills
    from crawler.store.runs import start_run, steps_pending
    from crawler.store.schema import open_db
    from crawler.files import read_taxonomy

    overrides = dict(settings or {})
    taxonomy = read_taxonomy(overrides.get("JOBCRAWL_TAXONOMY"))
    database = open_db(db)
    pending = steps_pending(database)  # before start_run marks them pending for this run
    run_ids = [start_run(database, job.kind, job.args, source=job.source, mark_stale=not i) for i, job in enumerate(jobs)]
    for job in jobs:
        if job.args.get("rebuild") and job.spider_kwargs.get("listing"):
            from crawler.store.closing import restart_listing

            restart_listing(database, job.spider_kwargs["listing"])
    stale_skills = skills.prepare(database, taxonomy)
    database.close()
    overrides["JOBCRAWL_DB"] = db

    progress = progress or NullProgress()
    skipped = [_plan_ingest(job, db, overrides) if job.kind == "ingest" else CrawlReport() for job in jobs]
    active = [i for i, job in enumerate(jobs) if job.spider_kwargs.get("inputs", True)]
    sizes = [_input_bytes(jobs[i]) for i in active]
    total = None if None in sizes else sum(sizes)
    todo, ids = [jobs[i] for i in active], [run_ids[i] for i in active]
    shards = _shards(todo, workers or rule.default_workers()) if active else []
    apart = rule.reading(workers, total, len(shards)) if active else 0
    progress.start("reading", total_bytes=total, processes=apart)
    crawl_reports: list[CrawlReport] = [CrawlReport(finish_reason="finished") for _ in jobs]
    written: dict[int | None, dict] = {}
    if active:
        if apart:
            got, written = _run_workers(todo, shards, ids, db, overrides, on_progress, progress)
        else:
            got, written = _run_inline(todo, ids, db, overrides, on_progress, progress)
        for i, report in zip(active, got):
            crawl_reports[i] = report
    for report, skip in zip(crawl_reports, skipped):
        report.merge(skip)
    progress.finish("reading", {"inputs": sum(r.files for r in crawl_reports),
                                "postings": sum(r.found for r in crawl_reports),
                                "inputs_unchanged": sum(r.files_unchanged for r in crawl_reports)})

    return finish_jobs(jobs, db, run_ids, crawl_reports, written, crawled_by=max(apart, 1), workers=workers,
                       stale_skills=stale_skills,
                       taxonomy=taxonomy, alerts_config=overrides.get("JOBCRAWL_ALERTS_CONFIG"), progress=progress,
                       steps_pending=pending, alerts=alerts)


def finish_jobs(jobs: list[Job], db: str, run_ids: list[int], crawl_reports: list[CrawlReport],
                written: dict[int | None, dict], *, crawled_by: int | dict[int, int], workers: int | None,
                stale_skills: bool,
                taxonomy, alerts_config: str | None = None, progress: Progress | None = None,
                steps_pending: bool = True, alerts: bool = True) -> list[RunReport]:
    """The end of a run, local or distributed: each job's complete listings close what they miss, its
    status is decided; a changed taxonomy retags; the corpus steps run, then (with ``alerts``) the watches' alerts
    (config ``alerts_config``, default: crawler.alerts.config.default_config_path); each ``runs`` row is finished.
    The corpus steps are skipped (``{"skipped": 1}`` as their counts) when no posting was new, updated,
    closed, reopened or retagged and ``steps_pending`` is false (they succeeded after the last run that
    started before this one: crawler.store.runs.steps_pending): their inputs are what they were.
    ``written``: the writer's counts per run id; ``crawled_by``: processes that crawled (per run id, or one figure);
    ``workers``: the switch of crawler/procs.py, for the corpus steps;
    ``progress`` hears of the phases (storing, dedupe, scoring)."""
    progress = progress or NullProgress()
    from crawler.store import skills
    from crawler.store.closing import close_missing
    from crawler.store.runs import finish_run
    from crawler.store.schema import open_db
    from crawler.web.killsafe import release

    database = open_db(db)
    results = []
    for job, run_id, crawl in zip(jobs, run_ids, crawl_reports):
        processes = crawled_by.get(run_id, 0) if isinstance(crawled_by, dict) else crawled_by
        result = RunReport(run_id, job.kind, job.source, crawl, written=dict(written.get(run_id, {})), workers=processes)
        # An ingest's listing needs every input read: a shard that did not finish may have missed some.
        whole = job.kind != "ingest" or (crawl.finish_reason == "finished" and not crawl.stage_failed)
        closing = close_missing(database, crawl.listings if whole else {}, run_id=run_id, at=job.args.get("time"))
        result.closed, result.reopened, result.listings_complete = (closing["closed"], closing["reopened"],
                                                                    closing["listings"])
        result.decide_status()
        jobdir = job.settings.get("JOBDIR")
        if jobdir and crawl.finish_reason == "finished":
            shutil.rmtree(Path(jobdir), ignore_errors=True)
        elif jobdir and not crawl.stage_failed:  # its rows are committed: the saved queue may be resumed
            release(jobdir)
        results.append(result)
    progress.finish("storing", {k: sum(r.counts[k] for r in results)
                                for k in ("new", "updated", "unchanged", "quarantined")})
    last = results[-1]
    if stale_skills:  # the taxonomy changed since the stored postings were tagged
        last.retagged = skills.retag(database, taxonomy)["postings"]
    changed = steps_pending or bool(last.retagged) or any(
        result.counts[k] for result in results for k in ("new", "updated", "closed", "reopened"))
    try:
        steps = corpus_steps(database, skip=not changed, workers=workers, progress=progress)
    except StepFailed as failed:  # the postings are stored; the runs say so, the step can be re-run
        steps = failed.steps
        last.step_failed = {"step": failed.step, "error": failed.detail}
        for result in results:
            result.status = "failed"
        last.messages.append(f"{failed}; the postings are stored: run `jobcrawl {failed.step} --db {db}` to retry")
    else:
        if alerts:
            last.alerts, failed = alerts_step(db, last.run_id, alerts_config)
            last.messages += [failed] if failed else []
    total = database["postings"].count
    for result in results:
        result.steps, result.total_postings = steps, total
        finish_run(database, result)
    database.close()
    return results


def run_job(job: Job, db: str, **kwargs: Any) -> RunReport:
    """:func:`run_jobs` for one job."""
    return run_jobs([job], db, **kwargs)[0]
