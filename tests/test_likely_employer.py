"""The employer behind an agency's or hidden posting: the rules of normalize/ghost.py on set texts, then the corpus of
tests/ghost_corpus.py built through the real ingest: agency copies of a direct posting (through its duplicate
cluster), a hidden posting of the same city (by JD similarity), one of another city and one too different (none),
a company that is an agency only by the user's words."""

from __future__ import annotations

import json
import shutil
import sqlite3

import numpy as np
import pytest

import ghost_corpus as corpus
from conftest import run_cli
from normalize.dedupe import shingles
from normalize.ghost import (
    Employer, employer_evidence, is_agency, is_hidden, jaccard, jd_shingles, likely_employer, parse_agency_words,
)

ROBOT = jd_shingles("\n".join(corpus.JD["robot"]))
CLOSE = jd_shingles("\n".join(corpus.ROBOT_CLOSE))
FAR = jd_shingles("\n".join(corpus.ROBOT_FAR))


@pytest.mark.parametrize("company,extra,agency", [
    ("锐才人力资源服务有限公司", (), True),
    ("星辰猎头有限公司", (), True),
    ("远航外包服务有限公司", (), True),
    ("华盛劳务派遣有限公司", (), True),
    ("星云人才", (), False),
    ("星云人才", ("星云人才",), True),
    ("Randstad China", ("randstad",), True),
    ("戊机器人有限公司", ("星云人才",), False),
    (None, (), False),
])
def test_is_agency(company, extra, agency):
    assert is_agency(company, extra) is agency


@pytest.mark.parametrize("company,hidden", [
    (None, True), ("", True), ("  ", True), ("企业未公开", True), ("（企业未公开）", True), ("戊机器人", False),
])
def test_is_hidden(company, hidden):
    assert is_hidden(company) is hidden


def test_the_users_agency_words():
    assert parse_agency_words("# agencies\n星云人才\n\n  Randstad  # a staffing firm\n") == ("星云人才", "randstad")


def test_jaccard_of_the_corpus_texts():
    """The hashed shingles give the Jaccard of the shingles as text."""
    assert (jaccard(ROBOT, ROBOT), jaccard(ROBOT, CLOSE), jaccard(ROBOT, FAR)) == (1.0, 0.7463, 0.5467)
    robot, close, far = (shingles("\n".join(lines)) for lines in (corpus.JD["robot"], corpus.ROBOT_CLOSE,
                                                                   corpus.ROBOT_FAR))
    assert (len(robot & close), len(robot | close), len(robot & far), len(robot | far)) == (50, 67, 41, 75)
    assert (round(50 / 67, 4), round(41 / 75, 4)) == (0.7463, 0.5467)


@pytest.mark.parametrize("in_cluster,in_city,expected", [
    pytest.param([], [(20, "戊机器人", CLOSE)], Employer("戊机器人", 20, 0.7463, "city"), id="city-above-0.6"),
    pytest.param([], [(20, "戊机器人", FAR)], None, id="city-below-0.6"),
    pytest.param([(13, "丙芯片", FAR)], [], Employer("丙芯片", 13, 0.5467, "cluster"), id="cluster-any-similarity"),
    pytest.param([(13, "丙芯片", CLOSE)], [(20, "戊机器人", CLOSE)], Employer("丙芯片", 13, 0.7463, "cluster"),
                 id="a-tie-goes-to-the-cluster"),
    pytest.param([(13, "丙芯片", FAR)], [(20, "戊机器人", ROBOT)], Employer("戊机器人", 20, 1.0, "city"),
                 id="the-most-similar"),
    pytest.param([], [(21, "乙", ROBOT), (20, "甲", ROBOT)], Employer("乙", 21, 1.0, "city"), id="then-the-first-given"),
    pytest.param([(13, "丙芯片", np.array([], dtype=np.uint32))], [], None, id="nothing-in-common"),
])
def test_likely_employer(in_cluster, in_city, expected):
    assert likely_employer(ROBOT, in_cluster, in_city) == expected


def test_evidence_line():
    assert employer_evidence(Employer("戊机器人", 20, 0.7463, "city")) == "#20, similarity 0.7463 (same city)"


# --------------------------------------------------------------------------- the corpus, through the real ingest


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("employer")
    db = corpus.build(folder)
    return db, corpus.ids(db)


EXPECTED = {
    "H1": ("丙芯片有限公司", "H0", 0.8684, "cluster"),  # an agency's copy with one more line
    "H2": ("丙芯片有限公司", "H0", 1.0, "cluster"),
    "H3": ("丙芯片有限公司", "H0", 1.0, "cluster"),
    "I1": ("丁数据有限公司", "I0", 1.0, "cluster"),
    "I2": ("丁数据有限公司", "I0", 1.0, "cluster"),
    "J1": ("戊机器人有限公司", "K0", 0.7463, "city"),  # hidden, same city, one line reworded
    "L": ("戊机器人有限公司", "K0", 1.0, "cluster"),  # an agency by the user's words
}
"""Every likely employer: J2 (hidden, another city), J3 (hidden, same city, 0.5467) and M (an agency with no direct
posting of its job) have none; neither has a direct posting."""


@pytest.mark.slow
def test_the_stored_employers(built):
    db, ids = built
    names = {pid: name for name, pid in ids.items()}
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT posting_id, company, evidence_posting_id, similarity, rule FROM likely_employers"
                        ).fetchall()
    conn.close()
    assert {names[pid]: (company, names[evidence], similarity, rule)
            for pid, company, evidence, similarity, rule in rows} == EXPECTED


@pytest.mark.slow
def test_without_the_users_words_the_company_is_not_an_agency(built, tmp_path):
    from crawler.signals.step import refresh_signals
    from crawler.store.schema import open_db

    db, ids = built
    copy = tmp_path / "jobs.db"
    shutil.copy(db, copy)
    database = open_db(copy)
    try:
        counts = refresh_signals(database, words=())
        found = {pid for (pid,) in database.execute("SELECT posting_id FROM likely_employers")}
    finally:
        database.close()
    assert counts["likely_employers"] == 6
    assert found == {ids[name] for name in EXPECTED if name != "L"}


@pytest.mark.slow
def test_an_unreadable_agency_file_is_a_usage_error(built, tmp_path):
    db, _ = built
    proc = run_cli("signals", "--db", str(db), env={"JOBCRAWL_AGENCIES": str(tmp_path / "missing.txt")})
    assert proc.returncode == 2
    assert f"{tmp_path / 'missing.txt'}: " in proc.stderr


@pytest.mark.slow
def test_export_and_posting_page(built, tmp_path):
    import asyncio
    import csv

    from crawler.serve.app import make_datasette

    db, ids = built
    lines = run_cli("export", "--db", str(db), "--out", "-", check=True).stdout.splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    j1, j2 = records[ids["J1"]], records[ids["J2"]]
    assert (j1["likely_employer"], j1["likely_employer_evidence"]) == (
        "戊机器人有限公司", {"posting_id": ids["K0"], "similarity": 0.7463, "rule": "city"})
    assert (j2["likely_employer"], j2["likely_employer_evidence"]) == (None, None)
    out = tmp_path / "jobs.csv"
    run_cli("export", "--db", str(db), "--out", str(out), check=True)
    with out.open(encoding="utf-8-sig", newline="") as f:
        flat = {int(r["id"]): r for r in csv.DictReader(f)}
    assert (flat[ids["H1"]]["likely_employer"], flat[ids["H1"]]["likely_employer_evidence"]) == (
        "丙芯片有限公司", f"#{ids['H0']}, similarity 0.8684 (same cluster)")
    assert (flat[ids["J2"]]["likely_employer"], flat[ids["J2"]]["likely_employer_evidence"]) == ("", "")
    page = asyncio.run(make_datasette(db).client.get(f"/jobs/postings/{ids['J1']}")).text
    assert (f'<strong>戊机器人有限公司</strong> <span class="raw">like <a href="/jobs/postings/{ids["K0"]}">posting '
            f'{ids["K0"]}</a>: JD similarity 0.7463, same city</span>') in page
