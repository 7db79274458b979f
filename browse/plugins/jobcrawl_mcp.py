"""The jobs database's MCP tools, added to datasette-mcp's (``/-/mcp``) through its ``register_mcp_tools`` hook.

- ``execute_sql`` is replaced by one under the SQL page's limits (:mod:`browse.limits`: a short time limit,
  one query at a time, only SELECT; refused with ``--no-sql``).
- ``get_posting``: one posting as ``jobcrawl export`` writes it (fields, JD sections, skills with their
  evidence, the evaluations with each dimension's evidence, its duplicate cluster), with its application status.
- ``execute_writable_canned_query`` (the ``track`` canned query) is left out while writes are refused
  (:class:`browse.access.Access`): the endpoint is read-only then.

The other tools are datasette-mcp's: ``list_databases``, ``get_database_schema``, ``list_canned_queries``,
``execute_canned_query`` (``search``, ``my_applications`` …) and ``execute_writable_canned_query`` (``track``).
"""

from __future__ import annotations

from typing import Any

import datasette_mcp as base
import sqlite_utils
from datasette import hookimpl
from datasette.utils import validate_sql_select
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from browse import limits
from browse.access import Access
from browse.metadata import DATABASE
from crawler.store.read import export_record
from crawler.track.store import application


def posting_record(conn, posting_id: int) -> dict[str, Any] | None:
    """The export record of a posting with ``application`` (:func:`crawler.track.store.application`); None if none."""
    record = export_record(sqlite_utils.Database(conn, recursive_triggers=False), posting_id)
    return {**record, "application": application(conn, posting_id)} if record else None


@hookimpl(trylast=True)
def register_mcp_tools(datasette, mcp):
    # trylast: after datasette-mcp's own, whose execute_sql this replaces
    access: Access = getattr(datasette, "access", None) or Access()
    mcp.remove_tool("execute_sql")
    if access.refused and base._canned_queries_enabled(datasette):
        mcp.remove_tool("execute_writable_canned_query")

    @mcp.tool(annotations=base.READ_ONLY_ANNOTATIONS)
    async def execute_sql(database: str, sql: str, ctx: Context) -> base.QueryResults:
        """Execute one read-only SQL statement (a SELECT) and return column-keyed rows, as the SQL page
        runs it: at most 1 s, one query at a time, at most 1000 rows (truncated says when more matched)."""
        db, actor = await base._get_visible_database(datasette, ctx, database)
        if not await base._database_permission_allowed(datasette, actor, "execute-sql", database):
            raise ToolError(f"You do not have permission to execute SQL against database {database!r}.")
        with base._sql_errors_as_tool_errors():
            validate_sql_select(sql)
            try:
                async with limits.sql_turn(datasette):
                    results = await db.execute(sql, truncate=True, custom_time_limit=limits.SQL_TIME_LIMIT_MS,
                                               log_sql_errors=False)
            except limits.Busy:
                raise ToolError(limits.BUSY.strip()) from None
        return base._query_results(database, results)

    @mcp.tool(annotations=base.READ_ONLY_ANNOTATIONS)
    async def get_posting(posting_id: int, ctx: Context) -> dict[str, Any]:
        """One posting of the jobs database as `jobcrawl export` writes it: its normalized fields beside the raw
        text, JD sections, skills with where each was found (skill_evidence), our evaluation (evaluation) and the
        app's (source_evaluation) with each dimension's score, explanation and evidence, its duplicate cluster;
        and application: the status of its job (status, since, updated, notes), null when not tracked. Find ids
        with the search canned query or execute_sql."""
        await base._get_visible_database(datasette, ctx, DATABASE)
        record = await datasette.get_database(DATABASE).execute_fn(lambda conn: posting_record(conn, posting_id))
        if record is None:
            raise ToolError(f"No posting {posting_id} in the database.")
        return record
