"""How processes start: a run's, forked from the server of the run path (context); a helper's, spawned
(call_in_fresh_process: its result or its failure); settle_gc."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

import pytest

from conftest import ROOT
from crawler.procs import ChildFailed, call_in_fresh_process, context, with_environment


def test_returns_the_result_computed_in_another_process():
    assert call_in_fresh_process(divmod, 17, 5) == (3, 2)
    assert call_in_fresh_process(os.getpid) != os.getpid()


def _in_child(expression: str):
    """``expression``'s value in a process of the run (crawler/procs.py ``context``)."""
    func, args = with_environment(eval, expression)
    with ProcessPoolExecutor(1, mp_context=context()) as pool:
        return pool.submit(func, *args).result()


def test_a_run_process_is_forked_with_the_run_path_imported_and_the_taxonomy_built():
    assert _in_child("sorted({'crawler.pipelines', 'crawler.ingest.textdump', 'crawler.score.step'}"
                     " & set(__import__('sys').modules))") == [
        "crawler.ingest.textdump", "crawler.pipelines", "crawler.score.step"]
    assert _in_child("__import__('normalize.skills').skills._load.cache_info().currsize") == 1


def test_a_run_process_has_the_environment_and_folder_of_now(monkeypatch, tmp_path):
    monkeypatch.setenv("JOBCRAWL_PROBE", "first")
    assert _in_child("__import__('os').getenv('JOBCRAWL_PROBE')") == "first"  # the server runs by now
    monkeypatch.setenv("JOBCRAWL_PROBE", "second")
    monkeypatch.chdir(tmp_path)
    assert _in_child("__import__('os').getenv('JOBCRAWL_PROBE')") == "second"
    assert _in_child("__import__('os').getcwd()") == str(tmp_path)
    monkeypatch.delenv("JOBCRAWL_PROBE")
    assert _in_child("__import__('os').getenv('JOBCRAWL_PROBE')") is None


def test_a_helper_process_is_spawned_with_only_what_it_needs():
    assert call_in_fresh_process(eval, "'crawler.pipelines' in __import__('sys').modules") is False


_CHURN = """
def rss_mb():
    with open('/proc/self/status') as status:
        return int(next(line for line in status if line.startswith('VmRSS')).split()[1]) // 1024
base, kept = rss_mb(), []
for _ in range(6):  # a 16 MB block made and freed, a small one kept after each
    block = bytearray(16 << 20)
    kept.append(bytearray(64))
    del block
with open(OUT, 'w') as out:
    out.write(str(rss_mb() - base))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_helper_process_returns_the_large_blocks_it_frees_to_the_system(tmp_path):
    # glibc's default keeps such blocks resident once freed (16 MB more here): the dedupe planner's case.
    grown = tmp_path / "grown"
    call_in_fresh_process(exec, _CHURN.replace("OUT", repr(str(grown))))
    assert int(grown.read_text()) < 4


def test_the_dedupe_planner_reads_without_sqlite_utils_or_the_models(seeded_db, tmp_path):
    path = tmp_path / "jobs.db"
    shutil.copy(seeded_db, path)
    expression = (f"(__import__('crawler.dedupe.step').dedupe.step.plan_at({str(path)!r}),"
                  " sorted({'sqlite_utils', 'pydantic'} & set(__import__('sys').modules)))")
    plan, imported = call_in_fresh_process(eval, expression)
    assert (plan.pending, imported) == ((0, 0), [])


def test_an_exception_in_the_child_is_raised_with_its_traceback():
    with pytest.raises(ChildFailed) as err:
        call_in_fresh_process(int, "seventeen", name="parse")
    assert str(err.value).startswith("parse failed:\nTraceback")
    assert "ValueError: invalid literal for int() with base 10: 'seventeen'" in str(err.value)


def test_a_child_that_dies_is_reported_with_its_exit_code():
    with pytest.raises(ChildFailed, match=r"^steps died \(exit code 3\)$"):
        call_in_fresh_process(os._exit, 3, name="steps")


@pytest.mark.parametrize("freeze, frozen", [pytest.param(True, True, id="freeze"), pytest.param(False, False, id="thresholds-only")])
def test_settle_gc_freezes_what_is_alive_and_collects_gen_0_less_often(freeze, frozen):
    # In a fresh Python: freezing is for a process of this project's own, not for the test runner.
    script = ("import gc, json; from crawler.procs import settle_gc, GC_THRESHOLDS\n"
              f"before = gc.get_freeze_count(); settle_gc(freeze={freeze})\n"
              "print(json.dumps([before, gc.get_freeze_count() > 1000, gc.get_threshold() == GC_THRESHOLDS]))")
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert json.loads(proc.stdout) == [0, frozen, True], proc.stderr


MB = 2**20


@pytest.mark.parametrize("workers, input_bytes, shards, expected", [
    pytest.param(1, 50 * MB, 1, 0, id="one-worker-reads-here"),
    pytest.param(2, 8 * MB, 2, 0, id="small-ingest-reads-here"),
    pytest.param(2, 8 * MB + 1, 2, 2, id="larger-ingest-in-two-workers"),
    pytest.param(4, 9 * MB, 1, 1, id="one-large-file-in-one-worker"),
    pytest.param(2, None, 1, 1, id="a-crawl-of-one-source-in-a-worker"),
    pytest.param(8, None, 3, 3, id="a-crawl-in-a-worker-per-shard"),
])
def test_when_reading_starts_worker_processes(workers, input_bytes, shards, expected):
    from crawler.procs import reading

    assert reading(workers, input_bytes, shards) == expected


@pytest.mark.parametrize("workers, postings, active, expected", [
    pytest.param(1, 90_000, 90_000, (False, 1, 0), id="one-worker-all-here"),
    pytest.param(2, 4_999, 4_999, (False, 1, 0), id="small-corpus-here"),
    pytest.param(2, 5_000, 5_000, (True, 2, 10), id="dedupe-apart-scoring-in-two-yielding-workers"),
    pytest.param(2, 30_000, 4_999, (True, 1, 0), id="few-active-scoring-here"),
    pytest.param(2, 30_000, 20_000, (True, 2, 10), id="scoring-in-two-yielding-workers"),
    pytest.param(8, 30_000, 20_000, (True, 2, 10), id="scoring-at-most-two"),
])
def test_when_the_corpus_steps_start_processes(workers, postings, active, expected):
    from crawler.procs import corpus

    got = corpus(workers, postings, active)
    assert (got.dedupe_apart, got.scoring, got.niceness) == expected


@pytest.mark.parametrize("workers, active, expected", [
    pytest.param(1, 10**6, 1, id="one-worker"),
    pytest.param(2, 4_999, 1, id="few"),
    pytest.param(2, 5_000, 2, id="pool"),
    pytest.param(3, 5_000, 2, id="at-most-two"),
])
def test_when_scoring_alone_starts_processes(workers, active, expected):
    from crawler.procs import scoring

    assert scoring(workers, active) == expected
