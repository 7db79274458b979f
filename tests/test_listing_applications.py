"""The jobs listing and application statuses: the jobs view's ``application_status`` (the status of the posting's
job, on every member of its duplicate cluster), its facet, and the listing hiding the postings of rejected and
withdrawn jobs by default with a toggle (``?_rejected=1``, the note of browse/hiding.py), in HTML, JSON and CSV and
on a search, served by Datasette's own client over a real SQLite file.

The database: the browse test's inputs (test_browse.build_browse_db: 1 and 3 are one job, the agency's copy of seed
000; 2, 4 and 5 alone), and application events written directly: job {1, 3} applied on 3 then rejected on 1, 2
saved, 4 rejected then applied again, 5 withdrawn; and a fit evaluation of each posting (the fit view hides the same).
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from pathlib import Path

import pytest

from crawler.serve.app import make_datasette, prepare
from test_browse import build_browse_db, get
from test_browse_alerts import data

pytestmark = pytest.mark.slow

EVENTS = [  # posting, status, note, at
    (3, "applied", "sent the CV", "2026-11-20T09:00:00+00:00"),
    (1, "rejected", None, "2026-11-25T09:00:00+00:00"),
    (2, "saved", None, "2026-11-21T09:00:00+00:00"),
    (4, "rejected", None, "2026-11-22T09:00:00+00:00"),
    (4, "applied", "second try", "2026-11-26T09:00:00+00:00"),
    (5, "withdrawn", None, "2026-11-23T09:00:00+00:00"),
]
STATUS = {1: "rejected", 2: "saved", 3: "rejected", 4: "applied", 5: "withdrawn"}


@pytest.fixture(scope="module")
def tracked_db(tmp_path_factory) -> Path:
    db = build_browse_db(tmp_path_factory.mktemp("listing-applications"))
    with sqlite3.connect(db) as conn:
        conn.executemany("INSERT INTO application_events (posting_id, status, note, at) VALUES (?, ?, ?, ?)", EVENTS)
        conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, overall) VALUES (?, 'fit:me', ?)",
                         [(i, 50 + i) for i in STATUS])
    conn.close()
    assert prepare(db, immutable=True)
    return db


@pytest.fixture(scope="module")
def ds(tracked_db):
    return make_datasette(tracked_db)


def facet(page: dict) -> list[tuple[str, int]]:
    return [(r["value"], r["count"]) for r in page["facet_results"]["application_status"]["results"]]


def test_the_database(tracked_db):
    with sqlite3.connect(tracked_db) as conn:
        assert conn.execute("SELECT posting_id, cluster_id FROM dedupe_signatures ORDER BY posting_id").fetchall() == [
            (1, 1), (2, 2), (3, 1), (4, 3), (5, 4)]
        assert conn.execute("SELECT posting_id, status FROM applications ORDER BY posting_id").fetchall() == sorted(
            STATUS.items())
    conn.close()


def test_the_jobs_view_shows_the_status_of_the_job_on_every_member(tracked_db):
    with sqlite3.connect(tracked_db) as conn:
        assert dict(conn.execute("SELECT id, application_status FROM jobs")) == STATUS
        conn.execute("INSERT INTO postings (key, source, title, content_hash_stored, first_seen_stored, last_seen_stored)"
                     " VALUES ('x', 'textdump', 'untracked', 'h', '2026-11-29', '2026-11-29')")
        assert conn.execute("SELECT application_status FROM jobs WHERE title = 'untracked'").fetchall() == [(None,)]
        conn.rollback()
    conn.close()


@pytest.mark.parametrize("path, shown", [
    pytest.param("/jobs/jobs", [2, 4], id="default-hides-rejected-and-withdrawn"),
    pytest.param("/jobs/jobs?_rejected=1", [1, 2, 3, 4, 5], id="the-toggle-shows-them"),
    pytest.param("/jobs/jobs?_search=算子", [2], id="a-search"),
    pytest.param("/jobs/jobs?_search=算子&_rejected=1", [1, 2, 3, 5], id="a-search-with-the-toggle"),
    pytest.param("/jobs/jobs?_search=工程师", [2, 4], id="a-broader-search"),
    pytest.param("/jobs/jobs?application_status=applied", [4], id="the-facets-filter"),
    pytest.param("/jobs/jobs?application_status=rejected", [], id="a-hidden-status-filtered"),
    pytest.param("/jobs/jobs?application_status=rejected&_rejected=1", [1, 3], id="the-same-shown"),
    pytest.param("/jobs/jobs?city=苏州", [2], id="a-city"),
    pytest.param("/jobs/postings", [1, 2, 3, 4, 5], id="the-postings-table-hides-nothing"),
    pytest.param("/jobs/fit", [2, 4], id="the-fit-view-hides-them-too"),
    pytest.param("/jobs/fit?_rejected=1", [1, 2, 3, 4, 5], id="the-fit-view-with-the-toggle"),
])
def test_the_listing_hides_rejected_and_withdrawn_jobs_until_shown(ds, path, shown):
    page = data(ds, path)
    assert sorted(r["id"] for r in page["rows"]) == shown
    assert page["filtered_table_rows_count"] == len(shown)


@pytest.mark.parametrize("path, counts", [
    pytest.param("/jobs/jobs", [("applied", 1), ("saved", 1)], id="default"),
    pytest.param("/jobs/jobs?_rejected=1", [("rejected", 2), ("applied", 1), ("saved", 1), ("withdrawn", 1)],
                 id="with-the-toggle"),
    pytest.param("/jobs/jobs?_rejected=1&city=苏州", [("saved", 1), ("withdrawn", 1)], id="and-a-city"),
    pytest.param("/jobs/jobs?_search=工程师&_rejected=1", [("rejected", 2), ("applied", 1), ("saved", 1),
                                                          ("withdrawn", 1)], id="a-search"),
])
def test_the_status_facet_counts_each_status(ds, path, counts):
    assert facet(data(ds, path)) == counts


@pytest.mark.parametrize("path", ["/jobs/jobs", "/jobs/jobs?_rejected=1", "/jobs/jobs?application_status=applied",
                                  "/jobs/jobs?_search=工程师", "/jobs/jobs?_rejected=1&application_status=rejected",
                                  "/jobs/jobs?_rejected=1&_stale=1&_blocked=1&city=苏州"])
def test_the_index_counts_what_datasette_counts(ds, tracked_db, path):
    """The served instance counts the facets and the rows from its FacetIndex (the status of every member of a
    tracked job, the hidden rows as a mask); an instance without the index runs Datasette's own queries."""
    def seen(instance):
        page = data(instance, path)
        return (page["filtered_table_rows_count"], sorted(r["id"] for r in page["rows"]),
                {name: [(r["value"], r["count"]) for r in f["results"]] for name, f in page["facet_results"].items()})

    assert seen(ds) == seen(make_datasette(tracked_db, indexed=False))


@pytest.mark.parametrize("query, shown", [
    pytest.param("", {2: "saved", 4: "applied"}, id="default"),
    pytest.param("?_rejected=1", STATUS, id="with-the-toggle"),
    pytest.param("?_search=算子&_rejected=1", {1: "rejected", 2: "saved", 3: "rejected", 5: "withdrawn"},
                 id="a-search-with-the-toggle"),
])
def test_the_csv_follows_the_same_rule(ds, query, shown):
    response = get(ds, "/jobs/jobs.csv" + query + ("&" if query else "?") + "_stream=on")
    assert response.status_code == 200, response.text[:500]
    assert {int(r["id"]): r["application_status"] for r in csv.DictReader(io.StringIO(response.text))} == shown


def test_the_json_carries_the_status(ds):
    assert {r["id"]: r["application_status"] for r in data(ds, "/jobs/jobs?_rejected=1")["rows"]} == STATUS


def _note(html: str) -> str:
    return " ".join(re.search(r'<p class="jobcrawl-hidden">(.*?)</p>', html, re.S).group(1).split())


@pytest.mark.parametrize("path, note", [
    pytest.param("/jobs/jobs", 'Hidden: 3 postings of jobs whose application was rejected or withdrawn · '
                 '<a href="/jobs/jobs?_blocked=1&amp;_stale=1&amp;_rejected=1">show them</a>', id="hidden"),
    pytest.param("/jobs/jobs?_search=算子", 'Hidden: 3 postings of jobs whose application was rejected or withdrawn · '
                 '<a href="/jobs/jobs?_search=%E7%AE%97%E5%AD%90&amp;_blocked=1&amp;_stale=1&amp;_rejected=1">show them'
                 '</a>', id="a-search-keeps-its-terms"),
    pytest.param("/jobs/jobs?_rejected=1", 'Showing postings of jobs whose application was rejected or withdrawn · '
                 '<a href="/jobs/jobs">hide them</a>', id="shown"),
    pytest.param("/jobs/jobs?_blocked=1&_stale=1&_rejected=1", 'Showing closed, stale and blocked postings and '
                 'postings of jobs whose application was rejected or withdrawn · <a href="/jobs/jobs">hide them</a>',
                 id="everything-shown"),
])
def test_the_note_says_what_is_hidden_and_links_the_toggle(ds, path, note):
    response = get(ds, path)
    assert response.status_code == 200
    assert _note(response.text) == note


def test_the_listing_page_has_the_status_facet_menu(ds):
    html = get(ds, "/jobs/jobs").text
    menu = re.search(r'<details name="listing-tools" class="facet-info[^"]*" id="facet-application_status[^"]*"'
                     r' data-column="application_status">(.*?)</details>', html, re.S).group(1)
    assert re.findall(r'<li><a href="([^"]+)">([^<]+)</a> (\d+)</li>', menu) == [
        ("http://localhost/jobs/jobs?application_status=applied", "applied", "1"),
        ("http://localhost/jobs/jobs?application_status=saved", "saved", "1")]
