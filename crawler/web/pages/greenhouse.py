"""Greenhouse Job Board API → RawPosting.

Listing: ``GET https://boards-api.greenhouse.io/v1/boards/{token}/jobs?content=true`` (``{"jobs": […],
"meta": …}``, the whole board: a complete listing). Single job: ``/jobs/{id}?pay_transparency=true``
(one job object, with ``pay_input_ranges`` when the board publishes pay).

``content`` is entity-escaped HTML. Boards with pay transparency also render the range into
``content`` (``<div class="content-pay-transparency">``); it becomes the salary when the response
has no ``pay_input_ranges`` and is taken out of the description either way.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import cached_property
from typing import Any

from lxml import etree

from normalize.models import RawSection
from normalize.text import clean_line

from crawler.web.pages.base import BoardPage, Entry, extra_text, json_text, salary_text, shape_error, text_of
from crawler.web.pages.html import describe, parse_html

__all__ = ["GreenhousePage", "GreenhouseJob"]



class GreenhousePage(BoardPage):
    """A Greenhouse board listing or single-job response.

    ``board`` is the board token (taken from the URL path ``/boards/{token}`` when not given).
    Company: the configured ``company`` display name, else the job's ``company_name``, else the token.
    """

    source = "greenhouse"
    board_pattern = re.compile(r"/boards/([^/?#]+)")

    def is_listing(self) -> bool:
        return isinstance(self.data, dict) and isinstance(self.data.get("jobs"), list)

    def complete_listing(self) -> bool:
        return self.is_listing()

    def entries(self) -> list[GreenhouseJob]:
        data = self.data
        if self.is_listing():
            jobs = data["jobs"]
        elif isinstance(data, dict) and "id" in data and "title" in data:
            jobs = [data]
        else:
            raise shape_error(data, "an object with a 'jobs' list or one job", "Greenhouse")
        return [GreenhouseJob(self, job, i) for i, job in enumerate(jobs)]


def _cents(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    try:
        return Decimal(value) / 100
    except ArithmeticError:
        return None


class GreenhouseJob(Entry):
    """One Greenhouse job post."""

    page: GreenhousePage

    @cached_property
    def _content(self) -> tuple[etree._Element, list[tuple[str | None, str, str]]]:
        """The content tree without its pay-transparency blocks, and those blocks as (title, range, blurb)."""
        content = self.get("content")
        root = parse_html(content if isinstance(content, str) else "")
        pay = []
        for block in root.xpath('.//div[contains(concat(" ", @class, " "), " content-pay-transparency ")]'):
            for box in block.xpath('.//div[contains(concat(" ", @class, " "), " pay-input ")]') or [block]:
                texts = {
                    name: clean_line(" ".join(el.text_content() for el in
                                              box.xpath(f'.//div[contains(concat(" ", @class, " "), " {name} ")]')))
                    for name in ("title", "pay-range", "description")
                }
                if texts["pay-range"]:
                    pay.append((texts["title"] or None, texts["pay-range"], texts["description"]))
            block.drop_tree()
        return root, pay

    @cached_property
    def _described(self) -> tuple[str | None, list[RawSection]]:
        return describe(self._content[0])

    def pay_ranges(self) -> list[dict]:
        ranges = self.get("pay_input_ranges")
        return [r for r in ranges if isinstance(r, dict)] if isinstance(ranges, list) else []

    def source_id(self) -> str:
        return self.required_id("id")

    def url(self) -> str | None:
        return self.text("absolute_url")

    def company(self) -> str | None:
        return self.page.company or self.text("company_name") or self.page.board

    def title(self) -> str | None:
        return self.text("title")

    def location(self) -> str | None:
        location = self.get("location")
        return text_of(location.get("name")) if isinstance(location, dict) else text_of(location)

    def posted(self) -> str | None:
        return self.text("first_published") or self.text("updated_at")

    def valid_through(self) -> str | None:
        return self.text("application_deadline")

    def category(self) -> str | None:
        return self.names("departments")

    def names(self, key: str) -> str | None:
        values = self.get(key)
        if not isinstance(values, list):
            return None
        return ", ".join(n for n in (text_of(v.get("name")) for v in values if isinstance(v, dict)) if n) or None

    def salary_ranges(self) -> list[tuple[str | None, str]]:
        """``(title, salary text)`` per pay range: ``pay_input_ranges`` as ``USD 50000-75000`` (cents → units;
        the API gives no period), else the ranges rendered in ``content`` as written (``$108,400—$129,600 USD``)."""
        ranges = [(text_of(r.get("title")), salary_text(text_of(r.get("currency_type")), _cents(r.get("min_cents")),
                                                         _cents(r.get("max_cents"))))
                  for r in self.pay_ranges()]
        found = [(title, text) for title, text in ranges if text]
        return found or [(title, text) for title, text, _ in self._content[1]]

    def salary(self) -> str | None:
        """The first pay range (all of them are in ``extra["salary_ranges"]`` when there are several)."""
        ranges = self.salary_ranges()
        return ranges[0][1] if ranges else None

    def description(self) -> str | None:
        return self._described[0]

    def sections(self) -> list[RawSection]:
        return self._described[1]

    def extra(self) -> dict[str, str]:
        extra: dict[str, str | None] = {
            key: extra_text(self.get(key))
            for key in ("internal_job_id", "requisition_id", "updated_at", "language")
        }
        extra["offices"] = self.names("offices")
        metadata = self.get("metadata")
        for field in metadata if isinstance(metadata, list) else []:
            if isinstance(field, dict) and text_of(field.get("name")):
                extra[f"metadata.{text_of(field['name'])}"] = extra_text(field.get("value"))
        salary_ranges = self.salary_ranges()
        extra["salary_titles"] = "; ".join(title for title, _ in salary_ranges if title)
        if len(salary_ranges) > 1:
            extra["salary_ranges"] = "; ".join(f"{title}: {text}" if title else text for title, text in salary_ranges)
        if self.pay_ranges():
            extra["salary_json"] = json_text(self.pay_ranges())
            extra["salary_description"] = "\n".join(b for b in (text_of(r.get("blurb")) for r in self.pay_ranges()) if b)
        else:
            extra["salary_description"] = "\n".join(blurb for _, _, blurb in self._content[1] if blurb)
        return {k: v for k, v in extra.items() if v}
