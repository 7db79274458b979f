"""A corpus step (dedupe, scoring) that fails after the crawl: one clear line, the run recorded as
failed, the postings kept, and the step re-runnable by the command the message names.

The failures are real SQLite errors: a trigger that aborts the step's inserts.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from crawler.procs import Corpus

from conftest import AS_OF, SEEDS, problem_lines, run_cli
from crawler.store.schema import open_db
from crawler.run.steps import StepFailed, after_run

pytestmark = pytest.mark.slow  # each test ingests through the real CLI first

REFUSE_CLUSTERS = ("CREATE TRIGGER refuse_clusters BEFORE UPDATE OF cluster_id ON dedupe_signatures "
                   "BEGIN SELECT RAISE(ABORT, 'clusters refused by the test'); END")
CLUSTERED = "SELECT count(cluster_id) FROM dedupe_signatures"
REFUSE_SCORES = ("CREATE TRIGGER refuse_scores BEFORE INSERT ON evaluations WHEN NEW.scorer = 'jobcrawl-v1' "
                 "BEGIN SELECT RAISE(ABORT, 'evaluations refused by the test'); END")


def _with_trigger(path: Path, trigger: str) -> None:
    open_db(str(path)).close()  # the schema, as the first run would create it
    with sqlite3.connect(path) as conn:
        conn.execute(trigger)


def _count(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute(sql).fetchone()[0]


def test_a_failing_dedupe_is_one_line_and_a_failed_run_and_can_be_rerun(db_path):
    _with_trigger(db_path, REFUSE_CLUSTERS)
    proc = run_cli("ingest", str(SEEDS), "--db", str(db_path), "--as-of", AS_OF)

    assert proc.returncode == 3
    assert "Traceback" not in proc.stderr + proc.stdout
    assert problem_lines(proc.stderr) == [
        "failed: the dedupe step failed: sqlite3.IntegrityError: clusters refused by the test; the postings are stored: "
        f"run `jobcrawl dedupe --db {db_path}` to retry"]
    assert proc.stdout.splitlines()[0] == (
        "files read 2 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 0")
    with sqlite3.connect(db_path) as conn:
        status, finished, stats = conn.execute("SELECT status, finished, stats FROM runs WHERE kind = 'ingest'").fetchone()
    assert status == "failed" and finished is not None
    failure = json.loads(stats)["jobcrawl/step_failed"]
    assert failure["step"] == "dedupe"
    assert failure["error"].startswith("Traceback") and "clusters refused by the test" in failure["error"]
    assert _count(db_path, "SELECT count(*) FROM postings") == 2
    assert _count(db_path, CLUSTERED) == 0
    assert _count(db_path, "SELECT count(*) FROM evaluations WHERE scorer = 'jobcrawl-v1'") == 0  # never reached

    with sqlite3.connect(db_path) as conn:
        conn.execute("DROP TRIGGER refuse_clusters")
    assert run_cli("dedupe", "--db", str(db_path), check=True).stdout.startswith("dedupe: 2 clustered")
    run_cli("score", "--db", str(db_path), check=True)
    assert _count(db_path, CLUSTERED) == 2
    assert _count(db_path, "SELECT count(*) FROM evaluations WHERE scorer = 'jobcrawl-v1'") == 2


def test_a_failing_score_keeps_the_dedupe_it_follows(db_path):
    _with_trigger(db_path, REFUSE_SCORES)
    proc = run_cli("ingest", str(SEEDS), "--db", str(db_path), "--as-of", AS_OF)

    assert proc.returncode == 3
    assert problem_lines(proc.stderr) == [
        "failed: the score step failed: sqlite3.IntegrityError: evaluations refused by the test; the postings are stored: "
        f"run `jobcrawl score --db {db_path}` to retry"]
    assert "dedupe: 2 clustered" in proc.stdout
    assert _count(db_path, CLUSTERED) == 2
    assert _count(db_path, "SELECT count(*) FROM evaluations WHERE scorer = 'jobcrawl-v1'") == 0  # one transaction


@pytest.mark.parametrize("fresh_process", [False, True], ids=["in-process", "fresh-process"])
def test_after_run_names_the_step_and_keeps_the_error(tmp_path, fresh_process):
    path = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM cluster_members")
        conn.execute("DELETE FROM clusters")
        conn.execute("DELETE FROM dedupe_signatures")
        conn.execute(REFUSE_CLUSTERS)
    database = open_db(str(path))
    try:
        with pytest.raises(StepFailed) as failed:
            after_run(database, processes=Corpus(dedupe_apart=fresh_process))
    finally:
        database.close()
    assert str(failed.value) == "the dedupe step failed: sqlite3.IntegrityError: clusters refused by the test"
    assert failed.value.step == "dedupe" and failed.value.steps == {}
    # The traceback of the process that ran the step (the child's, in a fresh process) names the dedupe code.
    assert failed.value.detail.count("Traceback (most recent call last)") == 1 + fresh_process
    assert 'crawler/dedupe/step.py", line' in failed.value.detail
