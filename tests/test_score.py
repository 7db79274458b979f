"""`jobcrawl score` end to end: our evaluation of both seeds on a fixed corpus (the two seeds), market
statistics, evidence in the export, re-scoring, closed postings, personal fit, errors."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from conftest import AS_OF, SEEDS, export_records, run_cli
from crawler.store.rows import STORED_AS

pytestmark = pytest.mark.slow

SEED_FILES = sorted(str(p) for p in SEEDS.glob("*.txt"))
DIMS = ("overall", "pay", "growth", "worklife", "mission")
LEVELS = ("overall_level", "pay_level", "growth_level", "worklife_level", "mission_level")


@pytest.fixture(scope="module")
def scored_db(tmp_path_factory):
    """Both seeds ingested and scored once (read-only use; tests that write copy it)."""
    path = tmp_path_factory.mktemp("scored") / "jobs.db"
    run_cli("ingest", *SEED_FILES, "--db", str(path), "--as-of", AS_OF, check=True)
    run_cli("score", "--db", str(path), check=True)
    return path


@pytest.fixture
def copy_db(scored_db, tmp_path):
    path = tmp_path / "jobs.db"
    shutil.copy(scored_db, path)
    return path


def rows(db, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def evaluations(db, scorer: str) -> dict[str, tuple]:
    cols = ", ".join(DIMS + LEVELS)
    return {r[0][:3]: r[1:] for r in rows(db, f"SELECT p.locator, {cols} FROM evaluations e JOIN postings p "
                                             "ON p.id = e.posting_id WHERE e.scorer = ? ORDER BY p.id", scorer)}


def test_seeds_exact_scores_next_to_the_apps_own(scored_db):
    assert evaluations(scored_db, "jobcrawl-v1") == {
        "000": (72, 64, 97, 50, 78, "中等", "中等", "较高", "较低", "中等"),
        "003": (75, 81, 83, 50, 79, "中等", "较高", "较高", "较低", "中等"),
    }
    assert evaluations(scored_db, "source") == {
        "000": (72, 70, 90, 50, 75, "中等", "中等", "较高", "较低", "中等"),
        "003": (78, 85, 90, 50, 80, "中等", "较高", "较高", "较低", "较高"),
    }
    ours, source = evaluations(scored_db, "jobcrawl-v1"), evaluations(scored_db, "source")
    assert all(abs(a - b) <= 10 for seed in ours for a, b in zip(ours[seed][:5], source[seed][:5]))


def test_signals_use_the_apps_keys(scored_db):
    import sqlite_utils

    from crawler.store.read import export_record

    db = sqlite_utils.Database(scored_db)
    cards = [export_record(db, pid) for pid in (1, 2)]
    keys = [(d, s["key"]) for d, signals in cards[0]["evaluation"]["signals"].items() for s in signals]
    assert keys == [("pay", "薪资信号"), ("growth", "技术前沿"), ("growth", "技术栈"), ("growth", "成长机会"),
                    ("growth", "业务类型"), ("worklife", "工作模式"), ("worklife", "办公地点"), ("worklife", "加班情况"),
                    ("mission", "行业发展"), ("mission", "社会影响"), ("mission", "创新程度")]
    ours = {s["key"] for c in cards for signals in c["evaluation"]["signals"].values() for s in signals}
    source = {s["key"] for c in cards for signals in c["source_evaluation"]["signals"].values() for s in signals}
    assert ours == source


def test_export_carries_our_evaluation_with_levels_and_evidence(scored_db):
    rec = {r["locator"][:3]: r for r in export_records(scored_db)}["003"]
    ev = rec["evaluation"]
    assert (ev["scorer"], ev["overall"], ev["pay"], ev["growth"], ev["worklife"], ev["mission"]) == (
        "jobcrawl-v1", 75, 81, 83, 50, 79)
    assert ev["levels"] == {"pay": "较高", "growth": "较高", "worklife": "较低", "mission": "中等"}
    assert ev["summary"] == "模型训练优化开发工程师（初速度）：自动驾驶方向技术岗，薪资有竞争力、成长空间大，但工作生活信号有限。"
    assert (ev["overall_level"], ev["completeness"]) == ("中等", 1.0)
    assert ev["explanations"]["pay"] == "月薪3.5万，比算法优化工程师中位数高（来源说明，库内同类样本不足），JD未明确提及具体福利项目。"
    assert [e["rule"] for e in ev["evidence"]["pay"]] == ["peers_too_small", "peers_too_small", "base", "source_compare"]
    assert ev["evidence"]["pay"][1] == {"rule": "peers_too_small", "scope": "category", "key": "算法优化工程师",
                                        "currency": "CNY", "n": 1, "min": 20, "text": "样本不足", "points": 0}
    assert ev["evidence"]["market"] == [
        {"rule": "company_open", "company": "初速度", "corpus_open": 1, "corpus_open_in_category": 1, "source_open": 73},
        {"rule": "city_category_open", "key": "苏州 · 算法优化工程师", "corpus_open": 1, "source_open": 10}]
    assert rec["source_evaluation"]["overall"] == 78 and rec["source_evaluation"]["evidence"] == {}


def test_market_stats_say_how_small_the_sample_is(scored_db):
    got = rows(scored_db, "SELECT scope, key, currency, n, p25, median, p75 FROM market_stats ORDER BY rowid")
    assert got == [
        ("category", "人工智能", "CNY", 1, None, None, None),
        ("category", "算法优化工程师", "CNY", 1, None, None, None),
        ("city+category", "杭州 · 人工智能", "CNY", 1, None, None, None),
        ("city+category", "苏州 · 算法优化工程师", "CNY", 1, None, None, None),
        ("company_open", "初速度", None, 1, None, None, None),
        ("company_open", "吉利汽车", None, 1, None, None, None),
        ("company+category_open", "初速度 · 算法优化工程师", None, 1, None, None, None),
        ("company+category_open", "吉利汽车 · 人工智能", None, 1, None, None, None),
        ("city+category_open", "杭州 · 人工智能", None, 1, None, None, None),
        ("city+category_open", "苏州 · 算法优化工程师", None, 1, None, None, None),
    ]


EVAL_SQL = "SELECT * FROM evaluations WHERE scorer = ? ORDER BY posting_id"


def test_rescoring_is_deterministic_and_replaces_only_our_rows(copy_db):
    before = {s: rows(copy_db, EVAL_SQL, s) for s in ("source", "jobcrawl-v1")}
    proc = run_cli("score", "--db", str(copy_db), check=True)
    assert proc.stdout.startswith("scored 0 postings, 2 unchanged (jobcrawl-v1) · market statistics: 10 rows, "
                                  "0 salary groups with at least 20 salaries · ")
    after = {s: rows(copy_db, EVAL_SQL, s) for s in ("source", "jobcrawl-v1")}
    assert after["source"] == before["source"]
    # nothing changed, so nothing is scored or rewritten: computed_at included (re-running a step is idempotent)
    assert after["jobcrawl-v1"] == before["jobcrawl-v1"]
    assert rows(copy_db, "SELECT kind, status FROM runs ORDER BY id") == [("ingest", "ok"), ("score", "ok"), ("score", "ok")]


def test_a_closed_posting_keeps_its_evaluation_and_leaves_the_market(copy_db):
    conn = sqlite3.connect(copy_db)
    with conn:
        conn.execute("UPDATE postings SET closed_at = '2026-12-01T00:00:00+00:00' WHERE id = 1")
    stamp = lambda pid: rows(copy_db, "SELECT computed_at FROM evaluations WHERE scorer = 'jobcrawl-v1' "  # noqa: E731
                                      "AND posting_id = ?", pid)
    old = stamp(1)
    proc = run_cli("score", "--db", str(copy_db), check=True)
    assert proc.stdout.startswith("scored 0 postings, 1 unchanged (jobcrawl-v1) · market statistics: 5 rows")
    assert stamp(1) == old  # the closed posting is not re-scored
    assert rows(copy_db, "SELECT count(*) FROM market_stats WHERE key LIKE '%吉利汽车%' OR key LIKE '%人工智能%'") == [(0,)]


def test_profile_adds_fit_with_reasons(copy_db):
    proc = run_cli("score", "--db", str(copy_db), "--profile", str(SEEDS / "profile.toml"), check=True)
    assert proc.stdout.splitlines()[1:] == [
        "fit:cuda-infra: scored 2 postings, 0 unchanged, 0 blocked; best fits:",
        "  #1 吉利汽车 · AI算子开发工程师 · 杭州: 匹配度87：技能70、薪资100、城市100、工作模式100。",
        "  #2 初速度 · 模型训练优化开发工程师 · 苏州: 匹配度68：技能50、薪资63、城市100、工作模式100。",
    ]
    fit = {r["locator"][:3]: r["fit"]["cuda-infra"] for r in export_records(copy_db)}
    assert fit["000"]["overall"] == 87 and fit["003"]["overall"] == 68
    assert fit["000"]["explanations"] == {
        "skills": "岗位主要技能12项，已掌握6项（CUDA、PyTorch、parallel computing、performance tuning、operator development、"
                  "performance optimization），缺少FlashAttention、LLM、computer architecture、autonomous driving、"
                  "smart cockpit、LLM training；想学的FlashAttention、KV Cache在本岗位出现",
        "salary": "月薪4.3万，达到底线4万", "city": "杭州在意向城市内", "mode": "仅现场办公可接受"}
    # scoring again without the profile leaves the fit rows alone
    run_cli("score", "--db", str(copy_db), check=True)
    assert rows(copy_db, "SELECT count(*) FROM evaluations WHERE scorer = 'fit:cuda-infra'") == [(2,)]


@pytest.mark.parametrize("text, message", [
    pytest.param('name = "x"\nwork_modes = ["sometimes"]', "work_modes: Value error, unknown work mode 'sometimes'",
                 id="bad-mode"),
    pytest.param("name = ", "not TOML", id="not-toml"),
])
def test_bad_profile_is_a_usage_error(copy_db, tmp_path, text, message):
    profile = tmp_path / "me.toml"
    profile.write_text(text, encoding="utf-8")
    proc = run_cli("score", "--db", str(copy_db), "--profile", str(profile))
    assert proc.returncode == 2 and f"{profile}: {message}" in proc.stderr


def test_score_needs_a_database(tmp_path):
    proc = run_cli("score", "--db", str(tmp_path / "none.db"))
    assert proc.returncode == 2 and "no such database" in proc.stderr


def test_help_has_an_example():
    out = run_cli("score", "--help", check=True).stdout
    assert "Example:" in out and "jobcrawl score --profile seeds/profile.toml" in out


@pytest.mark.parametrize("niceness", [0, 10], ids=["workers", "yielding-workers"])
def test_worker_processes_write_the_same_rows(copy_db, niceness):
    from crawler.store.schema import open_db
    from crawler.score.step import score_corpus

    before = rows(copy_db, EVAL_SQL, "jobcrawl-v1")
    db = open_db(copy_db)
    [(stamp,)] = rows(copy_db, "SELECT computed_at FROM evaluations WHERE scorer = 'jobcrawl-v1' AND posting_id = 1")
    assert score_corpus(db, now=stamp, workers=2, force=True, niceness=niceness) == {
        "scorer": "jobcrawl-v1", "scored": 2, "unchanged": 0, "market_stats": 10, "salary_groups": 0}
    db.close()
    assert rows(copy_db, EVAL_SQL, "jobcrawl-v1") == before


def _niceness_of_a_scoring_worker(path: str, niceness: int) -> int:
    from crawler.score.step import _worker_init

    _worker_init(None, path, niceness)
    return os.nice(0)


def test_a_yielding_scoring_worker_runs_at_the_niceness_asked_for(copy_db):
    from crawler.procs import call_in_fresh_process

    base = os.nice(0)
    assert [call_in_fresh_process(_niceness_of_a_scoring_worker, str(copy_db), n) - base for n in (0, 10)] == [0, 10]


DYING_WORKER = """
import sys
sys.path.insert(0, "tests")  # the spawned scoring workers get this path too: tests/stage_doubles.py
from crawler.store.schema import open_db
from crawler.score.step import Rules, _write
import stage_doubles
score = getattr(stage_doubles, sys.argv[2])
if isinstance(score, type):
    score = score()
db = open_db(sys.argv[1])
try:
    _write(db, Rules("test:dying", score, repr), "2026-11-29T12:00:00+00:00", 2, True)
except Exception as err:
    print(type(err).__name__)
    sys.exit(3)
print("no error")
"""


@pytest.mark.parametrize("scorer", ["dying_score", "ScorerDyingAtStart"], ids=["at-first-posting", "at-start"])
def test_a_scoring_worker_that_dies_fails_the_step_instead_of_hanging(copy_db, scorer):
    """A worker that dies at start left a batch of rows larger than a pipe half-written: the pool hung for good."""
    import subprocess
    import sys

    from conftest import ROOT

    conn = sqlite3.connect(copy_db)
    conn.row_factory = sqlite3.Row
    postings = [dict(r) for r in conn.execute("SELECT * FROM postings")]
    sections = [dict(r) for r in conn.execute("SELECT posting_id, seq, key_stored, heading_stored, text, spans FROM sections")]
    with conn:  # 400 copies of the seeds: one batch of rows and bullets is far larger than a pipe's 64 KB
        for copy in range(1, 201):
            for p in postings:
                row = {**{c: v for c, v in p.items() if c not in STORED_AS}, "id": p["id"] + 1000 * copy,
                       "key": f"{p['key']}#{copy}"}
                conn.execute(f"INSERT INTO postings ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                             list(row.values()))
            for s in sections:
                row = {**s, "posting_id": s["posting_id"] + 1000 * copy}
                row.pop("id", None)
                conn.execute(f"INSERT INTO sections ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                             list(row.values()))
    conn.close()
    proc = subprocess.run([sys.executable, "-c", DYING_WORKER, str(copy_db), scorer], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert (proc.returncode, proc.stdout.strip()) == (3, "BrokenProcessPool"), proc.stderr[-2000:]
    assert rows(copy_db, "SELECT count(*) FROM evaluations WHERE scorer = 'test:dying'") == [(0,)]


# --------------------------------------------------------------------------- only what changed is scored (#24, #27)

HEADER = "职位名称,公司名称,薪资,工作地点,职位类别,职位描述,职位链接\n"


def _row(i: int, salary: str, city: str = "杭州", category: str = "人工智能") -> str:
    return (f"推理工程师{i},示例公司{i},{salary},{city},{category},负责大模型推理服务的开发与性能优化，熟悉CUDA,"
            f"https://jobs.example.com/{i}\n")


def test_an_unchanged_rerun_scores_nothing_a_moved_peer_group_is_rescored(tmp_path):
    db = tmp_path / "jobs.db"
    first = tmp_path / "a.csv"  # 22 postings of 杭州 · 人工智能 (a peer group of 20 or more), 3 of 上海 · 后端开发
    first.write_text(HEADER + "".join(_row(i, f"{20 + i}-{30 + i}K") for i in range(22))
                     + "".join(_row(100 + i, "30-40K", "上海", "后端开发") for i in range(3)), encoding="utf-8")
    run_cli("ingest", str(first), "--db", str(db), "--as-of", AS_OF, check=True)
    again = run_cli("score", "--db", str(db), check=True)
    assert again.stdout.startswith("scored 0 postings, 25 unchanged (jobcrawl-v1)")
    stamps = dict(rows(db, "SELECT posting_id, inputs_digest FROM evaluations WHERE scorer = 'jobcrawl-v1'"))
    # a new 杭州 posting far above the others moves its peers' median: the 22 are scored again, 上海's 3 are not
    more = tmp_path / "b.csv"
    more.write_text(HEADER + _row(50, "90-100K"), encoding="utf-8")
    proc = run_cli("ingest", str(more), "--db", str(db), "--as-of", AS_OF, check=True)
    assert "score: 23 postings scored, 3 unchanged (jobcrawl-v1)" in proc.stdout
    changed = {pid for pid, digest in rows(db, "SELECT posting_id, inputs_digest FROM evaluations WHERE scorer = "
                                                "'jobcrawl-v1'") if stamps.get(pid) != digest}
    assert rows(db, f"SELECT city, count(*) FROM postings WHERE id IN ({','.join(map(str, changed))}) GROUP BY city") == [
        ("杭州", 23)]
    assert run_cli("score", "--db", str(db), "--all", check=True).stdout.startswith("scored 26 postings, 0 unchanged")


def test_an_old_database_is_scored_again_with_the_current_rules(tmp_path):
    from test_dedupe_store import old_database

    db = old_database(tmp_path)
    old = rows(db, "SELECT overall, overall_level, summary FROM evaluations e JOIN postings p ON p.id = e.posting_id "
                   "WHERE e.scorer = 'jobcrawl-v1' AND p.source = 'tabular' ORDER BY p.id LIMIT 1")
    assert old == [(52, "较低", "岗位，薪资福利信息不足、成长发展信息不足、WLB可能受限、使命价值信息不足。")]  # unknown read as low
    proc = run_cli("score", "--db", str(db), check=True)
    assert proc.stdout.startswith("scored 18 postings, 0 unchanged (jobcrawl-v1)")
    new = rows(db, "SELECT overall, overall_level, pay_level, completeness, summary FROM evaluations e JOIN postings p"
                   " ON p.id = e.posting_id WHERE e.scorer = 'jobcrawl-v1' AND p.source = 'tabular' ORDER BY p.id LIMIT 1")
    assert new == [(None, "信息不足", "信息不足", 0.2, None)]  # the summary is rendered when read
    assert rows(db, "SELECT score, score_level, score_by FROM postings WHERE id = 8") == [(None, "信息不足", "jobcrawl-v1")]
    card = next(r for r in export_records(db) if r["id"] == 8)["evaluation"]  # the export carries the levels (#27.6)
    assert {k: card[k] for k in ("overall", "overall_level", "completeness", "pay", "growth", "worklife", "mission",
                                 "levels")} == {
        "overall": None, "overall_level": "信息不足", "completeness": 0.2, "pay": None, "growth": None, "worklife": 54,
        "mission": None, "levels": {"pay": "信息不足", "growth": "信息不足", "worklife": "较低", "mission": "信息不足"}}
    assert card["summary"] == "Python开发工程师（示例星光）：岗位，工作生活信号有限；薪资福利、成长发展、使命价值信息不足。"
    seeds = rows(db, "SELECT overall, overall_level FROM evaluations e JOIN postings p ON p.id = e.posting_id "
                     "WHERE e.scorer = 'jobcrawl-v1' AND p.locator LIKE '00%' ORDER BY p.id")
    assert seeds == [(72, "中等"), (75, "中等")]
