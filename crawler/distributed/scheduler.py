"""The scheduler of a worker's crawler: scrapy-redis's, with a reliable queue.

scrapy-redis keeps a source's requests in a Redis sorted set (its ``PriorityQueue``) and the
fingerprints of the requests seen in a Redis set (``RFPDupeFilter``), so every worker of the
cluster takes from one queue and no request is crawled twice. Its pop removes the request from
Redis, so a worker killed mid-request would lose it: here a pop *leases* the request instead (it
moves, in one Lua step, into the source's in-flight hash under the worker's id). The worker
acknowledges a lease once the response's rows are in the item spool (crawler/distributed/worker.py);
the leases of a worker whose heartbeat expired go back to the queue (:func:`cluster.requeue_dead`).
"""

from __future__ import annotations

from typing import Any

from scrapy import Request
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import Base
from scrapy_redis.scheduler import Scheduler

from crawler.distributed.cluster import POP_LEASED, Keys, connect, source_keys


def in_progress(crawler) -> set[Request]:
    """The requests the engine has taken from the scheduler and not finished with: a request leaves this
    set only after its callback's output went through the item pipelines and its new requests were
    scheduled. (Scrapy exposes no signal for that moment; ``_slot.inprogress`` is the engine's own book.)"""
    slot = getattr(crawler.engine, "_slot", None)
    return slot.inprogress if slot is not None else set()


def wake(crawler) -> None:
    """Ask the engine to look at the scheduler now (it does so by itself only every 5 s when idle)."""
    slot = getattr(crawler.engine, "_slot", None)
    if slot is not None and slot.closing is None:
        slot.nextcall.schedule()


class LeasedQueue(Base):
    """scrapy-redis's priority queue (a sorted set, score −priority) whose :meth:`pop` leases."""

    def __init__(self, server, spider, key: str, serializer=None, *, inflight_key: str, owner: str):
        super().__init__(server, spider, key, serializer)
        self.inflight_key, self.owner, self.seq = inflight_key, owner, 0
        self._pop = server.register_script(POP_LEASED)

    def __len__(self) -> int:
        return int(self.server.zcard(self.key))

    def push(self, request: Request) -> None:
        self.server.zadd(self.key, {self._encode_request(request): -request.priority})

    def pop(self, timeout: int = 0) -> tuple[str, Request] | None:
        """The best request and its lease (``<worker>|<n>``), or None when the queue is empty."""
        self.seq += 1
        lease = f"{self.owner}|{self.seq}"
        data = self._pop(keys=[self.key, self.inflight_key], args=[lease])
        if data is None:
            return None
        return lease, self._decode_request(data)


class ClusterScheduler(Scheduler):
    """scrapy-redis's scheduler over one source of one crawl (``JOBCRAWL_CRAWL_ID``, ``JOBCRAWL_SOURCE``),
    persisted (a restart resumes), with leased pops. ``leases`` maps each lease to its request."""

    def __init__(self, crawler, server, keys: Keys, crawl: str, source: str, owner: str):
        sk = source_keys(keys, crawl, source)
        super().__init__(server, persist=True, queue_key=sk["requests"],
                         dupefilter=RFPDupeFilter(server, key=sk["dupefilter"]), dupefilter_key=sk["dupefilter"])
        self.crawler, self.inflight_key, self.owner = crawler, sk["inflight"], owner
        self.leases: dict[str, Request] = {}
        self.stats = crawler.stats
        crawler.jobcrawl_scheduler = self

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        return cls(crawler, connect(s["JOBCRAWL_REDIS_URL"]), Keys(s["JOBCRAWL_REDIS_PREFIX"]),
                   s["JOBCRAWL_CRAWL_ID"], s["JOBCRAWL_SOURCE"], s["JOBCRAWL_WORKER_ID"])

    def open(self, spider) -> None:
        self.spider = spider
        self.queue = LeasedQueue(self.server, spider, self.queue_key, self.serializer,
                                 inflight_key=self.inflight_key, owner=self.owner)

    def close(self, reason: str) -> None:
        """Nothing to flush: the queue belongs to the cluster."""

    def next_request(self) -> Request | None:
        got = self.queue.pop()
        if got is None:
            return None
        lease, request = got
        self.leases[lease] = request
        self.stats.inc_value("scheduler/dequeued/redis")
        return request

    def finished_leases(self) -> list[str]:
        """Leases whose request the engine is done with (its rows are in the store stage's batch, or sent)
        and whose response the spider is not still reading (a sitemap read as the queue has room)."""
        busy = in_progress(self.crawler) | getattr(self.crawler.spider, "still_reading", set())
        return [lease for lease, request in self.leases.items() if request not in busy]

    def forget(self, leases: list[str]) -> None:
        for lease in leases:
            self.leases.pop(lease, None)


def seed_source(server, keys: Keys, crawl: str, source: str, spider: Any, requests: list[Request]) -> int:
    """Put a source's start requests into its queue (the coordinator's seeding), once per fingerprint."""
    sk = source_keys(keys, crawl, source)
    queue = LeasedQueue(server, spider, sk["requests"], inflight_key=sk["inflight"], owner="seed")
    seen = RFPDupeFilter(server, key=sk["dupefilter"])
    added = 0
    for request in requests:
        if request.dont_filter or not seen.request_seen(request):
            queue.push(request)
            added += 1
    return added
