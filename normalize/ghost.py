"""Ghost and repost signals of a job, and the employer behind an agency's or a hidden posting. Pure.

Every threshold is a field of :data:`RULES` (:class:`Rules`), the one place they are set. A job is a duplicate
cluster (:mod:`normalize.dedupe`); its signals belong to the cluster's canonical posting:

- ``open_long``: it is open and its content has not changed for ``open_long_days`` days (counted to the
  corpus's "now": the newest ``last_seen``, never the wall clock, so a replayed history reads as it did then);
- ``reposted``: ``repost_postings`` or more postings of the job under new ids, by the same company in the same
  city, first seen within ``repost_window_days`` days of each other;
- ``reopened``: it closed and came back;
- ``mass_agency``: the same JD under ``mass_agencies`` or more companies other than the employer (cross-company
  copies in its cluster; the employer: the canonical posting's company, or a direct member's when that is an
  agency's).

A signal is stored small (:class:`Signal`: a code and numbers) and its sentence rendered when read
(:func:`sentence`). Signals only describe: nothing is hidden or deleted because of one.

A posting is an agency's when its company names one of ``agency_words`` (or a word of the user's list,
:func:`parse_agency_words`); hidden when it has no company. Its likely employer is the company of the most
similar direct posting (neither hidden nor an agency's) of the same job: in its duplicate cluster, or in its
city with a 5-shingle Jaccard of the JD texts (:func:`jaccard`) of at least ``employer_jaccard``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Sequence

import numpy as np

from .dedupe import names_agree, normalize_company, shingle_hashes
from .models import HIDDEN_COMPANY
from .text import fold


@dataclass(frozen=True)
class Rules:
    """The thresholds of the signals and of the likely employer."""

    open_long_days: int = 60
    """``open_long``: days open and unchanged."""
    repost_postings: int = 3
    """``reposted``: postings of one job (same company, same city, new ids) ..."""
    repost_window_days: int = 90
    """... first seen within this many days of each other."""
    mass_agencies: int = 3
    """``mass_agency``: other companies posting the same JD."""
    employer_jaccard: float = 0.6
    """Likely employer outside the cluster: lowest 5-shingle Jaccard of the JD texts, same city."""
    agency_words: tuple[str, ...] = ("猎头", "人力资源", "外包", "派遣")
    """A company whose name holds one of these is an agency (the user's list adds to them)."""


RULES = Rules()
CODES = ("open_long", "reposted", "reopened", "mass_agency")
"""The signal codes, in the order they are listed."""
EMPLOYER_RULES = ("cluster", "city")
"""How a likely employer was found: a direct member of the posting's cluster, or a direct posting of its city."""
_DAY = 86400


@dataclass(frozen=True)
class Signal:
    """One signal of a canonical posting, as stored: ``n`` and ``days`` per code (see :func:`sentence`), ``at`` a
    UTC time, ``ids`` the postings it rests on."""

    code: str
    n: int | None = None
    days: int | None = None
    at: str | None = None
    ids: tuple[int, ...] = ()


def days_between(start: str, end: str) -> int:
    """Whole days from the ISO time ``start`` to ``end``."""
    return int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() // _DAY)


def open_long(first_seen: str | None, changed_at: str | None, closed_at: str | None, now: str,
              rules: Rules = RULES) -> Signal | None:
    """``open_long`` of an open posting first seen at ``first_seen`` whose content last changed at ``changed_at``
    (None: never): ``n`` days open, ``days`` unchanged, since ``at``."""
    if closed_at or not first_seen:
        return None
    since = max(first_seen, changed_at or first_seen)
    unchanged = days_between(since, now)
    if unchanged < rules.open_long_days:
        return None
    return Signal("open_long", n=days_between(first_seen, now), days=unchanged, at=since)


def reposted(postings: Iterable[tuple[int, str]], rules: Rules = RULES) -> Signal | None:
    """``reposted`` of a job whose postings (same company, same city, new ids) are ``(id, first_seen)``: the most
    postings first seen within ``repost_window_days`` of each other (the earliest such window): ``n`` of them,
    within ``days``, from ``at``; ``ids`` in first-seen order."""
    seen = sorted((first_seen, pid) for pid, first_seen in postings if first_seen)
    best: tuple[int, int] | None = None  # (start, stop) of the largest window
    start = 0
    for stop in range(len(seen)):
        while days_between(seen[start][0], seen[stop][0]) > rules.repost_window_days:
            start += 1
        if best is None or stop + 1 - start > best[1] - best[0]:
            best = (start, stop + 1)
    if best is None or best[1] - best[0] < rules.repost_postings:
        return None
    window = seen[best[0]:best[1]]
    return Signal("reposted", n=len(window), days=days_between(window[0][0], window[-1][0]), at=window[0][0],
                  ids=tuple(pid for _, pid in window))


def reopened(events: Sequence[tuple[str, str]]) -> Signal | None:
    """``reopened`` of a posting whose closing events are ``(event, at)`` in order (``closed``, ``reopened``):
    ``n`` times back, the last at ``at`` after ``days`` closed."""
    backs = [i for i, (event, _) in enumerate(events) if event == "reopened"]
    if not backs:
        return None
    last = backs[-1]
    closed = next((at for event, at in reversed(events[:last]) if event == "closed"), None)
    back_at = events[last][1]
    return Signal("reopened", n=len(backs), days=days_between(closed, back_at) if closed else None, at=back_at)


def other_companies(employer: str, members: Iterable[tuple[int, str, Any]]) -> list[tuple[str, int]]:
    """The companies among ``members`` ``(posting id, company, order)`` that are not the (normalized) ``employer``
    (empty string: none), as :func:`normalize.dedupe.count_companies` counts them (a name contained in another is that
    company): ``(normalized name, the id of its first posting by order)`` by name. The order (first seen, key) does
    not depend on the ids, which follow the order in which worker processes stored postings."""
    first: dict[str, tuple[Any, int]] = {}
    for pid, company, order in members:
        name = normalize_company(company)
        if name and not (employer and names_agree(name, employer)):
            first[name] = min((order, pid), first.get(name, (order, pid)))
    kept: dict[str, tuple[Any, int]] = {}
    for name in sorted(first, key=len, reverse=True):
        longer = next((k for k in kept if len(name) >= 2 and name in k), None)
        if longer is None:
            kept[name] = first[name]
        else:
            kept[longer] = min(kept[longer], first[name])
    return sorted((name, pid) for name, (_, pid) in kept.items())


def mass_agency(employer: str, members: Iterable[tuple[int, str, Any]], rules: Rules = RULES) -> Signal | None:
    """``mass_agency`` of a job whose employer is ``employer`` (normalized: the canonical posting's company unless
    it is an agency's, else a direct member's; empty: none) and whose cluster members are ``(posting id,
    company, order)``: ``n`` other companies, one posting id of each (:func:`other_companies`)."""
    others = other_companies(employer, members)
    if len(others) < rules.mass_agencies:
        return None
    return Signal("mass_agency", n=len(others), ids=tuple(sorted(pid for _, pid in others)))


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(f"#{i}" for i in ids)


def sentence(signal: Signal) -> str:
    """The sentence of a stored signal, with its evidence."""
    s = signal
    day = (s.at or "")[:10]
    if s.code == "open_long":
        changed = "" if s.n == s.days else f" (last changed {day})"
        return f"Open {s.n} days and unchanged for {s.days}{changed}."
    if s.code == "reposted":
        return f"Posted {s.n} times under new ids within {s.days} days from {day} ({_ids(s.ids)})."
    if s.code == "reopened":
        after = f" after {s.days} days closed" if s.days is not None else ""
        times = "once" if s.n == 1 else f"{s.n} times"
        return f"Closed and back {times}, last on {day}{after}."
    if s.code == "mass_agency":
        return f"The same JD from {s.n} agencies ({_ids(s.ids)})."
    raise ValueError(f"unknown ghost signal {s.code!r}")


# --------------------------------------------------------------------------- the employer behind a posting


def parse_agency_words(text: str) -> tuple[str, ...]:
    """A user's agency list: one word a line (a company whose name holds it is an agency); ``#`` starts a
    comment; blank lines are skipped."""
    words = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return tuple(fold(word) for word in words if word)


def is_hidden(company: str | None) -> bool:
    """The posting names no employer: no company, blank, or 企业未公开 as written."""
    name = re.sub(r"[\s()（）【】\[\]]", "", company or "")
    return not name or name == HIDDEN_COMPANY.strip("（）")


def is_agency(company: str | None, extra: Sequence[str] = (), rules: Rules = RULES) -> bool:
    """The company is a staffing or outsourcing agency: its name holds an agency word (:attr:`Rules.agency_words`
    or one of ``extra``, folded)."""
    name = fold(company or "")
    return any(word and fold(word) in name for word in (*rules.agency_words, *extra))


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard of two JD texts' shingles (:func:`jd_shingles`; 0 when both are empty), rounded to 4 places."""
    common = len(np.intersect1d(a, b, assume_unique=True))
    union = len(a) + len(b) - common
    return round(common / union, 4) if union else 0.0


def jd_shingles(text: str) -> np.ndarray:
    """The 5-shingles of a JD text as dedupe makes them, each as its 32-bit hash, distinct and sorted
    (:func:`normalize.dedupe.shingle_hashes`): exact Jaccards, short of a hash collision, at numpy speed."""
    return shingle_hashes(text)


@dataclass(frozen=True)
class Employer:
    """A likely employer: ``company`` of the direct posting ``posting_id``, its JD ``similarity`` and ``rule``."""

    company: str
    posting_id: int
    similarity: float
    rule: str


def likely_employer(target: np.ndarray, in_cluster: Iterable[tuple[int, str, np.ndarray]],
                    in_city: Iterable[tuple[int, str, np.ndarray]], rules: Rules = RULES) -> Employer | None:
    """The likely employer of a posting with JD shingles ``target``: the most similar of the direct postings
    ``(id, company, shingles)`` of its cluster (any similarity above 0) and of its city (at least
    ``employer_jaccard``); ties go to the cluster, then to the candidate given first (callers give them in an
    order that is the same from run to run, unlike ids)."""
    best: tuple | None = None
    for rule, candidates, floor in (("cluster", in_cluster, 0.0), ("city", in_city, rules.employer_jaccard)):
        for place, (pid, company, other) in enumerate(candidates):
            similarity = jaccard(target, other)
            if similarity > 0 and similarity >= floor:
                rank = (-similarity, EMPLOYER_RULES.index(rule), place)
                if best is None or rank < best[0]:
                    best = (rank, Employer(company, pid, similarity, rule))
    return best[1] if best else None


def employer_evidence(employer: Employer) -> str:
    """The evidence of a likely employer as one line: ``#12, similarity 0.8333 (same cluster)``."""
    where = "same cluster" if employer.rule == "cluster" else "same city"
    return f"#{employer.posting_id}, similarity {employer.similarity:g} ({where})"
