"""The sentences of a ``jobcrawl-v1`` evaluation (summary, notes, explanations, signals), made from its scores
and evidence alone (:func:`render_evaluation`): the scorer gives them so, and a stored row, which keeps only
scores and evidence, reads them back so."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from ..models import DIMENSION_LABELS, DIMENSIONS, HIDDEN_COMPANY
from .facts import FRONTIER_CATEGORIES, MODE_LABELS, PostingFacts, format_money, monthly
from .market import SAMPLE_TOO_SMALL
from .rules import GROWTH_SECTORS, INSUFFICIENT, POSITIVE_SECTORS, RULE_BY_NAME

FACT_RULES = frozenset({"stack", "scope_clauses", "business"})
"""Evidence entries of 0 points that keep a fact only the sentences name (the growth signals show them)."""


class Prose(NamedTuple):
    """An evaluation's sentences: what :func:`render_evaluation` gives."""

    summary: str
    notes: list[str]
    explanations: dict[str, str]
    signals: dict[str, list[tuple[str, str]]]  # (key, value) by dimension


def compare_text(value: float, median: float, key: str) -> str:
    """``比人工智能中位数低`` / ``与人工智能中位数持平`` (the app's wording) from a value and its peers' median."""
    if value == median:
        return f"与{key}中位数持平"
    return f"比{key}中位数{'低' if value < median else '高'}"


def _labels(names: Iterable[str]) -> str:
    return "、".join(dict.fromkeys(RULE_BY_NAME[n].label for n in names))


def _words(evidence: Sequence[dict], dim: str, group: str) -> list[dict]:
    """The word-rule entries of one rule group, in evidence order."""
    return [e for e in evidence if e["rule"] in RULE_BY_NAME and RULE_BY_NAME[e["rule"]].dim == dim
            and RULE_BY_NAME[e["rule"]].group == group]


def _sentence(parts: Sequence[str], score: int | None) -> str:
    text = "，".join(p for p in parts if p) + "。"
    return f"{INSUFFICIENT}：{text}" if score is None else text


def _pay_prose(evidence: Sequence[dict], f: PostingFacts) -> tuple[list[tuple[str, str]], list[str]]:
    by = {e["rule"]: e for e in evidence}
    value, currency, _, _ = monthly(f)
    parts: list[str] = []
    if e := by.get("salary_percentile"):
        value, currency, p, median = e["monthly"], e["currency"], e["percentile"], e["median"]
        label = e["key"].replace(" · ", "")
        level = "高于市场" if p >= 75 else "低于市场" if p < 25 else "市场水准"
        signal = (f"{level} ({format_money(value, currency)}/月，{label}第{p:.0f}百分位，"
                  f"中位数{format_money(median, currency)}，{e['n']}个样本)")
        parts.append(f"月薪{format_money(value, currency)}，{compare_text(value, median, label)}"
                     f"（{label}同类{e['n']}个岗位的第{p:.0f}百分位）")
    elif e := by.get("source_compare"):
        signal = f"{e['text']}（来源说明；库内同类样本不足）"
        money = f"月薪{format_money(value, currency)}，" if value is not None else ""
        parts.append(f"{money}{e['text']}（来源说明，库内同类样本不足）")
    elif "salary_unknown" in by or value is None:
        signal = "未明确"
        parts.append("薪资未明确")
    else:
        small = [e for e in evidence if e["rule"] == "peers_too_small"]
        groups = "、".join(f"{e['key'].replace(' · ', '')}{e['n']}个" for e in small)
        why = f"{SAMPLE_TOO_SMALL}（{groups}，少于{small[0]['min']}个）" if groups else "类别未知，无同类可比"
        signal = f"{format_money(value, currency)}/月（{why}）"
        parts.append(f"月薪{format_money(value, currency)}，{why}，无法判断高低")
    if e := by.get("months"):
        parts.append(e["text"])
    benefits = [e["rule"] for e in _words(evidence, "pay", "benefit")]
    parts.append(f"提及{_labels(benefits)}等福利" if benefits else "JD未明确提及具体福利项目")
    return [("薪资信号", signal)], parts


def _growth_prose(evidence: Sequence[dict], score: int | None) -> tuple[list[tuple[str, str]], list[str]]:
    by = {e["rule"]: e for e in evidence}
    frontier = by.get("frontier_skill")
    stack = by["stack"]["skills"] if "stack" in by else []
    count = frontier["count"] if frontier else 0
    tech = "前沿/新兴技术" if count >= 2 else "涉及新兴技术" if count else "成熟/主流技术" if stack else "未明确"
    signals = [("技术前沿", tech), ("技术栈", "、".join(stack) if stack else "未明确")]
    if "scope_clauses" in by:
        signals.append(("成长机会", "、".join(by["scope_clauses"]["clauses"])))
    business = by["business"]["kinds"] if "business" in by else []
    signals.append(("业务类型", "ToB/ToC" if len(business) == 2 else RULE_BY_NAME[business[0]].label if business else "ambiguous"))

    scope = [e["rule"] for e in _words(evidence, "growth", "scope")]
    parts = []
    if frontier:
        parts.append(f"涉及{'、'.join(frontier['skills'][:3])}等{count}项前沿技术")
    if e := by.get("frontier_category"):
        parts.append(f"覆盖{'、'.join(FRONTIER_CATEGORIES[c] for c in e['categories'])}方向")
    if scope:
        parts.append(f"职责含{_labels(scope)}等范围信号")
    if e := by.get("seniority"):
        parts.append(f"岗位级别：{e['text']}")
    if "routine" in by:
        parts.append("工作内容重复性较高")
    if not parts:
        parts.append("JD未体现前沿技术或职责范围信号，成长空间无法判断")
    tail = "" if score is None else "技能成长空间大" if score >= 80 else "有一定成长空间" if score >= 60 else ""
    if tail:
        parts.append(tail)
    return signals, parts


def _worklife_prose(evidence: Sequence[dict], f: PostingFacts) -> tuple[list[tuple[str, str]], list[str]]:
    by = {e["rule"]: e for e in evidence}
    mode = by["work_mode"]["mode"] if "work_mode" in by else None
    bad = [e["rule"] for e in _words(evidence, "worklife", "overtime-")]
    good = [e["rule"] for e in _words(evidence, "worklife", "overtime+")]
    place = " · ".join(p for p in (f.city, f.district) if p) or "未明确"
    overtime = "；".join(p for p in (f"有加班迹象（{_labels(bad)}）" if bad else "",
                                     f"作息友好（{_labels(good)}）" if good else "") if p) or "未提及（无法判断）"
    signals = [("工作模式", f.work_mode or (MODE_LABELS[mode] if mode else "未明确")), ("办公地点", place),
               ("加班情况", overtime)]
    parts = []
    if mode:
        parts.append(f"工作模式为{f.work_mode or MODE_LABELS[mode]}")
    if bad:
        parts.append(f"JD提及{_labels(bad)}，工作强度可能较高")
    if good:
        parts.append(f"提及{_labels(good)}")
    if not bad and not good:
        parts.append("JD未提及工作时间、加班或弹性工时等WLB信息，无法判断工作节奏")
    return signals, parts


def _mission_prose(evidence: Sequence[dict]) -> tuple[list[tuple[str, str]], list[str]]:
    sectors = _words(evidence, "mission", "sector")
    harm = [e["rule"] for e in _words(evidence, "mission", "harm")]
    innovation = [e["rule"] for e in _words(evidence, "mission", "innovation")]
    frontier = any(e["rule"] == "new_tech" for e in evidence)
    names = {e["rule"] for e in sectors}
    industry = "高速增长赛道" if names & GROWTH_SECTORS else "稳定发展行业" if sectors else "未明确"
    impact = "存在争议" if harm else "正向社会影响力较高" if names & POSITIVE_SECTORS else "中性/一般"
    novelty = ("开拓性创新（行业首创）" if "first_of_kind" in innovation else
               "积极采用新技术" if innovation or frontier else "未明确")
    signals = [("行业发展", industry), ("社会影响", impact), ("创新程度", novelty)]
    parts = []
    if sectors:
        parts.append(f"岗位属于{'、'.join(dict.fromkeys(e['matched'] for e in sectors))}方向" + ("，处于高速增长赛道" if names & GROWTH_SECTORS else ""))
    if harm:
        parts.append(f"涉及{_labels(harm)}，社会评价存在争议")
    if innovation:
        parts.append(f"JD提及{_labels(innovation)}")
    if frontier:
        parts.append("积极采用新技术")
    if not parts:
        parts.append("JD未体现行业方向或创新信号，使命价值无法判断")
    return signals, parts


STRONG = {"pay": "薪资有竞争力", "growth": "成长空间大", "worklife": "工作生活较平衡", "mission": "使命价值高"}
WEAK = {"pay": "薪资偏低", "growth": "成长信号有限", "worklife": "工作生活信号有限", "mission": "使命信号有限"}
NEGATIVE = {"worklife": ("overtime-", "WLB可能受限"), "mission": ("harm", "使命存在争议"), "growth": ("", "成长空间有限")}


def _weak(dim: str, evidence: Sequence[dict]) -> str:
    """The weak word of a known dimension below 60: stronger when a negative rule fired."""
    group, text = NEGATIVE.get(dim, ("", ""))
    fired = any(e.get("points", 0) < 0 and e["rule"] in RULE_BY_NAME and RULE_BY_NAME[e["rule"]].group == group
                for e in evidence) if text else False
    return text if fired else WEAK[dim]


def _summary(f: PostingFacts, scores: Mapping[str, int | None], evidence: Mapping[str, Sequence[dict]]) -> str:
    """``AI算子开发工程师（吉利汽车）：智能驾驶方向技术岗，成长空间大，但工作生活信号有限。``"""
    subject = (f.title or "职位") + (f"（{f.company}）" if f.company else HIDDEN_COMPANY)
    sectors = _words(evidence.get("mission") or [], "mission", "sector")
    tech = any(e["rule"] == "stack" for e in evidence.get("growth") or [])
    head = (f"{sectors[0]['matched']}方向" if sectors else (f"{f.category}" if f.category else "")) + ("技术岗" if tech else "岗位")
    known = {d: scores[d] for d in DIMENSIONS if scores[d] is not None}
    strong = [STRONG[d] for d, v in known.items() if v >= 80]
    weak = [_weak(d, evidence.get(d) or []) for d, v in known.items() if v < 60]
    unknown = [DIMENSION_LABELS[d] for d in DIMENSIONS if d not in known]
    if known and not strong and not weak:
        strong = ["各项中等"]
    text = head + ("，" + "、".join(strong) if strong else "")
    if weak:
        text += ("，但" if strong else "，") + "、".join(weak)
    if unknown:
        text += f"；{'、'.join(unknown)}{INSUFFICIENT}"
    return f"{subject}：{text}。"


def _notes(f: PostingFacts, evidence: Sequence[dict]) -> list[str]:
    """The derived texts of the market evidence that the posting itself lacks."""
    notes = []
    for e in evidence:
        if e["rule"] == "salary_compare" and not e["source"]:
            notes.append(f"薪资：{e['text']}（库内{e['n']}个样本）")
        elif e["rule"] == "company_open" and e["source_open"] is None and e["corpus_open"]:
            m = e["corpus_open_in_category"]
            notes.append(f"公司情况：库内 {e['corpus_open']} 个在招" + (f" · 其中{f.category} {m} 个" if m else ""))
        elif e["rule"] == "city_category_open" and e["source_open"] is None and e["corpus_open"]:
            notes.append(f"市场机会：{e['key']} · 库内 {e['corpus_open']} 个在招")
    return notes


def render_evaluation(scores: Mapping[str, int | None], evidence: Mapping[str, Sequence[dict]],
                      facts: PostingFacts) -> Prose:
    """The sentences of a ``jobcrawl-v1`` evaluation from its dimension scores, its evidence (as
    :func:`normalize.evaluation.unpack_evidence` reads it back) and the posting's facts (title, company, city,
    district, category, work mode, salary): what :func:`score_posting` gives and what a stored row, which keeps
    only scores and evidence, reads back as."""
    signals, explanations = {}, {}
    for dim in DIMENSIONS:
        ev = evidence.get(dim) or []
        if dim == "pay":
            signals[dim], parts = _pay_prose(ev, facts)
        elif dim == "growth":
            signals[dim], parts = _growth_prose(ev, scores[dim])
        elif dim == "worklife":
            signals[dim], parts = _worklife_prose(ev, facts)
        else:
            signals[dim], parts = _mission_prose(ev)
        explanations[dim] = _sentence(parts, scores[dim])
    return Prose(_summary(facts, scores, evidence), _notes(facts, evidence.get("market") or []), explanations, signals)


