"""`jobcrawl score --report`: agreement with the app's own evaluations on a corpus large enough for
market statistics — the two seeds plus 200 variants of them (bench/gen.py: company, title, salary,
city and bullets varied; each keeps its seed's source evaluation) — and, optionally, the seeds
among the Chinese CSV exports of ../shared/data/zh/."""

from __future__ import annotations

import json
import re

import pytest

from bench.gen import write_dumps
from conftest import AS_OF, SEEDS, SHARED_DATA, run_cli
from normalize.evaluation import unpack_evidence
from test_score import rows as query

pytestmark = pytest.mark.slow

SEED_FILES = sorted(str(p) for p in SEEDS.glob("*.txt"))


@pytest.fixture(scope="module")
def report_run(tmp_path_factory):
    """(database, stdout of `score --report --top 3`) for the seeds + 200 generated variants."""
    root = tmp_path_factory.mktemp("report")
    write_dumps(root / "variants", 200, per_file=100)
    db = root / "jobs.db"
    run_cli("ingest", str(root / "variants"), *SEED_FILES, "--db", str(db), "--as-of", AS_OF, check=True)
    proc = run_cli("score", "--db", str(db), "--report", "--top", "3", check=True)
    return db, proc.stdout


def test_report_figures(report_run):
    db, out = report_run
    lines = [re.sub(r"#\d+ ", "#id ", line) for line in out.splitlines()]  # ids follow the engine's order
    # the ingest scored them all; nothing has changed since (peer groups need 20 salaries: two categories have)
    assert lines[0].startswith("scored 0 postings, 202 unchanged (jobcrawl-v1) · market statistics: 434 rows, "
                               "2 salary groups with at least 20 salaries · ")
    assert lines[1:] == [
        "agreement with source over 202 postings — mean absolute error: "
        "overall 5.21 · pay 10.32 · growth 7.62 · worklife 0.0 · mission 2.85",
        "dimension scores within 10 points: 83.2%",
        "furthest apart (source → ours; overall, pay, growth, worklife, mission):",
        "  #id 月之暗面5 · 自动驾驶感知算法工程师: Σ|Δ| 45 (78→64, 85→57, 90→78, 50→50, 80→75)",
        "  #id MiniMax11 · AI算子开发工程师: Σ|Δ| 45 (78→64, 85→57, 90→78, 50→50, 80→75)",
        "  #id 初速度44 · 深度学习框架开发工程师: Σ|Δ| 45 (78→64, 85→57, 90→78, 50→50, 80→75)",
        "report stored in runs #id (stats)",
    ]


def test_report_is_stored_in_the_runs_row(report_run):
    db, _ = report_run
    (kind, status, args, stats), = query(db, "SELECT kind, status, args, stats FROM runs WHERE id = 2")
    report = json.loads(stats)["report"]
    assert (kind, status, json.loads(args)) == ("score", "ok", {"report": True, "top": 3, "profile": None})
    assert (report["pairs"], report["mae"], report["within_10"]) == (
        202, {"overall": 5.21, "pay": 10.32, "growth": 7.62, "worklife": 0.0, "mission": 2.85}, 0.8317)
    assert report["furthest"][0] | {"posting_id": None} == {
        "posting_id": None, "company": "月之暗面5", "title": "自动驾驶感知算法工程师", "distance": 45,
        "scores": {"overall": {"source": 78, "ours": 64}, "pay": {"source": 85, "ours": 57},
                   "growth": {"source": 90, "ours": 78}, "worklife": {"source": 50, "ours": 50},
                   "mission": {"source": 80, "ours": 75}}}


def test_every_posting_carries_our_evaluation_with_evidence(report_run):
    db, _ = report_run
    got = query(db, "SELECT count(*), min(overall), max(overall), sum(EXISTS (SELECT 1 FROM evaluation_evidence v"
                    " WHERE v.posting_id = e.posting_id AND v.scorer = e.scorer AND v.dimension = 'pay'))"
                    " FROM evaluations e WHERE scorer = 'jobcrawl-v1'")
    assert got == [(202, 64, 84, 202)]


def test_the_seeds_placed_among_their_peers(report_run):
    """With peers the seeds' pay comes from their percentile, not the app's 比…中位数 statement: their city's
    groups are below 20 salaries, so their categories' are used."""
    db, _ = report_run
    got = {loc[:3]: (scores, unpack_evidence({"pay": [json.loads(entry)]})["pay"][0]) for loc, scores, entry in query(
        db, "SELECT p.locator, json_array(overall, pay, growth, worklife, mission), v.entry FROM evaluations e "
            "JOIN postings p ON p.id = e.posting_id JOIN evaluation_evidence v ON v.posting_id = e.posting_id "
            "AND v.scorer = e.scorer AND v.dimension = 'pay' AND v.position = 2 "
            "WHERE e.scorer = 'jobcrawl-v1' AND p.locator LIKE '00%'")}
    assert json.loads(got["000"][0]) == [76, 76, 97, 50, 78]
    assert got["000"][1] == {"rule": "salary_percentile", "text": "43K", "monthly": 43000.0, "scope": "category",
                             "key": "人工智能", "currency": "CNY", "n": 91, "p25": 33750.0, "median": 40000.0,
                             "p75": 47500.0, "percentile": 59.89011, "points": 20.96}
    # 3.5万 is below this synthetic market's median (4万), though the app says above its own: 15 apart
    assert json.loads(got["003"][0]) == [71, 70, 83, 50, 79]
    assert (got["003"][1]["key"], got["003"][1]["percentile"]) == ("算法优化工程师", 43.333333)


@pytest.mark.shared_data
def test_the_seeds_keep_their_scores_among_the_shared_chinese_exports(tmp_path):
    """#27: every file of ../shared/data/zh imported into the seeds' database (horticulture, Java and data-analyst
    lists: 13 人工智能 salaries, below the 20 a peer group needs) leaves the seeds' scores as they are alone, within
    3 points of the app's own overall (72 and 78); it moved seed 000 from 72 to 81 before."""
    if not (SHARED_DATA / "zh").is_dir():
        pytest.skip("../shared/data is absent")
    db = tmp_path / "jobs.db"
    run_cli("ingest", *SEED_FILES, "--db", str(db), "--as-of", AS_OF, check=True)
    alone = query(db, "SELECT overall, pay, growth, worklife, mission FROM evaluations WHERE scorer = 'jobcrawl-v1' "
                      "ORDER BY posting_id")
    run_cli("ingest", str(SHARED_DATA / "zh"), "--db", str(db), "--as-of", AS_OF)  # exit 1: two files are no postings
    (active,), = query(db, "SELECT count(*) FROM postings WHERE closed_at IS NULL")
    assert active > 5000
    out = run_cli("score", "--db", str(db), "--report", check=True).stdout
    assert "agreement with source over 2 postings" in out  # only the seeds carry the app's evaluation
    seeds = query(db, "SELECT e.overall, e.pay, e.growth, e.worklife, e.mission, s.overall FROM evaluations e JOIN "
                      "evaluations s ON s.posting_id = e.posting_id AND s.scorer = 'source' WHERE e.scorer = 'jobcrawl-v1' "
                      "ORDER BY e.posting_id")
    assert [row[:5] for row in seeds] == alone == [(72, 64, 97, 50, 78), (75, 81, 83, 50, 79)]
    overall = [(row[0], row[5]) for row in seeds]  # ours, the app's
    assert overall == [(72, 72), (75, 78)] and all(abs(ours - app) <= 3 for ours, app in overall)
    assert query(db, "SELECT count(*), min(overall) >= 0, max(overall) <= 100 FROM evaluations "
                     "WHERE scorer = 'jobcrawl-v1'") == [(active, 1, 1)]
