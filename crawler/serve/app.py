"""Serving a jobcrawl database in Datasette 0.65: the configured instance and ``jobcrawl serve``.

The database is always served under the name ``jobs`` (``/jobs/jobs``, ``/jobs/postings/1``),
whatever its file is called, with the metadata of :mod:`browse.metadata`, the plugin of
``browse/plugins`` (search, facets, posting page, cells, the limits of arbitrary SQL),
``browse/templates`` and ``browse/static`` (at ``/jobcrawl-static/``).

By default the file is opened the normal way, read-only (``mode=ro``): a run may write it while it
is served, and every page shows the data as of its last commit. ``immutable`` (``--immutable``) is
for a file nobody writes: Datasette then opens it with ``immutable=1`` and takes the table counts
from :func:`crawler.serve.store.inspect_data`; so is a file on read-only media, which SQLite can open
no other way.

In both modes query results are kept (:class:`ResultCache`) and the listings' facets are counted
from an in-memory :class:`browse.facets.FacetIndex`, both for as long as the file is unchanged
(:class:`Freshness`: SQLite's ``data_version``). After a commit the results are dropped, the pages'
facets come from Datasette's own queries, and the index is loaded again in the background once the
file has been quiet for :data:`QUIET_SECONDS`.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import logging
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from datasette.app import Datasette
from datasette.database import Database, QueryInterrupted, Results

from browse.access import Access
from browse.facets import FacetIndex
from browse.lru import Lru
from browse.metadata import DATABASE, STATIC_MOUNT, build_metadata
from crawler.store import needs_immutable
from crawler.serve import store as db_serve
BROWSE = Path(__file__).resolve().parents[2] / "browse"
SETTINGS: dict[str, Any] = {
    # Suggesting facets runs a query per column on every table page (1.2 s at 500k postings).
    "suggest_facets": False,
    "default_page_size": 50,
    "facet_time_limit_ms": 400,
    "sql_time_limit_ms": 5000,  # the pages' queries; arbitrary SQL gets browse.limits.SQL_TIME_LIMIT_MS
    "num_sql_threads": 3,
    "default_facet_size": 15,
    "max_returned_rows": 1000,
}
QUIET_SECONDS = 3.0  # after a commit, how long the file must stay unchanged before the facet index is loaded again


class Freshness:
    """A generation number of the served file that goes up whenever another connection (a run, in
    any process) has committed to it since the last look: SQLite's ``PRAGMA data_version`` on a
    read-only connection of its own. Always 0 for an immutable file. Thread-safe."""

    def __init__(self, path: Path, *, immutable: bool):
        self.number = 0
        self.changed_at = time.monotonic()
        self._conn = None if immutable else db_serve.connect_readonly(path)
        self._last = None if self._conn is None else db_serve.data_version(self._conn)
        self._lock = threading.Lock()

    def current(self) -> int:
        if self._conn is None:
            return 0
        with self._lock:
            version = db_serve.data_version(self._conn)
            if version != self._last:
                self._last, self.number, self.changed_at = version, self.number + 1, time.monotonic()
            return self.number


class ResultCache:
    """Query results of one generation of the file (:class:`Freshness`), shared by the instances
    that serve it (thread-safe). A newer generation empties it; a result computed for an older one
    is not kept.

    Least recently used results go first past ``max_rows`` rows in all; results longer than
    ``max_result_rows`` are not kept. A query that ran out of time is remembered for
    ``timeout_ttl`` seconds with its time limit.
    """

    def __init__(self, *, max_rows: int = 200_000, max_result_rows: int = 2_000, timeout_ttl: float = 300):
        self.max_rows, self.max_result_rows, self.timeout_ttl = max_rows, max_result_rows, timeout_ttl
        self.results = Lru(max_rows, weight=lambda results: len(results.rows) + 1)
        self.timeouts: dict[tuple, tuple[float, int]] = {}
        self.generation = 0
        self._lock = threading.Lock()

    def _current(self, generation: int) -> bool:
        """Whether ``generation`` is the cache's, emptying it first for a newer one."""
        with self._lock:
            if generation > self.generation:
                self.generation = generation
                self.results = Lru(self.max_rows, weight=self.results.weight)
                self.timeouts = {}
            return generation == self.generation

    def get(self, key: tuple, generation: int = 0) -> Results | None:
        hit = self.results.get(key) if self._current(generation) else None
        return None if hit is None else Results(list(hit.rows), hit.truncated, hit.description)

    def timed_out(self, key: tuple, limit: int, generation: int = 0) -> bool:
        """True when the query ran out of time under this limit or a larger one, lately."""
        if not self._current(generation):
            return False
        with self._lock:
            until, under = self.timeouts.get(key, (0.0, 0))
        return time.monotonic() < until and limit <= under

    def put(self, key: tuple, results: Results, generation: int = 0) -> None:
        if len(results.rows) <= self.max_result_rows and self._current(generation):
            self.results.put(key, results)

    def put_timeout(self, key: tuple, limit: int, generation: int = 0) -> None:
        if self._current(generation):
            with self._lock:
                self.timeouts[key] = (time.monotonic() + self.timeout_ttl, limit)


class ServeState:
    """What the instances serving one file share: its :class:`Freshness`, the :class:`ResultCache`
    and the :class:`FacetIndex` of the generation it was loaded in (loaded now; again in the
    background after the file changed, :meth:`facet_index`)."""

    def __init__(self, path: Path, *, immutable: bool, facet_index: FacetIndex | None = None, indexed: bool = True):
        self.path, self.immutable, self.indexed = path, immutable, indexed
        self.freshness = Freshness(path, immutable=immutable)
        self.cache = ResultCache()
        self.index: FacetIndex | None = None  # of self.index_generation
        self.index_generation = -1
        self.warmer: Datasette | None = None  # warms the front pages again after a reload
        self._reloading: threading.Thread | None = None
        self._lock = threading.Lock()
        if facet_index is not None:
            self.index, self.index_generation = facet_index, self.generation()
        elif indexed:
            self.load_index()

    def generation(self) -> int:
        return self.freshness.current()

    def facet_index(self) -> FacetIndex | None:
        """The facet index when it is of the file as it is now; else None (and a reload is started)."""
        if self.index is not None and self.index_generation == self.generation():
            return self.index
        self._reload_in_background()
        return None

    def load_index(self) -> bool:
        """Load the facet index from one snapshot of the file; keep it unless a commit came meanwhile."""
        generation = self.generation()
        with db_serve.snapshot(self.path) as conn:
            index = FacetIndex.load(conn)
        if self.generation() != generation:
            return False
        self.index, self.index_generation = index, generation
        return True

    def _reload_in_background(self) -> None:
        with self._lock:
            if not self.indexed or self.immutable or (self._reloading is not None and self._reloading.is_alive()):
                return
            self._reloading = threading.Thread(target=self._reload, name="jobcrawl-facets", daemon=True)
            self._reloading.start()

    def _reload(self) -> None:
        while True:
            quiet = time.monotonic() - self.freshness.changed_at
            if self.generation() == self.index_generation:
                return
            if quiet < QUIET_SECONDS:
                time.sleep(QUIET_SECONDS - quiet)
            elif self.load_index():
                if self.warmer is not None:
                    asyncio.run(warm(self.warmer))
                return


class ServedDatabase(Database):
    """The served file: read-only (``mode=ro``), or ``immutable=1``; query results come from the
    shared :class:`ResultCache` while the file is unchanged, so a listing's facets or a popular
    search are computed once. A query that ran out of time fails at once under the same or a
    smaller limit for a while, instead of spending the limit again on every page.
    ``facet_index`` counts the listings' facets (:mod:`browse.facets`) while it is current."""

    def __init__(self, ds: Datasette, path: str, state: ServeState):
        super().__init__(ds, path=path, is_mutable=not state.immutable)
        self.state = state

    @property
    def facet_index(self) -> FacetIndex | None:
        return self.state.facet_index()

    @property
    def loaded_facet_index(self) -> FacetIndex | None:
        """The last facet index loaded, current or not (what a page's own SQL was written for)."""
        return self.state.index

    def _key(self, sql, params, truncate=False, page_size=None) -> tuple:
        frozen = tuple(sorted(params.items())) if isinstance(params, dict) else tuple(params or ())
        return sql, frozen, truncate, page_size or self.ds.page_size

    def remember_value(self, sql: str, params: dict, value: Any) -> None:
        """Keep ``value`` as the one-row, one-column result of ``sql``: a count known from the facet
        index without running it (:func:`browse.filters.listing_filters`), so for its generation."""
        rows, description = db_serve.single_value(value)
        self.state.cache.put(self._key(sql, params), Results(rows, False, description), self.state.index_generation)

    async def execute(self, sql, params=None, truncate=False, custom_time_limit=None, page_size=None,
                      log_sql_errors=True):
        cache, generation = self.state.cache, self.state.generation()
        key = self._key(sql, params, truncate, page_size)
        limit = min(custom_time_limit or self.ds.sql_time_limit_ms, self.ds.sql_time_limit_ms)
        hit = cache.get(key, generation)
        if hit is not None:
            return hit
        if cache.timed_out(key, limit, generation):
            raise QueryInterrupted(None, sql, params)
        try:
            results = await super().execute(sql, params, truncate, custom_time_limit, page_size, log_sql_errors)
        except QueryInterrupted:
            cache.put_timeout(key, limit, generation)
            raise
        cache.put(key, results, generation)
        return Results(list(results.rows), results.truncated, results.description)


class JobsDatasette(Datasette):
    """Datasette that looks each plugin's configuration up once per database and table: the
    metadata does not change once the instance is made, and datasette-render-markdown (installed
    with datasette-dashboards) asks for its configuration on every text cell of a table page,
    each time merging the whole metadata. ``access``: what it accepts beyond reading (browse/access.py),
    set before Datasette's constructor builds the app (the MCP tools are registered then)."""

    def __init__(self, *args, access: Access | None = None, **kwargs):
        self.access = access or Access()
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        super().__init__(*args, **kwargs)
        # datasette-mcp's MCP server configures the root logger (INFO, to stderr) when the app is built:
        # every request of the cache warming would be logged. Keep the process's logging as it was.
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        root.setLevel(level)

    def plugin_config(self, plugin_name, database=None, table=None, fallback=True):
        memo = self.__dict__.setdefault("_plugin_configs", {})
        key = (plugin_name, database, table, fallback)
        if key not in memo:
            memo[key] = super().plugin_config(plugin_name, database=database, table=table, fallback=fallback)
        config = memo[key]
        return None if config is None else copy.deepcopy(config)


def prepare(db_path: str | Path, *, immutable: bool = False) -> bool:
    """Apply pending migrations (the only writes ``serve`` makes, before Datasette opens the file)
    and, for an immutable open, which never reads the write-ahead log, checkpoint the log into the
    file. Returns False when the log could not all reach the file (another process reads or writes it)."""
    return db_serve.prepare(db_path, checkpoint=immutable)


_URI_CHARACTERS = "#?%"


def _plain_path(db_path: Path) -> Path:
    """``db_path``, or when it holds ``#``, ``?`` or ``%`` a symbolic link to it at a plain path:
    Datasette 0.65 opens ``file:{path}?mode=ro`` (or ``?immutable=1``) unescaped, so it would open
    a file at the path cut there. SQLite follows the link and keeps the write-ahead log beside the real file.

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


def make_datasette(db_path: str | Path, *, immutable: bool = False, allow_sql: bool = True,
                   settings: dict[str, Any] | None = None, state: ServeState | None = None,
                   facet_index: FacetIndex | None = None, indexed: bool = True,
                   access: Access | None = None) -> Datasette:
    """A configured Datasette instance serving ``db_path`` as ``jobs`` (not started; tests use ``.client``).

    Read-only and mutable unless ``immutable``; ``allow_sql=False`` refuses arbitrary SQL
    (Datasette's ``allow_sql: false``; the charts' own queries still run). ``state`` shares the
    caches and the facet index of another instance over the same file (new ones by default; a new
    state loads its facet index from the file unless ``facet_index`` is given; ``indexed=False``: no
    facet index, Datasette's own facet queries, as while the file changes). Any path works:
    Datasette gets a plain one (:func:`_plain_path`). A file SQLite can open only immutable (read-only
    media: :func:`crawler.store.needs_immutable`) is served immutable.

    ``access``: the served address, MCP on or off and whether writes (the ``track`` canned query, by
    form or MCP) are allowed; by default as on loopback, any port: allowed unless immutable."""
    db_path = Path(db_path).resolve()
    immutable = immutable or needs_immutable(db_path)
    conn = db_serve.connect_readonly(db_path)
    try:
        found = db_serve.schema(conn)
        views = db_serve.views(conn)
        inspected = (db_serve.inspect_data(db_path, conn, [t for t in found if t not in views], DATABASE)
                     if immutable else None)
    finally:
        conn.close()
    if state is None:
        state = ServeState(db_path, immutable=immutable, facet_index=facet_index, indexed=indexed)
    access = access or Access()
    if immutable and not access.refused:
        access = Access.of(access.host, access.port, immutable=True, allow_writes=False, mcp=access.mcp)
    ds = JobsDatasette(
        metadata=build_metadata(found, views, allow_sql=allow_sql, writes=not access.refused),
        plugins_dir=str(BROWSE / "plugins"),
        template_dir=str(BROWSE / "templates"),
        static_mounts=[(STATIC_MOUNT, str(BROWSE / "static"))],
        settings={**SETTINGS, **(settings or {})},
        inspect_data=inspected,
        cache_headers=True,
        access=access,
    )
    ds.remove_database("_memory")  # added when no file is passed to the constructor
    ds.add_database(ServedDatabase(ds, str(_plain_path(db_path)), state), name=DATABASE)
    return ds


WARM_PAGES = ("/jobs/jobs", "/jobs/postings")
WARM_TIME_LIMIT_MS = 600_000


async def warm(ds: Datasette) -> list[tuple[str, int, float]]:
    """Request the front pages (the listing, the postings table, the charts' queries) so their
    results are cached; ``ds`` should be an instance with generous time limits sharing the served
    instance's state (at 500k postings the charts' queries take seconds). Returns
    ``(path, status, seconds)`` per page."""
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


def warm_in_background(db_path: str | Path, ds: Datasette) -> threading.Thread:
    """Start warming ``ds``'s cache from a second instance with ``WARM_TIME_LIMIT_MS`` limits, in a
    thread of its own; prints one line when done. The same instance warms the front pages again
    whenever the facet index was loaded again after a change of the file."""
    database = ds.get_database(DATABASE)
    limits = {"sql_time_limit_ms": WARM_TIME_LIMIT_MS, "facet_time_limit_ms": WARM_TIME_LIMIT_MS}
    warmer = make_datasette(db_path, immutable=database.state.immutable, settings=limits, state=database.state)

    def run() -> None:
        start = time.perf_counter()
        done = asyncio.run(warm(warmer))
        pages = ", ".join(f"{path} {status} {seconds:.1f} s" for path, status, seconds in done)
        print(f"cache warmed in {time.perf_counter() - start:.1f} s: {pages}", file=sys.stderr, flush=True)
        database.state.warmer = warmer

    thread = threading.Thread(target=run, name="jobcrawl-warm", daemon=True)
    thread.start()
    return thread


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (raises OSError: in use, no such address, not allowed)."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def serve(db_path: str | Path, sock: socket.socket, *, immutable: bool = False, allow_sql: bool = True,
          access: Access | None = None) -> None:
    """Serve the (prepared: :func:`prepare`) database on the listening socket ``sock`` (:func:`listen`)
    until interrupted: what ``jobcrawl serve`` runs. The front pages are warmed in the background."""
    import uvicorn

    ds = make_datasette(db_path, immutable=immutable, allow_sql=allow_sql, access=access)
    asyncio.run(ds.invoke_startup())
    warm_in_background(db_path, ds)
    server = uvicorn.Server(uvicorn.Config(ds.app(), log_level="warning", lifespan="on"))
    server.run(sockets=[sock])
