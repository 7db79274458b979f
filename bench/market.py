"""Benchmark: the market over time on a generated database (bench/browse.py's generator: N postings first seen
over 180 days, 5 % closed 25 days later, 8–30 skills each; default 100,000).

Wall times (the machine is shared; the load average is printed): ``velocity_weekly`` computed and stored
(crawler.market.velocity.refresh, as after every run's corpus steps) and, each in a fresh process as a user runs
it, ``jobcrawl stats velocity`` of one skill once stale (it stores the table again) and once current, of every
company, of the top 10 companies since a date, and ``stats pay`` of one skill and of one skill in one city.

    python bench/market.py                     # 100,000 postings
    python bench/market.py --n 20000
    python bench/market.py --db /tmp/m.db      # reuse a database generated before (same N)
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench.browse import generate  # noqa: E402
from crawler.market.velocity import refresh  # noqa: E402
from crawler.store.schema import open_db  # noqa: E402

COMMANDS = [
    ("stats velocity --by skill --key CUDA (stale: stores the table)", ["velocity", "--by", "skill", "--key", "CUDA"]),
    ("stats velocity --by skill --key CUDA", ["velocity", "--by", "skill", "--key", "CUDA"]),
    ("stats velocity --by company (every company)", ["velocity", "--by", "company"]),
    ("stats velocity --by company --top 10 --since 2026-10-01", ["velocity", "--by", "company", "--top", "10",
                                                                 "--since", "2026-10-01"]),
    ("stats pay --skill CUDA", ["pay", "--skill", "CUDA"]),
    ("stats pay --skill CUDA --city 上海", ["pay", "--skill", "CUDA", "--city", "上海"]),
]


def _cli(db: Path, args: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "crawler.cli", "stats", *args, "--db", str(db)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return time.perf_counter() - start, out.count("\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--db", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "market.db"
        if not db.exists():
            start = time.perf_counter()
            generate(db, args.n)
            print(f"generated {args.n:,} postings in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        database = open_db(db)
        start = time.perf_counter()
        rows = refresh(database.conn, force=True)
        print(f"velocity_weekly computed and stored: {rows:,} rows in {time.perf_counter() - start:.1f} s")
        database.close()
        with sqlite3.connect(db) as conn:  # stale again: what a command finds after a run changed postings
            conn.execute("DELETE FROM meta WHERE key = 'velocity_basis'")
        conn.close()
        for label, command in COMMANDS:
            seconds, lines = _cli(db, command)
            print(f"jobcrawl {label}: {seconds:.2f} s, {lines:,} lines")
        print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
