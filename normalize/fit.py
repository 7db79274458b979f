"""Personal fit: how well a posting suits one person's profile (scorer ``fit:<profile name>``).

Pure. The profile (TOML, see ``seeds/profile.toml``) names skills I have and skills I want, the
cities I accept, a minimum monthly salary and the work modes I accept. The fit score 0–100 is the
weighted mean (``FIT_WEIGHTS``) of four parts, each 0–100, rounded half up:

- skills: of the posting's first ``CORE_SKILLS`` skills (taxonomy skills in order of first appearance, tags
  first — the ones it leads with; soft skills left out), the share my skills cover × 100 — a skill I
  have covers itself and its broader skills (``FlashAttention`` covers ``attention optimization``);
  + 10 for each skill I want that the posting has anywhere (at most + 20); capped at 100. A posting
  with no skills listed → 50.
- salary: its monthly range (:func:`normalize.score.salary_range`) against my floor: the
  lower bound reaches it → 100; only the upper bound → 80; below → 100 − 300 × shortfall / floor
  (0 from a third under); unknown or another currency → 50; no floor → 100.
- city: in my cities, or a remote posting → 100; unknown → 50; elsewhere → 0; no cities → 100.
- mode: 远程 / 混合 / 现场 in my work modes → 100; unknown → 50; otherwise 0; none listed → 100.

A posting the profile's blocklist (``[block]``, :mod:`normalize.blocklist`) matches has fit 0; its four
parts and their reasons are kept, and the rule that matched is its summary, its ``blocked`` evidence and
its ``blocked`` signal (key: the rule; value: the field and the text around the match).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .blocklist import Blocklist, BlocklistError
from .models import Evaluation, Signal
from .score import MODE_LABELS, PostingFacts, SkillInfo, format_money, round_half_up, salary_range, work_mode_kind
from .skills import Taxonomy

__all__ = ["FIT_VERSION", "FIT_WEIGHTS", "Profile", "FitProfile", "ProfileError", "load_profile", "score_fit"]

FIT_VERSION = "1"
"""Version of these rules: part of a fit score's inputs (normalize.score.score_inputs)."""
FIT_WEIGHTS = {"skills": 0.45, "salary": 0.25, "city": 0.15, "mode": 0.15}
CORE_SKILLS = 12
WANT_POINTS, WANT_CAP = 10, 20
SHOWN = 8


class ProfileError(ValueError):
    """The profile file is malformed; the message names the field at fault."""


class BlockSpec(BaseModel):
    """The ``[block]`` table: entries as written (plain text, or ``/regex/``)."""

    model_config = ConfigDict(extra="forbid")

    companies: list[str] = Field(default_factory=list, description="Companies I never want to see (the company name).")
    keywords: list[str] = Field(default_factory=list, description="Words that hide a posting (title, company, tags, JD text): 外包, 派遣.")


class Profile(BaseModel):
    """A profile as written in TOML."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=40, pattern=r"^[^:\s]+$", description="Profile name; the scorer is `fit:<name>`.")
    skills_have: list[str] = Field(default_factory=list, description="Skills I have: canonical names or any alias of the taxonomy.")
    skills_want: list[str] = Field(default_factory=list, description="Skills I want to work with or learn.")
    cities: list[str] = Field(default_factory=list, description="Cities I accept; empty: any.")
    min_monthly_salary: float | None = Field(None, ge=0, description="Lowest acceptable monthly base pay.")
    currency: str = Field("CNY", description="Currency of min_monthly_salary.")
    work_modes: list[str] = Field(default_factory=list, description="Acceptable work modes: 远程/remote, 混合/hybrid, 现场/onsite; empty: any.")
    block: BlockSpec = Field(default_factory=BlockSpec, description="Blocklists: postings hidden from fit, watches and the listing.")

    @field_validator("work_modes")
    @classmethod
    def _modes(cls, modes: list[str]) -> list[str]:
        out = []
        for mode in modes:
            kind = work_mode_kind(mode)
            if kind is None:
                raise ValueError(f"unknown work mode {mode!r} (远程/remote, 混合/hybrid, 现场/onsite)")
            out.append(kind)
        return out


@dataclass(frozen=True)
class FitProfile:
    """A profile with its skills resolved to canonical taxonomy names."""

    name: str
    have: tuple[str, ...]
    covers: frozenset[str]  # what I have and everything broader
    want: tuple[str, ...]
    cities: tuple[str, ...]
    min_monthly_salary: float | None
    currency: str
    work_modes: frozenset[str]
    unknown_skills: tuple[str, ...]  # written in the profile but not in the taxonomy
    blocklist: Blocklist = Blocklist()

    def inputs(self) -> tuple:
        """What a fit depends on besides the posting, as plain values (the scoring step's digest)."""
        return (self.name, self.have, sorted(self.covers), self.want, self.cities, self.min_monthly_salary,
                self.currency, sorted(self.work_modes), [rule.label for rule in self.blocklist.rules])

    @property
    def scorer(self) -> str:
        return f"fit:{self.name}"


def _resolve(names: list[str], taxonomy: Taxonomy) -> tuple[list[str], list[str]]:
    by_fold = {s.name.casefold(): s.name for s in taxonomy.skills}
    found, unknown = [], []
    for name in names:
        canonical = by_fold.get(name.strip().casefold())
        hits = [canonical] if canonical else [h.skill for h in taxonomy.tag({"profile": [name]})]
        if hits:
            found.extend(h for h in hits if h not in found)
        else:
            unknown.append(name)
    return found, unknown


def load_profile(text: str, taxonomy: Taxonomy) -> FitProfile:
    """Parse and validate a profile (TOML text); skills resolve through the taxonomy's names and aliases."""
    try:
        profile = Profile.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as err:
        raise ProfileError(f"not TOML: {err}") from None
    except ValidationError as err:
        first = err.errors()[0]
        raise ProfileError(f"{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    try:
        blocklist = Blocklist(profile.block.companies, profile.block.keywords)
    except BlocklistError as err:
        raise ProfileError(f"block: {err}") from None
    have, unknown_have = _resolve(profile.skills_have, taxonomy)
    want, unknown_want = _resolve(profile.skills_want, taxonomy)
    covers = frozenset(a for s in have for a in taxonomy.lineage(s))
    return FitProfile(profile.name, tuple(have), covers, tuple(want), tuple(profile.cities), profile.min_monthly_salary,
                      profile.currency, frozenset(profile.work_modes), tuple(unknown_have + unknown_want), blocklist)


def _skills(f: PostingFacts, p: FitProfile, info: Mapping[str, SkillInfo]) -> tuple[int, dict, str, list[Signal]]:
    listed = [s for s in f.skills if s in info and info[s].category != "soft"]
    core = listed[:CORE_SKILLS]
    matched = [s for s in core if s in p.covers]
    missing = [s for s in core if s not in p.covers]
    wanted = [w for w in p.want if w in f.skills]
    bonus = min(WANT_POINTS * len(wanted), WANT_CAP)
    if core:
        base = 100 * len(matched) / len(core)
        text = f"岗位主要技能{len(core)}项，已掌握{len(matched)}项" + (f"（{'、'.join(matched[:SHOWN])}）" if matched else "")
        if missing:
            text += f"，缺少{'、'.join(missing[:SHOWN])}" + ("等" if len(missing) > SHOWN else "")
    else:
        base, text = 50.0, "岗位未列出技能，无法判断"
    if wanted:
        text += f"；想学的{'、'.join(wanted)}在本岗位出现"
    score = min(100, round_half_up(base + bonus))
    evidence = {"rule": "skills", "listed": len(listed), "core": len(core), "matched": matched, "missing": missing,
                "wanted_present": wanted, "base": round(base, 2), "want_bonus": bonus, "score": score}
    signals = [Signal(key="匹配技能", value="、".join(matched[:SHOWN]) or "无"),
               Signal(key="缺少技能", value="、".join(missing[:SHOWN]) or "无"),
               Signal(key="想学技能", value="、".join(wanted) or "无")]
    return score, evidence, text, signals


def _salary(f: PostingFacts, p: FitProfile) -> tuple[int, dict, str]:
    pay, _ = salary_range(f)
    floor = p.min_monthly_salary
    evidence: dict = {"rule": "salary", "floor": floor, "currency": p.currency}
    if floor is None:
        return 100, evidence | {"score": 100}, "未设薪资底线"
    if pay is None or pay.currency != p.currency:
        why = "薪资未明确" if pay is None else f"薪资币种为{pay.currency}，无法与底线比较"
        return 50, evidence | {"score": 50, "text": why}, why
    evidence |= {"low": pay.low, "high": pay.high, "text": pay.text}
    money = f"月薪{format_money(pay.low, pay.currency)}" + (
        f"–{format_money(pay.high, pay.currency)}" if pay.high != pay.low else "")
    floor_text = format_money(floor, p.currency)
    if pay.low >= floor:
        score, text = 100, f"{money}，达到底线{floor_text}"
    elif pay.high >= floor:
        score, text = 80, f"{money}，上限达到底线{floor_text}"
    else:
        score = max(0, round_half_up(100 - 300 * (floor - pay.high) / floor))
        text = f"{money}，低于底线{floor_text}"
    return score, evidence | {"score": score}, text


def _city(f: PostingFacts, p: FitProfile, mode: str | None) -> tuple[int, dict, str]:
    evidence: dict = {"rule": "city", "city": f.city, "accepted": list(p.cities)}
    if not p.cities:
        score, text = 100, "城市不限"
    elif mode == "remote":
        score, text = 100, "远程岗位，城市不限"
    elif f.city is None:
        score, text = 50, "城市未明确"
    elif f.city in p.cities:
        score, text = 100, f"{f.city}在意向城市内"
    else:
        score, text = 0, f"{f.city}不在意向城市（{'、'.join(p.cities)}）"
    return score, evidence | {"score": score}, text


def _mode(f: PostingFacts, p: FitProfile, mode: str | None) -> tuple[int, dict, str]:
    evidence: dict = {"rule": "mode", "mode": mode, "text": f.work_mode, "accepted": sorted(p.work_modes)}
    label = f.work_mode or (MODE_LABELS[mode] if mode else None)
    if not p.work_modes:
        score, text = 100, "工作模式不限"
    elif mode is None:
        score, text = 50, "工作模式未明确"
    elif mode in p.work_modes:
        score, text = 100, f"{label}可接受"
    else:
        score, text = 0, f"{label}不在可接受的工作模式内"
    return score, evidence | {"score": score}, text


def score_fit(facts: PostingFacts, profile: FitProfile, taxonomy_info: Mapping[str, SkillInfo]) -> Evaluation:
    """The fit of one posting for one profile, with its reasons (scorer ``fit:<name>``)."""
    mode = work_mode_kind(facts.work_mode)
    skills, skills_ev, skills_text, signals = _skills(facts, profile, taxonomy_info)
    salary, salary_ev, salary_text = _salary(facts, profile)
    city, city_ev, city_text = _city(facts, profile, mode)
    mode_score, mode_ev, mode_text = _mode(facts, profile, mode)
    parts = {"skills": skills, "salary": salary, "city": city, "mode": mode_score}
    overall = round_half_up(sum(FIT_WEIGHTS[k] * v for k, v in parts.items()))
    signals += [Signal(key="薪资", value=salary_text), Signal(key="城市", value=city_text),
                Signal(key="工作模式", value=mode_text)]
    summary = f"匹配度{overall}：技能{skills}、薪资{salary}、城市{city}、工作模式{mode_score}。"
    evidence = {"skills": [skills_ev], "salary": [salary_ev], "city": [city_ev], "mode": [mode_ev],
                "overall": [{"rule": "weighted_mean", "weights": FIT_WEIGHTS, "scores": parts}]}
    all_signals = {"fit": signals}
    hit = profile.blocklist.check_posting(title=facts.title, company=facts.company, tags=facts.tags,
                                          sections=facts.sections, description=facts.description)
    if hit:
        overall, summary = 0, f"已屏蔽（{hit.rule}，{hit.field}：“{hit.snippet}”）；未屏蔽时{summary}"
        evidence["blocked"] = [hit.as_dict()]
        all_signals["blocked"] = [Signal(key=hit.rule, value=f"{hit.field}: {hit.snippet}")]
    return Evaluation(
        scorer=profile.scorer,
        overall=overall,
        summary=summary,
        explanations={"skills": skills_text, "salary": salary_text, "city": city_text, "mode": mode_text},
        signals=all_signals,
        evidence=evidence,
        problems=[f"profile skill not in the taxonomy: {s}" for s in profile.unknown_skills],
    )
