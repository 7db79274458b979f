"""Blocked postings (``posting_blocks``): the projection of the fit step's ``blocked`` signals, one row
per posting a profile's blocklist hides, so the listing and the watches can leave them out fast."""

from __future__ import annotations

import sqlite3

from crawler.store.rows import scorer_stored


def refresh(conn: sqlite3.Connection, profile: str) -> int:
    """Replace ``profile``'s rows with the postings its fit evaluations mark blocked; returns how many."""
    with conn:
        conn.execute("DELETE FROM posting_blocks WHERE profile = ?", (profile,))
        return conn.execute(
            "INSERT INTO posting_blocks (posting_id, profile, rule, detail) SELECT posting_id, ?,"
            " json_extract(signals, '$.blocked[0][0]'), json_extract(signals, '$.blocked[0][1]')"
            " FROM evaluations WHERE scorer_stored = ? AND json_extract(signals, '$.blocked[0]') IS NOT NULL",
            (profile, scorer_stored(f"fit:{profile}"))).rowcount


def blocked(conn: sqlite3.Connection, profile: str) -> dict[int, str]:
    """Posting id → the rule that blocks it, for ``profile``."""
    return dict(conn.execute("SELECT posting_id, rule FROM posting_blocks WHERE profile = ?", (profile,)))


HIDE_BLOCKED = "id not in (select posting_id from posting_blocks)"
"""Condition on ``postings`` (or a view with its ``id``): not hidden by any profile's blocklist."""


def blocked_ids(conn: sqlite3.Connection) -> str | None:
    """The ids of the postings some profile's blocklist hides, comma-separated."""
    return conn.execute("SELECT group_concat(DISTINCT posting_id) FROM posting_blocks").fetchone()[0]


def count(conn: sqlite3.Connection) -> int:
    """Postings some profile's blocklist hides."""
    return conn.execute("SELECT count(DISTINCT posting_id) FROM posting_blocks").fetchone()[0]


def rules_of(conn: sqlite3.Connection, posting_id: int) -> list[tuple[str, str, str]]:
    """``(profile, rule, detail)`` of every blocklist that hides the posting."""
    return conn.execute("SELECT profile, rule, detail FROM posting_blocks WHERE posting_id = ? ORDER BY profile",
                        (posting_id,)).fetchall()
