"""What the fit step needs to score only the postings whose fit may have changed since its last run."""

from __future__ import annotations

import json
import sqlite3

_KEY = "fit_state:{}"


def last_state(conn: sqlite3.Connection, profile: str) -> dict | None:
    """``{"digest": …, "versions": n}`` of the profile's last complete fit step, or None."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (_KEY.format(profile),)).fetchone()
    return json.loads(row[0]) if row else None


def save_state(conn: sqlite3.Connection, profile: str, digest: str, versions: int) -> None:
    with conn:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     (_KEY.format(profile), json.dumps({"digest": digest, "versions": versions})))


def versions_mark(conn: sqlite3.Connection) -> int:
    """The newest ``posting_versions`` row: every posting updated after it has a newer one."""
    return conn.execute("SELECT coalesce(max(id), 0) FROM posting_versions").fetchone()[0]


def taxonomy_version(conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = 'taxonomy_version'").fetchone()
    return row[0] if row else ""


def stale_where(scorer: str, versions: int) -> str:
    """Open postings with no evaluation by ``scorer``, or updated (a new version) after ``versions``."""
    quoted = scorer.replace("'", "''")
    return (f"closed_at IS NULL AND (id NOT IN (SELECT posting_id FROM evaluations WHERE scorer = '{quoted}')"
            f" OR id IN (SELECT posting_id FROM posting_versions WHERE id > {int(versions)}))")
