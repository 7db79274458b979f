"""Benchmark: end-to-end ingest of text dumps, against a plain loop measured in the same run.

Generates N postings in the app's layout (bench/gen.py: ``mixed`` = real JD bullets from
fixtures/dedupe/bases.jsonl with varied company, title, salary, city and 10 % reposts; ``seeds`` =
variants of the two seeds at their full length, AI-insight lists included), writes them as dump files
of ``--per-file`` postings each, then in fresh processes:

1. the plain loop, issue #39's floor (bench/plain_loop.py): the files read, split into pages, company and title
   taken from each page's first two lines, the pages stored with one ``executemany`` and indexed by an FTS5
   ``trigram`` index;
2. the reference of issue #24 (bench/reference_ingest.py): the same files read by a plain loop (``parse_dump``,
   one ``executemany`` into a postings table of the same columns, the same full-text index);
3. ``jobcrawl ingest`` of the folder (every stage, both cores, dedupe and scoring included);
4. the same ingest again: nothing changed;
5. the plain loop again: its ratio is to the mean of its two runs, which bracket the ingest (the shared machine's
   load drifts over a bench).

Prints postings/s (wall clock, whole command), the CPU time of all its processes per posting and its
ratios to the plain loop's and the reference's (the figures that do not move with the shared machine's load), peak RSS of
the largest process, the database's bytes against the input's, the re-run's time, and how long each
phase of the ingest took (its progress lines: reading, then dedupe and scoring, side by side).

    python bench/ingest.py                        # mixed pages, N = 10,000 and 100,000, 100 per file
    python bench/ingest.py --n 10000 --kind seeds # pages of the seeds' full length
    python bench/ingest.py --n 10000 --per-file 1 # one posting per file
    python bench/ingest.py --n 3000 --per-file 1 --rerun-only   # the unchanged re-run of 3,000 files

Targets (issue 39): ≥ 1,000 postings/s at 10k and 100k and CPU ≤ 3 × the plain loop; unchanged re-run ≤ 3 s;
100k within 20 % of the 10k figures in rate and peak RSS (< 300 MB); database ≤ 3 × the input bytes. Issue 24's:
≥ 900/s on full-length pages; ≥ 400/s with one posting per file; CPU ≤ 2.5 × the reference; unchanged re-run of
3,000 files ≤ 3 s, of 100k postings ≤ 10 s.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.sizes import run_measured  # noqa: E402

AS_OF = "2026-11-29T12:00:00+08:00"


def generate(folder: Path, n: int, per_file: int, kind: str) -> int:
    """Write the dumps in a child process (this one stays small); returns their bytes."""
    writer = "write_mixed_dumps" if kind == "mixed" else "write_dumps"
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
                    f" from bench.gen import {writer};"
                    f" {writer}(Path(sys.argv[2]), int(sys.argv[3]), per_file=int(sys.argv[4]))",
                    str(ROOT), str(folder), str(n), str(per_file)], check=True)
    return sum(p.stat().st_size for p in folder.iterdir())


def one(n: int, per_file: int, kind: str, workdir: Path, rerun_only: bool) -> dict:
    inputs = workdir / "in"
    input_bytes = generate(inputs, n, per_file, kind)
    out: dict = {"n": n, "per_file": per_file, "kind": kind, "input_mb": round(input_bytes / 2**20, 1)}
    db = workdir / "jobs.db"
    command = [sys.executable, "-m", "crawler.cli", "ingest", str(inputs), "--db", str(db), "--as-of", AS_OF]

    def loop_cpu_ms(name: str, script: str) -> float:
        db_path = workdir / f"{name}.db"
        for stale in workdir.glob(f"{name}.db*"):
            stale.unlink()
        ref = run_measured([sys.executable, str(ROOT / "bench" / script), str(inputs), str(db_path)], cwd=ROOT)
        if ref["returncode"] != 0:
            raise SystemExit(ref["stderr"])
        return round(1000 * ref["cpu_seconds"] / n, 3)

    if not rerun_only:
        out["plain_runs_ms"] = [loop_cpu_ms("plain", "plain_loop.py")]
        out["reference_cpu_ms"] = loop_cpu_ms("reference", "reference_ingest.py")
    run = run_measured(command, cwd=ROOT)
    if run["returncode"] not in (0, 1):
        raise SystemExit(run["stderr"])
    db_bytes = sum(p.stat().st_size for p in workdir.glob("jobs.db*"))
    again = run_measured(command, cwd=ROOT)
    if again["returncode"] not in (0, 1):
        raise SystemExit(again["stderr"])
    out.update(seconds=round(run["seconds"], 2), postings_per_s=round(n / run["seconds"]),
               cpu_ms=round(1000 * run["cpu_seconds"] / n, 3), peak_rss_mb=run["peak_rss_mb"],
               peak_total_mb=run["peak_total_mb"], db_ratio=round(db_bytes / input_bytes, 2),
               rerun_seconds=round(again["seconds"], 2))
    if "reference_cpu_ms" in out:
        out["plain_runs_ms"].append(loop_cpu_ms("plain", "plain_loop.py"))  # before and after: the load drifts
        out["plain_cpu_ms"] = round(sum(out["plain_runs_ms"]) / 2, 3)
        out["cpu_ratio"] = round(out["cpu_ms"] / out["reference_cpu_ms"], 2)
        out["plain_ratio"] = round(out["cpu_ms"] / out["plain_cpu_ms"], 2)
    out["phases"] = phases(run["stderr"])  # progress lines go to stderr
    return out


def phases(stdout: str) -> dict[str, str]:
    """Phase → its duration, from the lines that end each phase (``dedupe: 10,000 postings clustered · 5.3 s``;
    dedupe and scoring run side by side from 5,000 postings on, so their times overlap)."""
    found = {}
    for line in stdout.splitlines():
        name, _, rest = line.partition(": ")
        if name in ("reading", "dedupe", "scoring") and " · " in rest and not rest.startswith("running"):
            took = rest.rpartition(" · ")[2]
            if took.endswith(" s") or took.endswith(" min"):
                found[name] = took
    return found


def show(r: dict) -> str:
    line = (f"N={r['n']:>7,} ({r['kind']}, {r['per_file']}/file, {r['input_mb']} MB): {r['seconds']:>6.1f} s = "
            f"{r['postings_per_s']:>5,} postings/s · CPU {r['cpu_ms']:.2f} ms/posting")
    if "cpu_ratio" in r:
        before, after = r["plain_runs_ms"]
        line += (f" = {r['plain_ratio']:.2f} × the plain loop ({r['plain_cpu_ms']:.2f} ms: {before:.2f} before the"
                 f" ingest, {after:.2f} after), {r['cpu_ratio']:.2f} × the"
                 f" reference ({r['reference_cpu_ms']:.2f} ms)")
    steps = " · ".join(f"{name} {took}" for name, took in r.get("phases", {}).items())
    return (line + f" · peak RSS {r['peak_rss_mb']} MB (all processes {r['peak_total_mb']} MB) · database "
            f"{r['db_ratio']:.2f} × input\n{'':10}unchanged re-run {r['rerun_seconds']:.2f} s"
            + (f"\n{'':10}phases: {steps}" if steps else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, action="append", help="postings (repeatable); default 10,000 and 100,000")
    parser.add_argument("--per-file", type=int, default=100, help="postings per dump file (default 100)")
    parser.add_argument("--kind", choices=["mixed", "seeds"], default="mixed", help="generated pages (see above)")
    parser.add_argument("--rerun-only", action="store_true", help="skip the reference (only the ingest and its re-run)")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        workdir = Path(tempfile.mkdtemp(prefix="jobcrawl-bench-"))
        try:
            print(json.dumps(one(args.one, args.per_file, args.kind, workdir, args.rerun_only)))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return
    results = []
    for n in args.n or (10_000, 100_000):
        proc = subprocess.run([sys.executable, __file__, "--one", str(n), "--per-file", str(args.per_file),
                               "--kind", args.kind, *(["--rerun-only"] if args.rerun_only else [])],
                              capture_output=True, text=True, check=True)
        results.append(json.loads(proc.stdout.splitlines()[-1]))
        print(show(results[-1]), flush=True)
    if len(results) > 1:
        print(f"peak RSS ratio {results[-1]['n']:,} / {results[0]['n']:,}: "
              f"{results[-1]['peak_rss_mb'] / results[0]['peak_rss_mb']:.2f}")
    import os

    print("load average (1, 5, 15 min) {:.2f} {:.2f} {:.2f} on {} cores".format(*os.getloadavg(), os.cpu_count()))


if __name__ == "__main__":
    main()
