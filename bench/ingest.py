"""Benchmark: end-to-end ingest throughput and peak memory.

Generates N postings in the app layout (bench/gen.py mixed_postings: real JD bullets from
fixtures/dedupe/bases.jsonl, varied company, title, salary, city; 10 % reposts), writes them as
dump files of 100 postings each, runs ``jobcrawl ingest`` on them in a fresh process, and prints
postings/s (wall clock, whole command), the CPU time of all its processes (per posting: 2 cores
give at most 2,000 / that many ms postings per second), and its peak RSS: of its largest process
(the engine, the stage worker, the dedupe process or a scoring worker) and of all its processes
together (bench/sizes.run_measured). Then runs the same command again and prints its time: nothing
changed, so no file is parsed again.

    python bench/ingest.py               # N = 10,000 and 100,000
    python bench/ingest.py --n 2000      # a quick run

Targets (issue 2): ≥ 1,500 postings/s on the 2-core machine; peak RSS < 300 MB at 100k and within
20 % of the 10k figure.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.sizes import per_size, run_measured  # noqa: E402


def one(n: int, workdir: Path) -> dict:
    """Run in a fresh process: generate (in a child of its own, so this process stays small), ingest, measure."""
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
                    " from bench.gen import write_mixed_dumps;"
                    " write_mixed_dumps(Path(sys.argv[2]), int(sys.argv[3]), per_file=100)",
                    str(ROOT), str(workdir / "in"), str(n)], check=True)
    db = workdir / "jobs.db"
    command = [sys.executable, "-m", "crawler.cli", "ingest", str(workdir / "in"), "--db", str(db),
               "--as-of", "2026-11-29T12:00:00+08:00"]
    run = run_measured(command, cwd=ROOT)
    if run["returncode"] != 0:
        raise SystemExit(run["stderr"])
    again = run_measured(command, cwd=ROOT)  # nothing changed: every file is skipped (crawler/ledger.py)
    if again["returncode"] != 0:
        raise SystemExit(again["stderr"])
    return {"n": n, "seconds": round(run["seconds"], 2), "postings_per_s": round(n / run["seconds"]),
            "cpu_seconds": round(run["cpu_seconds"], 1),
            "peak_rss_mb": run["peak_rss_mb"], "peak_total_mb": run["peak_total_mb"],
            "db_mb": round(db.stat().st_size / 2**20), "summary": run["stdout"].splitlines()[0],
            "rerun_seconds": round(again["seconds"], 2), "rerun_summary": again["stdout"].splitlines()[0]}


def main() -> None:
    results = per_size(__file__, __doc__, one, lambda result: (
        f"N={result['n']:>7,}  {result['seconds']:>7.1f} s  {result['postings_per_s']:>6,} postings/s  "
        f"({result['cpu_seconds']:.1f} CPU-s of all its processes: {1000 * result['cpu_seconds'] / result['n']:.2f} ms per posting)  "
        f"peak RSS {result['peak_rss_mb']:>4} MB (largest process; all processes at once {result['peak_total_mb']} MB)  db {result['db_mb']} MB  [{result['summary']}]\n"
        f"         re-run, nothing changed: {result['rerun_seconds']:.1f} s  [{result['rerun_summary']}]"))
    if len(results) > 1:
        print(f"peak RSS ratio {results[-1]['n']:,} / {results[0]['n']:,}: "
              f"{results[-1]['peak_rss_mb'] / results[0]['peak_rss_mb']:.2f}")


if __name__ == "__main__":
    main()
