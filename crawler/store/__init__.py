"""SQLite storage: schema and migrations, batched writer, readers, full-text search."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from crawler.store import fts

if TYPE_CHECKING:
    import sqlite_utils


class ReadOnlyDatabase(sqlite3.OperationalError):
    """The database must be written (a writing command, or a read of a file pending migrations) and cannot be."""


_FOLDER = "is in a folder this user cannot write"


def _refused(path: Path, what: str) -> str | None:
    """Why ``path`` (a file or folder) refuses this user's writes, or None: its filesystem is mounted
    read-only, or ``what`` (permission denied). A path that cannot be looked at: None (SQLite says why)."""
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return "is on a read-only filesystem"
    except OSError:
        return None
    return None if os.access(path, os.W_OK) else f"{what} (permission denied)"


def unwritable(path: str | Path) -> str | None:
    """Why the database file at ``path`` cannot be written, or None when it can: on a read-only
    filesystem, or the file or its folder (where SQLite makes ``-wal`` and ``-shm`` and a run its
    lock) refuses this user's writes. A file yet to be made: its folder."""
    path = Path(path).resolve()
    return (_refused(path.parent, _FOLDER)
            or (_refused(path, "cannot be written by this user") if path.exists() else None))


def require_writable(path: str | Path) -> None:
    """Raise :class:`ReadOnlyDatabase` naming ``path`` and the reason when it cannot be written."""
    reason = unwritable(path)
    if reason:
        raise ReadOnlyDatabase(f"{os.fspath(path)} {reason}: this command writes to it (export, history, serve, "
                               "sources --health, watch list and score --report only read)")


def needs_immutable(path: str | Path) -> bool:
    """Whether SQLite can open ``path`` only as immutable: its folder cannot be written (so no ``-shm``
    can be made, which a read-only open of a WAL database needs) and holds no ``-shm`` already."""
    path = Path(path).resolve()
    return bool(_refused(path.parent, _FOLDER)) and not Path(f"{path}-shm").exists()


def readonly_uri(path: str | Path) -> str:
    """The URI that opens the database file at ``path`` read-only (``sqlite3.connect(..., uri=True)``):
    ``mode=ro``, and ``immutable=1`` where it must be (:func:`needs_immutable`: read-only media).

    Escaped, so a path holding ``#``, ``?`` or ``%`` names that file (``file:{path}`` would cut it there).
    """
    return f"{Path(path).resolve().as_uri()}?mode=ro" + ("&immutable=1" if needs_immutable(path) else "")


def connect_readonly(path: str | Path, **kwargs) -> sqlite3.Connection:
    """A read-only connection to the database file at ``path`` (:func:`readonly_uri`), the full-text index's
    functions registered (:func:`crawler.store.fts.register`); ``kwargs`` go to ``sqlite3.connect``."""
    conn = sqlite3.connect(readonly_uri(path), uri=True, **kwargs)
    fts.register(conn)
    return conn


def connect(path: str | Path, *, page_size: int | None = None) -> sqlite_utils.Database:
    """Open the database file at ``path`` in WAL mode with jobcrawl's pragmas and the full-text index's functions
    (:func:`crawler.store.fts.register`), without migrating it (``page_size`` is set first: it takes effect only in
    a new, empty file).

    ``schema.open_db`` uses it; so does a process that works on a database a run has opened already,
    such as the dedupe step's own process: the schema module imports the pydantic models (about 11 MB)
    it does not need.
    """
    import sqlite_utils

    db = sqlite_utils.Database(path)
    if page_size is not None:
        db.execute(f"PRAGMA page_size = {int(page_size)}")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA busy_timeout = 10000")
    fts.register(db.conn)
    return db


def file_of(db: sqlite_utils.Database) -> str | None:
    """The file behind ``db``'s main schema; None in memory."""
    path = next((row[2] for row in db.conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    return path or None
