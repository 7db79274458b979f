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
from pathlib import Path

import pytest

from conftest import AS_OF, FIXTURES, SEEDS, run_cli
from crawler.db.closing import close_missing
from crawler.db.schema import open_db
from crawler.serve import make_datasette, prepare
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
