"""Ghost and repost signals: the rules of normalize/ghost.py on set numbers, then a corpus built through the real
ingest (tests/ghost_corpus.py) — a repost chain of 3 within 90 days and one of 2, 3 spread over 100 days, open 61
days unchanged against open 90 days and changed, reopened, 3 agencies against 2 — read back through the jobs and fit
views, the export, Datasette's facet and filter, the posting page and `watch add --no-ghost`."""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import sqlite3

import pytest

import ghost_corpus as corpus
from conftest import SEEDS, run_cli
from normalize.ghost import Signal, mass_agency, open_long, other_companies, reopened, reposted, sentence

NOW = corpus.NOW
day = corpus.day


@pytest.mark.parametrize("first,changed,closed,expected", [
    pytest.param(61, None, None, Signal("open_long", 61, 61, day(61)), id="open-61-days-unchanged"),
    pytest.param(60, None, None, Signal("open_long", 60, 60, day(60)), id="exactly-60-days"),
    pytest.param(59, None, None, None, id="59-days"),
    pytest.param(90, 30, None, None, id="changed-30-days-ago"),
    pytest.param(100, 70, None, Signal("open_long", 100, 70, day(70)), id="changed-70-days-ago"),
    pytest.param(90, None, 5, None, id="closed"),
])
def test_open_long(first, changed, closed, expected):
    assert open_long(day(first), changed and day(changed), closed and day(closed), NOW) == expected


@pytest.mark.parametrize("days,expected", [
    pytest.param({1: 80, 2: 50, 3: 20}, Signal("reposted", 3, 60, day(80), (1, 2, 3)), id="3-within-60-days"),
    pytest.param({1: 40, 2: 10}, None, id="2-postings"),
    pytest.param({1: 130, 2: 80, 3: 30}, None, id="3-over-100-days"),
    pytest.param({1: 100, 2: 10, 3: 9, 4: 5}, Signal("reposted", 3, 5, day(10), (2, 3, 4)), id="the-densest-window"),
    pytest.param({1: 90, 2: 60, 3: 0}, Signal("reposted", 3, 90, day(90), (1, 2, 3)), id="exactly-90-days"),
])
def test_reposted(days, expected):
    assert reposted((pid, day(d)) for pid, d in days.items()) == expected


@pytest.mark.parametrize("events,expected", [
    pytest.param([("closed", day(15)), ("reopened", day(3))], Signal("reopened", 1, 12, day(3)), id="once"),
    pytest.param([("closed", day(40)), ("reopened", day(30)), ("closed", day(20)), ("reopened", day(18))],
                 Signal("reopened", 2, 2, day(18)), id="twice"),
    pytest.param([("closed", day(15))], None, id="closed-only"),
])
def test_reopened(events, expected):
    assert reopened(events) == expected


@pytest.mark.parametrize("employer,members,expected", [
    pytest.param("丙芯片", [(1, "丙芯片有限公司"), (2, "锐才人力资源"), (3, "星辰猎头"), (4, "远航外包")],
                 Signal("mass_agency", 3, ids=(2, 3, 4)), id="3-agencies"),
    pytest.param("丙芯片", [(1, "丙芯片有限公司"), (2, "锐才人力资源"), (3, "星辰猎头")], None, id="2-agencies"),
    pytest.param("丙芯片", [(1, "丙芯片"), (5, "锐才人力资源服务有限公司"), (2, "锐才人力资源"), (3, "星辰猎头"), (4, "")],
                 None, id="one-agency-under-two-names-and-a-hidden-one"),
    pytest.param("", [(1, "锐才人力资源"), (2, "星辰猎头"), (3, "远航外包")], Signal("mass_agency", 3, ids=(1, 2, 3)),
                 id="no-direct-posting"),
])
def test_mass_agency(employer, members, expected):
    assert mass_agency(employer, [(pid, company, ("2026-11-29", f"k{pid}")) for pid, company in members]) == expected


@pytest.mark.parametrize("orders,expected", [
    pytest.param({9: ("2026-11-29", "b"), 4: ("2026-11-29", "c")}, 9, id="first-seen-alike-the-smaller-key"),
    pytest.param({9: ("2026-11-28", "c"), 4: ("2026-11-29", "a")}, 9, id="the-first-seen"),
    pytest.param({9: ("2026-11-29", "c"), 4: ("2026-11-29", "a")}, 4, id="not-the-id"),
])
def test_other_companies_keep_the_first_posting_of_each_by_first_seen_and_key(orders, expected):
    members = [(9, "锐才人力资源", orders[9]), (4, "锐才人力资源服务有限公司", orders[4]), (7, "甲科技有限公司", ("", ""))]
    assert other_companies("甲科技", members) == [("锐才人力资源服务", expected)]


@pytest.mark.parametrize("signal,text", [
    (Signal("open_long", 80, 80, day(80)), "Open 80 days and unchanged for 80."),
    (Signal("open_long", 100, 70, day(70)), "Open 100 days and unchanged for 70 (last changed 2026-09-22)."),
    (Signal("reposted", 3, 60, day(80), (1, 2, 3)),
     "Posted 3 times under new ids within 60 days from 2026-09-12 (#1, #2, #3)."),
    (Signal("reopened", 1, 12, day(3)), "Closed and back once, last on 2026-11-28 after 12 days closed."),
    (Signal("reopened", 2, None, day(3)), "Closed and back 2 times, last on 2026-11-28."),
    (Signal("mass_agency", 3, ids=(14, 15, 16)), "The same JD from 3 agencies (#14, #15, #16)."),
], ids=lambda v: v.code if isinstance(v, Signal) else "")
def test_sentences(signal, text):
    assert sentence(signal) == text


# --------------------------------------------------------------------------- the corpus, through the real ingest

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ghost")
    db = corpus.build(folder)
    return db, corpus.ids(db)


def query(db, sql, *params):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


EXPECTED = {
    ("A1", "open_long"): (80, 80, day(80), None),
    ("A1", "reposted"): (3, 60, day(80), ["A1", "A2", "A3"]),
    ("D", "open_long"): (61, 61, day(61), None),
    ("G", "reopened"): (1, 12, day(3), None),
    ("H0", "mass_agency"): (3, None, None, ["H1", "H2", "H3"]),
}
"""Every stored signal: B (2 postings), C (3 over 100 days; C1 closed), E (90 days, changed at NOW), F (59 days),
I0 (2 agencies), K0 (one agency) have none; the duplicates carry none of their job's."""


@pytest.mark.slow
def test_the_stored_signals(built):
    db, ids = built
    names = {pid: name for name, pid in ids.items()}
    rows = query(db, "SELECT posting_id, code, n, days, at, ids FROM ghost_signals ORDER BY posting_id, code")
    assert {(names[pid], code): (n, days, at, found and [names[i] for i in json.loads(found)])
            for pid, code, n, days, at, found in rows} == EXPECTED


@pytest.mark.slow
def test_jobs_and_fit_views_carry_the_codes(built, tmp_path):
    db, ids = built
    ghost = dict(query(db, "SELECT id, ghost FROM jobs WHERE ghost IS NOT NULL"))
    assert ghost == {ids["A1"]: '["open_long","reposted"]', ids["D"]: '["open_long"]', ids["G"]: '["reopened"]',
                     ids["H0"]: '["mass_agency"]'}
    copy = tmp_path / "fit.db"
    shutil.copy(db, copy)
    run_cli("score", "--db", str(copy), "--profile", str(SEEDS / "profile.toml"), check=True)
    fit = dict(query(copy, "SELECT id, ghost FROM fit WHERE ghost IS NOT NULL"))
    assert fit == ghost


@pytest.mark.slow
def test_export_carries_the_codes_and_the_sentences(built, tmp_path):
    db, ids = built
    out = tmp_path / "jobs.csv"
    run_cli("export", "--db", str(db), "--out", str(out), check=True)
    with out.open(encoding="utf-8-sig", newline="") as f:
        table = list(csv.DictReader(f))
    header = list(table[0])
    i = header.index("application_since")
    assert header[i + 1:i + 4] == ["ghost_signals", "likely_employer", "likely_employer_evidence"]
    assert {r["id"]: r["ghost_signals"] for r in table if r["ghost_signals"]} == {
        str(ids["A1"]): "open_long; reposted", str(ids["D"]): "open_long", str(ids["G"]): "reopened",
        str(ids["H0"]): "mass_agency"}
    lines = run_cli("export", "--db", str(db), "--out", "-", check=True).stdout.splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    assert records[ids["A1"]]["ghost_signals"] == [
        {"code": "open_long", "sentence": "Open 80 days and unchanged for 80."},
        {"code": "reposted", "sentence": f"Posted 3 times under new ids within 60 days from 2026-09-12 "
                                         f"(#{ids['A1']}, #{ids['A2']}, #{ids['A3']})."}]
    assert records[ids["A2"]]["ghost_signals"] == []  # a duplicate: its job's signals are on A1


@pytest.mark.slow
def test_datasette_facet_filter_and_posting_page(built):
    from crawler.serve.app import make_datasette

    db, ids = built
    ds = make_datasette(db)

    def get(path):
        response = asyncio.run(ds.client.get(path))
        assert response.status_code == 200, response.text[:300]
        return response

    data = get("/jobs/jobs.json?_shape=objects&_facet_array=ghost&_facet=likely_employer").json()
    counts = {name: {r["value"]: r["count"] for r in facet["results"]} for name, facet in data["facet_results"].items()}
    assert counts["ghost"] == {"open_long": 2, "reposted": 1, "reopened": 1, "mass_agency": 1}
    assert counts["likely_employer"] == {"丙芯片有限公司": 3, "丁数据有限公司": 2, "戊机器人有限公司": 2}
    rows = get("/jobs/jobs.json?_shape=array&ghost__arraycontains=open_long&_sort=id").json()
    assert [r["id"] for r in rows] == [ids["A1"], ids["D"]]
    no_signal = get("/jobs/jobs.json?_shape=array&ghost__isnull=1&_size=max&_stale=1").json()
    assert len(no_signal) == len(ids) - 4  # ?_stale=1: C1 is closed
    page = get(f"/jobs/postings/{ids['G']}").text
    assert "<code>reopened</code> Closed and back once, last on 2026-11-28 after 12 days closed." in page


@pytest.mark.slow
def test_watch_no_ghost_skips_postings_with_a_signal(built, tmp_path):
    db, _ = built
    copy = tmp_path / "watch.db"
    shutil.copy(db, copy)
    plain = run_cli("watch", "add", "all", "--db", str(copy), check=True)
    fresh = run_cli("watch", "add", "fresh", "--no-ghost", "--db", str(copy), check=True)
    # 13 open canonical postings (25 postings: 11 duplicates, C1 closed); A1, D, G and H0 have a signal
    assert plain.stdout == "watch all added (#1) → stdout; 13 postings match already: the baseline (never delivered)\n"
    assert fresh.stdout == "watch fresh added (#2) → stdout; 9 postings match already: the baseline (never delivered)\n"
    listed = run_cli("watch", "list", "--db", str(copy), check=True).stdout
    assert "fresh: no ghost signals → stdout" in listed
