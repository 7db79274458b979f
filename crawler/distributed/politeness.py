"""Politeness held by the whole cluster, not by each worker: per-host pace and concurrency, AutoThrottle,
robots.txt and the per-source request cap, kept in Redis.

- :class:`ClusterPolitenessMiddleware` — before a request goes out, it takes the host's turn in Redis
  (one Lua step on the server's clock): at most one request per *interval* to a host across the
  cluster, and at most ``CONCURRENT_REQUESTS_PER_DOMAIN`` in flight to it. The interval is the
  source's ``DOWNLOAD_DELAY``; with AutoThrottle on, the cluster's AutoThrottle: each response moves
  the host's shared delay towards latency ÷ ``AUTOTHROTTLE_TARGET_CONCURRENCY`` as Scrapy's does
  (never below the source's delay, never above ``AUTOTHROTTLE_MAX_DELAY``, never down on an error).
  The worker's own downloader delay is 0 and its AutoThrottle off: the shared pace replaces them.
- :class:`ClusterRobotsTxtMiddleware` — one worker fetches a host's robots.txt for a source (counted in
  that source's requests, as in a local run); the others read the body from Redis.
- :class:`ClusterRequestCapMiddleware` — the request cap counts the requests of every worker.
"""

from __future__ import annotations

import time
import uuid

from scrapy import Request
from scrapy.exceptions import IgnoreRequest, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet import reactor
from twisted.internet.task import deferLater

from crawler.web.middlewares import RequestCapMiddleware
from crawler.web.safety import RobotsRfcMiddleware, Unreadable, describe

from crawler.distributed.cluster import Keys, connect, source_keys

# The host's turn: wait (ms) until the next send time, or while its in-flight slots are full; else
# take the turn (the next send time moves one interval on) and a slot, held at most ARGV[4] ms.
# -1 when the crawl's plan (KEYS[4]) is gone: the crawl has ended, nothing more is sent for it.
TAKE_TURN = """
if redis.call('EXISTS', KEYS[4]) == 0 then return -1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[2])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= limit then return 25 end
end
local interval = tonumber(redis.call('GET', KEYS[3]) or ARGV[1])
local nxt = tonumber(redis.call('GET', KEYS[1]) or '0')
if nxt > now then return nxt - now end
redis.call('SET', KEYS[1], now + interval, 'PX', 600000)
if limit > 0 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('PEXPIRE', KEYS[2], 600000)
end
return 0
"""

# AutoThrottle's rule on the shared delay (ms): towards latency / target, within [min, max].
THROTTLE = """
local old = tonumber(redis.call('GET', KEYS[1]) or ARGV[5])
local target = tonumber(ARGV[1]) / tonumber(ARGV[2])
local new = (old + target) / 2
if target > new then new = target end
new = math.max(tonumber(ARGV[3]), math.min(tonumber(ARGV[4]), new))
if ARGV[6] == '0' and new < old then return old end
redis.call('SET', KEYS[1], new, 'PX', 600000)
return new
"""


class CrawlHasEnded(IgnoreRequest):
    """The request's crawl has ended (its plan is gone): it is not sent."""


class ClusterPolitenessMiddleware:
    """The per-host turn and in-flight slot of the cluster (see the module docstring)."""

    def __init__(self, crawler):
        s = crawler.settings
        self.crawler = crawler
        self.client = connect(s["JOBCRAWL_REDIS_URL"])
        self.keys, self.crawl = Keys(s["JOBCRAWL_REDIS_PREFIX"]), s["JOBCRAWL_CRAWL_ID"]
        self.plan_key = self.keys.crawl(self.crawl, "plan")
        self.delay_ms = int(s.getfloat("JOBCRAWL_CLUSTER_DELAY") * 1000)
        self.limit = s.getint("JOBCRAWL_CLUSTER_PER_HOST")
        self.hold_ms = int((s.getfloat("DOWNLOAD_TIMEOUT") + 30) * 1000)
        self.throttle = s.getbool("JOBCRAWL_CLUSTER_AUTOTHROTTLE")
        self.start_ms = int(s.getfloat("AUTOTHROTTLE_START_DELAY") * 1000)
        self.max_ms = int(s.getfloat("AUTOTHROTTLE_MAX_DELAY") * 1000)
        self.target = s.getfloat("AUTOTHROTTLE_TARGET_CONCURRENCY") or 1.0
        self._take = self.client.register_script(TAKE_TURN)
        self._adjust = self.client.register_script(THROTTLE)

    @classmethod
    def from_crawler(cls, crawler):
        if not crawler.settings.get("JOBCRAWL_REDIS_URL"):
            raise NotConfigured
        return cls(crawler)

    def _host_keys(self, request: Request) -> list[str]:
        host = urlparse_cached(request).hostname or ""
        return [self.keys.host(self.crawl, host, what) for what in ("next", "active", "delay")]

    async def process_request(self, request: Request, spider=None) -> None:
        keys = self._host_keys(request)
        token = uuid.uuid4().hex
        waited = 0.0
        while True:
            wait_ms = int(self._take(keys=[*keys, self.plan_key],
                                     args=[self._interval(keys), self.limit, token, self.hold_ms]))
            if wait_ms < 0:
                raise CrawlHasEnded(f"crawl {self.crawl} has ended")
            if wait_ms == 0:
                break
            seconds = min(wait_ms, 1000) / 1000
            waited += seconds
            await maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))
        request.meta["jobcrawl_turn"] = (token, time.monotonic())
        if waited:
            self.crawler.stats.inc_value("jobcrawl/cluster/waits")

    def _interval(self, keys: list[str]) -> int:
        """The interval used when the host has no shared delay yet: the source's delay, or
        AutoThrottle's start delay (each response then sets the shared delay)."""
        return max(self.delay_ms, self.start_ms) if self.throttle else self.delay_ms

    def _release(self, request: Request, *, status: int | None) -> None:
        turn = request.meta.pop("jobcrawl_turn", None)
        if turn is None:
            return
        token, sent = turn
        keys = self._host_keys(request)
        if self.limit > 0:
            self.client.zrem(keys[1], token)
        if self.throttle:
            latency_ms = int((time.monotonic() - sent) * 1000)
            ok = status is not None and status < 400
            self._adjust(keys=[keys[2]], args=[latency_ms, self.target, self.delay_ms, self.max_ms,
                                                max(self.delay_ms, self.start_ms), 1 if ok else 0])

    def process_response(self, request: Request, response, spider=None):
        self._release(request, status=response.status)
        return response

    def process_exception(self, request: Request, exception, spider=None) -> None:
        self._release(request, status=None)


UNREADABLE = b"\x00jobcrawl:unreadable:"
"""Prefix of a shared robots.txt entry for a host whose robots.txt could not be read (then why)."""


class ClusterRobotsTxtMiddleware(RobotsRfcMiddleware):
    """The robots.txt middleware (RFC 9309: crawler.web.safety.RobotsRfcMiddleware) whose robots.txt bodies are
    shared by the workers of a source; a robots.txt that could not be read is shared as such (:data:`UNREADABLE`
    and why), so every worker disallows that host."""

    WAIT_SECONDS = 60

    def __init__(self, crawler):
        super().__init__(crawler)
        s = crawler.settings
        self.client = connect(s["JOBCRAWL_REDIS_URL"])
        self.prefix = Keys(s["JOBCRAWL_REDIS_PREFIX"]).source(s["JOBCRAWL_CRAWL_ID"], s["JOBCRAWL_SOURCE"], "robots:")

    async def robot_parser(self, request: Request):
        netloc = urlparse_cached(request).netloc
        if netloc not in self._parsers:
            body = await self._shared(netloc)
            if body is not None and body.startswith(UNREADABLE):
                self._parsers[netloc] = Unreadable(body[len(UNREADABLE):].decode("utf-8", "replace"))
            elif body is not None:
                self._parsers[netloc] = build_from_crawler(self._parserimpl, self.crawler, body)
        return await super().robot_parser(request)

    async def _shared(self, netloc: str) -> bytes | None:
        """The body another worker stored; None when this worker is to fetch it."""
        key = self.prefix + netloc
        deadline = time.monotonic() + self.WAIT_SECONDS
        while time.monotonic() < deadline:
            body = self.client.get(key)
            if body is not None:
                return body
            if self.client.set(key + ":fetching", "1", nx=True, ex=self.WAIT_SECONDS):
                return None
            await maybe_deferred_to_future(deferLater(reactor, 0.1, lambda: None))
        return None

    async def _parse_robots(self, response, netloc: str, request: Request) -> None:
        if response.status >= 500 or response.status == 429:
            self.client.set(self.prefix + netloc, UNREADABLE + f"answered HTTP {response.status}".encode())
        else:
            self.client.set(self.prefix + netloc, response.body)
        await super()._parse_robots(response, netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        if isinstance(exc, CrawlHasEnded):  # nothing is shared for a crawl that has ended
            pass
        elif isinstance(exc, IgnoreRequest):  # not fetched on purpose: no rules, as Scrapy
            self.client.set(self.prefix + netloc, b"")
        else:
            self.client.set(self.prefix + netloc, UNREADABLE + f"could not be fetched ({describe(exc)})".encode())
        super()._robots_error(exc, netloc)


class ClusterRequestCapMiddleware(RequestCapMiddleware):
    """The request cap of a source, counted over every worker (a Redis counter); the worker that reaches
    it marks the source capped, so the others close it too."""

    def __init__(self, crawler, cap: int):
        super().__init__(crawler, cap)
        s = crawler.settings
        self.client = connect(s["JOBCRAWL_REDIS_URL"])
        self.source_keys = source_keys(Keys(s["JOBCRAWL_REDIS_PREFIX"]), s["JOBCRAWL_CRAWL_ID"], s["JOBCRAWL_SOURCE"])

    def left(self) -> int:
        return max(self.cap - int(self.client.get(self.source_keys["sent"]) or 0), 0)

    def take(self) -> bool:
        if int(self.client.incr(self.source_keys["sent"])) <= self.cap:
            return True
        self.client.set(self.source_keys["capped"], "1")
        return False
