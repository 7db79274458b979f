"""Run the CPU-heavy pipelines (normalize → skills → store) in a worker process.

Scrapy runs every pipeline in its one reactor thread, and CPython runs one thread of Python at a
time: parsing, normalizing, tagging and storing a posting all queue up on one core. On the 2-core
machines jobcrawl is measured on, the engine and the spider's parsing keep one core busy, so the
stages listed in ``JOBCRAWL_STAGE_PIPELINES`` run in a worker process on the other: this pipeline
hands them the items in small batches and returns at once: a sender thread pickles each batch
onto the pipe, so the engine never waits on the pipe while the worker starts (about 2 s of imports)
or catches up, until ``SEND_QUEUE`` batches are waiting (a bound on the memory they hold). The
stage pipelines are the ordinary pipeline classes, built by their own ``from_crawler`` in the
worker; their stats come back when the spider closes and are added to the crawl's.

``JOBCRAWL_STAGE_PROCESS = False`` runs the same stages inline, in the engine's thread (the CLI
does so when it crawls more than two sources at once, one worker each would be too many, and when
it ingests at most ``crawler.jobs.INLINE_STAGES_MAX_BYTES`` of files, too little to pay for the
worker's start-up).

The worker dies with its parent (``PR_SET_PDEATHSIG``): a killed crawl leaves no process writing
behind it, so the database holds exactly the batches committed before the kill.
"""

from __future__ import annotations

import multiprocessing
import queue
import resource
import signal
import threading
from typing import Any

from scrapy.settings import Settings
from scrapy.utils.misc import load_object

from crawler.procs import run_reporting

SEND_EVERY = 64  # items per message to the worker
SEND_QUEUE = 16  # batches waiting to be sent (about 1,000 items, ~2 s of crawling) before process_item waits


class DictStats:
    """The part of Scrapy's StatsCollector the stage pipelines use, as a plain dict."""

    def __init__(self) -> None:
        self._stats: dict[str, Any] = {}

    def get_value(self, key: str, default: Any = None) -> Any:
        return self._stats.get(key, default)

    def set_value(self, key: str, value: Any) -> None:
        self._stats[key] = value

    def inc_value(self, key: str, count: int = 1, start: int = 0) -> None:
        self._stats[key] = self._stats.get(key, start) + count

    def get_stats(self) -> dict[str, Any]:
        return self._stats


class _StageCrawler:
    """What ``from_crawler`` of a stage pipeline reads: settings and stats."""

    def __init__(self, settings: dict[str, Any], stats: DictStats):
        self.settings = Settings(settings)
        self.stats = stats


def build_stages(paths: list[str], settings: dict[str, Any], stats) -> list:
    crawler = _StageCrawler(settings, stats)
    return [load_object(path).from_crawler(crawler) for path in paths]


def _run_stages(conn, paths: list[str], settings: dict[str, Any]) -> dict[str, Any]:
    """Worker process (run by ``crawler.procs.run_reporting``): every item received through the stages;
    returns the stats, which are sent back at the end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the engine, which then closes us cleanly
    stats = DictStats()
    stages = build_stages(paths, settings, stats)
    for stage in stages:
        if hasattr(stage, "open_spider"):
            stage.open_spider(None)
    while (items := conn.recv()) is not None:
        for item in items:
            for stage in stages:
                item = stage.process_item(item, None)
    for stage in stages:
        if hasattr(stage, "close_spider"):
            stage.close_spider(None)
    usage = resource.getrusage(resource.RUSAGE_SELF)  # all of the worker's threads (the writer's too)
    stats.set_value("jobcrawl/stage_worker_cpu_s", round(usage.ru_utime + usage.ru_stime, 3))
    return stats.get_stats()


class StageError(RuntimeError):
    """A stage pipeline failed in the worker process."""


class OffloadPipeline:
    def __init__(self, crawler):
        self.crawler = crawler
        self.stats = crawler.stats
        settings = crawler.settings
        self.paths = list(settings.getlist("JOBCRAWL_STAGE_PIPELINES"))
        self.in_process = not settings.getbool("JOBCRAWL_STAGE_PROCESS", True)
        # Plain values only cross the process boundary: the project's settings as they are now.
        self.settings = {k: v for k, v in settings.copy_to_dict().items() if _picklable(v)}
        self.stages: list = []
        self.buffer: list = []
        self.conn = None
        self.process = None
        self.outbox: queue.Queue = queue.Queue(maxsize=SEND_QUEUE)
        self.sender: threading.Thread | None = None
        self.send_error: BaseException | None = None

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def open_spider(self, spider=None):
        # The file spiders name the parser versions the store records complete parses under (crawler/ledger.py).
        self.settings["JOBCRAWL_PARSERS"] = dict(getattr(self.crawler.spider, "parsers", None) or {})
        if self.in_process:
            self.stages = build_stages(self.paths, self.settings, self.stats)
            for stage in self.stages:
                if hasattr(stage, "open_spider"):
                    stage.open_spider(spider)

    def _start_worker(self) -> None:
        """Start the worker process and the sender thread: at the first item, so that a run that stores
        nothing (every input unchanged since its last parse) starts no process."""
        context = multiprocessing.get_context("spawn")  # no fork: the reactor and threads live here
        self.conn, child = context.Pipe()
        self.process = context.Process(target=run_reporting, name="jobcrawl-stages", daemon=True,
                                       args=(child, _run_stages, (child, self.paths, self.settings)))
        self.process.start()
        child.close()
        self.sender = threading.Thread(target=self._sender, name="jobcrawl-stage-sender", daemon=True)
        self.sender.start()

    def process_item(self, item, spider=None):
        if self.in_process:
            for stage in self.stages:
                item = stage.process_item(item, spider)
            return item
        if self.process is None:
            self._start_worker()
        self.buffer.append(item)
        if len(self.buffer) >= SEND_EVERY:
            self._send()
        return item

    def _sender(self) -> None:
        """Sender thread: batches from the outbox onto the pipe, then the end mark (None)."""
        try:
            while True:
                batch = self.outbox.get()
                self.conn.send(batch)
                if batch is None:
                    return
        except Exception as err:  # the worker is gone (BrokenPipeError), or a batch would not pickle
            self.send_error = err

    def _queue(self, batch: list | None) -> None:
        """Put a batch (or the end mark) in the outbox; waits while it is full, fails once the sender has."""
        while True:
            if self.send_error is not None:
                self._fail(self._send_failure())
            try:
                self.outbox.put(batch, timeout=0.5)
                return
            except queue.Full:
                continue

    def _send(self) -> None:
        batch, self.buffer = self.buffer, []
        self._queue(batch)

    def _gone(self) -> str:
        self.process.join(timeout=10)
        return f"the stage worker process ended unexpectedly (exit code {self.process.exitcode})"

    def _send_failure(self) -> str:
        if isinstance(self.send_error, (OSError, EOFError)):
            return self._gone()
        return f"sending items to the stage worker process failed ({self.send_error!r})"

    def _fail(self, message: str, detail: str = "") -> None:
        """Record the failure in the stats (the run's status becomes ``failed``) and raise it."""
        self.stats.set_value("jobcrawl/stage_failed", message)
        raise StageError(f"{message}{detail}")

    def close_spider(self, spider=None):
        if self.in_process:
            for stage in self.stages:
                if hasattr(stage, "close_spider"):
                    stage.close_spider(spider)
            return
        if self.process is None:  # no item came: no worker was started
            return
        try:
            if self.buffer:
                self._send()
            self._queue(None)
            self.sender.join()
            if self.send_error is not None:
                self._fail(self._send_failure())
            status, payload = self.conn.recv()
        except (EOFError, OSError):
            self._fail(self._gone())
        finally:
            self.process.join(timeout=60)
        if status != "ok":
            self._fail(payload.strip().splitlines()[-1], f"\na stage pipeline failed in the worker process:\n{payload}")
        merge_stats(self.stats, payload)


def merge_stats(stats, values: dict[str, Any]) -> None:
    """Add the worker's stats to the crawl's: numbers are added, anything else is set."""
    for key, value in values.items():
        current = stats.get_value(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(current, (int, float)):
            stats.set_value(key, current + value)
        else:
            stats.set_value(key, value)


def _picklable(value: Any) -> bool:
    import pickle

    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True
