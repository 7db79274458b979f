"""The stages after normalize run in a worker process, and the dedupe step of a large database in a fresh
process of its own: same results as inline, failures fail the run."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

import pytest

from conftest import AS_OF, FIXTURES, ROOT, SEEDS, export_records, run_cli
from crawler.inputs import resolve_inputs
from crawler.jobs import INLINE_STAGES_MAX_BYTES, Job, _input_bytes

pytestmark = pytest.mark.slow

SCRIPT = """
import json, sys
sys.path.insert(0, "tests")  # the stage worker starts with this path too: tests/stage_doubles.py
import crawler.jobs
from crawler.inputs import resolve_inputs
from crawler.jobs import run_into_db
from crawler.spiders.textdump import TextdumpSpider
from normalize.dates import parse_as_of

if __name__ == "__main__":
    db, process, stages, steps_min, *paths = sys.argv[1:]
    crawler.jobs.DEDUPE_PROCESS_MIN = int(steps_min)
    settings = {"LOG_LEVEL": "CRITICAL", "JOBCRAWL_STAGE_PROCESS": process == "process"}
    if stages.startswith("engine:"):  # one more pipeline in the engine, before normalize
        from crawler.settings import ITEM_PIPELINES
        settings["ITEM_PIPELINES"] = {**ITEM_PIPELINES, stages.split(":", 1)[1]: 150}
    elif stages:
        settings["JOBCRAWL_STAGE_PIPELINES"] = stages.split(",")
    inputs = resolve_inputs(paths)
    result = run_into_db(TextdumpSpider, db, kind="ingest", args={}, spider_kwargs={"inputs": inputs,
                         "as_of": parse_as_of(%r, None)}, settings=settings)
    print(json.dumps({"status": result.status, "counts": result.counts, "steps": result.steps,
                      "stage_failed": result.stats.get("jobcrawl/stage_failed"), "errors": result.errors,
                      "worker": "jobcrawl/stage_worker_cpu_s" in result.stats}))
""" % AS_OF


def ingest(db, mode: str, *paths, stages: str = "", steps_min: int = 20_000) -> dict:
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(db), mode, stages, str(steps_min), *map(str, paths)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_worker_process_and_inline_store_the_same_postings(tmp_path):
    paths = [SEEDS, FIXTURES / "reposts"]
    results = {mode: ingest(tmp_path / f"{mode}.db", mode, *paths) for mode in ("process", "inline")}
    assert (results["process"].pop("worker"), results["inline"].pop("worker")) == (True, False)
    assert results["process"] == results["inline"]
    assert results["process"]["counts"]["new"] == 7 and results["process"]["status"] == "partial"  # README.md
    records = {mode: [{k: v for k, v in r.items() if k != "evaluation"} for r in export_records(tmp_path / f"{mode}.db")]
               for mode in results}
    assert records["process"] == records["inline"]
    assert [r["id"] for r in records["process"]] == list(range(1, 8))


def test_a_run_that_stores_nothing_starts_no_worker(tmp_path):
    # The worker starts at the first item: a re-run whose inputs are all unchanged since their last
    # parse (crawler/ledger.py) has none.
    first, again = (ingest(tmp_path / "jobs.db", "process", SEEDS / "*.txt") for _ in range(2))
    assert (first["counts"]["new"], first["worker"]) == (2, True)
    assert (again["counts"]["unchanged"], again["counts"]["files_unchanged"], again["worker"]) == (2, 2, False)
    assert again["status"] == "ok"


def test_a_failing_stage_fails_the_run(tmp_path):
    # A stage that cannot even be built (not a pipeline class) stands for any failure in the worker.
    stages = "crawler.pipelines.skills.SkillsPipeline,crawler.pipelines.offload.StageError"
    result = ingest(tmp_path / "jobs.db", "process", SEEDS, stages=stages)
    assert result["status"] == "failed"
    assert result["stage_failed"] == "AttributeError: type object 'StageError' has no attribute 'from_crawler'"


def test_a_pipeline_that_raises_is_named_and_the_run_partial(tmp_path):
    # Scrapy drops an item a pipeline raised on and only logs it: the run says which posting was not stored.
    result = ingest(tmp_path / "jobs.db", "inline", SEEDS, stages="engine:stage_doubles.RaisingOnSeed000")
    assert (result["status"], result["counts"]["new"], result["counts"]["errors"]) == ("partial", 1, 1)
    assert result["errors"] == ["000_7c4373297891d5ca.txt#0: ValueError: an unforeseen bug; this RawPosting was not stored"]
    assert [r["company"] for r in export_records(tmp_path / "jobs.db")] == ["初速度"]  # seed 003's


def test_a_worker_that_dies_fails_the_run_instead_of_hanging(tmp_path):
    # The engine hands batches to a sender thread; when the worker is gone the run still ends, failed.
    result = ingest(tmp_path / "jobs.db", "process", SEEDS, FIXTURES / "reposts",
                    stages="stage_doubles.DyingStage")
    assert result["status"] == "failed"
    assert result["stage_failed"] == "the stage worker process ended unexpectedly (exit code 3)"


def test_dedupe_in_a_fresh_process_gives_the_same_database(tmp_path):
    # DEDUPE_PROCESS_MIN = 0: dedupe runs in a spawned process even for the 7 postings here.
    paths = [SEEDS, FIXTURES / "reposts"]
    results = {mode: ingest(tmp_path / f"{mode}.db", "process", *paths, steps_min=steps_min)
               for mode, steps_min in (("fresh", 0), ("engine", 20_000))}
    assert results["fresh"] == results["engine"]
    assert results["fresh"]["steps"]["dedupe"]["added"] == 7 and results["fresh"]["steps"]["score"]["scored"] == 7
    records = {mode: export_records(tmp_path / f"{mode}.db") for mode in results}
    for record in records["fresh"] + records["engine"]:
        record["evaluation"].pop("computed_at", None)
    assert records["fresh"] == records["engine"]
    assert [r["cluster_id"] for r in records["fresh"]] == [r["cluster_id"] for r in records["engine"]]


def test_a_small_ingest_runs_its_stages_inline(tmp_path):
    # Two seed files (about 13 KB): the worker's start-up would cost more than it saves. The crash test
    # (tests/test_crash.py) checks that its 3,000 postings do use the worker.
    size = sum(p.stat().st_size for p in SEEDS.glob("*.txt"))
    assert _input_bytes([Job("textdump", "ingest", {}, {"inputs": resolve_inputs([str(SEEDS / "*.txt")])})]) == size
    assert size < INLINE_STAGES_MAX_BYTES
    assert _input_bytes([Job("greenhouse", "crawl", {}, {"boards": ["x"]})]) is None
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    stats = json.loads(sqlite3.connect(db).execute("SELECT stats FROM runs").fetchone()[0])
    assert stats["jobcrawl/new"] == 2 and "jobcrawl/stage_worker_cpu_s" not in stats
