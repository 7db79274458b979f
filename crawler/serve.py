"""Serving a jobcrawl database in Datasette 0.65: the configured instance and ``jobcrawl serve``.

The database is always served under the name ``jobs`` (``/jobs/jobs``, ``/jobs/postings/1``),
whatever its file is called, with the metadata of :mod:`browse.metadata`, the plugins of
``browse/plugins`` (search, posting page, cell rendering), ``browse/templates`` and
``browse/static`` (at ``/jobcrawl-static/``). Read-only and immutable by default: Datasette then
opens the file with ``immutable=1`` and takes the table counts from :func:`inspect_data`, query
results are kept (:class:`ResultCache`) and the listings' facets are counted from an in-memory
:class:`browse.facets.FacetIndex` loaded at start.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import os
import sys
import threading
import sqlite3
import time
from pathlib import Path
from typing import Any

from datasette.app import Datasette
from datasette.database import Database, QueryInterrupted, Results

from browse.facets import FacetIndex
from browse.lru import Lru
from browse.metadata import DATABASE, STATIC_MOUNT, build_metadata
from crawler.db import readonly_uri

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


class ResultCache:
    """Query results of one immutable file, shared by the instances that serve it (thread-safe).

    Least recently used results go first past ``max_rows`` rows in all; results longer than
    ``max_result_rows`` are not kept. A query that ran out of time is remembered for
    ``timeout_ttl`` seconds with its time limit.
    """

    def __init__(self, *, max_rows: int = 200_000, max_result_rows: int = 2_000, timeout_ttl: float = 300):
        self.max_rows, self.max_result_rows, self.timeout_ttl = max_rows, max_result_rows, timeout_ttl
        self.results = Lru(max_rows, weight=lambda results: len(results.rows) + 1)
        self.timeouts: dict[tuple, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Results | None:
        hit = self.results.get(key)
        return None if hit is None else Results(list(hit.rows), hit.truncated, hit.description)

    def timed_out(self, key: tuple, limit: int) -> bool:
        """True when the query ran out of time under this limit or a larger one, lately."""
        with self._lock:
            until, under = self.timeouts.get(key, (0.0, 0))
        return time.monotonic() < until and limit <= under

    def put(self, key: tuple, results: Results) -> None:
        if len(results.rows) <= self.max_result_rows:
            self.results.put(key, results)

    def put_timeout(self, key: tuple, limit: int) -> None:
        with self._lock:
            self.timeouts[key] = (time.monotonic() + self.timeout_ttl, limit)


class CachedDatabase(Database):
    """An immutable database whose query results come from a :class:`ResultCache`: the same SQL
    and parameters give the same rows for as long as the file is served, so a listing's facets or a
    popular search are computed once. A query that ran out of time fails at once under the same or a
    smaller limit for a while, instead of spending the limit again on every page. ``facet_index``
    counts the listings' facets (:mod:`browse.facets`)."""

    def __init__(self, ds: Datasette, path: str, cache: ResultCache, facet_index: FacetIndex | None = None):
        super().__init__(ds, path=path, is_mutable=False)
        self.cache = cache
        self.facet_index = facet_index

    def _key(self, sql, params, truncate=False, page_size=None) -> tuple:
        frozen = tuple(sorted(params.items())) if isinstance(params, dict) else tuple(params or ())
        return sql, frozen, truncate, page_size or self.ds.page_size

    def remember_value(self, sql: str, params: dict, value: Any) -> None:
        """Keep ``value`` as the one-row, one-column result of ``sql`` (a count known from an index
        without running it: :func:`browse.filters.listing_filters`)."""
        with sqlite3.connect(":memory:") as conn:
            conn.row_factory = sqlite3.Row
            cursor = conn.execute("SELECT ? AS value", (value,))
            rows = cursor.fetchall()
        self.cache.put(self._key(sql, params), Results(rows, False, cursor.description))

    async def execute(self, sql, params=None, truncate=False, custom_time_limit=None, page_size=None,
                      log_sql_errors=True):
        key = self._key(sql, params, truncate, page_size)
        limit = min(custom_time_limit or self.ds.sql_time_limit_ms, self.ds.sql_time_limit_ms)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        if self.cache.timed_out(key, limit):
            raise QueryInterrupted(None, sql, params)
        try:
            results = await super().execute(sql, params, truncate, custom_time_limit, page_size, log_sql_errors)
        except QueryInterrupted:
            self.cache.put_timeout(key, limit)
            raise
        self.cache.put(key, results)
        return Results(list(results.rows), results.truncated, results.description)


class JobsDatasette(Datasette):
    """Datasette that looks each plugin's configuration up once per database and table: the
    metadata does not change once the instance is made, and datasette-render-markdown (installed
    with datasette-dashboards) asks for its configuration on every text cell of a table page,
    each time merging the whole metadata."""

    def plugin_config(self, plugin_name, database=None, table=None, fallback=True):
        memo = self.__dict__.setdefault("_plugin_configs", {})
        key = (plugin_name, database, table, fallback)
        if key not in memo:
            memo[key] = super().plugin_config(plugin_name, database=database, table=table, fallback=fallback)
        config = memo[key]
        return None if config is None else copy.deepcopy(config)


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


_URI_CHARACTERS = "#?%"


def _plain_path(db_path: Path) -> Path:
    """``db_path``, or when it holds ``#``, ``?`` or ``%`` a symbolic link to it at a plain path:
    Datasette 0.65 opens ``file:{path}?immutable=1`` unescaped, so it would open (and create) a file
    at the path cut there. SQLite follows the link and keeps the write-ahead log beside the real file.

    The link is ``$XDG_CACHE_HOME/jobcrawl/serve/<hash of the path>/jobs.db`` (default
    ``~/.cache``): one per database, made again when missing, so nothing needs removing."""
    if not any(c in str(db_path) for c in _URI_CHARACTERS):
        return db_path
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    link = cache / "jobcrawl" / "serve" / hashlib.sha256(str(db_path).encode()).hexdigest()[:16] / "jobs.db"
    link.parent.mkdir(parents=True, exist_ok=True)
    if not (link.is_symlink() and os.readlink(link) == str(db_path)):
        fresh = link.with_name(f"jobs.db.{os.getpid()}")  # made aside, then renamed over: another serve may read it
        fresh.unlink(missing_ok=True)
        fresh.symlink_to(db_path)
        os.replace(fresh, link)
    return link


def make_datasette(db_path: str | Path, *, writable: bool = False, settings: dict[str, Any] | None = None,
                   cache: ResultCache | None = None, facet_index: FacetIndex | None = None) -> Datasette:
    """A configured Datasette instance serving ``db_path`` as ``jobs`` (not started; tests use ``.client``).

    Immutable unless ``writable``; an immutable file's query results go to ``cache`` and its facets
    are counted from ``facet_index`` (new ones by default, the index loaded from the file; pass them
    to share them between instances). Any path works: Datasette gets a plain one (:func:`_plain_path`)."""
    db_path = Path(db_path).resolve()
    with sqlite3.connect(readonly_uri(db_path), uri=True) as conn:
        found = schema(conn)
        views = _views(conn)
        inspected = None if writable else inspect_data(db_path, conn, [t for t in found if t not in views])
        if not writable and facet_index is None:
            facet_index = FacetIndex.load(conn)
    ds = JobsDatasette(
        metadata=build_metadata(found, views),
        plugins_dir=str(BROWSE / "plugins"),
        template_dir=str(BROWSE / "templates"),
        static_mounts=[(STATIC_MOUNT, str(BROWSE / "static"))],
        settings={**SETTINGS, **(settings or {})},
        inspect_data=inspected,
        cache_headers=True,
    )
    ds.remove_database("_memory")  # added when no file is passed to the constructor
    served = _plain_path(db_path)
    if writable:
        database = Database(ds, path=str(served), is_mutable=True)
    else:
        database = CachedDatabase(ds, str(served), cache if cache is not None else ResultCache(), facet_index)
    ds.add_database(database, name=DATABASE)
    return ds


WARM_PAGES = ("/jobs/jobs", "/jobs/postings")
WARM_TIME_LIMIT_MS = 600_000


async def warm(ds: Datasette) -> list[tuple[str, int, float]]:
    """Request the front pages (the listing, the postings table, the charts' queries) so their
    results are cached; ``ds`` should be an instance with generous time limits sharing the served
    instance's cache (at 500k postings the charts' queries take seconds). Returns
    ``(path, status, seconds)`` per page; nothing for a writable (uncached) database."""
    if not isinstance(ds.get_database(DATABASE), CachedDatabase):
        return []
    from urllib.parse import urlencode

    charts = ds.plugin_config("datasette-dashboards") or {}
    paths = list(WARM_PAGES) + [
        f"/{DATABASE}.json?" + urlencode({"sql": chart["query"], "_shape": "objects"})
        for dashboard in charts.values() for chart in dashboard.get("charts", {}).values() if chart.get("query")
    ]
    done = []
    for path in paths:
        start = time.perf_counter()
        response = await ds.client.get(path)
        done.append((path.split("?")[0], response.status_code, time.perf_counter() - start))
    return done


def warm_in_background(db_path: str | Path, ds: Datasette) -> threading.Thread | None:
    """Start warming ``ds``'s cache from a second instance with ``WARM_TIME_LIMIT_MS`` limits, in a
    thread of its own; prints one line when done. None for a writable database."""
    database = ds.get_database(DATABASE)
    if not isinstance(database, CachedDatabase):
        return None
    limits = {"sql_time_limit_ms": WARM_TIME_LIMIT_MS, "facet_time_limit_ms": WARM_TIME_LIMIT_MS}
    warmer = make_datasette(db_path, settings=limits, cache=database.cache, facet_index=database.facet_index)

    def run() -> None:
        start = time.perf_counter()
        done = asyncio.run(warm(warmer))
        pages = ", ".join(f"{path} {status} {seconds:.1f} s" for path, status, seconds in done)
        print(f"cache warmed in {time.perf_counter() - start:.1f} s: {pages}", file=sys.stderr, flush=True)

    thread = threading.Thread(target=run, name="jobcrawl-warm", daemon=True)
    thread.start()
    return thread


def serve(db_path: str | Path, *, host: str = "127.0.0.1", port: int = 8001, writable: bool = False,
          prepared: bool = False) -> None:
    """Serve the database until interrupted (what ``jobcrawl serve`` runs); :func:`prepare` it first
    unless ``prepared``. An immutable file's cache is warmed in the background while it serves."""
    import uvicorn

    if not prepared:
        writable = not prepare(db_path)[1] or writable
    ds = make_datasette(db_path, writable=writable)
    asyncio.run(ds.invoke_startup())
    warm_in_background(db_path, ds)
    uvicorn.run(ds.app(), host=host, port=port, log_level="warning", lifespan="on", workers=1)
