"""Market statistics of the corpus (:class:`Market`): salaries by peer group (city + category, category) with
their quartiles, and counts of open postings by company and by city + category. A peer group is used only with
at least ``min_sample`` salaries (:data:`MIN_SAMPLE`)."""

from __future__ import annotations

import bisect
import hashlib
import statistics
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MIN_SAMPLE = 20
"""Fewest salaries a peer group needs before its quartiles are stated or a percentile is taken."""
SAMPLE_TOO_SMALL = "样本不足"


@dataclass(frozen=True, slots=True)
class SalaryGroup:
    """Monthly salaries of one peer group (scope + key + currency), sorted, with their quartiles."""

    scope: str
    key: str
    currency: str
    values: tuple[float, ...]
    quartiles: tuple[float, float, float] | None  # (p25, median, p75); None for fewer than 2 values
    digest: str = field(init=False)  # of the values: what a score that places a salary in the group depends on

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", hashlib.sha256(array("d", self.values).tobytes()).hexdigest()[:32])

    @classmethod
    def of(cls, scope: str, key: str, currency: str, values: Iterable[float]) -> SalaryGroup:
        """Quartiles by the inclusive method (linear interpolation between order statistics)."""
        ordered = tuple(sorted(values))
        q = None
        if len(ordered) >= 2:
            p25, p50, p75 = statistics.quantiles(ordered, n=4, method="inclusive")
            q = (round(p25, 2), round(p50, 2), round(p75, 2))
        return cls(scope, key, currency, ordered, q)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def label(self) -> str:
        """How the app names the peers: ``人工智能``, ``杭州人工智能``."""
        return self.key.replace(" · ", "")

    def percentile(self, value: float) -> float:
        """Mid-rank percentile of ``value`` in the group: 100 × (below + ½ equal) / n."""
        lo = bisect.bisect_left(self.values, value)
        hi = bisect.bisect_right(self.values, value)
        return 100.0 * (lo + 0.5 * (hi - lo)) / self.n


@dataclass
class Market:
    """Market statistics of the corpus: salary peer groups and counts of open postings."""

    salary: dict[tuple[str, str, str], SalaryGroup] = field(default_factory=dict)
    company_open: dict[str, int] = field(default_factory=dict)
    company_category_open: dict[tuple[str, str], int] = field(default_factory=dict)
    city_category_open: dict[tuple[str, str], int] = field(default_factory=dict)
    min_sample: int = MIN_SAMPLE

    @classmethod
    def build(cls, salaries: Iterable[tuple[str | None, str | None, str | None, float]],
              openings: Iterable[tuple[str | None, str | None, str | None, int]] = (),
              *, min_sample: int = MIN_SAMPLE) -> Market:
        """From (category, city, currency, monthly) salaries and (company, city, category, count) openings."""
        groups: dict[tuple[str, str, str], list[float]] = {}
        for category, city, currency, monthly in salaries:
            if not category or not currency or monthly is None:
                continue
            groups.setdefault(("category", category, currency), []).append(monthly)
            if city:
                groups.setdefault(("city+category", peer_key(city, category), currency), []).append(monthly)
        market = cls(min_sample=min_sample)
        for (scope, key, currency), values in sorted(groups.items()):
            market.salary[(scope, key, currency)] = SalaryGroup.of(scope, key, currency, values)
        for company, city, category, count in openings:
            if company:
                market.company_open[company] = market.company_open.get(company, 0) + count
                if category:
                    k = (company, category)
                    market.company_category_open[k] = market.company_category_open.get(k, 0) + count
            if city and category:
                k = (city, category)
                market.city_category_open[k] = market.city_category_open.get(k, 0) + count
        return market

    def rows(self) -> list[dict[str, Any]]:
        """One row per statistic: (scope, key, currency, n, p25, median, p75); quartiles only where n ≥ min_sample."""
        out = []
        for (scope, key, currency), group in self.salary.items():
            q = group.quartiles if group.n >= self.min_sample else None
            out.append({"scope": scope, "key": key, "currency": currency, "n": group.n,
                        "p25": q[0] if q else None, "median": q[1] if q else None, "p75": q[2] if q else None})
        for scope, counts in (("company_open", self.company_open),
                              ("company+category_open", self.company_category_open),
                              ("city+category_open", self.city_category_open)):
            for key, n in sorted(counts.items()):
                out.append({"scope": scope, "key": key if isinstance(key, str) else peer_key(*key), "currency": None,
                            "n": n, "p25": None, "median": None, "p75": None})
        return out

    def peers(self, city: str | None, category: str | None, currency: str | None) -> tuple[SalaryGroup | None, list[dict]]:
        """The peer group a salary is placed in, and the evidence of groups passed over as too small."""
        tried: list[dict] = []
        if not category or not currency:
            return None, [{"rule": "no_peers", "reason": "类别未知" if not category else "币种未知", "points": 0}]
        for scope, key in (("city+category", peer_key(city, category) if city else None), ("category", category)):
            if key is None:
                continue
            group = self.salary.get((scope, key, currency))
            n = group.n if group else 0
            if n >= self.min_sample:
                return group, tried
            tried.append({"rule": "peers_too_small", "scope": scope, "key": key, "currency": currency, "n": n,
                          "min": self.min_sample, "text": SAMPLE_TOO_SMALL, "points": 0})
        return None, tried


def peer_key(city: str, category: str) -> str:
    return f"{city} · {category}"


