"""Workable careers-page APIs → RawPosting.

Three public responses of ``apply.workable.com``, told apart by their shape:

- the widget, ``GET /api/v1/widget/accounts/{account}?details=true``: ``{"name", "description",
  "jobs": […]}``, every published job with its description, no paging (a complete listing);
- the jobs list, ``POST /api/v3/accounts/{account}/jobs`` (body ``{}``, then ``{"token": nextPage}``):
  ``{"total", "results": […], "nextPage"}``, a page of jobs without descriptions (the pages together
  are a complete listing);
- one job, ``GET /api/v2/accounts/{account}/jobs/{shortcode}``: the job with ``description``,
  ``requirements`` and ``benefits``.

Sections: the description, then ``requirements`` under "Requirements" and ``benefits`` under
"Benefits" (the hosted page's headings). Workable publishes no salary field: the salary is the
description's pay line.
"""

from __future__ import annotations

import re
from typing import Any

from crawler.web.pages.base import BoardPage, extra_text, shape_error, text_of
from crawler.web.pages.parts import TextEntry, joined

__all__ = ["WorkablePage", "WorkableJob", "PUBLIC_HOST"]

PUBLIC_HOST = "https://apply.workable.com"
"""Where a job's public page lives: ``{PUBLIC_HOST}/{account}/j/{shortcode}/``."""


class WorkablePage(BoardPage):
    """A Workable widget listing, jobs-list page or single job.

    ``board`` is the account's subdomain (taken from the URL path ``/accounts/{account}`` when not
    given). Company: the configured ``company`` display name, else the widget's account ``name``,
    else the account.
    """

    source = "workable"
    board_pattern = re.compile(r"/accounts/([^/?#]+)")

    def listed(self) -> list | None:
        """The jobs of a widget (``jobs``) or jobs-list page (``results``); None for a single job."""
        data = self.data
        if isinstance(data, dict):
            for key in ("jobs", "results"):
                if isinstance(data.get(key), list):
                    return data[key]
        return None

    def complete_listing(self) -> bool:
        return self.listed() is not None

    def next_token(self) -> str | None:
        """The jobs list's ``nextPage`` token; None on the last page (or when this is no jobs-list page)."""
        if not (isinstance(self.data, dict) and self.data.get("results")):
            return None
        return text_of(self.data.get("nextPage"))

    def account_name(self) -> str | None:
        return text_of(self.data.get("name")) if self.listed() is not None else None

    def entries(self) -> list[WorkableJob]:
        jobs = self.listed()
        if jobs is None:
            if not (isinstance(self.data, dict) and "shortcode" in self.data):
                raise shape_error(self.data, "an object with a 'jobs' or 'results' list, or one job", "Workable")
            jobs = [self.data]
        return [WorkableJob(self, job, i) for i, job in enumerate(jobs)]


def _place(value: object) -> str | None:
    """A location object (``city``, ``region`` or ``state``, ``country``) as one line."""
    if not isinstance(value, dict):
        return text_of(value)
    return ", ".join(t for t in (text_of(value.get(k)) for k in ("city", "region", "state", "country")) if t) or None


class WorkableJob(TextEntry):
    """One Workable job (widget entry, jobs-list entry or single job)."""

    page: WorkablePage

    def parts(self) -> list[tuple[str | None, Any]]:
        return [(None, self.get("description")), ("Requirements", self.get("requirements")),
                ("Benefits", self.get("benefits"))]

    def source_id(self) -> str:
        return self.required_id("shortcode")

    def url(self) -> str | None:
        own = self.text("url") or self.text("shortlink")
        if own or not self.page.board:
            return own
        return f"{PUBLIC_HOST}/{self.page.board}/j/{self.source_id()}/"

    def company(self) -> str | None:
        return self.page.company or self.page.account_name() or self.page.board

    def title(self) -> str | None:
        return self.text("title")

    def location(self) -> str | None:
        if "location" in self.data:
            return _place(self.get("location"))
        return _place(self.data)  # the widget writes city, state and country on the job itself

    def posted(self) -> str | None:
        return self.text("published_on") or self.text("published") or self.text("created_at")

    def employment_type(self) -> str | None:
        return self.text("employment_type") or self.text("type")

    def work_mode(self) -> str | None:
        """``workplace`` (``on_site`` → ``on-site``); else ``Remote`` when the job says it is remote."""
        workplace = self.text("workplace")
        if workplace:
            return workplace.replace("_", "-")
        return "Remote" if self.get("telecommuting") is True or self.get("remote") is True else None

    def category(self) -> str | None:
        return joined(self.get("department")) or self.text("function")

    def seniority(self) -> str | None:
        return self.text("experience")

    def education(self) -> str | None:
        return self.text("education")

    def extra(self) -> dict[str, str]:
        extra = {key: extra_text(self.get(key)) for key in (
            "code", "application_url", "function", "industry", "language", "created_at")}
        if "location" in self.data:  # the widget's ``state`` is a region (in the location), the APIs' a status
            extra["state"] = self.text("state")
        locations = self.get("locations")
        places = [_place(p) for p in locations if isinstance(p, dict)] if isinstance(locations, list) else []
        extra["locations"] = "; ".join(p for p in places if p)
        return {k: v for k, v in extra.items() if v}
