"""Writes of ``jobcrawl serve``: the writable canned query ``track`` (the posting page's form, Datasette's CSRF
token), ``my_applications``, where writes are allowed (loopback, ``--allow-writes``, never immutable) and the
Host/Origin checks of every request that may write or reaches ``/-/mcp`` (browse/access.py, browse/limits.py).
Datasette's own test client over one database the module's tests write in turn; real ``jobcrawl`` processes for
the options."""

from __future__ import annotations

import asyncio
import re
import socket
import sqlite3
import urllib.error
import urllib.parse
import urllib.request

import pytest

from browse.access import Access
from conftest import run_cli, start_serve
from crawler.serve.app import make_datasette
from test_browse import build_browse_db, get

AT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
STATUSES = ["saved", "applied", "interviewing", "offer", "accepted", "rejected", "withdrawn"]
CHECK_FAILED = ("CHECK constraint failed: status IN ('saved', 'applied', 'interviewing', 'offer', 'accepted', "
                "'rejected',\n                                           'withdrawn')")
OFF_LOOPBACK = "Writes are off: the server listens on 0.0.0.0, not on this machine only (--allow-writes allows them)."
IMMUTABLE = "Writes are off: the database is served immutable (--immutable, or a file that cannot be written)."


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """The browse database (postings 1 and 3 are one job: duplicate cluster 1)."""
    return build_browse_db(tmp_path_factory.mktemp("writes"))


@pytest.fixture(scope="module")
def ds(db):
    return make_datasette(db)


def events(db) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT posting_id, status, note, at FROM application_events ORDER BY id").fetchall()
    assert all(AT.fullmatch(at) for *_, at in rows)
    return [row[:3] for row in rows]


def applications(db) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT posting_id, status, notes FROM applications ORDER BY posting_id").fetchall()


def form(ds, posting_id: int) -> tuple[str, str]:
    """The posting page's CSRF cookie and the token its form holds."""
    page = get(ds, f"/jobs/postings/{posting_id}")
    return page.cookies["ds_csrftoken"], re.search(r'name="csrftoken" value="([^"]+)"', page.text).group(1)


def post(ds, path: str, data: dict, headers: dict | None = None):
    return asyncio.run(ds.client.post(path, data=data, headers=headers or {}))


def track(ds, posting_id: int, status: str, note: str = "", **headers):
    cookie, token = form(ds, posting_id)
    return post(ds, "/jobs/track", {"csrftoken": token, "posting_id": str(posting_id), "status": status, "note": note},
                {"cookie": f"ds_csrftoken={cookie}", **headers})


def test_the_posting_page_offers_the_form_with_its_token_and_says_untracked(ds):
    page = get(ds, "/jobs/postings/2").text
    assert "Not tracked." in page
    assert '<form class="track" action="/jobs/track" method="post">' in page
    assert '<input type="hidden" name="posting_id" value="2">' in page
    assert re.findall(r"<option(?: selected)?>(\w+)</option>", page) == STATUSES
    assert re.search(r'name="csrftoken" value="[^"]+"', page)


def test_a_form_post_sets_the_status_of_the_job_and_my_applications_lists_it_once(ds, db):
    before = events(db)
    assert get(ds, "/jobs/my_applications.json?_shape=array").json() == []  # a cached result, dropped by the write
    response = track(ds, 3, "applied", "sent the CV ")
    assert (response.status_code, response.headers["location"]) == (302, "/jobs/my_applications")
    assert events(db)[len(before):] == [(3, "applied", "sent the CV")]
    assert applications(db) == [(1, "applied", "sent the CV"), (3, "applied", "sent the CV")]
    rows = get(ds, "/jobs/my_applications.json?_shape=array").json()
    assert [(r["posting_id"], r["title"], r["company"], r["status"], r["notes"]) for r in rows] == [
        (3, "AI算子开发工程师", "星云人才", "applied", "sent the CV")]
    assert AT.fullmatch(rows[0]["since"]) and rows[0]["since"] == rows[0]["updated"]
    page = asyncio.run(ds.client.get("/jobs/my_applications", headers={"cookie": response.headers["set-cookie"]})).text
    assert "Status saved." in page and '<a href="/jobs/postings/3">AI算子开发工程师</a>' in page
    member = get(ds, "/jobs/postings/1").text  # the other posting of the job
    assert re.search(r"<strong>applied</strong> since " + AT.pattern, member)
    assert "<option selected>applied</option>" in member


def test_a_later_status_and_note_of_the_same_job_keep_one_row_and_every_event(ds, db):
    track(ds, 1, "interviewing", "first call")
    assert applications(db)[:2] == [(1, "interviewing", "sent the CV\nfirst call"), (3, "interviewing", "sent the CV\nfirst call")]
    rows = get(ds, "/jobs/my_applications.json?_shape=array").json()
    assert [(r["posting_id"], r["status"]) for r in rows] == [(1, "interviewing")]  # the posting tracked last
    assert get(ds, "/jobs/my_applications.json?_shape=array&status=applied").json() == []
    assert '<p class="application-notes" style="white-space: pre-line">sent the CV\nfirst call</p>' in get(
        ds, "/jobs/postings/3").text


@pytest.mark.parametrize("data, message", [
    pytest.param({"posting_id": "2", "status": "hired", "note": ""}, CHECK_FAILED, id="unknown-status"),
    pytest.param({"posting_id": "999", "status": "saved", "note": ""},
                 "NOT NULL constraint failed: application_events.posting_id", id="unknown-posting"),
    pytest.param({"posting_id": "2", "status": "saved", "note": "长" * 2001}, "a note holds at most 2,000 characters",
                 id="note-too-long"),
])
def test_an_invalid_status_or_posting_is_datasettes_error_and_stores_nothing(ds, db, data, message):
    before = events(db)
    response = post(ds, "/jobs/track", data, {"accept": "application/json"})
    assert response.json() == {"ok": False, "message": message, "redirect": None}
    assert events(db) == before


FORGED = [
    pytest.param({"host": "evil.example"}, "Refused: the Host header 'evil.example' is not the address this server is "
                 "served at.", id="dns-rebinding-host"),
    pytest.param({"origin": "http://evil.example"}, "Refused: a request from another site (Origin 'http://evil.example').",
                 id="cross-site-origin"),
    pytest.param({"origin": "null"}, "Refused: a request from another site (Origin 'null').", id="opaque-origin"),
]


@pytest.mark.parametrize("headers, message", FORGED)
@pytest.mark.parametrize("path", ["/jobs/track", "/-/mcp"])
def test_a_forged_request_is_refused_and_stores_nothing(ds, db, path, headers, message):
    before = events(db)
    if path == "/jobs/track":
        response = track(ds, 2, "saved", "forged", **headers)
    else:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "execute_writable_canned_query",
            "arguments": {"database": "jobs", "query": "track", "parameters": {"posting_id": 2, "status": "saved"}}}}
        response = asyncio.run(ds.client.request("POST", path, json=call, headers={
            "accept": "application/json, text/event-stream", **headers}))
    assert (response.status_code, response.text) == (403, message + "\n")
    assert events(db) == before


def test_a_form_post_without_the_right_token_is_refused_by_the_csrf_check(ds, db):
    before = events(db)
    cookie, _ = form(ds, 2)
    response = post(ds, "/jobs/track", {"csrftoken": "forged", "posting_id": "2", "status": "saved", "note": ""},
                    {"cookie": f"ds_csrftoken={cookie}"})
    assert response.status_code == 403 and "form-urlencoded POST field did not match cookie" in response.text
    assert events(db) == before


@pytest.mark.parametrize("options, refused", [
    pytest.param({"access": Access.of("0.0.0.0", None, immutable=False, allow_writes=False, mcp=True)}, OFF_LOOPBACK,
                 id="off-loopback"),
    pytest.param({"immutable": True}, IMMUTABLE, id="immutable"),
    pytest.param({"immutable": True, "access": Access.of("127.0.0.1", None, immutable=False, allow_writes=True, mcp=True)},
                 IMMUTABLE, id="immutable-even-if-allowed"),
])
def test_where_writes_are_off_the_form_is_gone_and_a_post_is_refused(db, options, refused):
    before = events(db)
    ds = make_datasette(db, **options)
    page = get(ds, "/jobs/postings/2").text
    assert f'<p class="raw">{refused}</p>' in page and "<form class=\"track\"" not in page
    assert get(ds, "/jobs/track").status_code == 404
    assert "track" not in [query["name"] for query in get(ds, "/jobs.json").json()["queries"]]
    response = post(ds, "/jobs/track", {"posting_id": "2", "status": "saved", "note": ""})
    assert (response.status_code, response.text) == (403, refused + "\n")
    assert events(db) == before


def test_allow_writes_off_loopback_accepts_them_from_the_served_address(db):
    ds = make_datasette(db, access=Access.of("0.0.0.0", None, immutable=False, allow_writes=True, mcp=True))
    before = events(db)
    assert track(ds, 2, "saved").status_code == 302
    assert events(db)[len(before):] == [(2, "saved", None)]


@pytest.mark.parametrize("method, path, status, text", [
    pytest.param("POST", "/jobs/my_applications", 405, "Method not allowed: this server only reads (GET).\n", id="read-query"),
    pytest.param("POST", "/jobs/application_events", 405, "Method not allowed: this server only reads (GET).\n", id="table"),
    pytest.param("PUT", "/jobs/track", 405, "Method not allowed: this server only reads (GET).\n", id="put-query"),
    pytest.param("PUT", "/-/mcp", 405, "Method not allowed.\n", id="put-mcp"),
])
def test_only_the_writable_query_and_mcp_take_other_methods(ds, method, path, status, text):
    response = asyncio.run(ds.client.request(method, path, data={"posting_id": "2"}))
    assert (response.status_code, response.text) == (status, text)


def test_mcp_off_is_not_found(db):
    ds = make_datasette(db, access=Access(mcp=False))
    for method in ("GET", "POST"):
        response = asyncio.run(ds.client.request(method, "/-/mcp"))
        assert (response.status_code, response.text) == (404, "The MCP endpoint is off (jobcrawl serve --no-mcp).\n")


HOST = socket.gethostname()


@pytest.mark.parametrize("served, port, host, origin, refused", [
    ("127.0.0.1", 8001, "127.0.0.1:8001", None, False),
    ("127.0.0.1", 8001, "localhost:8001", "http://localhost:8001", False),
    ("127.0.0.1", 8001, "[::1]:8001", "https://[::1]:8001", False),
    ("127.0.0.1", 8001, "LOCALHOST:8001", None, False),
    ("127.0.0.1", 8001, "127.0.0.1:8002", None, True),
    ("127.0.0.1", 8001, "127.0.0.1", None, True),
    ("127.0.0.1", 8001, "evil.example:8001", None, True),
    ("127.0.0.1", 8001, "192.168.1.5:8001", None, True),
    ("127.0.0.1", 8001, "", None, True),
    ("127.0.0.1", 8001, "127.0.0.1:8001", "http://localhost:8001", True),
    ("127.0.0.1", 8001, "127.0.0.1:8001", "http://127.0.0.1:8002", True),
    ("127.0.0.1", 8001, "127.0.0.1:8001", "file://", True),
    ("127.0.0.1", 8001, "127.0.0.1:8001", "null", True),
    ("127.0.0.1", None, "localhost", "http://localhost", False),
    ("0.0.0.0", 8001, "192.168.1.5:8001", "http://192.168.1.5:8001", False),
    ("0.0.0.0", 8001, f"{HOST}:8001", None, False),
    ("0.0.0.0", 8001, "evil.example:8001", None, True),
    ("jobs.lan", 80, "jobs.lan", "http://jobs.lan", False),
    ("jobs.lan", 80, "evil.example", None, True),
], ids=lambda value: repr(value))
def test_the_host_and_origin_a_request_must_have(served, port, host, origin, refused):
    headers = {b"host": host.encode(), **({b"origin": origin.encode()} if origin else {})}
    assert (Access(host=served, port=port).forged(headers) is not None) is refused


@pytest.mark.parametrize("origin, fetched_from, refused", [
    ("null", "same-origin", None),  # a form of the server's own page under its no-referrer policy
    ("null", "cross-site", "Refused: a request from another site (Sec-Fetch-Site cross-site)."),
    ("null", "none", "Refused: a request from another site (Origin 'null')."),
    ("http://127.0.0.1:8001", "same-site", "Refused: a request from another site (Sec-Fetch-Site same-site)."),
    ("http://127.0.0.1:8001", "same-origin", None),
    ("http://evil.example", "same-origin", "Refused: a request from another site (Origin 'http://evil.example')."),
], ids=lambda value: repr(value))
def test_what_the_browser_says_of_the_requests_site(origin, fetched_from, refused):
    headers = {b"host": b"127.0.0.1:8001", b"origin": origin.encode(), b"sec-fetch-site": fetched_from.encode()}
    assert Access(port=8001).forged(headers) == refused


def test_allow_writes_with_immutable_is_a_usage_error(db):
    proc = run_cli("serve", "--db", str(db), "--immutable", "--allow-writes", "--port", "0")
    assert proc.returncode == 2
    assert proc.stderr == "jobcrawl serve: --allow-writes with --immutable: an immutable file cannot be written\n"


def test_serve_help_names_the_write_and_mcp_options():
    text = run_cli("serve", "--help", check=True).stdout
    for part in ("--allow-writes", "--no-mcp", "/jobs/track", "/jobs/my_applications", "/-/mcp", "get_posting",
                 "or --allow-writes with --immutable."):
        assert part in text, part


def _post_track(base: str, posting_id: int) -> tuple[int, str]:
    body = urllib.parse.urlencode({"posting_id": posting_id, "status": "saved", "note": "from curl"}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(base + "/jobs/track", data=body), timeout=30) as r:
            return r.status, r.url
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.slow
def test_serve_off_loopback_refuses_writes_unless_allowed(db):
    before = events(db)
    proc, base = start_serve(db, "--host", "0.0.0.0")
    try:
        assert _post_track(base, 4) == (403, OFF_LOOPBACK + "\n")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert events(db) == before
    proc, base = start_serve(db, "--host", "0.0.0.0", "--allow-writes", "--no-sql")
    try:
        assert _post_track(base, 4) == (200, base + "/jobs/my_applications")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "warning: --allow-writes: they can also set application statuses\n" in proc.stderr.read()
    assert events(db)[len(before):] == [(4, "saved", "from curl")]
