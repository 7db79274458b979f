"""The runs table: one row per ingest, crawl or corpus step, with its counts."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from .writer import utcnow


def start_run(db: sqlite_utils.Database, kind: str, args: dict[str, Any]) -> int:
    """Record a run as running; runs left running by a killed process are marked interrupted."""
    with db.conn:
        db.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        cur = db.execute(
            "INSERT INTO runs (kind, started, status, args) VALUES (?, ?, 'running', ?)",
            (kind, utcnow(), json.dumps(args, ensure_ascii=False, default=str)),
        )
    return cur.lastrowid


def finish_run(db: sqlite_utils.Database, run_id: int, counts: dict[str, int], *, status: str,
               stats: dict[str, Any] | None = None) -> None:
    columns = ("files", "found", "new", "updated", "unchanged", "quarantined", "closed")
    with db.conn:
        db.execute(
            f"UPDATE runs SET finished = ?, status = ?, stats = ?, {', '.join(f'[{c}] = ?' for c in columns)} WHERE id = ?",
            (utcnow(), status, json.dumps(stats or {}, ensure_ascii=False, default=str),
             *(counts.get(c, 0) for c in columns), run_id),
        )
