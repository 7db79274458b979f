"""``workday``: Workday career sites through the candidate-experience (CXS) API.

Per site: ``POST {base_url}/wday/cxs/{tenant}/{site}/jobs`` with ``{"appliedFacets": {}, "limit":
page_size, "offset": n, "searchText": ""}`` page after page (the pages together are a complete
listing; the first page's ``total`` is the one used), then each posting's detail, ``GET
{base_url}/wday/cxs/{tenant}/{site}{externalPath}``, for its description. Parsed by
:class:`crawler.web.pages.workday.WorkdayPage`.

Arguments: ``tenant`` and ``site`` (one or more sites, comma-separated on the command line) as in
``https://{tenant}.wd{N}.myworkdayjobs.com/{site}``, ``wd`` (that ``N``), ``base_url`` (default
``https://{tenant}.wd{wd}.myworkdayjobs.com``; give ``wd`` or ``base_url``), ``company`` (display
name, wins over the detail's hiring organization), ``page_size`` (at most 20, Workday's own limit).

    scrapy crawl workday -a tenant=nvidia -a site=NVIDIAExternalCareerSite -a wd=5 -a company=NVIDIA
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

from pydantic import Field, field_validator, model_validator

from crawler.web.pages.workday import WorkdayPage

from crawler.web.spiders.paged import PagedBoardSpider
from crawler.web.spiders.webbase import Names, WebArgs

_NAME = re.compile(r"[A-Za-z0-9_.-]+")
_JSON = {"Content-Type": "application/json", "Accept": "application/json"}


class WorkdayArgs(WebArgs):
    tenant: str = Field(description="Workday tenant: the first label of its myworkdayjobs.com host.")
    site: Names = Field(min_length=1, description="Career site names (the first path segment of the careers URL).")
    wd: int | None = Field(None, ge=1, le=999, description="Data centre number N of wdN.myworkdayjobs.com.")
    base_url: str | None = Field(None, description="Site root; default https://{tenant}.wd{wd}.myworkdayjobs.com.")
    page_size: int = Field(20, ge=1, le=20, description="Postings per listing page (Workday allows 20).")

    @field_validator("tenant")
    @classmethod
    def _tenant(cls, tenant: str) -> str:
        if not _NAME.fullmatch(tenant):
            raise ValueError(f"not a Workday tenant: {tenant!r}")
        return tenant

    @field_validator("site")
    @classmethod
    def _sites(cls, sites: list[str]) -> list[str]:
        for site in sites:
            if not _NAME.fullmatch(site):
                raise ValueError(f"not a Workday site name: {site!r}")
        return sites

    @model_validator(mode="after")
    def _host(self) -> WorkdayArgs:
        if self.base_url is None:
            if self.wd is None:
                raise ValueError("give wd (the N of wdN.myworkdayjobs.com) or base_url")
            self.base_url = f"https://{self.tenant}.wd{self.wd}.myworkdayjobs.com"
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {self.base_url!r}")
        self.base_url = self.base_url.rstrip("/")
        return self


class WorkdaySpider(PagedBoardSpider):
    name = "workday"
    Args = WorkdayArgs
    args: WorkdayArgs
    page_class = WorkdayPage

    def boards(self) -> list[str]:
        return [f"{self.args.tenant}/{site}" for site in self.args.site]

    def site_url(self, board: str) -> str:
        tenant, site = board.split("/", 1)
        return f"{self.args.base_url}/wday/cxs/{quote(tenant, safe='')}/{quote(site, safe='')}"

    def listing_request(self, board, cursor):
        offset = cursor[0] if cursor else 0
        body = {"appliedFacets": {}, "limit": self.args.page_size, "offset": offset, "searchText": ""}
        return self.page_request(f"{self.site_url(board)}/jobs", board, cursor, method="POST", body=json.dumps(body),
                                 headers=_JSON)

    def next_cursor(self, page, cursor):
        """``(offset, total)``: the total is the first page's (later pages may report 0)."""
        offset, total = cursor if cursor else (0, page.paging()[1])
        count = page.paging()[0]
        # without a total, a full page may have a next one
        more = offset + count < total if total is not None else count >= self.args.page_size
        return (offset + count, total) if count and more else None

    def announced_total(self, page):
        return page.paging()[1]

    def detail_request(self, item, board):
        path = item.extra.get("external_path")
        if not path or not path.startswith("/"):
            return None
        return self.detail(self.site_url(board) + path, item, board, headers=_JSON)  # Scrapy escapes what needs it
