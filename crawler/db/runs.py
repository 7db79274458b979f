"""The runs table: one row per ingest, crawl or corpus step, with its counts."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from .writer import utcnow


def start_run(db: sqlite_utils.Database, kind: str, args: dict[str, Any], *, source: str | None = None,
              mark_stale: bool = True, started: str | None = None) -> int:
    """Record a run as running (since ``started``, default now); runs left running by a killed process are
    marked interrupted (``mark_stale=False`` when starting the second and later runs of one process)."""
    with db.conn:
        if mark_stale:
            db.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        cur = db.execute(
            "INSERT INTO runs (kind, source, started, status, args) VALUES (?, ?, ?, 'running', ?)",
            (kind, source, started or utcnow(), json.dumps(args, ensure_ascii=False, default=str)),
        )
    return cur.lastrowid


COUNT_COLUMNS = ("files", "found", "new", "updated", "unchanged", "quarantined", "closed", "reopened", "requests", "errors")


def finish_run(db: sqlite_utils.Database, run_id: int, counts: dict[str, int], *, status: str,
               stats: dict[str, Any] | None = None, responses: dict[str, int] | None = None) -> None:
    """Record a run's end: status, the counts of :data:`COUNT_COLUMNS`, responses by status, all stats."""
    with db.conn:
        db.execute(
            f"UPDATE runs SET finished = ?, status = ?, stats = ?, responses = ?,"
            f" {', '.join(f'[{c}] = ?' for c in COUNT_COLUMNS)} WHERE id = ?",
            (utcnow(), status, json.dumps(stats or {}, ensure_ascii=False, default=str),
             json.dumps(responses or {}, sort_keys=True), *(counts.get(c, 0) for c in COUNT_COLUMNS), run_id),
        )


def record_run(db: sqlite_utils.Database, kind: str, *, started: str, args: dict[str, Any], stats: dict[str, Any],
               status: str = "ok") -> int:
    """A finished run of a corpus step (``score``) as one row, written at its end: a concurrent ingest's running
    row is left alone. Returns its id."""
    run_id = start_run(db, kind, args, mark_stale=False, started=started)
    finish_run(db, run_id, {}, status=status, stats=stats)
    return run_id
