"""``jobcrawl worker``: a long-running process that crawls whatever distributed run is active.

It polls Redis for the active crawl; when one appears, it opens one Scrapy crawler per source of
the crawl's plan (the source's spider, arguments and settings, its run id) in its one Twisted
reactor. Each crawler takes its source's requests from the shared scrapy-redis queue
(crawler/distributed/scheduler.py: leased pops), runs the whole pipeline chain and hands its
batches to a :class:`~crawler.distributed.spool.RedisSink`. Start requests are the coordinator's (it seeded
the queue), so the crawler's own ``start()`` is not read.

What a push carries (one ``MULTI``, :class:`ClusterWorker`): the batch, the acknowledgement of
every request the engine is done with (its rows are in this batch or an earlier one) and the
report delta since the last push (what its stats counted, new problem and error lines of its report, and
complete listings read). Every second, and whenever the crawler is idle, the store stage's
partial batch is flushed the same way. An idle crawler stays open while its source has requests
queued or in flight anywhere in the cluster (putting back those of workers that are gone), and
closes, with a last push of its report, when there are none, when the source's request cap was
reached or when the coordinator stops the crawl.
"""

from __future__ import annotations

import logging
import pickle
import signal
import sys
import threading
import time
from collections import Counter
from typing import Any, Callable

import redis
from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider

from crawler.procs import settle_gc
from crawler.report import COUNTED, REQUESTS, STATUS, CrawlReport, numeric, handed_report, plain

from normalize.redact import redact_url

from crawler.distributed.cluster import (HEARTBEAT_TTL, Heartbeat, Keys, connect, load_plan, new_id, pending, redis_problem, requeue_dead,
                      requeue_leases, source_keys)
from crawler.distributed.scheduler import wake

logger = logging.getLogger(__name__)

SYNC_SECONDS = 1.0
"""How often a busy crawler pushes its partial batch, acknowledgements and report delta."""

_LINES = ("problems", "repaired", "errors", "request_errors", "notes", "tables")


def _counted(key: str) -> bool:
    """A stat the run report counts (inputs, postings, requests, responses): a change is pushed."""
    return key in COUNTED or key == REQUESTS or key.startswith(STATUS)


class ReportDelta:
    """What of a crawler's stats, its :class:`CrawlReport`'s lines (and its spider's complete listings) has not
    been pushed yet: numbers as differences, lines as those added since.

    Listings are taken from the spider's book as each is read completely in one response (a Greenhouse,
    Lever, Ashby, Recruitee board, a Workable widget). A listing made of several responses (the pages of a
    paged board, a ``complete`` JSON-LD site) is read by several workers, none of which saw it whole, so
    it closes nothing in a distributed run (a known limit: its postings are stored, none is closed).
    """

    def __init__(self, crawler):
        self.crawler = crawler
        self.report = handed_report(crawler)
        self.stats: dict[str, Any] = {}
        self.lines = dict.fromkeys(_LINES, 0)
        self.failures: Counter = Counter()
        self.listings: set[str] = set()
        self._next: tuple | None = None

    def _book_listings(self) -> dict[str, list[str]]:
        from crawler.web.spiders.paged import PagedBoardSpider

        if isinstance(self.crawler.spider, PagedBoardSpider):
            return {}
        book = getattr(self.crawler.spider, "book", None)
        return dict(book.get("listings", {})) if isinstance(book, dict) else {}

    def take(self, *, final: bool = False) -> CrawlReport | None:
        """The delta since the last :meth:`commit` (None when nothing the report counts changed); call
        :meth:`commit` once pushed. The last one (``final``) carries the stats that are not numbers too."""
        r = self.report
        stats = plain(self.crawler.stats.get_stats())
        delta = CrawlReport()
        delta.stats = {k: v - self.stats.get(k, 0) if numeric(v) else v for k, v in stats.items()
                       if final or (numeric(v) and v != self.stats.get(k, 0))}
        delta.failures = Counter(r.failures) - self.failures
        for name in _LINES:
            setattr(delta, name, list(getattr(r, name)[self.lines[name]:]))
        listings = self._book_listings()
        delta.listings = {k: list(v) for k, v in listings.items() if k not in self.listings}
        if final:
            delta.finish_reason, delta.stage_failed = r.finish_reason, r.stage_failed
        self._next = ({k: v for k, v in stats.items() if numeric(v)}, {n: len(getattr(r, n)) for n in _LINES},
                      Counter(r.failures), set(listings) | self.listings)
        counted = any(_counted(k) for k in delta.stats) or any(getattr(delta, n) for n in _LINES)
        return delta if final or counted or delta.listings else None

    def commit(self) -> None:
        if self._next is not None:
            self.stats, self.lines, self.failures, self.listings = self._next
            self._next = None


class ClusterWorker:
    """Extension of a worker's crawler: pushes (batch, acknowledgements, report delta), keeps the crawler
    open while its source has work anywhere in the cluster, and closes it when the source is done."""

    def __init__(self, crawler):
        from twisted.internet import task

        from crawler.distributed.spool import RedisSink
        from crawler.run.sinks import attach

        s = crawler.settings
        self.crawler = crawler
        self.client = connect(s["JOBCRAWL_REDIS_URL"])
        self.keys = Keys(s["JOBCRAWL_REDIS_PREFIX"])
        self.crawl, self.source, self.worker_id = s["JOBCRAWL_CRAWL_ID"], s["JOBCRAWL_SOURCE"], s["JOBCRAWL_WORKER_ID"]
        self.sk = source_keys(self.keys, self.crawl, self.source)
        self.reports_key = self.keys.crawl(self.crawl, "reports")
        self.stop_key = self.keys.crawl(self.crawl, "stop")
        self.delta = ReportDelta(crawler)
        self.final = False
        self.hold = False  # stopping: requests in progress are cancelled, so nothing more is acknowledged
        self.plan_key = self.keys.crawl(self.crawl, "plan")
        self.watch: RedisWatch | None = s.get("JOBCRAWL_REDIS_WATCH")
        self.sink = RedisSink(self.client, self.keys.spool, attach=self._attach,
                              max_batches=s.getint("JOBCRAWL_SPOOL_MAX_BATCHES", 200), guard=self.plan_key)
        attach(crawler, self.sink)
        self.last_sync = time.monotonic()
        self.loop = task.LoopingCall(self._tick)
        crawler.signals.connect(self.opened, signal=signals.spider_opened)
        crawler.signals.connect(self.idle, signal=signals.spider_idle)
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    # ------------------------------------------------------------------ pushes

    def _attach(self, pipe) -> Callable[[], None]:
        scheduler = getattr(self.crawler, "jobcrawl_scheduler", None)
        leases = scheduler.finished_leases() if scheduler is not None and not self.hold else []
        if leases:
            pipe.hdel(self.sk["inflight"], *leases)
        delta = self.delta.take(final=self.final)
        if delta is not None:
            pipe.rpush(self.reports_key, pickle.dumps((self.source, self.worker_id, delta), protocol=5))
        if self.final:
            pipe.srem(self.sk["members"], self.worker_id)

        def pushed() -> None:
            if scheduler is not None:
                scheduler.forget(leases)
            self.delta.commit()

        return pushed

    def _store_stage(self):
        for component in getattr(self.crawler.engine.scraper.itemproc, "middlewares", ()):
            if hasattr(component, "flush") and hasattr(component, "batch"):
                return component
        return None

    def sync(self) -> None:
        """Push the store stage's partial batch (if any) with the acknowledgements and the report delta."""
        store = self._store_stage()
        if store is not None and store.batch:
            store.flush()  # the sink attaches acknowledgements and the delta to this push
        self.sink.sync()
        self.last_sync = time.monotonic()

    # ------------------------------------------------------------------ signals

    def opened(self, spider) -> None:
        self.client.sadd(self.sk["members"], self.worker_id)
        self.loop.start(0.2, now=False)

    def _tick(self) -> None:
        from crawler.run.sinks import CrawlEnded

        try:
            # the plan and the stop key: 1 running, 2 stopped by the coordinator, 0 ended (its keys are gone)
            state = self.client.exists(self.plan_key, self.stop_key)
            if state != 1:
                self.hold = True
                self._close("shutdown")
                return
            if time.monotonic() - self.last_sync >= SYNC_SECONDS:
                self.sync()
        except CrawlEnded:
            self.hold = True
            self._close("shutdown")
            return
        except Exception as err:  # noqa: BLE001 — the sink's failure is in the report; the crawl closes
            if not (self.watch is not None and self.watch.failed(err)):
                logger.exception("%s: pushing to the spool failed", self.source)
            self._close("failed")
            return
        wake(self.crawler)

    def _close(self, reason: str) -> None:
        from scrapy.utils.defer import deferred_from_coro

        if self.crawler.engine is not None and self.crawler.engine.running:
            deferred_from_coro(self.crawler.engine.close_spider_async(reason=reason))

    def idle(self, spider) -> None:
        self.sync()
        if self.client.exists(self.stop_key):
            raise CloseSpider("shutdown")
        if self.client.exists(self.sk["capped"]):
            raise CloseSpider("request_cap")
        requeue_dead(self.client, self.keys, self.crawl, self.source)
        queued, inflight = pending(self.client, self.keys, self.crawl, self.source)
        if queued or inflight:
            raise DontCloseSpider
        # nothing queued or in flight anywhere: the source is done; the engine closes it ("finished")

    def closed(self, spider, reason: str) -> None:
        if self.loop.running:
            self.loop.stop()
        self.delta.report.ended(self.crawler.stats.get_stats(), reason)
        self.final = True
        if reason != "finished":
            self.hold = True
        from crawler.run.sinks import SinkFailed

        try:
            self.sink.sync()
            scheduler = getattr(self.crawler, "jobcrawl_scheduler", None)
            if scheduler is not None and scheduler.leases:  # not done here: another worker crawls them
                requeue_leases(self.client, self.keys, self.crawl, self.source, list(scheduler.leases))
        except SinkFailed as err:  # the crawl ended, or Redis is gone: its leases go back when its heartbeat expires
            if self.watch is not None:
                self.watch.failed(err)
        except redis.RedisError as err:
            if self.watch is None or not self.watch.failed(err):
                raise

        logger.info("%s: closed (%s)", self.source, reason)


class SeededStart:
    """Spider middleware: the crawler's own start requests are not read (the coordinator seeded them)."""

    async def process_start(self, start):
        return
        yield  # an async generator that yields nothing


# --------------------------------------------------------------------------- settings and the loop


def crawler_settings(project, *, url: str, prefix: str, crawl: str, source: str, entry: dict[str, Any],
                     worker_id: str, concurrency: int | None) -> dict[str, Any]:
    """The settings of a worker's crawler of one source: the source's own, then the cluster's parts."""
    own = dict(entry.get("settings") or {})
    throttle = bool(own.get("AUTOTHROTTLE_ENABLED", project.getbool("AUTOTHROTTLE_ENABLED")))
    delay = float(own.get("DOWNLOAD_DELAY", project.getfloat("DOWNLOAD_DELAY")))
    per_host = int(own.get("CONCURRENT_REQUESTS_PER_DOMAIN", project.getint("CONCURRENT_REQUESTS_PER_DOMAIN")))
    mws = dict(project.getdict("DOWNLOADER_MIDDLEWARES"))
    mws.update({"crawler.web.middlewares.RequestCapMiddleware": None,
                "crawler.distributed.politeness.ClusterRequestCapMiddleware": 940,
                "crawler.distributed.politeness.ClusterPolitenessMiddleware": 945,
                "crawler.web.safety.RobotsRfcMiddleware": None,
                "crawler.distributed.politeness.ClusterRobotsTxtMiddleware": 100})
    extensions = {**project.getdict("EXTENSIONS"), "crawler.distributed.worker.ClusterWorker": 10}
    out = {**own,
           "JOBCRAWL_REDIS_URL": url, "JOBCRAWL_REDIS_PREFIX": prefix, "JOBCRAWL_CRAWL_ID": crawl,
           "JOBCRAWL_SOURCE": source, "JOBCRAWL_WORKER_ID": worker_id, "JOBCRAWL_RUN_ID": entry["run_id"],
           "SCHEDULER": "crawler.distributed.scheduler.ClusterScheduler",
           "SPIDER_MIDDLEWARES": {**project.getdict("SPIDER_MIDDLEWARES"), "crawler.distributed.worker.SeededStart": 0},
           "DOWNLOADER_MIDDLEWARES": mws, "EXTENSIONS": extensions,
           # the cluster's pace replaces the worker's own (crawler/distributed/politeness.py)
           "AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0, "RANDOMIZE_DOWNLOAD_DELAY": False,
           "JOBCRAWL_CLUSTER_DELAY": delay, "JOBCRAWL_CLUSTER_AUTOTHROTTLE": throttle,
           "JOBCRAWL_CLUSTER_PER_HOST": per_host,
           # a request that took its turn is sent at once, never held in the downloader's slot (where it
           # could outlive its crawl): the cluster's per-host limit is the one that holds
           "CONCURRENT_REQUESTS_PER_DOMAIN": int(own.get("CONCURRENT_REQUESTS", project.getint("CONCURRENT_REQUESTS"))),
           "HTTPCACHE_ENABLED": False}  # a worker keeps no files: every run fetches afresh
    if concurrency:
        out["CONCURRENT_REQUESTS"] = out["CONCURRENT_REQUESTS_PER_DOMAIN"] = concurrency
    return out


def warm_up(project, *, url: str, prefix: str, worker_id: str, concurrency: int | None) -> None:
    """Import every component a crawler of this worker builds (pipelines, middlewares, extensions, the
    scheduler, download handlers) and load the skill taxonomy, so that joining a crawl costs a worker
    milliseconds instead of its first crawler's imports; a component that cannot be loaded raises here."""
    from scrapy.settings import Settings
    from scrapy.utils.conf import build_component_list
    from scrapy.utils.misc import load_object

    from crawler.files import read_taxonomy

    settings = Settings(project.copy_to_dict())
    settings.update(crawler_settings(project, url=url, prefix=prefix, crawl="-", source="-", entry={"run_id": None},
                                     worker_id=worker_id, concurrency=concurrency))
    paths = [settings["SCHEDULER"], *settings.getwithbase("DOWNLOAD_HANDLERS").values()]
    for name in ("ITEM_PIPELINES", "DOWNLOADER_MIDDLEWARES", "SPIDER_MIDDLEWARES", "EXTENSIONS"):
        paths += build_component_list(settings.getwithbase(name))
    for path in paths:
        if isinstance(path, str):
            load_object(path)
    read_taxonomy(settings.get("JOBCRAWL_TAXONOMY"))


class RedisWatch:
    """A worker's view of its Redis: one line when Redis is lost (unreachable, out of memory) and one when it
    answers again, however many parts of the worker hit the outage meanwhile."""

    def __init__(self, url: str, say: Callable[[str], None]):
        self.url, self.say = url, say
        self.down: str | None = None
        self.prefix = ""
        self._lock = threading.Lock()

    def failed(self, err: BaseException) -> bool:
        """Whether ``err`` (or an error it was raised from) is Redis lost; the first of an outage is said."""
        seen = err
        while seen is not None and not isinstance(seen, redis.RedisError):
            sub = getattr(seen, "subFailure", None)  # Twisted's FirstError of a DeferredList (Scrapy's pipelines)
            seen = sub.value if sub is not None else seen.__cause__ or seen.__context__
        if seen is None or isinstance(seen, redis.WatchError) or redis_problem(seen).startswith("failed"):
            return False
        with self._lock:
            if self.down is None:
                self.down = redis_problem(seen)
                self.say(f"{self.prefix}Redis at {redact_url(self.url)} {self.down}, retrying")
        return True

    def answered(self) -> bool:
        """Redis answered: whether this ends an outage (then said)."""
        with self._lock:
            if self.down is None:
                return False
            self.down = None
        self.say(f"{self.prefix}Redis at {redact_url(self.url)} answers again")
        return True


class OutageFilter(logging.Filter):
    """Drops the log records of errors that are Redis lost (Scrapy logs each with its traceback), and Scrapy's
    records meanwhile: the :class:`RedisWatch` says the outage once."""

    def __init__(self, watch: RedisWatch):
        super().__init__()
        self.watch = watch

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:  # Scrapy's lines on closing a crawler while Redis is lost come without their error
            return not (self.watch.down is not None and record.name.startswith("scrapy."))
        return not self.watch.failed(exc)

    def install(self) -> None:
        """On every handler of the root logger (each crawler Scrapy starts puts a new one there)."""
        for handler in logging.getLogger().handlers:
            if self not in handler.filters:
                handler.addFilter(self)


def run_worker(url: str, *, prefix: str = "jobcrawl", only: set[str] | None = None, concurrency: int | None = None,
               once: bool = False, settings: dict[str, Any] | None = None, say: Callable[[str], None] = print) -> int:
    """Serve distributed runs until SIGINT/SIGTERM (or, with ``once``, until the first crawl joined ends).

    ``only``: take part only in these sources. Redis lost (unreachable, out of memory) is one line; the
    worker's crawlers close (their leases go back to the queue when its heartbeat expires) and, when Redis
    answers again, the worker joins the active crawl under a new id. Returns the exit status (0)."""
    from scrapy.crawler import CrawlerProcess

    from crawler.report import REPORT_SETTING
    from crawler.run.project import CRAWL_PRIORITY
    from crawler.settings import project_settings
    from crawler.web.sources import project_spiders

    client = connect(url)
    keys = Keys(prefix)
    me = {"id": new_id()}
    me["heartbeat"] = Heartbeat(client, keys.worker(me["id"]), me["id"])
    watch = RedisWatch(url, say)
    watch.prefix = f"worker {me['id']}: "
    project = project_settings(settings)
    process = CrawlerProcess(project)
    outages = OutageFilter(watch)
    outages.install()
    from scrapy.utils.reactor import install_reactor

    install_reactor(project["TWISTED_REACTOR"])  # before the first crawler: the poll loop needs the reactor
    from twisted.internet import reactor, task

    spiders = project_spiders()
    warm_up(project, url=url, prefix=prefix, worker_id=me["id"], concurrency=concurrency)
    settle_gc()
    joined: set[str] = set()
    running: dict[str, list] = {}
    state = {"stopping": False}

    def join(crawl: str) -> None:
        plan = load_plan(client, keys, crawl)
        if plan is None:
            return
        joined.add(crawl)
        names = [n for n in plan["sources"] if only is None or n in only]
        client.hset(keys.crawl(crawl, "joined"), me["id"], "\n".join(names))
        if not names:
            return
        worker_id = me["id"]
        say(f"worker {worker_id}: joined crawl {crawl}: {', '.join(names)}")
        for name in names:
            entry = plan["sources"][name]
            crawler = process.create_crawler(spiders[entry["spider"]])
            for key, value in crawler_settings(project, url=url, prefix=prefix, crawl=crawl, source=name, entry=entry,
                                               worker_id=worker_id, concurrency=concurrency).items():
                crawler.settings.set(key, value, priority=CRAWL_PRIORITY)
            crawler.settings.set("JOBCRAWL_REDIS_WATCH", watch, priority=CRAWL_PRIORITY)
            crawler.settings.set(REPORT_SETTING, CrawlReport(), priority=CRAWL_PRIORITY)
            running.setdefault(crawl, []).append(crawler)
            d = process.crawl(crawler, **entry["args"])
            d.addBoth(lambda result, c=crawl, cr=crawler: ended(c, cr, result))
            outages.install()

    def ended(crawl: str, crawler, result) -> None:
        if hasattr(result, "getTraceback") and not watch.failed(result.value):
            say(f"worker {me['id']}: crawl {crawl}: {crawler.settings['JOBCRAWL_SOURCE']} failed: "
                f"{result.getErrorMessage()}")
            logger.error("crawler failed: %s", result.getTraceback())
        crawlers = running.get(crawl, [])
        if crawler in crawlers:
            crawlers.remove(crawler)
        report = handed_report(crawler)
        worker_id = crawler.settings["JOBCRAWL_WORKER_ID"]
        if watch.down is None:
            say(f"worker {worker_id}: crawl {crawl}: {crawler.settings['JOBCRAWL_SOURCE']} closed "
                f"({report.finish_reason}): requests {report.requests} · postings found {report.found}")
        if not crawlers:
            running.pop(crawl, None)
            if watch.down is None:
                say(f"worker {worker_id}: crawl {crawl} done")
            if once and not state["stopping"] and watch.down is None:
                stop()
        return None

    def close_all() -> None:
        """Redis is lost: close every crawler (nothing is acknowledged any more); the crawls may be joined again."""
        for crawl, crawlers in running.items():
            joined.discard(crawl)
            for crawler in crawlers:
                for ext in getattr(crawler.extensions, "middlewares", ()):
                    if isinstance(ext, ClusterWorker):
                        ext.hold = True
                        ext._close("shutdown")

    def poll() -> None:
        if state["stopping"]:
            return
        outages.install()
        try:
            heartbeat = me["heartbeat"]
            if heartbeat.error is not None and watch.down is None:
                raise heartbeat.error  # an out-of-memory Redis refuses the heartbeat, reads still work
            if watch.down is not None:
                client.set(keys.worker(me["id"]), me["id"], px=int(HEARTBEAT_TTL * 1000))  # writable again?
            active = client.get(keys.active)
        except redis.RedisError as err:
            if watch.failed(err):
                close_all()
            else:
                logger.warning("cannot read the active crawl: %s", err)
            return
        if watch.down is not None and not running:
            watch.answered()
            me["heartbeat"].stop()  # a new id: the old one's leases go back to the queue at once
            me["id"] = new_id()
            me["heartbeat"] = Heartbeat(client, keys.worker(me["id"]), me["id"])
            watch.prefix = f"worker {me['id']}: "
        if watch.down is None and active is not None and active.decode() not in joined:
            join(active.decode())

    def stop() -> None:
        if state["stopping"]:
            return
        state["stopping"] = True
        for crawlers in running.values():
            for crawler in crawlers:
                for ext in getattr(crawler.extensions, "middlewares", ()):
                    if isinstance(ext, ClusterWorker):
                        ext.hold = True
        d = process.stop()
        d.addBoth(lambda _: reactor.stop())

    def on_signal(signum, frame) -> None:
        reactor.callFromThread(stop)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    say(f"worker {me['id']}: waiting for a crawl on {redact_url(url)} (Ctrl-C to stop)")
    loop = task.LoopingCall(poll)
    loop.start(0.5)
    try:
        process.start(stop_after_crawl=False, install_signal_handlers=False)
    finally:
        me["heartbeat"].stop()  # its leases go back to the queue at once
        sys.stdout.flush()
    return 0
