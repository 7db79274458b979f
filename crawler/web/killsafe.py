"""What a crawl killed outright (SIGKILL, the OOM killer, a power cut) leaves on disk is not trusted.

- **The crawl state** (``JOBDIR``, ``crawl --jobdir``). Scrapy writes it as it goes: the
  seen-requests file is appended (and flushed now and then) while the request queue's position and
  the spider's state are saved only when the spider closes. After a kill, the seen file names pages
  whose postings were never committed while the queue that held the rest is lost: the next run would
  skip those pages and, for a ``complete`` site, even close their postings. :class:`JobdirGuard`
  marks the JOBDIR as in use while a crawl runs; the mark goes only once the postings of the pages
  it names are committed: when the spider closes (finished or stopped by a signal, both of which save
  the queue) for a crawl that stores as it closes (``scrapy crawl``), else when the run's writer has
  committed (:func:`release`, called by crawler/run/runner.py). A run that finds the mark discards the
  JOBDIR and starts afresh (stat ``jobcrawl/jobdir_discarded``): a kill between the spider's close and
  the writer's last commit would otherwise leave a saved state naming pages that were never stored.
  The HTTP cache keeps the restart cheap: a 304 per unchanged page.
- **The HTTP cache** (``<db>.httpcache/``). Scrapy's FilesystemCacheStorage writes an entry as
  seven files, the one that makes it a hit (``pickled_meta``) second, and rewrites every entry that
  a revalidation confirms. A kill in between left a hit with a missing, cut or emptied body, read
  back as the page on every later run: the page answered 304 and its posting was quarantined
  ("empty response body") for good. :class:`WholeEntryCacheStorage` writes ``pickled_meta`` last,
  under another name moved into place, after removing the old one; an entry that cannot be read
  whole, or whose body is not as long as its Content-Length, is a miss (and the page is fetched).
  The same storage forgets what a site no longer lists: an entry's folder is touched whenever the
  entry is read or written, and at the end of a crawl the entries not requested for
  ``JOBCRAWL_HTTPCACHE_MAX_AGE_DAYS`` days (0: never) are removed (:func:`prune_cache`).
"""

from __future__ import annotations

import logging
import os
import pickle
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.extensions.httpcache import FilesystemCacheStorage

logger = logging.getLogger(__name__)

MARK = "jobcrawl.running"
META = "pickled_meta"


class JobdirGuard:
    """Discards a JOBDIR left by a crawl that did not close, before the scheduler reads it; marks its own."""

    def __init__(self, crawler, jobdir: Path):
        self.mark = jobdir / MARK
        if self.mark.exists():
            logger.warning("%s was left by a crawl that was killed (%s): starting afresh", jobdir,
                           self.mark.read_text(encoding="utf-8").strip())
            shutil.rmtree(jobdir)
            crawler.stats.inc_value("jobcrawl/jobdir_discarded")
        jobdir.mkdir(parents=True, exist_ok=True)
        started = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
        self.mark.write_text(f"pid {os.getpid()}, started {started}\n", encoding="utf-8")
        # In a run the store stage hands rows to the run's writer, which commits after the spider closed.
        self.committed_after_close = getattr(crawler, "jobcrawl_sink", None) is not None  # crawler/run/sinks.py
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        jobdir = crawler.settings.get("JOBDIR")
        if not jobdir:
            raise NotConfigured
        return cls(crawler, Path(jobdir))

    def spider_closed(self, spider, reason: str) -> None:
        if not self.committed_after_close:
            self.mark.unlink(missing_ok=True)


def release(jobdir: str | Path) -> None:
    """The crawl that used ``jobdir`` closed and its postings are committed: its saved state can be resumed."""
    (Path(jobdir) / MARK).unlink(missing_ok=True)


class WholeEntryCacheStorage(FilesystemCacheStorage):
    """FilesystemCacheStorage whose entries are hits only when whole (see the module docstring)."""

    def __init__(self, settings):
        super().__init__(settings)
        self.max_age_days = settings.getfloat("JOBCRAWL_HTTPCACHE_MAX_AGE_DAYS")
        self._open_file = self._open
        self._open = self._open_staged  # the parent opens every file through self._open

    def _open_staged(self, path, mode: str = "rb", *args, **kwargs):
        """The parent's opener, except that ``pickled_meta`` is written as ``pickled_meta.new``."""
        if "w" in mode and Path(path).name == META:
            path = Path(path).with_name(META + ".new")
        return self._open_file(path, mode, *args, **kwargs)

    def store_response(self, spider, request, response) -> None:
        entry = Path(self._get_request_path(spider, request))
        (entry / META).unlink(missing_ok=True)  # a miss while the entry is rewritten
        if response.headers.get(b"Content-Length") not in (None, str(len(response.body)).encode()):
            # Scrapy freshens a cached response with every header of the 304, Content-Length too
            # (RFC 9111 §3.2 excepts it): a server's "Content-Length: 0" would not describe the body.
            response.headers[b"Content-Length"] = str(len(response.body))
        super().store_response(spider, request, response)
        os.replace(entry / (META + ".new"), entry / META)

    def retrieve_response(self, spider, request):
        try:
            response = super().retrieve_response(spider, request)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError) as err:
            return self._broken(spider, request, f"{type(err).__name__}: {err}")
        if response is None:
            return None
        announced = response.headers.get(b"Content-Length")
        if announced is not None and announced.isdigit() and int(announced) != len(response.body):
            return self._broken(spider, request, f"body of {len(response.body)} bytes, Content-Length {int(announced)}")
        os.utime(self._get_request_path(spider, request))  # requested now: kept by prune_cache
        return response

    def close_spider(self, spider) -> None:
        super().close_spider(spider)
        if self.max_age_days > 0:
            entries, size = prune_cache(Path(self.cachedir), self.max_age_days * 86400)
            if entries:
                logger.info("HTTP cache %s: removed %d entries (%d bytes) not requested for %g days",
                            self.cachedir, entries, size, self.max_age_days)

    def _broken(self, spider, request, why: str) -> None:
        """A miss for an entry that is not whole; its ``pickled_meta`` goes, so the next store rewrites it."""
        logger.warning("HTTP cache entry of %s is not whole (%s): fetching the page again", request.url, why)
        Path(self._get_request_path(spider, request), META).unlink(missing_ok=True)
        return None


def cache_entries(root: Path):
    """The entry folders of a FilesystemCacheStorage folder (``<root>/<spider>/<xx>/<fingerprint>/``)."""
    for spider in _folders(root):
        for prefix in _folders(spider):
            yield from _folders(prefix)


def _folders(path: Path):
    try:
        with os.scandir(path) as it:
            return [Path(e.path) for e in it if e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _size(entry: Path) -> int:
    return sum(f.stat().st_size for f in entry.iterdir() if f.is_file())


def cache_size(root: Path) -> tuple[int, int]:
    """Bytes and entries of an HTTP cache folder (0, 0 when there is none)."""
    entries = list(cache_entries(root))
    return sum(_size(e) for e in entries), len(entries)


def prune_cache(root: Path, max_age_seconds: float) -> tuple[int, int]:
    """Remove the entries of an HTTP cache folder last read or written more than ``max_age_seconds`` ago
    (their folder's mtime); the entries and bytes removed."""
    cutoff = time.time() - max_age_seconds
    removed = freed = 0
    for entry in cache_entries(root):
        try:
            if entry.stat().st_mtime >= cutoff:
                continue
            size = _size(entry)
            shutil.rmtree(entry)
        except OSError:
            continue
        removed, freed = removed + 1, freed + size
    return removed, freed


def cache_root(db: str | Path) -> Path:
    """Where ``jobcrawl crawl`` keeps the HTTP cache of a database: ``<db>.httpcache/``, one folder per source."""
    return Path(str(Path(db).resolve()) + ".httpcache")
