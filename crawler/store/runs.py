"""The runs table: one row per ingest, crawl or corpus step, with its counts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import sqlite_utils

from normalize.clock import now_iso

if TYPE_CHECKING:
    from crawler.report import RunReport


STEPS_PENDING = "corpus_steps_pending"
"""Meta key: ``1`` from the start of a run until its corpus steps (dedupe, scoring) succeeded; ``0`` after."""


def steps_pending(db: sqlite_utils.Database) -> bool:
    """Whether postings may have changed since the corpus steps last succeeded: a run started since then (and
    was killed, or its steps failed), or the database predates the flag."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (STEPS_PENDING,)).fetchone()
    return row is None or row[0] != "0"


def set_steps_pending(db: sqlite_utils.Database, pending: bool) -> None:
    with db.conn:
        _mark_steps(db, pending)


def _mark_steps(db: sqlite_utils.Database, pending: bool) -> None:
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (STEPS_PENDING, "1" if pending else "0"))


def latest_source_time(db_path: str, source: str) -> str | None:
    """The latest time (``args.time``, UTC ISO) of the ingest runs of a named ``source`` since its last rebuild
    (the rebuild included); None when it has none or the database does not exist yet (read-only)."""
    from pathlib import Path

    from crawler.store import connect_readonly

    if not Path(db_path).is_file():
        return None
    conn = connect_readonly(db_path)
    try:
        of_source = "FROM runs WHERE kind = 'ingest' AND source = :source"
        return conn.execute(
            f"SELECT max(json_extract(args, '$.time')) {of_source} AND id >= coalesce("
            f"(SELECT max(id) {of_source} AND json_extract(args, '$.rebuild')), 0)", {"source": source}).fetchone()[0]
    finally:
        conn.close()


def replayed_versions(db_path: str, source: str) -> list[tuple[str, str, str]]:
    """``(commit, blob, status)`` of the runs of ``source`` that ingested a committed version (``jobcrawl replay``)
    since its last rebuild, oldest first; empty when the database does not exist yet (read-only)."""
    from pathlib import Path

    from crawler.store import connect_readonly

    if not Path(db_path).is_file():
        return []
    conn = connect_readonly(db_path)
    try:
        of_source = "FROM runs WHERE kind = 'ingest' AND source = :source"
        return conn.execute(
            f"SELECT json_extract(args, '$.commit'), json_extract(args, '$.blob'), status {of_source}"
            f" AND json_extract(args, '$.commit') IS NOT NULL AND id >= coalesce("
            f"(SELECT max(id) {of_source} AND json_extract(args, '$.rebuild')), 0) ORDER BY id",
            {"source": source}).fetchall()
    finally:
        conn.close()


def start_run(db: sqlite_utils.Database, kind: str, args: dict[str, Any], *, source: str | None = None,
              mark_stale: bool = True, status: str = "running", started: str | None = None) -> int:
    """Record a run as running; runs left running by a killed process are marked interrupted
    (``mark_stale=False`` when starting the second and later runs of one process). The postings such a run
    stored never reached the corpus steps: they count as first seen by this run (``first_run_id``), so a
    killed run completed by the next one clusters and reads as "new" as one uninterrupted run would.
    A run of postings (ingest, crawl, reparse) marks the corpus steps pending (:func:`steps_pending`)."""
    with db.conn:
        if kind in ("ingest", "crawl", "reparse"):
            _mark_steps(db, True)
        cur = db.execute(
            "INSERT INTO runs (kind, source, started, status, args) VALUES (?, ?, ?, ?, ?)",
            (kind, source, started or now_iso(), status, json.dumps(args, ensure_ascii=False, default=str)),
        )
        if mark_stale:
            stale = "SELECT id FROM runs WHERE status = 'running' AND id != ?"
            db.execute(f"UPDATE postings SET first_run_id = ? WHERE first_run_id IN ({stale})"
                       " AND id NOT IN (SELECT posting_id FROM dedupe_signatures WHERE cluster_id IS NOT NULL)", (cur.lastrowid, cur.lastrowid))
            db.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running' AND id != ?", (cur.lastrowid,))
    return cur.lastrowid


def finish_run(db: sqlite_utils.Database, report: "RunReport") -> None:
    """Record a run's end from its report: status, counts (:data:`crawler.report.COUNT_COLUMNS`), responses by
    status, all stats."""
    write_run_end(db, report.run_id, report.counts, status=report.status, stats=report.stats,
                  responses=report.responses)


def write_run_end(db: sqlite_utils.Database, run_id: int, counts: dict[str, int], *, status: str,
                  stats: dict[str, Any] | None = None, responses: dict[str, int] | None = None) -> None:
    """The one statement that ends a ``runs`` row (runs of the corpus steps too)."""
    from crawler.report import COUNT_COLUMNS

    with db.conn:
        db.execute(
            f"UPDATE runs SET finished = ?, status = ?, stats = ?, responses = ?,"
            f" {', '.join(f'[{c}] = ?' for c in COUNT_COLUMNS)} WHERE id = ?",
            (now_iso(), status, json.dumps(stats or {}, ensure_ascii=False, default=str),
             json.dumps(responses or {}, sort_keys=True), *(counts.get(c, 0) for c in COUNT_COLUMNS), run_id),
        )


def interrupt_running(db: sqlite_utils.Database, run_ids: list[int], counts: dict[int, dict[str, int]]) -> None:
    """End those of ``run_ids`` still ``running`` as ``interrupted``, with their ``counts`` so far."""
    for run_id in run_ids:
        if db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone() == ("running",):
            write_run_end(db, run_id, dict(counts.get(run_id, {})), status="interrupted")


def record_step_run(db: sqlite_utils.Database, kind: str, *, started: str, args: dict[str, Any],
                    stats: dict[str, Any], status: str = "ok") -> int:
    """A corpus step run by hand (``jobcrawl score``) as one finished ``runs`` row; returns its id."""
    run_id = start_run(db, kind, args, mark_stale=False, started=started)
    write_run_end(db, run_id, {}, status=status, stats=stats)
    return run_id
