"""Jobs the CLI runs, as library functions: a crawl or ingest into a database, recorded in ``runs``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from crawler.db import skills
from crawler.db.runs import finish_run, start_run
from crawler.db.schema import open_db
from crawler.run import run_spider
from normalize.skills import load_taxonomy

COUNT_STATS = {
    "files": "jobcrawl/files",
    "found": "jobcrawl/postings_found",
    "new": "jobcrawl/new",
    "updated": "jobcrawl/updated",
    "unchanged": "jobcrawl/unchanged",
    "quarantined": "jobcrawl/quarantined",
    "closed": "jobcrawl/closed",
}


@dataclass
class RunResult:
    """What a run did: its row id, counts, one line per quarantined input, status and all stats."""

    run_id: int
    counts: dict[str, int]
    problems: list[str]
    status: str
    total_postings: int
    stats: dict[str, Any] = field(repr=False)
    steps: dict[str, dict[str, int]] = field(default_factory=dict)

    def summary(self) -> str:
        c = self.counts
        return (f"files read {c['files']} · postings found {c['found']} · new {c['new']} · updated {c['updated']} · "
                f"unchanged {c['unchanged']} · quarantined {c['quarantined']}")


def run_into_db(spidercls, db: str, *, kind: str, args: dict[str, Any], spider_kwargs: dict[str, Any],
                settings: dict[str, Any] | None = None, on_response: Callable[[], None] | None = None) -> RunResult:
    """Run one spider through the engine and the pipelines into ``db``; record the run.

    Status: ``ok``, ``partial`` (something quarantined) or ``failed`` (the crawl did not finish).
    """
    taxonomy = load_taxonomy((settings or {}).get("JOBCRAWL_TAXONOMY"))
    database = open_db(db)
    run_id = start_run(database, kind, args)
    stale_skills = skills.prepare(database, taxonomy)
    database.close()

    overrides = {"JOBCRAWL_DB": db, "JOBCRAWL_RUN_ID": run_id, **(settings or {})}
    stats = run_spider(spidercls, overrides, on_response=on_response, **spider_kwargs)

    counts = {name: int(stats.get(key, 0)) for name, key in COUNT_STATS.items()}
    problems = list(stats.get("jobcrawl/quarantine_log", []))
    status = "partial" if counts["quarantined"] else "ok"
    if stats.get("finish_reason") not in (None, "finished"):
        status = "failed"
    kept = {k: v for k, v in stats.items() if k != "jobcrawl/quarantine_log"}
    database = open_db(db)
    if stale_skills:  # the taxonomy changed since the stored postings were tagged
        kept["jobcrawl/retagged"] = skills.retag(database, taxonomy)["postings"]
    steps = after_run(database)
    kept.update({f"jobcrawl/{step}/{k}": v for step, result in steps.items() for k, v in result.items()})
    finish_run(database, run_id, counts, status=status, stats=kept)
    total = database["postings"].count
    database.close()
    return RunResult(run_id, counts, problems, status, total, kept, steps)


def after_run(database) -> dict[str, dict[str, int]]:
    """Corpus steps run at the end of every ingest and crawl: dedupe (incremental)."""
    from crawler.steps.dedupe import dedupe

    return {"dedupe": dedupe(database)}
