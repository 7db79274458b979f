"""The ledger of batches that came through the Redis item spool (table ``spool_batches``).

The spool delivers a batch at least once: a writer killed after its transaction committed and
before it acknowledged the batch gets it again on restart. The writer records each batch's id in
the transaction that stores it, with the counts it made, and skips an id it has stored; the
coordinator of a distributed run sums the counts per run (what a local run's writer keeps in memory).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from typing import Iterable

from normalize.clock import now_iso


def stored(conn: sqlite3.Connection, batch_id: str) -> bool:
    """Whether the batch was stored already."""
    return conn.execute("SELECT 1 FROM spool_batches WHERE id = ?", (batch_id,)).fetchone() is not None


def record(conn: sqlite3.Connection, batch_id: str, run_id: int | None, counts: dict[str, int]) -> None:
    """Record a stored batch and its counts (inside the transaction that stored it)."""
    conn.execute("INSERT INTO spool_batches (id, run_id, stored_at, counts) VALUES (?, ?, ?, ?)",
                 (batch_id, run_id, now_iso(), json.dumps(counts, sort_keys=True)))


def written(conn: sqlite3.Connection, run_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """The writer's counts of each run (new, updated, unchanged, quarantined, …), summed over its batches."""
    out: dict[int, Counter] = {}
    for run_id in run_ids:
        total: Counter = Counter()
        for (counts,) in conn.execute("SELECT counts FROM spool_batches WHERE run_id = ?", (run_id,)):
            total.update(json.loads(counts))
        out[run_id] = total
    return {run_id: dict(c) for run_id, c in out.items()}
