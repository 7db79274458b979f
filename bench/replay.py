"""`jobcrawl replay` of a generated git-scraping history: N snapshots (default 100) of a board of M postings
(default 2,000), each snapshot closing and opening a share of them (default 3 % each).

    .venv/bin/python bench/replay.py [--snapshots N] [--postings M] [--churn 0.03] [--workers N]

Builds the history as a git repository in a temporary folder (one JSONL file, one commit a day), then in the
same run: the reference — a plain loop that reads each version (`git show H:FILE`) and hashes it — and the
replay into a fresh database (crawler.replay.run.replay, as `jobcrawl replay` runs it). Prints the seconds per
snapshot (the first, a full ingest, apart), the database's growth per snapshot (its pages, WAL included) and
the replay's time per snapshot as a multiple of the reference's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FILE = "boards/acme.jsonl"
WORDS = ("CUDA kernel inference training cluster GPU compiler Triton PyTorch distributed scheduling latency "
         "throughput memory bandwidth operator fusion quantization serving Kubernetes RDMA NCCL profiling "
         "模型 推理 训练 集群 算子 优化 性能 调度 显存 通信").split()
TITLES = ("CUDA Engineer", "Inference Engineer", "ML Compiler Engineer", "GPU Kernel Engineer",
          "Training Infra Engineer", "AI Platform Engineer")
CITIES = ("上海", "北京", "深圳", "杭州", "Singapore", "San Francisco")


def posting(rng: random.Random, n: int) -> dict:
    """One posting of the board, with a JD of about 1,500 characters."""
    return {"id": f"job-{n}", "title": rng.choice(TITLES), "company": "Acme AI", "location": rng.choice(CITIES),
            "url": f"https://boards.example.org/acme/jobs/{n}",
            "description": " ".join(rng.choice(WORDS) for _ in range(220))}


def history(repo: Path, snapshots: int, postings: int, churn: float, seed: int = 7) -> list[int]:
    """Commit ``snapshots`` versions of the board into ``repo``, one a day; returns each version's size."""
    rng = random.Random(seed)
    board = {n: posting(rng, n) for n in range(postings)}
    next_id, sizes = postings, []
    env = {**os.environ, "GIT_AUTHOR_NAME": "scraper", "GIT_AUTHOR_EMAIL": "s@example.org",
           "GIT_COMMITTER_NAME": "scraper", "GIT_COMMITTER_EMAIL": "s@example.org"}
    git = lambda *a, **kw: subprocess.run(["git", "-C", str(repo), *a], check=True, capture_output=True, **kw)  # noqa: E731
    git("init", "-q")
    path = repo / FILE
    path.parent.mkdir(parents=True)
    start = datetime(2026, 1, 1, 6, tzinfo=timezone.utc)
    for i in range(snapshots):
        if i:
            for n in rng.sample(sorted(board), int(len(board) * churn)):
                del board[n]
            for _ in range(int(postings * churn)):
                board[next_id] = posting(rng, next_id)
                next_id += 1
        text = "".join(json.dumps(board[n], ensure_ascii=False) + "\n" for n in sorted(board))
        path.write_text(text, encoding="utf-8")
        sizes.append(path.stat().st_size)
        at = (start + timedelta(days=i)).isoformat()
        git("add", FILE)
        git("commit", "-q", "-m", f"snapshot {i}", env={**env, "GIT_COMMITTER_DATE": at, "GIT_AUTHOR_DATE": at})
    return sizes


def reference(repo: Path) -> list[float]:
    """Seconds per version of a plain loop: `git show` each version and SHA-256 it."""
    commits = subprocess.run(["git", "-C", str(repo), "log", "--reverse", "--format=%H", "--", FILE],
                             check=True, capture_output=True, text=True).stdout.split()
    out = []
    for commit in commits:
        clock = time.perf_counter()
        body = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{FILE}"], check=True,
                              capture_output=True).stdout
        hashlib.sha256(body).hexdigest()
        out.append(time.perf_counter() - clock)
    return out


class Timings:
    """A progress display that notes, as each version ends, the time and the database's size (pages)."""

    def __init__(self, db: Path):
        self.db, self.marks = db, []

    def _size(self) -> int:
        if not self.db.exists():
            return 0
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as conn:
            return conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]

    def start(self, phase, *, total_bytes=None, processes=0):
        self.marks = [(time.perf_counter(), self._size())]

    def advance(self, *, inputs=0, postings=0, nbytes=0):
        self.marks.append((time.perf_counter(), self._size()))

    def finish(self, phase, counts):
        pass

    def close(self):
        pass


def main() -> None:
    from crawler.cli import run_settings
    from crawler.replay.run import replay

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=100)
    parser.add_argument("--postings", type=int, default=2000)
    parser.add_argument("--churn", type=float, default=0.03, help="share closed and share opened per snapshot")
    parser.add_argument("--workers", type=int, default=None, help="as jobcrawl replay --workers (default: the cores)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jobcrawl-bench-replay-") as tmp:
        repo, db = Path(tmp) / "history", Path(tmp) / "jobs.db"
        repo.mkdir()
        clock = time.perf_counter()
        sizes = history(repo, args.snapshots, args.postings, args.churn)
        print(f"history: {args.snapshots} snapshots of {args.postings:,} postings ({args.churn:.0%} closed and "
              f"{args.churn:.0%} opened each), {statistics.mean(sizes) / 2**20:.2f} MB a version, made in "
              f"{time.perf_counter() - clock:.1f} s", flush=True)
        plain = reference(repo)
        timings = Timings(db)
        clock = time.perf_counter()
        done = replay(repo, FILE, str(db), source="acme", progress=timings, settings=run_settings(0),
                      workers=args.workers)
        total = time.perf_counter() - clock
        steps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(timings.marks, timings.marks[1:])]
        later = steps[1:] or steps
        per, growth = [s for s, _ in later], [g for _, g in later]
        with sqlite3.connect(db) as conn:
            open_now, closed_now = conn.execute(
                "SELECT count(*) FILTER (WHERE closed_at IS NULL), count(*) FILTER (WHERE closed_at IS NOT NULL)"
                " FROM postings").fetchone()
            raw = conn.execute("SELECT avg(length(coalesce(text, text_zstd, body))) FROM raw_inputs").fetchone()[0]
            unparsed = conn.execute("SELECT coalesce(sum(json_extract(stats, '$.\"jobcrawl/postings_seen_unparsed\"')), 0)"
                                    " FROM runs").fetchone()[0]
        print(f"replay: {done.ingested + done.unchanged} versions in {total:.1f} s · postings new "
              f"{done.counts['new']:,} · unchanged {done.counts['unchanged']:,} · closed {done.counts['closed']:,} · "
              f"reopened {done.counts['reopened']:,} · now {open_now:,} open, {closed_now:,} closed")
        print(f"rows read again as stored, not parsed: {unparsed:,} of the {done.counts['unchanged']:,} unchanged "
              f"({unparsed / max(1, len(later)):,.0f} a later snapshot)")
        print(f"first snapshot (a full ingest of {args.postings:,} postings): {steps[0][0]:.2f} s, database "
              f"{steps[0][1] / 2**20:.2f} MB")
        print(f"each later snapshot: median {statistics.median(per):.2f} s (min {min(per):.2f}, max {max(per):.2f}) · "
              f"database growth median {statistics.median(growth) / 2**10:.0f} KB (mean "
              f"{statistics.mean(growth) / 2**10:.0f} KB; the version's text kept compressed: {raw / 2**10:.0f} KB)")
        print(f"reference (git show + sha256 a version): median {statistics.median(plain) * 1000:.1f} ms · replay "
              f"÷ reference: {statistics.median(per) / statistics.median(plain):.0f} ×")
        print(f"database: {db.stat().st_size / 2**20:.1f} MB for {sum(sizes) / 2**20:.1f} MB of versions")


if __name__ == "__main__":
    main()
