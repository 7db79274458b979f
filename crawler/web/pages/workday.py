"""Workday candidate-experience (CXS) API → RawPosting.

Listing: ``POST https://{tenant}.wd{N}.myworkdayjobs.com/wday/cxs/{tenant}/{site}/jobs`` with
``{"appliedFacets": {}, "limit": 20, "offset": 0, "searchText": ""}`` (at most 20 a page):
``{"total", "jobPostings": [{"title", "externalPath", "locationsText", "postedOn", "bulletFields"}]}``.
Workday may report ``total`` on the first page only (later pages saying 0): the first page's is
used. The pages together are the whole site, a complete listing. Detail: ``GET /wday/cxs/{tenant}/{site}{externalPath}``:
``{"jobPostingInfo": {…, "jobDescription", "startDate", "timeType", "jobReqId", "externalUrl"},
"hiringOrganization": {"name"}}``.

Identity: ``{tenant}:{jobPostingId}``, the last segment of ``externalPath`` (the same posting on
two sites of a tenant is one posting). ``postedOn`` is relative text (``Posted 30+ Days Ago``):
the detail's ``startDate`` is preferred, and the detail's other relative texts (``timeLeftToApply``)
are left out, so an unchanged posting reads the same every day. Workday has no salary field: the
salary is the description's pay line.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from crawler.web.pages.base import BoardPage, EntryError, extra_text, shape_error, text_of
from crawler.web.pages.parts import TextEntry, joined

__all__ = ["WorkdayPage", "WorkdayJob"]

class WorkdayPage(BoardPage):
    """A Workday listing page or one posting's detail.

    ``board`` is ``{tenant}/{site}`` (taken from the URL path ``/wday/cxs/{tenant}/{site}`` when not
    given). Company: the configured ``company`` display name, else the detail's
    ``hiringOrganization.name``, else the tenant.
    """

    source = "workday"
    board_pattern = re.compile(r"/wday/cxs/([^/?#]+/[^/?#]+)")

    @property
    def tenant(self) -> str | None:
        return self.board.split("/", 1)[0] if self.board else None

    @property
    def site(self) -> str | None:
        return self.board.split("/", 1)[1] if self.board and "/" in self.board else None

    def is_listing(self) -> bool:
        return isinstance(self.data, dict) and isinstance(self.data.get("jobPostings"), list)

    def complete_listing(self) -> bool:
        return self.is_listing()

    def paging(self) -> tuple[int, int | None]:
        """``(postings on this page, total)`` of a listing page; the total is None unless a positive number."""
        if not self.is_listing():
            return 0, None
        total = self.data.get("total")
        return len(self.data["jobPostings"]), total if isinstance(total, int) and not isinstance(total, bool) and total > 0 else None

    def hiring_organization(self) -> str | None:
        organization = self.data.get("hiringOrganization") if isinstance(self.data, dict) else None
        return text_of(organization.get("name")) if isinstance(organization, dict) else None

    def entries(self) -> list[WorkdayJob]:
        data = self.data
        if self.is_listing():
            return [WorkdayJob(self, job, i) for i, job in enumerate(data["jobPostings"])]
        if isinstance(data, dict) and isinstance(data.get("jobPostingInfo"), dict):
            return [WorkdayJob(self, data["jobPostingInfo"], 0)]
        raise shape_error(data, "an object with a 'jobPostings' list or a 'jobPostingInfo'", "Workday")


class WorkdayJob(TextEntry):
    """One Workday posting: a listing entry, or a detail's ``jobPostingInfo``."""

    page: WorkdayPage

    def posting_id(self) -> str | None:
        """``jobPostingId``, else the last segment of ``externalPath`` or ``externalUrl``."""
        for key in ("jobPostingId", "externalPath", "externalUrl"):
            value = self.text(key)
            if value:
                return urlsplit(value).path.rstrip("/").rsplit("/", 1)[-1] or None
        return None

    def source_id(self) -> str:
        posting = self.posting_id()
        if not posting:
            raise EntryError("no_id", f"entry {self.position} has no jobPostingId, externalPath or externalUrl")
        return f"{self.page.tenant}:{posting}" if self.page.tenant else posting

    def parts(self) -> list[tuple[str | None, Any]]:
        return [(None, self.get("jobDescription"))]

    def url(self) -> str | None:
        own = self.text("externalUrl")
        path = self.text("externalPath")
        if own or not (path and self.page.site):
            return own
        parts = urlsplit(self.page.url)
        return f"{parts.scheme}://{parts.netloc}/{self.page.site}{path}"

    def company(self) -> str | None:
        return self.page.company or self.page.hiring_organization() or self.page.tenant

    def title(self) -> str | None:
        return self.text("title")

    def location(self) -> str | None:
        """The detail's ``location``, else the listing's ``locationsText`` as written: ``2 Locations`` too, which
        names no city (:func:`normalize.fields.parse_location`) until the detail names the place."""
        return self.text("location") or self.text("locationsText")

    def posted(self) -> str | None:
        return self.text("startDate") or self.text("postedOn")

    def valid_through(self) -> str | None:
        return self.text("endDate")

    def employment_type(self) -> str | None:
        return self.text("timeType")

    def work_mode(self) -> str | None:
        return self.text("remoteType")

    def extra(self) -> dict[str, str]:
        country = self.get("country")
        extra = {
            "job_req_id": self.text("jobReqId"),
            "external_path": self.text("externalPath"),
            "bullet_fields": extra_text(self.get("bulletFields")),
            "locations_text": self.text("locationsText"),
            "additional_locations": joined(self.get("additionalLocations"), "descriptor", "; "),
            "country": text_of(country.get("descriptor")) if isinstance(country, dict) else None,
        }
        return {k: v for k, v in extra.items() if v}
