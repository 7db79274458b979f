"""Saved searches (watches): what a watch asks for, and whether a posting is a match. Pure.

A watch (``jobcrawl watch add``) names a full-text search, cities, a monthly pay floor, a minimum
personal fit, a "changed since" time and its destinations. A posting it has never seen is a match
when all of these hold (:func:`match`):

- it is open, and the canonical member of its duplicate cluster (a repost or an agency copy of a
  job is not a match of its own); with ``exclude_duplicates``, no member of its cluster was matched
  by the watch before either (the repost of a job already delivered is not delivered again);
- it is not blocked by the profile's blocklist (:mod:`normalize.blocklist`);
- its job is not tracked (``jobcrawl track``: a status on any member of its cluster), unless the watch
  ``include_tracked``;
- with ``no_ghost``, it has no ghost signal (:mod:`normalize.ghost`);
- the search finds it (full-text search of title, company and JD text), when the watch has one;
- its city is one of the watch's cities, when it names any;
- the upper end of its monthly pay (:func:`normalize.score.salary_range`: the posting's own salary,
  else the source's monthly estimate) reaches the floor, in the floor's currency; unknown pay does not;
- its fit for the profile (scorer ``fit:<profile>``) is at least ``min_fit``; no fit does not;
- it is new or changed (a new version, closed or reopened) at or after ``changed_since``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from datetime import datetime
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .dates import parse_as_of
from .salary import parse_salary
from .score import PayRange, PostingFacts, format_money, salary_range
from .shown import shown

__all__ = ["WatchSpec", "Candidate", "candidate", "match", "parse_min_salary"]


def parse_min_salary(text: str) -> tuple[float, str]:
    """A pay floor as people write it (``40k``, ``4万``, ``$10,000``) → (monthly amount, currency)."""
    salary = parse_salary(text)
    if salary.status != "parsed" or salary.monthly_min is None or salary.currency is None:
        raise ValueError(f"{text!r} is not an amount of money (e.g. 40k, 4万, 35000)")
    return salary.monthly_min, salary.currency


STORED = {"stored": True}
"""Validation context of a spec read back from the database (:meth:`WatchSpec.model_validate_json`)."""


class WatchSpec(BaseModel):
    """A watch as the user wrote it, checked; ``min_salary_monthly`` and ``currency`` come from ``min_salary``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=60, pattern=r"^[^\s/]+$", description="Name of the watch (no spaces).")
    search: str | None = Field(None, max_length=200, description="Full-text search: every term must be found.")
    cities: list[str] = Field(default_factory=list, description="Cities accepted; empty: any.")
    min_salary: str | None = Field(None, max_length=40, description="Monthly pay floor as written (40k, 4万).")
    min_fit: int | None = Field(None, ge=0, le=100, description="Lowest personal fit (0–100) for the profile.")
    exclude_duplicates: bool = Field(False, description="Skip a posting whose duplicate cluster the watch has matched.")
    include_tracked: bool = Field(False, description="Also match postings whose job is tracked (jobcrawl track).")
    no_ghost: bool = Field(False, description="Skip a posting with a ghost signal (normalize.ghost: open_long, reposted, "
                                              "reopened, mass_agency).")
    changed_since: str | None = Field(None, description="Only postings new or changed at or after this time (UTC ISO).")
    destinations: list[str] = Field(default_factory=list, description="Destination names of the alerts config.")

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, value: Any, info: ValidationInfo) -> Any:
        if info.context == STORED:  # a name stored before such names were refused: `watch list` shows it escaped
            return value
        bad = next((ch for ch in value if shown(ch) != ch), None) if isinstance(value, str) else None
        if bad is not None:
            raise ValueError(f"{shown(value, quoted=True)} holds {shown(bad, quoted=True)} (U+{ord(bad):04X}), a control "
                             "or format character: a watch name must be what `jobcrawl watch list` shows")
        return value

    @field_validator("search")
    @classmethod
    def _search(cls, value: str | None) -> str | None:
        return value.strip() or None if value is not None else None

    @field_validator("cities")
    @classmethod
    def _cities(cls, value: list[str]) -> list[str]:
        cities = [city.strip() for city in value]
        if not all(cities):
            raise ValueError("a city must be named (an empty one would match no posting)")
        return cities

    @field_validator("min_salary")
    @classmethod
    def _floor(cls, value: str | None) -> str | None:
        if value is not None:
            parse_min_salary(value)
        return value

    @field_validator("changed_since")
    @classmethod
    def _since(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return parse_as_of(value, datetime.now()).isoformat()
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO date or datetime (e.g. 2026-11-25)") from None

    @property
    def floor(self) -> tuple[float, str] | None:
        return parse_min_salary(self.min_salary) if self.min_salary else None


@dataclass(frozen=True)
class Candidate:
    """What a watch reads of a posting it has not seen (``salary``: the row's :data:`SALARY_COLUMNS`)."""

    posting_id: int
    city: str | None
    salary: Mapping[str, Any]
    fit: int | None
    blocked: str | None  # the blocklist rule that matched
    changed_at: str  # UTC ISO: first seen, or its latest version, closing or reopening
    canonical: bool
    cluster_seen: bool  # another member of its cluster was matched by this watch
    found: bool  # the watch's search finds it (True when the watch has none)
    tracked: bool = False  # its job has an application status (jobcrawl track)
    ghost: bool = False  # it has a ghost signal (the signals step)

    @cached_property
    def pay(self) -> PayRange | None:
        """The monthly range a floor is checked against (read only for a watch with a floor)."""
        row = self.salary
        facts = PostingFacts(**{field: row[column] for field, column in SALARY_COLUMNS.items()} | {
            "salary_status": row["salary_status"] or "missing", "salary_implausible": bool(row["salary_implausible"]),
            "signal_implausible": bool(row["salary_signal_implausible"])})
        return salary_range(facts)[0]


SALARY_COLUMNS = {
    # PostingFacts field: the postings column a candidate row carries
    "salary_status": "salary_status", "salary_raw": "salary_raw", "monthly_min": "salary_monthly_min",
    "monthly_max": "salary_monthly_max", "currency": "salary_currency", "salary_implausible": "salary_implausible",
    "signal_raw": "salary_signal_raw", "signal_min": "salary_signal_min", "signal_max": "salary_signal_max",
    "signal_currency": "salary_signal_currency", "signal_period": "salary_signal_period",
    "signal_implausible": "salary_signal_implausible",
}


def candidate(row: Mapping[str, Any], *, found: bool) -> Candidate:
    """A candidate from a row holding ``id``, ``city``, the :data:`SALARY_COLUMNS`, ``fit``, ``blocked``,
    ``changed_at``, ``canonical``, ``cluster_seen``, ``tracked`` and ``ghost`` (absent: false)."""
    return Candidate(row["id"], row["city"], row, row["fit"], row["blocked"], row["changed_at"],
                     bool(row["canonical"]), bool(row["cluster_seen"]), found, bool(row.get("tracked")),
                     bool(row.get("ghost")))


def match(spec: WatchSpec, c: Candidate) -> list[str] | None:
    """The reasons ``c`` matches ``spec`` (one short line per criterion), or None when it does not."""
    if not c.canonical or c.blocked or not c.found or (c.tracked and not spec.include_tracked):
        return None
    if (spec.exclude_duplicates and c.cluster_seen) or (spec.no_ghost and c.ghost):
        return None
    reasons = [f"搜索“{spec.search}”"] if spec.search else []
    if spec.cities:
        if c.city not in spec.cities:
            return None
        reasons.append(f"城市{c.city}")
    floor = spec.floor
    if floor:
        amount, currency = floor
        if c.pay is None or c.pay.currency != currency or c.pay.high < amount:
            return None
        reasons.append(f"月薪上限{format_money(c.pay.high, currency)} ≥ {format_money(amount, currency)}")
    if spec.min_fit is not None:
        if c.fit is None or c.fit < spec.min_fit:
            return None
        reasons.append(f"匹配度{c.fit} ≥ {spec.min_fit}")
    if spec.changed_since:
        if c.changed_at < spec.changed_since:
            return None
        reasons.append(f"{c.changed_at[:10]}起新增或变化")
    return reasons
