"""What the scorer reads of a posting (:class:`PostingFacts`) and of its skills (:class:`SkillInfo`), and the
readings of them that fit and watches share: the monthly pay range (:func:`salary_range`), the work mode
(:func:`work_mode_kind`), money as the app writes it (:func:`format_money`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .rules import Hit

FRONTIER_CATEGORIES = {"gpu": "GPU/加速器", "compiler": "AI编译", "model": "模型", "technique": "AI算法"}
"""Skill categories that count as frontier directions for growth (taxonomy category → label)."""
MODE_LABELS = {"remote": "远程办公", "hybrid": "混合办公", "onsite": "仅现场办公"}


class SkillInfo(NamedTuple):
    """What the scorer needs to know about a skill of the taxonomy."""

    category: str
    parent: str | None
    frontier: bool


@dataclass(frozen=True, slots=True)
class PostingFacts:
    """What the scorer reads of a posting (the normalized posting's fields, flattened)."""

    title: str | None = None
    company: str | None = None
    city: str | None = None
    district: str | None = None
    category: str | None = None
    seniority: str | None = None
    work_mode: str | None = None
    experience_min_years: float | None = None
    industry: str | None = None
    tags: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    sections: Mapping[str, Sequence[str]] = field(default_factory=dict)
    description: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    salary_status: str = "missing"
    salary_raw: str | None = None
    monthly_min: float | None = None
    monthly_max: float | None = None
    currency: str | None = None
    months: int = 12
    salary_estimated: bool = False
    salary_implausible: bool = False
    compare_raw: str | None = None
    vs_median: str | None = None
    compare_scope: str | None = None
    signal_raw: str | None = None
    signal_min: float | None = None
    signal_max: float | None = None
    signal_currency: str | None = None
    signal_period: str | None = None
    signal_estimated: bool = False
    signal_implausible: bool = False
    company_open_jobs: int | None = None
    market_open_jobs: int | None = None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> PostingFacts:
        """From a :class:`normalize.models.Posting` dump or an export record (nested salary etc.)."""
        sal = rec.get("salary") or {}
        sig = sal.get("signal") or {}
        return cls(
            title=rec.get("title"), company=rec.get("company"), city=rec.get("city"), district=rec.get("district"),
            category=rec.get("category"), seniority=rec.get("seniority"), work_mode=rec.get("work_mode"),
            experience_min_years=rec.get("experience_min_years"),
            industry=(rec.get("company_info") or {}).get("industry"),
            tags=tuple(rec.get("tags") or ()), skills=tuple(rec.get("skills") or ()),
            sections=rec.get("sections") or {}, description=rec.get("description"), extra=rec.get("extra") or {},
            salary_status=sal.get("status") or "missing", salary_raw=sal.get("raw"),
            monthly_min=sal.get("monthly_min"), monthly_max=sal.get("monthly_max"), currency=sal.get("currency"),
            months=sal.get("months") or 12, salary_estimated=bool(sal.get("estimated")),
            salary_implausible=bool(sal.get("implausible")), compare_raw=sal.get("compare_raw"),
            vs_median=sal.get("vs_median"), compare_scope=sal.get("compare_scope"),
            signal_raw=sig.get("raw"), signal_min=sig.get("min"), signal_max=sig.get("max"),
            signal_currency=sig.get("currency"), signal_period=sig.get("period"),
            signal_estimated=bool(sig.get("estimated")), signal_implausible=bool(sig.get("implausible")),
            company_open_jobs=(rec.get("company_activity") or {}).get("open_jobs"),
            market_open_jobs=(rec.get("market") or {}).get("open_jobs"),
        )

    def lines(self) -> list[tuple[str, str]]:
        """The posting's own words as (section, line): title, category, tags, sections, description, industry, extra."""
        out: list[tuple[str, str]] = []
        if self.title:
            out.append(("title", self.title))
        if self.category:
            out.append(("category", self.category))
        out.extend(("tags", t) for t in self.tags)
        for key, bullets in self.sections.items():
            out.extend((key, b) for b in bullets)
        if self.description and not self.sections:
            out.extend(("description", line) for line in self.description.split("\n") if line.strip())
        if self.industry:
            out.append(("industry", self.industry))
        out.extend((f"extra:{k}", v) for k, v in self.extra.items() if isinstance(v, str) and v)
        return out


class PayRange(NamedTuple):
    low: float
    high: float
    currency: str
    text: str | None


def salary_range(f: PostingFacts) -> tuple[PayRange | None, list[dict]]:
    """The monthly range a posting is judged by, and evidence of what was passed over.

    The posting's own parsed, plausible salary; else a plausible monthly salary signal of the source
    (flagged in the evidence); else None.
    """
    why: list[dict] = []
    if f.salary_status == "parsed" and f.monthly_min is not None and f.currency and not f.salary_implausible:
        high = f.monthly_max if f.monthly_max is not None else f.monthly_min
        return PayRange(f.monthly_min, high, f.currency, f.salary_raw), why
    if f.salary_status == "parsed" and f.salary_implausible:
        why.append({"rule": "salary_implausible", "text": f.salary_raw, "points": 0})
    if f.signal_min is not None and not f.signal_implausible and f.signal_period == "month" and f.signal_currency:
        why.append({"rule": "source_salary_signal", "text": f.signal_raw, "estimated": f.signal_estimated, "points": 0})
        high = f.signal_max if f.signal_max is not None else f.signal_min
        return PayRange(f.signal_min, high, f.signal_currency, f.signal_raw), why
    return None, why


def monthly(f: PostingFacts) -> tuple[float | None, str | None, str | None, list[dict]]:
    """The monthly figure placed among peers (midpoint of the range): (value, currency, text, evidence)."""
    pay, why = salary_range(f)
    if pay is None:
        return None, None, None, why
    return (pay.low + pay.high) / 2, pay.currency, pay.text, why


_REMOTE = re.compile(r"远程|居家|remote|telecommute|wfh", re.I)
_HYBRID = re.compile(r"混合|hybrid", re.I)
_ONSITE = re.compile(r"现场|坐班|驻场|on-?site|in-?office|in office", re.I)


def work_mode_kind(work_mode: str | None, hits: Mapping[str, Hit] = {}) -> str | None:
    """remote, hybrid or onsite from the work-mode field (else from the JD words); None when unknown."""
    if work_mode:
        if _HYBRID.search(work_mode):
            return "hybrid"
        if _REMOTE.search(work_mode):
            return "remote"
        if _ONSITE.search(work_mode):
            return "onsite"
    if "hybrid_text" in hits:
        return "hybrid"
    if "remote_text" in hits:
        return "remote"
    return None


def format_money(value: float, currency: str | None = "CNY") -> str:
    """43000 → ``4.3万``, 8000 → ``8千`` (CNY); other currencies ``USD 10,000``."""
    if currency not in (None, "CNY"):
        return f"{currency} {value:,.0f}"
    if value >= 10_000:
        return f"{value / 10_000:.2f}".rstrip("0").rstrip(".") + "万"
    if value >= 1_000:
        return f"{value / 1_000:.1f}".rstrip("0").rstrip(".") + "千"
    return f"{value:.0f}元"


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5 + 1e-9)
