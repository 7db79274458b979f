"""Our evaluation's sentences (summary, notes, explanations, signals) are rendered from its scores, its stored
evidence and the posting when read: a ``jobcrawl-v1`` row stores none of them, the export and the posting page
read them as the scorer wrote them."""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import pytest
import sqlite_utils

from crawler.store.read import export_record
from normalize.evaluation import dumps, pack_evidence, unpack_evidence
from normalize.models import DIMENSIONS
from normalize.score import Market, render_evaluation, score_posting
from test_score_rules import INFO, MARKET, seed

SEED = seed("000")
BARE = dataclasses.replace(SEED, sections={}, description=None, skills=(), tags=(), extra={}, industry=None)


def _with(**kw):
    return lambda: dataclasses.replace(SEED, **kw)


@pytest.mark.parametrize("facts, market", [
    pytest.param(lambda: SEED, Market(), id="seed000-source-compare"),
    pytest.param(lambda: seed("003"), Market(), id="seed003"),
    pytest.param(_with(city="杭州", category="人工智能", compare_raw=None, vs_median=None), MARKET, id="percentile"),
    pytest.param(_with(city="北京", category="人工智能", compare_raw=None, vs_median=None, company=None), MARKET,
                 id="category-peers-hidden-company"),
    pytest.param(_with(city="杭州", category="后端", compare_raw=None, vs_median=None), MARKET, id="peers-too-small"),
    pytest.param(_with(category=None, compare_raw=None, vs_median=None), MARKET, id="category-unknown"),
    pytest.param(_with(city="杭州", category="人工智能", compare_raw=None, vs_median=None, company_open_jobs=None,
                       market_open_jobs=None),
                 Market.build([("人工智能", "杭州", "CNY", 20000 + 2000 * i) for i in range(20)],
                              [("吉利汽车", "杭州", "人工智能", 3), ("吉利汽车", "上海", "后端", 2)]),
                 id="notes-of-the-corpus"),
    pytest.param(lambda: dataclasses.replace(BARE, salary_status="missing", monthly_min=None, monthly_max=None,
                                             signal_min=None, vs_median=None, work_mode=None), Market(), id="nothing-known"),
    pytest.param(lambda: dataclasses.replace(BARE, work_mode=None, sections={"responsibilities": [
        "远程办公，大小周，偶尔加班", "负责贷后催收系统，行业首创，面向企业客户和C端", "简单重复的数据录入"]}), Market(),
                 id="remote-words-overtime-harm-business-routine"),
])
def test_sentences_read_back_from_stored_evidence_are_the_scorers(facts, market):
    f = facts()
    ev = score_posting(f, market, INFO)
    stored = unpack_evidence(json.loads(dumps(pack_evidence(ev.evidence))))
    prose = render_evaluation({d: getattr(ev, d) for d in DIMENSIONS}, stored, f)
    assert prose.summary == ev.summary
    assert prose.notes == ev.notes
    assert prose.explanations == ev.explanations
    assert prose.signals == {d: [(s.key, s.value) for s in ev.signals[d]] for d in DIMENSIONS}


@pytest.mark.parametrize("below, above, shown", [
    pytest.param(327, 51, "第87百分位", id="86.51-reads-87"),
    pytest.param(326, 52, "第86百分位", id="86.24-reads-86"),
    pytest.param(10, 10, "第50百分位", id="exactly-50"),
])
def test_the_percentile_read_back_is_rounded_once(below, above, shown):
    """The stored percentile keeps the digits its sentence needs: 327 of 378 peers below is the 86.51st percentile,
    the 87th (stored as 86.5, it read back as the 86th)."""
    f = dataclasses.replace(SEED, city="杭州", category="人工智能", compare_raw=None, vs_median=None)
    market = Market.build([("人工智能", "杭州", "CNY", 1000)] * below + [("人工智能", "杭州", "CNY", 10**6)] * above)
    ev = score_posting(f, market, INFO)
    stored = unpack_evidence(json.loads(dumps(pack_evidence(ev.evidence))))
    prose = render_evaluation({d: getattr(ev, d) for d in DIMENSIONS}, stored, f)
    assert shown in prose.explanations["pay"] and shown in prose.signals["pay"][0][1]


SEED000_SUMMARY = "AI算子开发工程师（吉利汽车）：智能驾驶方向技术岗，成长空间大，但工作生活信号有限。"


def test_our_rows_store_no_sentences_and_the_export_renders_them(seeded_db):
    conn = sqlite3.connect(seeded_db)
    try:
        stored = conn.execute("SELECT scorer, summary IS NULL, notes IS NULL, explanations IS NULL, signals IS NULL"
                              " FROM evaluations WHERE posting_id = 1 ORDER BY scorer").fetchall()
    finally:
        conn.close()
    assert stored == [("jobcrawl-v1", 1, 1, 1, 1), ("source", 0, 0, 0, 0)]
    ours = export_record(sqlite_utils.Database(seeded_db), 1)["evaluation"]
    assert ours["summary"] == SEED000_SUMMARY
    assert ours["explanations"]["worklife"] == "工作模式为仅现场办公，JD未提及工作时间、加班或弹性工时等WLB信息，无法判断工作节奏。"
    assert ours["signals"]["worklife"] == [{"key": "工作模式", "value": "仅现场办公"},
                                           {"key": "办公地点", "value": "杭州"},
                                           {"key": "加班情况", "value": "未提及（无法判断）"}]
