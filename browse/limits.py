"""Limits on what a visitor can make the server do: arbitrary SQL, methods, the charts with ``--no-sql``.

- Arbitrary SQL (``/jobs?sql=``, ``/jobs.json?sql=`` …) runs under :data:`SQL_TIME_LIMIT_MS`
  (a ``_timelimit`` below Datasette's ``sql_time_limit_ms``, which the pages keep) and at most
  :data:`SQL_AT_ONCE` at a time, so that however many such requests come, the other SQL threads
  stay free for the pages; at most :data:`SQL_WAITING` wait for their turn, more are answered
  503 with ``Retry-After``. A chart's own query (the SQL of a datasette-dashboards chart) is not
  arbitrary: it runs as the pages do, and is allowed when arbitrary SQL is turned off
  (``allow_sql: false``, ``jobcrawl serve --no-sql``); while the facet index is current, its rows
  come from memory (:mod:`browse.charts`).
- Every method but GET, HEAD and OPTIONS is answered 405 (Datasette answers a POST to a canned
  query or a table with a 500), except a POST to a writable canned query (``write: true``) and the
  MCP endpoint's methods; those, and every request to ``/-/mcp``, pass :class:`browse.access.Access`
  (the served address, writes allowed, MCP on) first, else 403 (404 for ``/-/mcp`` when it is off;
  any POST but MCP's is 403 with the reason while writes are off).
- MCP's SQL tool runs under the same time limit and turns as arbitrary SQL (:func:`sql_turn`).
"""

from __future__ import annotations

import asyncio
import contextvars
from contextlib import asynccontextmanager
from urllib.parse import parse_qsl, urlencode
from weakref import WeakKeyDictionary

from browse.access import MCP_METHODS, MCP_PATH, Access
from browse.charts import chart_rows, response_body

SQL_TIME_LIMIT_MS = 1000
SQL_AT_ONCE = 1
SQL_WAITING = 8
READ_METHODS = ("GET", "HEAD", "OPTIONS")
BUSY = "Too many SQL queries at once; try again in a moment.\n"

BUILT_IN = contextvars.ContextVar("jobcrawl_built_in_sql", default=False)
"""True while a request runs a chart's own query or the charts page (:func:`allows_sql`)."""


def chart_queries(datasette) -> dict[str, dict]:
    """The SQL of every datasette-dashboards chart (as the charts page sends it) → its configuration."""
    dashboards = datasette.plugin_config("datasette-dashboards") or {}
    return {chart["query"]: chart for dashboard in dashboards.values()
            for chart in (dashboard.get("charts") or {}).values() if chart.get("query")}


def allows_sql(action: str) -> bool | None:
    """The ``permission_allowed`` answer for ``execute-sql`` while :data:`BUILT_IN` is set: True (the
    charts run their queries through Datasette's SQL endpoint); None otherwise (Datasette decides)."""
    return True if action == "execute-sql" and BUILT_IN.get() else None


class Busy(Exception):
    """More than :data:`SQL_WAITING` arbitrary queries wait for their turn."""


class Turns:
    """At most :data:`SQL_AT_ONCE` arbitrary queries of one instance run at a time (per event loop:
    tests run several), at most :data:`SQL_WAITING` wait."""

    def __init__(self):
        self.turns: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self.waiting = 0

    @asynccontextmanager
    async def turn(self):
        if self.waiting >= SQL_WAITING:
            raise Busy
        turn = self.turns.setdefault(asyncio.get_running_loop(), asyncio.Semaphore(SQL_AT_ONCE))
        self.waiting += 1
        try:
            await turn.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            turn.release()


_TURNS: WeakKeyDictionary = WeakKeyDictionary()


def sql_turn(datasette):
    """An arbitrary query's turn on ``datasette`` (``async with``); raises :class:`Busy`."""
    return _TURNS.setdefault(datasette, Turns()).turn()


def write_paths(datasette) -> set[str]:
    """The paths of the writable canned queries (a POST there writes)."""
    return {datasette.urls.query(database, name)
            for database, meta in (datasette.metadata().get("databases") or {}).items()
            for name, query in (meta.get("queries") or {}).items() if isinstance(query, dict) and query.get("write")}


def _refusal(scope, datasette, writes: set[str]) -> tuple[int, str, list] | None:
    """The answer to a request that may write or reaches ``/-/mcp`` and is not allowed (None when it is)."""
    access: Access = getattr(datasette, "access", None) or Access()
    method, path = scope.get("method"), scope["path"]
    if path == MCP_PATH:
        if not access.mcp:
            return 404, "The MCP endpoint is off (jobcrawl serve --no-mcp).\n", []
        if method not in MCP_METHODS:
            return 405, "Method not allowed.\n", [(b"allow", ", ".join(MCP_METHODS).encode())]
    elif method in READ_METHODS:
        return None
    elif method == "POST" and access.refused:
        return 403, access.refused + "\n", []
    elif method != "POST" or path not in writes:
        return 405, "Method not allowed: this server only reads (GET).\n", [(b"allow", b"GET, HEAD, OPTIONS")]
    forged = access.forged(dict(scope.get("headers") or []))
    return (403, forged + "\n", []) if forged else None


def _respond(send, status: int, body: str | bytes, headers: list[tuple[bytes, bytes]] = (),
             content_type: bytes = b"text/plain"):
    body = body.encode() if isinstance(body, str) else body
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", content_type + b"; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                         *headers]}

    async def respond():
        await send(start)
        await send({"type": "http.response.body", "body": body})

    return respond()


def wrap(app, datasette):
    """ASGI middleware applying the limits of the module docstring."""
    charts: set[str] | None = None
    database_paths: set[str] | None = None
    writes: set[str] | None = None

    async def wrapped(scope, receive, send):
        nonlocal charts, database_paths, writes
        if scope["type"] != "http":
            return await app(scope, receive, send)
        if writes is None:
            writes = write_paths(datasette)
        refused = _refusal(scope, datasette, writes)
        if refused:
            return await _respond(send, *refused)
        if scope.get("method") not in READ_METHODS or scope["path"] == MCP_PATH:
            return await app(scope, receive, send)
        if charts is None:
            charts = chart_queries(datasette)
            database_paths = {datasette.urls.database(name) for name in datasette.databases}
        path = scope["path"]
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        sql = next((value for key, value in pairs if key == "sql"), None)
        if sql is not None and sql in charts and path.rsplit(".", 1)[0] in database_paths:
            database = path.rsplit(".", 1)[0].rsplit("/", 1)[-1]
            params = {k: v for k, v in pairs if k not in ("sql", "_shape")}
            rows = chart_rows(getattr(datasette.get_database(database), "facet_index", None), charts[sql], params)
            if rows is not None:
                return await _respond(send, 200, response_body(database, sql, params, rows), content_type=b"application/json")
        if path.startswith("/-/dashboards") or (sql is not None and sql in charts):
            token = BUILT_IN.set(True)
            try:
                return await app(scope, receive, send)
            finally:
                BUILT_IN.reset(token)
        if sql is None or path.rsplit(".", 1)[0] not in database_paths:
            return await app(scope, receive, send)
        asked = [int(v) for k, v in pairs if k == "_timelimit" and v.isdigit() and int(v) > 0]
        pairs = [(k, v) for k, v in pairs if k != "_timelimit"] + [("_timelimit", str(min([SQL_TIME_LIMIT_MS, *asked])))]
        scope = dict(scope, query_string=urlencode(pairs).encode())
        try:
            async with sql_turn(datasette):
                return await app(scope, receive, send)
        except Busy:
            return await _respond(send, 503, BUSY, [(b"retry-after", b"2")])

    return wrapped
