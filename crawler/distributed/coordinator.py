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
   batch ledger, and the run ends as a local one does (crawler/runner.py ``finish_jobs``: closing,
   status, retagging, dedupe, scoring, the ``runs`` rows). The crawl's keys are deleted.

SIGINT/SIGTERM: the crawl is stopped (workers close its sources, reason ``shutdown``), what was
spooled is stored and the runs end ``interrupted``; a second signal stops waiting for the workers.
"""

from __future__ import annotations

import asyncio
import pickle
import signal
import threading
import time
import uuid
from collections import defaultdict
from typing import Any, Callable

from crawler.report import CrawlReport, RunReport

from .cluster import (Heartbeat, Keys, connect, delete_crawl, live_members, new_id, pending, requeue_dead,
                      save_plan, source_keys)

POLL_SECONDS = 0.25
NOTICE_SECONDS = 30.0


class ClusterBusy(RuntimeError):
    """Another coordinator runs a crawl on this Redis prefix."""


def _start_requests(job, overrides: dict[str, Any]) -> tuple[Any, list]:
    """The spider of a job, built as a crawl would build it, and its start requests (nothing is fetched)."""
    from scrapy.crawler import Crawler

    from crawler.run import CRAWL_PRIORITY, project_settings
    from crawler.sources import project_spiders

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
                    settings: dict[str, Any] | None = None, say: Callable[[str], None] = print) -> list[RunReport]:
    """Run crawl jobs on the workers of the Redis at ``url`` into ``db``; one :class:`RunReport` per job.

    Raises :class:`~.cluster.RedisUnreachable` before writing anything when Redis does not answer, and
    :class:`ClusterBusy` when another coordinator holds the prefix."""
    from crawler.db import skills
    from crawler.db.runs import start_run
    from crawler.db.schema import open_db
    from crawler.inputs import read_taxonomy
    from crawler.runner import finish_jobs

    from .scheduler import seed_source
    from .spool import WriterBusy, drain

    client = connect(url)
    keys = Keys(prefix)
    me = new_id()
    if not client.set(keys.lock, me, nx=True, px=10_000):
        holder = client.get(keys.lock)
        raise ClusterBusy(f"another distributed run is active on {prefix} ({holder.decode() if holder else '?'})")
    heartbeat = Heartbeat(client, keys.lock, me)
    crawl = uuid.uuid4().hex[:12]
    overrides = dict(settings or {})
    writer_thread = None
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
        say(f"crawl {crawl} active: start workers with `jobcrawl worker --redis {url}`")

        done_feeding = threading.Event()
        failure: dict[str, BaseException] = {}
        if store:
            stop_writer = threading.Event()

            def write() -> None:
                try:
                    drain(client, keys, db, stop=stop_writer, until_empty=done_feeding.is_set)
                except BaseException as err:  # noqa: BLE001 — reported as the run's failure
                    failure["store"] = err

            writer_thread = threading.Thread(target=write, name="jobcrawl-spool-writer", daemon=True)
            writer_thread.start()

        ended = _wait(client, keys, crawl, [job.source for job in jobs], say, writer_failed=lambda: "store" in failure)
        done_feeding.set()
        if writer_thread is not None:
            writer_thread.join()
        else:
            _wait_for_spool(client, keys, say)

        reports, workers = _merged_reports(client, keys, crawl)
        crawl_reports = []
        for job in jobs:
            report = reports.get(job.source, CrawlReport())
            report.finish_reason = ended[job.source]
            if "store" in failure:
                err = failure["store"]
                report.stage_failed = report.stage_failed or (str(err) if isinstance(err, WriterBusy)
                                                              else f"storing failed: {err!r}")
            crawl_reports.append(report)
        database = open_db(db)
        from crawler.db.spool import written as written_counts

        written = written_counts(database.conn, run_ids)
        database.close()
        source_workers = {run_id: len(workers.get(job.source, ())) for job, run_id in zip(jobs, run_ids)}
        return finish_jobs(jobs, db, run_ids, crawl_reports, written, workers=source_workers,
                           stale_skills=stale_skills, taxonomy=taxonomy)
    finally:
        try:
            if client.get(keys.active) == crawl.encode():
                client.delete(keys.active)
            delete_crawl(client, keys, crawl)
        finally:
            heartbeat.stop()


def _wait(client, keys: Keys, crawl: str, sources: list[str], say: Callable[[str], None], *,
          writer_failed: Callable[[], bool]) -> dict[str, str]:
    """Wait until every source is done; its finish reason (finished, request_cap, shutdown, failed) by source."""
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
    try:
        while len(ended) < len(sources):
            if signals_seen["n"] >= 2:
                for source in sources:
                    ended.setdefault(source, "shutdown")
                break
            if writer_failed():
                client.set(stop_key, "1")
            stopping = bool(client.exists(stop_key))
            for source in sources:
                if source in ended:
                    continue
                requeue_dead(client, keys, crawl, source)
                sk = source_keys(keys, crawl, source)
                members = live_members(client, keys, crawl, source)
                joined = joined or bool(members)
                if members:
                    continue
                queued, inflight = pending(client, keys, crawl, source)
                if client.exists(sk["capped"]):
                    ended[source] = "request_cap"
                elif stopping:
                    ended[source] = "failed" if writer_failed() else "shutdown"
                elif not queued and not inflight:
                    ended[source] = "finished"
            if not joined and time.monotonic() - last_notice >= NOTICE_SECONDS:
                say(f"crawl {crawl}: no worker has joined yet (start `jobcrawl worker --redis …`)")
                last_notice = time.monotonic()
            time.sleep(POLL_SECONDS)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    return ended


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
