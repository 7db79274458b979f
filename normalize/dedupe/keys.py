"""A posting's dedupe key: what the clusterer compares, computed from the posting alone and stored with it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..text import drop_format
from .minhash import _signatures, signature_to_bytes
from .names import _content_lines, _squash, canonical_url, normalize_city, normalize_company, normalize_title

MIN_JD_CHARS = 30
"""JD characters (folded, punctuation and spaces removed) below which a posting has no JD text: a list card's
one-line blurb or a bullet such as 五险一金 is not a job description."""
JD_KEYS = ("responsibilities", "requirements", "preferred")
"""Section keys whose bullets are JD text."""
NOT_JD_KEYS = frozenset({"benefits", "compensation"})
"""Section keys never read as JD text: pay and benefits, which every posting of a company shares."""


@dataclass(slots=True)
class Record:
    """What the clusterer needs of a posting; dicts with these keys work too."""

    key: str
    company: str | None = None
    title: str | None = None
    city: str | None = None
    text: str | None = None
    """Free JD text; used only when the record has no bullets. Never benefits, pay or tags."""
    requirements: Sequence[str] = ()
    responsibilities: Sequence[str] = ()
    first_seen: str | None = None
    url: str | None = None
    salary: str | None = None
    """The salary identity (:func:`salary_identity`), part of :func:`identity`."""


def _field(record: Any, name: str, default: Any = None) -> Any:
    """A field of a record: a mapping's item, else an object's attribute."""
    kind = type(record)
    if kind is not dict and (kind is Record or not isinstance(record, Mapping)):  # the ABC check last: it is slow
        return getattr(record, name, default)
    return record.get(name, default)


def record_from_posting(posting: Any) -> Record:
    """The :class:`Record` of a normalized ``Posting`` (or a dict of its fields, ``salary`` nested).

    Requirement and preferred bullets are ``requirements``; responsibility bullets ``responsibilities``;
    ``text`` holds the bullets of its other sections but benefits and compensation (a JD without headings
    is all ``about``), or its description when it has no sections at all. Tags are never read.
    """
    sections: Mapping[str, Sequence[str]] = _field(posting, "sections") or {}
    other = [line for key, lines in sections.items() if key not in JD_KEYS and key not in NOT_JD_KEYS
             for line in lines]
    text = "\n".join(other) if sections else (_field(posting, "description") or "")
    return Record(
        key=str(_field(posting, "key")), company=_field(posting, "company"), title=_field(posting, "title"),
        city=_field(posting, "city"), text=text or None,
        requirements=[*sections.get("requirements", ()), *sections.get("preferred", ())],
        responsibilities=list(sections.get("responsibilities", ())), first_seen=_field(posting, "first_seen"),
        url=_field(posting, "url"), salary=salary_identity(_field(posting, "salary")) or None,
    )


def jd_text(record: Any) -> str:
    """The JD text a record is shingled on: its requirement and responsibility bullets, one per line; its
    free ``text`` only when it has no bullets. Company intros and benefit paragraphs, which staffing agencies
    rewrite and which every posting of a company shares, stay out of the comparison."""
    bullets = [*(_field(record, "requirements") or ()), *(_field(record, "responsibilities") or ())]
    return "\n".join(bullets) if bullets else (_field(record, "text") or "")


def _jd_lines(record: Any) -> list[str]:
    """The lines a record's JD content is compared on: its bullets', else its text's (:func:`_content_lines`)."""
    return _content_lines(_field(record, "requirements") or (), _field(record, "responsibilities") or (),
                          _field(record, "text"))


def _fingerprint_of(company: str, title: str, city: str, lines: list[str]) -> str:
    if not lines:
        return ""
    parts = [company, title, city, *sorted(set(lines))]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def fingerprint(
    company: str | None,
    title: str | None,
    city: str | None,
    requirements: Sequence[str] = (),
    responsibilities: Sequence[str] = (),
    text: str | None = None,
) -> str:
    """Level (b) exact content fingerprint (32 hex characters), or ``""`` when there is no JD content.

    Over the normalized company, title and city and the set of requirement + responsibility bullets, each
    folded with its marker, spaces and punctuation removed, then sorted: reordered bullets, a bullet moved
    between the two sections (sources cut headings differently) and width/punctuation variants give the
    same fingerprint. Without bullets, the lines of ``text`` are used the same way.
    """
    lines = _content_lines(requirements, responsibilities, text)
    return _fingerprint_of(normalize_company(company), normalize_title(title), normalize_city(city), lines)


def salary_identity(salary: Any) -> str:
    """The salary as an identity part: ``CNY 15000-25000 x13`` from the monthly figures (a dict or object with
    ``monthly_min``, ``monthly_max``, ``currency``, ``months``), else the folded text as written (``面议``),
    else ``""``."""
    if not salary:
        return ""
    low, high = _field(salary, "monthly_min"), _field(salary, "monthly_max")
    if low is not None or high is not None:
        low, high = (low if low is not None else high), (high if high is not None else low)
        return f"{_field(salary, 'currency') or ''} {low:g}-{high:g} x{_field(salary, 'months') or 12}"
    return _squash(_field(salary, "raw") or "")


def identity(company: str | None, title: str | None, city: str | None, salary: str | None) -> str:
    """``same_identity`` key (32 hex characters): normalized company, title and city and the salary identity
    (:func:`salary_identity`); ``""`` without company or title. A missing city or salary is part of it."""
    company, title = normalize_company(company), normalize_title(title)
    if not company or not title:
        return ""
    parts = [company, title, normalize_city(city), salary or ""]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def completeness(record: Any) -> int:
    """Non-empty fields among company, title, city, text (format characters alone are nothing), plus the number of
    requirement and responsibility bullets."""
    fields = sum(1 for name in ("company", "title", "city", "text") if drop_format(_field(record, name) or ""))
    bullets = len(_field(record, "requirements") or ()) + len(_field(record, "responsibilities") or ())
    return fields + bullets


@dataclass(frozen=True, slots=True)
class DedupeKey:
    """What dedupe needs of one posting, computed from the posting alone (:func:`posting_signature`) and stored
    with it (``dedupe_signatures``), so that clustering never reads its text again."""

    company: str
    """Company, normalized (:func:`normalize_company`); ``""`` when hidden."""
    title: str
    city: str
    fingerprint: str
    """Exact content (:func:`fingerprint`); ``""`` without JD text or without company."""
    identity: str
    """Company, title, city and salary (:func:`identity`); ``""`` without company or title."""
    url: str
    """Canonical URL (:func:`canonical_url`); ``""`` without one."""
    has_jd: bool
    """The posting has JD text (at least :data:`MIN_JD_CHARS`): only then can it be similar to another."""
    completeness: int
    """:func:`completeness`, for the canonical member."""
    signature: bytes
    """MinHash signature of the JD shingles (:func:`signature_to_bytes`); ``b""`` without JD text or company."""

    @property
    def matchable(self) -> bool:
        """Compared by content (fingerprint, near-duplicate): JD text and a company."""
        return self.has_jd and bool(self.company)


def keys_of(records: Iterable[Any]) -> list[DedupeKey]:
    """The :class:`DedupeKey` of each record (:class:`Record` or dict with its fields); the signatures of all
    of them are computed at once, which costs much less per record than one at a time."""
    parts: list[tuple] = []
    contents: list[list[str]] = []
    for record in records:
        lines = _jd_lines(record)
        raw = _field(record, "company"), _field(record, "title"), _field(record, "city")
        company, title, city = normalize_company(raw[0]), normalize_title(raw[1]), normalize_city(raw[2])
        has_jd = sum(map(len, lines)) >= MIN_JD_CHARS
        matchable = bool(company) and has_jd
        parts.append((company, title, city, _fingerprint_of(company, title, city, lines) if matchable else "",
                      identity(*raw, _field(record, "salary")), canonical_url(_field(record, "url") or ""), has_jd,
                      completeness(record)))
        contents.append(lines if matchable else [])
    sigs = _signatures(contents)
    return [DedupeKey(*p, signature=signature_to_bytes(sig) if content else b"")
            for p, sig, content in zip(parts, sigs, contents)]


def posting_signatures(postings: Iterable[Any]) -> list[DedupeKey]:
    """:func:`posting_signature` of many postings, computed together."""
    return keys_of(record_from_posting(p) for p in postings)


def posting_signature(posting: Any) -> DedupeKey:
    """The :class:`DedupeKey` of one normalized posting (a ``Posting`` or a dict of its fields): pure, per
    posting, for the item pipeline's dedupe-signature stage."""
    return posting_signatures([posting])[0]
