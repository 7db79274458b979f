"""Pieces the Workable, SmartRecruiters, Recruitee and Workday page objects share.

- :class:`TextEntry`: an entry whose description is assembled from parts and whose salary is the
  API's pay object or, without one, the description's pay line.
- :func:`describe_parts`: a description given as several HTML fields, each under its own heading
  (SmartRecruiters ``jobAd.sections``, Workable ``description`` / ``requirements`` / ``benefits``).
- :func:`pay_object`: ``{"min", "max", "currency", "period"}`` as salary text (``EUR 3750-5250/MONTH``).
- :func:`pay_line`: the line of a description that states the pay, for APIs with no salary field.
- :func:`joined`: names of a structured value (``{"label": …}``, lists of them) as one line.
- :func:`merge_listed`: a posting's detail completed by what its listing said.
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Any, Iterable

from normalize.models import RawPosting, RawSection
from normalize.text import clean_line

from crawler.web.pages.base import Entry, salary_text, text_of
from crawler.web.pages.html import Block, blocks_sections, blocks_text, description_blocks

__all__ = ["TextEntry", "describe_parts", "pay_object", "pay_period", "pay_line", "joined", "merge_listed",
           "PAY_LINE_MAX_CHARS"]


class TextEntry(Entry):
    """An entry whose text is :meth:`parts` (read once) and whose salary is :meth:`pay` or the text's pay line."""

    def parts(self) -> list[tuple[str | None, Any]]:
        """``(heading, html or text)`` of each part of the description, in order."""
        raise NotImplementedError

    def pay(self) -> str | None:
        """The API's structured pay as salary text; None when it has none."""
        return None

    @cached_property
    def _described(self) -> tuple[str | None, list[RawSection]]:
        return describe_parts(self.parts())

    def description(self) -> str | None:
        return self._described[0]

    def sections(self) -> list[RawSection]:
        return self._described[1]

    def salary(self) -> str | None:
        """:meth:`pay`; else the first line of the text that states pay, as written."""
        return self.pay() or pay_line(self.sections(), self.description())


def describe_parts(parts: Iterable[tuple[str | None, Any]]) -> tuple[str | None, list[RawSection]]:
    """``(description, sections)`` from ``(heading, html or text)`` parts, in order.

    A part's heading is put before its lines unless its first line already says it; empty parts
    are skipped. Sections when any heading results, else the text alone (as :func:`describe`).
    """
    blocks: list[Block] = []
    for heading, value in parts:
        lines = description_blocks(value) if isinstance(value, str) else []
        if not lines:
            continue
        heading = clean_line(heading) if heading else None
        if heading and not (lines[0].kind == "heading" and lines[0].text.rstrip(":：").casefold() == heading.casefold()):
            lines = [Block("heading", heading), *lines]
        blocks.extend(lines)
    if any(b.kind == "heading" for b in blocks):
        return None, blocks_sections(blocks)
    return blocks_text(blocks) or None, []


_PERIODS = {
    "HOUR": ("hour", "hours", "hourly", "per_hour", "per hour"),
    "DAY": ("day", "days", "daily", "per_day", "per day"),
    "WEEK": ("week", "weeks", "weekly", "per_week", "per week"),
    "MONTH": ("month", "months", "monthly", "per_month", "per month"),
    "YEAR": ("year", "years", "yearly", "annual", "annually", "per_year", "per year", "per annum"),
}
_PERIOD_OF = {word: unit for unit, words in _PERIODS.items() for word in words}


def pay_period(value: Any) -> str | None:
    """``month`` / ``MONTHLY`` / ``per_year`` → ``MONTH`` / ``YEAR``; another word as written; None when empty."""
    text = text_of(value)
    if text is None:
        return None
    return _PERIOD_OF.get(text.casefold(), text)


def pay_object(value: Any) -> str | None:
    """``{"min", "max", "currency", "period"}`` (figures as numbers or text) → ``EUR 3750-5250/MONTH``; None without figures."""
    if not isinstance(value, dict):
        return None
    return salary_text(text_of(value.get("currency")), value.get("min"), value.get("max"), pay_period(value.get("period")))


PAY_LINE_MAX_CHARS = 200
"""Longer lines are prose, not a statement of pay (the salary parser reads at most 200 characters)."""

_PAY_WORD = re.compile(r"salary|salaries|(?<![a-z])pay(?![a-z])|pay range|compensation|(?<![a-z])wages?(?![a-z])"
                       r"|remuneration|hourly rate|薪资|薪酬|月薪|年薪|日薪|时薪|工资|待遇|薪水", re.I)
# A money amount: a currency sign or code next to a figure, or a figure with a unit (30k, 3万, 500元).
# 401(k) / 401k is a retirement plan, not pay.
_CODES = r"USD|EUR|GBP|CNY|RMB|CAD|AUD|SGD|HKD|JPY|CHF|INR|SEK|NOK|DKK|PLN"
_MONEY = re.compile(
    rf"[$€£¥￥]\s?\d|(?<![A-Za-z])(?:{_CODES})\s?\d|(?<!\d)(?!401\s?\(?k)\d[\d,.]*\s?(?:[kK](?![A-Za-z])|万|千|元|(?:{_CODES})(?![A-Za-z]))")


def pay_line(sections: list[RawSection], description: str | None) -> str | None:
    """The first line (at most :data:`PAY_LINE_MAX_CHARS` long) naming pay and an amount, as written."""
    lines = [line for section in sections for line in section.lines]
    lines += (description or "").splitlines()
    for line in lines:
        line = clean_line(line.lstrip("- "))
        if line and len(line) <= PAY_LINE_MAX_CHARS and _PAY_WORD.search(line) and _MONEY.search(line):
            return line
    return None


def joined(value: Any, key: str = "label", sep: str = ", ") -> str | None:
    """A structured value's names as one line: ``{"label": "X"}`` → ``X``; lists joined; text as written."""
    if isinstance(value, dict):
        return text_of(value.get(key))
    if isinstance(value, list):
        names = [joined(v, key, sep) for v in value]
        return sep.join(n for n in names if n) or None
    return text_of(value)


_PROVENANCE = {"source", "source_id", "locator", "position", "input_sha256", "fetched_at", "as_of", "complete_listing",
               "raw_hash"}
_TEXT = {"description", "sections"}
_CONTENT = [name for name in RawPosting.model_fields if name not in _PROVENANCE | _TEXT | {"extra"}]


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def merge_listed(detail: RawPosting, listed: RawPosting) -> RawPosting:
    """The detail's posting, with the listing's value wherever the detail has none.

    Description and sections count as one field (the listing's are taken only when the detail has
    neither); ``extra`` holds both, the detail's entries winning; ``complete_listing`` is the listing's.
    """
    update: dict[str, Any] = {name: getattr(listed, name) for name in _CONTENT
                              if _empty(getattr(detail, name)) and not _empty(getattr(listed, name))}
    if _empty(detail.description) and _empty(detail.sections):
        update.update(description=listed.description, sections=listed.sections)
    update["extra"] = {**listed.extra, **detail.extra}
    update["complete_listing"] = listed.complete_listing
    return detail.model_copy(update=update)
