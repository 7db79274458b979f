"""``jobcrawl serve`` and the instance it builds (crawler/serve/app.py, browse/limits.py): the normal
read-only mode while a run writes, ``--immutable``, the result cache and the facet index of one
generation of the file, warming, the limits of arbitrary SQL, ``--no-sql``, methods, the host
warning and a busy port. Datasette's own test client, and real ``jobcrawl`` processes."""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from conftest import AS_OF, ROOT, SEEDS, run_cli, start_serve
from crawler.serve.app import make_datasette, prepare
from test_browse import HOSTILE_TITLE, SEED0, build_browse_db, get

SLOW_SQL = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 50000000) select count(*) from c"
ENDLESS_SQL = "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c"


@pytest.fixture(scope="module")
def browse_db(tmp_path_factory) -> Path:
    return build_browse_db(tmp_path_factory.mktemp("serve"))


def sql_path(sql: str, **params: str) -> str:
    return "/jobs.json?" + urllib.parse.urlencode({"sql": sql, "_shape": "objects", **params})


# --------------------------------------------------------------------------- the command


def test_serve_help_names_the_modes_and_the_exit_status():
    proc = run_cli("serve", "--help", check=True)
    assert "  Example:\n    jobcrawl serve --db jobs.db\n" in proc.stdout
    for text in ("--immutable", "--no-sql", "[default: 127.0.0.1]", "Exit status: 2 for a usage error, such as a port"):
        assert text in proc.stdout, text


def test_serve_without_a_database_is_a_usage_error(tmp_path):
    proc = run_cli("serve", "--db", str(tmp_path / "none.db"))
    assert proc.returncode == 2
    assert "none.db: no such database" in proc.stderr


@pytest.mark.slow
def test_prepare_checkpoints_only_for_immutable_and_reports_a_log_another_process_holds(tmp_path):
    db = build_browse_db(tmp_path)
    reader, writer = sqlite3.connect(db), sqlite3.connect(db)
    with writer:
        writer.execute("INSERT INTO meta (key, value) VALUES ('x', '1')")
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM postings").fetchone()  # holds a snapshot: the log cannot be emptied
    with writer:
        writer.execute("UPDATE meta SET value = '2' WHERE key = 'x'")
    log = Path(f"{db}-wal")
    assert prepare(db) is True and log.stat().st_size > 0  # the normal way: nothing to checkpoint
    assert prepare(db, immutable=True) is False
    reader.rollback()
    assert prepare(db, immutable=True) is True and log.stat().st_size == 0


@pytest.mark.slow
@pytest.mark.parametrize("options, mutable", [((), True), (("--immutable",), False)], ids=["read-only", "immutable"])
def test_serve_opens_the_file_read_only_by_default_and_immutable_on_request(browse_db, options, mutable):
    proc, base = start_serve(browse_db, *options)
    try:
        with urllib.request.urlopen(base + "/-/databases.json", timeout=5) as r:
            assert [(d["name"], d["is_mutable"]) for d in json.load(r)] == [("jobs", mutable)]
        with urllib.request.urlopen(base + "/jobs/jobs.json?_shape=array&_search=%E7%AE%97%E5%AD%90", timeout=10) as r:
            assert sorted(x["id"] for x in json.load(r)) == [1, 2, 3, 5]
        with urllib.request.urlopen(base + "/-/settings.json", timeout=5) as r:
            assert json.load(r)["suggest_facets"] is False
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    err = proc.stderr.read()
    assert f"serving {browse_db} at {base}/jobs/jobs" in err and "warning" not in err


def _dumps(folder: Path, files: int, pages: int) -> int:
    """``files`` text dumps of ``pages`` app pages each (seed 000 under a company of its own); the postings."""
    folder.mkdir(parents=True)
    body = SEED0[SEED0.index("\n"):]
    for f in range(files):
        (folder / f"batch_{f:03d}.txt").write_text("\n".join(f"并发测试公司{f:03d}{p:03d}{body}" for p in range(pages)) + "\n",
                                                     encoding="utf-8")
    return files * pages


def _fetch(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.slow
def test_serve_while_an_ingest_writes(tmp_path):
    """A real ingest (300 postings: three batches, then dedupe and scoring; the writer's own process reads the
    files, as workers add nothing the writes depend on) writes the database a
    real `jobcrawl serve` serves: every page answers 200 (no "database disk image is malformed"),
    the count seen never goes back, and once the ingest is done the pages show what it stored."""
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    total = 2 + _dumps(tmp_path / "in", 30, 10)
    proc, base = start_serve(db)
    ingest = subprocess.Popen([sys.executable, "-m", "crawler.cli", "ingest", str(tmp_path / "in"), "--db", str(db),
                               "--as-of", AS_OF, "--batch-size", "100", "--workers", "1"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    paths = ["/jobs/postings.json?_size=1&_shape=objects", "/jobs/jobs", "/jobs/jobs?_search=%E5%B9%B6%E5%8F%91",
             "/jobs/jobs?city=%E6%9D%AD%E5%B7%9E", "/jobs/postings/1", "/jobs"]
    statuses: dict[int, int] = {}
    counts: list[int] = []
    try:
        deadline = time.monotonic() + 600
        while ingest.poll() is None and time.monotonic() < deadline:
            for path in paths:
                status, body = _fetch(base + path)
                statuses[status] = statuses.get(status, 0) + 1
                assert status == 200, (path, status, body[:300])
                if path.startswith("/jobs/postings.json"):
                    counts.append(json.loads(body)["filtered_table_rows_count"])
        out, err = ingest.communicate(timeout=60)
        assert ingest.returncode == 0, err
        status, body = _fetch(base + "/jobs/postings.json?_size=1&_shape=objects")
        assert status == 200 and json.loads(body)["filtered_table_rows_count"] == total
        status, body = _fetch(base + "/jobs/jobs.json?_shape=objects&_search=%E5%B9%B6%E5%8F%91%E6%B5%8B%E8%AF%95%E5%85%AC%E5%8F%B8029009")
        assert [r["company"] for r in json.loads(body)["rows"]] == ["并发测试公司029009"]
        status, body = _fetch(base + "/jobs/jobs.json?_shape=objects")
        cities = {f["value"]: f["count"] for f in json.loads(body)["facet_results"]["city"]["results"]}
    finally:
        if ingest.poll() is None:
            ingest.kill()
        proc.terminate()
        proc.wait(timeout=30)
    with sqlite3.connect(db) as conn:
        assert cities == dict(conn.execute("SELECT city, count(*) FROM postings GROUP BY city"))
    assert counts == sorted(counts) and counts[0] == 2 and len(counts) >= 2, counts
    assert list(statuses) == [200]


# --------------------------------------------------------------------------- one generation of the file


def test_results_are_computed_once_while_the_file_is_unchanged(browse_db, sqlite_runs):
    db = make_datasette(browse_db).get_database("jobs")
    sql = "select id, title from postings where city = :city order by id"
    first = asyncio.run(db.execute(sql, {"city": "苏州"}))
    assert [tuple(r) for r in first.rows] == [(2, "模型训练优化开发工程师"), (5, HOSTILE_TITLE)]
    first.rows.clear()  # a caller's copy: the cached rows stay whole
    again = asyncio.run(db.execute(sql, {"city": "苏州"}))
    assert [tuple(r) for r in again.rows] == [(2, "模型训练优化开发工程师"), (5, HOSTILE_TITLE)]
    assert sqlite_runs == [sql]
    asyncio.run(db.execute(sql, {"city": "杭州"}))
    assert sqlite_runs == [sql, sql]


def test_a_timed_out_query_fails_at_once_until_given_more_time(browse_db, sqlite_runs):
    from datasette.database import QueryInterrupted

    db = make_datasette(browse_db).get_database("jobs")
    for _ in range(2):
        with pytest.raises(QueryInterrupted):
            asyncio.run(db.execute(SLOW_SQL, custom_time_limit=20))
    assert sqlite_runs == [SLOW_SQL]  # the second one was not run again
    with pytest.raises(QueryInterrupted):
        asyncio.run(db.execute(SLOW_SQL, custom_time_limit=40))
    assert sqlite_runs == [SLOW_SQL, SLOW_SQL]  # more time: tried again


def test_a_facet_index_loaded_during_a_request_does_not_break_its_page(tmp_path, monkeypatch):
    """A request that found no current facet index, whose page ids then came from one loaded meanwhile (the
    file had changed; the index is reloaded in the background): the page is served, its rows Datasette's."""
    import browse.filters as filters

    db = build_browse_db(tmp_path)
    ds = make_datasette(db)
    path = "/jobs/jobs.json?_shape=objects&city=杭州"
    expected = [r["id"] for r in get(ds, path).json()["rows"]]
    loaded = filters._index
    monkeypatch.setattr(filters, "_index", lambda datasette, database: None)  # none yet for listing_filters …
    real_own_ids = filters.own_ids

    async def own_ids_from_a_loaded_index(datasette, database, request):  # … one by the time own_ids looks
        monkeypatch.setattr(filters, "_index", loaded)
        try:
            return await real_own_ids(datasette, database, request)
        finally:
            monkeypatch.setattr(filters, "_index", lambda datasette, database: None)

    monkeypatch.setattr(filters, "own_ids", own_ids_from_a_loaded_index)
    response = get(ds, path + "&_size=100")  # another URL: not an answer of the result cache
    assert response.status_code == 200, response.text[:500]
    assert [r["id"] for r in response.json()["rows"]] == expected and expected


@pytest.mark.parametrize("immutable", [False, True], ids=["read-only", "immutable"])
def test_a_commit_by_another_process_is_seen_by_the_next_page(tmp_path, monkeypatch, immutable):
    """Read-only: after a commit the cached results are dropped, the facets come from Datasette's
    queries until the facet index is loaded again (here at once: QUIET_SECONDS 0), then from it.
    Immutable (a file nobody writes): the results and the index stay as they were."""
    import crawler.serve.app as serve_module

    monkeypatch.setattr(serve_module, "QUIET_SECONDS", 0)
    db = build_browse_db(tmp_path)
    ds = make_datasette(db, immutable=immutable)
    state = ds.get_database("jobs").state
    listing = "/jobs/jobs.json?_shape=objects&_facet_size=3"

    def seen():
        data = get(ds, listing).json()
        return {r["id"]: r["title"] for r in data["rows"]}[4], data["facet_results"]["city"]["results"][0]["value"]

    assert seen() == ("后端开发工程师", "苏州")
    index = state.index
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE postings SET title = '支付系统工程师', city = '北京' WHERE id IN (1, 3, 4)")
    if immutable:
        assert seen() == ("后端开发工程师", "苏州") and state.index is index
        return
    assert seen() == ("支付系统工程师", "北京")
    assert ds.get_database("jobs").facet_index is None or state.index is not index
    state._reloading.join(timeout=60)
    assert state.index is not index and ds.get_database("jobs").facet_index is state.index
    assert seen() == ("支付系统工程师", "北京")


def test_a_result_of_an_older_generation_is_not_kept():
    from datasette.database import Results

    from crawler.serve.app import ResultCache

    cache = ResultCache()
    cache.put(("a",), Results([(1,)], False, None), generation=0)
    assert cache.get(("a",), generation=0).rows == [(1,)]
    assert cache.get(("a",), generation=1) is None  # a newer generation empties the cache
    cache.put(("b",), Results([(2,)], False, None), generation=0)  # computed before the commit: not kept
    assert cache.get(("b",), generation=1) is None
    cache.put_timeout(("c",), 100, generation=1)
    assert cache.timed_out(("c",), 50, generation=1) and not cache.timed_out(("c",), 50, generation=2)


def test_warm_computes_the_listing_and_the_charts(browse_db):
    from crawler.serve.app import warm

    ds = make_datasette(browse_db)
    done = asyncio.run(warm(ds))
    assert [(path, status) for path, status, _ in done] == [
        ("/jobs/jobs", 200), ("/jobs/postings", 200)] + [("/jobs.json", 200)] * 6  # the market's 3 charts, the trends' 3
    assert len(ds.get_database("jobs").state.cache.results) > 8


def test_warming_in_the_background_gives_the_front_page_more_time(browse_db, monkeypatch, capsys):
    """A query slower than the visitors' limit completes in the warming thread and is then served
    from the shared cache."""
    import browse.limits
    import crawler.serve.app as serve_module

    monkeypatch.setattr(browse.limits, "SQL_TIME_LIMIT_MS", serve_module.WARM_TIME_LIMIT_MS)
    sql = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000) select count(*) as n from c"
    path = "/jobs.json?" + urllib.parse.urlencode({"sql": sql, "_shape": "array"})
    ds = make_datasette(browse_db, settings={"sql_time_limit_ms": 20, "facet_time_limit_ms": 20})
    assert get(ds, path).status_code == 400  # interrupted
    monkeypatch.setattr(serve_module, "WARM_PAGES", (path,))
    serve_module.warm_in_background(browse_db, ds).join(timeout=120)
    assert "cache warmed in" in capsys.readouterr().err
    assert get(ds, path).json() == [{"n": 2000000}]


# --------------------------------------------------------------------------- limits


@pytest.fixture(scope="module")
def ds(browse_db):
    return make_datasette(browse_db)


@pytest.mark.parametrize("params, limit", [
    pytest.param({}, "1000", id="arbitrary-sql-gets-1-s"),
    pytest.param({"_timelimit": "50"}, "50", id="a-lower-limit-asked-for"),
    pytest.param({"_timelimit": "60000"}, "1000", id="never-more-than-1-s"),
    pytest.param({"_timelimit": "x"}, "1000", id="not-a-number"),
])
def test_arbitrary_sql_runs_under_a_short_time_limit(ds, params, limit):
    data = get(ds, sql_path("select 1 as one", **params)).json()
    assert data["rows"] == [{"one": 1}] and data["query"]["params"]["_timelimit"] == limit


def test_charts_and_pages_keep_the_page_time_limit(ds):
    chart = ds.plugin_config("datasette-dashboards")["market"]["charts"]["top-skills"]["query"]
    data = get(ds, sql_path(chart, min_postings="1")).json()
    assert "_timelimit" not in data["query"]["params"] and len(data["rows"]) == 25
    assert get(ds, "/jobs/top_skills.json?min_postings=1&_shape=objects").json()["query"]["params"].get("_timelimit") is None


def test_endless_sql_is_interrupted(ds):
    response = get(ds, sql_path(ENDLESS_SQL))
    assert response.status_code == 400 and "SQL query took too long" in response.text


@pytest.mark.slow
def test_arbitrary_sql_runs_one_at_a_time_and_leaves_threads_for_the_pages(browse_db):
    """Four endless queries at once, then a listing page: the page is answered while the queries
    still hold their turn (each is interrupted after 1 s, one after the other). Before the limits,
    three of them held all three SQL threads for the whole 5 s and the page waited for them."""
    ds = make_datasette(browse_db)
    order: list[str] = []

    async def request(name: str, path: str, delay: float = 0.0):
        await asyncio.sleep(delay)
        response = await ds.client.get(path)
        order.append(f"{name} {response.status_code}")

    async def main():
        await asyncio.gather(*(request(f"sql{i}", sql_path(ENDLESS_SQL.replace("select 1", f"select {i}"))) for i in range(4)),
                             request("page", "/jobs/jobs?city=%E8%8B%8F%E5%B7%9E", delay=0.3))

    asyncio.run(main())
    assert order == ["page 200", "sql0 400", "sql1 400", "sql2 400", "sql3 400"]


def test_sql_beyond_the_queue_is_answered_503(browse_db, monkeypatch):
    import browse.limits

    monkeypatch.setattr(browse.limits, "SQL_WAITING", 2)
    monkeypatch.setattr(browse.limits, "SQL_TIME_LIMIT_MS", 200)
    ds = make_datasette(browse_db)

    async def main():
        return await asyncio.gather(*(ds.client.get(sql_path(ENDLESS_SQL.replace("select 1", f"select {i}"))) for i in range(5)))

    responses = asyncio.run(main())
    assert sorted(r.status_code for r in responses) == [400, 400, 400, 503, 503]  # one running, two waiting
    busy = next(r for r in responses if r.status_code == 503)
    assert busy.headers["retry-after"] == "2" and "Too many SQL queries at once" in busy.text


def test_no_sql_refuses_arbitrary_sql_but_not_the_pages_queries_or_charts(browse_db):
    ds = make_datasette(browse_db, allow_sql=False)
    assert get(ds, sql_path("select 1")).status_code == 403
    assert get(ds, "/jobs?sql=select+1").status_code == 403
    assert "<textarea" not in get(ds, "/jobs").text
    assert get(ds, "/jobs/best_postings?city=%E8%8B%8F%E5%B7%9E").status_code == 200
    assert get(ds, "/jobs/jobs?_search=CUDA").status_code == 200
    assert get(ds, "/-/dashboards/market?min_postings=1").status_code == 200
    chart = ds.plugin_config("datasette-dashboards")["market"]["charts"]["salary-by-city"]["query"]
    assert get(ds, sql_path(chart, min_postings="1")).status_code == 200
    assert get(ds, sql_path(chart + " ")).status_code == 403  # not the chart's query
    assert "<textarea" in get(make_datasette(browse_db), "/jobs").text


@pytest.mark.parametrize("path", ["/jobs/best_postings", "/jobs/best_postings?city=x", "/jobs/postings", "/jobs/postings/1",
                                  "/jobs", "/jobs?sql=select+1", "/jobs/jobs"])
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_methods_other_than_get_are_answered_405(ds, path, method):
    response = asyncio.run(ds.client.request(method, path, data={"city": "x"}))
    assert response.status_code == 405 and response.headers["allow"] == "GET, HEAD, OPTIONS"


@pytest.mark.slow
def test_listening_beyond_this_machine_prints_a_warning(browse_db):
    proc, base = start_serve(browse_db, "--host", "0.0.0.0")
    proc.terminate()
    proc.wait(timeout=30)
    err = proc.stderr.read()
    port = base.rsplit(":", 1)[1]
    assert (f"warning: listening on 0.0.0.0: anyone who can reach this machine on port {port} can read the whole "
            "database and run SQL on it (up to 1 s a query); --no-sql refuses SQL") in err
    proc, base = start_serve(browse_db, "--host", "0.0.0.0", "--no-sql")
    proc.terminate()
    proc.wait(timeout=30)
    assert "can read the whole database\n" in proc.stderr.read()


@pytest.mark.slow
def test_a_busy_port_is_one_clear_error(browse_db):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run_cli("serve", "--db", str(browse_db), "--port", str(port), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == (f"jobcrawl serve: cannot listen on 127.0.0.1:{port}: Address already in use "
                           "(another server on that port? choose another with --port)\n")


def test_hosts_that_only_this_machine_reaches():
    from browse.access import is_local

    assert [is_local(h) for h in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.1.1", "0.0.0.0", "::", "192.168.1.5",
                                  "example.org")] == [True, True, True, True, True, False, False, False, False]

