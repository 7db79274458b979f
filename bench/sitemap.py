"""Benchmark: memory and time of a capped crawl of a huge sitemap index (issue #38).

Writes a sitemap index of S sitemaps of N URLs each (default 4 × 50,000: 200k URLs, every one the same
small page, told apart by its query string), serves it with tests/mockserver.py on 127.0.0.1 and runs
``jobcrawl crawl`` on it with ``--max-requests 20``, then a crawl of one plain page as the baseline.
Each crawl runs in a fresh process that starts the CLI and reports the peak RSS of its descendants
(``resource.getrusage(RUSAGE_CHILDREN)``: the CLI's process and its crawl worker) and the wall time.

Prints both crawls (requests the server answered, sitemap entries read, peak RSS, wall time) and the
ratios index ÷ one page. ``--project DIR`` runs the CLI of another checkout (e.g. an export of an
older commit) for a before/after comparison.

    python bench/sitemap.py                     # 4 × 50,000 URLs, max_requests 20
    python bench/sitemap.py --urls 20000        # smaller sitemaps
    python bench/sitemap.py --project /tmp/base # the same with another checkout's code

Target (#38): the 200k-URL index with max_requests = 20 under 400 MB RSS and two minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from mockserver import MockServer  # noqa: E402

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
PAGE = "<!DOCTYPE html><html><body><h1>Careers</h1></body></html>"


def write_site(root: Path, sitemaps: int, urls: int) -> None:
    (root / "jobs").mkdir(parents=True)
    (root / "jobs" / "page.html").write_text(PAGE)
    listed = "".join(f"<sitemap><loc>{{{{BASE}}}}/sitemap-{k}.xml</loc></sitemap>" for k in range(sitemaps))
    (root / "index.xml").write_text(f'<?xml version="1.0"?><sitemapindex {NS}>{listed}</sitemapindex>')
    for k in range(sitemaps):
        with open(root / f"sitemap-{k}.xml", "w") as out:
            out.write(f'<?xml version="1.0"?><urlset {NS}>')
            out.writelines(f"<url><loc>{{{{BASE}}}}/jobs/page.html?id={k}-{n}</loc></url>" for n in range(urls))
            out.write("</urlset>")
    (root / "robots.txt").write_text("User-agent: *\n")


def sources_text(base: str, kind: str) -> str:
    where = (f'sitemap_urls = ["{base}/index.xml"]\nallow = ["/jobs/"]' if kind == "index"
             else f'start_urls = ["{base}/jobs/page.html"]\nfollow = false')
    return f'[sources.{kind}]\nspider = "jsonld"\n{where}\nallow_private = true\n'


def one(kind: str, base: str, workdir: Path, project: Path, max_requests: int) -> dict:
    """``--one``: run the CLI once, in this fresh process; the figures of its descendants."""
    sources = workdir / f"{kind}.toml"
    sources.write_text(sources_text(base, kind))
    db = workdir / f"{kind}.db"
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "crawler.cli", "crawl", kind, "--sources", str(sources), "--db", str(db),
                           "--max-requests", str(max_requests), "--no-cache", "--quiet"],
                          cwd=project, capture_output=True, text=True)
    wall = time.perf_counter() - start
    conn = sqlite3.connect(db)
    try:
        stats = json.loads(conn.execute("SELECT stats FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])
    finally:
        conn.close()
    return {"kind": kind, "exit": proc.returncode, "wall_s": round(wall, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
            "urls_read": stats.get("jobcrawl/sitemap/urls_read"), "finish_reason": stats.get("finish_reason"),
            "requests": stats.get("downloader/request_count")}


def run_one(kind: str, server: MockServer, workdir: Path, project: Path, max_requests: int) -> dict:
    before = len(server.hits())
    proc = subprocess.run([sys.executable, __file__, "--one", kind, "--base", server.base, "--workdir", str(workdir),
                           "--project", str(project), "--max-requests", str(max_requests)],
                          cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    result = json.loads(proc.stdout.splitlines()[-1])
    result["answered"] = len(server.hits()) - before
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sitemaps", type=int, default=4, help="sitemaps in the index (default 4)")
    parser.add_argument("--urls", type=int, default=50_000, help="URLs per sitemap (default 50,000)")
    parser.add_argument("--max-requests", type=int, default=20, help="the crawl's request cap (default 20)")
    parser.add_argument("--project", type=Path, default=ROOT, help="checkout whose CLI runs (default this one)")
    parser.add_argument("--one", choices=["index", "page"], help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.base, args.workdir, args.project, args.max_requests)))
        return

    workdir = Path(tempfile.mkdtemp(prefix="jobcrawl-bench-sitemap-"))
    try:
        write_site(workdir / "www", args.sitemaps, args.urls)
        size = sum(f.stat().st_size for f in (workdir / "www").glob("*.xml"))
        with MockServer(workdir / "www", workdir / "requests.log") as server:
            load = os.getloadavg()
            page = run_one("page", server, workdir, args.project, args.max_requests)
            index = run_one("index", server, workdir, args.project, args.max_requests)
        print(f"sitemap index: {args.sitemaps} × {args.urls:,} URLs ({size / 2**20:.1f} MB of XML), "
              f"--max-requests {args.max_requests}, code of {args.project}")
        for r in (index, page):
            print(f"{r['kind']:>6}: {r['answered']} requests answered · sitemap entries read {r['urls_read']} · "
                  f"peak RSS {r['peak_rss_mb']} MB · wall {r['wall_s']} s · {r['finish_reason']} (exit {r['exit']})")
        print(f"index / one page: peak RSS {index['peak_rss_mb'] / page['peak_rss_mb']:.2f} ×, "
              f"wall {index['wall_s'] / page['wall_s']:.2f} × (target: under 400 MB and 120 s)")
        print("load average (1, 5, 15 min) before {:.2f} {:.2f} {:.2f} on {} cores".format(*load, os.cpu_count()))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
