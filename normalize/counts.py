"""Counts as written (``约 1900 个在招``, ``1.2万``, ``招2人``, ``10+``) and the app's company/market blocks.

Rules:
- The first number in the text is the count; ``千`` × 1,000, ``万`` × 10,000; a count that is not a
  whole number after its unit (``1.5``) is None.
- ``approx`` is True for 约/大约/近/~/about/over and for a trailing ``+`` or ``多`` (``10+``, ``2千+``,
  ``100多``): the source gives a lower bound, so the exact count is not known.
- ``若干`` and text without a number give ``(None, False)``. Nothing raises.
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal

from .models import Activity
from .text import clean_line

__all__ = ["parse_count", "parse_company_activity", "parse_market", "MAX_COUNT_TEXT", "MAX_COUNT"]

MAX_COUNT_TEXT = 200
"""Longer text is not a count line: nothing is searched in it."""
MAX_COUNT = 10**8
"""Larger numbers of postings or of employees are not counts (the largest employers have about 2 million): the text
is kept as written, the count left empty."""

_COUNT = re.compile(
    r"(?P<pre>约|大约|近|~|about|approximately|around|over|more than)?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s*(?P<unit>万|千|k(?![a-z]))?\s*(?P<plus>\+|多|余)?"
)
_UNIT = {"万": 10_000, "千": 1_000, "k": 1_000}
_SEPARATOR = re.compile(r"\s*[·•|｜]\s*")
_OPEN = re.compile(r"在招|职位|岗位|openings?|jobs?|positions?", re.I)
# 其中人工智能 19 个
_IN_CATEGORY = re.compile(r"^其中\s*(?P<category>.+?)\s*(?P<count>约?\s*\d[\d,.]*\s*[万千]?\s*\+?)\s*个?.*$")


def _normalize(text: str) -> str:
    return clean_line(unicodedata.normalize("NFKC", text))


def parse_count(text: str | None) -> tuple[int | None, bool]:
    """``约 1900 个在招`` → ``(1900, True)``; ``73 个在招`` → ``(73, False)``; ``10+`` → ``(10, True)``."""
    if not text or len(text) > MAX_COUNT_TEXT:
        return None, False
    match = _COUNT.search(_normalize(text).casefold())
    if not match:
        return None, False
    num, unit = match["num"], _UNIT.get(match["unit"] or "", 1)
    if "." in num:
        value = Decimal(num) * unit
        if value != value.to_integral_value():
            return None, False
        value = int(value)
    else:
        value = int(num.replace(",", "")) * unit
    if value > MAX_COUNT:
        return None, False
    return value, bool(match["pre"] or match["plus"])


_DIGIT = re.compile(r"\d")


def _split_block(lines: list[str] | None) -> tuple[str | None, str | None, list[str]]:
    """The block's label (first line with neither digit nor ``·``), its count line as written (first line
    with one) and that line's parts, NFKC-normalized."""
    label = raw = normalized = None
    for line in lines or []:
        if not isinstance(line, str) or len(line) > MAX_COUNT_TEXT or not line.strip():
            continue
        if raw is not None and label:
            break
        line_normalized = _normalize(line)
        if _DIGIT.search(line_normalized) or _SEPARATOR.search(line):
            if raw is None:
                raw, normalized = line, line_normalized
        elif not label:
            label = clean_line(line)
    parts = [part for part in _SEPARATOR.split(normalized) if part] if raw else []
    return label, raw, parts


def parse_company_activity(lines: list[str] | None) -> Activity:
    """``["这家公司招聘很活跃", "约 1900 个在招 · 其中人工智能 19 个"]`` → label, raw count line,
    open_jobs 1900 (approx), category 人工智能, open_in_category 19. Missing parts stay None."""
    label, raw, parts = _split_block(lines)
    fields: dict = {}
    for part in parts:
        in_category = _IN_CATEGORY.match(part)
        if in_category and "category" not in fields:
            fields["category"] = in_category["category"]
            fields["open_in_category"] = parse_count(in_category["count"])[0]
        elif "open_jobs" not in fields and _OPEN.search(part):
            fields["open_jobs"], fields["open_jobs_approx"] = parse_count(part)
    return Activity(label=label, raw=raw, **fields)


def parse_market(lines: list[str] | None) -> Activity:
    """``["选择面较广", "杭州 · 人工智能 · 约 190 个在招"]`` → label, raw, city 杭州, category 人工智能,
    open_jobs 190 (approx). Parts before the count are city then category, in the app's order."""
    label, raw, parts = _split_block(lines)
    fields: dict = {}
    names: list[str] = []
    for part in parts:
        if "open_jobs" not in fields and _OPEN.search(part) and _DIGIT.search(part):
            fields["open_jobs"], fields["open_jobs_approx"] = parse_count(part)
        else:
            names.append(part)
    return Activity(label=label, raw=raw, city=names[0] if names else None,
                    category=names[1] if len(names) > 1 else None, **fields)
