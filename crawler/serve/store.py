"""The SQL of ``jobcrawl serve`` (crawler/serve/app.py): what it reads of the file besides Datasette's pages."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from crawler.store import connect_readonly as _connect, unwritable


def connect_readonly(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to the database file (usable from any thread: callers serialize it)."""
    return _connect(path, check_same_thread=False)


@contextmanager
def snapshot(path: str | Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection holding one read transaction: every query sees the file as of its start."""
    conn = connect_readonly(path)
    try:
        conn.execute("BEGIN")
        yield conn
    finally:
        conn.close()


def prepare(path: str | Path, *, checkpoint: bool) -> bool:
    """Apply pending migrations (a write only when some are pending) and, with ``checkpoint``,
    move the whole write-ahead log into the file, as an immutable open needs. Returns whether
    the log reached the file (always True without ``checkpoint``): False while another process
    reads or writes it. A file that cannot be written is only checked (:func:`open_db`, read-only):
    nobody writes a log into it."""
    from crawler.store.schema import open_db

    if unwritable(path):
        open_db(path, readonly=True).close()
        return True
    db = open_db(path)
    try:
        if not checkpoint:
            return True
        busy, log, done = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy and log == done
    finally:
        db.close()


def schema(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Table and view name → columns, leaving out full-text tables and their shadow tables."""
    rows = conn.execute("SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
    virtual = [name for name, _, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL TABLE")]
    out = {}
    for name, _, _ in rows:
        if name.startswith("sqlite_") or any(name == v or name.startswith(v + "_") for v in virtual):
            continue
        out[name] = [r[1] for r in conn.execute(f"PRAGMA table_xinfo([{name}])") if r[6] != 1]  # generated ones too
    return out


def views(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}


def inspect_data(path: Path, conn: sqlite3.Connection, tables: list[str], name: str) -> dict[str, Any]:
    """What ``datasette inspect`` would give for an immutable file served as ``name``: row counts per
    table. ``hash`` identifies the file version (name, size, modification time) instead of hashing a
    multi-gigabyte file; Datasette uses it as an ETag and a label."""
    stat = path.stat()
    identity = f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()
    return {name: {
        "hash": hashlib.sha256(identity).hexdigest(), "size": stat.st_size, "file": str(path),
        "tables": {t: {"count": conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0]} for t in tables},
    }}


def data_version(conn: sqlite3.Connection) -> int:
    """SQLite's ``data_version`` of ``conn``: it changes when another connection (of any process)
    commits to the file."""
    return conn.execute("PRAGMA data_version").fetchone()[0]


def single_value(value: Any) -> tuple[list[sqlite3.Row], Any]:
    """``value`` as the rows and description of a one-row, one-column result named ``value``."""
    with sqlite3.connect(":memory:") as conn:
        conn.row_factory = sqlite3.Row
        cursor = conn.execute("SELECT ? AS value", (value,))
        return cursor.fetchall(), cursor.description
