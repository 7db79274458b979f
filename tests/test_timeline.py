"""A timeline from dated snapshots: ``jobcrawl ingest --source NAME --complete --as-of TIME`` sets first_seen,
last_seen and closing to the run's time, closes postings missing from a complete listing and reopens those that
come back; runs of a source go forward in time, ``--rebuild`` replays it from scratch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import problem_lines, run_cli, sql, write_jsonl

pytestmark = pytest.mark.slow

W1, W2, W3, W4, W5 = (f"2026-{d}T00:00:00+00:00" for d in ("01-05", "01-12", "01-19", "01-26", "02-02"))
ROWS = {
    "A": {"id": "a", "title": "CUDA Engineer", "company": "Acme", "location": "上海"},
    "B": {"id": "b", "title": "ML Compiler Engineer", "company": "Acme", "location": "北京"},
    "C": {"id": "c", "title": "Inference Engineer", "company": "Acme", "location": "北京"},
    "D": {"id": "d", "title": "GPU Kernel Engineer", "company": "Acme", "location": "深圳"},
    "E": {"id": "e", "title": "Training Infra Engineer", "company": "Acme", "location": "杭州"},
}
A_CHANGED = {**ROWS["A"], "title": "Senior CUDA Engineer"}
NO_TITLE = {"id": "x", "company": "Acme"}  # quarantined: no title, no description


def _ingest(db: Path, *paths: Path, at: str, extra: tuple[str, ...] = ("--complete",), source: str = "acme",
            check: bool = True):
    return run_cli("ingest", *map(str, paths), "--db", str(db), "--source", source, "--as-of", at, *extra,
                   check=check)


def _timeline(db: Path) -> dict[str, tuple]:
    return {sid.upper(): (first, last, closed) for sid, first, last, closed in sql(
        db, "SELECT source_id, first_seen, last_seen, closed_at FROM postings WHERE source = 'acme'")}


@pytest.fixture(scope="module")
def weeks(tmp_path_factory) -> Path:
    """Five weekly snapshots of one board under different file names: W2 in two files read by two workers, W4
    with a quarantined row (an incomplete listing), W5 named like no other."""
    tmp = tmp_path_factory.mktemp("weeks")
    db = tmp / "jobs.db"
    _ingest(db, write_jsonl(tmp / "w1" / "board.jsonl", [ROWS["A"], ROWS["B"], ROWS["C"]]), at=W1)
    _ingest(db, write_jsonl(tmp / "w2" / "part1.jsonl", [ROWS["A"], ROWS["C"]]),
            write_jsonl(tmp / "w2" / "part2.jsonl", [ROWS["D"]]), at=W2, extra=("--complete", "--workers", "2"))
    _ingest(db, write_jsonl(tmp / "w3" / "board.jsonl", [A_CHANGED, ROWS["B"], ROWS["D"]]), at=W3)
    fourth = _ingest(db, write_jsonl(tmp / "w4" / "board.jsonl", [A_CHANGED, NO_TITLE]), at=W4, check=False)
    assert fourth.returncode == 1, fourth.stderr
    _ingest(db, write_jsonl(tmp / "w5" / "acme-2026-02-02.jsonl", [ROWS["B"], ROWS["D"], ROWS["E"]]), at=W5)
    return db


def test_each_posting_s_first_seen_last_seen_and_closed_at_follow_the_snapshots(weeks):
    assert _timeline(weeks) == {
        "A": (W1, W4, W5),    # changed at W3 (a new version), last in W4, missing from W5
        "B": (W1, W5, None),  # missing from W2, back in W3
        "C": (W1, W2, W3),
        "D": (W2, W5, None),  # first in W2's second file
        "E": (W5, W5, None),
    }


def test_closing_and_reopening_are_events_at_the_snapshot_times(weeks):
    events = sql(weeks, "SELECT p.source_id, e.event, e.at FROM posting_events e JOIN postings p ON p.id = e.posting_id"
                         " WHERE e.event IN ('closed', 'reopened') ORDER BY e.at, p.source_id, e.id")
    assert events == [("b", "closed", W2), ("b", "reopened", W3), ("c", "closed", W3), ("a", "closed", W5)]


def test_each_run_records_its_time_source_and_what_it_closed(weeks):
    rows = sql(weeks, "SELECT source, json_extract(args, '$.time'), json_extract(args, '$.complete'), new, updated,"
                       " unchanged, closed, reopened, quarantined FROM runs WHERE kind = 'ingest' ORDER BY id")
    assert rows == [
        ("acme", W1, 1, 3, 0, 0, 0, 0, 0),
        ("acme", W2, 1, 1, 0, 2, 1, 0, 0),
        ("acme", W3, 1, 0, 1, 2, 1, 1, 0),
        ("acme", W4, 1, 0, 0, 1, 0, 0, 1),  # a quarantined row: the listing may be incomplete, nothing closed
        ("acme", W5, 1, 1, 0, 2, 1, 0, 0),
    ]


def test_the_listing_holds_every_posting_of_the_source_with_its_own_times(weeks):
    # W4's listing was incomplete: A was last in a complete listing in W3
    assert sorted(sql(weeks, "SELECT p.source_id, l.first_seen, l.last_seen, l.closed_at FROM listing_postings l"
                              " JOIN postings p ON p.key = l.key WHERE l.listing = 'ingest:acme'")) == [
        ("a", W1, W3, W5), ("b", W1, W5, None), ("c", W1, W2, W3), ("d", W2, W5, None), ("e", W5, W5, None)]


def test_a_changed_posting_keeps_its_first_seen_and_its_earlier_version(weeks):
    assert sql(weeks, "SELECT p.title, p.version, v.version, v.superseded_at FROM postings p"
                       " JOIN posting_versions v ON v.posting_id = p.id WHERE p.source_id = 'a'") == [
        ("Senior CUDA Engineer", 2, 1, W3)]


def test_an_earlier_as_of_is_refused_in_one_line_and_stores_nothing(weeks, tmp_path):
    runs = sql(weeks, "SELECT count(*) FROM runs")
    late = _ingest(weeks, write_jsonl(tmp_path / "late.jsonl", [ROWS["A"]]), at="2026-01-30T08:00:00+08:00", check=False)
    assert (late.returncode, late.stdout, problem_lines(late.stderr)) == (2, "", [
        "jobcrawl ingest: --as-of 2026-01-30T00:00:00+00:00 is earlier than the latest run of source 'acme' "
        f"({W5}): its runs go forward in time (--rebuild replays it from scratch)"])
    assert sql(weeks, "SELECT count(*) FROM runs") == runs


def test_another_source_has_its_own_order_and_closes_nothing_of_acme(weeks, tmp_path):
    db = tmp_path / "copy.db"
    shutil.copy(weeks, db)
    _ingest(db, write_jsonl(tmp_path / "other.jsonl", [ROWS["A"]]), at=W1, source="other-board")
    assert _timeline(db) == _timeline(weeks)
    assert sql(db, "SELECT source, first_seen, closed_at FROM postings WHERE source = 'other-board'") == [
        ("other-board", W1, None)]


@pytest.fixture(scope="module")
def rebuilt(weeks, tmp_path_factory) -> Path:
    """The weekly database, its source replayed from scratch from an earlier week: {A, D}, then {A, B}."""
    tmp = tmp_path_factory.mktemp("rebuilt")
    db = tmp / "jobs.db"
    shutil.copy(weeks, db)
    _ingest(db, write_jsonl(tmp / "w0.jsonl", [A_CHANGED, ROWS["D"]]), at="2025-12-29T00:00:00Z",
            extra=("--complete", "--rebuild"))
    _ingest(db, write_jsonl(tmp / "w1.jsonl", [A_CHANGED, ROWS["B"]]), at="2026-01-01T00:00:00Z")
    return db


def test_a_rebuild_restarts_the_timeline_of_the_source(rebuilt):
    w0, w1 = "2025-12-29T00:00:00+00:00", "2026-01-01T00:00:00+00:00"
    assert _timeline(rebuilt) == {
        "A": (w0, w1, None),
        "B": (w1, w1, None),    # in no snapshot before w1: its timeline starts there
        "C": (W1, W2, w0),      # in none of the rebuilt snapshots: closed at the first, its times kept
        "D": (w0, w0, w1),
        "E": (W5, W5, w0),
    }
    events = sql(rebuilt, "SELECT p.source_id, e.event, e.at FROM posting_events e JOIN postings p"
                           " ON p.id = e.posting_id WHERE e.event IN ('closed', 'reopened') ORDER BY e.at, p.source_id")
    assert events == [("c", "closed", w0), ("e", "closed", w0), ("d", "closed", w1)]


def test_after_a_rebuild_runs_are_ordered_from_it(rebuilt, tmp_path):
    late = _ingest(rebuilt, write_jsonl(tmp_path / "x.jsonl", [ROWS["A"]]), at="2025-12-30T00:00:00Z", check=False)
    assert (late.returncode, problem_lines(late.stderr)[0].split(": its runs")[0]) == (
        2, "jobcrawl ingest: --as-of 2025-12-30T00:00:00+00:00 is earlier than the latest run of source 'acme' "
           "(2026-01-01T00:00:00+00:00)")


@pytest.mark.parametrize("options, error", [
    (("--complete",), "--complete needs --source NAME (the source whose listing the files are)"),
    (("--rebuild",), "--rebuild needs --source NAME (the source whose listing the files are)"),
    (("--source", "textdump"), "Invalid value for --source: textdump is the source of files without --source: "
                               "name the board (e.g. greenhouse-acme)"),
    (("--source", "a b"), "Invalid value for --source: 'a b' is not a source name (letters, digits and "
                          "._:/@+-, e.g. greenhouse-acme)"),
], ids=["complete-without-source", "rebuild-without-source", "reserved-name", "bad-name"])
def test_snapshot_options_are_checked(tmp_path, options, error):
    proc = run_cli("ingest", str(write_jsonl(tmp_path / "s.jsonl", [ROWS["A"]])), "--db", str(tmp_path / "j.db"), *options)
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (2, f"Error: {error}")
    assert not (tmp_path / "j.db").exists()


def test_a_named_source_is_parsed_again_by_reparse(weeks, tmp_path):
    db = tmp_path / "copy.db"
    shutil.copy(weeks, db)
    proc = run_cli("reparse", "--db", str(db), "--source", "acme")
    # the newest input of each file name: board.jsonl of W4 (its row without a title again), part1, part2, W5's
    assert (proc.returncode, proc.stdout.splitlines()[0], problem_lines(proc.stderr)) == (
        1, "files read 4 · postings found 8 · new 0 · updated 0 · unchanged 5 · quarantined 1",
        ["quarantined: board.jsonl#2: line 2: no title"])
    assert _timeline(db) == _timeline(weeks)


def test_a_saved_greenhouse_answer_is_read_as_a_crawl_reads_it(tmp_path):
    """A git-scraped Greenhouse board: its URL (absolute_url), id, pay; the next snapshot without a job closes it."""
    from conftest import ROOT

    answer = json.loads((ROOT / "fixtures/web/ats/greenhouse_gitlab_jobs.json").read_text(encoding="utf-8"))
    db = tmp_path / "jobs.db"
    (tmp_path / "1").mkdir()
    (tmp_path / "1" / "gitlab.json").write_text(json.dumps(answer), encoding="utf-8")
    _ingest(db, tmp_path / "1" / "gitlab.json", at=W1, source="gh-gitlab")
    answer["jobs"] = answer["jobs"][1:]
    (tmp_path / "2").mkdir()
    (tmp_path / "2" / "gitlab.json").write_text(json.dumps(answer), encoding="utf-8")
    _ingest(db, tmp_path / "2" / "gitlab.json", at=W2, source="gh-gitlab")
    assert sql(db, "SELECT source, source_id, url, company, title, salary_raw, first_seen, last_seen, closed_at"
                    " FROM postings ORDER BY id") == [
        ("gh-gitlab", "8503792002", "https://job-boards.greenhouse.io/gitlab/jobs/8503792002", "GitLab",
         "Account Executive - Italy", None, W1, W1, W2),
        ("gh-gitlab", "8565469002", "https://job-boards.greenhouse.io/gitlab/jobs/8565469002", "GitLab",
         "AI Engineer", "$108,400—$129,600 USD", W1, W2, None)]
    assert sql(db, "SELECT DISTINCT json_extract(reader, '$.page') FROM raw_inputs") == [
        ("crawler.web.pages.greenhouse.GreenhousePage",)]
