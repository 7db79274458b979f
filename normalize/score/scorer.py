"""Scorer ``jobcrawl-v1``: :func:`score_posting` turns a posting's facts, the market and its skills' facts into
an :class:`~normalize.models.Evaluation`: four dimensions 0–100 (pay, growth, work-life, mission) and the weighted
overall, each with a level, evidence (one entry per rule that fired) and sentences; a dimension below its evidence
minimum has no score and the level 信息不足. :func:`score_inputs` digests everything a score depends on."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from pydantic import TypeAdapter

from ..models import DIMENSIONS, Evaluation, Signal
from ..posting import level_for
from .facts import FRONTIER_CATEGORIES, PostingFacts, SkillInfo, monthly, round_half_up, salary_range, work_mode_kind
from .market import Market, SalaryGroup, peer_key
from .render import Prose, compare_text, render_evaluation
from .rules import INSUFFICIENT, RULE_ORDER, Hit, find_rules

SCORER = "jobcrawl-v1"
SCORER_VERSION = "4"
"""Version of these rules: part of every score's inputs, so a new version scores every posting again."""
WEIGHTS = {"pay": 0.35, "growth": 0.25, "worklife": 0.20, "mission": 0.20}
"""Weights of the overall score; they reproduce the app's overall from its dimensions on both seeds."""
PAY_BASE, PAY_SLOPE, NEUTRAL = 55.0, 0.35, 50.0
COMPARE_PERCENTILE = {"below": 25.0, "equal": 50.0, "above": 75.0}
MONTHS_POINTS = ((16, 8.0), (15, 6.0), (14, 5.0), (13, 3.0))
CAPS = {"benefit": 10.0, "frontier_skill": 20.0, "frontier_category": 12.0, "scope": 15.0, "sector": 24.0,
        "innovation": 12.0}
STACK_SIZE = 9
MODE_POINTS = {"remote": 15.0, "hybrid": 8.0, "onsite": 0.0}
_SENIOR = re.compile(r"资深|高级|专家|架构师|负责人|主管|总监|首席|leader|lead\b|senior|staff|principal|head of|\bsr\.?\b", re.I)
_JUNIOR = re.compile(r"实习|助理|初级|应届|校招|管培|intern|junior|assistant|trainee|graduate", re.I)


def _clamp(x: float) -> int:
    return max(0, min(100, round_half_up(x)))


def overall_score(scores: Mapping[str, int | None], weights: Mapping[str, float] = WEIGHTS) -> int | None:
    """Weighted mean of the known dimension scores (weights divided by the weight known), rounded half up;
    None when fewer than two are known."""
    known = {d: w for d, w in weights.items() if scores.get(d) is not None}
    if len(known) < 2:
        return None
    return round_half_up(sum(w * scores[d] for d, w in known.items()) / sum(known.values()))


def completeness(scores: Mapping[str, int | None], weights: Mapping[str, float] = WEIGHTS) -> float:
    """The share of the overall's weight whose dimension is known (0–1)."""
    return round(sum(w for d, w in weights.items() if scores.get(d) is not None) / sum(weights.values()), 2)


def _pts(x: float) -> float:
    return round(x, 2)


def _word_evidence(hit: Hit, points: float) -> dict[str, Any]:
    return {"rule": hit.rule.name, "matched": hit.matched, "section": hit.section, "snippet": hit.snippet,
            "points": _pts(points)}


def _capped(hits: Mapping[str, Hit], dim: str, group: str, evidence: list[dict]) -> list[Hit]:
    """Evidence for the hits of one rule group with its cap; returns the group's hits in rule order."""
    fired = [h for name, h in hits.items() if h.rule.dim == dim and h.rule.group == group]
    fired.sort(key=lambda h: RULE_ORDER[h.rule.name])
    total = 0.0
    for h in fired:
        evidence.append(_word_evidence(h, h.rule.points))
        total += h.rule.points
    cap = CAPS.get(group)
    if cap is not None and total > cap:
        evidence.append({"rule": "cap", "group": group, "cap": cap, "points": _pts(cap - total)})
    return fired


class _Dim(NamedTuple):
    score: int | None  # None: the evidence does not meet the dimension's minimum (信息不足)
    evidence: list[dict]


def _finish(evidence: list[dict], known: bool = True) -> _Dim:
    if not known:
        evidence.append({"rule": "insufficient", "text": INSUFFICIENT, "points": 0})
        return _Dim(None, evidence)
    return _Dim(_clamp(sum(e.get("points", 0) for e in evidence)), evidence)


_SIGNALS = TypeAdapter(dict[str, list[Signal]])
"""Validates every dimension's signals in one call (cheaper than a ``Signal(...)`` call per signal)."""


def _pay(f: PostingFacts, market: Market, hits: Mapping[str, Hit]) -> tuple[_Dim, SalaryGroup | None, float | None]:
    value, currency, text, evidence = monthly(f)
    group = None
    if value is not None:
        group, tried = market.peers(f.city, f.category, currency)
        evidence.extend(tried)
    if value is not None and group is not None:
        p25, median, p75 = group.quartiles
        evidence.append({"rule": "base", "points": PAY_BASE})
        p = group.percentile(value)
        evidence.append({"rule": "salary_percentile", "text": text, "monthly": _pts(value), "scope": group.scope,
                         "key": group.key, "currency": group.currency, "n": group.n, "p25": p25, "median": median,
                         "p75": p75, "percentile": round(p, 6), "points": _pts(PAY_SLOPE * p)})
    elif f.vs_median in COMPARE_PERCENTILE:
        p = COMPARE_PERCENTILE[f.vs_median]
        evidence.append({"rule": "base", "points": PAY_BASE})
        evidence.append({"rule": "source_compare", "text": f.compare_raw, "vs_median": f.vs_median,
                         "assumed_percentile": p, "points": _pts(PAY_SLOPE * p)})
    else:
        evidence.append({"rule": "salary_unknown" if value is None else "no_comparison", "text": text or "未明确",
                         "points": 0})
    for months, points in MONTHS_POINTS:
        if f.months >= months:
            evidence.append({"rule": "months", "text": f"{f.months}薪", "months": f.months, "points": points})
            break
    _capped(hits, "pay", "benefit", evidence)
    known = group is not None and value is not None or f.vs_median in COMPARE_PERCENTILE
    return _finish(evidence, known), group, value


def _seniority(f: PostingFacts) -> tuple[float, str] | None:
    for text in (f.seniority, f.title):
        if not text:
            continue
        if m := _JUNIOR.search(text):
            return -5.0, m.group()
        if m := _SENIOR.search(text):
            return 5.0, m.group()
    if f.experience_min_years is not None and f.experience_min_years >= 5:
        return 5.0, f"{f.experience_min_years:g}年以上经验"
    return None


class _SkillFacts(NamedTuple):
    frontier: list[str]  # frontier skills, in posting order
    categories: list[str]  # frontier categories present, in order of first skill
    stack: list[str]  # technical skills (not soft, not domain), in posting order


def _skill_facts(f: PostingFacts, info: Mapping[str, SkillInfo]) -> _SkillFacts:
    frontier, categories, stack = [], [], []
    for s in f.skills:
        si = info.get(s)
        if si is None:
            continue
        if si.frontier:
            frontier.append(s)
        if si.category in FRONTIER_CATEGORIES and si.category not in categories:
            categories.append(si.category)
        if si.category not in ("soft", "domain"):
            stack.append(s)
    return _SkillFacts(frontier, categories, stack)


def _growth(f: PostingFacts, sk: _SkillFacts, hits: Mapping[str, Hit]) -> _Dim:
    """Growth's evidence, with three facts its sentences name at 0 points: the technical stack (``stack``), the
    clauses its scope words stand in (``scope_clauses``) and the business type (``business``)."""
    evidence: list[dict] = [{"rule": "base", "points": NEUTRAL}]
    frontier, cats = sk.frontier, sk.categories
    if frontier:
        evidence.append({"rule": "frontier_skill", "skills": frontier[:8], "count": len(frontier),
                         "points": _pts(min(5.0 * len(frontier), CAPS["frontier_skill"]))})
    if cats:
        evidence.append({"rule": "frontier_category", "categories": cats,
                         "points": _pts(min(3.0 * len(cats), CAPS["frontier_category"]))})
    scope = _capped(hits, "growth", "scope", evidence)
    if "routine" in hits:
        evidence.append(_word_evidence(hits["routine"], hits["routine"].rule.points))
    level = _seniority(f)
    if level:
        evidence.append({"rule": "seniority", "text": level[1], "points": level[0]})
    if sk.stack:
        evidence.append({"rule": "stack", "skills": sk.stack[:STACK_SIZE], "points": 0})
    if scope:
        evidence.append({"rule": "scope_clauses", "clauses": list(dict.fromkeys(h.clause for h in scope[:3])),
                         "points": 0})
    business = [n for n in ("to_b", "to_c") if n in hits]
    if business:
        evidence.append({"rule": "business", "kinds": business, "points": 0})
    return _finish(evidence, _has_jd(f) or bool(frontier))


NOT_JD = frozenset({"benefits", "compensation"})


def _has_jd(f: PostingFacts) -> bool:
    """The posting has JD text: a section other than benefits and pay, or a description."""
    return bool(f.description and f.description.strip()) or any(k not in NOT_JD and v for k, v in f.sections.items())


def _worklife(f: PostingFacts, hits: Mapping[str, Hit]) -> _Dim:
    evidence: list[dict] = [{"rule": "base", "points": NEUTRAL}]
    mode = work_mode_kind(f.work_mode, hits)
    if mode:
        source = f.work_mode or hits["hybrid_text" if mode == "hybrid" else "remote_text"].matched
        evidence.append({"rule": "work_mode", "mode": mode, "text": source, "points": MODE_POINTS[mode]})
    bad = _capped(hits, "worklife", "overtime-", evidence)
    good = _capped(hits, "worklife", "overtime+", evidence)
    if not mode and not bad and not good:
        evidence.append({"rule": "unknown", "text": "未明确", "points": 0})
    return _finish(evidence, bool(mode or bad or good))


def _mission(sk: _SkillFacts, hits: Mapping[str, Hit]) -> _Dim:
    evidence: list[dict] = [{"rule": "base", "points": NEUTRAL}]
    sectors = sorted((h for h in hits.values() if h.rule.dim == "mission" and h.rule.group == "sector"),
                     key=lambda h: (-h.rule.points, RULE_ORDER[h.rule.name]))
    total = 0.0
    for i, h in enumerate(sectors):
        points = h.rule.points if i == 0 else 3.0
        evidence.append(_word_evidence(h, points))
        total += points
    if total > CAPS["sector"]:
        evidence.append({"rule": "cap", "group": "sector", "cap": CAPS["sector"], "points": _pts(CAPS["sector"] - total)})
    harm = _capped(hits, "mission", "harm", evidence)
    innovation = _capped(hits, "mission", "innovation", evidence)
    if sk.frontier:
        evidence.append({"rule": "new_tech", "skills": sk.frontier[:5], "points": 3.0})
    return _finish(evidence, bool(sectors or harm or innovation or sk.frontier))


def _market(f: PostingFacts, market: Market, group: SalaryGroup | None, value: float | None) -> list[dict]:
    """Evidence of the derived texts the app shows (比X中位数低, 约 N 个在招), from the corpus."""
    evidence = []
    if group is not None and value is not None:
        median = group.quartiles[1]
        evidence.append({"rule": "salary_compare", "text": compare_text(value, median, group.label),
                         "scope": group.scope, "n": group.n, "median": median, "source": f.compare_raw})
    if f.company:
        evidence.append({"rule": "company_open", "company": f.company, "corpus_open": market.company_open.get(f.company, 0),
                         "corpus_open_in_category": market.company_category_open.get((f.company, f.category), 0)
                         if f.category else None, "source_open": f.company_open_jobs})
    if f.city and f.category:
        evidence.append({"rule": "city_category_open", "key": peer_key(f.city, f.category),
                         "corpus_open": market.city_category_open.get((f.city, f.category), 0),
                         "source_open": f.market_open_jobs})
    return evidence


def score_posting(facts: PostingFacts, market: Market, taxonomy_info: Mapping[str, SkillInfo], *,
                  rendered: bool = True) -> Evaluation:
    """Score one posting (scorer ``jobcrawl-v1``); see the module docstring. ``rendered=False``: without the
    sentences (summary, notes, explanations, signals: empty), which a stored row does not keep."""
    hits = find_rules(facts.lines())
    sk = _skill_facts(facts, taxonomy_info)
    pay, group, value = _pay(facts, market, hits)
    dims = {"pay": pay, "growth": _growth(facts, sk, hits), "worklife": _worklife(facts, hits),
            "mission": _mission(sk, hits)}
    scores = {d: dims[d].score for d in DIMENSIONS}
    evidence = {d: dims[d].evidence for d in DIMENSIONS}
    overall, share = overall_score(scores), completeness(scores)
    known = {d: w for d, w in WEIGHTS.items() if scores[d] is not None}
    evidence["overall"] = [{"rule": "weighted_mean", "weights": WEIGHTS, "known": sorted(known, key=DIMENSIONS.index),
                            "completeness": share,
                            "value": _pts(sum(w * scores[d] for d, w in known.items()) / sum(known.values()))
                            if len(known) >= 2 else None}]
    evidence["market"] = _market(facts, market, group, value)
    levels = {d: level_for(scores[d]) or INSUFFICIENT for d in DIMENSIONS}
    levels["overall"] = level_for(overall) or INSUFFICIENT
    prose = render_evaluation(scores, evidence, facts) if rendered else Prose(None, [], {}, {})
    # model_construct: every field is given and built here, already valid
    return Evaluation.model_construct(
        scorer=SCORER,
        overall=overall,
        **scores,
        levels=levels,
        completeness=share,
        summary=prose.summary,
        notes=prose.notes,
        explanations=prose.explanations,
        signals=_SIGNALS.validate_python({d: [{"key": k, "value": v} for k, v in pairs]
                                          for d, pairs in prose.signals.items()}),
        evidence=evidence,
        problems=[],
    )


# --------------------------------------------------------------------------- what a score depends on


def _market_inputs(f: PostingFacts, market: Market) -> list:
    """The market figures the rules read for this posting: its peer groups, its company's and city + category's open postings."""
    pay, _ = salary_range(f)
    figures: list = []
    if pay is not None:
        group, tried = market.peers(f.city, f.category, pay.currency)
        figures.append([[t.get("scope"), t.get("key"), t.get("n")] for t in tried])
        if group is not None:
            figures.append([group.scope, group.key, group.currency, group.n, group.digest])
    if f.company:
        figures.append([market.company_open.get(f.company, 0),
                        market.company_category_open.get((f.company, f.category), 0) if f.category else None])
    if f.city and f.category:
        figures.append(market.city_category_open.get((f.city, f.category), 0))
    return figures


def score_inputs(facts: PostingFacts, market: Market | None, taxonomy_info: Mapping[str, SkillInfo],
                 version: str = f"{SCORER}/{SCORER_VERSION}", extra: Any = None) -> int:
    """A digest (a signed 64-bit integer: the first 8 bytes of a SHA-256, big-endian) of everything an evaluation of ``facts`` depends on: the facts, the taxonomy
    facts of its skills, the market figures it reads (``market``: None for a scorer that reads none), the
    scorer's ``version`` and ``extra`` (e.g. a profile). Equal digests, equal evaluations. The rules read
    no clock; a rule that reads a posting's age must add it (in whole weeks) to the inputs."""
    # The JSON of [version, facts, [[skill, its info], …], market figures, extra], each skill's part made once.
    skills = ",".join([_skill_json(s, taxonomy_info.get(s)) for s in facts.skills])
    text = (f"[{_JSON(version)},{_JSON([getattr(facts, name) for name in _FACT_FIELDS])},[{skills}],"
            f"{_JSON(_market_inputs(facts, market) if market is not None else None)},{_JSON(extra)}]")
    return digest_int(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())


@lru_cache(maxsize=8192)
def _skill_json(skill: str, info: SkillInfo | None) -> str:
    return _JSON([skill, info])


def digest_int(sha256: bytes) -> int:
    """The stored form of a digest: the first 8 bytes of ``sha256`` as a signed 64-bit integer (an SQLite integer)."""
    return int.from_bytes(sha256[:8], "big", signed=True)


_FACT_FIELDS = tuple(PostingFacts.__dataclass_fields__)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} in score inputs")


_JSON = json.JSONEncoder(ensure_ascii=False, default=_plain, separators=(",", ":")).encode
