"""Where the store stage sends its batches of plain rows (crawler/db/rows.py).

A run registers the sink its crawlers use under a name (``JOBCRAWL_SINK``): the writer of this
process (:class:`WriterSink`), the pipe to the parent process that owns the writer
(:class:`PipeSink`, in a worker process), or the Redis item spool of a distributed run
(:class:`RedisSink`, crawler/distributed/spool.py). A crawl with no sink registered (``scrapy
crawl textdump …``) gets a :class:`WriterSink` of its own on ``JOBCRAWL_DB``.
"""

from __future__ import annotations

import queue
import threading
from typing import Protocol

from crawler.db.rows import Batch

SINKS: dict[str, "Sink"] = {}
"""Sinks registered by the run in this process, by name."""


class Sink(Protocol):
    def put(self, batch: Batch) -> None:
        """Hand over one batch (may wait: back-pressure); raise when the rows can no longer be stored."""

    def close(self) -> None:
        """Wait until every batch handed over is stored (or sent); raise the first failure."""


class SinkFailed(RuntimeError):
    """The rows could not be handed to the writer (it failed, or the parent process is gone)."""


class CrawlEnded(SinkFailed):
    """The distributed crawl the rows belong to has ended: they are not pushed."""


class WriterSink:
    """Batches written by a :class:`~crawler.db.writer.BackgroundWriter` of this process; ``migrate``: bring the
    database's schema up to date first (a crawl outside a run: the run does it otherwise)."""

    def __init__(self, db_path: str, *, migrate: bool = False):
        from crawler.db.writer import BackgroundWriter

        if migrate:
            from crawler.db.schema import open_db

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


class RedisSink:
    """Batches pushed to the Redis item spool (crawler/distributed/spool.py) by a ``jobcrawl worker``.

    Each push is one ``MULTI``: the batch (given an id, so the writer stores it once however often the
    spool delivers it) and whatever ``attach(pipeline)`` adds (the acknowledgements of the requests the
    batch completes and the worker's report delta); ``attach`` returns what to run once the push
    succeeded. :meth:`sync` pushes the attachments alone. Back-pressure: when the spool holds more than
    ``max_batches``, the push waits (checking every 0.5 s) until the writer has caught up. With ``guard``
    (the crawl's plan key), a push is made only while that key exists (``WATCH``): a worker resumed after its
    run ended pushes nothing (:class:`CrawlEnded`).
    """

    def __init__(self, client, spool_key: str, *, attach=None, max_batches: int = 200, guard: str | None = None):
        self.client, self.spool_key, self.attach, self.max_batches = client, spool_key, attach, max_batches
        self.guard = guard

    def put(self, batch: Batch) -> None:
        self._push(batch)

    def sync(self) -> None:
        self._push(None)

    def close(self) -> None:
        self.sync()

    def _push(self, batch: Batch | None) -> None:
        import time
        import uuid

        import redis

        from crawler.distributed.spool import encode

        pipe = self.client.pipeline(transaction=True)
        try:
            if self.guard is not None:
                pipe.watch(self.guard)
                if not pipe.exists(self.guard):
                    raise CrawlEnded("the crawl has ended: nothing more is pushed")
                pipe.multi()
            if batch is not None:
                batch.id = batch.id or uuid.uuid4().hex
                pipe.lpush(self.spool_key, encode(batch))
            after = self.attach(pipe) if self.attach is not None else None
            if len(pipe):
                results = pipe.execute()
            if after is not None:
                after()
            while batch is not None and results[0] > self.max_batches:
                time.sleep(0.5)
                results[0] = self.client.llen(self.spool_key)
        except redis.WatchError:
            raise CrawlEnded("the crawl has ended: nothing more is pushed") from None
        except redis.RedisError as err:
            raise SinkFailed(f"the Redis spool cannot be reached ({err})") from err
        finally:
            pipe.reset()  # the connection goes back to the pool, unwatched
