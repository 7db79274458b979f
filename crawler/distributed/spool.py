"""The item spool: batches of plain rows on their way from the workers to the one writer, in a Redis list.

Push (:class:`RedisSink`, in a worker): ``LPUSH`` of the encoded batch, in one
``MULTI`` with the acknowledgement of the requests whose rows it completes and the worker's report
delta, so a request leaves the in-flight hash exactly when its rows are in the spool.

Drain (:func:`drain`, ``jobcrawl store``): ``BLMOVE`` of the oldest batch to this writer's
processing list, the batch written in one SQLite transaction (crawler/store/writer.py, which records
the batch id with it), then ``LREM`` from the processing list: a batch leaves Redis only after its
transaction committed. A writer killed in between leaves the batch in its processing list; the next
writer moves it back to the spool first and, finding its id stored, skips it.

Encoding: pickle protocol 5 of the :class:`~crawler.store.rows.Batch` (plain tuples; ``bench/crawl_distributed.py``
compares it with JSON). Redis must be trusted either way: scrapy-redis pickles the queued requests.
"""

from __future__ import annotations

import logging
import pickle
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import redis

from crawler.run.sinks import CrawlEnded, SinkFailed
from crawler.store.rows import Batch

from normalize.redact import redact_url

from crawler.distributed.cluster import HEARTBEAT_TTL, Heartbeat, Keys, new_id

logger = logging.getLogger(__name__)

FORMAT = 1


def encode(batch: Batch) -> bytes:
    return pickle.dumps((FORMAT, batch), protocol=5)


def decode(data: bytes) -> Batch:
    version, batch = pickle.loads(data)
    if version != FORMAT:
        raise ValueError(f"spool entry of format {version}, this writer reads {FORMAT}")
    return batch


class WriterBusy(RuntimeError):
    """Another writer drains this spool."""


@dataclass
class DrainStats:
    batches: int = 0
    rows: int = 0
    duplicates: int = 0
    requeued: int = 0
    seconds: float = 0.0
    by_run: dict = field(default_factory=dict)


def backlog(client: redis.Redis, keys: Keys) -> tuple[int, int]:
    """(batches, postings) waiting for a writer: in the spool and in every writer's processing list."""
    batches = postings = 0
    for key in [keys.spool, *client.scan_iter(match=keys.processing("*"), count=100)]:
        for data in client.lrange(key, 0, -1):
            batches += 1
            try:
                postings += len(decode(data).postings)
            except Exception:  # noqa: BLE001 — an unreadable batch still waits; its postings are not counted
                pass
    return batches, postings


def store_failed_line(err: BaseException, client: redis.Redis, keys: Keys, url: str, db: str) -> str:
    """One line for a writer that failed: the database and the error, what waits in the spool and the
    command that stores it (the batches stay in Redis until a writer commits them)."""
    try:
        batches, postings = backlog(client, keys)
        waiting = f"{postings} postings ({batches} batches) wait in the spool"
    except redis.RedisError:
        waiting = "what was spooled waits in Redis"
    prefix = "" if keys.prefix == "jobcrawl" else f" --prefix {keys.prefix}"
    return (f"storing into {db} failed: {err}; {waiting}: run `jobcrawl store --redis {redact_url(url)}{prefix} "
            f"--db {db} --until-empty` once it can be written")


def requeue_orphans(client: redis.Redis, keys: Keys) -> int:
    """Move the batches of every processing list back to the oldest end of the spool (only one writer runs,
    so at its start every processing list is a gone writer's); how many."""
    moved = 0
    for key in list(client.scan_iter(match=keys.processing("*"), count=100)):
        while client.lmove(key, keys.spool, "RIGHT", "RIGHT") is not None:
            moved += 1
    return moved


def drain(client: redis.Redis, keys: Keys, db_path: str, *, stop: threading.Event,
          until_empty: Callable[[], bool] | None = None, on_batch: Callable[[Batch], None] | None = None,
          ttl: float = HEARTBEAT_TTL) -> DrainStats:
    """Store spooled batches into ``db_path`` until ``stop`` is set (or, with ``until_empty``, until the
    spool is empty and ``until_empty()`` says no more will come). Raises :class:`WriterBusy` when another
    writer holds the spool."""
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer

    writer_id = new_id()
    deadline = time.monotonic() + ttl  # a killed writer's lock expires within ttl: then this one takes over
    while not client.set(keys.writer, writer_id, nx=True, px=int(ttl * 1000)):
        if time.monotonic() >= deadline or stop.is_set():
            holder = client.get(keys.writer)
            raise WriterBusy(f"another writer drains this spool ({holder.decode() if holder else 'unknown'})")
        time.sleep(0.25)
    heartbeat = Heartbeat(client, keys.writer, writer_id, ttl)
    stats = DrainStats()
    database = open_db(db_path)
    try:
        stats.requeued = requeue_orphans(client, keys)
        writer = Writer(database)
        processing = keys.processing(writer_id)
        started = time.perf_counter()
        while not stop.is_set():
            data = client.blmove(keys.spool, processing, 0.5, "RIGHT", "LEFT")
            if data is None:
                if until_empty is not None and until_empty() and client.llen(keys.spool) == 0:
                    break
                continue
            batch = decode(data)
            again = writer.counts_of(batch.run_id).get("spooled_again", 0)
            writer.write(batch)
            client.lrem(processing, 1, data)  # acknowledged: the transaction has committed
            stats.batches += 1
            stats.rows += len(batch)
            if writer.counts_of(batch.run_id).get("spooled_again", 0) > again:
                stats.duplicates += 1
            if on_batch is not None:
                on_batch(batch)
        stats.seconds = time.perf_counter() - started
        stats.by_run = {run: dict(c) for run, c in writer.counts.items()}
    finally:
        database.close()
        heartbeat.stop()
    return stats


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
