"""The scoring rules (normalize/score.py) and personal fit (normalize/fit.py), pure: example tables,
the seeds' exact scores, and property tests (hypothesis) for the monotonic rules and the 0–100 range."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, ROOT
from normalize.fit import ProfileError, load_profile, score_fit
from normalize.models import DIMENSIONS
from normalize.score import (
    RULES,
    SCORER,
    WEIGHTS,
    Market,
    PostingFacts,
    SkillInfo,
    find_rules,
    format_money,
    overall_score,
    score_posting,
)
from normalize.skills import load_taxonomy

TAXONOMY = load_taxonomy()
INFO = {s.name: SkillInfo(s.category, s.parent, s.frontier) for s in TAXONOMY.skills}
FRONTIER = sorted(name for name, s in INFO.items() if s.frontier)
EMPTY = Market()
# 杭州 · 人工智能 has 5 salaries (enough), 北京 · 人工智能 3 (too few: the category's 8 are used).
MARKET = Market.build(
    [("人工智能", "杭州", "CNY", v) for v in (20000, 30000, 40000, 50000, 60000)]
    + [("人工智能", "北京", "CNY", v) for v in (10000, 20000, 30000)]
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


def test_overall_rounds_half_up_and_needs_every_dimension():
    assert overall_score({"pay": 71, "growth": 70, "worklife": 70, "mission": 70}) == 70  # 70.35
    assert overall_score({"pay": 70, "growth": 72, "worklife": 70, "mission": 70}) == 71  # 70.5
    assert overall_score({"pay": 70, "growth": 70, "worklife": 70}) is None


# Source (the app's own) and ours, on a corpus too small for peers (the seeds alone).
SEEDS = {
    "000": {"source": (72, 70, 90, 50, 75), "ours": (72, 64, 97, 50, 78),
            "levels": {"pay": "中等", "growth": "较高", "worklife": "较低", "mission": "中等"}},
    "003": {"source": (78, 85, 90, 50, 80), "ours": (75, 81, 83, 50, 79),
            "levels": {"pay": "较高", "growth": "较高", "worklife": "较低", "mission": "中等"}},
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
        ("core", "核心", 3), ("hard_problems", "极致", 3), ("ownership", "全链路", 3), ("cap", None, -3.0)]
    lead = ev.evidence["growth"][3]
    assert (lead["section"], lead["snippet"]) == ("responsibilities", "主导跨团队大模型训练")
    assert ev.evidence["growth"][1]["count"] == 17 and ev.evidence["growth"][1]["points"] == 20.0
    assert rules_fired(ev, "worklife") == [("base", None, 50.0), ("work_mode", None, 0.0)]
    assert rules_fired(ev, "mission") == [("base", None, 50.0), ("autonomous_driving", "智能驾驶", 15), ("ai", "人工智能", 3.0),
                                          ("smart_vehicle", "智能座舱", 3.0), ("cutting_edge", "前瞻", 4), ("new_tech", None, 3.0)]
    assert ev.evidence["overall"] == [{"rule": "weighted_mean", "weights": WEIGHTS, "value": 72.25}]


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
    assert ev.summary == "智能驾驶方向技术岗，成长空间大，但工作生活信息不足。"
    assert ev.notes == []  # the source states its own counts and comparison: nothing to fill in


# --------------------------------------------------------------------------- pay


def pay_of(**kw):
    facts = PostingFacts(category="人工智能", salary_status="parsed", currency="CNY", **kw)
    return score_posting(facts, MARKET, {})


@pytest.mark.parametrize("kw, score, signal", [
    pytest.param(dict(city="杭州", monthly_min=40000, monthly_max=40000), 73,
                 "市场水准 (4万/月，杭州人工智能第50百分位，中位数4万，5个样本)", id="city-median-72.5-rounds-up"),
    pytest.param(dict(city="北京", monthly_min=40000, monthly_max=40000), 79,
                 "市场水准 (4万/月，人工智能第69百分位，中位数3万，8个样本)", id="city-too-small-category-used"),
    pytest.param(dict(city="杭州", monthly_min=60000, monthly_max=80000, months=14), 95,
                 "高于市场 (7万/月，杭州人工智能第100百分位，中位数4万，5个样本)", id="top-of-market-14-months"),
    pytest.param(dict(city="杭州", monthly_min=10000, monthly_max=10000,
                      tags=("年终奖", "股票期权", "五险一金", "补充医疗", "餐补", "签字费", "定期调薪")), 65,
                 "低于市场 (1万/月，杭州人工智能第0百分位，中位数4万，5个样本)", id="bottom-benefits-capped-at-10"),
    pytest.param(dict(city="杭州", salary_raw="面议", monthly_min=None), 50, "未明确", id="negotiable-neutral"),
    pytest.param(dict(city="杭州", monthly_min=3000, monthly_max=40000, salary_implausible=True), 50, "未明确",
                 id="implausible-range-not-used"),
])
def test_pay_percentile_among_peers(kw, score, signal):
    ev = pay_of(**kw)
    assert (ev.pay, ev.signals["pay"][0].value) == (score, signal)


def test_pay_falls_back_to_the_sources_statement_then_to_neutral():
    small = dict(category="算法", city="杭州", salary_status="parsed", currency="CNY", monthly_min=40000, monthly_max=40000)
    above = score_posting(PostingFacts(**small, compare_raw="比算法中位数高", vs_median="above"), MARKET, {})
    assert (above.pay, above.signals["pay"][0].value) == (81, "比算法中位数高（来源说明；库内同类样本不足）")
    neutral = score_posting(PostingFacts(**small), MARKET, {})
    assert (neutral.pay, neutral.signals["pay"][0].value) == (50, "4万/月（样本不足，无法与同类比较）")
    assert [e["rule"] for e in neutral.evidence["pay"]] == ["peers_too_small", "peers_too_small", "no_comparison"]


def test_pay_uses_a_plausible_source_signal_when_the_posting_states_no_salary():
    facts = PostingFacts(category="人工智能", city="杭州", signal_raw="市场水准 (35K-50K/月)", signal_min=35000,
                         signal_max=50000, signal_currency="CNY", signal_period="month")
    ev = score_posting(facts, MARKET, {})
    assert ev.pay == 76  # midpoint 42,500, above 3 of the 5: percentile 60 → 55 + 0.35 × 60
    assert ev.evidence["pay"][0] == {"rule": "source_salary_signal", "text": "市场水准 (35K-50K/月)", "estimated": False,
                                     "points": 0}


def test_market_fills_the_derived_texts_only_where_the_source_lacks_them():
    market = Market.build([("人工智能", "杭州", "CNY", v) for v in (20000, 30000, 40000, 50000, 60000)],
                          [("某公司", "杭州", "人工智能", 3), ("某公司", "上海", "机器人", 2), ("别家", "杭州", "人工智能", 4)])
    ev = score_posting(PostingFacts(category="人工智能", city="杭州", company="某公司", salary_status="parsed",
                                    currency="CNY", monthly_min=30000, monthly_max=30000), market, {})
    assert ev.notes == ["薪资：比杭州人工智能中位数低（库内5个样本）", "公司情况：库内 5 个在招 · 其中人工智能 3 个",
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
        "scope": "city+category", "key": "杭州 · 人工智能", "currency": "CNY", "n": 5, "p25": 30000.0, "median": 40000.0,
        "p75": 50000.0}
    assert rows[("city+category", "北京 · 人工智能")]["n"] == 3 and rows[("city+category", "北京 · 人工智能")]["median"] is None
    assert rows[("category", "人工智能")]["median"] == 30000.0 and rows[("category", "人工智能")]["p75"] == 42500.0


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
                 [("base", None, 50.0), ("frontier_skill", None, 10.0), ("frontier_category", None, 6.0)],
                 id="two-frontier-skills-two-categories"),
    pytest.param(dict(title="资深算法工程师"), 55, [("base", None, 50.0), ("seniority", None, 5.0)], id="senior-title"),
    pytest.param(dict(title="算法实习生"), 45, [("base", None, 50.0), ("seniority", None, -5.0)], id="intern"),
    pytest.param(dict(experience_min_years=5), 55, [("base", None, 50.0), ("seniority", None, 5.0)], id="five-years"),
    pytest.param(dict(sections={"responsibilities": ["主导推理引擎从0到1的架构设计"]}), 59,
                 [("base", None, 50.0), ("lead", "主导", 3), ("architecture", "架构设计", 3), ("zero_to_one", "从0到1", 3)],
                 id="scope-words-in-duties"),
    pytest.param(dict(sections={"requirements": ["主导过大型项目，有架构经验"]}), 50, [("base", None, 50.0)],
                 id="scope-words-in-requirements-are-the-candidates-past"),
    pytest.param(dict(sections={"about": ["工作内容重复性较高"]}), 45, [("base", None, 50.0), ("routine", "重复性", -5)],
                 id="routine-work"),
])
def test_growth_rules(kw, score, fired):
    ev = growth_of(**kw)
    assert (ev.growth, rules_fired(ev, "growth")) == (score, fired)


@pytest.mark.parametrize("lines, mode, score", [
    pytest.param([], None, 50, id="nothing-known"),
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
    pytest.param(["参与第996号项目，编号996"], None, 50, id="996-as-a-number-is-not-a-rule"),
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
    assert ev.evidence["worklife"][-1] == {"rule": "unknown", "text": "未明确", "points": 0}


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


@settings(max_examples=300, deadline=None)
@given(facts=FACTS, market=SALARY_MARKETS)
def test_every_score_stays_in_0_100(facts, market):
    ev = score_posting(facts, market, INFO)
    assert all(0 <= s <= 100 for s in _scores(ev))
    assert set(ev.levels) == set(DIMENSIONS) and all(ev.explanations[d].endswith("。") for d in DIMENSIONS)


@settings(max_examples=300, deadline=None)
@given(facts=FACTS, market=SALARY_MARKETS, low=st.floats(1000, 200000), rise=st.floats(0, 100000))
def test_a_higher_salary_never_lowers_pay(facts, market, low, rise):
    def pay(value: float) -> int:
        f = PostingFacts(**{**_fields(facts), "salary_status": "parsed", "currency": "CNY",
                            "salary_implausible": False, "monthly_min": value, "monthly_max": value})
        return score_posting(f, market, INFO).pay

    assert pay(low) <= pay(low + rise)


@settings(max_examples=300, deadline=None)
@given(facts=FACTS)
def test_adding_996_never_raises_worklife(facts):
    sections = {k: list(v) for k, v in facts.sections.items()}
    sections.setdefault("about", []).append("996")
    more = PostingFacts(**{**_fields(facts), "sections": sections})
    assert score_posting(more, EMPTY, INFO).worklife <= score_posting(facts, EMPTY, INFO).worklife


@settings(max_examples=300, deadline=None)
@given(facts=FACTS, skill=st.sampled_from(FRONTIER))
def test_adding_a_frontier_skill_never_lowers_growth(facts, skill):
    assume(skill not in facts.skills)
    more = PostingFacts(**{**_fields(facts), "skills": facts.skills + (skill,)})
    assert score_posting(more, EMPTY, INFO).growth >= score_posting(facts, EMPTY, INFO).growth


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
