"""Replay the history of one file in a git repository into a database, version by version.

Each committed version (crawler/replay/git.py), oldest first, is ingested as the complete listing of the source
(``jobcrawl ingest --source NAME --complete --as-of <committer date>``: crawler.api.ingest_job), one run each,
its ``runs`` row naming the commit and blob. So every posting gets the commit time it first and last appeared at
and the one it vanished at, and reopens when it comes back.

- A version already replayed into the source (its commit among the source's runs since its last rebuild) is
  skipped: replaying again after new commits ingests only those.
- A version with the same bytes as the version replayed before it (a commit that only changed the file's mode,
  a revert to the last content) is not read nor parsed: the listing's open postings are seen again at its time
  (crawler.store.closing.seen_again), recorded as a run of its own.
- A commit that deleted the file is skipped (an absent file is no listing: it closes nothing); a version larger
  than the size cap, or earlier than the source's latest run (committer dates out of order), is skipped with a
  problem line.
- ``rebuild``: the first version ingested rebuilds the source (crawler.store.closing.restart_listing) and every
  version is replayed again.

The watches' alerts run once, after the last version (not after each: a posting of the history that has closed
since is not news), as the alerts step of a run does: their new matches among the postings open at the end.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawler.files import MAX_FILE_BYTES
from crawler.procs import call_in_fresh_process
from crawler.replay.git import Version, read_blob, versions
from crawler.run.progress import NullProgress, Progress

COUNTS = ("new", "updated", "unchanged", "quarantined", "closed", "reopened")


@dataclass
class Replayed:
    """What a replay did: ``versions`` of the file in the history; ``ingested`` (a run each), ``unchanged`` (the
    same bytes as the version before: seen again, not parsed), ``done`` (replayed before), ``deleted``, ``skipped``
    (a problem line each); ``counts`` summed over its runs (:data:`COUNTS`); ``failed``: a run failed."""

    source: str
    versions: int = 0
    ingested: int = 0
    unchanged: int = 0
    done: int = 0
    deleted: int = 0
    skipped: int = 0
    postings: int = 0
    counts: Counter = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    first: Version | None = None
    last: Version | None = None
    failed: bool = False
    run_ids: list[int] = field(default_factory=list)
    alerts: Any = None
    """crawler.alerts.delivery.DeliveryReport of the alerts step after the last version (None: nothing replayed)."""

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("source", "versions", "ingested", "unchanged", "done", "deleted",
                                             "skipped", "postings", "problems", "failed", "run_ids")}
        out["counts"] = {k: self.counts.get(k, 0) for k in COUNTS}
        out["first"], out["last"] = (None if v is None else {"commit": v.commit, "time": v.time}
                                     for v in (self.first, self.last))
        out["alerts"] = None if self.alerts is None else self.alerts.counters()
        return out


def default_source(repo: str | Path, path: str) -> str:
    """The source of a replay without ``--source``: the repository folder's name and the file's path."""
    import re

    name = Path(repo).resolve().name
    if name == ".git":
        name = Path(repo).resolve().parent.name
    return re.sub(r"[^A-Za-z0-9._:/@+-]", "-", f"{name}/{path}".lstrip("./"))[:100] or "replay"


def replay(repo: str | Path, path: str, db: str, *, source: str | None = None, rev: str = "HEAD",
           fmt: str = "auto", preset: str | None = None, rebuild: bool = False,
           max_file_size: int = MAX_FILE_BYTES, workers: int | None = None, settings: dict[str, Any] | None = None,
           progress: Progress | None = None) -> Replayed:
    """Replay ``path`` of the git repository ``repo`` (from ``rev``) into ``db`` as source ``source`` (default
    :func:`default_source`); see the module docstring. Raises crawler.replay.git.GitError (no such repository,
    revision or path) and crawler.api.UsageError (a bad option) before any run."""
    from crawler import api
    from crawler.store.runs import replayed_versions

    source = source or default_source(repo, path)
    api.source_name(source, complete=True, rebuild=rebuild)
    history = versions(repo, path, rev)
    done = {} if rebuild else {commit: (blob, status) for commit, blob, status in replayed_versions(db, source)}
    previous = list(done.values())[-1] if done else None  # (blob, status) of the version replayed last
    out = Replayed(source, versions=len(history))
    todo = [v for v in history if v.commit not in done]
    out.done = len(history) - len(todo)
    progress = progress or NullProgress()
    progress.start("reading", total_bytes=sum(v.size for v in todo if v.size <= max_file_size))
    with tempfile.TemporaryDirectory(prefix="jobcrawl-replay-") as tmp:
        copy = Path(tmp) / Path(path).name  # one locator for every version: the file's name
        for version in todo:
            before = out.postings
            outcome = _version(version, repo, path, db, copy, out, previous, rebuild=rebuild and not out.ingested,
                               options={"fmt": fmt, "preset": preset, "max_file_size": max_file_size},
                               workers=workers, settings=settings)
            if outcome is not None:
                previous = outcome
                out.first = out.first or version
                out.last = version
            progress.advance(inputs=1, postings=out.postings - before,
                             nbytes=version.size if version.size <= max_file_size else 0)
            if out.failed:
                break
    progress.finish("reading", {"inputs": out.ingested + out.unchanged, "postings": out.postings,
                                "inputs_unchanged": out.unchanged})
    if (out.ingested or out.unchanged) and not out.failed:
        from crawler.run.lock import db_lock
        from crawler.run.steps import alerts_step

        with db_lock(db):
            out.alerts, failed = alerts_step(db, out.run_ids[-1] if out.run_ids else None,
                                             (settings or {}).get("JOBCRAWL_ALERTS_CONFIG"))
        out.problems += [failed] if failed else []
    return out


def _version(version: Version, repo, path: str, db: str, copy: Path, out: Replayed, previous, *, rebuild: bool,
             options: dict, workers, settings) -> tuple[str, str] | None:
    """Replay one version; its (blob, status) when it was replayed, None when it was skipped."""
    from crawler import api

    short = f"{version.commit[:12]} ({version.time})"
    if version.blob is None:
        out.deleted += 1
        return None
    if version.size > options["max_file_size"]:
        out.skipped += 1
        out.problems.append(f"{short}: {path} is {version.size:,} bytes, over --max-file-size: not replayed")
        return None
    extra = {"commit": version.commit, "blob": version.blob, "paths": [f"{repo}:{path}@{version.commit[:12]}"]}
    if previous is not None and previous == (version.blob, "ok") and not rebuild:
        try:
            seen = _seen_again(db, out.source, version.time, extra)
        except api.OutOfOrder as err:
            return _out_of_order(out, short, err)
        out.unchanged += 1
        out.counts["unchanged"] += seen
        out.postings += seen
        return version.blob, "ok"
    copy.write_bytes(read_blob(repo, version.blob))
    job, own = api.ingest_job([str(copy)], db, as_of=version.time, fmt=options["fmt"], preset=options["preset"],
                              max_file_size=options["max_file_size"], source=out.source, complete=True,
                              rebuild=rebuild)
    job.args.update(extra)
    try:
        api.check_order(db, [job])
    except api.OutOfOrder as err:
        return _out_of_order(out, short, err)
    # A Scrapy engine runs once a process: each version's run in a process of its own (it checks the order again).
    report = call_in_fresh_process(_run, job, db, workers, {**own, **(settings or {})}, name="jobcrawl-replay")
    out.ingested += 1
    out.run_ids.append(report.run_id)
    out.postings += report.crawl.found
    for key in COUNTS:
        out.counts[key] += report.counts.get(key, 0)
    out.problems += [f"{short}: {line}" for line in report.problems + report.errors]
    out.failed = report.status == "failed"
    return version.blob, report.status


def _run(job, db: str, workers: int | None, settings: dict):
    """One version's ingest run (in a fresh process)."""
    from crawler import api

    return api.run([job], db, workers=workers, settings=settings, alerts=False)[0]


def _out_of_order(out: Replayed, short: str, err: Exception) -> None:
    out.skipped += 1
    out.problems.append(f"{short}: {err}; not replayed")
    return None


def _seen_again(db: str, source: str, at: str, extra: dict) -> int:
    """Record a version with the bytes of the one before as a run that saw the listing's open postings again."""
    from datetime import datetime

    from crawler import api
    from crawler.run.lock import db_lock
    from crawler.store.closing import seen_again
    from crawler.store.runs import start_run, write_run_end
    from crawler.store.schema import open_db
    from normalize.clock import iso_utc

    time = iso_utc(datetime.fromisoformat(at))
    args = {**extra, "as_of": at, "source": source, "complete": True, "rebuild": False, "time": time,
            "same_as_before": True}
    with db_lock(db):
        api.check_order(db, [_Args(args)])
        database = open_db(db)
        try:
            run_id = start_run(database, "ingest", args, source=source, mark_stale=False)
            seen = seen_again(database, f"ingest:{source}", time)
            write_run_end(database, run_id, {"files": 1, "found": seen, "unchanged": seen}, status="ok")
        finally:
            database.close()
    return seen


@dataclass
class _Args:
    """What crawler.api.check_order reads of a job."""

    args: dict
    kind: str = "ingest"
