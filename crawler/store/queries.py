"""Read-only queries of the run path (plans and re-parses): what a run reads from the database."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator, Sequence

from crawler.store.rows import raw_text

REPARSE_COLS = ("id", "source", "locator", "sha256", "text", "as_of", "status", "reader", "text_zstd", "encoding", "body")
# The bytes only of quarantined inputs: the others are parsed again from their text.
_REPARSE_SELECT = ", ".join("CASE WHEN status = 'quarantined' THEN body END" if c == "body" else c for c in REPARSE_COLS)


def complete_parses(db_path: str, source: str, parser: str) -> list[tuple[str, str, str, int]]:
    """``(locator, sha256, as_of, postings)`` of each input of ``source`` whose last parse by ``parser`` was
    complete and whose postings are all still stored; empty when the file or its ledger does not exist yet.
    Opened read-only: the plan of a run never writes."""
    from crawler.store import connect_readonly

    if not Path(db_path).is_file():
        return []
    conn = connect_readonly(db_path)
    try:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'input_parses'").fetchone():
            return []
        return conn.execute(
            "SELECT r.locator, r.sha256, l.as_of, l.postings FROM input_parses l JOIN raw_inputs r ON r.id = l.raw_input_id"
            " JOIN (SELECT raw_input_id, count(*) AS n FROM postings GROUP BY raw_input_id) c"
            " ON c.raw_input_id = l.raw_input_id"
            " WHERE r.source = ? AND l.parser = ? AND l.status = 'parsed' AND c.n = l.postings",
            (source, parser)).fetchall()
    finally:
        conn.close()


def raw_hashes(db_path: str, source: str) -> dict[str, str]:
    """``posting key → raw_hash`` of the postings of ``source`` stored with one (read-only); empty when the
    database does not exist yet or predates the column."""
    from crawler.store import connect_readonly

    if not Path(db_path).is_file():
        return {}
    conn = connect_readonly(db_path)
    try:
        return dict(conn.execute("SELECT key, raw_hash FROM postings WHERE source = ? AND raw_hash IS NOT NULL",
                                 (source,)))
    except sqlite3.OperationalError:  # no postings table, or no raw_hash column yet
        return {}
    finally:
        conn.close()


def input_posting_keys(db_path: str, source: str, inputs: list[tuple[str, str]]) -> list[str]:
    """The keys of the postings stored from the raw inputs ``(locator, sha256)`` of ``source`` (read-only)."""
    from crawler.store import connect_readonly

    conn = connect_readonly(db_path)
    try:
        return [key for locator, sha in inputs for (key,) in conn.execute(
            "SELECT p.key FROM postings p JOIN raw_inputs r ON r.id = p.raw_input_id"
            " WHERE r.source = ? AND r.locator = ? AND r.sha256 = ?", (source, locator, sha))]
    finally:
        conn.close()


def raw_input_sources(path: str | Path) -> list[str]:
    """The sources of the raw inputs stored in the database at ``path``, sorted (read-only)."""
    from crawler.store import connect_readonly

    conn = connect_readonly(path)
    try:
        return [r[0] for r in conn.execute("SELECT DISTINCT source FROM raw_inputs ORDER BY source")]
    finally:
        conn.close()


def foreign_tables(path: str | Path) -> list[str]:
    """The tables of the SQLite file at ``path`` when it is not a jobcrawl database (it has tables but not
    jobcrawl's migrations); empty for a jobcrawl database or an empty one."""
    from crawler.store import connect_readonly

    conn = connect_readonly(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        ours = "_sqlite_migrations" in tables and conn.execute(
            "SELECT 1 FROM _sqlite_migrations WHERE migration_set = 'jobcrawl' LIMIT 1").fetchone()
    finally:
        conn.close()
    return [] if ours else tables


def latest_raw_inputs(conn: sqlite3.Connection, sources: Sequence[str] = (), *, batch: int = 200
                      ) -> Iterator[dict[str, Any]]:
    """The newest stored raw input of every (source, locator), in id order, ``reader`` decoded; only those of
    ``sources`` when given. Read in batches of ``batch`` rows, so memory stays flat."""
    where = f" AND source IN ({', '.join('?' * len(sources))})" if sources else ""
    last = 0
    while True:
        rows = conn.execute(
            f"SELECT {_REPARSE_SELECT} FROM raw_inputs r WHERE id > ?{where}"
            " AND id = (SELECT max(id) FROM raw_inputs n WHERE n.source = r.source AND n.locator = r.locator)"
            " ORDER BY id LIMIT ?", (last, *sources, batch)).fetchall()
        if not rows:
            return
        for row in rows:
            out = dict(zip(REPARSE_COLS, row))
            out["reader"] = json.loads(out["reader"]) if out["reader"] else None
            out["text"] = raw_text(out["text"], out.pop("text_zstd"))
            yield out
        last = rows[-1][0]
