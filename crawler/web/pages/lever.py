"""Lever Postings API → RawPosting.

Listing: ``GET https://api.lever.co/v0/postings/{site}?mode=json`` (EU boards: ``api.eu.lever.co``), a JSON
array of postings; without ``skip``/``limit`` it is the whole site (a complete listing). Single
posting: ``/v0/postings/{site}/{id}`` (one object).

Sections follow the hosted page: the description (its bold lines are headings), then each of
``lists`` (``text`` is the heading, ``content`` the ``<li>`` items), then ``additional``.
``createdAt`` is kept as written: milliseconds since the epoch.
"""

from __future__ import annotations

import re
from functools import cached_property
from urllib.parse import parse_qs, urlsplit

from normalize.models import RawSection

from crawler.web.pages.base import BoardPage, Entry, extra_text, json_text, salary_text, shape_error, text_of
from crawler.web.pages.html import Block, blocks_sections, blocks_text, html_blocks, text_blocks

__all__ = ["LeverPage", "LeverPosting", "lever_interval"]

_INTERVAL = re.compile(r"per-(hour|day|week|month|year)-\w+")


def lever_interval(interval: str | None) -> str | None:
    """``per-year-salary`` → ``YEAR``, ``per-hour-wage`` → ``HOUR``; other intervals (``one-time``) as written."""
    if not interval:
        return None
    match = _INTERVAL.fullmatch(interval)
    return match.group(1).upper() if match else interval


class LeverPage(BoardPage):
    """A Lever postings listing or single posting.

    ``board`` is the Lever site name (taken from the URL path ``/postings/{site}`` when not given).
    Company: the configured ``company`` display name, else the site name.
    """

    source = "lever"
    board_pattern = re.compile(r"/postings/([^/?#]+)")

    def complete_listing(self) -> bool:
        query = parse_qs(urlsplit(self.url).query)
        return isinstance(self.data, list) and not {"skip", "limit", "offset"} & set(query)

    def entries(self) -> list[LeverPosting]:
        data = self.data
        if isinstance(data, list):
            postings = data
        elif isinstance(data, dict) and "id" in data and "text" in data:
            postings = [data]
        else:
            raise shape_error(data, "a JSON array of postings or one posting", "Lever")
        return [LeverPosting(self, posting, i) for i, posting in enumerate(postings)]


class LeverPosting(Entry):
    """One Lever posting."""

    page: LeverPage

    def categories(self) -> dict:
        categories = self.get("categories")
        return categories if isinstance(categories, dict) else {}

    def source_id(self) -> str:
        return self.required_id("id")

    def url(self) -> str | None:
        return self.text("hostedUrl")

    def company(self) -> str | None:
        return self.page.company or self.page.board

    def title(self) -> str | None:
        return self.text("text")

    def location(self) -> str | None:
        return text_of(self.categories().get("location"))

    def all_locations(self) -> str | None:
        """``categories.allLocations`` joined by ``; `` when it says more than ``location``."""
        values = self.categories().get("allLocations")
        names = [t for t in (text_of(v) for v in values) if t] if isinstance(values, list) else []
        return "; ".join(names) if names and names != [self.location()] else None

    def posted(self) -> str | None:
        return self.text("createdAt")

    def employment_type(self) -> str | None:
        return text_of(self.categories().get("commitment"))

    def work_mode(self) -> str | None:
        mode = self.text("workplaceType")
        return None if mode == "unspecified" else mode

    def category(self) -> str | None:
        return text_of(self.categories().get("team")) or text_of(self.categories().get("department"))

    def salary(self) -> str | None:
        """``salaryRange`` as ``USD 150000-180000/YEAR``."""
        pay = self.get("salaryRange")
        if not isinstance(pay, dict):
            return None
        return salary_text(text_of(pay.get("currency")), pay.get("min"), pay.get("max"),
                           lever_interval(text_of(pay.get("interval"))))

    def _blocks(self, html_key: str, plain_key: str) -> list[Block]:
        """Lines of an HTML field, or of its plain-text twin when the HTML is empty."""
        value, plain = self.get(html_key), self.get(plain_key)
        if isinstance(value, str) and value.strip():
            return html_blocks(value)
        return text_blocks(plain) if isinstance(plain, str) else []

    def _list_sections(self) -> list[RawSection]:
        lists = self.get("lists")
        sections = []
        for entry in lists if isinstance(lists, list) else []:
            if isinstance(entry, dict):
                content = entry.get("content")
                lines = [b.text for b in html_blocks(content if isinstance(content, str) else None)]
                sections.append(RawSection(heading=text_of(entry.get("text")) or "", lines=lines))
        return sections

    @cached_property
    def _parts(self) -> tuple[list[Block], list[RawSection], list[Block]]:
        return (self._blocks("description", "descriptionPlain"), self._list_sections(),
                self._blocks("additional", "additionalPlain"))

    def sections(self) -> list[RawSection]:
        """Description sections, ``lists``, then ``additional`` sections; text before a heading under ``""``."""
        description, lists, additional = self._parts
        if not lists and not any(b.kind == "heading" for b in description + additional):
            return []
        return blocks_sections(description) + lists + blocks_sections(additional)

    def description(self) -> str | None:
        """The text, when it has no headings and the posting no ``lists``."""
        if self.sections():
            return None
        description, _, additional = self._parts
        return blocks_text(description + additional) or None

    def extra(self) -> dict[str, str]:
        categories = self.categories()
        extra = {
            "department": extra_text(categories.get("department")),
            "team": extra_text(categories.get("team")),
            "all_locations": self.all_locations(),
            "country": self.text("country"),
            "apply_url": self.text("applyUrl"),
            "salary_description": "\n".join(b.text for b in self._blocks("salaryDescription", "salaryDescriptionPlain")),
        }
        if self.get("salaryRange") is not None:
            extra["salary_json"] = json_text(self.get("salaryRange"))
        return {k: v for k, v in extra.items() if v}
