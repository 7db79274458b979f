"""Benchmark: end-to-end ingest throughput and peak memory.

Generates N postings in the app layout (bench/gen.py mixed_postings: real JD bullets from
fixtures/dedupe/bases.jsonl, varied company, title, salary, city; 10 % reposts), writes them as
dump files of 100 postings each, runs ``jobcrawl ingest`` on them in a fresh process, and prints
postings/s (wall clock, whole command) and the ingest process's peak RSS.

    python bench/ingest.py               # N = 10,000 and 100,000
    python bench/ingest.py --n 2000      # a quick run

Targets (issue 2): ≥ 1,500 postings/s on the 2-core machine; peak RSS < 300 MB at 100k and within
20 % of the 10k figure.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gen import write_mixed_dumps  # noqa: E402
from bench.sizes import per_size  # noqa: E402


def one(n: int, workdir: Path) -> dict:
    """Run in a fresh process: generate, ingest, measure (RUSAGE_CHILDREN = the ingest only)."""
    write_mixed_dumps(workdir / "in", n, per_file=100)
    db = workdir / "jobs.db"
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "crawler.cli", "ingest", str(workdir / "in"), "--db", str(db),
         "--as-of", "2026-11-29T12:00:00+08:00"],
        cwd=ROOT, capture_output=True, text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"n": n, "seconds": round(elapsed, 2), "postings_per_s": round(n / elapsed), "peak_rss_mb": round(rss_mb),
            "db_mb": round(db.stat().st_size / 2**20), "summary": proc.stdout.splitlines()[0]}


def main() -> None:
    results = per_size(__file__, __doc__, one, lambda result: (
        f"N={result['n']:>7,}  {result['seconds']:>7.1f} s  {result['postings_per_s']:>6,} postings/s  "
        f"peak RSS {result['peak_rss_mb']:>4} MB  db {result['db_mb']} MB  [{result['summary']}]"))
    if len(results) > 1:
        print(f"peak RSS ratio {results[-1]['n']:,} / {results[0]['n']:,}: "
              f"{results[-1]['peak_rss_mb'] / results[0]['peak_rss_mb']:.2f}")


if __name__ == "__main__":
    main()
