"""SQL of the signals step: what the ghost signals and the likely employers are computed from, and their two tables
(``ghost_signals``: a row per canonical posting and code; ``likely_employers``: a row per agency's or hidden
posting whose employer was found). Both are replaced as a whole by each step, in one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from normalize.ghost import Employer, Signal

from crawler.store.dedupe import postings as dedupe_postings

CANONICAL = """SELECT p.id, p.first_seen, p.closed_at,
    (SELECT max(v.superseded_at) FROM posting_versions v WHERE v.posting_id = p.id) AS changed_at
FROM postings p LEFT JOIN dedupe_signatures s ON s.posting_id = p.id
LEFT JOIN clusters c ON c.id = s.cluster_id
WHERE c.id IS NULL OR c.canonical_posting_id = p.id"""
"""Every canonical posting (the canonical member of its cluster, or alone in it) with when its content last
changed (the newest superseded version; NULL: never)."""


def corpus_now(conn: sqlite3.Connection) -> str | None:
    """The corpus's "now": the newest ``last_seen`` (the time of the latest run that saw a posting)."""
    return conn.execute("SELECT max(last_seen) FROM postings").fetchone()[0]


def canonical_postings(conn: sqlite3.Connection) -> Iterator[tuple[int, str | None, str | None, str | None]]:
    """``(id, first_seen, closed_at, changed_at)`` of every canonical posting, streamed."""
    yield from conn.execute(CANONICAL)


def jobs(conn: sqlite3.Connection, min_size: int) -> Iterator[tuple[int, list[tuple]]]:
    """Clusters of at least ``min_size`` members as ``(canonical posting id, members)``, each member
    ``(posting id, reason, company as written, normalized company, normalized city, first_seen, key)``."""
    rows = conn.execute(
        "SELECT c.canonical_posting_id, m.posting_id, m.reason, p.company, coalesce(s.company, ''),"
        " coalesce(s.city, ''), p.first_seen, p.key FROM clusters c JOIN cluster_members m ON m.cluster_id = c.id"
        " JOIN postings p ON p.id = m.posting_id LEFT JOIN dedupe_signatures s ON s.posting_id = m.posting_id"
        " WHERE c.size >= ? ORDER BY c.id, m.posting_id", (min_size,))
    current, members = None, []
    for canonical, *member in rows:
        if canonical != current and members:
            yield current, members
            members = []
        current = canonical
        members.append(tuple(member))
    if members:
        yield current, members


def closing_events(conn: sqlite3.Connection) -> dict[int, list[tuple[str, str]]]:
    """Posting id → its closing events ``(event, at)`` in order, for the postings that reopened."""
    out: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for pid, event, at in conn.execute(
            "SELECT posting_id, event, at FROM posting_events WHERE posting_id IN"
            " (SELECT posting_id FROM posting_events WHERE event = 'reopened') ORDER BY posting_id, at, id"):
        out[pid].append((event, at))
    return dict(out)


def write_signals(conn: sqlite3.Connection, signals: Sequence[tuple[int, Signal]]) -> None:
    """Replace every ghost signal with ``(posting id, signal)`` (in the caller's transaction)."""
    conn.execute("DELETE FROM ghost_signals")
    conn.executemany("INSERT INTO ghost_signals (posting_id, code, n, days, at, ids) VALUES (?, ?, ?, ?, ?, ?)",
                     [(pid, s.code, s.n, s.days, s.at, json.dumps(list(s.ids)) if s.ids else None)
                      for pid, s in signals])


# --------------------------------------------------------------------------- employers


_JD_POSTINGS = ("SELECT s.posting_id, p.company, coalesce(s.city, ''), s.cluster_id, s.signature"
                " FROM dedupe_signatures s JOIN postings p ON p.id = s.posting_id WHERE s.has_jd AND ")
"""Postings with JD text as ``(id, company as written, normalized city, cluster id, MinHash signature or None)``."""


def employer_candidates(conn: sqlite3.Connection, words: Sequence[str]) -> list[tuple]:
    """The postings with JD text whose company is blank or holds one of ``words`` (lower-cased), by id."""
    marks = "".join(" OR instr(lower(p.company), ?)" for _ in words)
    return conn.execute(f"{_JD_POSTINGS}(p.company IS NULL OR trim(p.company) = ''{marks}) ORDER BY s.posting_id",
                        list(words)).fetchall()


def in_city(conn: sqlite3.Connection, city: str) -> list[tuple]:
    """The postings with JD text of the normalized ``city``, by key (an order that is the same from run to run)."""
    return conn.execute(f"{_JD_POSTINGS}s.city = ? ORDER BY p.key", (city,)).fetchall()


def in_clusters(conn: sqlite3.Connection, clusters: Sequence[int]) -> list[tuple]:
    """The postings with JD text of ``clusters``, by key (an order that is the same from run to run)."""
    return conn.execute(f"{_JD_POSTINGS}s.cluster_id IN (SELECT value FROM json_each(?)) ORDER BY p.key",
                        (json.dumps(list(clusters)),)).fetchall()


def jd_records(conn: sqlite3.Connection, ids: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(id, posting fields)`` of ``ids`` as dedupe reads them (normalize.dedupe.record_from_posting takes them)."""
    for pid, _version, posting in dedupe_postings(conn, ids):
        yield pid, posting


def write_employers(conn: sqlite3.Connection, found: Sequence[tuple[int, Employer]]) -> None:
    """Replace every likely employer with ``(posting id, employer)`` (in the caller's transaction)."""
    conn.execute("DELETE FROM likely_employers")
    conn.executemany("INSERT INTO likely_employers (posting_id, company, evidence_posting_id, similarity, rule)"
                     " VALUES (?, ?, ?, ?, ?)",
                     [(pid, e.company, e.posting_id, e.similarity, e.rule) for pid, e in found])


def totals(conn: sqlite3.Connection) -> dict[str, int]:
    """Signals by code and likely employers in the database."""
    out = {f"ghost_{code}": n for code, n in conn.execute("SELECT code, count(*) FROM ghost_signals GROUP BY code")}
    out["likely_employers"] = conn.execute("SELECT count(*) FROM likely_employers").fetchone()[0]
    return out
