"""``smartrecruiters``: SmartRecruiters companies through the public Posting API.

Per company: ``{base_url}/v1/companies/{company}/postings?limit={page_size}&offset={n}`` page after
page (the pages together are a complete listing), then each posting's detail,
``/v1/companies/{company}/postings/{id}``, for its ``jobAd`` sections and compensation. Parsed by
:class:`crawler.web.pages.smartrecruiters.SmartRecruitersPage`.

Arguments: ``boards`` (company identifiers, as in ``jobs.smartrecruiters.com/{identifier}``),
``company`` (display name, wins over the postings' ``company.name``), ``base_url``, ``page_size``.

    scrapy crawl smartrecruiters -a boards=Ubisoft2 -a company=Ubisoft
"""

from __future__ import annotations

from urllib.parse import quote

from pydantic import Field

from crawler.web.pages.smartrecruiters import SmartRecruitersPage

from crawler.web.spiders.paged import PagedBoardSpider
from crawler.web.spiders.webbase import BoardArgs


class SmartRecruitersArgs(BoardArgs):
    base_url: str = Field("https://api.smartrecruiters.com", description="Posting API root.")
    page_size: int = Field(100, ge=1, le=100, description="Postings per listing page (the API allows 100).")


class SmartRecruitersSpider(PagedBoardSpider):
    name = "smartrecruiters"
    Args = SmartRecruitersArgs
    args: SmartRecruitersArgs
    page_class = SmartRecruitersPage

    def postings_url(self, board: str) -> str:
        return f"{self.args.base_url}/v1/companies/{quote(board, safe='')}/postings"

    def listing_request(self, board, cursor):
        return self.page_request(f"{self.postings_url(board)}?limit={self.args.page_size}&offset={cursor or 0}",
                                 board, cursor)

    def next_cursor(self, page, cursor):
        return page.next_offset()

    def announced_total(self, page):
        total = page.data.get("totalFound") if page.is_listing() else None
        return total if isinstance(total, int) and not isinstance(total, bool) else None

    def detail_request(self, item, board):
        return self.detail(f"{self.postings_url(board)}/{quote(item.source_id, safe='')}", item, board)
