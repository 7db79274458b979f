"""What a crawl holds stays bounded whatever the site serves: a huge sitemap index costs the requests the
cap allows and a bounded queue, not one request object per URL listed (issue #38). The real
`jobcrawl crawl` against a mock HTTP server on 127.0.0.1; the server's log says what crossed the network."""

from __future__ import annotations

import gzip
import json
import os
import pickle
import re
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import run_cli
from mockserver import MockServer
from test_crawl import QUICK_THROTTLE
from test_distributed import redis_server, start_worker, stop  # noqa: F401 (a fixture)

pytestmark = pytest.mark.slow

SITEMAPS, URLS_EACH = 4, 20_000
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def write_index(root: Path, sitemaps: int = SITEMAPS, urls_each: int = URLS_EACH) -> None:
    """``index.xml`` listing ``sitemap-K.xml``, each listing ``/jobs/page.html?id=K-N`` (one page: the server
    ignores query strings)."""
    listed = "".join(f"<sitemap><loc>{{{{BASE}}}}/sitemap-{k}.xml</loc></sitemap>" for k in range(sitemaps))
    (root / "index.xml").write_text(f'<?xml version="1.0"?><sitemapindex {NS}>{listed}</sitemapindex>')
    for k in range(sitemaps):
        urls = "".join(f"<url><loc>{{{{BASE}}}}/jobs/page.html?id={k}-{n}</loc></url>" for n in range(urls_each))
        (root / f"sitemap-{k}.xml").write_text(f'<?xml version="1.0"?><urlset {NS}>{urls}</urlset>')
    (root / "jobs").mkdir()
    (root / "jobs" / "page.html").write_text("<!DOCTYPE html><html><body><h1>Careers</h1></body></html>")
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")


@pytest.fixture(scope="module")
def big_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    write_index(root)
    with MockServer(root, root.parent / "big-requests.log") as srv:
        yield srv


def crawl_index(server: MockServer, tmp_path: Path, settings: str, *options: str) -> tuple[dict, list[str]]:
    """Crawl the index as one source; its run (status, stats) and the paths requested meanwhile."""
    sources = tmp_path / "sources.toml"
    sources.write_text(f"""
[sources.big]
spider = "jsonld"
sitemap_urls = ["{server.base}/index.xml"]
allow = ["/jobs/"]
allow_private = true
{settings}
""")
    before = len(server.hits())
    db = tmp_path / "jobs.db"
    proc = run_cli("crawl", "big", "--sources", str(sources), "--db", str(db), *QUICK_THROTTLE, *options, timeout=120)
    assert proc.returncode == 1, proc.stderr  # a request cap reached: partly
    conn = sqlite3.connect(db)
    status, stats = conn.execute("SELECT status, stats FROM runs WHERE source = 'big'").fetchone()
    conn.close()
    return {"status": status, "stats": json.loads(stats)}, [h.uri for h in server.hits()[before:]]


@pytest.mark.parametrize(("settings", "pages", "queued"), [
    pytest.param("max_requests = 10", 7, 8, id="cap-10"),
    pytest.param("max_requests = 30\nmax_queued = 4", 27, 4, id="cap-30-queue-4"),
])
def test_huge_sitemap_index_costs_the_cap_not_the_index(big_site, tmp_path, settings, pages, queued):
    run, paths = crawl_index(big_site, tmp_path, settings)
    # robots.txt, the index, its first sitemap, then pages of that sitemap up to the cap
    assert paths[:3] == ["/robots.txt", "/index.xml", "/sitemap-0.xml"]
    assert len(paths) - 3 == pages
    assert all(re.fullmatch(r"/jobs/page\.html\?id=0-\d+", p) for p in paths[3:])
    stats = run["stats"]
    assert (run["status"], stats["finish_reason"], stats["jobcrawl/request_cap/dropped"]) == ("partial", "request_cap", 1)
    # Entries read: the index's first one, and from sitemap-0 the pages requested plus at most a queue's worth
    # (a request between the scheduler and the cap counts in neither: the queue may take one more then) — of 80,000.
    assert stats["jobcrawl/sitemap/urls_read"] <= 1 + pages + queued
    assert stats["jobcrawl/sitemap/queue_peak"] <= queued


# --------------------------------------------------------------------------- the HTTP cache is pruned


def cached_urls(cache: Path) -> dict[str, Path]:
    """The URL of each entry of a source's HTTP cache folder (gzipped: HTTPCACHE_GZIP), and its folder."""
    return {pickle.loads(gzip.decompress(meta.read_bytes()))["url"]: meta.parent for meta in cache.glob("*/*/*/pickled_meta")}


def test_cache_entries_not_requested_for_long_are_pruned(big_site, tmp_path):
    """After a crawl, entries last requested longer ago than the limit are gone, younger ones stay, and so do
    those the crawl requested again, whatever their age; `sources --health` shows the cache's size."""
    a, b, c = (big_site.url(f"jobs/page.html?id={n}") for n in "abc")
    sources = tmp_path / "sources.toml"
    db = tmp_path / "jobs.db"

    def crawl(*urls: str, options: tuple[str, ...] = ()) -> None:
        sources.write_text(f'[sources.site]\nspider = "jsonld"\nstart_urls = {json.dumps(list(urls))}\n'
                           'follow = false\nallow_private = true\n')
        proc = run_cli("crawl", "site", "--sources", str(sources), "--db", str(db), *QUICK_THROTTLE, *options)
        assert proc.returncode == 0, proc.stderr

    crawl(a, b, c)
    cache = Path(f"{db}.httpcache") / "site"
    robots = big_site.url("robots.txt")
    assert sorted(cached_urls(cache)) == sorted([robots, a, b, c])
    for url, entry in cached_urls(cache).items():
        days = 20 if url == c else 40
        os.utime(entry, (time.time() - days * 86400,) * 2)
    crawl(a, options=("-s", "JOBCRAWL_HTTPCACHE_MAX_AGE_DAYS=35"))  # b and c are no longer listed
    assert sorted(cached_urls(cache)) == sorted([robots, a, c])

    size = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file())
    proc = run_cli("sources", "--health", "--db", str(db))  # state "empty" (the page holds no posting): exit 1
    assert proc.stdout.rstrip().endswith(f" · HTTP cache {size} bytes in 3 entries")
    proc = run_cli("sources", "--health", "--json", "--db", str(db))
    row = json.loads(proc.stdout)
    assert (row["cache_bytes"], row["cache_entries"]) == (size, 3)


def test_the_bound_holds_in_a_distributed_run(big_site, redis_server, tmp_path):
    """Two workers share the queue in Redis: the cap and the queue's bound hold as in one process."""
    redis_server.client().flushall()
    workers = [start_worker(redis_server.url, "--once") for _ in range(2)]
    try:
        run, paths = crawl_index(big_site, tmp_path, "max_requests = 10\nmax_queued = 4", "--redis", redis_server.url)
    finally:
        stop(workers)
    # Which of the index's sitemaps a worker takes first is the Redis queue's choice. A sitemap fetched by the
    # other worker releases the index only when this one runs idle, so a second sitemap may be read meanwhile
    # (a slow run can go on so through the index); every page comes from a sitemap fetched before it.
    assert paths[:2] == ["/robots.txt", "/index.xml"]
    assert re.fullmatch(r"/sitemap-\d\.xml", paths[2]), paths
    sitemaps, pages = [], 0
    for path in paths[2:]:
        if m := re.fullmatch(r"/sitemap-(\d)\.xml", path):
            sitemaps.append(m.group(1))
        else:
            assert re.fullmatch(r"/jobs/page\.html\?id=(\d)-\d+", path).group(1) in sitemaps, paths
            pages += 1
    assert len(paths) == 10, paths  # the cap
    assert (run["status"], run["stats"]["finish_reason"]) == ("partial", "request_cap")
    # entries read: the index's that were scheduled, the pages requested and at most a queue's worth
    assert run["stats"]["jobcrawl/sitemap/urls_read"] <= len(sitemaps) + pages + 4
