"""The run path: worker processes over shards of the inputs, one writer in the parent, a typed report; the same
database as a run in one process, and failures that fail the run instead of hanging or losing rows silently."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AS_OF, FIXTURES, ROOT, SEEDS, export_records, run_cli, signal_ids_as_keys
from crawler.files import InputFile
from crawler.report import FILES, FILES_UNCHANGED, FOUND, REQUESTS, STATUS, UNPARSED, CrawlReport, RunReport
from crawler.procs import Corpus
from crawler.run.runner import Job, _shards

SCRIPT = """
import json, sys
sys.path.insert(0, "tests")  # worker processes start with this path too: tests/stage_doubles.py
import crawler.procs
from crawler.files import resolve_inputs
from crawler.run.runner import Job, run_job
from crawler.ingest.textdump import TextdumpSpider
from normalize.dates import parse_as_of

if __name__ == "__main__":
    db, workers, extra, steps_min, read_min, *paths = sys.argv[1:]
    crawler.procs.DEDUPE_APART_MIN, crawler.procs.READ_APART_MIN_BYTES = int(steps_min), int(read_min)
    settings = {"LOG_LEVEL": "CRITICAL"}
    if extra:  # one more pipeline: "module.Class@order" (default 150: before normalize)
        from crawler.settings import ITEM_PIPELINES
        name, _, order = extra.partition("@")
        settings["ITEM_PIPELINES"] = {**ITEM_PIPELINES, name: int(order or 150)}
    job = Job(TextdumpSpider, "ingest", {}, {"inputs": resolve_inputs(paths), "as_of": parse_as_of(%r, None)})
    read = {"inputs": 0, "postings": 0, "nbytes": 0}

    class Reading:  # what the run's progress hears while reading, summed
        def start(self, *args, **kwargs): pass
        def finish(self, *args, **kwargs): pass
        def close(self): pass
        def advance(self, **counts):
            for key, value in counts.items():
                read[key] += value

    result = run_job(job, db, settings=settings, workers=int(workers), progress=Reading())
    print(json.dumps({"status": result.status, "counts": result.counts, "steps": result.steps,
                      "stage_failed": result.crawl.stage_failed, "errors": result.errors, "workers": result.workers,
                      "read": read}))
""" % AS_OF


def ingest(db, workers: int, *paths, extra: str = "", steps_min: int = 20_000, read_min: int = 0) -> dict:
    """Ingest ``paths`` with ``workers`` (crawler/procs.py's rule with its dedupe and reading thresholds set to
    ``steps_min`` postings and ``read_min`` bytes) in a fresh process; the run's report as a dict."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(db), str(workers), extra, str(steps_min), str(read_min),
                           *map(str, paths)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.stdout.strip(), proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def without_ids(records: list[dict]) -> dict[str, dict]:
    """Records by posting key, ids as keys: ids follow the order in which workers delivered postings."""
    key_of = {r["id"]: r["key"] for r in records}
    out = {}
    for r in signal_ids_as_keys(records):
        r = {k: v for k, v in r.items() if k not in ("id", "evaluation")}
        r["cluster_id"] = next((key_of[m["id"]] for m in records if m["cluster_id"] == r["cluster_id"]
                                and m.get("duplicate_of") is None), None)
        r["duplicate_of"] = key_of.get(r["duplicate_of"])
        r["dedupe_matched"] = key_of.get(r.get("dedupe_matched"))
        out[r["key"]] = r
    return out


@pytest.mark.parametrize("workers", [1, 2])
def test_the_progress_counts_each_file_posting_and_byte_read(tmp_path, workers):
    paths = [SEEDS, FIXTURES / "reposts"]
    files = [p for folder in paths for p in folder.iterdir() if p.is_file()]  # every file is an input (a .toml too)
    result = ingest(tmp_path / "jobs.db", workers, *paths)
    assert result["workers"] == workers
    assert result["read"] == {"inputs": len(files), "postings": result["counts"]["new"],
                              "nbytes": sum(p.stat().st_size for p in files)}


@pytest.mark.slow
def test_worker_processes_and_one_process_store_the_same_postings(tmp_path):
    paths = [SEEDS, FIXTURES / "reposts"]
    results = {n: ingest(tmp_path / f"{n}.db", n, *paths) for n in (2, 1)}
    assert (results[2].pop("workers"), results[1].pop("workers")) == (2, 1)
    assert results[2] == results[1]
    assert results[2]["counts"]["new"] == 7 and results[2]["status"] == "partial"  # README.md
    records = {n: without_ids(export_records(tmp_path / f"{n}.db")) for n in results}
    assert records[2] == records[1]
    assert sorted(r["id"] for r in export_records(tmp_path / "2.db")) == list(range(1, 8))


@pytest.mark.slow
def test_a_pipeline_that_cannot_be_built_fails_the_run(tmp_path):
    result = ingest(tmp_path / "jobs.db", 2, SEEDS, extra="crawler.run.steps.StepFailed")
    assert result["status"] == "failed"
    assert result["stage_failed"] == ("TypeError: StepFailed.__init__() missing 4 required positional arguments: "
                                      "'step', 'error', 'steps', and 'detail'")


@pytest.mark.slow
@pytest.mark.parametrize("workers, order", [(1, 150), (2, 150), (1, 400)],
                         ids=["before-normalize", "before-normalize-in-workers", "after-skills"])
def test_a_pipeline_that_raises_keeps_the_posting_in_quarantine_and_the_run_partial(tmp_path, workers, order):
    # Scrapy drops an item a pipeline raised on and only logs it: the store stage keeps the raw posting (as the
    # spider emitted it, whichever stage raised) as a quarantine row.
    db = tmp_path / "jobs.db"
    result = ingest(db, workers, SEEDS, extra=f"stage_doubles.RaisingOnSeed000@{order}")
    assert (result["status"], result["counts"]["new"], result["counts"]["quarantined"], result["counts"]["errors"]
            ) == ("partial", 1, 3, 0)  # the folder's profile.toml and sources.toml are no postings either
    assert result["errors"] == []
    assert [r["company"] for r in export_records(db)] == ["初速度"]  # seed 003's
    conn = sqlite3.connect(db)
    (locator, position, reason, detail, text), = conn.execute(
        "SELECT locator, position, reason, detail, text FROM quarantine WHERE reason != 'no_posting'").fetchall()
    assert (locator, position, reason, detail) == ("000_7c4373297891d5ca.txt", 0, "pipeline_error",
                                                  "pipeline error: ValueError: an unforeseen bug")
    assert json.loads(text)["title"] == "AI算子开发工程师" and "skills" not in json.loads(text)


@pytest.mark.slow
def test_a_worker_that_dies_fails_the_run_instead_of_hanging(tmp_path):
    result = ingest(tmp_path / "jobs.db", 2, SEEDS, FIXTURES / "reposts", extra="stage_doubles.DyingStage")
    assert result["status"] == "failed"
    assert result["stage_failed"].startswith("worker process jobcrawl-worker-") and \
        result["stage_failed"].endswith("ended unexpectedly (exit code 3)")


@pytest.mark.slow
def test_dedupe_in_a_fresh_process_gives_the_same_database(tmp_path):
    # DEDUPE_APART_MIN = 0: dedupe runs in a spawned process even for the 7 postings here (reading stays here).
    paths = [SEEDS, FIXTURES / "reposts"]
    results = {mode: ingest(tmp_path / f"{mode}.db", workers, *paths, steps_min=steps_min, read_min=10**12)
               for mode, workers, steps_min in (("fresh", 2, 0), ("inline", 1, 20_000))}
    assert results["fresh"] == results["inline"]
    assert results["fresh"]["steps"]["dedupe"]["added"] == 7 and results["fresh"]["steps"]["score"]["scored"] == 7
    records = {mode: export_records(tmp_path / f"{mode}.db") for mode in results}
    for record in records["fresh"] + records["inline"]:
        record["evaluation"].pop("computed_at", None)
    assert records["fresh"] == records["inline"]


# --------------------------------------------------------------------------- parts


def files(*sizes: int, tmp: Path) -> list[InputFile]:
    out = []
    for n, size in enumerate(sizes):
        path = tmp / f"f{n}.txt"
        path.write_bytes(b"x" * size)
        out.append(InputFile(path, path.name))
    return out


@pytest.mark.parametrize("sizes, workers, expected", [
    pytest.param((10, 10, 10, 10), 2, [["f0.txt", "f2.txt"], ["f1.txt", "f3.txt"]], id="equal-sizes-alternate"),
    pytest.param((100, 10, 10, 10, 60), 2, [["f0.txt"], ["f1.txt", "f2.txt", "f3.txt", "f4.txt"]], id="by-bytes"),
    pytest.param((5,), 4, [["f0.txt"]], id="fewer-files-than-workers"),
    pytest.param((5, 5, 5), 1, [["f0.txt", "f1.txt", "f2.txt"]], id="one-worker"),
])
def test_an_ingest_is_sharded_by_bytes_keeping_file_order(tmp_path, sizes, workers, expected):
    job = Job("textdump", "ingest", {}, {"inputs": files(*sizes, tmp=tmp_path)})
    shards = _shards([job], workers)
    assert [[inp.locator for _, part in shard for inp in part.spider_kwargs["inputs"]] for shard in shards] == expected
    assert all(i == 0 for shard in shards for i, _ in shard)


def test_crawl_jobs_are_dealt_over_the_workers():
    jobs = [Job("greenhouse", "crawl", {}, {"boards": [f"b{i}"]}, source=f"s{i}") for i in range(5)]
    assert [[i for i, _ in shard] for shard in _shards(jobs, 2)] == [[0, 2, 4], [1, 3]]


def crawled(*, files: int = 0, found: int = 0, requests: int = 0, responses: dict[str, int] | None = None,
            exceptions: int = 0, stats: dict | None = None, **fields) -> CrawlReport:
    """A crawl's report: its counts in its stats (errors as spider ``exceptions``: no lines)."""
    counts = {FILES: files, FOUND: found, REQUESTS: requests, "spider_exceptions/KeyError": exceptions,
              **{STATUS + code: n for code, n in (responses or {}).items()}}
    return CrawlReport(stats={**(stats or {}), **{k: v for k, v in counts.items() if v}}, **fields)


def test_shard_reports_merge_into_one():
    a = crawled(files=2, found=5, requests=3, responses={"200": 3}, problems=["a.txt: empty"],
                finish_reason="finished", stats={"item_scraped_count": 4, "start_time": "x"})
    a.failures.update({"HTTP 500": 1})
    b = crawled(files=1, found=1, requests=1, responses={"200": 1, "500": 1}, request_errors=["u: HTTP 500"],
                errors=["a#1: KeyError: 'x'"], finish_reason="shutdown", listings={"greenhouse:x": ["k"]},
                stats={"item_scraped_count": 1})
    b.failures.update({"HTTP 500": 1, "timed out on b": 1})
    a.merge(b)
    assert (a.files, a.found, a.requests, a.error_count, a.finish_reason) == (3, 6, 4, 2, "shutdown")
    assert (dict(a.responses), a.problems, a.request_errors, a.errors, a.listings, dict(a.failures)) == (
        {"200": 4, "500": 1}, ["a.txt: empty"], ["u: HTTP 500"], ["a#1: KeyError: 'x'"], {"greenhouse:x": ["k"]},
        {"HTTP 500": 2, "timed out on b": 1})
    assert a.stats == {"item_scraped_count": 5, "start_time": "x", FILES: 3, FOUND: 6, REQUESTS: 4,
                       STATUS + "200": 4, STATUS + "500": 1}


@pytest.mark.parametrize("kind, reason, written, errors, stage_failed, files, failures, status", [
    pytest.param("ingest", "finished", {"new": 2}, 0, None, 1, {}, "ok", id="ok"),
    pytest.param("ingest", "finished", {"quarantined": 1}, 0, None, 1, {}, "partial", id="quarantined"),
    pytest.param("crawl", "finished", {}, 2, None, 0, {}, "partial", id="errors"),
    pytest.param("crawl", "finished", {}, 2, None, 1, {"HTTP 503": 2}, "partial", id="some-requests-failed"),
    pytest.param("crawl", "finished", {}, 2, None, 0, {"HTTP 503": 2}, "failed", id="every-request-failed"),
    pytest.param("crawl", "finished", {}, 0, None, 0, {}, "ok", id="nothing-to-read"),
    pytest.param("crawl", "request_cap", {}, 0, None, 1, {}, "partial", id="request-cap"),
    pytest.param("crawl", "shutdown", {}, 0, None, 1, {}, "interrupted", id="signal"),
    pytest.param("ingest", "shutdown", {}, 0, None, 1, {}, "failed", id="ingest-stopped"),
    pytest.param("ingest", "finished", {"new": 2}, 0, "storing failed: disk full", 1, {}, "failed", id="stage-failed"),
])
def test_a_run_status_follows_from_its_report(kind, reason, written, errors, stage_failed, files, failures, status):
    crawl = crawled(finish_reason=reason, exceptions=errors, stage_failed=stage_failed, files=files)
    crawl.failures.update(failures)
    report = RunReport(1, kind, crawl=crawl, written=written)
    assert report.decide_status() == status
    assert report.errors == ([f"the run stopped: {stage_failed}"] if stage_failed else [])  # the CLI's failed: lines


def _seed_rows():
    from crawler.store.rows import posting_row
    from crawler.ingest.appdump import parse_dump
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting

    return [posting_row(normalize_posting(item)) for seed in sorted(SEEDS.glob("*.txt"))
            for item in parse_dump(seed.read_bytes(), locator=seed.name, fetched_at="2026-11-29T04:00:00+00:00",
                                   as_of="2026-11-29T04:00:00+00:00") if isinstance(item, RawPosting)]


def test_a_batch_the_database_fails_takes_its_counts_back_with_it(tmp_path, monkeypatch):
    """The counts said "new 3" for a batch whose transaction was rolled back (here: the disk fails)."""
    import sqlite3

    import crawler.store.writer as writer_module
    from crawler.store.rows import Batch
    from crawler.store.schema import open_db

    rows = _seed_rows()
    db = open_db(str(tmp_path / "jobs.db"))
    writer = writer_module.Writer(db)

    def disk_error(*args):
        raise sqlite3.OperationalError("disk I/O error")

    with monkeypatch.context() as patch:
        patch.setattr(writer_module.fts, "insert_prepared", disk_error)
        with pytest.raises(sqlite3.OperationalError):
            writer.write(Batch(7, postings=rows))
    assert (writer.counts_of(7), writer.changed_ids, db["postings"].count) == ({}, [], 0)
    writer.write(Batch(7, postings=rows))
    assert (writer.counts_of(7)["new"], len(writer.changed_ids), db["postings"].count) == (2, 2, 2)


def test_a_posting_the_database_refuses_is_quarantined_and_the_rest_of_its_batch_stored(tmp_path):
    from crawler.store.rows import POSTING_COLS, Batch
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer

    rows = _seed_rows()
    at = POSTING_COLS.index("company_info_size_min")
    too_big = rows[1]._replace(values=rows[1].values[:at] + (2**70,) + rows[1].values[at + 1:])
    db = open_db(str(tmp_path / "jobs.db"))
    writer = Writer(db)
    writer.write(Batch(7, postings=[rows[0], too_big]))
    assert writer.counts_of(7) == {"new": 1, "quarantined": 1, "quarantined_new": 1}
    assert db.execute("SELECT key FROM postings").fetchall() == [(rows[0].key,)]
    assert db.execute("SELECT locator, position, reason, detail FROM quarantine").fetchall() == [
        ("003_5eabc84b6ca487f0.txt", 0, "store_error",
         "not stored: OverflowError: Python int too large to convert to SQLite INTEGER")]
    assert db.execute("SELECT count(*) FROM sections WHERE posting_id NOT IN (SELECT id FROM postings)"
                      ).fetchone()[0] == 0  # nothing of the refused posting is left behind


@pytest.mark.parametrize("files, failures, line", [
    pytest.param(0, {}, None, id="no-failure"),
    pytest.param(0, {"DNS lookup failed for api.lever.co": 1}, "acme: failed: DNS lookup failed for api.lever.co",
                 id="nothing-read"),
    pytest.param(0, {"HTTP 503": 1, "connection refused by 127.0.0.1:9": 3},
                 "acme: failed: connection refused by 127.0.0.1:9 ×3, HTTP 503", id="several-reasons-most-first"),
    pytest.param(4, {"too many redirects": 1}, "acme: 1 request failed: too many redirects", id="partly-one"),
    pytest.param(4, {"HTTP 503": 2, "timed out on x.com": 1}, "acme: 3 requests failed: HTTP 503 ×2, timed out on x.com",
                 id="partly-several"),
])
def test_one_failure_line_per_source(files, failures, line):
    crawl = crawled(finish_reason="finished", files=files, exceptions=sum(failures.values()))
    crawl.failures.update(failures)
    report = RunReport(1, "crawl", source="acme", crawl=crawl)
    report.decide_status()
    assert report.failure_line() == line


def test_json_report_is_plain_data():
    crawl = crawled(files=1, found=2, exceptions=1, responses={"200": 1}, finish_reason="finished")
    crawl.failures.update({"HTTP 503": 1})
    report = RunReport(5, "crawl", source="acme", crawl=crawl, written={"new": 2}, steps={"score": {"scored": 2}})
    report.decide_status()
    data = json.loads(json.dumps(report.as_dict()))
    assert (data["run_id"], data["status"], data["counts"]["new"], data["crawl"]["failures"],
            data["crawl"]["responses"], data["steps"]) == (5, "partial", 2, {"HTTP 503": 1}, {"200": 1}, {"score": {"scored": 2}})


def test_the_runs_stats_hold_counters_that_counted():
    report = RunReport(3, "ingest", crawl=CrawlReport(stats={FILES: 2, FOUND: 2, FILES_UNCHANGED: 2, UNPARSED: 2,
                                                             "finish_reason": "finished"}), workers=2)
    assert report.stats == {"finish_reason": "finished", "jobcrawl/files": 2, "jobcrawl/postings_found": 2,
                            "jobcrawl/files_unchanged": 2, "jobcrawl/postings_unchanged_unparsed": 2,
                            "jobcrawl/listings_complete": 0, "jobcrawl/workers": 2}
    assert report.summary() == ("files read 2 · postings found 2 · new 0 · updated 0 · unchanged 2 · quarantined 0 · "
                                "2 files unchanged since their last parse, not stored again")


def _echo_batches(conn):
    from crawler.run.sinks import PipeSink

    sink = PipeSink(conn)
    from crawler.store.rows import Batch

    for n in range(3):
        sink.put(Batch(run_id=n))
    sink.close()
    sink.send("done", None)


def test_a_pipe_sink_delivers_batches_in_order_to_the_other_process():
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_echo_batches, args=(child,))
    process.start()
    child.close()
    got = []
    while (message := parent.recv())[0] != "done":
        got.append((message[0], message[1].run_id))
    process.join()
    assert got == [("batch", 0), ("batch", 1), ("batch", 2)]


def test_a_pipe_sink_whose_reader_is_gone_fails_loudly():
    from crawler.store.rows import Batch
    from crawler.run.sinks import PipeSink, SinkFailed

    parent, child = multiprocessing.Pipe()
    parent.close()
    sink = PipeSink(child)
    with pytest.raises(SinkFailed, match="the writer's process is gone"):
        for _ in range(10):
            sink.put(Batch())
            sink._thread.join(timeout=0.05)
        sink.close()


class Recorder:
    """A Progress that writes down what the run tells it."""

    def __init__(self):
        self.events = []

    def start(self, phase, *, total_bytes=None, processes=0):
        self.events.append(("start", phase, total_bytes) + ((processes,) if processes else ()))

    def advance(self, *, inputs=0, postings=0, nbytes=0):
        self.events.append(("advance", inputs, postings, nbytes))

    def finish(self, phase, counts):
        self.events.append(("finish", phase, counts))

    def close(self):
        pass


def test_corpus_steps_and_the_runs_row_in_process(tmp_path):
    """The writer, the corpus steps (dedupe, score) and the runs row on a real database, without a crawl."""
    from crawler.store.rows import Batch, posting_row
    from crawler.store.runs import finish_run, start_run
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer
    from crawler.ingest.appdump import parse_dump
    from crawler.run.steps import after_run
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting

    db = open_db(str(tmp_path / "jobs.db"))
    run_id = start_run(db, "ingest", {"paths": ["seeds"]})
    batch = Batch(run_id)
    for seed in sorted(SEEDS.glob("*.txt")):
        for item in parse_dump(seed.read_bytes(), locator=seed.name, fetched_at="2026-11-29T04:00:00+00:00",
                               as_of="2026-11-29T04:00:00+00:00"):
            if isinstance(item, RawPosting):
                batch.postings.append(posting_row(normalize_posting(item)))
    writer = Writer(db)
    writer.write(batch)
    recorder = Recorder()
    steps = after_run(db, processes=Corpus(), progress=recorder)
    assert (steps["dedupe"]["added"], steps["dedupe"]["clusters"], steps["score"]["scored"]) == (2, 2, 2)
    assert [(e[0], e[1]) for e in recorder.events] == [("start", "dedupe"), ("finish", "dedupe"),
                                                       ("start", "scoring"), ("finish", "scoring")]
    assert recorder.events[3][2]["scored"] == 2
    report = RunReport(run_id, "ingest", crawl=crawled(files=2, found=2, finish_reason="finished"),
                       written=writer.counts_of(run_id), steps=steps)
    report.decide_status()
    finish_run(db, report)
    assert db.execute("SELECT status, files, found, new FROM runs WHERE id = ?", [run_id]).fetchone() == ("ok", 2, 2, 2)
    db.close()


def test_an_unchanged_run_skips_the_corpus_steps_unless_they_are_pending(tmp_path, monkeypatch):
    """Dedupe and scoring run after a run that changed postings, and after one that started since they last
    succeeded (killed, or its steps failed); a run that changed nothing after they succeeded skips them."""
    import crawler.run.runner as runner
    import crawler.run.steps as steps
    from crawler.store.rows import Batch, posting_row
    from crawler.store.runs import start_run, steps_pending
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer
    from crawler.ingest.appdump import parse_dump
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting

    path = str(tmp_path / "jobs.db")
    rows = [posting_row(normalize_posting(item)) for seed in sorted(SEEDS.glob("*.txt"))
            for item in parse_dump(seed.read_bytes(), locator=seed.name, fetched_at="2026-11-29T04:00:00+00:00",
                                   as_of="2026-11-29T04:00:00+00:00") if isinstance(item, RawPosting)]

    def run(*, killed: bool = False) -> dict | None:
        db = open_db(path)
        pending = steps_pending(db)
        run_id = start_run(db, "ingest", {"paths": ["seeds"]})
        writer = Writer(db)
        writer.write(Batch(run_id, postings=list(rows)))
        db.close()
        if killed:
            return None
        [report] = runner.finish_jobs([runner.Job("textdump", "ingest", {})], path, [run_id],
                                      [crawled(files=2, found=2, finish_reason="finished")],
                                      {run_id: writer.counts_of(run_id)}, crawled_by=1, workers=1, stale_skills=False, taxonomy=None,
                                      steps_pending=pending)
        return report.steps

    def pending_now() -> bool:
        db = open_db(path)
        try:
            return steps_pending(db)
        finally:
            db.close()

    assert pending_now()  # a new database: the steps have never run
    first = run()
    assert (first["dedupe"]["added"], first["score"]["scored"]) == (2, 2) and not pending_now()
    assert run() == {"dedupe": {"skipped": 1}, "score": {"skipped": 1}, "signals": {
        "ghost_open_long": 0, "ghost_reposted": 0, "ghost_reopened": 0, "ghost_mass_agency": 0, "likely_employers": 0},
        "velocity": {"unchanged": 1}}
    assert not pending_now()
    run(killed=True)
    assert pending_now()

    def fails(database, **kwargs):
        raise steps.StepFailed("score", RuntimeError("disk full"), {"dedupe": {"added": 0}}, "detail")

    monkeypatch.setattr(steps, "after_run", fails)
    assert run() == {"dedupe": {"added": 0}} and pending_now()  # the steps were due, and failed: still due
    monkeypatch.undo()
    after_a_failure = run()
    assert ("skipped" in after_a_failure["dedupe"], after_a_failure["score"]["unchanged"]) == (False, 2)
    assert not pending_now()


# --------------------------------------------------------------------------- an input stored before, parsed again

BIG = ("title,company\n" + "".join(f"CUDA 工程师 {i},甲公司\n" for i in range(40))).encode()
BIG_SHA = hashlib.sha256(BIG).hexdigest()
T0 = "2026-11-29T04:00:00+00:00"


def _input(**fields):
    from normalize.models import RawInput

    return RawInput(**{"source": "tabular", "locator": "big.csv", "sha256": BIG_SHA, "size": len(BIG),
                       "fetched_at": T0, "as_of": T0, **fields})


def _problem(position, reason, sha=BIG_SHA, locator="big.csv"):
    from normalize.models import Quarantined

    return Quarantined(source="tabular", locator=locator, position=position, input_sha256=sha, reason=reason,
                       detail=reason, fetched_at=T0)


HEAD = dict(body=BIG[:64], status="quarantined", error="too large: first 64 B kept")
WHOLE = dict(text=BIG.decode(), encoding="utf-8", status="parsed", postings=40)


@pytest.mark.parametrize("first, then, stored, quarantine", [
    pytest.param((HEAD, [(None, "too_large")]), (WHOLE, []), ("parsed", None, 40, True), [],
                 id="the-head-of-a-file-over-the-cap-gives-way-to-the-whole-file"),
    pytest.param((HEAD, [(None, "too_large")]),
                 (dict(WHOLE, status="quarantined", postings=0, error="no title column"), [(None, "no_mapping")]),
                 ("quarantined", "no title column", 0, True), [(-1, "no_mapping")],
                 id="the-head-gives-way-to-the-whole-file-quarantined-for-another-reason"),
    pytest.param((WHOLE, []), (HEAD, [(None, "too_large")]), ("quarantined", "too large: first 64 B kept", 0, True),
                 [(-1, "too_large")], id="a-whole-file-is-never-replaced-by-its-head"),
    pytest.param((dict(WHOLE, status="partial", postings=38), [(3, "invalid"), (9, "invalid")]),
                 (dict(WHOLE, status="partial", postings=39), [(9, "invalid")]), ("partial", None, 39, True),
                 [(9, "invalid")], id="rows-quarantined-before-and-parsed-now-are-retired"),
    pytest.param((dict(WHOLE, status="quarantined", postings=0, error="no column gives the title"), [(None, "no_mapping")]),
                 (WHOLE, []), ("parsed", None, 40, True), [], id="a-table-that-needed-a-mapping"),
])
def test_an_input_parsed_again_takes_the_outcome_of_its_last_parse(tmp_path, first, then, stored, quarantine):
    """The stored input kept the first parse's status, and its quarantine rows stayed after a later parse stored
    its postings (`ingest --map` after the hint, a larger --max-file-size, `reparse` after a parser fix); the head
    of a file over the size cap stayed its only raw copy."""
    from crawler.store.rows import Batch, input_row, kept_whole, quarantine_row, raw_text
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer

    db = open_db(str(tmp_path / "jobs.db"))
    writer = Writer(db)
    for run_id, (fields, problems) in enumerate((first, then), start=1):
        writer.write(Batch(run_id, inputs=[input_row(_input(**fields))],
                           quarantine=[quarantine_row(_problem(*p)) for p in problems]))
    status, error, postings, text, text_zstd, body, encoding = db.execute(
        "SELECT status, error, postings, text, text_zstd, body, encoding FROM raw_inputs").fetchone()
    whole = kept_whole({"sha256": BIG_SHA, "text": raw_text(text, text_zstd), "body": body, "encoding": encoding})
    assert (status, error, postings, whole == BIG) == stored
    assert db.execute("SELECT position, reason FROM quarantine ORDER BY position").fetchall() == quarantine
    assert db["raw_inputs"].count == 1


@pytest.mark.parametrize("reader, left", [
    pytest.param(None, [("other.csv", "not_regular")], id="a-file-read-whole"),
    pytest.param({"format": "csv", "streamed": False}, [("other.csv", "not_regular")], id="a-table-read-whole"),
    pytest.param({"format": "csv", "streamed": True}, [("big.csv", "invalid"), ("other.csv", "not_regular")],
                 id="a-block-of-a-streamed-table-retires-only-the-file-not-read"),
])
def test_a_new_content_at_a_locator_retires_the_quarantine_rows_of_what_was_there(tmp_path, reader, left):
    """A file that could not be read (a FIFO then), or that was edited to fix its bad rows, stayed quarantined
    after its new content was stored. A streamed table has one input per block at one locator: a block retires
    no other block's rows."""
    from crawler.store.rows import NOTHING_READ, Batch, input_row, quarantine_row
    from crawler.store.schema import open_db
    from crawler.store.writer import Writer

    db = open_db(str(tmp_path / "jobs.db"))
    writer = Writer(db)
    old = hashlib.sha256(b"the file before it was edited").hexdigest()
    writer.write(Batch(1, quarantine=[quarantine_row(_problem(None, "not_regular", sha=NOTHING_READ)),
                                      quarantine_row(_problem(None, "not_regular", sha=NOTHING_READ, locator="other.csv"))]))
    writer.write(Batch(2, inputs=[input_row(_input(**dict(WHOLE, status="partial"), sha256=old))],
                       quarantine=[quarantine_row(_problem(7, "invalid", sha=old))]))
    writer.write(Batch(3, inputs=[input_row(_input(**WHOLE, reader=reader))]))
    assert db.execute("SELECT locator, reason FROM quarantine ORDER BY locator").fetchall() == left
    assert db["raw_inputs"].count == 2  # the earlier content stays stored


@pytest.mark.slow
def test_following_the_hint_of_a_quarantined_table_leaves_no_stale_quarantine_row(tmp_path):
    """`ingest` quarantined the table and said `use --map`; the run with --map stored its postings, yet the
    quarantine table and the raw input still said it was quarantined."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "x.csv").write_text("job_name,corp\nCUDA 工程师,甲公司\n", encoding="utf-8")
    db = tmp_path / "jobs.db"
    first = run_cli("ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF)
    assert first.returncode == 1
    fixed = run_cli("ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF,
                    "--map", "title=job_name", "--map", "company=corp")
    assert fixed.returncode == 0, fixed.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT title FROM postings").fetchall() == [("CUDA 工程师",)]
        assert conn.execute("SELECT status, error, postings FROM raw_inputs").fetchall() == [("parsed", None, 1)]
        assert conn.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
