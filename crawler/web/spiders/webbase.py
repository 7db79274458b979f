"""What the web spiders share: validated arguments, page parsing, failed requests, complete listings.

A web spider only navigates: it builds requests and hands each response to a page object
(``crawler/web/pages/``), yielding whatever ``page.parse()`` yields. Besides, it keeps a small book
for the closing step that runs after the crawl (``crawler/store/closing.py``): for every *complete
listing* it parsed (a response that lists every open posting of a board, read without a bad
entry), the keys of the postings in it. The book is the spider's ``state`` when the crawl has a
JOBDIR, so a resumed crawl still knows the listings read before the interruption.

The run report (crawler/report.py) gets the complete listings ({listing: [posting keys]}) at the
end, one line per request that failed for good and a ``repaired`` line per stored response decoded in an encoding
it does not declare (``WebPage.decoding_repair``); the pages and postings read are counted in the stats.

Where a spider may go: ``origins()``, its own URLs' hosts and ports plus the source's
``allow_hosts`` (``JOBCRAWL_ALLOW_HOSTS``); ``crawler.web.safety.OriginMiddleware`` refuses any other.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Iterator
from urllib.parse import quote, urlsplit

import scrapy
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadConnectionRefusedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TCPTimedOutError, TimeoutError
from twisted.python.failure import Failure

from crawler.web.pages.base import BoardPage, WebPage
from crawler.files import quote_name
from crawler.report import FILES, FOUND, handed_report
from crawler.arguments import check_arguments
from normalize.clock import now_iso
from crawler.web.safety import DEFAULT_PORTS, Origin, Refused, split_url
from normalize.models import Quarantined, RawInput, RawPosting
from normalize.posting import posting_key


def _split(value: Any) -> Any:
    """``a,b`` (a spider argument from the command line) → ``["a", "b"]``; lists pass through."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


Names = Annotated[list[str], BeforeValidator(_split)]


def _bool(value: Any) -> Any:
    return value.strip().lower() in ("1", "true", "yes", "on") if isinstance(value, str) else value


Flag = Annotated[bool, BeforeValidator(_bool)]

# Exceptions Scrapy raises without a message: what they mean.
SILENT_ERRORS = {
    ResponseDataLossError: "the connection closed before the whole body arrived (shorter than its Content-Length)",
}


def page_reader(page_class: type[WebPage], company: str | None, page_kwargs: dict[str, Any]) -> dict[str, Any]:
    """What ``jobcrawl reparse`` needs to parse a stored response again (crawler/reparse/pages.py)."""
    return {"page": f"{page_class.__module__}.{page_class.__qualname__}", "company": company, "kwargs": page_kwargs}


_NETWORK_FAILURES = (
    ((CannotResolveHostError, DNSLookupError), "DNS lookup failed for {host}"),
    ((DownloadConnectionRefusedError, ConnectionRefusedError), "connection refused by {netloc}"),
    ((DownloadTimeoutError, TimeoutError, TCPTimedOutError), "timed out on {host}"),
)


def failure_reason(failure: Failure) -> str:
    """Why a request failed, in a few words a user can act on: ``DNS lookup failed for api.lever.co``,
    ``connection refused by 127.0.0.1:9``, ``timed out on example.com``, ``HTTP 503``, ``too many
    redirects``; anything else as its exception's name and message. Requests failing for one reason
    share its text (the host is part of it, the path is not)."""
    if failure.check(HttpError):
        return f"HTTP {failure.value.response.status}"
    url = urlsplit(failure.request.url)
    # A host whose robots.txt could not be fetched for a network error is refused (RFC 9309): that error is the reason.
    error = getattr(failure.value, "cause", None) or failure.value
    for types, text in _NETWORK_FAILURES:
        if isinstance(error, types):
            return text.format(host=url.hostname or url.netloc, netloc=url.netloc)
    if failure.check(IgnoreRequest) and "max redirections" in str(failure.value):
        return "too many redirects"
    message = failure.getErrorMessage() or SILENT_ERRORS.get(type(failure.value), "")
    return f"{type(failure.value).__name__}: {message}"


class WebArgs(BaseModel):
    """Arguments every web spider takes."""

    model_config = ConfigDict(extra="forbid")

    company: str | None = Field(None, description="Company display name; each page object documents whether it "
                                                  "overrides the name the source gives or only backs it up.")


class WebSpider(scrapy.Spider):
    """Base of the web spiders. ``Args`` validates the keyword arguments (``-a`` or a sources file)."""

    Args: ClassVar[type[WebArgs]] = WebArgs
    # CONCURRENT_ITEMS: Scrapy starts that many asyncio tasks per response to run the (synchronous)
    # pipelines; 8 instead of 100 saves ~20% CPU per page. Not project-wide: with few workers, items
    # of consecutive responses interleave, and ingest keeps row ids in file order.
    custom_settings: ClassVar[dict[str, Any]] = {
        "HTTPCACHE_ENABLED": True,
        "CONCURRENT_ITEMS": 8,
    }

    def __init__(self, **kwargs: Any):
        self.args = check_arguments(self.name, self.Args, kwargs)
        self._book: dict[str, Any] = {}
        self._origins: list[Origin] | None = None
        self.configure()
        super().__init__()

    def configure(self) -> None:
        """Hook: set attributes from ``self.args`` before Scrapy's own ``__init__`` runs."""

    def own_origins(self) -> list[Origin]:
        """The hosts (and ports) of the spider's own URLs."""
        raise NotImplementedError

    def origins(self) -> list[Origin]:
        """Where this crawl may send requests: its own origins, then the source's ``allow_hosts``."""
        if self._origins is None:
            settings = getattr(self, "settings", None)  # a spider made outside a crawl has none
            extra = [Origin.parse(h) for h in (settings.getlist("JOBCRAWL_ALLOW_HOSTS") if settings else [])]
            self._origins = list(dict.fromkeys([*self.own_origins(), *extra]))
        return self._origins

    def on_site(self, url: str) -> bool:
        """The URL is an http(s) URL on one of :meth:`origins`."""
        try:
            scheme, host, port = split_url(url)
        except ValueError:
            return False
        return scheme in DEFAULT_PORTS and any(origin.admits(host, port) for origin in self.origins())

    @property
    def book(self) -> dict[str, Any]:
        """Listings read and errors met: the persisted spider state under JOBDIR, else a dict of this run."""
        state = getattr(self, "state", None)
        book = state if isinstance(state, dict) else self._book
        book.setdefault("listings", {})
        book.setdefault("errors", 0)
        book.setdefault("gone", 0)
        return book

    # ------------------------------------------------------------------ parsing

    def parse_page(self, response, page_class: type[WebPage], *, listing: str | None = None,
                   **page_kwargs: Any) -> Iterator[RawInput | RawPosting | Quarantined]:
        """Everything ``page_class`` reads from ``response``; records a complete listing under ``listing``."""
        yield from self.page_items(self.read_page(response, page_class, **page_kwargs), listing=listing)

    def read_page(self, response, page_class: type[WebPage], **page_kwargs: Any) -> WebPage:
        """The page object of ``response``, stamped with the fetch time and the configured company."""
        page = page_class.from_response(response, fetched_at=now_iso(), company=self.args.company, **page_kwargs)
        page.reader = page_reader(page_class, self.args.company, page_kwargs)
        return page

    def page_items(self, page: WebPage, *, listing: str | None = None,
                   found: bool = True) -> Iterator[RawInput | RawPosting | Quarantined]:
        """What ``page`` yields, counted (its postings as found unless ``found`` is False: a posting's
        detail describes a posting its listing found); records a complete listing under ``listing``."""
        raw: RawInput | None = None
        keys: list[str] = []
        for item in page.parse():
            if isinstance(item, RawInput):
                raw = item
                item.reader = getattr(page, "reader", None)
                if not self.keep_input(item):
                    continue
                self.crawler.stats.inc_value(FILES)
                if note := page.decoding_repair:
                    self.crawler.stats.inc_value("jobcrawl/repaired/charset")
                    handed_report(self.crawler).repaired.append(f"{quote_name(page.url)}: {note}")
            elif isinstance(item, RawPosting):
                keys.append(posting_key(item.source, item.source_id))
                if found:
                    self.crawler.stats.inc_value(FOUND)
            yield item
        if listing is not None and raw is not None and raw.status == "parsed" and page.complete_listing():
            self.book["listings"][listing] = keys
        self.seen(keys, raw)

    def keep_input(self, raw: RawInput) -> bool:
        """Whether to store this response in ``raw_inputs`` (and count it as a page read)."""
        return True

    def seen(self, keys: list[str], raw: RawInput | None) -> None:
        """Hook: the postings a response held (the JSON-LD spider collects a site-wide listing)."""

    # ------------------------------------------------------------------ failures

    def failed(self, failure: Failure) -> None:
        """Errback: count a request that failed for good (after retries). Requests dropped on purpose
        (a robots.txt rule, the request cap; each counted in its own stats) are not failures; refusals
        (crawler.web.safety: another host, a private address, a response too large, a redirect loop, an
        unreadable robots.txt) are."""
        request = failure.request
        if (failure.check(IgnoreRequest) and not failure.check(Refused)
                and any(w in str(failure.value) for w in ("robots.txt", "request cap"))):
            return
        status = failure.value.response.status if failure.check(HttpError) else None
        reason = failure_reason(failure)
        # 404/410: the page is gone, which is news, not a fault (it does not block closing).
        self.problem(request.url, reason, gone=status in (404, 410))

    def problem(self, url: str, reason: str, *, gone: bool = False) -> None:
        """Report a request that failed for good, or a response that could not be read."""
        self.book["gone" if gone else "errors"] += 1
        self.crawler.stats.inc_value("jobcrawl/errors")
        report = handed_report(self.crawler)
        report.failures[reason] += 1
        report.request_errors.append(f"{url}: {reason}")
        self.logger.warning("failed: %s: %s", url, reason)

    def closing_listings(self, reason: str) -> dict[str, list[str]]:
        """The complete listings read, as {listing: posting keys}, given why the spider closed."""
        return {k: list(v) for k, v in self.book["listings"].items()}

    def closed(self, reason: str) -> None:
        handed_report(self.crawler).listings.update(self.closing_listings(reason))


class BoardArgs(WebArgs):
    """Arguments of a job-board API spider."""

    boards: Names = Field(min_length=1, description="Board names (Greenhouse board tokens, Lever sites, Ashby job boards).")
    base_url: str = Field(description="API root, without a trailing slash (tests point it at 127.0.0.1).")

    @field_validator("boards")
    @classmethod
    def _names(cls, boards: list[str]) -> list[str]:
        for board in boards:
            if "/" in board or not board.strip():
                raise ValueError(f"not a board name: {board!r}")
        return boards

    @field_validator("base_url")
    @classmethod
    def _base(cls, url: str | None) -> str | None:
        if url is None:
            return None
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {url!r}")
        return url.rstrip("/")


class BoardSpider(WebSpider):
    """A spider over one API listing per board; each listing is complete (closing applies per board)."""

    Args: ClassVar[type[BoardArgs]] = BoardArgs
    page_class: ClassVar[type[BoardPage]]
    path: ClassVar[str]  # listing path under base_url, ``{board}`` filled in

    def own_origins(self) -> list[Origin]:
        return [Origin.of_url(self.args.base_url)]

    def board_url(self, board: str) -> str:
        return self.args.base_url + self.path.format(board=quote(board, safe=""))

    async def start(self):
        for board in self.args.boards:
            yield scrapy.Request(self.board_url(board), callback=self.parse_board, errback=self.failed,
                                 cb_kwargs={"board": board})

    def parse_board(self, response, board: str):
        yield from self.parse_page(response, self.page_class, listing=f"{self.name}:{board}", board=board)
