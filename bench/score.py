"""Benchmark: the scoring step (market statistics + jobcrawl-v1 over every active posting).

Builds a corpus of N postings: ``BASE`` seed variants (bench/gen.py) ingested through the real
``jobcrawl ingest``, then cloned in SQL with varied company, city and salary up to N (the scoring
step reads rows, so clones cost it the same as ingested postings). Then runs ``score_corpus`` in a
fresh process and prints postings/s, the market statistics' share, the CPU seconds of this process
and of the scoring workers (2 from 20k postings), peak RSS and the load average (the machine is
shared: compare CPU seconds across runs, wall time only at a low load).

    python bench/score.py                 # N = 10,000 and 100,000
    python bench/score.py --n 2000        # a quick run
    python bench/score.py --levels        # level distribution per file of ../shared/data/zh, nothing else

Target (issue 6 brief): 100k postings scored in well under a minute.

``--levels`` ingests each file of ../shared/data/zh into a database of its own (bench/shared.py, read in place)
and prints the share of each level of the overall and of each dimension (信息不足 where the evidence is too
little); #27: on list-only data no single level but 信息不足 above 80 %.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.gen import CITIES, write_dumps  # noqa: E402
from bench.sizes import per_size  # noqa: E402

BASE = 1000


def build(n: int, workdir: Path) -> Path:
    """A database of ``n`` postings: BASE ingested variants of the seeds, the rest SQL clones."""
    base = min(n, BASE)
    write_dumps(workdir / "in", base, per_file=100)
    db = workdir / "jobs.db"
    subprocess.run([sys.executable, "-m", "crawler.cli", "ingest", str(workdir / "in"), "--db", str(db),
                    "--as-of", "2026-11-29T12:00:00+08:00"], cwd=ROOT, capture_output=True, check=True)
    import sqlite3

    conn = sqlite3.connect(db)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(postings)") if r[1] not in ("id", "key")]
    varied = {
        "company": "company || ' ' || :k",
        "city": "CASE (id + :k) % 10 " + " ".join(f"WHEN {i} THEN '{c}'" for i, c in enumerate(CITIES)) + " END",
        "salary_monthly_min": "salary_monthly_min * (0.7 + 0.05 * ((id * 7 + :k) % 13))",
        "salary_monthly_max": "salary_monthly_max * (0.7 + 0.05 * ((id * 7 + :k) % 13))",
    }
    select = ", ".join(varied.get(c, f"[{c}]") for c in cols)
    with conn:
        for k in range(1, -(-n // base)):
            off = k * base
            limit = min(base, n - off)
            conn.execute(f"INSERT INTO postings (id, key, {', '.join(f'[{c}]' for c in cols)}) "
                         f"SELECT id + :off, key || '-' || :k, {select} FROM postings WHERE id <= :limit",
                         {"off": off, "k": k, "limit": limit})
            conn.execute("INSERT INTO sections (posting_id, seq, key_stored, heading_stored, text, spans) "
                         "SELECT posting_id + :off, seq, key_stored, heading_stored, text, spans FROM sections "
                         "WHERE posting_id <= :limit", {"off": off, "limit": limit})
    conn.close()
    return db


def one(n: int, workdir: Path) -> dict:
    """Build, then score in this process (peak RSS = RUSAGE_SELF after the corpus is built)."""
    db_path = build(n, workdir)
    from crawler.store.schema import open_db
    from crawler.score.step import score_corpus
    from crawler.score.market import compute_market

    db = open_db(db_path)
    start = time.perf_counter()
    compute_market(db)
    stats_s = time.perf_counter() - start
    cpu = _cpu()
    start = time.perf_counter()
    counts = score_corpus(db, now="2026-11-29T12:00:00+00:00", force=True)  # every posting, not only changed ones
    elapsed = time.perf_counter() - start
    main_cpu, workers_cpu = (after - before for after, before in zip(_cpu(), cpu))
    db.close()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"n": n, "scored": counts["scored"], "seconds": round(elapsed, 2), "stats_seconds": round(stats_s, 2),
            "postings_per_s": round(counts["scored"] / elapsed), "peak_rss_mb": round(rss_mb),
            "db_mb": round(db_path.stat().st_size / 2**20), "salary_groups": counts["salary_groups"],
            "main_cpu": round(main_cpu, 1), "workers_cpu": round(workers_cpu, 1), "load": round(os.getloadavg()[0], 1)}


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children (the scoring workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


LEVELS = ("较高", "中等", "较低", "信息不足")


def levels(workdir: Path) -> None:
    """The level distribution of our evaluations per file of ../shared/data/zh."""
    import sqlite3

    sys.path.insert(0, str(ROOT / "bench"))
    from shared import ingested

    print(f"{'file':34s} {'postings':>8s}  {'what':9s} " + " ".join(f"{lv:>8s}" for lv in LEVELS) + "  JD text")
    for name, db in ingested(workdir).items():
        conn = sqlite3.connect(db)
        total, with_jd = conn.execute("SELECT count(*), sum(has_jd) FROM postings p LEFT JOIN dedupe_signatures s"
                                      " ON s.posting_id = p.id").fetchone()
        for what in ("overall", "pay", "growth", "worklife", "mission"):
            counts = dict(conn.execute(f"SELECT {what}_level, count(*) FROM evaluations WHERE scorer = 'jobcrawl-v1'"
                                       " GROUP BY 1"))
            shares = [100 * counts.get(lv, 0) / total if total else 0 for lv in LEVELS]
            print(f"{name if what == 'overall' else '':34s} {total if what == 'overall' else '':>8}  {what:9s} "
                  + " ".join(f"{x:7.1f}%" for x in shares) + (f"  {with_jd or 0}" if what == "overall" else ""))
        conn.close()


def main() -> None:
    if "--levels" in sys.argv:
        workdir = Path(sys.argv[sys.argv.index("--workdir") + 1]) if "--workdir" in sys.argv else \
            Path("/tmp/jobcrawl-bench-shared")
        levels(workdir)
        return
    results = per_size(__file__, __doc__, one, lambda r: (
        f"N={r['n']:>7,}  score_corpus {r['seconds']:>6.1f} s  {r['postings_per_s']:>6,} postings/s  "
        f"(market statistics alone {r['stats_seconds']} s)  CPU: main {r['main_cpu']} s, workers "
        f"{r['workers_cpu']} s  peak RSS {r['peak_rss_mb']} MB  db {r['db_mb']} MB  "
        f"salary groups ≥ 20: {r['salary_groups']}  load average {r['load']}"))
    if len(results) > 1:
        a, b = results[0], results[-1]
        print(f"time ratio {b['n']:,} / {a['n']:,}: {b['seconds'] / a['seconds']:.2f} (linear: {b['n'] / a['n']:.0f}); "
              f"peak RSS ratio {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}")


if __name__ == "__main__":
    main()
