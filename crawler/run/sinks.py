"""Where the store stage sends its batches of plain rows (crawler/store/rows.py).

A run hands each crawler the sink it uses (:func:`attach`, before the crawl starts): the writer of this
process (:class:`WriterSink`), the pipe to the parent process that owns the writer
(:class:`PipeSink`, in a worker process), or the Redis item spool of a distributed run
(:class:`RedisSink`, crawler/distributed/spool.py). A crawler given none (``scrapy crawl textdump …``) gets
a :class:`WriterSink` of its own on ``JOBCRAWL_DB``.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, Protocol

from crawler.store.rows import Batch

class Sink(Protocol):
    def put(self, batch: Batch) -> None:
        """Hand over one batch (may wait: back-pressure); raise when the rows can no longer be stored."""

    def close(self) -> None:
        """Wait until every batch handed over is stored (or sent); raise the first failure."""


def attach(crawler, sink: "Sink", progress: Callable[..., None] | None = None) -> None:
    """Give ``crawler``'s store stage ``sink`` (before its crawl starts), and ``progress``, which it calls with the
    postings (``postings=1``) and raw inputs (``nbytes=``, their size) it takes."""
    crawler.jobcrawl_sink, crawler.jobcrawl_progress = sink, progress


def attached(crawler) -> "Sink | None":
    """The sink given to ``crawler`` by its run, or None (the store stage then opens a writer of its own)."""
    return getattr(crawler, "jobcrawl_sink", None)


def progress_of(crawler) -> Callable[..., None] | None:
    """The progress callback given to ``crawler`` with its sink (:func:`attach`), or None."""
    return getattr(crawler, "jobcrawl_progress", None)


class SinkFailed(RuntimeError):
    """The rows could not be handed to the writer (it failed, or the parent process is gone)."""


class CrawlEnded(SinkFailed):
    """The distributed crawl the rows belong to has ended: they are not pushed."""


class WriterSink:
    """Batches written by a :class:`~crawler.store.writer.BackgroundWriter` of this process; ``migrate``: bring the
    database's schema up to date first (a crawl outside a run: the run does it otherwise)."""

    def __init__(self, db_path: str, *, migrate: bool = False):
        from crawler.store.writer import BackgroundWriter

        if migrate:
            from crawler.store.schema import open_db

            open_db(db_path).close()
        self.writer = BackgroundWriter(db_path)

    def put(self, batch: Batch) -> None:
        self.writer.write(batch)

    def close(self) -> None:
        self.writer.close()


class PipeSink:
    """Batches sent to the parent process over a ``multiprocessing`` connection, as ``("batch", batch)``.

    A sender thread pickles and sends them, so the engine goes on parsing while the parent is busy
    writing; at most ``depth`` batches wait (back-pressure). When the parent is gone (the pipe is
    broken) :meth:`put` raises :class:`SinkFailed`: a worker never outlives the run's writer.
    """

    def __init__(self, conn, *, depth: int = 2):
        self.conn = conn
        self.lock = threading.Lock()  # the worker's final report goes over the same connection
        self._queue: queue.Queue[Batch | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._send_all, name="jobcrawl-sender", daemon=True)
        self._thread.start()

    def _send_all(self) -> None:
        while (batch := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self.send("batch", batch)
                except BaseException as err:  # noqa: BLE001 — re-raised by put() / close()
                    self._error = err

    def send(self, kind: str, payload) -> None:
        with self.lock:
            self.conn.send((kind, payload))

    def _check(self) -> None:
        if self._error is not None:
            raise SinkFailed(f"the writer's process is gone ({self._error!r})") from self._error

    def put(self, batch: Batch) -> None:
        self._check()
        while True:
            try:
                self._queue.put(batch, timeout=0.5)
                return
            except queue.Full:
                self._check()

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        self._check()
