"""Run the CPU-heavy pipelines (normalize → skills → store) in a worker process.

Scrapy runs every pipeline in its one reactor thread, and CPython runs one thread of Python at a
time: parsing, normalizing, tagging and storing a posting all queue up on one core. On the 2-core
machines jobcrawl is measured on, the engine and the spider's parsing keep one core busy, so the
stages listed in ``JOBCRAWL_STAGE_PIPELINES`` run in a worker process on the other: this pipeline
sends them the items in small batches and returns at once. The stage pipelines are the ordinary
pipeline classes, built by their own ``from_crawler`` in the worker; their stats come back when the
spider closes and are added to the crawl's.

``JOBCRAWL_STAGE_PROCESS = False`` runs the same stages inline, in the engine's thread (the CLI
does so when it crawls more than two sources at once, one worker each would be too many).

The worker dies with its parent (``PR_SET_PDEATHSIG``): a killed crawl leaves no process writing
behind it, so the database holds exactly the batches committed before the kill.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from typing import Any

from scrapy.settings import Settings
from scrapy.utils.misc import load_object

SEND_EVERY = 64  # items per message to the worker


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


def _die_with_parent() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(1)
    except (OSError, AttributeError):  # not Linux: the worker still ends when its pipe closes
        pass


def _worker(conn, paths: list[str], settings: dict[str, Any]) -> None:
    """Worker process: run every item through the stages; send the stats back at the end."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the engine, which then closes us cleanly
    stats = DictStats()
    try:
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
        conn.send(("ok", stats.get_stats()))
    except BaseException:  # reported in the engine's process, which fails the run with it
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


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

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def open_spider(self, spider=None):
        if self.in_process:
            self.stages = build_stages(self.paths, self.settings, self.stats)
            for stage in self.stages:
                if hasattr(stage, "open_spider"):
                    stage.open_spider(spider)
            return
        context = multiprocessing.get_context("spawn")  # no fork: the reactor and threads live here
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker, args=(child, self.paths, self.settings),
                                       name="jobcrawl-stages", daemon=True)
        self.process.start()
        child.close()

    def process_item(self, item, spider=None):
        if self.in_process:
            for stage in self.stages:
                item = stage.process_item(item, spider)
            return item
        self.buffer.append(item)
        if len(self.buffer) >= SEND_EVERY:
            self._send()
        return item

    def _send(self) -> None:
        self.conn.send(self.buffer)
        self.buffer = []

    def close_spider(self, spider=None):
        if self.in_process:
            for stage in self.stages:
                if hasattr(stage, "close_spider"):
                    stage.close_spider(spider)
            return
        try:
            if self.buffer:
                self._send()
            self.conn.send(None)
            status, payload = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError) as err:
            raise StageError(f"the stage worker process ended unexpectedly ({err!r})") from None
        finally:
            self.process.join(timeout=60)
        if status != "ok":
            self.stats.set_value("jobcrawl/stage_failed", payload.strip().splitlines()[-1])
            raise StageError(f"a stage pipeline failed in the worker process:\n{payload}")
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
