"""Per-source health of crawls: the ``source_health`` view (crawler/store/schema.sql)."""

from __future__ import annotations

import json

import sqlite_utils

COLUMNS = ("source", "state", "last_run", "last_run_at", "last_status", "last_success", "requests", "responses",
           "found", "new", "updated", "closed", "errors", "robots_forbidden")


def source_health(db: sqlite_utils.Database) -> list[dict]:
    """One dict per source that has a finished crawl run, failing and blocked sources first, then by name;
    ``responses`` as a dict of counts by status."""
    rows = db.execute(f"SELECT {', '.join(COLUMNS)} FROM source_health"
                      " ORDER BY state = 'ok', state LIKE 'failing%' DESC, source").fetchall()
    out = []
    for row in rows:
        record = dict(zip(COLUMNS, row))
        record["responses"] = json.loads(record["responses"] or "{}")
        out.append(record)
    return out
