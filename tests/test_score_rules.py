"""The scoring rules (normalize/score/) and personal fit (normalize/fit.py), pure: example tables,
the seeds' exact scores, and property tests (hypothesis) for the monotonic rules and the 0–100 range."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, ROOT, examples
from normalize.fit import ProfileError, load_profile, score_fit
from normalize.models import DIMENSIONS
from normalize.score import (
    INSUFFICIENT,
    RULES,
    SCORER,
    WEIGHTS,
    Market,
    PostingFacts,
    SkillInfo,
    find_rules,
    format_money,
    overall_score,
    score_inputs,
    score_posting,
)
from normalize.skills import load_taxonomy

TAXONOMY = load_taxonomy()
INFO = {s.name: SkillInfo(s.category, s.parent, s.frontier) for s in TAXONOMY.skills}
FRONTIER = sorted(name for name, s in INFO.items() if s.frontier)
EMPTY = Market()
# 杭州 · 人工智能 has 20 salaries, 20,000 to 58,000 (enough), 北京 · 人工智能 5 (too few: the category's 25 are used).
MARKET = Market.build(
    [("人工智能", "杭州", "CNY", 20000 + 2000 * i) for i in range(20)]
    + [("人工智能", "北京", "CNY", v) for v in (10000, 15000, 20000, 25000, 30000)]
)


def seed(name: str) -> PostingFacts:
    return PostingFacts.from_record(json.loads((FIXTURES / "golden" / f"seed_{name}.json").read_text(encoding="utf-8")))


def rules_fired(ev, dim: str) -> list[tuple]:
    return [(e["rule"], e.get("matched"), e["points"]) for e in ev.evidence[dim]]


# --------------------------------------------------------------------------- weights and seeds


@pytest.mark.parametrize("dims, overall", [
    pytest.param((70, 90, 50, 75), 72, id="seed000-source-72.0"),
    pytest.param((85, 90, 50, 80), 78, id="seed003-source-78.25"),
])
def test_weights_reproduce_the_apps_overall_from_its_dimensions(dims, overall):
    assert WEIGHTS == {"pay": 0.35, "growth": 0.25, "worklife": 0.20, "mission": 0.20}
    assert overall_score(dict(zip(DIMENSIONS, dims))) == overall


@pytest.mark.parametrize("scores, overall", [
    pytest.param({"pay": 71, "growth": 70, "worklife": 70, "mission": 70}, 70, id="70.35-down"),
    pytest.param({"pay": 70, "growth": 72, "worklife": 70, "mission": 70}, 71, id="70.5-up"),
    pytest.param({"pay": 80, "growth": 40, "worklife": None, "mission": None}, 63, id="two-known-reweighted-63.3"),
    pytest.param({"pay": None, "growth": 90, "worklife": 50, "mission": 70}, 72, id="pay-unknown-does-not-pull-down"),
    pytest.param({"pay": 30, "growth": None, "worklife": None, "mission": None}, None, id="one-known-is-not-enough"),
    pytest.param({"pay": None, "growth": None, "worklife": None, "mission": None}, None, id="none-known"),
])
def test_overall_is_the_weighted_mean_of_the_known_dimensions(scores, overall):
    assert overall_score(scores) == overall


# Source (the app's own) and ours, on a corpus too small for peers (the seeds alone).
SEEDS = {
    "000": {"source": (72, 70, 90, 50, 75), "ours": (72, 64, 97, 50, 78),
            "levels": {"pay": "中等", "growth": "较高", "worklife": "较低", "mission": "中等", "overall": "中等"}},
    "003": {"source": (78, 85, 90, 50, 80), "ours": (75, 81, 83, 50, 79),
            "levels": {"pay": "较高", "growth": "较高", "worklife": "较低", "mission": "中等", "overall": "中等"}},
}


@pytest.mark.parametrize("name", ["000", "003"])
def test_seed_scores_exact_and_within_10_of_the_source(name):
    ev = score_posting(seed(name), EMPTY, INFO)
    got = (ev.overall, ev.pay, ev.growth, ev.worklife, ev.mission)
    assert (ev.scorer, got, ev.levels) == (SCORER, SEEDS[name]["ours"], SEEDS[name]["levels"])
    assert all(abs(a - b) <= 10 for a, b in zip(got, SEEDS[name]["source"]))


def test_seed000_evidence_says_which_rule_fired_on_which_text():
    ev = score_posting(seed("000"), EMPTY, INFO)
    assert rules_fired(ev, "pay") == [("peers_too_small", None, 0), ("peers_too_small", None, 0), ("base", None, 55.0),
                                      ("source_compare", None, 8.75)]
    assert ev.evidence["pay"][0]["text"] == "样本不足" and ev.evidence["pay"][0]["key"] == "杭州 · 人工智能"
    assert ev.evidence["pay"][3]["text"] == "比人工智能中位数低" and ev.evidence["pay"][3]["assumed_percentile"] == 25.0
    assert rules_fired(ev, "growth")[2:] == [
        ("frontier_category", None, 12.0), ("lead", "主导", 3), ("foresight", "前瞻", 3), ("architecture", "架构", 3),
        ("core", "核心", 3), ("hard_problems", "极致", 3), ("ownership", "全链路", 3), ("cap", None, -3.0),
        ("stack", None, 0), ("scope_clauses", None, 0)]
    assert ev.evidence["growth"][-1]["clauses"] == ["主导跨团队大模型训练/推理性能瓶颈", "并参与AI计算架构的前瞻性调研与设计迭代"]
    lead = ev.evidence["growth"][3]
    assert (lead["section"], lead["snippet"]) == ("responsibilities", "主导跨团队大模型训练")
    assert ev.evidence["growth"][1]["count"] == 17 and ev.evidence["growth"][1]["points"] == 20.0
    assert rules_fired(ev, "worklife") == [("base", None, 50.0), ("work_mode", None, 0.0)]
    assert rules_fired(ev, "mission") == [("base", None, 50.0), ("autonomous_driving", "智能驾驶", 15), ("ai", "人工智能", 3.0),
                                          ("smart_vehicle", "智能座舱", 3.0), ("cutting_edge", "前瞻", 4), ("new_tech", None, 3.0)]
    assert ev.evidence["overall"] == [{"rule": "weighted_mean", "weights": WEIGHTS, "completeness": 1.0, "value": 72.25,
                                       "known": ["pay", "growth", "worklife", "mission"]}]
    assert ev.completeness == 1.0


def test_seed000_signals_explanations_and_summary_in_the_apps_style():
    ev = score_posting(seed("000"), EMPTY, INFO)
    signals = {d: [(s.key, s.value) for s in ev.signals[d]] for d in DIMENSIONS}
    assert signals == {
        "pay": [("薪资信号", "比人工智能中位数低（来源说明；库内同类样本不足）")],
        "growth": [("技术前沿", "前沿/新兴技术"),
                   ("技术栈", "CUDA、FlashAttention、PyTorch、LLM、parallel computing、performance tuning、"
                             "operator development、computer architecture、performance optimization"),
                   ("成长机会", "主导跨团队大模型训练/推理性能瓶颈、并参与AI计算架构的前瞻性调研与设计迭代"),
                   ("业务类型", "ambiguous")],
        "worklife": [("工作模式", "仅现场办公"), ("办公地点", "杭州"), ("加班情况", "未提及（无法判断）")],
        "mission": [("行业发展", "高速增长赛道"), ("社会影响", "正向社会影响力较高"), ("创新程度", "积极采用新技术")],
    }
    assert ev.explanations["pay"] == "月薪4.3万，比人工智能中位数低（来源说明，库内同类样本不足），JD未明确提及具体福利项目。"
    assert ev.explanations["worklife"] == "工作模式为仅现场办公，JD未提及工作时间、加班或弹性工时等WLB信息，无法判断工作节奏。"
    assert ev.summary == "AI算子开发工程师（吉利汽车）：智能驾驶方向技术岗，成长空间大，但工作生活信号有限。"
    assert ev.notes == []  # the source states its own counts and comparison: nothing to fill in


# --------------------------------------------------------------------------- pay


def pay_of(**kw):
    facts = PostingFacts(category="人工智能", salary_status="parsed", currency="CNY", **kw)
    return score_posting(facts, MARKET, {})


@pytest.mark.parametrize("kw, score, signal", [
    # 40,000 among 20,000 … 58,000: 10 below, 1 equal → percentile 52.5 → 55 + 0.35 × 52.5 = 73.4
    pytest.param(dict(city="杭州", monthly_min=40000, monthly_max=40000), 73,
                 "市场水准 (4万/月，杭州人工智能第52百分位，中位数3.9万，20个样本)", id="city-and-category-peers"),
    pytest.param(dict(city="北京", monthly_min=40000, monthly_max=40000), 77,
                 "市场水准 (4万/月，人工智能第62百分位，中位数3.4万，25个样本)", id="city-too-small-category-used"),
    pytest.param(dict(city="杭州", monthly_min=60000, monthly_max=80000, months=14), 95,
                 "高于市场 (7万/月，杭州人工智能第100百分位，中位数3.9万，20个样本)", id="top-of-market-14-months"),
    pytest.param(dict(city="杭州", monthly_min=10000, monthly_max=10000,
                      tags=("年终奖", "股票期权", "五险一金", "补充医疗", "餐补", "签字费", "定期调薪")), 65,
                 "低于市场 (1万/月，杭州人工智能第0百分位，中位数3.9万，20个样本)", id="bottom-benefits-capped-at-10"),
    pytest.param(dict(city="杭州", salary_raw="面议", monthly_min=None), None, "未明确", id="negotiable-unknown"),
    pytest.param(dict(city="杭州", monthly_min=3000, monthly_max=40000, salary_implausible=True), None, "未明确",
                 id="implausible-range-not-used"),
])
def test_pay_percentile_among_peers(kw, score, signal):
    ev = pay_of(**kw)
    assert (ev.pay, ev.signals["pay"][0].value) == (score, signal)
    assert ev.levels["pay"] == (INSUFFICIENT if score is None else "较高" if score >= 80 else "中等")


def test_pay_falls_back_to_the_sources_statement_then_to_neutral():
    small = dict(category="算法", city="杭州", salary_status="parsed", currency="CNY", monthly_min=40000, monthly_max=40000)
    above = score_posting(PostingFacts(**small, compare_raw="比算法中位数高", vs_median="above"), MARKET, {})
    assert (above.pay, above.signals["pay"][0].value) == (81, "比算法中位数高（来源说明；库内同类样本不足）")
    unknown = score_posting(PostingFacts(**small), MARKET, {})
    assert (unknown.pay, unknown.levels["pay"], unknown.signals["pay"][0].value) == (
        None, "信息不足", "4万/月（样本不足（杭州算法0个、算法0个，少于20个））")
    assert [e["rule"] for e in unknown.evidence["pay"]] == ["peers_too_small", "peers_too_small", "no_comparison",
                                                            "insufficient"]
    assert unknown.explanations["pay"].startswith("信息不足：月薪4万，样本不足（杭州算法0个、算法0个，少于20个），无法判断高低")
    no_category = score_posting(PostingFacts(**{**small, "category": None}), MARKET, {})
    # never the whole corpus: without a category there are no peers
    assert (no_category.pay, no_category.signals["pay"][0].value) == (None, "4万/月（类别未知，无同类可比）")


def test_pay_uses_a_plausible_source_signal_when_the_posting_states_no_salary():
    facts = PostingFacts(category="人工智能", city="杭州", signal_raw="市场水准 (35K-50K/月)", signal_min=35000,
                         signal_max=50000, signal_currency="CNY", signal_period="month")
    ev = score_posting(facts, MARKET, {})
    assert ev.pay == 76  # midpoint 42,500, above 12 of the 20: percentile 60 → 55 + 0.35 × 60
    assert ev.evidence["pay"][0] == {"rule": "source_salary_signal", "text": "市场水准 (35K-50K/月)", "estimated": False,
                                     "points": 0}


def test_market_fills_the_derived_texts_only_where_the_source_lacks_them():
    market = Market.build([("人工智能", "杭州", "CNY", 20000 + 2000 * i) for i in range(20)],
                          [("某公司", "杭州", "人工智能", 3), ("某公司", "上海", "机器人", 2), ("别家", "杭州", "人工智能", 4)])
    ev = score_posting(PostingFacts(category="人工智能", city="杭州", company="某公司", salary_status="parsed",
                                    currency="CNY", monthly_min=30000, monthly_max=30000), market, {})
    assert ev.notes == ["薪资：比杭州人工智能中位数低（库内20个样本）", "公司情况：库内 5 个在招 · 其中人工智能 3 个",
                        "市场机会：杭州 · 人工智能 · 库内 7 个在招"]
    stated = score_posting(PostingFacts(category="人工智能", city="杭州", company="某公司", salary_status="parsed",
                                        currency="CNY", monthly_min=30000, monthly_max=30000, compare_raw="比人工智能中位数低",
                                        vs_median="below", company_open_jobs=1900, market_open_jobs=190), market, {})
    assert stated.notes == []
    assert stated.evidence["market"][1] == {"rule": "company_open", "company": "某公司", "corpus_open": 5,
                                            "corpus_open_in_category": 3, "source_open": 1900}


def test_market_rows_state_quartiles_only_from_the_minimum_sample():
    rows = {(r["scope"], r["key"]): r for r in MARKET.rows()}
    assert rows[("city+category", "杭州 · 人工智能")] == {
        "scope": "city+category", "key": "杭州 · 人工智能", "currency": "CNY", "n": 20, "p25": 29500.0, "median": 39000.0,
        "p75": 48500.0}
    assert rows[("city+category", "北京 · 人工智能")]["n"] == 5 and rows[("city+category", "北京 · 人工智能")]["median"] is None
    assert rows[("category", "人工智能")]["median"] == 34000.0 and rows[("category", "人工智能")]["p75"] == 46000.0


@pytest.mark.parametrize("value, text", [
    pytest.param(43000, "4.3万", id="wan"), pytest.param(35000, "3.5万", id="wan-half"),
    pytest.param(8000, "8千", id="qian"), pytest.param(2500, "2.5千", id="qian-half"), pytest.param(500, "500元", id="yuan"),
])
def test_format_money(value, text):
    assert format_money(value) == text


# --------------------------------------------------------------------------- growth, work-life, mission


def growth_of(**kw):
    return score_posting(PostingFacts(**kw), EMPTY, INFO)


@pytest.mark.parametrize("kw, score, fired", [
    pytest.param(dict(skills=("vLLM", "CUDA", "TVM", "teamwork")), 66,
                 [("base", None, 50.0), ("frontier_skill", None, 10.0), ("frontier_category", None, 6.0),
                  ("stack", None, 0)],
                 id="two-frontier-skills-two-categories"),
    # without JD text or a frontier skill growth is unknown: the title alone is no evidence of it
    pytest.param(dict(title="资深算法工程师"), None, [("base", None, 50.0), ("seniority", None, 5.0), ("insufficient", None, 0)],
                 id="senior-title-alone-insufficient"),
    pytest.param(dict(title="资深算法工程师", sections={"responsibilities": ["负责推理服务开发"]}), 55,
                 [("base", None, 50.0), ("seniority", None, 5.0)], id="senior-title-with-a-jd"),
    pytest.param(dict(title="算法实习生", description="负责模型训练"), 45, [("base", None, 50.0), ("seniority", None, -5.0)],
                 id="intern"),
    pytest.param(dict(experience_min_years=5, sections={"about": ["负责推理服务开发"]}), 55,
                 [("base", None, 50.0), ("seniority", None, 5.0)], id="five-years"),
    pytest.param(dict(sections={"benefits": ["五险一金"], "compensation": ["15-25K"]}), None,
                 [("base", None, 50.0), ("insufficient", None, 0)], id="benefits-and-pay-are-no-jd"),
    pytest.param(dict(sections={"responsibilities": ["主导推理引擎从0到1的架构设计"]}), 59,
                 [("base", None, 50.0), ("lead", "主导", 3), ("architecture", "架构设计", 3), ("zero_to_one", "从0到1", 3),
                  ("scope_clauses", None, 0)],
                 id="scope-words-in-duties"),
    pytest.param(dict(sections={"requirements": ["主导过大型项目，有架构经验"]}), 50, [("base", None, 50.0)],
                 id="scope-words-in-requirements-are-the-candidates-past"),
    pytest.param(dict(sections={"about": ["工作内容重复性较高"]}), 45, [("base", None, 50.0), ("routine", "重复性", -5)],
                 id="routine-work"),
])
def test_growth_rules(kw, score, fired):
    ev = growth_of(**kw)
    assert (ev.growth, rules_fired(ev, "growth")) == (score, fired)
    assert ev.levels["growth"] == (INSUFFICIENT if score is None else "中等" if score >= 60 else "较低")


@pytest.mark.parametrize("lines, mode, score", [
    pytest.param([], None, None, id="nothing-known"),
    pytest.param([], "远程办公", 65, id="remote"),
    pytest.param([], "混合办公", 58, id="hybrid"),
    pytest.param([], "仅现场办公", 50, id="on-site"),
    pytest.param(["支持远程办公"], None, 65, id="remote-from-the-jd"),
    pytest.param(["996"], None, 30, id="996"),
    pytest.param(["大小周"], None, 35, id="alternate-saturdays"),
    pytest.param(["提供加班补贴"], None, 47, id="overtime-pay-is-not-plain-overtime"),
    pytest.param(["偶尔加班"], None, 46, id="occasional-overtime"),
    pytest.param(["不加班"], None, 60, id="no-overtime-is-not-overtime"),
    pytest.param(["抵制996"], None, 60, id="against-996"),
    pytest.param(["ＷＬＢ友好，拒绝９９６"], None, 65, id="full-width"),
    pytest.param(["参与第996号项目，编号996"], None, None, id="996-as-a-number-is-not-a-rule"),
    pytest.param(["弹性工作，双休"], None, 66, id="flexible-and-weekends"),
    pytest.param(["996，大小周，单休，经常加班，倒班，抗压，出差"], None, 0, id="clamped-at-0"),
    pytest.param(["965", "不加班", "双休", "弹性工作", "wlb", "带薪年假"], "远程办公", 100, id="clamped-at-100"),
])
def test_worklife_rules(lines, mode, score):
    ev = score_posting(PostingFacts(sections={"about": lines}, work_mode=mode), EMPTY, {})
    assert ev.worklife == score


def test_worklife_unknown_says_so_like_the_app():
    ev = score_posting(PostingFacts(), EMPTY, {})
    assert [(s.key, s.value) for s in ev.signals["worklife"]] == [("工作模式", "未明确"), ("办公地点", "未明确"),
                                                                   ("加班情况", "未提及（无法判断）")]
    assert ev.evidence["worklife"][-2:] == [{"rule": "unknown", "text": "未明确", "points": 0},
                                            {"rule": "insufficient", "text": "信息不足", "points": 0}]
    assert (ev.worklife, ev.levels["worklife"]) == (None, "信息不足")
    assert ev.explanations["worklife"] == "信息不足：JD未提及工作时间、加班或弹性工时等WLB信息，无法判断工作节奏。"


@pytest.mark.parametrize("kw, score, signals", [
    pytest.param(dict(sections={"about": ["医疗影像与自动驾驶"]}), 68, ("高速增长赛道", "正向社会影响力较高", "未明确"),
                 id="strongest-sector-plus-3"),
    pytest.param(dict(sections={"about": ["在线教育平台"]}), 62, ("稳定发展行业", "正向社会影响力较高", "未明确"), id="education"),
    pytest.param(dict(industry="新能源"), 65, ("高速增长赛道", "正向社会影响力较高", "未明确"), id="industry-field"),
    pytest.param(dict(sections={"about": ["贷后催收"]}), 35, ("未明确", "存在争议", "未明确"), id="debt-collection"),
    pytest.param(dict(sections={"about": ["行业首创的创新产品，行业领先"]}), 62, ("未明确", "中性/一般", "开拓性创新（行业首创）"),
                 id="innovation-capped-at-12"),
    pytest.param(dict(skills=("vLLM",)), 53, ("未明确", "中性/一般", "积极采用新技术"), id="frontier-skill"),
])
def test_mission_rules(kw, score, signals):
    ev = score_posting(PostingFacts(**kw), EMPTY, INFO)
    assert (ev.mission, tuple(s.value for s in ev.signals["mission"])) == (score, signals)


def test_word_matching_is_leftmost_longest_and_per_line():
    hits = find_rules([("about", "不加班补贴"), ("tags", "抵制"), ("tags", "996")])
    assert {name: h.matched for name, h in hits.items()} == {"no_overtime": "不加班", "w996": "996"}


def test_word_matching_reads_past_a_lone_surrogate():
    hits = find_rules([("about", "\ud800不加班\udfff补贴"), ("tags", "996\ud800")])
    assert {name: (h.matched, h.section) for name, h in hits.items()} == {
        "no_overtime": ("不加班", "about"), "w996": ("996", "tags"),
    }


# --------------------------------------------------------------------------- properties

RULE_WORDS = sorted({w for r in RULES for w in r.words})
LINE = st.one_of(st.sampled_from(RULE_WORDS), st.text(max_size=30),
                 st.lists(st.sampled_from(RULE_WORDS + ["，", "、", "不", "第", "号", "a", "9"]), max_size=6).map("".join))
FACTS = st.builds(
    PostingFacts,
    title=st.one_of(st.none(), st.sampled_from(["资深工程师", "算法实习生", "工程师"]), st.text(max_size=12)),
    city=st.sampled_from([None, "杭州", "北京", "上海"]),
    category=st.sampled_from([None, "人工智能", "算法"]),
    work_mode=st.sampled_from([None, "远程办公", "混合办公", "仅现场办公", "Remote", ""]),
    experience_min_years=st.one_of(st.none(), st.floats(0, 20)),
    tags=st.lists(LINE, max_size=4).map(tuple),
    skills=st.lists(st.sampled_from(sorted(INFO)), max_size=12, unique=True).map(tuple),
    sections=st.dictionaries(st.sampled_from(["about", "requirements", "responsibilities", "benefits"]),
                             st.lists(LINE, max_size=5), max_size=3),
    salary_status=st.sampled_from(["parsed", "missing", "negotiable"]),
    monthly_min=st.one_of(st.none(), st.floats(1000, 200000)),
    currency=st.sampled_from(["CNY", "USD", None]),
    months=st.integers(12, 18),
    vs_median=st.sampled_from([None, "below", "equal", "above"]),
    compare_raw=st.sampled_from([None, "比人工智能中位数低"]),
)
SALARY_MARKETS = st.lists(st.tuples(st.sampled_from(["人工智能", "算法"]), st.sampled_from(["杭州", "北京"]),
                                    st.just("CNY"), st.floats(1000, 200000)), max_size=40).map(Market.build)


def _scores(ev) -> list[int]:
    return [ev.overall, *(getattr(ev, d) for d in DIMENSIONS)]


@settings(max_examples=examples(300), deadline=None)
@given(facts=FACTS, market=SALARY_MARKETS)
def test_every_score_stays_in_0_100_or_is_insufficient(facts, market):
    ev = score_posting(facts, market, INFO)
    assert all(s is None or 0 <= s <= 100 for s in _scores(ev))
    assert set(ev.levels) == {*DIMENSIONS, "overall"} and all(ev.explanations[d].endswith("。") for d in DIMENSIONS)
    known = [d for d in DIMENSIONS if getattr(ev, d) is not None]
    assert all((ev.levels[d] == INSUFFICIENT) == (d not in known) for d in DIMENSIONS)
    assert (ev.overall is None) == (len(known) < 2) and (ev.levels["overall"] == INSUFFICIENT) == (len(known) < 2)
    assert ev.completeness == round(sum(WEIGHTS[d] for d in known), 2)


@settings(max_examples=examples(300), deadline=None)
@given(facts=FACTS, market=SALARY_MARKETS, low=st.floats(1000, 200000), rise=st.floats(0, 100000))
def test_a_higher_salary_never_lowers_pay(facts, market, low, rise):
    def pay(value: float) -> int:
        f = PostingFacts(**{**_fields(facts), "salary_status": "parsed", "currency": "CNY",
                            "salary_implausible": False, "monthly_min": value, "monthly_max": value})
        return score_posting(f, market, INFO).pay

    lower, higher = pay(low), pay(low + rise)
    assert (lower is None) == (higher is None)  # whether pay is known does not depend on the amount
    assert lower is None or lower <= higher


@settings(max_examples=examples(300), deadline=None)
@given(facts=FACTS)
def test_adding_996_never_raises_worklife(facts):
    sections = {k: list(v) for k, v in facts.sections.items()}
    sections.setdefault("about", []).append("996")
    more = PostingFacts(**{**_fields(facts), "sections": sections})
    before, after = score_posting(facts, EMPTY, INFO).worklife, score_posting(more, EMPTY, INFO).worklife
    assert after is not None and (before is None or after <= before)  # 996 is evidence, and never good


@settings(max_examples=examples(300), deadline=None)
@given(facts=FACTS, skill=st.sampled_from(FRONTIER))
def test_adding_a_frontier_skill_never_lowers_growth(facts, skill):
    assume(skill not in facts.skills)
    more = PostingFacts(**{**_fields(facts), "skills": facts.skills + (skill,)})
    before, after = score_posting(facts, EMPTY, INFO).growth, score_posting(more, EMPTY, INFO).growth
    assert after is not None and (before is None or after >= before)  # a frontier skill is evidence of growth


def _fields(facts: PostingFacts) -> dict:
    return {name: getattr(facts, name) for name in PostingFacts.__dataclass_fields__}


# --------------------------------------------------------------------------- personal fit

PROFILE = load_profile((ROOT / "seeds" / "profile.toml").read_text(encoding="utf-8"), TAXONOMY)


def test_example_profile_resolves_aliases_to_taxonomy_skills():
    assert PROFILE.scorer == "fit:cuda-infra"
    assert PROFILE.have == ("CUDA", "C++", "Python", "PyTorch", "performance tuning", "parallel computing",
                            "operator development", "GPU", "Nsight Systems", "quantization")
    assert "model compression" in PROFILE.covers  # quantization's parent
    assert PROFILE.unknown_skills == ()


@pytest.mark.parametrize("name, overall, parts", [
    pytest.param("000", 87, {"skills": 70, "salary": 100, "city": 100, "mode": 100}, id="seed000"),
    pytest.param("003", 68, {"skills": 50, "salary": 63, "city": 100, "mode": 100}, id="seed003"),
])
def test_fit_of_the_seeds_with_reasons(name, overall, parts):
    ev = score_fit(seed(name), PROFILE, INFO)
    assert (ev.scorer, ev.overall, ev.evidence["overall"][0]["scores"]) == ("fit:cuda-infra", overall, parts)


def test_fit_reasons_name_matched_and_missing_skills_salary_city_and_mode():
    ev = score_fit(seed("003"), PROFILE, INFO)
    assert [(s.key, s.value) for s in ev.signals["fit"]] == [
        ("匹配技能", "CUDA、PyTorch、performance optimization、operator development、performance tuning、GPU"),
        ("缺少技能", "CNN、DETR、NPU、TensorFlow、autonomous driving、compiler optimization"),
        ("想学技能", "无"),
        ("薪资", "月薪3.5万，低于底线4万"), ("城市", "苏州在意向城市内"), ("工作模式", "仅现场办公可接受")]


def _profile(**kw) -> str:
    lines = ['name = "t"'] + [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in kw.items()]
    return "\n".join(lines)


@pytest.mark.parametrize("facts, profile, part, score", [
    pytest.param(dict(monthly_min=30000, monthly_max=50000), dict(min_monthly_salary=40000), "salary", 80, id="range-straddles-floor"),
    pytest.param(dict(monthly_min=30000, monthly_max=30000), dict(min_monthly_salary=40000), "salary", 25, id="25pct-under"),
    pytest.param(dict(monthly_min=20000, monthly_max=20000), dict(min_monthly_salary=40000), "salary", 0, id="half-under"),
    pytest.param(dict(monthly_min=20000, monthly_max=20000, currency="USD"), dict(min_monthly_salary=40000), "salary", 50,
                 id="other-currency"),
    pytest.param(dict(city="北京"), dict(cities=["杭州"]), "city", 0, id="other-city"),
    pytest.param(dict(city="北京", work_mode="远程办公"), dict(cities=["杭州"]), "city", 100, id="remote-any-city"),
    pytest.param(dict(city=None), dict(cities=["杭州"]), "city", 50, id="city-unknown"),
    pytest.param(dict(work_mode="仅现场办公"), dict(work_modes=["remote", "混合"]), "mode", 0, id="on-site-not-accepted"),
    pytest.param(dict(work_mode="Hybrid"), dict(work_modes=["remote", "混合"]), "mode", 100, id="hybrid-accepted"),
])
def test_fit_parts(facts, profile, part, score):
    base = dict(salary_status="parsed", currency="CNY")
    ev = score_fit(PostingFacts(**{**base, **facts}), load_profile(_profile(**profile), TAXONOMY), INFO)
    assert ev.evidence["overall"][0]["scores"][part] == score


@pytest.mark.parametrize("text, message", [
    pytest.param('name = "a b"', "name: String should match pattern", id="name-with-space"),
    pytest.param('name = "x"\nwork_modes = ["sometimes"]', "work_modes: Value error, unknown work mode 'sometimes'",
                 id="unknown-mode"),
    pytest.param('name = "x"\nskill = ["CUDA"]', "skill: Extra inputs are not permitted", id="typo-in-a-key"),
    pytest.param('name = ', "not TOML", id="not-toml"),
])
def test_profile_errors_name_the_field(text, message):
    with pytest.raises(ProfileError, match="^" + message.replace("(", r"\(")):
        load_profile(text, TAXONOMY)


def test_unknown_profile_skills_are_reported_not_fatal():
    profile = load_profile(_profile(skills_have=["CUDA", "完全不存在的技能"]), TAXONOMY)
    assert (profile.have, profile.unknown_skills) == (("CUDA",), ("完全不存在的技能",))
    assert score_fit(PostingFacts(), profile, INFO).problems == ["profile skill not in the taxonomy: 完全不存在的技能"]


# --------------------------------------------------------------------------- the summary and what a score depends on


def test_summary_names_the_posting_and_what_is_not_known():
    facts = PostingFacts(title="Python 工程师", company=None, city="北京", tags=("双休", "带薪年假"),
                         sections={"benefits": ["五险一金"]})
    ev = score_posting(facts, EMPTY, INFO)
    assert (ev.overall, ev.levels["overall"], ev.worklife, ev.completeness) == (None, "信息不足", 62, 0.2)
    assert ev.summary == "Python 工程师（企业未公开）：岗位，各项中等；薪资福利、成长发展、使命价值信息不足。"


PEERS = [("人工智能", "杭州", "CNY", 20000 + 2000 * i) for i in range(20)]
POSTING = PostingFacts(title="算法工程师", company="某公司", city="杭州", category="人工智能", salary_status="parsed",
                       currency="CNY", monthly_min=30000, monthly_max=30000, skills=("CUDA",))


@pytest.mark.parametrize("market, kwargs, digest", [
    pytest.param(True, {}, 3881571519056777009, id="ours"),
    pytest.param(False, {"version": "fit/1", "extra": {"a": [1, 2]}}, -1795240589150139446,
                 id="a-fit-with-its-profile"),
])
def test_score_inputs_are_the_digests_stored_by_earlier_versions(market, kwargs, digest):
    """A stored evaluation whose inputs did not change is not scored again after an upgrade."""
    assert score_inputs(POSTING, Market.build(PEERS) if market else None, INFO, **kwargs) == digest


@pytest.mark.parametrize("change, same", [
    pytest.param(lambda: (POSTING, Market.build(PEERS), INFO, SCORER), True, id="nothing-changed"),
    pytest.param(lambda: (POSTING, Market.build(PEERS + [("后端", "北京", "CNY", 9000.0)]), INFO, SCORER), True,
                 id="another-groups-salary"),
    pytest.param(lambda: (POSTING, Market.build(PEERS[:-1] + [("人工智能", "杭州", "CNY", 90000.0)]), INFO, SCORER), False,
                 id="its-peer-groups-median-moved"),
    pytest.param(lambda: (POSTING, Market.build(PEERS[::-1]), INFO, SCORER), True, id="its-peers-in-another-order"),
    pytest.param(lambda: (POSTING, Market.build(PEERS[1:] + [("人工智能", "杭州", "CNY", 20000.5)]), INFO, SCORER), False,
                 id="one-peer-salary-moved-a-little"),
    pytest.param(lambda: (POSTING, Market.build(PEERS + [PEERS[3]]), INFO, SCORER), False,
                 id="its-peer-group-gained-an-equal-salary"),
    pytest.param(lambda: (POSTING, Market.build(PEERS, [("某公司", "杭州", "人工智能", 2)]), INFO, SCORER), False,
                 id="its-company-opened-a-posting"),
    pytest.param(lambda: (PostingFacts(**{**_fields(POSTING), "tags": ("双休",)}), Market.build(PEERS), INFO, SCORER),
                 False, id="its-facts"),
    pytest.param(lambda: (POSTING, Market.build(PEERS), {**INFO, "CUDA": SkillInfo("gpu", None, False)}, SCORER), False,
                 id="its-skills-taxonomy"),
    pytest.param(lambda: (POSTING, Market.build(PEERS), INFO, "jobcrawl-v1/2"), False, id="rules-version"),
])
def test_score_inputs_change_exactly_with_what_the_score_reads(change, same):
    base = score_inputs(POSTING, Market.build(PEERS), INFO)
    facts, market, info, version = change()
    digest = score_inputs(facts, market, info, **({} if version == SCORER else {"version": version}))
    assert (digest == base) is same
    assert type(base) is int and -2 ** 63 <= base < 2 ** 63
