"""Faults of a distributed crawl say what happened (#38): Redis lost or out of memory mid-run, a source no worker
takes, a stalled run, a full disk at the writer, a dead coordinator's lock, a worker resumed after its run ended.
A real ``redis-server``, real ``jobcrawl crawl --redis`` / ``worker`` processes and the mock server on 127.0.0.1."""

from __future__ import annotations

import os
import pickle
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bench.crawl import page
from conftest import ROOT, run_cli
from mockserver import MockServer
from redisserver import RedisServer
from test_distributed import QUICK_HEARTBEAT, redis_server, redis_url, sources_file, start_worker, stop, table  # noqa: F401 — fixtures

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The mock server over 40 fast job pages (``/fast/``) and 40 served after 0.3 s (``/slow/0.3/late/``)."""
    root = tmp_path_factory.mktemp("site")
    (root / "robots.txt").write_text("User-agent: *\n", encoding="utf-8")
    for name, prefix in (("fast", ""), ("late", "/slow/0.3")):
        folder = root / name / "jobs"
        folder.mkdir(parents=True)
        urls = []
        for n in range(40):
            (folder / f"{n}.html").write_text(page(n if name == "fast" else 1000 + n), encoding="utf-8")
            urls.append(f"<url><loc>{{{{BASE}}}}{prefix}/{name}/jobs/{n}.html</loc></url>")
        (root / name / "sitemap.xml").write_text(
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{"".join(urls)}</urlset>',
            encoding="utf-8")
    with MockServer(root, root.parent / f"{root.name}.log") as server:
        yield server


def source(name: str, base: str, folder: str, extra: str = "", settings: str = "") -> str:
    return f"""
[sources.{name}]
spider = "jsonld"
sitemap_urls = ["{base}/{folder}/sitemap.xml"]
allow = ["/{folder}/jobs/"]
follow = false
concurrency = 4
settings = {{ AUTOTHROTTLE_ENABLED = false{settings} }}
{extra}"""


def coordinator(sources: Path, db: Path, url: str, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "crawler.cli", "crawl", "--all", "--sources", str(sources),
                             "--db", str(db), "--redis", url, "-q", *args], cwd=ROOT,
                            env=env or dict(os.environ, PYTHONUTF8="1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def worker(url: str, log: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A worker whose stderr goes to ``log`` (read while it runs)."""
    with open(log, "w", encoding="utf-8") as err:
        return subprocess.Popen([sys.executable, "-m", "crawler.cli", "worker", "--redis", url, *args], cwd=ROOT,
                                env=env or dict(os.environ, PYTHONUTF8="1"), stdout=subprocess.DEVNULL, stderr=err,
                                text=True)


def poll(what, *, timeout: float = 60, message: str = "") -> object:
    """``what()`` once it is truthy, checked every 0.05 s until ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {message or what}")


def fetched(site, since: int, folder: str) -> int:
    return sum(1 for h in site.hits()[since:] if f"/{folder}/jobs/" in h.path)


def lines(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines()


# --------------------------------------------------------------------------- Redis lost


@pytest.mark.parametrize("fault", ["stopped", "out-of-memory"])
def test_redis_lost_mid_run_is_one_line_and_the_workers_rejoin_when_it_returns(site, tmp_path, fault):
    """The coordinator ends with one line naming Redis and the problem, exit 3, its runs ``interrupted``; each
    worker says the outage once and that Redis answers again, then crawls the next run, which completes the
    database."""
    sources = sources_file(tmp_path / "sources.toml", source("late", site.base, "late"))
    db, log = tmp_path / "jobs.db", tmp_path / "worker.log"
    server = RedisServer(tmp_path / "redis").__enter__()
    url = server.url
    workers = [worker(url, log)]
    try:
        before = len(site.hits())
        first = coordinator(sources, db, url)
        poll(lambda: fetched(site, before, "late") >= 5, message="the first pages")
        if fault == "stopped":
            server.__exit__()
        else:
            server.client().config_set("maxmemory", 1)  # every write refused (noeviction)
        out, err = first.communicate(timeout=60)
        problem = "unreachable" if fault == "stopped" else "out of memory"
        assert first.returncode == 3, err
        assert err.splitlines()[-1].startswith(f"jobcrawl crawl: Redis at {url} {problem}")
        assert err.splitlines()[-1].endswith(": the run is stopped, its runs marked interrupted (run it again to "
                                             "crawl the rest)")
        assert "Traceback" not in err
        assert table(db, "SELECT source, status FROM runs") == [("late", "interrupted")]
        outage = poll(lambda: [n for n, line in enumerate(lines(log)) if f"Redis at {url} {problem}" in line],
                      message="the worker's outage line")
        time.sleep(3)  # the outage goes on: the worker must stay quiet meanwhile
        if fault == "stopped":
            server = RedisServer(tmp_path / "redis")
            server.port = int(url.split(":")[2].split("/")[0])
            server.__enter__()
        else:
            server.client().config_set("maxmemory", 0)
        back = poll(lambda: [n for n, line in enumerate(lines(log)) if f"Redis at {url} answers again" in line],
                    message="the worker's line on Redis back")
        assert back[0] == outage[0] + 1 and len(outage) == len(back) == 1, lines(log)  # nothing in between
        assert workers[0].poll() is None
        second = run_cli("crawl", "--all", "--sources", str(sources), "--db", str(db), "--redis", url, "-q",
                         timeout=120)
        assert second.returncode == 0, second.stderr
    finally:
        stop(workers)
        server.__exit__()
    assert "Traceback" not in log.read_text(encoding="utf-8")
    assert table(db, "SELECT count(*), count(DISTINCT key) FROM postings") == [(40, 40)]
    assert table(db, "SELECT status FROM runs ORDER BY id") == [("interrupted",), ("ok",)]


# --------------------------------------------------------------------------- nothing moves


@pytest.mark.parametrize("takes, why", [
    pytest.param("fast", "no live worker takes it", id="no-worker-names-it"),
    pytest.param(None, "no live worker has it open", id="no-worker-at-all"),
])
def test_a_source_nobody_crawls_ends_the_run_naming_it(site, redis_url, tmp_path, takes, why):
    """A source no worker's --sources file names (or no worker at all) stops the run after --stall-timeout with a
    line naming the source and exit 3; what the workers crawled is stored."""
    body = source("fast", site.base, "fast") + source("late", site.base, "late")
    sources = sources_file(tmp_path / "sources.toml", body)
    db = tmp_path / "jobs.db"
    workers = []
    if takes:
        own = sources_file(tmp_path / "mine.toml", source(takes, site.base, takes))
        workers.append(worker(redis_url, tmp_path / "worker.log", "--sources", str(own)))
    try:
        proc = coordinator(sources, db, redis_url, "--stall-timeout", "2")
        out, err = proc.communicate(timeout=120)
    finally:
        stop(workers)
    assert proc.returncode == 3, err
    crawl = re.search(r"crawl (\w+) active", err).group(1)
    said = [line for line in err.splitlines() if line.startswith(f"crawl {crawl}: late")]
    assert said == ([f"crawl {crawl}: late: no live worker takes it (no worker's --sources file names it)"]
                    if takes else []) + [f"crawl {crawl}: late: no progress for 2 s (1 request queued, 0 in flight, "
                                         f"{why}): the run is stopped"]
    runs = dict(table(db, "SELECT source, status FROM runs"))
    assert runs == ({"fast": "ok", "late": "interrupted"} if takes else {"fast": "interrupted", "late": "interrupted"})
    assert table(db, "SELECT count(*) FROM postings") == [(40 if takes else 0,)]


# --------------------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MB tmpfs mounted at tmp_path/disk (root only), unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_at_the_writer_stops_the_run_and_says_what_waits_in_the_spool(site, redis_url, tmp_path,
                                                                               small_disk):
    """The writer's ``database or disk is full`` stops the run (exit 3) with a line naming the database, how many
    postings wait in the spool and the command that stores them; that command, given room, stores those batches."""
    import redis

    from crawler.distributed.cluster import Keys
    from crawler.distributed.spool import backlog

    body = "".join(source(f"f{k}", site.base, "fast", settings=", JOBCRAWL_BATCH_SIZE = 5") for k in range(10))
    sources = sources_file(tmp_path / "sources.toml", body)
    db = small_disk / "jobs.db"
    workers = [worker(redis_url, tmp_path / "worker.log")]
    try:
        proc = coordinator(sources, db, redis_url)
        out, err = proc.communicate(timeout=120)
    finally:
        stop(workers)
    assert proc.returncode == 3, err
    client = redis.Redis.from_url(redis_url)
    batches, postings = backlog(client, Keys())
    assert postings > 0, err
    line = (f"storing into {db} failed: database or disk is full; {postings} postings ({batches} batches) wait in "
            f"the spool: run `jobcrawl store --redis {redis_url} --db {db} --until-empty` once it can be written")
    assert line in err.splitlines(), err
    assert "Traceback" not in err
    moved = tmp_path / "roomy.db"
    with sqlite3.connect(db) as full, sqlite3.connect(moved) as roomy:
        full.backup(roomy)
    proc = run_cli("store", "--redis", redis_url, "--db", str(moved), "--until-empty")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"stored {batches} batches ")  # the batches the line counted, none lost
    assert backlog(client, Keys()) == (0, 0)


# --------------------------------------------------------------------------- the lock


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("holder, status", [
    pytest.param("{host}-{dead}-abc123", 0, id="dead-process-of-this-host"),
    pytest.param("elsewhere-42-abc123", 4, id="process-of-another-host"),
])
def test_a_dead_coordinators_lock(site, redis_url, tmp_path, holder, status):
    """A lock whose holder is a dead process of this host is taken over (said); another host's is named with the
    time it expires, exit 4."""
    import redis

    holder = holder.format(host=socket.gethostname(), dead=_dead_pid())
    redis.Redis.from_url(redis_url).set("jobcrawl:lock", holder, px=60_000)
    sources = sources_file(tmp_path / "sources.toml", source("fast", site.base, "fast"))
    workers = [worker(redis_url, tmp_path / "worker.log")] if status == 0 else []
    try:
        proc = run_cli("crawl", "--all", "--sources", str(sources), "--db", str(tmp_path / "jobs.db"), "--redis",
                       redis_url, "-q", timeout=120)
    finally:
        stop(workers)
    assert proc.returncode == status, proc.stderr
    first = proc.stderr.splitlines()[0]
    if status == 0:
        assert first == f"taking over the lock of jobcrawl from coordinator {holder}: its process is gone"
        assert table(tmp_path / "jobs.db", "SELECT status, new FROM runs") == [("ok", 40)]
    else:
        assert re.fullmatch(
            rf"jobcrawl crawl: another distributed run is active on jobcrawl \(coordinator {holder}; its lock "
            r"expires at \d\d:\d\d:\d\d \(in \d+ s\) unless renewed: if that coordinator is gone the lock is "
            r"stale, run again after that\)", first), first
        assert proc.stderr.splitlines() == [first]


# --------------------------------------------------------------------------- a paused worker


def leased_paths(client, pid: int) -> set[str]:
    """The URL paths of the requests worker ``pid`` holds leases of (the inflight hashes: score, newline, the
    request as scrapy-redis pickles it)."""
    paths = set()
    for key in client.scan_iter(match="jobcrawl:crawl:*:inflight"):
        for field, value in client.hgetall(key).items():
            if field.decode().split("|")[0].rsplit("-", 2)[1] == str(pid):
                paths.add(urlsplit(pickle.loads(value.split(b"\n", 1)[1])["url"]).path)
    return paths


def test_a_worker_resumed_after_its_run_ended_fetches_and_pushes_nothing(site, redis_url, tmp_path):
    """A worker paused (SIGSTOP) mid-run is counted gone, another finishes the run; resumed (SIGCONT) after the run
    ended, it sends no request to the site and pushes no batch to the spool."""
    import redis

    sources = sources_file(tmp_path / "sources.toml", source("late", site.base, "late", "delay = 0.1"))
    db = tmp_path / "jobs.db"
    paused = worker(redis_url, tmp_path / "paused.log", env=QUICK_HEARTBEAT)
    other = worker(redis_url, tmp_path / "other.log", env=QUICK_HEARTBEAT)
    client = redis.Redis.from_url(redis_url)
    try:
        before = len(site.hits())
        proc = coordinator(sources, db, redis_url, env=QUICK_HEARTBEAT)

        def holding() -> bool:
            key = next(client.scan_iter(match="jobcrawl:crawl:*:late:inflight"), None)
            return key is not None and any(f.decode().split("|")[0].rsplit("-", 2)[1] == str(paused.pid)
                                           for f in client.hkeys(key)) and fetched(site, before, "late") >= 4

        poll(holding, message="the paused worker's leases")
        os.kill(paused.pid, signal.SIGSTOP)
        taken = leased_paths(client, paused.pid)
        assert taken, "the paused worker holds leases"
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ended = len(site.hits())
        os.kill(paused.pid, signal.SIGCONT)
        poll(lambda: any("late closed (shutdown)" in line for line in lines(tmp_path / "paused.log")),
             message="the resumed worker closing its crawler")
        poll(lambda: len(client.keys("jobcrawl:worker:*")) == 2, message="both workers' heartbeats")
    finally:
        os.kill(paused.pid, signal.SIGCONT)
        stop([paused, other])
    # a request it had taken before the pause may still go out (the downloader had it); nothing else
    assert [h.path for h in site.hits()[ended:] if h.path not in taken] == []
    assert client.llen("jobcrawl:spool") == 0
    assert [k for k in client.keys("jobcrawl:crawl:*") if client.ttl(k) == -1] == []  # none left for good
    assert table(db, "SELECT count(*), count(DISTINCT key) FROM postings") == [(40, 40)]
