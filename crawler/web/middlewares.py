"""Downloader middlewares for polite, incremental web crawls (enabled in crawler/settings.py).

- :class:`BackoffRetryMiddleware` replaces Scrapy's RetryMiddleware: the same retry rules
  (``RETRY_TIMES``, ``RETRY_HTTP_CODES``), but a retry waits first: ``Retry-After`` when the
  server sends one (429/503), else an exponential backoff. ``Retry-After`` also raises the
  download delay of the whole host, which AutoThrottle then lowers again as responses come back.
- :class:`WireStatsMiddleware` counts what crossed the network, below the HTTP cache: requests
  sent, responses by the status the server sent (a revalidated page counts as its 304), and
  cache hits that needed no request.
- :class:`RequestCapMiddleware` sends at most ``JOBCRAWL_MAX_REQUESTS`` requests over the network per
  crawl (cache hits are free), then closes the spider with reason ``request_cap``.
- :class:`ContactUserAgentMiddleware` fills ``{contact}`` in ``USER_AGENT`` from ``JOBCRAWL_CONTACT``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.downloadermiddlewares.useragent import UserAgentMiddleware
from scrapy.http import Response
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import reactor
from twisted.internet.task import deferLater


logger = logging.getLogger(__name__)


def retry_after_seconds(value: bytes | str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


class BackoffRetryMiddleware(RetryMiddleware):
    """RetryMiddleware that waits before each retry.

    Wait: ``Retry-After`` when the response has one, else ``JOBCRAWL_RETRY_BACKOFF`` × 2^(n−1) for
    the n-th retry, at most ``JOBCRAWL_RETRY_BACKOFF_MAX``. A ``Retry-After`` longer than
    ``JOBCRAWL_RETRY_AFTER_MAX`` is not waited for: the response is given up on (stat
    ``retry/retry_after_too_long``) and the next scheduled run tries again.
    """

    def __init__(self, settings):
        super().__init__(settings)
        self.backoff = settings.getfloat("JOBCRAWL_RETRY_BACKOFF", 1.0)
        self.backoff_max = settings.getfloat("JOBCRAWL_RETRY_BACKOFF_MAX", 60.0)
        self.retry_after_max = settings.getfloat("JOBCRAWL_RETRY_AFTER_MAX", 300.0)

    def backoff_delay(self, request: Request) -> float:
        """The wait before retry number ``retry_times + 1`` of ``request`` without a Retry-After."""
        return min(self.backoff * 2 ** request.meta.get("retry_times", 0), self.backoff_max)

    async def process_response(self, request: Request, response: Response, spider=None) -> Request | Response:
        retry_after = None
        if response.status in self.retry_http_codes and not request.meta.get("dont_retry", False):
            retry_after = retry_after_seconds(response.headers.get(b"Retry-After"))
            if retry_after is not None and retry_after > self.retry_after_max:
                self.crawler.stats.inc_value("retry/retry_after_too_long")
                logger.warning("Not retrying %s: Retry-After %.0f s exceeds JOBCRAWL_RETRY_AFTER_MAX", request, retry_after)
                return response
        delay = self.backoff_delay(request) if retry_after is None else retry_after
        result = super().process_response(request, response)
        if isinstance(result, Request):
            if retry_after is not None:
                self.slow_down_host(request, retry_after)
            await self.wait(delay)
        return result

    async def process_exception(self, request: Request, exception: Exception, spider=None) -> Request | Response | None:
        delay = self.backoff_delay(request)
        result = super().process_exception(request, exception)
        if isinstance(result, Request):
            await self.wait(delay)
        return result

    async def wait(self, seconds: float) -> None:
        if seconds > 0:
            self.crawler.stats.inc_value("retry/wait_seconds", seconds)
            await maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))

    def slow_down_host(self, request: Request, seconds: float) -> None:
        """Raise the download delay of the request's host (its downloader slot) to ``seconds``."""
        slot = self.crawler.engine.downloader.slots.get(request.meta.get("download_slot"))
        if slot is not None:
            ceiling = self.crawler.settings.getfloat("AUTOTHROTTLE_MAX_DELAY", 60.0)
            slot.delay = max(slot.delay, min(seconds, ceiling))


class WireStatsMiddleware:
    """Stats of the network side of the HTTP cache (``jobcrawl/http/…``); local file reads are not counted.

    Sits closer to the downloader than HttpCacheMiddleware, so ``requests`` counts only requests
    that were sent and ``status/304`` the revalidations, while a fresh cache hit (flag ``cached``)
    counts as ``cache_hits``.
    """

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_request(self, request: Request, spider=None) -> None:
        if request.url.startswith("file:"):  # a local file read (the file spiders): no HTTP
            return
        self.stats.inc_value("jobcrawl/http/requests")

    def process_response(self, request: Request, response: Response, spider=None) -> Response:
        if request.url.startswith("file:"):
            return response
        if "cached" in response.flags:
            self.stats.inc_value("jobcrawl/http/cache_hits")
        else:
            self.stats.inc_value(f"jobcrawl/http/status/{response.status}")
        return response


class RequestCapMiddleware:
    """A hard cap on the requests one crawl sends: the next one is dropped (``IgnoreRequest``, stat
    ``jobcrawl/request_cap/dropped``) and the spider closes with reason ``request_cap``. Sits between
    the HTTP cache and the network, so fresh cache hits do not count."""

    def __init__(self, crawler, cap: int):
        self.crawler, self.cap, self.sent, self.closing = crawler, cap, 0, False
        crawler.jobcrawl_request_cap = self  # what spiders ask: :meth:`left`


    @classmethod
    def from_crawler(cls, crawler):
        cap = crawler.settings.getint("JOBCRAWL_MAX_REQUESTS")
        if cap <= 0:
            raise NotConfigured
        return cls(crawler, cap)

    def left(self) -> int:
        """Requests that may still be sent (0 once the cap is reached)."""
        return max(self.cap - self.sent, 0)

    def take(self) -> bool:
        """Count one request to send; False once the cap is reached."""
        if self.sent < self.cap:
            self.sent += 1
            return True
        return False

    def process_request(self, request: Request, spider=None) -> None:
        if self.take():
            return
        self.crawler.stats.inc_value("jobcrawl/request_cap/dropped")
        if not self.closing:
            self.closing = True
            deferred_from_coro(self.crawler.engine.close_spider_async(reason="request_cap"))
        raise IgnoreRequest(f"request cap reached ({self.cap} requests)")


class ContactUserAgentMiddleware(UserAgentMiddleware):
    """UserAgentMiddleware whose ``USER_AGENT`` may hold ``{contact}``, filled from ``JOBCRAWL_CONTACT``."""

    @classmethod
    def from_crawler(cls, crawler):
        middleware = super().from_crawler(crawler)
        contact = crawler.settings.get("JOBCRAWL_CONTACT") or ""
        middleware.user_agent = (middleware.user_agent or "").replace("{contact}", contact)
        return middleware
