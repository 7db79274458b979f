"""Benchmark: importing a large CSV end to end through ``jobcrawl ingest`` — rows/s and peak memory.

Builds an N-row CSV in the BOSS直聘 with-JD layout (preset ``boss-jd``) by repeating the real rows of
``../shared/data/zh/boss_horti_295_with_jd.csv`` and ``lagou_horti_63_with_jd.csv`` (the 拉勾 rows
moved into the same columns) with variations — company, title, salary and city change with the row
number, so every row is a distinct posting. Without the shared folder the rows are built from the two
seed postings in ``seeds/`` instead (said in the output). Then runs ``jobcrawl ingest`` on the file in a
fresh process and prints rows/s (wall clock of the whole command: start-up, parsing, pipelines,
SQLite, the dedupe step), rows per CPU-second of the ingest process (user + system; less sensitive
to other work on a shared machine, as is the load average printed beside it) and its peak RSS: of
its largest process and of all its processes together (bench/sizes.run_measured). Then runs the
same command again and prints its time: nothing changed, so no row is normalized or stored again
(crawler/ingest/ledger.py); the file is still read, and every posting scored again.

    python bench/import.py                  # N = 100,000
    python bench/import.py --n 5000         # a quick run
    python bench/import.py --n 20000 --profile   # cProfile the ingest; top functions by own time

Targets (issue 3): ≥ 2,000 rows/s; peak RSS < 300 MB.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pstats
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_ZH = ROOT.parent / "shared" / "data" / "zh"
sys.path.insert(0, str(ROOT))

from bench.sizes import run_measured  # noqa: E402

HEADER = ["公司", "公司行业", "经验学历", "职位", "工资", "位置", "公司描述", "职位描述（大概）", "福利（大概）",
          "福利待遇（详细）", "职位描述", "公司介绍"]
CITIES = ["北京", "上海", "深圳", "杭州", "广州", "成都", "苏州", "南京", "武汉", "西安", "合肥", "天津"]
TITLE_VARIANTS = ["", "（高级）", "（资深）", "-急招", "（校招）", "（社招）", "-储备", "（实习）"]
_K_RANGE = re.compile(r"(\d+)-(\d+)[kK]")


def real_rows() -> tuple[list[list[str]], str]:
    """Template rows in the boss-jd layout and where they came from."""
    if not SHARED_ZH.exists():
        return seed_rows(), "seeds/ (the shared data folder is absent)"
    rows: list[list[str]] = []
    with (SHARED_ZH / "boss_horti_295_with_jd.csv").open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        rows += [[r.get(c, "") for c in HEADER] for r in reader]
    with (SHARED_ZH / "lagou_horti_63_with_jd.csv").open(encoding="utf-8-sig", newline="") as fh:
        for r in csv.DictReader(fh):
            rows.append([r["公司"], "", r["经验要求"] + r["学历要求"], r["职位"], r["工资"], r["位置"], r["规模"], "",
                         r["职位诱惑"].strip(), "", r["职位描述"], ""])
    return rows, f"{SHARED_ZH} (boss_horti 295 + lagou_horti 63 rows)"


def seed_rows() -> list[list[str]]:
    from crawler.ingest.appdump import parse_dump
    from normalize.models import RawPosting

    rows = []
    for path in sorted((ROOT / "seeds").glob("*.txt")):
        for item in parse_dump(path.read_bytes(), locator=path.name, fetched_at="2026-11-29T00:00:00+00:00",
                               as_of="2026-11-29T00:00:00+00:00"):
            if isinstance(item, RawPosting):
                jd = "\n".join(f"{s.heading}：\n" + "\n".join(s.lines) for s in item.sections)
                rows.append([item.company or "", item.category or "", "3-5年本科", item.title or "", "20-40K",
                             (item.market[1].split(" · ")[0] if len(item.market) > 1 else "杭州"), "", "\n".join(item.tags),
                             "五险一金，年终奖", "", jd, ""])
    return rows


def vary(row: list[str], i: int) -> list[str]:
    """Row ``i``: another company branch, title variant, salary band and city."""
    out = list(row)
    out[0] = f"{row[0]}·{CITIES[i % len(CITIES)]}{i // 997}部"
    out[3] = row[3] + TITLE_VARIANTS[i % len(TITLE_VARIANTS)]
    shift = i % 7
    out[4] = _K_RANGE.sub(lambda m: f"{int(m[1]) + shift}-{int(m[2]) + shift}K", row[4]) if row[4] else row[4]
    out[5] = CITIES[(i // 3) % len(CITIES)]
    return out


def write_csv(path: Path, n: int) -> str:
    rows, origin = real_rows()
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        for i in range(n):
            writer.writerow(vary(rows[i % len(rows)], i))
    return origin


def one(n: int, workdir: Path, profile: bool) -> dict:
    """Run in a fresh process: generate (streamed, so this process stays small), ingest in a child, measure."""
    data = workdir / "import.csv"
    origin = write_csv(data, n)
    db = workdir / "jobs.db"
    command = [sys.executable] + (["-m", "cProfile", "-o", str(workdir / "ingest.prof")] if profile else [])
    command += ["-m", "crawler.cli", "ingest", str(data), "--db", str(db), "--as-of", "2026-11-29T12:00:00+08:00"]
    load = os.getloadavg()[0]
    run = run_measured(command, cwd=ROOT)
    elapsed, cpu = run["seconds"], run["cpu_seconds"]
    if run["returncode"] not in (0, 1):
        raise SystemExit(run["stderr"][-3000:])
    with sqlite3.connect(db) as conn:  # the engine's own clock: crawl (parse, pipelines, writes) vs the rest
        started, finished, stats = conn.execute("SELECT started, finished, stats FROM runs ORDER BY id DESC").fetchone()
    crawl_s = json.loads(stats).get("elapsed_time_seconds", 0.0)
    run_s = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    result = {"n": n, "origin": origin, "seconds": round(elapsed, 2), "rows_per_s": round(n / elapsed),
              "cpu_seconds": round(cpu, 1), "rows_per_cpu_s": round(n / cpu),
              "crawl_seconds": round(crawl_s, 1), "after_crawl_seconds": round(run_s - crawl_s, 1),
              "load": [round(load, 1), round(os.getloadavg()[0], 1)],
              "peak_rss_mb": run["peak_rss_mb"], "peak_total_mb": run["peak_total_mb"], "csv_mb": round(data.stat().st_size / 2**20, 1),
              "db_mb": round(db.stat().st_size / 2**20), "exit": run["returncode"], "output": run["stdout"].splitlines()}
    if profile:
        stats = pstats.Stats(str(workdir / "ingest.prof"))
        rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:25]
        result["profile"] = [f"{tt:7.2f}s own {ct:7.2f}s cum  {Path(f).name}:{line} {name}"
                             for (f, line, name), (_, _, tt, ct, _) in rows]
    else:
        again = run_measured(command, cwd=ROOT)  # nothing changed: every block of rows is skipped
        if again["returncode"] not in (0, 1):
            raise SystemExit(again["stderr"][-3000:])
        result.update(rerun_seconds=round(again["seconds"], 2), rerun_peak_rss_mb=again["peak_rss_mb"],
                      rerun_output=again["stdout"].splitlines())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100_000, help="rows (default 100,000)")
    parser.add_argument("--profile", action="store_true", help="run the ingest under cProfile")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        workdir = Path(tempfile.mkdtemp(prefix="jobcrawl-import-"))
        try:
            print(json.dumps(one(args.one, workdir, args.profile), ensure_ascii=False))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return
    command = [sys.executable, __file__, "--one", str(args.n)] + (["--profile"] if args.profile else [])
    out = subprocess.run(command, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    result = json.loads(out.stdout.splitlines()[-1])
    print(f"rows from {result['origin']}")
    print(f"N={result['n']:,} rows ({result['csv_mb']} MB CSV)  {result['seconds']:.1f} s  "
          f"{result['rows_per_s']:,} rows/s  ({result['cpu_seconds']:.1f} CPU-s: {result['rows_per_cpu_s']:,} rows "
          f"per CPU-second)  peak RSS {result['peak_rss_mb']} MB (largest process; all processes at once "
          f"{result['peak_total_mb']} MB)  db {result['db_mb']} MB  "
          f"load average {result['load'][0]} → {result['load'][1]}  (exit {result['exit']})")
    print(f"  of which the crawl (parsing, pipelines, SQLite writes) {result['crawl_seconds']:.1f} s, "
          f"steps after it (dedupe, scoring) {result['after_crawl_seconds']:.1f} s; the rest is start-up")
    for line in result["output"]:
        print("  " + line)
    if "rerun_seconds" in result:
        print(f"re-run, nothing changed: {result['rerun_seconds']:.1f} s, peak RSS {result['rerun_peak_rss_mb']} MB")
        for line in result["rerun_output"]:
            print("  " + line)
    for line in result.get("profile", []):
        print("  " + line)


if __name__ == "__main__":
    main()
