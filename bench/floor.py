"""Benchmark: the floor of an ingest's work — every stage in one plain loop, no engine, no processes.

Generates the same dumps as bench/ingest.py, then, in this one process and one after the other, times
with the CPU clock each stage jobcrawl runs on them, called directly:

1. read + parse: the file's bytes and ``parse_dump`` (what the reference does too);
2. the four pipeline stages, built by ``scrapy.utils.test.get_crawler`` from the project's settings and fed the
   items by a ``for`` loop: validate, normalize, skills, store (rows and dedupe keys; its batches are kept in a
   list instead of going to a writer);
3. the writer (``crawler.store.writer.Writer``) writing those batches into a fresh database: postings, raw inputs
   and the full-text index, then (timed apart) their child rows: sections, skill evidence, evaluations;
4. the corpus steps: dedupe, then scoring (``crawler.dedupe.step``, ``crawler.score.step``), in this process.

Then, in fresh processes, the reference (bench/reference_ingest.py) and ``jobcrawl ingest`` of the same
folder. It prints each stage's CPU ms per posting and its ratio to the reference's; the sum is the floor: the
work the product does with nothing around it. ``jobcrawl ingest`` minus the floor is the price of the run
path itself (the Scrapy engine, the worker processes, the pipe to the writer, the side-by-side corpus steps).

    python bench/floor.py                 # 10,000 mixed postings, 100 a file
    python bench/floor.py --kind seeds    # pages of the seeds' full length
    python bench/floor.py --n 2000        # a quick run

Issue 24 asks CPU ≤ 2.5 × the reference; a floor above that says which work would have to go.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.ingest import AS_OF, generate  # noqa: E402
from bench.sizes import run_measured  # noqa: E402

STAGES = ("validate", "normalize", "skills", "store")


class KeptBatches:
    """A sink that keeps the store stage's batches (crawler/run/sinks.py's protocol)."""

    def __init__(self):
        self.batches = []

    def put(self, batch) -> None:
        self.batches.append(batch)

    def close(self) -> None:
        pass


def floor(folder: Path, db_path: Path) -> tuple[int, dict[str, float]]:
    """(postings, stage → CPU seconds) of every stage run in a plain loop over ``folder``'s dumps."""
    from scrapy.utils.reactor import install_reactor
    from scrapy.utils.test import get_crawler

    import crawler.store.writer as writer_module
    from crawler.store.schema import open_db
    from crawler.ingest.appdump import parse_dump
    from crawler.run.sinks import attach
    from crawler.dedupe.step import dedupe
    from crawler.procs import settle_gc
    from crawler.score.step import score_corpus
    from crawler.settings import project_settings
    from normalize.clock import now_iso

    sink = KeptBatches()
    settings = project_settings({"JOBCRAWL_AS_OF_SOURCE": "as_of"})
    install_reactor(settings["TWISTED_REACTOR"])  # Scrapy wants it installed; no engine runs on it here
    crawler = get_crawler(settings_dict=settings.copy_to_dict())
    attach(crawler, sink)
    stages = [(name, cls.from_crawler(crawler)) for name, cls in zip(STAGES, _stage_classes(settings))]
    stages[-1][1].open_spider()
    settle_gc()  # as every jobcrawl process does once it is set up: the stages are timed without the default GC
    seconds: dict[str, float] = defaultdict(float)
    clock = time.process_time
    for path in sorted(folder.iterdir()):
        t = clock()
        items = list(parse_dump(path.read_bytes(), locator=path.name, fetched_at=now_iso(), as_of=AS_OF))
        seconds["read + parse"] += clock() - t
        for item in items:
            for name, stage in stages:
                t = clock()
                item = stage.process_item(item)
                seconds[name] += clock() - t
    t = clock()
    stages[-1][1].close_spider()
    seconds["store"] += clock() - t
    postings = sum(len(b.postings) for b in sink.batches)

    database = open_db(db_path)
    writer = writer_module.Writer(database)
    children = writer.__class__._write_children

    def timed_children(self, rows):
        t = clock()
        children(self, rows)
        seconds["write: child rows"] += clock() - t

    writer._write_children = timed_children.__get__(writer)
    t = clock()
    for batch in sink.batches:
        writer.write(batch)
    seconds["write: postings, inputs, full text"] = clock() - t - seconds["write: child rows"]
    t = clock()
    dedupe(database)
    seconds["dedupe"] = clock() - t
    t = clock()
    score_corpus(database, workers=1)  # in this process: its CPU clock sees all of it
    seconds["score"] = clock() - t
    database.close()
    return postings, dict(seconds)


def _stage_classes(settings):
    from scrapy.utils.misc import load_object

    order = sorted(settings.getdict("ITEM_PIPELINES").items(), key=lambda kv: kv[1])
    classes = [load_object(path) for path, _ in order]
    if [c.__name__ for c in classes] != ["ValidatePipeline", "NormalizePipeline", "SkillsPipeline", "StorePipeline"]:
        raise SystemExit(f"the chain is no longer {STAGES}: {[c.__name__ for c in classes]}")
    return classes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="postings (default 10,000)")
    parser.add_argument("--per-file", type=int, default=100, help="postings per dump file (default 100)")
    parser.add_argument("--kind", choices=["mixed", "seeds"], default="mixed", help="generated pages (bench/ingest.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="jobcrawl-floor-") as tmp:
        work = Path(tmp)
        folder = work / "in"
        generate(folder, args.n, args.per_file, args.kind)
        postings, seconds = floor(folder, work / "floor.db")
        ref = run_measured([sys.executable, str(ROOT / "bench" / "reference_ingest.py"), str(folder),
                            str(work / "reference.db")], cwd=ROOT)
        run = run_measured([sys.executable, "-m", "crawler.cli", "ingest", str(folder), "--db", str(work / "jobs.db"),
                            "--as-of", AS_OF], cwd=ROOT)
        if ref["returncode"] != 0 or run["returncode"] not in (0, 1):
            raise SystemExit(ref["stderr"] + run["stderr"])
    ref_ms = 1000 * ref["cpu_seconds"] / args.n
    print(f"N={args.n:,} ({args.kind}, {args.per_file}/file): {postings:,} postings stored by the plain loop; "
          f"CPU ms a posting, and × the reference ({ref_ms:.3f} ms)")
    for name, s in seconds.items():
        ms = 1000 * s / args.n
        print(f"  {name:<38} {ms:6.3f} ms  {ms / ref_ms:5.2f} ×")
    total = 1000 * sum(seconds.values()) / args.n
    ingest = 1000 * run["cpu_seconds"] / args.n
    print(f"  {'the floor (sum)':<38} {total:6.3f} ms  {total / ref_ms:5.2f} ×")
    print(f"  {'jobcrawl ingest (all its processes)':<38} {ingest:6.3f} ms  {ingest / ref_ms:5.2f} ×  "
          f"({args.n / run['seconds']:,.0f} postings/s wall)")
    print(f"the run path's own price: {ingest - total:+.3f} ms a posting ({(ingest - total) / total:+.0%} of the floor)"
          f"; target (issue 24) ≤ 2.5 × = {2.5 * ref_ms:.3f} ms")


if __name__ == "__main__":
    main()
