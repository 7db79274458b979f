"""``workable``: Workable accounts through the public careers-page APIs.

``api = "widget"`` (default): one request per account, ``{base_url}/api/v1/widget/accounts/{account}
?details=true`` (every published job with its description; a complete listing).
``api = "v3"``: the jobs list, ``POST {base_url}/api/v3/accounts/{account}/jobs`` page after page
(``{"token": nextPage}``; the pages together are a complete listing), then each job's detail,
``{base_url}/api/v2/accounts/{account}/jobs/{shortcode}``, for its description, requirements and
benefits. Parsed by :class:`crawler.web.pages.workable.WorkablePage`.

An account whose widget answers 404 (some accounts publish no widget) is read through the v3 jobs list
instead, and the run report says so in one line per account (``notes``); when that list fails too, both
requests are reported.

Arguments: ``boards`` (account subdomains, as in ``apply.workable.com/{account}``), ``api``,
``company`` (display name, wins over the account's name), ``base_url``.

    scrapy crawl workable -a boards=huggingface -a company="Hugging Face"
"""

from __future__ import annotations

import json
from typing import Literal
from urllib.parse import quote

from pydantic import Field
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from crawler.report import handed_report
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

    def api(self, board: str) -> str:
        """The API read for ``board``: the configured one, or ``v3`` once its widget answered 404."""
        return "v3" if board in self.book.get("widget_missing", ()) else self.args.api

    def widget_url(self, board: str) -> str:
        return f"{self.args.base_url}/api/v1/widget/accounts/{self.account(board)}?details=true"

    def listing_request(self, board, cursor):
        base = self.args.base_url
        if self.api(board) == "widget":
            return self.page_request(self.widget_url(board), board, cursor).replace(errback=self.widget_failed)
        body = {"token": cursor} if cursor else {}
        request = self.page_request(f"{base}/api/v3/accounts/{self.account(board)}/jobs", board, cursor,
                                    method="POST", body=json.dumps(body), headers=_JSON)
        if self.args.api == "widget":  # the request says why, for a process whose book has not seen the 404
            request = request.replace(errback=self.fallback_failed, meta={"widget_missing": True})
        return request

    def widget_failed(self, failure: Failure):
        """Errback of a widget: a 404 sends the account to the v3 jobs list; any other failure is one."""
        if not (failure.check(HttpError) and failure.value.response.status == 404):
            return self.failed(failure)
        board = failure.request.cb_kwargs["board"]
        self.widget_missing(board)
        return [self.listing_request(board, None)]

    def widget_missing(self, board: str) -> None:
        """Read ``board`` through the v3 jobs list from now on (kept in the book: a resumed crawl knows it)."""
        missing = self.book.setdefault("widget_missing", [])
        if board not in missing:
            missing.append(board)

    def fallback_failed(self, failure: Failure) -> None:
        """Errback of the v3 jobs list of an account whose widget answered 404: both requests failed."""
        board = failure.request.cb_kwargs["board"]
        if failure.request.cb_kwargs["cursor"] is None:
            self.problem(self.widget_url(board), "HTTP 404", gone=True)
        self.failed(failure)

    def parse_listing(self, response, board, cursor):
        if response.meta.get("widget_missing"):
            self.widget_missing(board)
        if cursor is None and self.api(board) != self.args.api:
            line = (f"{self.listing_name(board)}: the widget endpoint answered 404; the v3 jobs list answered "
                    f"(api = \"v3\" in the source goes there directly)")
            handed_report(self.crawler).notes.append(line)
            self.logger.info(line)
        yield from super().parse_listing(response, board, cursor)

    def next_cursor(self, page, cursor):
        return page.next_token() if self.api(page.board) == "v3" else None

    def announced_total(self, page):
        data = page.data
        total = data.get("total") if self.api(page.board) == "v3" and isinstance(data, dict) else None
        return total if isinstance(total, int) and not isinstance(total, bool) else None

    def detail_request(self, item, board):
        if self.api(board) == "widget":
            return None
        url = f"{self.args.base_url}/api/v2/accounts/{self.account(board)}/jobs/{quote(item.source_id, safe='')}"
        return self.detail(url, item, board)
