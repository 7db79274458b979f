"""Every SQL statement of ``jobcrawl track``: recording a status change, a job's status, the tracked jobs, a job's
events (for ``jobcrawl history``). Watches and the export read the view ``applications`` themselves."""

from __future__ import annotations

import sqlite3
from typing import Any

STATUSES = ("saved", "applied", "interviewing", "offer", "accepted", "rejected", "withdrawn")
"""The statuses of an application, in the order of a job search (the CHECK of ``application_events.status``)."""
NOTE_CHARS = 2000
"""The longest note (the trigger ``application_events_note_length`` refuses longer ones from every writer)."""


def _dicts(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def posting(conn: sqlite3.Connection, posting_id: int) -> dict[str, Any] | None:
    """The posting's id, title, company, city and url; None when there is none."""
    found = _dicts(conn.execute("SELECT id, title, company, city, url FROM postings WHERE id = ?", (posting_id,)))
    return found[0] if found else None


def add_event(conn: sqlite3.Connection, posting_id: int, status: str, note: str | None, at: str) -> int:
    """Record that the job of ``posting_id`` got ``status`` at ``at`` (UTC ISO), with ``note``; returns the event's
    id."""
    with conn:
        return conn.execute("INSERT INTO application_events (posting_id, status, note, at) VALUES (?, ?, ?, ?)",
                            (posting_id, status, note, at)).lastrowid


def application(conn: sqlite3.Connection, posting_id: int) -> dict[str, Any] | None:
    """The status, since, updated and notes of the posting's job; None when it is not tracked."""
    found = _dicts(conn.execute("SELECT status, since, updated, notes FROM applications WHERE posting_id = ?",
                                (posting_id,)))
    return found[0] if found else None


_JOBS = """SELECT a.posting_id AS id, p.title, p.company, p.city, a.status, a.since, a.notes, p.url, a.updated
FROM applications a JOIN postings p ON p.id = a.posting_id
WHERE a.posting_id = a.tracked_id AND (:status IS NULL OR a.status = :status)
ORDER BY a.updated DESC, a.event_id DESC"""


def tracked_jobs(conn: sqlite3.Connection, status: str | None = None) -> list[dict[str, Any]]:
    """One row per tracked job (optionally only those with ``status``), newest change first: the id, title, company,
    city and url of the posting its newest event was set on, the job's status, since, notes and ``updated``."""
    return _dicts(conn.execute(_JOBS, {"status": status}))


def job_events(conn: sqlite3.Connection, posting_id: int) -> list[tuple[str, str, str | None, int]]:
    """Every ``(at, status, note, posting id)`` of the posting's job (its own and its cluster's other members'),
    oldest first."""
    return conn.execute(
        "SELECT e.at, e.status, e.note, e.posting_id FROM application_events e"
        " LEFT JOIN dedupe_signatures s ON s.posting_id = e.posting_id"
        " WHERE e.posting_id = :id OR s.cluster_id = (SELECT cluster_id FROM dedupe_signatures WHERE posting_id = :id)"
        " ORDER BY e.at, e.id", {"id": posting_id}).fetchall()
