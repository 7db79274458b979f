"""What the spiders of paged job-board APIs share: every listing page in turn, then each posting's detail.

A *paged board* (a SmartRecruiters company, a Workday site, a Workable account's jobs list) lists
its postings a page at a time, often without their descriptions. The spider reads its pages in
order (``listing_request`` builds the request for a cursor, ``None`` for the first page;
``next_cursor`` reads the next cursor from a page) and, where the listing lacks the text, asks
for each listed posting's detail (``detail_request``). The detail's fields win; the listing's
fill what the detail lacks. A detail that cannot be read keeps the listing's fields, so the
posting is stored as listed and nothing is lost: a 404 or 410 (the posting is being taken down)
is counted in ``jobcrawl/details_missing``; any other failure is an error of the run as usual.

Completeness: when the last page of a board is read, every page of it parsed cleanly and the
distinct postings number what the board's first page announced (when it announces a total),
their keys are the board's complete listing and closing applies to it. A failed or unreadable
page, a cursor seen twice or a listing that changed while it was paged leaves the board
incomplete for this run: it closes nothing. The paging state lives in the spider's book, so a
crawl resumed from its JOBDIR goes on where it stopped.
"""

from __future__ import annotations

from typing import Any, ClassVar, Iterator

import scrapy
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from crawler.web.pages.base import BoardPage, PageError
from crawler.web.pages.parts import merge_listed
from crawler.web.safety import Origin
from normalize.models import Quarantined, RawInput, RawPosting
from normalize.posting import posting_key

from crawler.web.spiders.webbase import WebSpider

__all__ = ["PagedBoardSpider", "merge_listed"]

class PagedBoardSpider(WebSpider):
    """A spider over paged board listings and their postings' details. Subclasses set ``page_class``
    and implement ``listing_request`` and ``next_cursor``; ``detail_request`` when the listing lacks the text."""

    page_class: ClassVar[type[BoardPage]]

    def own_origins(self) -> list[Origin]:
        """Listings and details are all under ``base_url``."""
        return [Origin.of_url(self.args.base_url)]

    def boards(self) -> list[str]:
        """The boards to list, in order."""
        return list(self.args.boards)

    def listing_name(self, board: str) -> str:
        """The board's listing for closing: ``{spider}:{board}``."""
        return f"{self.name}:{board}"

    async def start(self):
        for board in self.boards():
            yield self.listing_request(board, None)

    # ------------------------------------------------------------------ what a subclass says

    def listing_request(self, board: str, cursor: Any) -> scrapy.Request:
        """The request for the listing page at ``cursor`` (None: the first page); see :meth:`page_request`."""
        raise NotImplementedError

    def next_cursor(self, page: BoardPage, cursor: Any) -> Any:
        """The cursor of the page after ``page``; None when ``page`` is the last one (may raise PageError)."""
        return None

    def announced_total(self, page: BoardPage) -> int | None:
        """How many postings the board's first page says the board has; None when it does not say."""
        return None

    def detail_request(self, item: RawPosting, board: str) -> scrapy.Request | None:
        """The request for a listed posting's detail (see :meth:`detail`); None: the listing's fields are all there is."""
        return None

    # ------------------------------------------------------------------ requests

    def page_request(self, url: str, board: str, cursor: Any, **kwargs: Any) -> scrapy.Request:
        return scrapy.Request(url, callback=self.parse_listing, errback=self.failed,
                              cb_kwargs={"board": board, "cursor": cursor}, **kwargs)

    def detail(self, url: str, item: RawPosting, board: str, **kwargs: Any) -> scrapy.Request:
        return scrapy.Request(url, callback=self.parse_detail, errback=self.detail_failed,
                              cb_kwargs={"listed": item, "board": board}, **kwargs)

    # ------------------------------------------------------------------ callbacks

    def parse_listing(self, response, board: str, cursor: Any) -> Iterator[Any]:
        listing = self.listing_name(board)
        paging = self.book.setdefault("paging", {})
        if cursor is None:
            paging[listing] = {"keys": [], "cursors": [], "broken": False, "total": None}
        state = paging.setdefault(listing, {"keys": [], "cursors": [], "broken": True, "total": None})
        page = self.read_page(response, self.page_class, board=board)
        page.reader["details"] = True  # its postings are stored from their details (crawler/reparse/pages.py)
        for item in self.page_items(page):
            if isinstance(item, RawInput) and item.status != "parsed":
                state["broken"] = True
            elif isinstance(item, RawPosting):
                state["keys"].append(posting_key(item.source, item.source_id))
                request = self.detail_request(item, board)
                if request is not None:
                    yield request
                    continue
            yield item
        try:
            if cursor is None:
                state["total"] = self.announced_total(page)
            following = self.next_cursor(page, cursor)
        except PageError:  # the page was unreadable: already quarantined above
            following = None
        if following is not None and following in state["cursors"]:
            self.logger.warning("%s: the listing sent cursor %r twice; stopped paging", listing, following)
            state["broken"], following = True, None
        if following is not None:
            state["cursors"].append(following)
            yield self.listing_request(board, following)
            return
        paging.pop(listing, None)
        keys = list(dict.fromkeys(state["keys"]))
        if state["total"] is not None and len(keys) != state["total"]:
            self.logger.warning("%s: %d postings listed, %d announced (the listing changed while it was paged); "
                                "nothing is closed", listing, len(keys), state["total"])
        elif not state["broken"]:
            self.book["listings"][listing] = keys

    def parse_detail(self, response, listed: RawPosting, board: str) -> Iterator[RawInput | RawPosting | Quarantined]:
        page = self.read_page(response, self.page_class, board=board)
        page.reader["listed"] = listed.model_dump(mode="json")  # what the detail is merged with, for a reparse
        merged = False
        for item in self.page_items(page, found=False):
            if isinstance(item, RawPosting) and item.source_id == listed.source_id:
                item, merged = merge_listed(item, listed), True
            yield item
        if not merged:
            yield listed

    def detail_failed(self, failure: Failure) -> Iterator[RawPosting]:
        """Errback of a detail: the listed posting is stored as listed (a 404/410 is counted, not an error)."""
        if failure.check(HttpError) and failure.value.response.status in (404, 410):
            self.crawler.stats.inc_value("jobcrawl/details_missing")
            self.logger.info("detail gone (HTTP %s), stored as listed: %s", failure.value.response.status,
                             failure.request.url)
        else:
            self.failed(failure)
        yield failure.request.cb_kwargs["listed"]
