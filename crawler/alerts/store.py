"""Watches, their matches and deliveries: every SQL statement of saved searches and alerts.

Delivery is at-least-once (crawler/alerts/delivery.py): a match and one ``pending`` delivery per destination
are recorded in one transaction (:func:`record_matches`) before anything is sent, and a delivery is
marked ``sent`` (:func:`mark_sent`) only after its destination accepted it.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import sqlite_utils

from normalize.shown import shown
from normalize.watch import SALARY_COLUMNS, STORED, WatchSpec

from crawler.store.history import CHANGED_AT
from crawler.store.rows import scorer_stored
from crawler.store.schema import app_join
from normalize.clock import now_iso as utcnow

SEARCH_LIMIT = 200_000
"""Most postings one watch's search can find (a search finding more is too broad to alert on)."""
BATCH = 2000


@dataclass(frozen=True)
class Watch:
    """A stored watch."""

    id: int
    spec: WatchSpec
    created_at: str
    removed_at: str | None = None


def _watch(row: Sequence) -> Watch:
    return Watch(row[0], WatchSpec.model_validate_json(row[1], context=STORED), row[2], row[3])


NEW_WATCH = 0
"""The id a watch is matched under before it is stored (no stored watch has it)."""


def add_watch(conn: sqlite3.Connection, spec: WatchSpec, baseline: Sequence[tuple[int, list[str]]] = ()) -> int:
    """Store a new watch and the ``(posting id, reasons)`` of its baseline (seen, never delivered) in one
    transaction; raises ValueError when a watch of that name exists (not removed)."""
    now = utcnow()
    try:
        with conn:
            cur = conn.execute("INSERT INTO watches (name, spec, search, created_at) VALUES (?, ?, ?, ?)",
                               (spec.name, spec.model_dump_json(), spec.search, now))
            conn.executemany("INSERT INTO watch_matches (watch_id, posting_id, matched_at, baseline, reasons)"
                             " VALUES (?, ?, ?, 1, ?)",
                             [(cur.lastrowid, pid, now, json.dumps(r, ensure_ascii=False)) for pid, r in baseline])
    except sqlite3.IntegrityError:
        raise ValueError(f"a watch named {spec.name!r} exists (jobcrawl watch remove {spec.name})") from None
    return cur.lastrowid


def get_watch(conn: sqlite3.Connection, name: str) -> Watch | None:
    """The watch named ``name`` (not removed); else the one whose name, as `watch list` shows it escaped, is ``name``
    (a name with a control character, stored before such names were refused)."""
    row = conn.execute("SELECT id, spec, created_at, removed_at FROM watches WHERE name = ? AND removed_at IS NULL",
                       (name,)).fetchone()
    if row is None:
        row = next((r[1:] for r in conn.execute("SELECT name, id, spec, created_at, removed_at FROM watches"
                                                " WHERE removed_at IS NULL") if shown(r[0]) == name), None)
    return _watch(row) if row else None


def active_watches(conn: sqlite3.Connection) -> list[Watch]:
    """The watches not removed, oldest first."""
    return [_watch(r) for r in conn.execute(
        "SELECT id, spec, created_at, removed_at FROM watches WHERE removed_at IS NULL ORDER BY id")]


def has_watches(conn: sqlite3.Connection) -> bool:
    """True when a watch exists or a delivery waits (a database of another version has no table: False)."""
    try:
        return conn.execute("SELECT EXISTS (SELECT 1 FROM watches WHERE removed_at IS NULL)"
                            " OR EXISTS (SELECT 1 FROM watch_deliveries WHERE status = 'pending')").fetchone()[0] == 1
    except sqlite3.OperationalError:
        return False


def remove_watch(conn: sqlite3.Connection, name: str) -> int:
    """Mark the watch removed and cancel its pending deliveries (its matches stay); returns those cancelled,
    or -1 when there is no such watch."""
    watch = get_watch(conn, name)
    if watch is None:
        return -1
    with conn:
        conn.execute("UPDATE watches SET removed_at = ? WHERE id = ?", (utcnow(), watch.id))
        return conn.execute("UPDATE watch_deliveries SET status = 'cancelled' WHERE watch_id = ? AND status = 'pending'",
                            (watch.id,)).rowcount


def watch_counts(conn: sqlite3.Connection, watch_id: int) -> dict[str, int]:
    """Postings delivered (matched, not baseline), in the baseline, and deliveries by status."""
    matched, baseline = conn.execute(
        "SELECT coalesce(sum(baseline = 0), 0), coalesce(sum(baseline), 0) FROM watch_matches WHERE watch_id = ?",
        (watch_id,)).fetchone()
    out = {"matched": matched, "baseline": baseline, "pending": 0, "sent": 0, "cancelled": 0}
    for status, n in conn.execute("SELECT status, count(*) FROM watch_deliveries WHERE watch_id = ? GROUP BY status",
                                  (watch_id,)):
        out[status] = n
    return out


# --------------------------------------------------------------------------- matching


def search_ids(db: sqlite_utils.Database, query: str) -> set[int]:
    """Posting ids the full-text search finds for ``query``: the one place watches call the search."""
    from crawler.store.read import search

    return {row["id"] for row in search(db, query, limit=SEARCH_LIMIT)}


_CANDIDATES = f"""SELECT p.id, p.city, {", ".join(f"[{c}]" for c in SALARY_COLUMNS.values())},
    (SELECT e.overall FROM evaluations e WHERE e.posting_id = p.id AND e.scorer_stored = :fit_scorer) AS fit,
    (SELECT b.rule FROM posting_blocks b WHERE b.posting_id = p.id AND b.profile = :profile) AS blocked,
    {CHANGED_AT} AS changed_at,
    coalesce((SELECT c.canonical_posting_id = p.id FROM cluster_members m JOIN clusters c ON c.id = m.cluster_id
              WHERE m.posting_id = p.id), 1) AS canonical,
    EXISTS (SELECT 1 FROM cluster_members m WHERE m.posting_id = p.id AND m.cluster_id IN (
            SELECT cm.cluster_id FROM watch_matches w JOIN cluster_members cm ON cm.posting_id = w.posting_id
            WHERE w.watch_id = :watch)) AS cluster_seen,
    p.id IN (SELECT posting_id FROM applications) AS tracked,
    EXISTS (SELECT 1 FROM ghost_signals g WHERE g.posting_id = p.id) AS ghost
FROM postings p {app_join("p", "am")}
WHERE p.id > :after AND p.closed_at IS NULL AND (:cities IS NULL OR p.city IN (SELECT value FROM json_each(:cities)))
  AND (:ids IS NULL OR p.id IN (SELECT value FROM json_each(:ids)))
  AND NOT EXISTS (SELECT 1 FROM watch_matches w WHERE w.watch_id = :watch AND w.posting_id = p.id)
ORDER BY p.id LIMIT :batch"""


def unseen_rows(db: sqlite_utils.Database, watch_id: int, *, profile: str | None, cities: Sequence[str] = (),
                ids: Iterable[int] | None = None) -> Iterator[dict[str, Any]]:
    """Every open posting the watch has not seen, as a row for :func:`normalize.watch.candidate`, in id
    order, read in batches. ``profile``: whose fit and blocklist count (None: no fit, nothing blocked);
    ``cities``: only postings in one of them (none: any), ``ids``: only these (None: any) — the watch's
    city and search rules applied by SQLite first, so only their postings are read.

    ``cluster_seen``: a member of its cluster was seen by the watch (the posting itself was not). The
    clusters the watch has seen are one uncorrelated subquery, so a cluster of thousands of reposts
    costs one lookup per posting, not a walk over its members. ``tracked``: its job has an application
    status (the view ``applications``, read once per batch); ``ghost``: it has a ghost signal."""
    params = {"watch": watch_id, "fit_scorer": scorer_stored(f"fit:{profile}") if profile else None, "profile": profile,
              "cities": json.dumps(list(cities), ensure_ascii=False) if cities else None,
              "ids": None if ids is None else json.dumps(sorted(ids)), "after": 0, "batch": BATCH}
    conn = db.conn
    while True:
        cur = conn.execute(_CANDIDATES, params)
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
        if not rows:
            return
        yield from rows
        params["after"] = rows[-1]["id"]


def record_matches(conn: sqlite3.Connection, watch: Watch, matches: Iterable[tuple[int, list[str]]], *,
                   run_id: int | None) -> int:
    """Record the postings ``(id, reasons)`` as seen by the watch and one pending delivery per destination
    of the watch, in one transaction. Returns the matches recorded."""
    now = utcnow()
    rows = [(watch.id, pid, now, run_id, json.dumps(reasons, ensure_ascii=False)) for pid, reasons in matches]
    with conn:
        conn.executemany("INSERT OR IGNORE INTO watch_matches (watch_id, posting_id, matched_at, run_id, reasons)"
                         " VALUES (?, ?, ?, ?, ?)", rows)
        conn.executemany("INSERT OR IGNORE INTO watch_deliveries (watch_id, posting_id, destination, created_at)"
                         " VALUES (?, ?, ?, ?)", [(watch.id, r[1], dest, now) for r in rows for dest in watch.spec.destinations])
    return len(rows)


# --------------------------------------------------------------------------- delivering


def cancel_tracked(conn: sqlite3.Connection) -> int:
    """Cancel the pending deliveries of postings tracked since they were matched, for every watch without
    ``include_tracked`` (a tracked posting is never delivered by such a watch); returns how many."""
    with conn:
        return conn.execute(
            "UPDATE watch_deliveries SET status = 'cancelled' WHERE status = 'pending'"
            " AND posting_id IN (SELECT posting_id FROM applications)"
            " AND watch_id IN (SELECT id FROM watches WHERE NOT coalesce(json_extract(spec, '$.include_tracked'), 0))"
        ).rowcount

_PENDING = """SELECT d.watch_id, d.destination, d.posting_id, w.name, m.reasons,
    p.title, p.company, p.city, p.url, p.first_seen, p.salary_monthly_min, p.salary_monthly_max, p.salary_currency,
    p.salary_months, p.salary_status, p.salary_estimated, p.salary_raw,
    (SELECT e.overall FROM evaluations e WHERE e.posting_id = p.id AND e.scorer_stored = :fit_scorer) AS fit
FROM watch_deliveries d JOIN watches w ON w.id = d.watch_id JOIN postings p ON p.id = d.posting_id
LEFT JOIN watch_matches m ON m.watch_id = d.watch_id AND m.posting_id = d.posting_id
WHERE d.status = 'pending' ORDER BY d.watch_id, d.destination, d.posting_id"""


def pending(conn: sqlite3.Connection, *, profile: str | None) -> list[dict[str, Any]]:
    """Every pending delivery with what its message shows of the posting, by watch, destination, posting."""
    cur = conn.execute(_PENDING, {"fit_scorer": scorer_stored(f"fit:{profile}") if profile else None})
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def mark_sent(conn: sqlite3.Connection, watch_id: int, destination: str, posting_ids: Sequence[int], *, attempts: int) -> None:
    """Record that the destination accepted these postings' alerts (one transaction)."""
    now = utcnow()
    with conn:
        conn.executemany("UPDATE watch_deliveries SET status = 'sent', sent_at = ?, last_attempt_at = ?, error = NULL,"
                         " attempts = attempts + ? WHERE watch_id = ? AND destination = ? AND posting_id = ?"
                         " AND status = 'pending'",
                         [(now, now, attempts, watch_id, destination, pid) for pid in posting_ids])


def mark_failed(conn: sqlite3.Connection, watch_id: int, destination: str, posting_ids: Sequence[int], *,
                attempts: int, error: str) -> None:
    """Record a failed attempt; the deliveries stay pending (sent on the next run)."""
    now = utcnow()
    with conn:
        conn.executemany("UPDATE watch_deliveries SET last_attempt_at = ?, error = ?, attempts = attempts + ?"
                         " WHERE watch_id = ? AND destination = ? AND posting_id = ? AND status = 'pending'",
                         [(now, error[:500], attempts, watch_id, destination, pid) for pid in posting_ids])
