"""Benchmark: a distributed crawl with 1, 2 and 4 workers, the writer's rows/s from the spool, Redis memory per
queued request.

Crawl: ``--hosts`` mock servers (tests/mockserver.py), one per loopback address 127.0.0.2, 127.0.0.3 …
(Linux routes all of 127.0.0.0/8 to this machine; each address is a host of its own for Scrapy and for
the cluster's per-host politeness), each serving ``--pages`` JSON-LD job pages (bench/crawl.py) behind
``/slow/0.1/``: every answer comes 100 ms late, so the crawl is latency-bound as real crawls are. One
``jsonld`` source per host (4 requests in flight per host, no AutoThrottle), a real ``redis-server``,
N ``jobcrawl worker --once`` processes (``--concurrency``: requests in flight per source in each
worker), started and warmed up before ``jobcrawl crawl --redis`` seeds the run and stores it into a
fresh database, as long-running worker services are when a scheduled run begins. pages/s = job pages
÷ the time from the first to the last job page answered (the servers' logs); the speed-up is over 1
worker. Each worker count runs ``--repeat`` times, alternating, and its median run is shown. Under each:
CPU milliseconds per page of the workers (their start included), of the coordinator with its writer,
and of the mock servers, which share the two cores with them.

Writer: ``--rows`` postings (real rows of those pages, made distinct) pushed to the spool as batches
of 500, then drained by :func:`crawler.distributed.spool.drain` into a fresh database: rows/s. The
encoded size and the encode + decode time of one batch, pickle protocol 5 (used) beside JSON.

Redis memory: INFO used_memory before and after seeding 10,000 start requests into one source's
queue (with the dupefilter's fingerprints): bytes per queued request.

One worker must be latency-bound for the speed-up to mean anything: at ``--concurrency 1`` one worker
has 8 requests in flight and needs about half a core, so 4 workers fit this machine's 2 cores; at
``--concurrency 2`` one worker already uses most of a core and 4 workers are CPU-bound (×2.0).

    python bench/crawl_distributed.py                      # 8 hosts × 200 pages, 1/2/4 workers, 3 runs each
    python bench/crawl_distributed.py --hosts 4 --pages 50 --repeat 1  # a quick run

Targets (#25): 2 workers ≥ 1.8× and 4 workers ≥ 3× of 1 worker; writer ≥ 3,000 rows/s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.crawl import page, process_cpu_seconds  # noqa: E402
from mockserver import MockServer  # noqa: E402
from redisserver import RedisServer  # noqa: E402


def write_site(root: Path, host: int, pages: int) -> None:
    (root / "jobs").mkdir(parents=True)
    urls = []
    for n in range(host * 100_000, host * 100_000 + pages):
        (root / "jobs" / f"{n}.html").write_text(page(n), encoding="utf-8")
        urls.append(f"<url><loc>{{{{BASE}}}}/slow/0.1/jobs/{n}.html</loc></url>")
    (root / "sitemap.xml").write_text(
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>',
        encoding="utf-8")
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n", encoding="utf-8")


def _reap(proc: subprocess.Popen, timeout: float) -> float:
    """Wait for ``proc`` (kill it after ``timeout`` s); its CPU seconds (user + system)."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            proc.kill()
            deadline = float("inf")
        time.sleep(0.05)


def _wait_until_waiting(procs: list[subprocess.Popen], logs: list[Path], timeout: float = 120) -> None:
    """Until every worker says it is waiting for a crawl (started and warmed up, as a long-running
    worker service is when a scheduled run begins)."""
    deadline = time.monotonic() + timeout
    while not all("waiting for a crawl" in log.read_text(encoding="utf-8") for log in logs):
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
            raise SystemExit("a worker did not start: " + " | ".join(log.read_text(encoding="utf-8") for log in logs))
        time.sleep(0.1)


def crawl_once(servers: list[MockServer], redis: RedisServer, work: Path, workers: int, concurrency: int) -> dict:
    redis.client().flushall()
    sources = work / "sources.toml"
    sources.write_text('contact = "https://example.org/jobcrawl-bench"\n' + "".join(f"""
[sources.h{i}]
spider = "jsonld"
sitemap_urls = ["{s.base}/sitemap.xml"]
allow = ["/jobs/"]
follow = false
allow_private = true
concurrency = 4
settings = {{ AUTOTHROTTLE_ENABLED = false }}
""" for i, s in enumerate(servers)), encoding="utf-8")
    before = [len(s.hits()) for s in servers]
    server_cpu = sum(process_cpu_seconds(s.proc.pid) for s in servers)
    env = dict(os.environ, PYTHONUTF8="1")
    logs = [work / f"worker{i}.out" for i in range(workers)]
    procs = [subprocess.Popen([sys.executable, "-m", "crawler.cli", "worker", "--redis", redis.url, "--once",
                               "--concurrency", str(concurrency)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=log.open("w")) for log in logs]
    try:
        _wait_until_waiting(procs, logs)
    except BaseException:
        for p in procs:
            p.kill()
        raise
    db = work / f"w{workers}.db"
    started = time.perf_counter()
    coordinator = subprocess.Popen([sys.executable, "-m", "crawler.cli", "crawl", "--all", "--sources", str(sources),
                                    "--db", str(db), "--redis", redis.url], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = coordinator.stderr.read()
    coordinator_cpu = _reap(coordinator, 600)
    total = time.perf_counter() - started
    worker_cpu = sum(_reap(p, 60) for p in procs)
    server_cpu = sum(process_cpu_seconds(s.proc.pid) for s in servers) - server_cpu
    if coordinator.returncode != 0:
        raise SystemExit(f"crawl exited {coordinator.returncode}: {stderr}")
    times = sorted(h.at for s, b in zip(servers, before) for h in s.hits()[b:] if "/jobs/" in h.path)
    span = times[-1] - times[0]
    n = len(times)
    return {"workers": workers, "pages": n, "span_s": round(span, 2), "pages_per_s": round(n / span, 1),
            "end_to_end_s": round(total, 1), "worker_cpu_ms": round(1000 * worker_cpu / n, 2),
            "coordinator_cpu_ms": round(1000 * coordinator_cpu / n, 2), "server_cpu_ms": round(1000 * server_cpu / n, 2)}


def sample_rows(n: int) -> list:
    """``n`` distinct posting rows made from the bench pages through the real page object and stages."""
    from crawler.store.rows import posting_row
    from normalize.skills import tag_posting
    from crawler.web.pages.jsonld import JsonLdPage
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting
    from normalize.skills import load_taxonomy
    from scrapy.http import HtmlResponse

    taxonomy = load_taxonomy()
    base = []
    for i in range(50):
        response = HtmlResponse(f"https://careers.example.com/jobs/{i}", body=page(i).encode(), encoding="utf-8")
        for item in JsonLdPage.from_response(response, fetched_at="2026-12-03T00:00:00+00:00").parse():
            if isinstance(item, RawPosting):
                posting = normalize_posting(item)
                tag_posting(posting, taxonomy)
                base.append(posting_row(posting))
    from crawler.store.rows import POSTING_COLS

    at = POSTING_COLS.index("key")
    rows = []
    for i in range(n):
        row = base[i % len(base)]
        values = list(row.values)
        values[at] = f"bench-{i}"
        rows.append(row._replace(key=f"bench-{i}", values=tuple(values)))
    return rows


def writer_figures(redis: RedisServer, work: Path, rows: int) -> dict:
    from crawler.store.rows import Batch
    from crawler.distributed.cluster import Keys
    from crawler.distributed.spool import decode, drain, encode

    client = redis.client()
    client.flushall()
    made = sample_rows(rows)
    keys = Keys()
    for i in range(0, rows, 500):
        client.lpush(keys.spool, encode(Batch(run_id=None, postings=made[i:i + 500], id=f"bench-{i}")))
    db = work / "writer.db"
    from crawler.store.schema import open_db

    open_db(db).close()
    stats = drain(client, keys, str(db), stop=threading.Event(), until_empty=lambda: True)
    batch = Batch(run_id=None, postings=made[:500])
    t = time.perf_counter()
    for _ in range(5):
        decode(encode(batch))
    pickle_ms = (time.perf_counter() - t) / 5 * 1000
    as_json = lambda b: json.dumps([list(p) for p in b.postings], ensure_ascii=False).encode()  # noqa: E731
    t = time.perf_counter()
    for _ in range(5):
        json.loads(as_json(batch))
    json_ms = (time.perf_counter() - t) / 5 * 1000
    return {"rows": stats.rows, "seconds": round(stats.seconds, 2), "rows_per_s": round(stats.rows / stats.seconds),
            "pickle_kb": round(len(encode(batch)) / 1024), "pickle_ms": round(pickle_ms, 1),
            "json_kb": round(len(as_json(batch)) / 1024), "json_ms": round(json_ms, 1)}


def memory_per_request(redis: RedisServer, n: int = 10_000) -> float:
    from crawler.distributed.cluster import Keys
    from crawler.distributed.coordinator import _start_requests
    from crawler.distributed.scheduler import seed_source
    from crawler.run.runner import Job

    client = redis.client()
    client.flushall()
    urls = [f"https://careers.example.com/jobs/{i}.html" for i in range(n)]
    job = Job("jsonld", "crawl", {}, {"start_urls": urls, "allow": ["/jobs/"]}, source="mem")
    spider, requests = _start_requests(job, {})
    before = client.info("memory")["used_memory"]
    seed_source(client, Keys(), "bench", "mem", spider, requests)
    return (client.info("memory")["used_memory"] - before) / n


def _median_run(runs: list[dict]) -> dict:
    """The run with the median pages/s (the lower middle one for an even count)."""
    ordered = sorted(runs, key=lambda r: r["pages_per_s"])
    return ordered[(len(ordered) - 1) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=8, help="hosts (loopback addresses), one source each")
    parser.add_argument("--pages", type=int, default=200, help="job pages per host (default 200)")
    parser.add_argument("--workers", default="1,2,4", help="worker counts to run (comma-separated)")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="requests in flight per source in each worker (default 1: see below)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="crawls per worker count, alternating; each figure is the median run (default 3)")
    parser.add_argument("--rows", type=int, default=20_000, help="postings pushed to the spool for the writer")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="jobcrawl-bench-distributed-"))
    servers: list[MockServer] = []
    try:
        with RedisServer(work / "redis") as redis:
            for i in range(args.hosts):
                root = work / f"www{i}"
                write_site(root, i, args.pages)
                servers.append(MockServer(root, work / f"www{i}.log", host=f"127.0.0.{i + 2}").__enter__())
            load_before = os.getloadavg()
            counts = [int(n) for n in args.workers.split(",")]
            runs: dict[int, list[dict]] = {n: [] for n in counts}
            for _ in range(args.repeat):  # alternate the worker counts, so a busy minute hits each of them
                for n in counts:
                    runs[n].append(crawl_once(servers, redis, work, n, args.concurrency))
            load_after = os.getloadavg()
            results = [_median_run(runs[n]) for n in counts]
            one = results[0]["pages_per_s"]
            for r in results:
                print(f"{r['workers']} worker(s): {r['pages']} pages in {r['span_s']} s = {r['pages_per_s']} pages/s · "
                      f"speed-up ×{r['pages_per_s'] / one:.2f} · whole command {r['end_to_end_s']} s"
                      + (f" · median of {args.repeat} ({', '.join(str(x['pages_per_s']) for x in runs[r['workers']])})"
                         if args.repeat > 1 else ""))
                print(f"{'':12}CPU ms per page: workers {r['worker_cpu_ms']:.2f} · coordinator and writer "
                      f"{r['coordinator_cpu_ms']:.2f} · mock servers {r['server_cpu_ms']:.2f}")
            w = writer_figures(redis, work, args.rows)
            print(f"writer: {w['rows']} rows from the spool in {w['seconds']} s = {w['rows_per_s']} rows/s "
                  f"(target ≥ 3,000) · a batch of 500: pickle {w['pickle_kb']} KB, {w['pickle_ms']} ms to encode and "
                  f"decode; JSON {w['json_kb']} KB, {w['json_ms']} ms")
            print(f"Redis memory per queued request: {memory_per_request(redis):.0f} bytes (queue and dupefilter)")
            print("load average (1, 5, 15 min) before {:.2f} {:.2f} {:.2f}, after {:.2f} {:.2f} {:.2f} on {} cores".format(
                *load_before, *load_after, os.cpu_count()))
    finally:
        for s in servers:
            s.__exit__()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
