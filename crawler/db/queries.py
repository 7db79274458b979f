"""Read-only queries of the run path (plans and re-parses): what a run reads from the database."""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Iterator, Sequence

REPARSE_COLS = ("id", "source", "locator", "sha256", "text", "as_of", "status", "reader")


def latest_raw_inputs(conn: sqlite3.Connection, sources: Sequence[str] = (), *, batch: int = 200
                      ) -> Iterator[dict[str, Any]]:
    """The newest stored raw input of every (source, locator), in id order, ``reader`` decoded; only those of
    ``sources`` when given. Read in batches of ``batch`` rows, so memory stays flat."""
    where = f" AND source IN ({', '.join('?' * len(sources))})" if sources else ""
    last = 0
    while True:
        rows = conn.execute(
            f"SELECT {', '.join(REPARSE_COLS)} FROM raw_inputs r WHERE id > ?{where}"
            " AND id = (SELECT max(id) FROM raw_inputs n WHERE n.source = r.source AND n.locator = r.locator)"
            " ORDER BY id LIMIT ?", (last, *sources, batch)).fetchall()
        if not rows:
            return
        for row in rows:
            out = dict(zip(REPARSE_COLS, row))
            out["reader"] = json.loads(out["reader"]) if out["reader"] else None
            yield out
        last = rows[-1][0]
