"""Distributed crawls (#25) with a real ``redis-server``, real ``jobcrawl worker`` / ``store`` / ``crawl --redis``
processes and the mock HTTP server on 127.0.0.1; the writer's idempotency and the spool on real SQLite files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from bench.crawl import page
from conftest import ROOT, export_records, run_cli, signal_ids_as_keys
from crawler.store.rows import Batch
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from crawler.distributed.cluster import Keys, requeue_dead, source_keys
from crawler.distributed.spool import drain, encode
from mockserver import MockServer
from redisserver import RedisServer, free_port

CONTACT = "https://example.org/jobcrawl-tests"


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """A real redis-server for the session, on a free port in a temporary folder, killed by its PID."""
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_url(redis_server):
    """The session's Redis, emptied for each test."""
    redis_server.client().flushall()
    return redis_server.url


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The mock server over 5 folders of 100 JSON-LD job pages each (500 pages), a sitemap per folder,
    and a folder of 60 slow pages (0.3 s each) for the kill tests."""
    root = tmp_path_factory.mktemp("site")
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n", encoding="utf-8")
    for k in range(5):
        folder = root / f"s{k}" / "jobs"
        folder.mkdir(parents=True)
        urls = []
        for n in range(100 * k, 100 * (k + 1)):
            (folder / f"{n}.html").write_text(page(n), encoding="utf-8")
            urls.append(f"<url><loc>{{{{BASE}}}}/s{k}/jobs/{n}.html</loc></url>")
        (root / f"s{k}" / "sitemap.xml").write_text(
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>',
            encoding="utf-8")
    slow = root / "late" / "jobs"
    slow.mkdir(parents=True)
    urls = []
    for n in range(5000, 5060):
        (slow / f"{n}.html").write_text(page(n), encoding="utf-8")
        urls.append(f"<url><loc>{{{{BASE}}}}/slow/0.3/late/jobs/{n}.html</loc></url>")
    (root / "late" / "sitemap.xml").write_text(
        f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>',
        encoding="utf-8")
    with MockServer(root, root.parent / f"{root.name}.log") as server:
        yield server


def sources_file(path: Path, body: str) -> Path:
    """A sources file of ``body`` whose every source may reach the local servers (allow_private, crawler/web/safety.py)."""
    from test_crawl import write_sources

    return write_sources(path, body)


def five_sources(base: str) -> str:
    return "".join(f"""
[sources.s{k}]
spider = "jsonld"
sitemap_urls = ["{base}/s{k}/sitemap.xml"]
allow = ["/s{k}/jobs/"]
follow = false
concurrency = 8
settings = {{ AUTOTHROTTLE_ENABLED = false }}
""" for k in range(5))


QUICK_HEARTBEAT = dict(os.environ, PYTHONUTF8="1", JOBCRAWL_HEARTBEAT_TTL="3")
"""The environment of every process of a test that kills one: the killed one counts as gone after 3 s, not 10 s."""


def start_worker(url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "crawler.cli", "worker", "--redis", url, *args], cwd=ROOT,
                            env=env or dict(os.environ, PYTHONUTF8="1"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def crawl_with_workers(n: int, sources: Path, db: Path, url: str) -> subprocess.CompletedProcess:
    """``jobcrawl crawl --all --redis`` of ``sources`` into ``db`` with ``n`` workers, stopped afterwards."""
    workers = [start_worker(url) for _ in range(n)]
    try:
        return run_cli("crawl", "--all", "--sources", str(sources), "--db", str(db), "--redis", url, timeout=300)
    finally:
        stop(workers)


def table(db: Path, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


RUN_COLUMNS = ("source", "status", "requests", "responses", "files", "found", "new", "updated", "unchanged",
               "closed", "reopened", "quarantined", "errors")


def run_rows(db: Path) -> dict[str, tuple]:
    return {row[0]: row for row in table(db, f"SELECT {', '.join(RUN_COLUMNS)} FROM runs ORDER BY id")}


VOLATILE = {"id", "as_of", "first_seen", "last_seen", "first_seen_local", "last_seen_local", "cluster_id", "duplicate_of",
            "dedupe_matched"}


def canonical(db: Path) -> tuple[list[dict], set[frozenset]]:
    """Every posting as exported, without what depends on when or in which order it was stored, and the
    duplicate clusters as sets of posting keys (which member is canonical follows storage order)."""
    records = signal_ids_as_keys(export_records(db))
    out, clusters = [], {}
    for r in records:
        c = {k: v for k, v in r.items() if k not in VOLATILE}
        if isinstance(c.get("evaluation"), dict):
            c["evaluation"] = {k: v for k, v in c["evaluation"].items() if k != "computed_at"}
        out.append(c)
        clusters.setdefault(r["cluster_id"], set()).add(r["key"])
    return sorted(out, key=lambda c: c["key"]), {frozenset(keys) for keys in clusters.values()}


# --------------------------------------------------------------------------- the writer, twice


def _batch(batch_id: str | None = None) -> Batch:
    """A batch as the store stage makes it from the first seed dump: its raw input, its postings, a quarantined file."""
    from crawler.store.rows import input_row, posting_row, quarantine_row
    from normalize.skills import tag_posting
    from crawler.ingest.appdump import parse_dump
    from normalize.models import Quarantined, RawInput, RawPosting
    from normalize.posting import normalize_posting
    from normalize.skills import load_taxonomy

    body = (ROOT / "seeds" / "000_7c4373297891d5ca.txt").read_bytes()
    batch = Batch(run_id=None, parsers={"textdump": "v1"}, id=batch_id)
    for item in parse_dump(body, locator="000_7c4373297891d5ca.txt", fetched_at="2026-11-29T04:00:00+00:00",
                           as_of="2026-11-29T04:00:00+00:00"):
        if isinstance(item, RawInput):
            batch.inputs.append(input_row(item))
        elif isinstance(item, RawPosting):
            posting = normalize_posting(item)
            tag_posting(posting, load_taxonomy())
            batch.postings.append(posting_row(posting))
    batch.quarantine.append(quarantine_row(Quarantined(
        source="textdump", locator="broken.txt", reason="empty", detail="broken.txt: empty file", text="",
        fetched_at="2026-11-29T04:00:00+00:00")))
    return batch


def dump_tables(db: Path) -> dict[str, list[tuple]]:
    """The rows of the tables a batch writes, without the clock columns."""
    queries = {
        "raw_inputs": "SELECT id, source, locator, sha256, status, postings FROM raw_inputs ORDER BY id",
        "postings": "SELECT id, key, content_hash, version, closed_at FROM postings ORDER BY id",
        "sections": "SELECT posting_id, seq, key, text FROM sections ORDER BY posting_id, seq",
        "posting_skills": "SELECT posting_id, skill, section FROM posting_skills ORDER BY 1, 2, 3",
        "quarantine": "SELECT source, locator, position, reason FROM quarantine ORDER BY id",
        "input_parses": "SELECT raw_input_id, as_of, parser, status, postings FROM input_parses ORDER BY 1",
        "posting_versions": "SELECT posting_id, version FROM posting_versions ORDER BY 1, 2",
    }
    return {name: table(db, sql) for name, sql in queries.items()}


@pytest.mark.parametrize("batch_id", [pytest.param(None, id="local-batch"), pytest.param("b-1", id="spooled-batch")])
def test_a_batch_written_twice_changes_no_row(tmp_path, batch_id):
    db = tmp_path / "jobs.db"
    database = open_db(db)
    writer = Writer(database)
    writer.write(_batch(batch_id))
    once = dump_tables(db)
    writer.write(_batch(batch_id))
    database.close()
    assert dump_tables(db) == once
    assert [len(once[t]) for t in ("raw_inputs", "postings", "quarantine", "input_parses")] == [1, 1, 1, 1]
    assert once["posting_versions"] == []


def test_a_spooled_batch_is_stored_once_and_counted_once(tmp_path):
    db = tmp_path / "jobs.db"
    database = open_db(db)
    writer = Writer(database)
    writer.write(_batch("b-1"))
    writer.write(_batch("b-1"))
    assert writer.counts_of(None) == {"new": 1, "inputs_new": 1, "quarantined": 1, "quarantined_new": 1,
                                      "spooled_again": 1}
    assert table(db, "SELECT id, counts FROM spool_batches") == [
        ("b-1", '{"inputs_new": 1, "new": 1, "quarantined": 1, "quarantined_new": 1}')]
    database.close()


_WARM_UP = """
import sys
from crawler.distributed.worker import warm_up
from crawler.settings import project_settings
from normalize.skills import _load
wanted = ["crawler.distributed.politeness", "crawler.pipelines", "scrapy.downloadermiddlewares.retry"]
before = [m in sys.modules for m in wanted] + [_load.cache_info().currsize]
settings = {"ITEM_PIPELINES": {sys.argv[1]: 900}} if len(sys.argv) > 1 else None
try:
    warm_up(project_settings(settings), url="redis://127.0.0.1:1/0", prefix="p", worker_id="w", concurrency=None)
except Exception as err:
    print(type(err).__name__)
    raise SystemExit(0)
print(before, [m in sys.modules for m in wanted] + [_load.cache_info().currsize])
"""


@pytest.mark.parametrize("extra, out", [
    pytest.param(None, "[False, False, False, 0] [True, True, True, 1]", id="loads-all"),
    pytest.param("crawler.pipelines.NoSuchPipeline", "NameError", id="a-missing-component-fails-at-start"),
])
def test_a_worker_warms_up_before_it_waits_for_a_crawl(extra, out):
    """Joining a crawl then builds crawlers from loaded modules and the loaded taxonomy (bench/crawl_distributed.py
    starts the crawl once every worker waits), and a component that cannot be loaded stops the worker at start."""
    proc = subprocess.run([sys.executable, "-c", _WARM_UP, *([extra] if extra else [])], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == out


@pytest.mark.slow
def test_writer_killed_after_its_commit_the_next_one_skips_the_batch(redis_url, tmp_path):
    """A batch committed but not acknowledged (the writer died in between) is taken back and skipped."""
    import redis

    client = redis.Redis.from_url(redis_url)
    keys = Keys()
    db = tmp_path / "jobs.db"
    database = open_db(db)
    Writer(database).write(_batch("b-1"))  # the dead writer's commit
    database.close()
    client.lpush(keys.processing("gone-writer"), encode(_batch("b-1")))
    client.lpush(keys.spool, encode(_batch("b-2")))
    stats = drain(client, keys, str(db), stop=threading.Event(), until_empty=lambda: True)
    assert (stats.requeued, stats.batches, stats.duplicates) == (1, 2, 1)
    assert client.llen(keys.spool) == 0 and client.llen(keys.processing("gone-writer")) == 0
    assert table(db, "SELECT id FROM spool_batches ORDER BY id") == [("b-1",), ("b-2",)]
    assert table(db, "SELECT count(*) FROM postings") == [(1,)]


# --------------------------------------------------------------------------- leases


@pytest.mark.slow
def test_leases_of_a_gone_worker_go_back_to_the_queue(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    keys = Keys()
    sk = source_keys(keys, "c1", "s")
    client.zadd(sk["requests"], {b"r1": -1, b"r2": 0})
    pop = client.register_script(__import__("crawler.distributed.cluster", fromlist=["POP_LEASED"]).POP_LEASED)
    assert pop(keys=[sk["requests"], sk["inflight"]], args=["alive|1"]) == b"r1"  # priority 1 first
    assert pop(keys=[sk["requests"], sk["inflight"]], args=["dead|1"]) == b"r2"
    assert pop(keys=[sk["requests"], sk["inflight"]], args=["alive|2"]) is None
    client.set(keys.worker("alive"), "1")
    assert requeue_dead(client, keys, "c1", "s") == 1
    assert client.zrange(sk["requests"], 0, -1, withscores=True) == [(b"r2", 0.0)]
    assert client.hgetall(sk["inflight"]) == {b"alive|1": b"-1\nr1"}


# --------------------------------------------------------------------------- whole runs


@pytest.fixture(scope="module")
def local_and_distributed(site, tmp_path_factory, request):
    """5 sources / 500 pages crawled by one process, then by 3 workers and the coordinator's writer."""
    redis_server = request.getfixturevalue("redis_server")
    redis_server.client().flushall()
    tmp = tmp_path_factory.mktemp("five")
    sources = sources_file(tmp / "sources.toml", five_sources(site.base))
    local = tmp / "local.db"
    before = len(site.hits())
    proc = run_cli("crawl", "--all", "--sources", str(sources), "--db", str(local), "--no-cache", "--workers", "1",
                   timeout=900)
    assert proc.returncode == 0, proc.stderr
    local_hits = site.hits()[before:]

    workers = [start_worker(redis_server.url) for _ in range(3)]
    try:
        before = len(site.hits())
        dist = tmp / "dist.db"
        proc = run_cli("crawl", "--all", "--sources", str(sources), "--db", str(dist), "--redis", redis_server.url,
                       timeout=900)
        dist_hits = site.hits()[before:]
    finally:
        stop(workers)
    assert proc.returncode == 0, proc.stderr
    return local, local_hits, dist, dist_hits, proc, redis_server


@pytest.mark.slow
def test_three_workers_fetch_every_page_exactly_once(local_and_distributed):
    _, local_hits, _, dist_hits, _, _ = local_and_distributed
    pages = Counter(h.path for h in dist_hits if "/jobs/" in h.path)
    assert len(pages) == 500 and set(pages.values()) == {1}
    assert Counter(h.path for h in dist_hits) == Counter(h.path for h in local_hits)  # robots.txt once per source


@pytest.mark.slow
def test_three_workers_store_what_one_process_stores(local_and_distributed):
    local, _, dist, _, _, _ = local_and_distributed
    assert table(dist, "SELECT count(*), count(DISTINCT key) FROM postings") == [(500, 500)]
    assert canonical(dist) == canonical(local)


@pytest.mark.slow
def test_each_source_gets_one_runs_row_with_the_counts_of_a_local_run(local_and_distributed):
    local, _, dist, _, proc, redis_server = local_and_distributed
    got, expected = run_rows(dist), run_rows(local)
    assert got == expected
    assert got["s0"] == ("s0", "ok", 102, '{"200": 102}', 100, 100, 100, 0, 0, 0, 0, 0, 0)
    workers = {s: json.loads(st)["jobcrawl/workers"] for s, st in table(dist, "SELECT source, stats FROM runs")}
    assert set(workers) == {"s0", "s1", "s2", "s3", "s4"} and all(1 <= n <= 3 for n in workers.values())
    assert redis_server.client().keys("jobcrawl:crawl:*") == []  # the crawl's keys are gone


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing(site, redis_url, tmp_path):
    import redis

    client = redis.Redis.from_url(redis_url)
    sources = sources_file(tmp_path / "sources.toml", f"""
[sources.slow]
spider = "jsonld"
sitemap_urls = ["{site.base}/late/sitemap.xml"]
allow = ["/late/jobs/"]
follow = false
concurrency = 6
settings = {{ AUTOTHROTTLE_ENABLED = false }}
""")
    db = tmp_path / "jobs.db"
    workers = [start_worker(redis_url, env=QUICK_HEARTBEAT) for _ in range(3)]
    before = len(site.hits())
    coordinator = subprocess.Popen([sys.executable, "-m", "crawler.cli", "crawl", "--all", "--sources", str(sources),
                                    "--db", str(db), "--redis", redis_url], cwd=ROOT, env=QUICK_HEARTBEAT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline:
            for key in client.scan_iter(match="jobcrawl:crawl:*:slow:inflight"):
                holders = {f.decode().split("|")[0] for f in client.hkeys(key)}
                pids = {int(h.rsplit("-", 2)[1]) for h in holders}
                victim = next((w for w in workers if w.pid in pids), None)
                if victim is not None and sum(1 for h in site.hits()[before:] if "/late/jobs/" in h.path) >= 10:
                    break
                victim = None
            time.sleep(0.05)
        assert victim is not None, "no worker ever held a lease"
        held = sum(1 for f in client.hkeys(next(client.scan_iter(match="jobcrawl:crawl:*:slow:inflight")))
                   if f.decode().startswith(f"{victim.pid}-") or f"-{victim.pid}-" in f.decode())
        os.kill(victim.pid, signal.SIGKILL)
        out, err = coordinator.communicate(timeout=300)
    finally:
        stop([w for w in workers if w.poll() is None])
        if coordinator.poll() is None:
            coordinator.kill()
    assert coordinator.returncode == 0, err
    assert held >= 1
    fetched = Counter(h.path for h in site.hits()[before:] if "/late/jobs/" in h.path)
    assert len(fetched) == 60  # every page, some of them twice (the killed worker's)
    assert table(db, "SELECT count(*), count(DISTINCT key) FROM postings") == [(60, 60)]
    assert table(db, "SELECT source, status, new FROM runs") == [("slow", "ok", 60)]


@pytest.mark.slow
def test_the_writer_killed_mid_run_and_restarted_stores_the_rest_once(site, redis_url, tmp_path):
    sources = sources_file(tmp_path / "sources.toml", f"""
[sources.slow]
spider = "jsonld"
sitemap_urls = ["{site.base}/late/sitemap.xml"]
allow = ["/late/jobs/"]
follow = false
concurrency = 6
settings = {{ AUTOTHROTTLE_ENABLED = false, JOBCRAWL_BATCH_SIZE = 5 }}
""")
    db = tmp_path / "jobs.db"
    store_args = [sys.executable, "-m", "crawler.cli", "store", "--redis", redis_url, "--db", str(db)]
    workers = [start_worker(redis_url, env=QUICK_HEARTBEAT) for _ in range(2)]
    writer = subprocess.Popen(store_args, cwd=ROOT, env=QUICK_HEARTBEAT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    coordinator = subprocess.Popen([sys.executable, "-m", "crawler.cli", "crawl", "--all", "--sources", str(sources),
                                    "--db", str(db), "--redis", redis_url, "--no-store"], cwd=ROOT, env=QUICK_HEARTBEAT,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if db.exists() and table(db, "SELECT count(*) FROM sqlite_master WHERE name = 'spool_batches'") == [(1,)] \
                    and table(db, "SELECT count(*) FROM spool_batches")[0][0] >= 2:
                break
            time.sleep(0.05)
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        stored_before = table(db, "SELECT count(*) FROM postings")[0][0]
        time.sleep(1.5)
        writer = subprocess.Popen(store_args, cwd=ROOT, env=QUICK_HEARTBEAT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        out, err = coordinator.communicate(timeout=300)
    finally:
        stop(workers + [writer])
        if coordinator.poll() is None:
            coordinator.kill()
    assert coordinator.returncode == 0, err
    assert 0 < stored_before < 60
    assert table(db, "SELECT count(*), count(DISTINCT key) FROM postings") == [(60, 60)]
    assert table(db, "SELECT source, status, found, new, unchanged FROM runs") == [("slow", "ok", 60, 60, 0)]
    assert table(db, "SELECT count(*) FROM posting_versions") == [(0,)]


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    pytest.param(["crawl", "--all", "--sources", "{sources}", "--db", "{db}", "--redis", "{url}"], id="crawl"),
    pytest.param(["worker", "--redis", "{url}"], id="worker"),
    pytest.param(["store", "--redis", "{url}", "--db", "{db}"], id="store"),
])
def test_redis_unreachable_is_one_line_naming_the_url_and_exit_3(tmp_path, command):
    url = f"redis://127.0.0.1:{free_port()}/0"
    sources = sources_file(tmp_path / "sources.toml", '[sources.gitlab]\nspider = "greenhouse"\nboards = ["gitlab"]\n')
    db = tmp_path / "jobs.db"
    proc = run_cli(*[a.format(sources=sources, db=db, url=url) for a in command])
    assert proc.returncode == 3
    name = command[0]
    port = url.split(":")[2].split("/")[0]
    assert proc.stderr.splitlines() == [f"jobcrawl {name}: cannot reach Redis at {url}: Error 111 connecting to "
                                        f"127.0.0.1:{port}. Connection refused."]
    assert not db.exists()


@pytest.mark.slow
def test_a_second_coordinator_exits_4(redis_url, tmp_path):
    import redis

    redis.Redis.from_url(redis_url).set("jobcrawl:lock", "host-1-abc")
    sources = sources_file(tmp_path / "sources.toml", '[sources.gitlab]\nspider = "greenhouse"\nboards = ["gitlab"]\n')
    proc = run_cli("crawl", "--all", "--sources", str(sources), "--db", str(tmp_path / "jobs.db"), "--redis", redis_url)
    assert proc.returncode == 4
    assert proc.stderr.splitlines() == ["jobcrawl crawl: another distributed run is active on jobcrawl (coordinator "
                                        "host-1-abc; its lock does not expire: delete the key jobcrawl:lock if that "
                                        "run is gone)"]
    assert not (tmp_path / "jobs.db").exists()


@pytest.mark.slow
def test_four_workers_hold_two_requests_a_second_per_host(site, redis_url, tmp_path):
    """The per-host limit of the source (delay 0.25 s: 4 requests/s) holds for the whole cluster."""
    sources = sources_file(tmp_path / "sources.toml", f"""
[sources.polite]
spider = "jsonld"
sitemap_urls = ["{site.base}/s0/sitemap.xml"]
allow = ["/s0/jobs/(1[0-9]|2[0-9]|3[0-9])\\\\.html"]
follow = false
delay = 0.25
concurrency = 4
settings = {{ AUTOTHROTTLE_ENABLED = false }}
""")
    before = len(site.hits())
    proc = crawl_with_workers(4, sources, tmp_path / "jobs.db", redis_url)
    assert proc.returncode == 0, proc.stderr
    times = sorted(h.at for h in site.hits()[before:])
    assert len(times) == 32  # robots.txt, the sitemap, 30 pages
    most = max(sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times))
    assert most <= 5  # 4 a second, +1 for a window's edges
    assert times[-1] - times[0] >= 31 * 0.25 - 0.25  # paced, not merely spread by chance


@pytest.mark.slow
def test_a_worker_keeps_the_safety_rules_of_each_source(site, redis_url, tmp_path):
    """In a worker, as in a local crawl (tests/test_hostile_crawl.py), a source without ``allow_private`` sends
    nothing to the loopback server (refused before robots.txt is read, the refusal named on one line), a source
    whose size cap its pages exceed stores none of them, and a source that allows the address crawls it."""
    pages = "/s0/jobs/(1[0-2])\\\\.html"
    body = "".join(f"""
[sources.{name}]
spider = "jsonld"
sitemap_urls = ["{site.base}/s0/sitemap.xml"]
allow = ["{pages}"]
follow = false
settings = {{ AUTOTHROTTLE_ENABLED = false }}
{extra}
""" for name, extra in (("allowed", "allow_private = true"), ("private", ""),
                        ("capped", "allow_private = true\nmax_size_mb = 0.001")))
    sources = tmp_path / "sources.toml"
    sources.write_text(f'contact = "{CONTACT}"\n{body}', encoding="utf-8")
    before = len(site.hits())
    proc = crawl_with_workers(2, sources, tmp_path / "jobs.db", redis_url)
    assert proc.returncode == 1, proc.stderr  # partial: one source of three stored its postings
    hits = Counter(h.path for h in site.hits()[before:])
    # robots.txt and the sitemap once per source that may reach the host (the capped one's sitemap is over its
    # cap: no page follows), the allowed one's pages once; nothing of the private one
    assert hits == Counter({"/robots.txt": 2, "/s0/sitemap.xml": 2, "/s0/jobs/10.html": 1, "/s0/jobs/11.html": 1,
                            "/s0/jobs/12.html": 1})
    runs = {source: (status, new) for source, status, new in table(tmp_path / "jobs.db",
                                                                     "SELECT source, status, new FROM runs")}
    assert runs == {"allowed": ("ok", 3), "private": ("failed", 0), "capped": ("failed", 0)}
    private = [line for line in proc.stderr.splitlines() if "private" in line and "Refused:" in line]
    assert len(private) == 1 and "not a public address (allow_private = true in the source allows it)" in private[0]
    capped = [line for line in proc.stderr.splitlines() if "capped" in line and "Refused:" in line]
    assert capped and all("response too large" in line for line in capped)
