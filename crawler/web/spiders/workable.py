"""``workable``: Workable accounts through the public careers-page APIs.

``api = "widget"`` (default): one request per account, ``{base_url}/api/v1/widget/accounts/{account}
?details=true`` (every published job with its description; a complete listing).
``api = "v3"``: the jobs list, ``POST {base_url}/api/v3/accounts/{account}/jobs`` page after page
(``{"token": nextPage}``; the pages together are a complete listing), then each job's detail,
``{base_url}/api/v2/accounts/{account}/jobs/{shortcode}``, for its description, requirements and
benefits. Parsed by :class:`crawler.web.pages.workable.WorkablePage`.

Arguments: ``boards`` (account subdomains, as in ``apply.workable.com/{account}``), ``api``,
``company`` (display name, wins over the account's name), ``base_url``.

    scrapy crawl workable -a boards=huggingface -a company="Hugging Face"
"""

from __future__ import annotations

import json
from typing import Literal
from urllib.parse import quote

from pydantic import Field

from crawler.web.pages.workable import WorkablePage

from crawler.web.spiders.paged import PagedBoardSpider
from crawler.web.spiders.webbase import BoardArgs

_JSON = {"Content-Type": "application/json", "Accept": "application/json"}


class WorkableArgs(BoardArgs):
    base_url: str = Field("https://apply.workable.com", description="Careers-page API root.")
    api: Literal["widget", "v3"] = Field("widget", description="widget: one request per account; "
                                                                "v3: the paged jobs list, then each job's detail.")


class WorkableSpider(PagedBoardSpider):
    name = "workable"
    Args = WorkableArgs
    args: WorkableArgs
    page_class = WorkablePage

    def account(self, board: str) -> str:
        return quote(board, safe="")

    def listing_request(self, board, cursor):
        base = self.args.base_url
        if self.args.api == "widget":
            return self.page_request(f"{base}/api/v1/widget/accounts/{self.account(board)}?details=true", board, cursor)
        body = {"token": cursor} if cursor else {}
        return self.page_request(f"{base}/api/v3/accounts/{self.account(board)}/jobs", board, cursor,
                                 method="POST", body=json.dumps(body), headers=_JSON)

    def next_cursor(self, page, cursor):
        return page.next_token() if self.args.api == "v3" else None

    def announced_total(self, page):
        total = page.data.get("total") if self.args.api == "v3" and isinstance(page.data, dict) else None
        return total if isinstance(total, int) and not isinstance(total, bool) else None

    def detail_request(self, item, board):
        if self.args.api == "widget":
            return None
        url = f"{self.args.base_url}/api/v2/accounts/{self.account(board)}/jobs/{quote(item.source_id, safe='')}"
        return self.detail(url, item, board)
