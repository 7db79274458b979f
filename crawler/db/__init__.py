"""SQLite storage: schema and migrations, batched writer, readers, full-text search."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils


def readonly_uri(path: str | Path) -> str:
    """The URI that opens the database file at ``path`` read-only (``sqlite3.connect(..., uri=True)``).

    Escaped, so a path holding ``#``, ``?`` or ``%`` names that file (``file:{path}`` would cut it there).
    """
    return f"{Path(path).resolve().as_uri()}?mode=ro"


def connect(path: str | Path, *, page_size: int | None = None) -> sqlite_utils.Database:
    """Open the database file at ``path`` in WAL mode with jobcrawl's pragmas, without migrating it
    (``page_size`` is set first: it takes effect only in a new, empty file).

    ``schema.open_db`` uses it; so does a process that works on a database a run has opened already,
    such as the dedupe step's own process: the schema module imports the pydantic models (about 11 MB)
    it does not need.
    """
    db = sqlite_utils.Database(path)
    if page_size is not None:
        db.execute(f"PRAGMA page_size = {int(page_size)}")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA busy_timeout = 10000")
    return db


def file_of(db: sqlite_utils.Database) -> str | None:
    """The file behind ``db``'s main schema; None in memory."""
    path = next((row[2] for row in db.conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    return path or None
