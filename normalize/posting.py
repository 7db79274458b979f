"""RawPosting → Posting: the one normalization every spider's items go through.

Pure: takes a raw item (strings as written), returns the normalized posting with each value's
raw twin. Re-runnable over stored raw items when the parsers improve.
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import datetime, timedelta, timezone

from .counts import parse_company_activity, parse_market
from .dedupe import canonical_url
from zoneinfo import ZoneInfo

from .dates import local_time, parse_posted, parse_published, posted_source, source_zone
from .models import (
    DIMENSION_LABELS,
    CompanyInfo,
    Evaluation,
    Posting,
    RawEvaluation,
    RawPosting,
    RawSection,
)
from .salary import (dollar_of, parse_salary, parse_salary_compare, parse_salary_estimate, salary_from_parts,
                     salary_from_text)
from .fields import parse_company_info, parse_experience_education, parse_location
from .sections import clean_bullet, section_key, split_sections
from .skills import TAGS_SECTION
from .text import clean_line, clean_text, sha256_hex

INSIGHT_HEADINGS = {
    "优点": "pros",
    "缺点": "cons",
    "缺点 / 挑战": "cons",
    "缺点/挑战": "cons",
    "挑战": "cons",
    "角色解读": "role",
    "申请策略": "strategy",
    "面试指南": "interview",
}
DIMENSION_KEYS = {label: key for key, label in DIMENSION_LABELS.items()}
POSTED_EARLIEST = "1990-01-01"
POSTED_LEEWAY = timedelta(days=2)
"""A post time before 1990, or more than this after the time it is read against, is no post time (``9999-12-31``, a
placeholder or a mistyped year): kept as written, left out of posted_at, named among the posting's problems."""

_LEVEL = re.compile(r"(较低|中等|较高)")
_SCORE = re.compile(r"\d{1,3}")
_REMOTE = re.compile(r"远程|居家|remote|telecommute", re.I)
_HYBRID = re.compile(r"混合|hybrid", re.I)
_ONSITE = re.compile(r"现场|坐班|on-?site|in-?office", re.I)



def posting_key(source: str, source_id: str) -> str:
    """Stable identity of a source record: first 16 hex digits of SHA-256(source, source_id).

    A source id that is a URL is canonicalized first (scheme and host case, trailing slash and
    tracking parameters such as ``utm_*``, ``ka``, ``lid``, ``securityId``), so the same record
    reached through differently decorated links is one posting.
    """
    if source_id.lower().startswith(("http://", "https://")):
        # A fragment in a source id is the page object's own marker for one of several postings on
        # one page (`…/jobs/3#1`), not decoration: keep it.
        url, hash_, fragment = source_id.partition("#")
        source_id = (canonical_url(url) or url) + hash_ + fragment  # a URL that cannot be read: as written
    return sha256_hex(f"{source}\x1f{source_id}")[:16]


_US, _RS = "\x1f", "\x1e"  # unit and record separators: no field text holds them (clean_line drops controls)


_NOT_CONTENT = {"locator", "position", "input_sha256", "fetched_at", "as_of", "complete_listing"}


def raw_item_hash(raw: RawPosting, parser: str) -> str:
    """What ``raw`` says, read by ``parser`` (crawler/ingest/ledger.py), as 16 hex digits: not where or when it was
    read. Two items with one hash normalize to postings with one :func:`content_hash`, so a posting stored
    with this hash need not be parsed again to be seen again."""
    return sha256_hex(parser + "\x1f" + raw.model_dump_json(exclude=_NOT_CONTENT))[:16]


def raw_text_hash(text: str, parser: str) -> str:
    """The raw hash of an item that ``parser`` reads from ``text`` alone (a dump's page), in place of its
    :func:`raw_item_hash`: the text says all the item says and costs less to hash than the item's fields (a lone
    surrogate is hashed as is)."""
    return hashlib.sha256(f"{parser}\x1f{text}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _joined(items) -> str:
    return _RS.join(items)


def _mapping(d: dict[str, list[str]]) -> str:
    return _RS.join(f"{key}{_US}{_US.join(values)}" for key, values in d.items())


def content_hash(p: Posting) -> str:
    """SHA-256 over what the normalized posting says and its URL: not where or when it was read, nor what
    depends on when (``posted_at`` follows from ``posted_raw`` and the anchor). A better parser that changes
    what a posting says changes its hash, so re-parsing stores the posting again (a new version)."""
    s, ev = p.salary, p.source_evaluation
    parts = [
        p.url, p.company, p.title, p.city, p.district, p.location_raw, p.category, p.seniority, p.employment_type,
        p.work_mode, p.experience, p.education, p.company_info.raw, p.posted_raw, p.published_label,
        _joined(p.tags), s.raw, s.status, s.min, s.max, s.currency, s.period, s.months, s.compare_raw,
        s.signal.raw if s.signal else None, p.company_activity.label, p.company_activity.raw, p.market.label,
        p.market.raw, p.description, _mapping(p.sections), _mapping(p.insights),
        _RS.join(f"{k}{_US}{v}" for k, v in p.extra.items()),
    ]
    if ev is not None:
        parts += [ev.overall, ev.pay, ev.growth, ev.worklife, ev.mission, ev.summary, _joined(ev.notes),
                  _RS.join(f"{k}{_US}{v}" for k, v in ev.explanations.items()),
                  _RS.join(f"{d}{_US}{x.key}{_US}{x.value}" for d, items in ev.signals.items() for x in items)]
    return sha256_hex(_US.join("" if v is None else str(v) for v in parts))


def level_for(score: int | None) -> str | None:
    """较低 < 60 ≤ 中等 < 80 ≤ 较高 (the app's own thresholds)."""
    if score is None:
        return None
    return "较低" if score < 60 else "中等" if score < 80 else "较高"


def normalize_sections(raw_sections: list[RawSection], description: str | None) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Sections keyed canonically, bullets cleaned: the free description split at its inline headings
    first (``岗位职责：1.…``), then the explicit sections; bullets of a key found in both are merged in
    that order. Headings are kept as written (the first one seen per key). A heading outside the vocabulary is its
    own key, but one written ``tags`` is keyed ``tags (section)``: ``tags`` names the posting's tags where skills are
    found (normalize.skills.TAGS_SECTION)."""
    sections: dict[str, list[str]] = {}
    headings: dict[str, str] = {}

    def add(key: str, heading: str, bullets: list[str]) -> None:
        if not bullets and key in sections:
            return
        sections.setdefault(key, []).extend(bullets)
        headings.setdefault(key, heading)

    if description:
        for key, heading, bullets in split_sections(description):
            add(key, heading, bullets)
    for block in raw_sections:
        key = section_key(block.heading) if block.heading else "about"
        key = key or clean_line(block.heading)
        if key == TAGS_SECTION:
            key = f"{TAGS_SECTION} (section)"
        add(key, clean_line(block.heading), [b for b in (clean_bullet(line) for line in block.lines) if b])
    return sections, headings


def normalize_requirements(experience: str | None, education: str | None) -> dict:
    """Experience and education as written, run together or apart (``1-3年本科``; ``3-5年`` and ``本科及以上``).

    Keys: ``experience`` (the experience part, ``1-3年``; the text as written when no rule recognises
    it), ``experience_min_years``, ``experience_max_years``, ``education`` (a level of
    :data:`normalize.fields.EDUCATION_LEVELS` or ``不限``; the text as written when unrecognised).
    Either text may hold both parts; the education text's level wins. Internship terms
    (``4天/周6个月本科``) keep the experience text whole.
    """
    none = parse_experience_education(None)
    exp = parse_experience_education(experience) if experience else none
    edu = parse_experience_education(education) if education else none
    years = exp if exp["experience"] else edu
    # Internship terms (`4天/周6个月`) or text no rule knows: kept whole rather than lost.
    as_written = clean_line(experience) if experience and (exp["unparsed"] or exp["days_per_week"]) else None
    return {
        "experience": years["experience"] or as_written or None,
        "experience_min_years": years["experience_min_years"],
        "experience_max_years": years["experience_max_years"],
        "education": edu["education"] or exp["education"] or (clean_line(education) if education else None) or None,
    }


def normalize_company_info(text: str | None) -> CompanyInfo:
    """Industry, funding stage and size from a run-together company line; empty when there is none."""
    if not text or not text.strip():
        return CompanyInfo()
    info = parse_company_info(text)
    return CompanyInfo(raw=clean_line(text), industry=info["industry"], funding_stage=info["funding_stage"],
                       size_min=info["size_min"], size_max=info["size_max"])


def normalize_insights(raw_insights: list[RawSection]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for block in raw_insights:
        heading = clean_line(block.heading)
        key = INSIGHT_HEADINGS.get(heading) or INSIGHT_HEADINGS.get(heading.replace(" ", "")) or heading or "other"
        out.setdefault(key, []).extend(b for b in (clean_bullet(line) for line in block.lines) if b)
    return out


def normalize_evaluation(raw: RawEvaluation | None) -> Evaluation | None:
    """The source's own evaluation: scores as numbers, levels, explanations and signals per dimension."""
    if raw is None:
        return None
    # Plain data first, validated once as the Evaluation at the end.
    ev: dict = {"scorer": "source", "levels": {}, "explanations": {}, "signals": {}, "problems": []}
    problems = ev["problems"]
    overall = [int(m.group()) for line in raw.overall_raw if (m := _SCORE.search(line))]
    if overall:
        ev["overall"] = overall[-1]
        if len(set(overall)) > 1:
            problems.append(f"overall score stated differently: {', '.join(raw.overall_raw)}")
    if raw.summary:
        ev["summary"] = clean_line(raw.summary[0])
        ev["notes"] = [clean_line(line) for line in raw.summary[1:]]
    for dim in raw.dimensions:
        key = DIMENSION_KEYS.get(dim.name)
        if key is None:
            problems.append(f"unknown dimension {dim.name!r}")
            continue
        score_match = _SCORE.search(dim.score_raw or "")
        score = int(score_match.group()) if score_match else None
        compact = int(dim.compact_raw) if dim.compact_raw else None
        if score is not None and compact is not None and score != compact:
            problems.append(f"{dim.name} stated as {compact} and {score}")
        ev[key] = score if score is not None else compact
        level = _LEVEL.search(dim.score_raw or "")
        if level:
            ev["levels"][key] = level.group()
        if dim.explanation:
            ev["explanations"][key] = "".join(clean_line(line) for line in dim.explanation)
        if dim.signals:
            ev["signals"][key] = [{"key": s.key, "value": clean_line(s.value)} for s in dim.signals]
    return Evaluation(**ev)


def _pay_texts(sections: dict[str, list[str]], description: str | None) -> list[tuple[str, str]]:
    """Where a posting may state its pay, in the order read: its compensation section, then its description (or,
    without one, its other sections)."""
    out = [("compensation", "\n".join(sections.get("compensation", ())))]
    if description:
        out.append(("description", clean_text(description)))
    else:
        out.extend((key, "\n".join(lines)) for key, lines in sections.items() if key != "compensation")
    return out


def remote_flag(work_mode: str | None) -> bool | None:
    """True for remote or hybrid work, False for on-site only, None when the text does not say."""
    if not work_mode:
        return None
    if _REMOTE.search(work_mode) or _HYBRID.search(work_mode):
        return True
    if _ONSITE.search(work_mode):
        return False
    return None


def normalize_posting(raw: RawPosting, *, seen_at: str | None = None, as_of_source: str = "as_of",
                      tz: str | None = None) -> Posting:
    """Normalize one raw item. ``seen_at`` (default: ``raw.as_of``) sets first_seen/last_seen; ``as_of_source``
    says what ``raw.as_of`` is (``as_of``, ``fetched``, ``file_mtime``: see :mod:`normalize.dates`); ``tz`` is the
    source's time zone (default: :func:`normalize.dates.source_zone`), in which its dates are read."""
    as_of = datetime.fromisoformat(raw.as_of)
    seen = seen_at or raw.as_of
    problems: list[str] = []
    zone = source_zone(tz, raw.title, raw.company, raw.location)

    posted = parse_posted(raw.posted, as_of, tz=ZoneInfo(zone)) if raw.posted else None
    latest = (as_of + POSTED_LEEWAY).astimezone(timezone.utc).isoformat(timespec="seconds")
    if posted and posted.at and not POSTED_EARLIEST <= posted.at <= latest:
        problems.append(f"post time out of range: {raw.posted!r}")
        posted = None
    published = parse_published(raw.published) if raw.published else None
    valid = parse_posted(raw.valid_through, as_of, tz=ZoneInfo(zone)) if raw.valid_through else None
    posted_on = posted_source(posted, as_of_source)

    loc = parse_location(raw.location) if raw.location else None
    dollar = functools.cache(lambda: dollar_of(raw.location, raw.url, parsed=loc))  # only a bare $ needs it
    salary = (salary_from_parts(raw.salary, raw.salary_parts) if raw.salary_parts
              else parse_salary(raw.salary, dollar=dollar))
    if salary.status != "missing":
        salary.source = "field"
    if raw.salary_compare:
        salary.compare_raw = clean_line(raw.salary_compare)
        salary.vs_median, salary.compare_scope = parse_salary_compare(raw.salary_compare)
    source_eval = normalize_evaluation(raw.evaluation)
    if source_eval:
        signal = next((s.value for s in source_eval.signals.get("pay", []) if s.key == "薪资信号"), None)
        if signal:
            salary.signal = parse_salary_estimate(signal)
    if raw.salary and salary.status == "unparseable":
        problems.append(f"salary not understood: {raw.salary!r}")
    if not (raw.company or "").strip():
        problems.append("company hidden")
    if not (raw.title or "").strip():
        problems.append("no title")

    company_activity = parse_company_activity(raw.company_activity)
    market = parse_market(raw.market)
    city = market.city
    district = None
    if loc is not None:
        city = loc.get("city") or city
        district = loc.get("district")
    category = clean_line(raw.category) if raw.category else market.category

    sections, headings = normalize_sections(raw.sections, raw.description)
    if salary.status == "missing" and not raw.salary:  # no salary field: the pay the text states, if any
        found = salary_from_text(_pay_texts(sections, raw.description), dollar=dollar)
        if found is not None:
            salary = found.model_copy(update={"compare_raw": salary.compare_raw, "vs_median": salary.vs_median,
                                              "compare_scope": salary.compare_scope, "signal": salary.signal})
    work_mode = clean_line(raw.work_mode) if raw.work_mode else None
    requirements = normalize_requirements(raw.experience, raw.education)

    posting = Posting(
        key=posting_key(raw.source, raw.source_id),
        source=raw.source,
        source_id=raw.source_id,
        locator=raw.locator,
        position=raw.position,
        url=raw.url,
        company=clean_line(raw.company) if raw.company else None,
        title=clean_line(raw.title) if raw.title else None,
        city=city,
        district=district,
        location_raw=raw.location,
        category=category,
        seniority=clean_line(raw.seniority) if raw.seniority else None,
        employment_type=clean_line(raw.employment_type) if raw.employment_type else None,
        work_mode=work_mode,
        remote=remote_flag(work_mode),
        **requirements,
        company_info=normalize_company_info(raw.company_info),
        posted_raw=raw.posted,
        posted_at=posted.at if posted else None,
        posted_approx=bool(posted and (posted.approx or posted_on == "file_mtime")),
        posted_source=posted_on,
        tz=zone,
        posted_local=local_time(posted.at if posted else None, zone),
        is_new=published.is_new if published else None,
        published_label=published.label if published else None,
        valid_through=valid.at if valid else None,
        tags=[t for t in (clean_line(tag) for tag in raw.tags) if t],
        salary=salary,
        company_activity=company_activity,
        market=market,
        description=clean_text(raw.description) if raw.description else None,
        sections=sections,
        section_headings=headings,
        insights=normalize_insights(raw.insights),
        source_evaluation=source_eval,
        extra=raw.extra,
        problems=problems + (source_eval.problems if source_eval else []),
        content_hash="",
        input_sha256=raw.input_sha256,
        as_of=raw.as_of,
        first_seen=seen,
        last_seen=seen,
        complete_listing=raw.complete_listing,
        raw_hash=raw.raw_hash,
    )
    posting.content_hash = content_hash(posting)
    return posting
