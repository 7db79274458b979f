"""The MCP endpoint of ``jobcrawl serve`` (``/-/mcp``: datasette-mcp and browse/plugins/jobcrawl_mcp.py): the ``mcp``
Python client against a real server on a free port (initialize, the tools, a search, a posting with its
evidence, ``track`` and its effect on the applications view, a refused INSERT), forged requests within a real
session, read-only off loopback; the SQL tool's limits in-process (the MCP server of an instance, no HTTP)."""

from __future__ import annotations

import asyncio
import http.client
import json
import sqlite3

import pytest
from mcp import Client

from conftest import start_serve
from crawler.serve.app import make_datasette
from test_browse import build_browse_db
from test_serve import ENDLESS_SQL

TOOLS = ["execute_canned_query", "execute_sql", "execute_writable_canned_query", "get_database_schema", "get_posting",
         "list_canned_queries", "list_databases"]
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return build_browse_db(tmp_path_factory.mktemp("mcp"))


@pytest.fixture(scope="module")
def server(db):
    """``jobcrawl serve`` over ``db`` on 127.0.0.1: its base URL."""
    proc, base = start_serve(db)
    yield base
    proc.terminate()
    proc.wait(timeout=30)


def using(target, work):
    """``work(client)`` with an MCP client of ``target`` (a URL or an in-process server), initialized."""
    async def run():
        async with Client(target) as client:
            return await work(client)

    return asyncio.run(run())


def tool(target, name: str, **arguments):
    return using(target, lambda client: client.call_tool(name, arguments))


def error_text(result) -> str:
    assert result.is_error
    return result.content[0].text


def events(db) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT posting_id, status, note FROM application_events ORDER BY id").fetchall()


def applications(db) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT posting_id, status, notes FROM applications ORDER BY posting_id").fetchall()



@pytest.mark.slow
def test_initialize_and_the_tools(server):
    async def work(client):
        return client.server_info.name, sorted(t.name for t in (await client.list_tools()).tools)

    assert using(server + "/-/mcp", work) == ("datasette", TOOLS)


@pytest.mark.slow
def test_the_databases_and_the_canned_queries_an_agent_sees(server):
    assert tool(server + "/-/mcp", "list_databases").structured_content == {"databases": ["jobs"]}
    queries = tool(server + "/-/mcp", "list_canned_queries", database="jobs").structured_content["queries"]
    shown = {q["name"]: (q["parameters"], q["write"]) for q in queries}
    assert shown["track"] == (["posting_id", "status", "note"], True)
    assert shown["my_applications"] == (["status"], False)
    assert shown["search"] == (["q"], False)
    schema = tool(server + "/-/mcp", "get_database_schema", database="jobs").structured_content["schema"]
    assert "CREATE TABLE application_events (" in schema and "CREATE VIEW applications AS" in schema


@pytest.mark.slow
def test_search_and_read_a_posting_with_its_evidence(server):
    found = tool(server + "/-/mcp", "execute_canned_query", database="jobs", query="search", parameters={"q": "kafka"})
    assert [(r["id"], r["title"]) for r in found.structured_content["rows"]] == [(4, "后端开发工程师")]
    posting = tool(server + "/-/mcp", "get_posting", posting_id=4).structured_content
    assert (posting["id"], posting["title"], posting["city"], posting["application"]) == (4, "后端开发工程师", "北京", None)
    evaluation = posting["evaluation"]
    assert (evaluation["scorer"], evaluation["overall"], evaluation["pay"]) == ("jobcrawl-v1", 65, 81)
    assert evaluation["signals"]["pay"] == [{"key": "薪资信号", "value": "比后端开发中位数高（来源说明；库内同类样本不足）"}]
    assert {e["skill"] for e in posting["skill_evidence"]} >= {"Kafka", "Go", "Redis"}
    assert error_text(tool(server + "/-/mcp", "get_posting", posting_id=999)) == (
        "Error executing tool get_posting: No posting 999 in the database.")


@pytest.mark.slow
def test_read_only_sql_and_an_insert_refused(server, db):
    rows = tool(server + "/-/mcp", "execute_sql", database="jobs", sql="select count(*) as n from postings")
    assert rows.structured_content["rows"] == [{"n": 5}]
    before = events(db)
    refused = tool(server + "/-/mcp", "execute_sql", database="jobs",
                   sql="insert into application_events (posting_id, status, at) values (1, 'saved', 'x')")
    assert error_text(refused) == "Error executing tool execute_sql: Statement must be a SELECT"
    assert events(db) == before


@pytest.mark.slow
def test_track_through_mcp_sets_the_jobs_status(server, db):
    before = events(db)
    done = tool(server + "/-/mcp", "execute_writable_canned_query", database="jobs", query="track",
                parameters={"posting_id": 1, "status": "applied", "note": "via agent"})
    assert done.structured_content == {"database": "jobs", "query": "track", "message": "Status saved.", "rows_affected": 1}
    assert events(db)[len(before):] == [(1, "applied", "via agent")]
    assert [row for row in applications(db) if row[0] in (1, 3)] == [(1, "applied", "via agent"), (3, "applied", "via agent")]
    mine = tool(server + "/-/mcp", "execute_canned_query", database="jobs", query="my_applications")
    assert [(r["posting_id"], r["status"]) for r in mine.structured_content["rows"]] == [(1, "applied")]
    assert tool(server + "/-/mcp", "get_posting", posting_id=3).structured_content["application"]["status"] == "applied"
    wrong = tool(server + "/-/mcp", "execute_writable_canned_query", database="jobs", query="track",
                 parameters={"posting_id": 1, "status": "hired", "note": ""})
    assert error_text(wrong).startswith("Error executing tool execute_writable_canned_query: CHECK constraint failed: status IN")
    assert events(db)[len(before):] == [(1, "applied", "via agent")]


def _rpc(base: str, body: dict, headers: dict) -> tuple[int, dict, str]:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", "/-/mcp", json.dumps(body), {**HEADERS, "host": f"{host}:{port}", **headers})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read().decode()
    finally:
        conn.close()


@pytest.mark.slow
@pytest.mark.parametrize("forged, message", [
    pytest.param({"host": "evil.example"}, "Refused: the Host header 'evil.example' is not the address this server is "
                 "served at.\n", id="dns-rebinding-host"),
    pytest.param({"origin": "http://evil.example"}, "Refused: a request from another site (Origin 'http://evil.example').\n",
                 id="cross-site-origin"),
])
def test_a_forged_call_within_a_real_session_is_refused(server, db, forged, message):
    """The same tools/call is refused with a forged header and works without it."""
    status, headers, _ = _rpc(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}, {})
    session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    assert status == 200
    assert _rpc(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "execute_writable_canned_query",
        "arguments": {"database": "jobs", "query": "track", "parameters": {"posting_id": 5, "status": "saved", "note": "x"}}}}
    before = events(db)
    status, _, text = _rpc(server, call, {**session, **forged})
    assert (status, text) == (403, message)
    assert events(db) == before
    status, _, text = _rpc(server, call, session)
    assert status == 200 and json.loads(text)["result"]["structuredContent"]["message"] == "Status saved."
    assert events(db)[len(before):] == [(5, "saved", "x")]


@pytest.mark.slow
def test_off_loopback_mcp_is_read_only_unless_writes_are_allowed(db):
    for options, writable in ((("--host", "0.0.0.0"), False), (("--host", "0.0.0.0", "--allow-writes"), True)):
        proc, base = start_serve(db, *options)
        try:
            async def work(client):
                names = {t.name for t in (await client.list_tools()).tools}
                queries = (await client.call_tool("list_canned_queries", {})).structured_content["queries"]
                return "execute_writable_canned_query" in names, "track" in {q["name"] for q in queries}

            assert using(base + "/-/mcp", work) == (writable, writable)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


@pytest.mark.slow
def test_no_mcp_turns_the_endpoint_off(db):
    proc, base = start_serve(db, "--no-mcp")
    try:
        status, _, text = _rpc(base, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, {})
        assert (status, text) == (404, "The MCP endpoint is off (jobcrawl serve --no-mcp).\n")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def mcp_server(db):
    """The MCP server of an instance over ``db``, for an in-process client."""
    import datasette_mcp

    ds = make_datasette(db)
    return datasette_mcp._states[ds].server


@pytest.mark.parametrize("limits, sql, error", [
    pytest.param({}, ENDLESS_SQL, "SQL query exceeded the configured time limit.", id="endless"),
    # the SQL page's limit, not the pages' (5 s): two million rows take far more than a millisecond
    pytest.param({"SQL_TIME_LIMIT_MS": 1}, "with recursive c(x) as (select 1 union all select x + 1 from c "
                 "where x < 2000000) select count(*) from c", "SQL query exceeded the configured time limit.",
                 id="sql-page-limit"),
    pytest.param({"SQL_WAITING": 0}, "select 1", "Too many SQL queries at once; try again in a moment.", id="busy"),
])
def test_the_sql_tool_runs_under_the_sql_pages_limits(mcp_server, monkeypatch, limits, sql, error):
    import browse.limits

    for name, value in limits.items():
        monkeypatch.setattr(browse.limits, name, value)
    result = tool(mcp_server, "execute_sql", database="jobs", sql=sql)
    assert error_text(result) == "Error executing tool execute_sql: " + error


def test_the_sql_tool_is_refused_with_no_sql(db):
    import datasette_mcp

    server = datasette_mcp._states[make_datasette(db, allow_sql=False)].server
    assert error_text(tool(server, "execute_sql", database="jobs", sql="select 1")) == (
        "Error executing tool execute_sql: You do not have permission to execute SQL against database 'jobs'.")
