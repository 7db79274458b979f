"""``jobcrawl replay GIT_DIR FILE``: each committed version of a file, oldest first, ingested at its committer date
as the complete listing of its source — a git-scraping history becomes a timeline."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import problem_lines, run_cli

pytestmark = pytest.mark.slow

ROWS = {k: {"id": k.lower(), "title": f"{t} Engineer", "company": "Acme", "location": "上海"}
        for k, t in (("A", "CUDA"), ("B", "Compiler"), ("C", "Inference"), ("D", "Kernel"), ("E", "Infra"))}
# committer dates (+08:00) and, in UTC, as first_seen / last_seen / closed_at store them
C1, C2, C3, C4, C5, C6, C7, C8 = (f"2026-03-{d}T09:00:00+08:00" for d in ("02", "09", "10", "16", "17", "23", "30",
                                                                          "31"))
U1, U2, U3, U4, U6, U7, U8 = (f"2026-03-{d}T01:00:00+00:00" for d in ("02", "09", "10", "16", "23", "30", "31"))


def _git(repo: Path, *args: str, at: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "scraper", "GIT_AUTHOR_EMAIL": "s@example.org",
           "GIT_COMMITTER_NAME": "scraper", "GIT_COMMITTER_EMAIL": "s@example.org"}
    if at:
        env.update(GIT_COMMITTER_DATE=at, GIT_AUTHOR_DATE=at)
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                          text=True).stdout


def _commit(repo: Path, at: str, rows: list[str] | None = None, *, chmod: bool = False, other: bool = False) -> str:
    board = repo / "boards" / "acme.jsonl"
    if other:
        (repo / "README.md").write_text(at)
    elif rows is None:
        _git(repo, "rm", "-q", "boards/acme.jsonl")
    else:
        board.parent.mkdir(exist_ok=True)
        board.write_text("".join(json.dumps(ROWS[r], ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    if chmod:
        board.chmod(0o755)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", at, at=at)
    return _git(repo, "rev-parse", "HEAD").strip()


def _sql(db: Path, query: str, *args) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query, args).fetchall()


def _timeline(db: Path) -> dict[str, tuple]:
    return {sid.upper(): (first, last, closed) for sid, first, last, closed in _sql(
        db, "SELECT source_id, first_seen, last_seen, closed_at FROM postings WHERE source = 'acme'")}


def _replay(repo: Path, db: Path, *extra: str):
    return run_cli("replay", str(repo), "boards/acme.jsonl", "--db", str(db), "--source", "acme", *extra)


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A git-scraping history of one board, replayed once: (repo, db, the replay's process, commits)."""
    repo = tmp_path_factory.mktemp("board-history")
    _git(repo, "init", "-q")
    _git(repo, "config", "core.fileMode", "true")
    commits = [
        _commit(repo, C1, ["A", "B", "C"]),
        _commit(repo, C2, ["A", "C", "D"]),
        _commit(repo, C3, ["A", "C", "D"], chmod=True),  # same bytes, new mode: seen again, not parsed
        _commit(repo, C4, ["A", "B", "D"]),
        _commit(repo, C5, other=True),                    # another file: not a version of the board
        _commit(repo, C6, None),                          # the board deleted: skipped
        _commit(repo, C7, ["B", "E"]),
    ]
    db = repo.parent / "jobs.db"
    return repo, db, _replay(repo, db), commits


def test_each_posting_gets_the_commit_times_it_appeared_and_vanished_at(history):
    _, db, proc, _ = history
    assert proc.returncode == 0, proc.stderr
    assert _timeline(db) == {
        "A": (U1, U4, U7),
        "B": (U1, U7, None),   # missing at C2, back at C4
        "C": (U1, U3, U4),
        "D": (U2, U4, U7),     # seen again at C3 (the same bytes)
        "E": (U7, U7, None),
    }
    assert _sql(db, "SELECT p.source_id, e.event, e.at FROM posting_events e JOIN postings p ON p.id = e.posting_id"
                    " WHERE e.event IN ('closed', 'reopened') ORDER BY e.at, p.source_id") == [
        ("b", "closed", U2), ("b", "reopened", U4), ("c", "closed", U4), ("a", "closed", U7), ("d", "closed", U7)]


def test_each_version_is_a_run_and_the_unchanged_one_parsed_nothing(history):
    _, db, _, commits = history
    rows = _sql(db, "SELECT json_extract(args, '$.commit'), json_extract(args, '$.time'), status, files, found, new,"
                    " updated, unchanged, closed, reopened, json_extract(stats, '$.\"jobcrawl/rows\"'),"
                    " json_extract(args, '$.same_as_before') FROM runs WHERE kind = 'ingest' ORDER BY id")
    c1, c2, c3, c4, _, _, c7 = commits
    assert rows == [
        (c1, U1, "ok", 1, 3, 3, 0, 0, 0, 0, 3, None),
        (c2, U2, "ok", 1, 3, 1, 0, 2, 1, 0, 3, None),
        (c3, U3, "ok", 1, 3, 0, 0, 3, 0, 0, None, 1),  # no table read, no row parsed: the open postings seen again
        (c4, U4, "ok", 1, 3, 0, 0, 3, 1, 1, 3, None),
        (c7, U7, "ok", 1, 2, 1, 0, 1, 2, 0, 2, None),
    ]


def test_the_summary_says_what_was_replayed_and_skipped(history):
    repo, _, proc, commits = history
    assert proc.stdout.splitlines() == [
        f"replayed 5 of 6 versions of boards/acme.jsonl into source acme ({commits[0][:7]} {C1} → "
        f"{commits[6][:7]} {C7})",
        "postings: new 5 · updated 0 · unchanged 9 · closed 4 · reopened 1 · quarantined 0 · versions: 1 same as "
        "the version before, not parsed, 1 deleted",
    ]


@pytest.fixture(scope="module")
def resumed(history, tmp_path_factory):
    """The history replayed again (nothing new), then once more after one more commit."""
    repo, db, _, _ = history
    again = _replay(repo, db)
    runs = _sql(db, "SELECT count(*) FROM runs")[0][0]
    commit = _commit(repo, C8, ["B", "C"])
    return again, runs, _replay(repo, db), commit


def test_a_second_replay_ingests_only_the_new_commits(history, resumed):
    _, db, _, _ = history
    again, runs, later, commit = resumed
    assert (again.returncode, again.stdout.splitlines()[0]) == (
        0, "replayed 0 of 6 versions of boards/acme.jsonl into source acme")
    assert runs == 5  # the first replay's runs, none added by the second
    assert (later.returncode, later.stdout.splitlines()[0]) == (
        0, f"replayed 1 of 7 versions of boards/acme.jsonl into source acme ({commit[:7]} {C8})")
    assert _timeline(db) == {"A": (U1, U4, U7), "B": (U1, U8, None), "C": (U1, U8, None), "D": (U2, U4, U7),
                             "E": (U7, U7, U8)}


def test_a_rebuild_replays_the_whole_history_to_the_same_timeline(history, resumed, tmp_path):
    repo, db, _, _ = history
    copy = tmp_path / "copy.db"
    shutil.copy(db, copy)
    proc = _replay(repo, copy, "--rebuild", "--quiet")
    assert (proc.returncode, proc.stdout, problem_lines(proc.stderr)) == (0, "", [])
    assert _timeline(copy) == _timeline(db)


@pytest.mark.parametrize("case", [
    lambda repo, tmp: ((tmp / "missing", "boards/acme.jsonl"), f"{tmp}/missing: no such folder"),
    lambda repo, tmp: ((tmp, "boards/acme.jsonl"),
                       f"git rev-parse in {tmp}: fatal: not a git repository (or any of the parent directories): .git"),
    lambda repo, tmp: ((repo, "boards/acme.jsonl", "--rev", "nightly"), f"nightly: no such revision in {repo}"),
    lambda repo, tmp: ((repo, "boards/lever.json"),
                       f"boards/lever.json: no commit of it in {repo} (from HEAD); paths are relative to the "
                       "repository's top"),
], ids=["no-folder", "no-repository", "no-revision", "no-path"])
def test_a_repository_revision_or_path_git_does_not_know_is_one_line(history, tmp_path, case):
    repo, _, _, _ = history
    args, error = case(repo, tmp_path)
    proc = run_cli("replay", *map(str, args), "--db", str(tmp_path / "j.db"))
    assert (proc.returncode, proc.stdout, problem_lines(proc.stderr)) == (2, "", [f"jobcrawl replay: {error}"])
    assert not (tmp_path / "j.db").exists()


def test_the_watches_hear_once_after_the_last_version_of_the_postings_open_then(tmp_path):
    """A watch made before the replay is told of the jobs open at the end (A, D, E), not of B and C, which the
    history opened and closed again."""
    from receivers import Receiver

    repo = tmp_path / "history"
    repo.mkdir()
    _git(repo, "init", "-q")
    for at, rows in ((C1, ["A", "B", "C"]), (C2, ["A", "C", "D"]), (C4, ["A", "D", "E"])):
        _commit(repo, at, rows)
    db, config = tmp_path / "jobs.db", tmp_path / "alerts.toml"
    with Receiver() as hook:
        config.write_text(f'[destinations.hook]\ntype = "webhook"\nurl = "{hook.url("/jobs")}"\n', encoding="utf-8")
        run_cli("watch", "add", "all", "--db", str(db), "--config", str(config), check=True)
        proc = run_cli("replay", str(repo), "boards/acme.jsonl", "--db", str(db), "--source", "acme",
                       env={"JOBCRAWL_ALERTS_CONFIG": str(config)}, check=True)
        posted = [sorted(p["title"] for p in json.loads(r.body)["postings"]) for r in hook.requests]
    assert posted == [["CUDA Engineer", "Infra Engineer", "Kernel Engineer"]]
    assert proc.stdout.splitlines()[-1] == "alerts: new matches all 3 · delivered hook 3"
    assert _sql(db, "SELECT count(*) FROM watch_matches") == [(3,)]
