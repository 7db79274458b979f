"""Serving a jobcrawl database in Datasette 0.65: the configured instance and ``jobcrawl serve``.

The database is always served under the name ``jobs`` (``/jobs/jobs``, ``/jobs/postings/1``),
whatever its file is called, with the metadata of :mod:`browse.metadata`, the plugins of
``browse/plugins`` (search, posting page, cell rendering), ``browse/templates`` and
``browse/static`` (at ``/jobcrawl-static/``). Read-only and immutable by default: Datasette then
opens the file with ``immutable=1`` and takes the table counts from :func:`inspect_data`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

from datasette.app import Datasette
from datasette.database import Database

from browse.metadata import DATABASE, STATIC_MOUNT, build_metadata

BROWSE = Path(__file__).resolve().parents[1] / "browse"
SETTINGS: dict[str, Any] = {
    # Suggesting facets runs a query per column on every table page (1.2 s at 500k postings).
    "suggest_facets": False,
    "default_page_size": 50,
    "facet_time_limit_ms": 400,
    "sql_time_limit_ms": 5000,
    "num_sql_threads": 3,
    "default_facet_size": 15,
    "max_returned_rows": 1000,
}


def prepare(db_path: str | Path) -> tuple[int, bool]:
    """Apply pending migrations, bring the segmented search index level (:func:`crawler.db.fts.sync`)
    and checkpoint the write-ahead log into the file: an immutable open never reads the log.

    The only writes ``serve`` makes, before Datasette opens the file. Returns the postings
    (re)indexed and whether the whole log reached the file (False while another process writes).
    """
    from crawler.db import fts
    from crawler.db.schema import open_db

    db = open_db(db_path)
    try:
        indexed = fts.sync(db.conn)
        busy, log, done = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return indexed, not busy and log == done
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
        out[name] = [r[1] for r in conn.execute(f"PRAGMA table_info([{name}])")]
    return out


def _views(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}


def inspect_data(db_path: Path, conn: sqlite3.Connection, tables: list[str]) -> dict[str, Any]:
    """What ``datasette inspect`` would give for an immutable file: row counts per table.

    ``hash`` identifies the file version (name, size, modification time) instead of hashing a
    multi-gigabyte file; Datasette uses it as an ETag and a label.
    """
    stat = db_path.stat()
    identity = f"{db_path.name}:{stat.st_size}:{stat.st_mtime_ns}".encode()
    return {DATABASE: {
        "hash": hashlib.sha256(identity).hexdigest(), "size": stat.st_size, "file": str(db_path),
        "tables": {t: {"count": conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0]} for t in tables},
    }}


def make_datasette(db_path: str | Path, *, writable: bool = False, settings: dict[str, Any] | None = None) -> Datasette:
    """A configured Datasette instance serving ``db_path`` as ``jobs`` (not started; tests use ``.client``)."""
    db_path = Path(db_path).resolve()
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
        found = schema(conn)
        views = _views(conn)
        inspected = None if writable else inspect_data(db_path, conn, [t for t in found if t not in views])
    ds = Datasette(
        metadata=build_metadata(found, views),
        plugins_dir=str(BROWSE / "plugins"),
        template_dir=str(BROWSE / "templates"),
        static_mounts=[(STATIC_MOUNT, str(BROWSE / "static"))],
        settings={**SETTINGS, **(settings or {})},
        inspect_data=inspected,
        cache_headers=True,
    )
    ds.remove_database("_memory")  # added when no file is passed to the constructor
    ds.add_database(Database(ds, path=str(db_path), is_mutable=writable), name=DATABASE)
    return ds


def serve(db_path: str | Path, *, host: str = "127.0.0.1", port: int = 8001, writable: bool = False,
          prepared: bool = False) -> None:
    """Serve the database until interrupted (what ``jobcrawl serve`` runs); :func:`prepare` it first
    unless ``prepared``."""
    import asyncio

    import uvicorn

    if not prepared:
        writable = not prepare(db_path)[1] or writable
    ds = make_datasette(db_path, writable=writable)
    asyncio.run(ds.invoke_startup())
    uvicorn.run(ds.app(), host=host, port=port, log_level="warning", lifespan="on", workers=1)
