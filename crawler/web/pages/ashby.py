"""Ashby posting API → RawPosting.

``GET https://api.ashbyhq.com/posting-api/job-board/{board}?includeCompensation=true`` returns
``{"apiVersion": "1", "jobs": […]}``: every listed job of the board, no paging (a complete listing).

Compensation: the ``Salary`` component of ``summaryComponents`` (else of the first tier) becomes the
salary text (``USD 81000-87000/YEAR``); the tier summary, the per-tier summaries and the whole
object go to ``extra``.
"""

from __future__ import annotations

import re
from functools import cached_property

from normalize.models import RawSection

from crawler.web.pages.base import BoardPage, Entry, extra_text, json_text, salary_text, shape_error, text_of
from crawler.web.pages.html import describe

__all__ = ["AshbyPage", "AshbyJob", "ashby_interval"]

_INTERVAL = re.compile(r"1 (HOUR|DAY|WEEK|MONTH|YEAR)")


def ashby_interval(interval: str | None) -> str | None:
    """``1 YEAR`` → ``YEAR``; ``NONE`` → None; anything else as written."""
    if not interval or interval == "NONE":
        return None
    match = _INTERVAL.fullmatch(interval)
    return match.group(1) if match else interval


class AshbyPage(BoardPage):
    """An Ashby job-board response.

    ``board`` is the job-board name (taken from the URL path ``/job-board/{board}`` when not given).
    Company: the configured ``company`` display name, else the board name.
    """

    source = "ashby"
    board_pattern = re.compile(r"/job-board/([^/?#]+)")

    def complete_listing(self) -> bool:
        return True

    def entries(self) -> list[AshbyJob]:
        data = self.data
        if not (isinstance(data, dict) and isinstance(data.get("jobs"), list)):
            raise shape_error(data, "an object with a 'jobs' list", "Ashby")
        return [AshbyJob(self, job, i) for i, job in enumerate(data["jobs"])]


class AshbyJob(Entry):
    """One Ashby job posting."""

    page: AshbyPage

    def compensation(self) -> dict:
        compensation = self.get("compensation")
        return compensation if isinstance(compensation, dict) else {}

    def salary_component(self) -> dict | None:
        """The base-salary component: from ``summaryComponents``, else from the first tier."""
        compensation = self.compensation()
        tiers = compensation.get("compensationTiers")
        candidates = [compensation.get("summaryComponents")]
        if isinstance(tiers, list) and tiers and isinstance(tiers[0], dict):
            candidates.append(tiers[0].get("components") or [])
        for components in candidates:
            for component in components if isinstance(components, list) else []:
                if isinstance(component, dict) and component.get("compensationType") == "Salary":
                    return component
        return None

    @cached_property
    def _described(self) -> tuple[str | None, list[RawSection]]:
        html = self.get("descriptionHtml")
        if isinstance(html, str) and html.strip():
            return describe(html)
        plain = self.get("descriptionPlain")
        return describe(plain if isinstance(plain, str) else None)

    def source_id(self) -> str:
        return self.required_id("id")

    def url(self) -> str | None:
        return self.text("jobUrl")

    def company(self) -> str | None:
        return self.page.company or self.page.board

    def title(self) -> str | None:
        return self.text("title")

    def location(self) -> str | None:
        return self.text("location")

    def posted(self) -> str | None:
        return self.text("publishedAt")

    def employment_type(self) -> str | None:
        return self.text("employmentType")

    def work_mode(self) -> str | None:
        return self.text("workplaceType") or ("Remote" if self.get("isRemote") is True else None)

    def category(self) -> str | None:
        return self.text("team") or self.text("department")

    def salary(self) -> str | None:
        """The base-salary component as ``USD 81000-87000/YEAR``; else the scrapeable summary as written."""
        component = self.salary_component()
        if component is not None:
            text = salary_text(text_of(component.get("currencyCode")), component.get("minValue"),
                               component.get("maxValue"), ashby_interval(text_of(component.get("interval"))))
            if text:
                return text
        return text_of(self.compensation().get("scrapeableCompensationSalarySummary"))

    def description(self) -> str | None:
        return self._described[0]

    def sections(self) -> list[RawSection]:
        return self._described[1]

    def extra(self) -> dict[str, str]:
        compensation = self.compensation()
        secondary = self.get("secondaryLocations")
        tiers = compensation.get("compensationTiers")
        extra = {
            "department": self.text("department"),
            "team": self.text("team"),
            "secondary_locations": "; ".join(
                t for t in (text_of(s.get("location")) for s in secondary if isinstance(s, dict)) if t
            ) if isinstance(secondary, list) else None,
            "is_remote": extra_text(self.get("isRemote")),
            "is_listed": extra_text(self.get("isListed")),
            "apply_url": self.text("applyUrl"),
            "compensation_summary": text_of(compensation.get("compensationTierSummary")),
            "compensation_tiers": "; ".join(
                f"{text_of(t.get('title'))}: {text_of(t.get('tierSummary'))}" if text_of(t.get("title"))
                else text_of(t.get("tierSummary")) or ""
                for t in tiers if isinstance(t, dict)
            ) if isinstance(tiers, list) else None,
        }
        if any(compensation.get(k) for k in ("compensationTierSummary", "compensationTiers", "summaryComponents")):
            extra["salary_json"] = json_text(compensation)
        return {k: v for k, v in extra.items() if v}
