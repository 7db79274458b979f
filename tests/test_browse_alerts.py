"""Datasette parts of issue #29 with Datasette's own client: the fit view (sortable, its reasons, JobSpy's
board as a facet), blocked and stale postings hidden by default with a toggle (the fit view and the jobs
listing), the posting page's history and blocklist rule, each watch's matches.

The database: the browse test's inputs (test_browse.build_browse_db: the two seeds, a staffing agency's
copy of seed 000 by 星云人才, a backend posting, a hostile one), then through the real CLI: the backend
posting's salary changed (version 2), JobSpy's CSV imported, fit scored for the example profile (whose
blocklist names 星云人才), a watch delivering to stdout, and the backend posting closed by its listing.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from conftest import AS_OF, FIXTURES, SEEDS, run_cli
from crawler.store.closing import close_missing
from crawler.store.schema import open_db
from crawler.serve.app import make_datasette, prepare
from test_browse import build_browse_db, get

pytestmark = pytest.mark.slow


def build_alerts_db(workdir: Path) -> Path:
    db = build_browse_db(workdir)
    backend = workdir / "in" / "backend.txt"
    backend.write_text(backend.read_text(encoding="utf-8").replace("\n20-30K\n", "\n25-35K\n"), encoding="utf-8")
    assert run_cli("ingest", str(workdir / "in"), "--db", str(db), "--as-of", AS_OF).returncode == 1  # empty.txt
    run_cli("ingest", str(FIXTURES / "tabular" / "jobspy.csv"), "--preset", "jobspy", "--db", str(db),
            "--as-of", AS_OF, check=True)
    run_cli("score", "--profile", str(SEEDS / "profile.toml"), "--db", str(db), check=True)
    config = workdir / "alerts.toml"
    config.write_text("", encoding="utf-8")
    run_cli("watch", "add", "cuda", "--search", "CUDA", "--include-existing", "--db", str(db), "--config", str(config),
            check=True)
    run_cli("watch", "deliver", "--db", str(db), "--config", str(config), check=True)
    database = open_db(db)
    key = database.execute("SELECT key FROM postings WHERE id = 4").fetchone()[0]
    close_missing(database, {"textdump:backend": [key]})
    close_missing(database, {"textdump:backend": []})
    database.close()
    assert prepare(db, immutable=True)  # the log checkpointed into the file: nobody else has it open
    return db


@pytest.fixture(scope="module")
def alerts_db(tmp_path_factory) -> Path:
    return build_alerts_db(tmp_path_factory.mktemp("browse-alerts"))


@pytest.fixture(scope="module")
def ds(alerts_db):
    return make_datasette(alerts_db)


def data(ds, path: str) -> dict:
    base, _, query = path.partition("?")
    response = get(ds, f"{base}.json?_shape=objects" + (f"&{query}" if query else ""))
    assert response.status_code == 200, response.text[:500]
    return response.json()


def test_the_database(alerts_db):
    import sqlite3

    with sqlite3.connect(alerts_db) as conn:
        assert conn.execute("SELECT id, company, closed_at IS NOT NULL, version FROM postings ORDER BY id").fetchall() == [
            (1, "吉利汽车", 0, 1), (2, "初速度", 0, 1), (3, "星云人才", 0, 1), (4, "地平线", 1, 2),
            (5, "恶意<img src=x onerror=\"window.__jobcrawl_pwned=2\">公司", 0, 1), (6, "Example AI Labs", 0, 1),
            (7, "Northwind Robotics", 0, 1), (8, "Example Compute Pvt Ltd", 0, 1)]
        assert conn.execute("SELECT posting_id, rule FROM posting_blocks").fetchall() == [(3, "company:星云人才")]


def test_the_fit_view_sorts_by_fit_and_hides_blocked_and_stale_postings(ds):
    page = data(ds, "/jobs/fit")
    # a view has no primary key to break ties: 2 and 5 (68) come in either order
    assert sorted((-r["fit"], r["id"]) for r in page["rows"]) == [(-87, 1), (-68, 2), (-68, 5), (-55, 8), (-54, 7), (-41, 6)]
    assert [r["fit"] for r in page["rows"]] == [87, 68, 68, 55, 54, 41]
    assert page["human_description_en"] == "where not blocked and seen in the last 30 days and open sorted by fit descending"
    everything = data(ds, "/jobs/fit?_blocked=1&_stale=1")
    assert sorted(r["id"] for r in everything["rows"]) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert {r["id"]: r["blocked_by"] for r in everything["rows"]}[3] == "company:星云人才"
    by_fit_asc = data(ds, "/jobs/fit?_sort=fit")
    assert [r["fit"] for r in by_fit_asc["rows"]] == sorted(r["fit"] for r in page["rows"])


def test_the_fit_view_links_each_posting(ds):
    assert '<td class="col-id type-int"><a href="/jobs/postings/1">1</a></td>' in get(ds, "/jobs/fit?id=1").text


def test_the_fit_view_carries_the_parts_and_their_reasons(ds):
    [row] = data(ds, "/jobs/fit?id=1")["rows"]
    assert (row["profile"], row["fit_skills"], row["fit_salary"], row["fit_city"], row["fit_mode"]) == (
        "cuda-infra", 70, 100, 100, 100)
    assert (row["why_salary"], row["why_city"], row["why_mode"]) == ("月薪4.3万，达到底线4万", "杭州在意向城市内", "仅现场办公可接受")
    assert row["why_skills"].startswith("岗位主要技能12项，已掌握6项")


def test_jobspy_imports_have_their_board_as_a_facet(ds):
    facet = data(ds, "/jobs/fit")["facet_results"]["site"]["results"]
    assert [(f["value"], f["count"]) for f in facet] == [("indeed", 1), ("linkedin", 1), ("naukri", 1)]
    assert [r["id"] for r in data(ds, "/jobs/fit?site=linkedin")["rows"]] == [7]


def test_the_jobs_listing_hides_blocked_and_stale_postings_with_a_toggle(ds):
    page = data(ds, "/jobs/jobs")
    assert sorted(r["id"] for r in page["rows"]) == [1, 2, 5, 6, 7, 8]
    assert page["filtered_table_rows_count"] == 6
    cities = {f["value"]: f["count"] for f in page["facet_results"]["city"]["results"]}
    assert "上海" not in cities and "北京" not in cities  # the agency copy (blocked) and the backend posting (closed)
    assert sorted(r["id"] for r in data(ds, "/jobs/jobs?_stale=1&_blocked=1")["rows"]) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert sorted(r["id"] for r in data(ds, "/jobs/jobs?_blocked=1")["rows"]) == [1, 2, 3, 5, 6, 7, 8]
    html = get(ds, "/jobs/jobs").text
    note = re.search(r'<p class="jobcrawl-hidden">(.*?)</p>', html, re.S).group(1)
    assert " ".join(note.split()) == (
        'Hidden: 1 posting closed or not seen since 2026-10-30 (30 days before the last crawl) and 1 blocked by your '
        'blocklist · <a href="/jobs/jobs?_blocked=1&amp;_stale=1">show them</a>')
    shown = get(ds, "/jobs/jobs?_blocked=1&_stale=1").text
    assert 'Showing closed, stale and blocked postings · <a href="/jobs/jobs">hide them</a>' in shown


@pytest.mark.parametrize("path", ["/jobs/jobs", "/jobs/jobs?_search=算子", "/jobs/jobs?_skill=CUDA", "/jobs/jobs?city=苏州",
                                  "/jobs/jobs?_stale=1&_search=算子", "/jobs/jobs?_blocked=1", "/jobs/jobs?_stale_days=1"])
def test_hidden_rows_leave_the_facets_of_the_index_equal_to_datasettes(ds, alerts_db, path):
    """The instance counts facets from its FacetIndex, which holds every posting: with rows hidden it masks them
    out of the page's ids (browse/hiding.py hidden_mask), and counts what an instance without the index counts."""
    def facets(instance):  # the index's skills values link to _skill, Datasette's to skills__arraycontains
        return {name: [(r["value"], r["count"]) for r in facet["results"]]
                for name, facet in data(instance, path)["facet_results"].items()}

    writable = make_datasette(alerts_db, indexed=False)
    assert facets(ds) == facets(writable)
    assert data(ds, path)["filtered_table_rows_count"] == data(writable, path)["filtered_table_rows_count"]


@pytest.fixture(scope="module")
def hidden_employer_db(alerts_db, tmp_path_factory) -> Path:
    """The alerts database with posting 6's employer hidden (company null: （企业未公开） in the jobs view)."""
    db = tmp_path_factory.mktemp("hidden-employer") / "jobs.db"
    shutil.copy(alerts_db, db)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE postings SET company = NULL WHERE id = 6")
    conn.close()
    assert prepare(db, immutable=True)
    return db


def _page(instance, path: str) -> tuple:
    """What a listing page shows: its count, its facets (values and counts, in order), its rows in order of score
    (ties in score fall as the query plan reads them) and the rows themselves, by id."""
    page = data(instance, path)
    facets = {name: [(r["value"], r["count"]) for r in facet["results"]] for name, facet in page["facet_results"].items()}
    return (page["filtered_table_rows_count"], facets, [r["score"] for r in page["rows"]],
            sorted(page["rows"], key=lambda r: r["id"]))


@pytest.mark.parametrize("path", [
    pytest.param("/jobs/jobs?city=苏州", id="city"),
    pytest.param("/jobs/jobs?city__exact=苏州", id="city-exact"),
    pytest.param("/jobs/jobs?city=火星", id="a-city-the-index-does-not-hold"),
    pytest.param("/jobs/jobs?city=", id="an-empty-value"),
    pytest.param("/jobs/jobs?city=上海", id="a-city-of-a-blocked-posting-only"),
    pytest.param("/jobs/jobs?city=上海&_blocked=1", id="the-same-with-blocked-postings-shown"),
    pytest.param("/jobs/jobs?city=北京", id="a-city-of-a-closed-posting-only"),
    pytest.param("/jobs/jobs?city=北京&_stale=1", id="the-same-with-stale-postings-shown"),
    pytest.param("/jobs/jobs?work_mode=仅现场办公&_stale_days=1", id="another-stale-line"),
    pytest.param("/jobs/jobs?city=苏州&city=杭州", id="two-values-of-a-column"),
    pytest.param("/jobs/jobs?score_level=中等&work_mode__exact=仅现场办公", id="two-columns"),
    pytest.param("/jobs/jobs?company=（企业未公开）", id="the-hidden-employer-as-the-view-shows-it"),
    pytest.param("/jobs/postings?company=（企业未公开）", id="the-postings-table-has-no-such-company"),
    pytest.param("/jobs/postings?category=人工智能&_stale=1", id="postings-table-category"),
    pytest.param("/jobs/jobs?work_mode=仅现场办公&_search=算子", id="and-a-search"),
    pytest.param("/jobs/jobs?category=人工智能&_search=算子&_blocked=1&_stale=1", id="and-a-search-everything-shown"),
    pytest.param("/jobs/jobs?city=苏州&_skill=CUDA", id="and-a-skill"),
    pytest.param("/jobs/jobs?city=苏州&_search=CUDA&_skill=C%2B%2B&_sort=title", id="search-skill-sorted-by-title"),
    pytest.param("/jobs/jobs?city=苏州&_facet=seniority", id="and-a-facet-of-datasettes-own"),
    pytest.param("/jobs/jobs?nosuch=1", id="an-unknown-column"),
    pytest.param("/jobs/jobs?city__not=苏州", id="not-an-equality"),
    pytest.param("/jobs/jobs?seniority=普通员工/个人贡献者", id="a-column-the-index-does-not-hold"),
    pytest.param("/jobs/jobs", id="the-listing"),
    pytest.param("/jobs/postings", id="the-postings-table"),
])
def test_equality_filters_on_the_index_give_datasettes_rows_count_and_facets(hidden_employer_db, path):
    """?column=value and ?column__exact=value on the index's columns select the page's ids in memory (with the
    hiding, search and skills); an instance without the index runs Datasette's queries: the same page. The jobs
    view shows a hidden employer as （企业未公开）, a value of its company facet and filter (not of postings')."""
    theirs = _page(make_datasette(hidden_employer_db, indexed=False), path)
    assert _page(make_datasette(hidden_employer_db), path) == theirs
    if path == "/jobs/jobs":
        assert ("（企业未公开）", 1) in theirs[1]["company"]
    if path.startswith("/jobs/jobs?company"):
        assert [r["id"] for r in theirs[3]] == [6]


@pytest.mark.parametrize("path, sought", [
    pytest.param("/jobs/jobs?company=吉利汽车", "[company] = :jobcrawl_company0)", id="a-company"),
    pytest.param("/jobs/jobs?company=（企业未公开）&_stale=1", "[company] = :jobcrawl_company0 or [company] is null)",
                 id="the-hidden-employer"),
    pytest.param("/jobs/jobs?city=杭州&company__exact=吉利汽车", "[company] = :jobcrawl_company1)", id="and-a-city"),
    pytest.param("/jobs/jobs?company=火星公司", "[company] = :jobcrawl_company0)", id="a-company-no-posting-has"),
    pytest.param("/jobs/postings?company=吉利汽车", None, id="the-postings-tables-own-clause-has-the-index"),
    pytest.param("/jobs/jobs?city=杭州", None, id="a-column-the-view-does-not-compute"),
])
def test_the_jobs_view_seeks_a_company_of_few_postings_through_its_index(hidden_employer_db, monkeypatch, path, sought):
    """The jobs view's company is coalesce(company, '（企业未公开）'), which idx_postings_company does not answer: for a
    company of few postings (one in PAGE_SCAN_RATIO; here every company) the page seeks them through the index
    instead of walking the score index to its end. The same page as Datasette's."""
    import browse.filters

    monkeypatch.setattr(browse.filters, "PAGE_SCAN_RATIO", 1)
    ours = make_datasette(hidden_employer_db)
    assert _page(ours, path) == _page(make_datasette(hidden_employer_db, indexed=False), path)
    query = data(ours, path)["query"]
    assert (f"id in (select id from postings where {sought}" in query["sql"]) if sought else "jobcrawl_company" not in query["sql"]
    conn = sqlite3.connect(hidden_employer_db)
    for name in ("jobcrawl_chosen", "jobcrawl_search"):
        conn.create_function(name, 2, lambda *args: 1)
    plan = " | ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {query['sql']}", query["params"]))
    conn.close()
    assert ("idx_postings_company" in plan) == (sought is not None or "postings?" in path), plan


def test_the_hidden_employer_facet_of_the_index():
    """FacetIndex.column: what a table shows for a null (the jobs view's coalesce), the postings table's nulls stay
    null; a value that is also a company's name is one value."""
    import numpy as np

    from browse.facets import Coded, FacetIndex

    present = np.array([False, True, True, True, True])
    company = Coded(["（企业未公开）", "A"], np.array([-1, 1, -1, 0, -1], dtype=np.int32))
    index = FacetIndex({"company": company}, None, present)
    every = np.array([1, 2, 3, 4])
    assert index.counts("company", every, 5, table="jobs") == [("（企业未公开）", 3), ("A", 1)]
    assert index.counts("company", every, 5, table="postings") == [("A", 1), ("（企业未公开）", 1)]
    assert np.flatnonzero(index.column("jobs", "company").equal("（企业未公开）")).tolist() == [2, 3, 4]
    assert np.flatnonzero(index.column("postings", "company").equal("（企业未公开）")).tolist() == [3]
    assert not index.column("jobs", "company").equal("B").any()


@pytest.mark.parametrize("path, read, read_without", [
    pytest.param("/jobs/jobs?score_level=中等", [5, 2, 6, 1, 7], [1, 2, 4, 5, 6, 7], id="equality-and-hiding"),
    pytest.param("/jobs/jobs?_search=CUDA", [5, 2, 6, 1, 7, 8], [1, 2, 4, 5, 6, 7, 8], id="search-and-hiding"),
    pytest.param("/jobs/jobs?_skill=Kubernetes&score_level=中等", [], [4], id="skill-and-equality"),
])
def test_the_page_reads_the_rows_it_shows_alone(ds, alerts_db, path, read, read_without):
    """The page's SQL checks jobcrawl_chosen(:jobcrawl_chosen, id) first, which the index holds, so SQLite reads no
    row of a posting that the page does not show (here: a term on ``title``, which no index holds, sees only them),
    and checks a search in memory on the rows it shows alone.
    Run elsewhere (the SQL editor, another process) the token is unknown: the term is true and the other
    clauses decide alone: the same rows."""
    from browse.filters import CHOSEN_FUNCTION, chosen_function
    from crawler.store.fts import fts_query

    page = data(ds, path)
    sql, params = page["query"]["sql"], page["query"]["params"]
    assert f"{CHOSEN_FUNCTION}(:jobcrawl_chosen, id)" in sql
    shown = [r["id"] for r in page["rows"]]
    seen = []

    def probe(posting_id, title):
        seen.append(posting_id)
        return 1

    conn = sqlite3.connect(alerts_db)
    conn.create_function("escape_fts", 1, fts_query)
    searched = []  # the search is checked by the token too; the page checks it on the rows it shows alone
    conn.create_function("jobcrawl_search", 2, lambda search, posting_id: searched.append(posting_id) or 1)
    conn.create_function("jobcrawl_probe", 2, probe)
    conn.create_function(CHOSEN_FUNCTION, 2, chosen_function(ds.get_database("jobs")))
    probed = sql.replace(" where ", " where jobcrawl_probe(id, title) and ", 1)
    assert [r[0] for r in conn.execute(probed, params)] == shown and sorted(seen) == sorted(shown) == sorted(read)
    assert sorted(searched) == (sorted(shown) if "jobcrawl_search" in sql else [])
    conn.create_function(CHOSEN_FUNCTION, 2, chosen_function(make_datasette(alerts_db, indexed=False).get_database("jobs")))
    seen.clear()
    assert sorted(r[0] for r in conn.execute(probed, params)) == sorted(shown)
    assert sorted(seen) == sorted(read_without)  # without the token: rows read and then left out
    conn.close()


@pytest.mark.parametrize("indexed, computed", [pytest.param(True, 2, id="kept-by-the-index"),
                                                pytest.param(False, 4, id="without-an-index-every-page")])
def test_what_a_listing_hides_is_counted_once_per_toggle_while_the_file_is_unchanged(alerts_db, monkeypatch,
                                                                                     indexed, computed):
    """The counts of the hidden note (stale: a count over every posting) are the file's: kept by its facet index."""
    import browse.hiding

    calls = []
    real = browse.hiding._what_is_hidden
    monkeypatch.setattr(browse.hiding, "_what_is_hidden", lambda *args: calls.append(args[1:]) or real(*args))
    instance = make_datasette(alerts_db, indexed=indexed)
    for path in ("/jobs/jobs?city=苏州", "/jobs/jobs?city=杭州", "/jobs/jobs?_stale=1", "/jobs/jobs?_stale=1&city=苏州"):
        assert data(instance, path)["rows"]
    assert len(calls) == computed and set(calls) == {(30, False, False, False), (30, False, True, False)}


def test_the_posting_page_shows_its_history(ds):
    html = get(ds, "/jobs/postings/4").text
    section = re.search(r'<section class="posting-history">(.*?)</section>', html, re.S).group(1)
    text = " ".join(re.sub(r"<[^>]+>", " ", section).split())
    closed = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d) : 已关闭 closed$", text).group(1)  # closed now, by the listing
    assert text == ("变更记录 · History 2026-11-29 04:00 v1: 首次出现 first seen "
                    f"2026-11-29 04:00 v2: 薪资 salary: 20–30K → 25–35K {closed} : 已关闭 closed")
    assert '<section class="posting-history">' not in get(ds, "/jobs/postings/1").text  # one version, never closed


def test_the_posting_page_names_the_rule_that_blocks_it(ds):
    html = get(ds, "/jobs/postings/3").text
    section = re.search(r'<section class="posting-blocked">(.*?)</section>', html, re.S).group(1)
    assert " ".join(re.sub(r"<[^>]+>", " ", section).split()) == (
        "已屏蔽 · Blocked company:星云人才 profile cuda-infra · company: 星云人才")


def test_watch_matches_query(ds):
    rows = data(ds, "/jobs/watch_matches?watch=cuda")["rows"]
    assert [(r["watch"], r["id"], r["deliveries"]) for r in rows] == [
        ("cuda", 1, "stdout sent"), ("cuda", 2, "stdout sent"), ("cuda", 5, "stdout sent"), ("cuda", 6, "stdout sent"),
        ("cuda", 7, "stdout sent"), ("cuda", 8, "stdout sent")]  # 3 is blocked, 4 (backend) has no CUDA


@pytest.mark.parametrize("path", ["/jobs/fit", "/jobs/watches", "/jobs/watch_matches", "/jobs/watch_deliveries",
                                  "/jobs/posting_blocks", "/jobs/posting_events", "/jobs/watch_matches?watch=cuda"])
def test_pages_render(ds, path):
    assert get(ds, path).status_code == 200
