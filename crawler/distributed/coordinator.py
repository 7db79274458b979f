"""``jobcrawl crawl --redis URL``: plan a distributed run, seed it, store it, finish it.

1. **Lock.** One coordinator per Redis prefix (``P:lock``, renewed by a heartbeat): a second one
   exits 4 (:class:`ClusterBusy`). Redis is checked before anything is written, so an unreachable
   Redis leaves no ``runs`` row and no database file behind.
2. **Plan.** One ``runs`` row per source (as a local crawl); the plan (each source's spider,
   arguments, settings and run id) goes to Redis for the workers.
3. **Seed.** Each source's spider is built (not crawled) and its start requests go into the
   source's queue through the shared dupefilter, once per run; then the crawl becomes active and
   workers join it.
4. **Store.** Unless ``store=False`` (a separate ``jobcrawl store``), a thread of this process
   drains the spool into the database with the one writer (crawler/distributed/spool.py).
5. **Wait.** A source is done when nothing of it is queued or in flight and no live worker has it
   open (or when its request cap was reached, or the run was interrupted); leases of gone workers
   are put back meanwhile. Then the spool is drained.
6. **Finish.** The workers' report deltas are merged per source, the writer's counts summed from the
   batch ledger, and the run ends as a local one does (crawler/run/runner.py ``finish_jobs``: closing,
   status, retagging, dedupe, scoring, the ``runs`` rows). The crawl's keys are deleted.

SIGINT/SIGTERM: the crawl is stopped (workers close its sources, reason ``shutdown``), what was
spooled is stored and the runs end ``interrupted``; a second signal stops waiting for the workers.

Faults: Redis lost or out of memory mid-run raises :class:`~.cluster.RedisLost` (one line) with the
runs rows marked ``interrupted``; a run that made no progress for ``stall_timeout`` seconds (a source
no live worker takes, workers gone) is stopped like a signal would, each source still waiting named;
a writer that failed (a full disk) stops the run and says what waits in the spool; a lock whose
holder is a dead process of this host is taken over, any other is named with the time it expires.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import socket
import threading
import time
import uuid
from collections import defaultdict
from typing import Any, Callable

from crawler.report import CrawlReport, RunReport

import redis

from normalize.redact import redact_url

from crawler.distributed.cluster import (HEARTBEAT_TTL, Heartbeat, Keys, RedisLost, connect, delete_crawl, live_members, new_id, pending,
                      redis_problem, requeue_dead, save_plan, source_keys)

POLL_SECONDS = 0.25
NOTICE_SECONDS = 30.0
STALL_SECONDS = 300.0
"""Default of ``stall_timeout``: a run whose queues, spool and reports did not move for this long is stopped."""


class ClusterBusy(RuntimeError):
    """Another coordinator runs a crawl on this Redis prefix."""


class StoreFailed(RuntimeError):
    """The run's writer failed and the run could not be finished in the database either (the message says why)."""


# Delete the lock only if it still has the value read (a dead holder's), in one step.
DELETE_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def _holder_gone(holder: str) -> bool:
    """Whether the lock's holder (``host-pid-random``, :func:`~.cluster.new_id`) is a process of this host that
    no longer exists."""
    parts = holder.rsplit("-", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, another user's
        return False
    return False


def take_lock(client, keys: Keys, me: str, say: Callable[[str], None]) -> None:
    """Hold the prefix's lock as ``me``; a lock whose holder is a dead process of this host is taken over
    (said in one line); otherwise :class:`ClusterBusy` names the holder and when its lock expires."""
    for _ in range(3):
        if client.set(keys.lock, me, nx=True, px=int(HEARTBEAT_TTL * 1000)):
            return
        holder = client.get(keys.lock)
        if holder is None:
            continue
        name = holder.decode(errors="replace")
        if _holder_gone(name):
            if client.eval(DELETE_IF, 1, keys.lock, holder):
                say(f"taking over the lock of {keys.prefix} from coordinator {name}: its process is gone")
            continue
        ttl = client.pttl(keys.lock)
        if ttl < 0:
            expiry = "its lock does not expire: delete the key " + keys.lock + " if that run is gone"
        else:
            at = time.strftime("%H:%M:%S", time.localtime(time.time() + ttl / 1000))
            expiry = (f"its lock expires at {at} (in {ttl / 1000:.0f} s) unless renewed: "
                      f"if that coordinator is gone the lock is stale, run again after that")
        raise ClusterBusy(f"another distributed run is active on {keys.prefix} (coordinator {name}; {expiry})")
    raise ClusterBusy(f"another distributed run is active on {keys.prefix} (the lock changed hands while read)")


def _start_requests(job, overrides: dict[str, Any]) -> tuple[Any, list]:
    """The spider of a job, built as a crawl would build it, and its start requests (nothing is fetched)."""
    from scrapy.crawler import Crawler

    from crawler.run.project import CRAWL_PRIORITY
    from crawler.settings import project_settings
    from crawler.web.sources import project_spiders

    spidercls = project_spiders()[job.spidercls] if isinstance(job.spidercls, str) else job.spidercls
    settings = project_settings(overrides)
    for key, value in job.settings.items():
        settings.set(key, value, priority=CRAWL_PRIORITY)
    crawler = Crawler(spidercls, settings)
    spider = spidercls.from_crawler(crawler, **job.spider_kwargs)

    async def collect() -> list:
        return [request async for request in spider.start()]

    return spider, asyncio.run(collect())


def _spider_name(job) -> str:
    return job.spidercls if isinstance(job.spidercls, str) else job.spidercls.name


def run_distributed(jobs: list, db: str, url: str, *, prefix: str = "jobcrawl", store: bool = True,
                    settings: dict[str, Any] | None = None, say: Callable[[str], None] = print,
                    stall_timeout: float = STALL_SECONDS) -> list[RunReport]:
    """Run crawl jobs on the workers of the Redis at ``url`` into ``db``; one :class:`RunReport` per job.

    Raises :class:`~.cluster.RedisUnreachable` before writing anything when Redis does not answer,
    :class:`ClusterBusy` when another coordinator holds the prefix, :class:`~.cluster.RedisLost` when Redis
    is lost or refuses writes mid-run (the runs rows are then ``interrupted``) and :class:`StoreFailed` when
    the writer failed and the run could not be finished in the database."""
    from crawler.store import skills
    from crawler.store.runs import start_run
    from crawler.store.schema import open_db
    from crawler.files import read_taxonomy

    client = connect(url)
    keys = Keys(prefix)
    me = new_id()
    take_lock(client, keys, me, say)
    heartbeat = Heartbeat(client, keys.lock, me)
    crawl = uuid.uuid4().hex[:12]
    overrides = dict(settings or {})
    run_ids: list[int] = []
    stop_writer = threading.Event()
    try:
        stale = client.get(keys.active)  # left by a coordinator that is gone
        if stale is not None:
            delete_crawl(client, keys, stale.decode())
            client.delete(keys.active)
        taxonomy = read_taxonomy(overrides.get("JOBCRAWL_TAXONOMY"))
        database = open_db(db)
        run_ids = [start_run(database, job.kind, job.args, source=job.source, mark_stale=not i)
                   for i, job in enumerate(jobs)]
        stale_skills = skills.prepare(database, taxonomy)
        database.close()
        return _run(client, keys, crawl, me, jobs, db, url, run_ids, overrides, store=store, say=say,
                    heartbeat=heartbeat, stall_timeout=stall_timeout, stop_writer=stop_writer,
                    stale_skills=stale_skills, taxonomy=taxonomy)
    except redis.RedisError as err:
        stop_writer.set()
        _interrupt_runs(db, run_ids)
        raise RedisLost(f"Redis at {redact_url(url)} {redis_problem(err)}: the run is stopped, its runs marked "
                        "interrupted (run it again to crawl the rest)") from None
    finally:
        try:
            if client.get(keys.active) == crawl.encode():
                client.delete(keys.active)
            delete_crawl(client, keys, crawl)
        except redis.RedisError:
            pass  # the next coordinator deletes what is left of this crawl
        finally:
            heartbeat.stop()


def _interrupt_runs(db: str, run_ids: list[int]) -> None:
    """End the runs rows still ``running`` as ``interrupted``, with the writer's counts so far."""
    from crawler.store.runs import interrupt_running
    from crawler.store.schema import open_db
    from crawler.store.batches import written as written_counts

    if not run_ids:
        return
    database = open_db(db)
    try:
        interrupt_running(database, run_ids, written_counts(database.conn, run_ids))
    finally:
        database.close()


def _run(client, keys: Keys, crawl: str, me: str, jobs: list, db: str, url: str, run_ids: list[int],
         overrides: dict[str, Any], *, store: bool, say: Callable[[str], None], heartbeat: Heartbeat,
         stall_timeout: float, stop_writer: threading.Event, stale_skills, taxonomy) -> list[RunReport]:
    """Plan, seed, wait and finish (steps 2 to 6 of the module docstring)."""
    import sqlite3

    from crawler.store.schema import open_db
    from crawler.store.batches import written as written_counts
    from crawler.run.runner import finish_jobs

    from crawler.distributed.scheduler import seed_source
    from crawler.distributed.spool import WriterBusy, drain, store_failed_line

    plan = {"crawl": crawl, "coordinator": me, "settings": {k: v for k, v in overrides.items()
                                                            if isinstance(v, (str, int, float, bool))},
            "sources": {job.source: {"spider": _spider_name(job), "args": job.spider_kwargs, "settings": job.settings,
                                     "run_id": run_id} for job, run_id in zip(jobs, run_ids)}}
    save_plan(client, keys, crawl, plan)
    for job in jobs:
        spider, requests = _start_requests(job, overrides)
        seeded = seed_source(client, keys, crawl, job.source, spider, requests)
        say(f"{job.source}: {seeded} start request{'s' if seeded != 1 else ''} queued")
    client.set(keys.active, crawl)
    say(f"crawl {crawl} active: start workers with `jobcrawl worker --redis {redact_url(url)}`")

    done_feeding = threading.Event()
    failure: dict[str, BaseException] = {}
    writer_thread = None
    if store:
        def write() -> None:
            try:
                drain(client, keys, db, stop=stop_writer, until_empty=done_feeding.is_set)
            except BaseException as err:  # noqa: BLE001 — reported as the run's failure
                failure["store"] = err

        writer_thread = threading.Thread(target=write, name="jobcrawl-spool-writer", daemon=True)
        writer_thread.start()

    ended = _wait(client, keys, crawl, [job.source for job in jobs], say, heartbeat=heartbeat,
                  stall_timeout=stall_timeout, writer_failed=lambda: "store" in failure)
    client.delete(keys.crawl(crawl, "plan"))  # the crawl has ended: a worker pushes nothing more for it
    done_feeding.set()
    if writer_thread is not None:
        writer_thread.join()
    else:
        _wait_for_spool(client, keys, say)
    store_error = failure.get("store")
    if isinstance(store_error, redis.RedisError):
        raise store_error
    if store_error is not None:
        say(store_failed_line(store_error, client, keys, url, db))

    reports, workers = _merged_reports(client, keys, crawl)
    crawl_reports = []
    for job in jobs:
        report = reports.get(job.source, CrawlReport())
        report.finish_reason = ended[job.source]
        if store_error is not None:
            report.stage_failed = report.stage_failed or (str(store_error) if isinstance(store_error, WriterBusy)
                                                          else f"storing failed: {store_error!r}")
        crawl_reports.append(report)
    try:
        database = open_db(db)
        written = written_counts(database.conn, run_ids)
        database.close()
        source_workers = {run_id: len(workers.get(job.source, ())) for job, run_id in zip(jobs, run_ids)}
        return finish_jobs(jobs, db, run_ids, crawl_reports, written, crawled_by=source_workers, workers=None,
                           stale_skills=stale_skills, taxonomy=taxonomy)
    except sqlite3.Error as err:
        if store_error is None:
            raise
        raise StoreFailed(f"finishing the run in {db} failed too: {err}") from None


def _wait(client, keys: Keys, crawl: str, sources: list[str], say: Callable[[str], None], *,
          heartbeat: Heartbeat, stall_timeout: float, writer_failed: Callable[[], bool]) -> dict[str, str]:
    """Wait until every source is done; its finish reason (finished, request_cap, shutdown, failed) by source.
    Nothing moving for ``stall_timeout`` seconds ends each source still waiting as ``shutdown``, named in a line."""
    ended: dict[str, str] = {}
    signals_seen = {"n": 0}
    stop_key = keys.crawl(crawl, "stop")

    def on_signal(signum, frame) -> None:
        signals_seen["n"] += 1
        client.set(stop_key, "1")

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)} \
        if threading.current_thread() is threading.main_thread() else {}
    last_notice = time.monotonic()
    joined = False
    moved_at, last_state = time.monotonic(), None
    untaken: set[str] = set()
    try:
        while len(ended) < len(sources):
            if heartbeat.error is not None:
                raise heartbeat.error
            if signals_seen["n"] >= 2:
                for source in sources:
                    ended.setdefault(source, "shutdown")
                break
            if writer_failed():
                client.set(stop_key, "1")
            stopping = bool(client.exists(stop_key))
            waiting: dict[str, tuple[int, int, int]] = {}
            for source in sources:
                if source in ended:
                    continue
                requeue_dead(client, keys, crawl, source)
                sk = source_keys(keys, crawl, source)
                members = live_members(client, keys, crawl, source)
                joined = joined or bool(members)
                queued, inflight = pending(client, keys, crawl, source)
                if members:
                    waiting[source] = (queued, inflight, len(members))
                elif client.exists(sk["capped"]):
                    ended[source] = "request_cap"
                elif stopping:
                    ended[source] = "failed" if writer_failed() else "shutdown"
                elif not queued and not inflight:
                    ended[source] = "finished"
                else:
                    waiting[source] = (queued, inflight, 0)
            taken = _taken(client, keys, crawl)
            for source in sorted(s for s, w in waiting.items() if not w[2] and s not in untaken):
                if taken is not None and source not in taken:
                    say(f"crawl {crawl}: {source}: no live worker takes it (no worker's --sources file names it)")
                    untaken.add(source)
            state = (sorted(waiting.items()), client.llen(keys.crawl(crawl, "reports")), client.llen(keys.spool))
            if state != last_state:
                moved_at, last_state = time.monotonic(), state
            elif waiting and not stopping and time.monotonic() - moved_at >= stall_timeout:
                for source, (queued, inflight, members) in sorted(waiting.items()):
                    why = ("no live worker takes it" if source in untaken else
                           f"{members} live worker{'s' if members != 1 else ''} hold it" if members else
                           "no live worker has it open")
                    say(f"crawl {crawl}: {source}: no progress for {stall_timeout:g} s ({queued} request{'s' if queued != 1 else ''} queued, "
                        f"{inflight} in flight, {why}): the run is stopped")
                client.set(stop_key, "1")
                for source in waiting:
                    ended[source] = "shutdown"
                break
            if not joined and time.monotonic() - last_notice >= NOTICE_SECONDS:
                say(f"crawl {crawl}: no worker has joined yet (start `jobcrawl worker --redis …`)")
                last_notice = time.monotonic()
            time.sleep(POLL_SECONDS)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return ended


def _taken(client, keys: Keys, crawl: str) -> set[str] | None:
    """The sources that some live worker of the crawl takes (each worker names them when it joins); None
    while no live worker has joined."""
    joined = {k.decode(): v.decode() for k, v in client.hgetall(keys.crawl(crawl, "joined")).items()}
    if not joined:
        return None
    pipe = client.pipeline(transaction=False)
    for worker in joined:
        pipe.exists(keys.worker(worker))
    alive = [(worker, names) for (worker, names), ok in zip(joined.items(), pipe.execute()) if ok]
    return {name for _, names in alive for name in names.split("\n") if name} if alive else None


def _wait_for_spool(client, keys: Keys, say: Callable[[str], None]) -> None:
    """Without a writer of our own: wait until the spool and every processing list are empty."""
    last_notice = time.monotonic()
    while True:
        busy = client.llen(keys.spool) + sum(client.llen(k) for k in client.scan_iter(match=keys.processing("*")))
        if not busy:
            return
        if time.monotonic() - last_notice >= NOTICE_SECONDS:
            say(f"waiting for `jobcrawl store` to drain {busy} batches")
            last_notice = time.monotonic()
        time.sleep(POLL_SECONDS)


def _merged_reports(client, keys: Keys, crawl: str) -> tuple[dict[str, CrawlReport], dict[str, set[str]]]:
    """The workers' report deltas merged per source, and the workers that sent some, per source."""
    reports: dict[str, CrawlReport] = {}
    workers: dict[str, set[str]] = defaultdict(set)
    for data in client.lrange(keys.crawl(crawl, "reports"), 0, -1):
        source, worker, delta = pickle.loads(data)
        reports.setdefault(source, CrawlReport()).merge(delta)
        workers[source].add(worker)
    return reports, workers
