"""A posting's versions and events, and the "changed since" filter (export, watches)."""

from __future__ import annotations

import json
import sqlite3

import sqlite_utils

from normalize.history import Version

CHANGED_AT = """max(p.first_seen,
    coalesce((SELECT max(v.superseded_at) FROM posting_versions v WHERE v.posting_id = p.id), ''),
    coalesce((SELECT max(ev.at) FROM posting_events ev WHERE ev.posting_id = p.id), ''))"""
"""SQL: when posting ``p`` last changed (UTC ISO): first seen, a new version, closed or reopened."""

CHANGED_SINCE = """(first_seen >= :since
    OR id IN (SELECT posting_id FROM posting_versions WHERE superseded_at >= :since)
    OR id IN (SELECT posting_id FROM posting_events WHERE at >= :since))"""
"""SQL condition on ``postings``: new or changed at or after ``:since`` (through the indexes of migration 0015)."""


def resolve(conn: sqlite3.Connection, ref: str) -> int | None:
    """A posting id from ``ref``: its id, or its URL (as stored, or with/without a trailing slash)."""
    if ref.strip().isdigit():
        row = conn.execute("SELECT id FROM postings WHERE id = ?", (int(ref),)).fetchone()
    else:
        url = ref.strip()
        row = conn.execute("SELECT id FROM postings WHERE url IN (?, ?, ?) ORDER BY id LIMIT 1",
                           (url, url.rstrip("/"), url.rstrip("/") + "/")).fetchone()
    return row[0] if row else None


def versions(db: sqlite_utils.Database, posting_id: int) -> tuple[list[Version], list[tuple[str, str]]]:
    """The posting's versions (stored snapshots, then the current record), each with the time it was first
    seen, and its ``(at, event)`` closing and reopening events; ``([], [])`` for no such posting."""
    from crawler.store.read import export_record

    current = export_record(db, posting_id)
    if not current:
        return [], []
    rows = db.execute("SELECT version, superseded_at, snapshot FROM posting_versions WHERE posting_id = ? ORDER BY version",
                      (posting_id,)).fetchall()
    out, seen = [], current.get("first_seen") or ""
    for number, superseded_at, snapshot in rows:
        out.append(Version(number, seen, json.loads(snapshot)))
        seen = superseded_at
    out.append(Version(current.get("version") or len(rows) + 1, seen, current))
    events = [(at, event) for at, event in db.execute(
        "SELECT at, event FROM posting_events WHERE posting_id = ? ORDER BY at, id", (posting_id,))]
    return out, events


HIDE_STALE = "+closed_at is null and last_seen >= :stale_cutoff"
"""Condition on ``postings`` (or a view with its columns): open and seen since ``:stale_cutoff``. The ``+`` keeps
SQLite on the (last_seen, closed_at) index, which answers it alone, rather than the closed_at index."""


def stale_cutoff(conn: sqlite3.Connection, days: int) -> str | None:
    """The newest ``last_seen`` of the database minus ``days`` (UTC ISO), None when it has no posting:
    "stale" counts back from the last crawl, not from today, so an old database reads the same."""
    return conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%S+00:00', max(last_seen), ?) FROM postings",
                        (f"-{int(days)} days",)).fetchone()[0]


def stale_ids(conn: sqlite3.Connection, cutoff: str) -> str | None:
    """The ids of the postings closed or last seen before ``cutoff``, comma-separated (the rows HIDE_STALE leaves
    out), read from the indexes alone."""
    return conn.execute("SELECT group_concat(id) FROM (SELECT id FROM postings WHERE closed_at IS NOT NULL"
                        " UNION ALL SELECT id FROM postings WHERE last_seen < ? AND +closed_at IS NULL)",
                        (cutoff,)).fetchone()[0]


def count_stale(conn: sqlite3.Connection, cutoff: str) -> int:
    """Postings closed, or last seen before ``cutoff``: two index ranges (an OR of both scanned the table)."""
    return conn.execute("SELECT (SELECT count(*) FROM postings WHERE closed_at IS NOT NULL)"
                        " + (SELECT count(*) FROM postings WHERE last_seen < ? AND +closed_at IS NULL)",
                        (cutoff,)).fetchone()[0]
