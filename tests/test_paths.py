"""Database paths holding characters that mean something in a SQLite URI (#, ?, %): every read-only
connection (crawler.store.readonly_uri) opens that file, not a path cut at the first of them."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import urllib.request
from pathlib import Path

import pytest

from conftest import AS_OF, SEEDS, run_cli, start_serve
from crawler.serve.app import make_datasette
from crawler.store import readonly_uri
from crawler.store.schema import open_db
from crawler.files import InputError, resolve_inputs
from crawler.score.step import score_corpus


@pytest.fixture(scope="module")
def odd_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("paths") / "jobs #1 ?x=y %20"
    folder.mkdir()
    path = folder / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    return path


def test_the_uri_names_the_file(odd_db):
    with sqlite3.connect(readonly_uri(odd_db), uri=True) as conn:
        assert conn.execute("SELECT count(*) FROM postings").fetchone() == (2,)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("DELETE FROM postings")


def test_open_db_readonly(odd_db):
    database = open_db(odd_db, readonly=True)
    try:
        assert database["postings"].count == 2
    finally:
        database.close()


def test_scoring_workers_read_the_database(odd_db):
    database = open_db(odd_db)
    try:
        result = score_corpus(database, workers=2, force=True)  # the workers open their own read-only connections
    finally:
        database.close()
    assert result["scored"] == 2


@pytest.mark.parametrize("immutable", [True, False], ids=["immutable", "read-only"])
def test_datasette_serves_the_file_through_a_plain_link(odd_db, immutable, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    ds = make_datasette(odd_db, immutable=immutable)
    served = Path(ds.get_database("jobs").path)
    assert served.is_symlink() and served.resolve() == odd_db.resolve()
    assert served.parent.parent == tmp_path / "cache" / "jobcrawl" / "serve"
    assert make_datasette(odd_db).get_database("jobs").path == str(served)  # one link per database, kept
    response = asyncio.run(ds.client.get("/jobs/postings.json?_shape=array&_col=title&_sort=id"))
    assert response.status_code == 200
    assert [r["title"] for r in response.json()] == ["AI算子开发工程师", "模型训练优化开发工程师"]
    assert not (odd_db.parent.parent / "jobs ").exists()  # no stray file where an unescaped URI would cut the path


@pytest.mark.slow
def test_jobcrawl_serve_a_path_with_uri_characters(odd_db, tmp_path):
    proc, base = start_serve(odd_db, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    try:
        with urllib.request.urlopen(f"{base}/jobs/postings.json?_shape=array&_col=title", timeout=10) as r:
            assert sorted(row["title"] for row in json.load(r)) == ["AI算子开发工程师", "模型训练优化开发工程师"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert not (odd_db.parent.parent / "jobs ").exists()
    assert [p.resolve() for p in (tmp_path / "cache" / "jobcrawl" / "serve").glob("*/jobs.db")] == [odd_db.resolve()]


def test_an_existing_path_is_never_read_as_a_glob(tmp_path):
    folder = tmp_path / "exports [2026] ?#"
    folder.mkdir()
    (folder / "a.txt").write_text("x", encoding="utf-8")
    (folder / "b[1].txt").write_text("y", encoding="utf-8")
    assert [(f.path.name, f.locator) for f in resolve_inputs([str(folder)])] == [("a.txt", "a.txt"), ("b[1].txt", "b[1].txt")]
    assert [f.locator for f in resolve_inputs([str(folder / "b[1].txt")])] == ["b[1].txt"]
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "c.txt").write_text("z", encoding="utf-8")
    assert [f.locator for f in resolve_inputs([str(plain / "*.txt")])] == ["c.txt"]  # a glob is still a glob
    with pytest.raises(InputError, match="the pattern matches no file"):
        resolve_inputs([str(plain / "*.csv")])


@pytest.mark.parametrize("command", [["ingest", str(SEEDS)], ["export"], ["dedupe"], ["score"], ["retag"], ["serve"]],
                         ids=lambda c: c[0])
def test_a_db_that_is_not_sqlite_is_a_usage_error(tmp_path, command):
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database", encoding="utf-8")
    proc = run_cli(*command, "--db", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"Error: Invalid value for '--db': {bad} is not an SQLite database"
    assert bad.read_text(encoding="utf-8") == "not a database"


@pytest.mark.parametrize("make, kind", [
    pytest.param(lambda path: os.mkfifo(path), "a FIFO (named pipe)", id="fifo"),
    pytest.param(lambda path: path.symlink_to("/dev/zero"), "a character device", id="symlink-to-dev-zero"),
])
def test_a_db_that_is_no_regular_file_is_a_usage_error_and_nothing_is_written_beside_it(tmp_path, make, kind):
    """`--db /dev/zero` made SQLite write /dev/zero-journal and ended in a traceback ("disk I/O error")."""
    db = tmp_path / "jobs.db"
    make(db)
    proc = run_cli("ingest", str(SEEDS), "--db", str(db), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"Error: Invalid value for '--db': {db} is {kind}, not a database file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.db"]


@pytest.fixture(scope="module")
def damaged_db(tmp_path_factory):
    """A jobcrawl database cut short after its first eight pages (a disk that failed, a copy cut off)."""
    path = tmp_path_factory.mktemp("damaged") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    assert not Path(f"{path}-wal").exists() and path.stat().st_size > 8 * 4096
    with path.open("r+b") as fh:
        fh.truncate(8 * 4096)
    return path


@pytest.mark.parametrize("command", [["ingest", str(SEEDS)], ["export", "--out", "-"], ["dedupe"], ["score"], ["serve"]],
                         ids=lambda c: c[0])
def test_a_damaged_db_ends_the_command_with_one_line_and_exit_3(damaged_db, command):
    """It ended in a Python traceback and exit 1, which says "some input quarantined"."""
    proc = run_cli(*command, "--db", str(damaged_db), timeout=120)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert proc.stderr.splitlines() == [
        f"jobcrawl {command[0]}: {damaged_db} is damaged (database disk image is malformed): restore it from a backup, "
        f"or copy out what it still holds with: sqlite3 {damaged_db} .recover | sqlite3 recovered.db"]


def test_a_db_in_a_missing_folder_is_a_usage_error(tmp_path):
    proc = run_cli("ingest", str(SEEDS), "--db", str(tmp_path / "no" / "jobs.db"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--db': {tmp_path / 'no' / 'jobs.db'}: the folder {tmp_path / 'no'} does not exist")


@pytest.mark.parametrize("command", [["ingest", str(SEEDS)], ["export"], ["serve"]], ids=lambda c: c[0])
def test_the_sqlite_database_of_something_else_is_refused_and_left_alone(tmp_path, command):
    other = tmp_path / "notes.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes (text)")
    proc = run_cli(*command, "--db", str(other))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (f"Error: Invalid value for '--db': {other} is the SQLite database of "
                                            "something else (tables: notes); name a new file or a jobcrawl database")
    with sqlite3.connect(other) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("notes",)]


def test_export_to_a_missing_folder_is_a_usage_error(odd_db, tmp_path):
    proc = run_cli("export", "--db", str(odd_db), "--out", str(tmp_path / "no" / "x.jsonl"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"Error: Invalid value for '--out': {tmp_path / 'no' / 'x.jsonl'}: the folder {tmp_path / 'no'} does not exist")
