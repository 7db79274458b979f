"""Post times as written → a UTC instant, resolved against an ``as_of`` anchor.

Forms: relative (``发布于 大约 4 小时前``, ``刚刚``, ``3 天前``, ``2 周前``, ``1 个月前``, ``90天前更新``,
``3 days ago``, ``about 2 hours ago``), day names (``今天``, ``昨天``, ``前天``, ``today``, ``yesterday``),
absolute dates (``2026-11-20``, ``2026/11/20``, ``2026年11月20日``, ``11月20日``, ``09-03发布``,
``5月13日更新``), ISO datetimes with or without offset or with a ``UTC`` suffix (Recruitee's
``2026-09-18 12:55:59 UTC``), and epoch seconds or milliseconds (Lever's ``createdAt``).

Rules:
- Relative counts subtract exact durations from ``as_of``: a month is 30 days, a year 365 days.
- Day names and dates without a time of day are midnight in ``tz`` (Asia/Shanghai by default: the
  Chinese boards' clock); a bare ISO date ``2026-11-20`` is midnight UTC, as APIs and JSON-LD mean it,
  and so is an ISO datetime without an offset.
- A date without a year takes the year of ``as_of`` (in ``tz``), or the year before when that would
  lie after ``as_of``.
- ``approx`` is True when the text says so: 大约, 约, about, approximately, around, ``~``, or ``30+``.
- Results are ISO 8601 in UTC to the second (``2026-11-29T04:00:00+00:00``). Text that matches no form
  gives ``at=None``; nothing raises except a naive ``as_of`` (a caller bug).

What a post time rests on (:func:`posted_source`): ``source`` for a date or time as written; for a relative
form (``3 天前``, ``今天``) the anchor's kind — ``as_of`` (given to the ingest), ``fetched`` (the page's fetch
time) or ``file_mtime`` (a file's modification time: approximate). Times are shown in the source's zone
(:func:`source_zone`, :func:`local_time`); stored ones stay UTC.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo

from .text import clean_line

__all__ = ["PostedTime", "SHANGHAI", "AS_OF_SOURCES", "parse_posted", "parse_published", "parse_as_of", "posted_source",
           "source_zone", "local_time", "MAX_DATE_TEXT"]

SHANGHAI = ZoneInfo("Asia/Shanghai")
MAX_DATE_TEXT = 200
"""Longer text is not a post time: returned unresolved without being searched."""

Unit = Literal["minute", "hour", "day", "week", "month", "year", "date"]


@dataclass(frozen=True)
class PostedTime:
    """A post time as written and resolved."""

    raw: str | None
    """Text as written (an epoch number is kept as its decimal string)."""
    at: str | None = None
    """Resolved instant, ISO 8601 UTC to the second; None when the text matched no form."""
    approx: bool = False
    """The text says the time is approximate (大约, 约, about, ~, 30+)."""
    unit: Unit | None = None
    """Granularity: minute/hour/day/week/month/year for relative forms, ``date`` for absolute ones."""
    is_new: bool | None = None
    """Publication label only: the source marks the posting new (``新岗位``); None when not a label."""
    label: str | None = None
    """Publication label only: the label as written without the new-marker (``今天发布``)."""


_CN_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
              "a": 1, "an": 1, "one": 1, "半": 0.5}
_UNITS: dict[str, tuple[Unit, timedelta]] = {
    "minute": ("minute", timedelta(minutes=1)),
    "hour": ("hour", timedelta(hours=1)),
    "day": ("day", timedelta(days=1)),
    "week": ("week", timedelta(weeks=1)),
    "month": ("month", timedelta(days=30)),
    "year": ("year", timedelta(days=365)),
}
_UNIT_WORDS = [
    ("minute", r"分钟|mins?|minutes?"),
    ("hour", r"个?小时|hours?|hrs?|h"),
    ("day", r"天|日|days?|d"),
    ("week", r"周|个?星期|个?礼拜|weeks?|w"),
    ("month", r"个月|个?月|months?|mo"),
    ("year", r"年|years?|yrs?|y"),
]
_RELATIVE = re.compile(
    r"(?P<n>\d+|[一两二三四五六七八九十半]|an?|one)\s*(?P<plus>\+)?\s*(?P<unit>"
    + "|".join(f"(?P<{name}>{words})" for name, words in _UNIT_WORDS)
    + r")\s*(?:前|以前|之前|ago)"
)
_PREFIX = re.compile(
    r"^(?:发布于|发布时间|发布日期|更新于|更新时间|更新日期|(?:posted|updated|published|listed)(?:\s+on)?)[:\s]*"
)
_SUFFIX = re.compile(r"\s*(?:发布|更新|发布的)$")
_APPROX = re.compile(r"大约|约|(?<![a-z])(?:about|approximately|approx\.?|around)(?![a-z])|~")
_NOW = re.compile(r"刚刚|刚才|(?<![a-z])just now|moments? ago|(?<![a-z])now(?![a-z])")
_DAY_NAMES = {"今天": 0, "今日": 0, "today": 0, "昨天": 1, "昨日": 1, "yesterday": 1, "前天": 2}
_YMD = re.compile(r"(?P<y>\d{4})\s*(?:[-/.]|年)\s*(?P<m>\d{1,2})\s*(?:[-/.]|月)\s*(?P<d>\d{1,2})\s*日?")
_MD = re.compile(r"(?P<m>\d{1,2})\s*(?:-|/|月)\s*(?P<d>\d{1,2})\s*日?")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}.*")
_UTC_NAME = re.compile(r"\s*(?:utc|gmt)$")
_EPOCH = re.compile(r"\d{10}|\d{13}")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _midnight(day: date, zone: tzinfo) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=zone)


def _resolve(folded: str, as_of: datetime, tz: tzinfo) -> tuple[datetime, Unit] | None:
    """The instant and granularity the text names, or None. ``folded`` is stripped of labels and approx words."""
    if _EPOCH.fullmatch(folded):
        number = int(folded)
        return datetime.fromtimestamp(number / 1000 if len(folded) == 13 else number, UTC), "date"
    if _ISO_DATETIME.fullmatch(folded):
        moment = datetime.fromisoformat(_UTC_NAME.sub("+00:00", folded).upper())
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)), "date"
    if _ISO_DATE.fullmatch(folded):
        return _midnight(date.fromisoformat(folded), UTC), "date"
    if _NOW.fullmatch(folded):
        return as_of, "minute"
    if folded in _DAY_NAMES:
        local_day = as_of.astimezone(tz).date() - timedelta(days=_DAY_NAMES[folded])
        return _midnight(local_day, tz), "day"
    relative = _RELATIVE.fullmatch(folded)
    if relative:
        count = _CN_DIGITS.get(relative["n"]) or int(relative["n"])
        name = next(name for name, _ in _UNIT_WORDS if relative[name])
        unit, step = _UNITS[name]
        return as_of - step * count, unit
    ymd = _YMD.fullmatch(folded)
    if ymd:
        return _midnight(date(int(ymd["y"]), int(ymd["m"]), int(ymd["d"])), tz), "date"
    md = _MD.fullmatch(folded)
    if md:
        today = as_of.astimezone(tz).date()
        day = date(today.year, int(md["m"]), int(md["d"]))
        if day > today:
            day = date(today.year - 1, day.month, day.day)
        return _midnight(day, tz), "date"
    return None


def parse_posted(text: str | int | None, as_of: datetime, *, tz: tzinfo = SHANGHAI) -> PostedTime:
    """Resolve a post time as written against ``as_of`` (timezone-aware); see the module rules."""
    if as_of.tzinfo is None or as_of.utcoffset() is None:
        raise ValueError("as_of must be timezone-aware")
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str) or not text.strip() or len(text) > MAX_DATE_TEXT:
        return PostedTime(raw=text if isinstance(text, str) else None)
    cleaned = clean_line(unicodedata.normalize("NFKC", text))
    folded = _SUFFIX.sub("", _PREFIX.sub("", cleaned.casefold()))
    approx = bool(_APPROX.search(folded))
    stripped = _APPROX.sub(" ", folded).strip()
    approx = approx or bool(_RELATIVE.fullmatch(stripped) and _RELATIVE.fullmatch(stripped)["plus"])
    try:
        resolved = _resolve(stripped, as_of, tz)
    except (ValueError, OverflowError, OSError):  # impossible dates (2026-02-30), years out of range
        resolved = None
    if resolved is None:
        return PostedTime(raw=text)
    moment, unit = resolved
    try:
        at = _iso(moment)
    except (ValueError, OverflowError):
        return PostedTime(raw=text)
    return PostedTime(raw=text, at=at, approx=approx, unit=unit)


_NEW_MARK = re.compile(r"新岗位|新职位|(?<![a-z])new(?![a-z])", re.I)
_LABEL_SEP = re.compile(r"\s*[·•|｜]\s*")


def parse_published(text: str | None, as_of: datetime | None = None, *, tz: tzinfo = SHANGHAI) -> PostedTime:
    """The publication label line: ``新岗位 · 今天发布`` → is_new True, label ``今天发布``.

    Without a new-marker ``is_new`` is False. With ``as_of`` the label is also resolved (``今天发布`` →
    midnight today in ``tz``).
    """
    if not text or not text.strip() or len(text) > MAX_DATE_TEXT:
        return PostedTime(raw=text)
    parts = [part for part in _LABEL_SEP.split(clean_line(text)) if part]
    is_new = any(_NEW_MARK.fullmatch(part) for part in parts)
    rest = [part for part in parts if not _NEW_MARK.fullmatch(part)]
    label = " · ".join(rest) or None
    if label and as_of is not None:
        posted = parse_posted(label, as_of, tz=tz)
        return PostedTime(raw=text, at=posted.at, approx=posted.approx, unit=posted.unit, is_new=is_new, label=label)
    return PostedTime(raw=text, is_new=is_new, label=label)


def parse_as_of(value: str | None, default: datetime, *, tz: tzinfo | None = None) -> datetime:
    """The CLI's ``--as-of``: an ISO date or datetime → tz-aware UTC; blank → ``default``.

    Naive values (and a naive ``default``) are local time in ``tz``, the machine's zone when None.
    Raises ValueError with a readable message for anything else.
    """
    if value is None or not value.strip():
        moment = default
    else:
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"--as-of {value!r} is not an ISO date or datetime (e.g. 2026-11-29T12:00:00+08:00)") from None
    if moment.tzinfo is None or moment.utcoffset() is None:
        moment = moment.replace(tzinfo=tz) if tz is not None else moment.astimezone()
    return moment.astimezone(UTC)


AS_OF_SOURCES = ("as_of", "fetched", "file_mtime")
"""What an input's ``as_of`` anchor is: given to the ingest (``--as-of``), the fetch time, a file's mtime."""


def posted_source(posted: PostedTime | None, as_of_source: str) -> str | None:
    """``source`` when the post time is a date or time as written, ``as_of_source`` (see :data:`AS_OF_SOURCES`)
    when it is relative to the anchor, None when there is none."""
    if posted is None or posted.at is None:
        return None
    return "source" if posted.unit == "date" else as_of_source


_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")


def source_zone(tz: str | None, *texts: str | None) -> str:
    """The time zone of a source: ``tz`` when given (an IANA name), else Asia/Shanghai when any of ``texts``
    (title, company, location) is Chinese, else UTC."""
    if tz:
        return tz
    return "Asia/Shanghai" if any(t and _CJK.search(t) for t in texts) else "UTC"


def local_time(at: str | None, tz: str) -> str | None:
    """An ISO 8601 UTC time in zone ``tz`` (``2026-11-29T12:00:00+08:00``); None for None or a text that is no ISO
    time (a stored value edited by hand: the record still shows it as stored)."""
    try:
        when = datetime.fromisoformat(at)
    except (TypeError, ValueError):
        return None
    return when.astimezone(ZoneInfo(tz)).isoformat(timespec="seconds")
