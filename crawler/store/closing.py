"""The closing step after a crawl: postings missing from a complete listing are marked closed.

A *listing* is one source's complete list of its open postings, named ``<spider>:<board>``: a
Greenhouse board (``greenhouse:gitlab``), a Lever site, an Ashby job board, or a whole career site
crawled with ``complete=true`` (``jsonld:<site>``). Spiders report, per run, the listings they
read completely and the posting keys in each (stat ``jobcrawl/listings``); partial or failed
listings are not reported, so they close nothing.

``listing_postings`` remembers which postings each listing has held. Closing is scoped by it: a
posting is closed only when a listing that held it is read completely without it — never because
another board of the same ATS, or another source, lacks it. Closed postings keep their rows
(``postings.closed_at`` is set, nothing is deleted). When a posting comes back (seen at a time after its
closing: crawler.store.writer.still_closed), the writer clears ``closed_at`` as it stores it, and this step
counts it as reopened.

Ingested snapshots (``jobcrawl ingest --source NAME --complete``) are the listing ``ingest:NAME``, closed at
the run's time (``--as-of``). :func:`restart_listing` (``--rebuild``) makes a listing's members not seen yet:
a member seen again starts its timeline there (the posting's ``first_seen`` and ``last_seen`` become that
run's time, its earlier closed and reopened events go), one missing is closed as any member is (keeping the
times it had).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import sqlite_utils

from normalize.clock import now_iso as utcnow


def close_missing(db: sqlite_utils.Database, listings: Mapping[str, Iterable[str]], *, run_id: int | None = None,
                  at: str | None = None) -> dict[str, int]:
    """Record each listing's members, close the members missing from it, count the returning ones.

    ``listings`` maps a listing name to the keys of every posting in its complete listing (None: a listing that
    may be incomplete, skipped); ``at``: the run's time (default now). Runs in one transaction. Returns
    ``{"listings": n, "closed": n, "reopened": n}``.
    """
    at = at or utcnow()
    counts = {"listings": 0, "closed": 0, "reopened": 0}
    conn = db.conn
    with conn:
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS seen_keys (key TEXT PRIMARY KEY)")
        for listing, keys in listings.items():
            if keys is None:
                continue
            conn.execute("DELETE FROM seen_keys")
            conn.executemany("INSERT OR IGNORE INTO seen_keys (key) VALUES (?)", ((k,) for k in keys))
            counts["listings"] += 1
            counts["reopened"] += conn.execute(
                "UPDATE listing_postings SET closed_at = NULL WHERE listing = ? AND closed_at IS NOT NULL"
                " AND first_seen IS NOT NULL AND key IN (SELECT key FROM seen_keys)", (listing,)).rowcount
            restarted = ("SELECT key FROM listing_postings WHERE listing = ? AND first_seen IS NULL"
                         " AND key IN (SELECT key FROM seen_keys)")
            # Members restarted by restart_listing: their timeline starts here, without what came before.
            conn.execute("DELETE FROM posting_events WHERE event IN ('closed', 'reopened') AND posting_id IN"
                         f" (SELECT id FROM postings WHERE key IN ({restarted}))", (listing,))
            conn.execute("UPDATE postings SET first_seen_stored = nullif(?, as_of), last_seen_stored = nullif(?, as_of)"
                         f" WHERE key IN ({restarted})",
                         (at, at, listing))
            conn.execute(
                "INSERT INTO listing_postings (listing, key, first_seen, last_seen, run_id)"
                " SELECT ?, key, ?, ?, ? FROM seen_keys WHERE true"
                " ON CONFLICT (listing, key) DO UPDATE SET first_seen = coalesce(first_seen, excluded.first_seen),"
                " last_seen = excluded.last_seen, closed_at = NULL, run_id = excluded.run_id",
                (listing, at, at, run_id))
            gone = [k for (k,) in conn.execute(
                "SELECT key FROM listing_postings WHERE listing = ? AND closed_at IS NULL"
                " AND key NOT IN (SELECT key FROM seen_keys)", (listing,))]
            for i in range(0, len(gone), 500):
                part = gone[i:i + 500]
                marks = ",".join("?" * len(part))
                conn.execute(f"UPDATE listing_postings SET closed_at = ? WHERE listing = ? AND key IN ({marks})",
                             (at, listing, *part))
                counts["closed"] += conn.execute(
                    f"UPDATE postings SET closed_at = ? WHERE closed_at IS NULL AND key IN ({marks})", (at, *part)).rowcount
        conn.execute("DELETE FROM seen_keys")
    return counts


def restart_listing(db: sqlite_utils.Database, listing: str) -> int:
    """Forget the timeline of ``listing``: its members become not seen yet (``first_seen``, ``last_seen`` and
    ``closed_at`` cleared), their postings open, and their closed and reopened events go. The postings, their
    versions and everything else about them stay. Returns the number of members."""
    conn = db.conn
    with conn:
        members = "SELECT key FROM listing_postings WHERE listing = ?"
        conn.execute(f"UPDATE postings SET closed_at = NULL WHERE closed_at IS NOT NULL AND key IN ({members})",
                     (listing,))
        conn.execute("DELETE FROM posting_events WHERE event IN ('closed', 'reopened') AND posting_id IN"
                     f" (SELECT id FROM postings WHERE key IN ({members}))", (listing,))
        return conn.execute("UPDATE listing_postings SET first_seen = NULL, last_seen = NULL, closed_at = NULL,"
                            " run_id = NULL WHERE listing = ?", (listing,)).rowcount


def seen_again(db: sqlite_utils.Database, listing: str, at: str) -> int:
    """The same complete listing read again at ``at``: its open members (the postings of the last one) are seen
    then — ``last_seen`` moves forward in the listing and in ``postings``. Returns how many."""
    conn = db.conn
    with conn:
        members = "SELECT key FROM listing_postings WHERE listing = ? AND closed_at IS NULL"
        conn.execute("UPDATE postings SET last_seen_stored = nullif(max(coalesce(last_seen, ''), ?), as_of)"
                     f" WHERE key IN ({members})",
                     (at, listing))
        return conn.execute("UPDATE listing_postings SET last_seen = max(coalesce(last_seen, ''), ?)"
                            " WHERE listing = ? AND closed_at IS NULL", (at, listing)).rowcount
