"""A database on read-only media: the commands that only read work, the ones that write say why not.

The database (the seeds, a watch, WAL mode, its log checkpointed into the file) sits on a real read-only
mount: a tmpfs remounted read-only, and a read-only bind mount of a folder of a writable filesystem (a
read-only folder there: as root, ``chmod`` would not stop SQLite from making its ``-wal`` and ``-shm``
files, so only a mount shows the case to a root test run). No ``-shm`` can be made beside the file,
so SQLite opens it only as immutable. Skipped where mounting is refused (not root).

Also: a table page sorted by a column it does not have (``?_sort=nope``) is a 400 with Datasette's
message, not a 500.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import AS_OF, SEEDS, run_cli, start_serve
from crawler.store import readonly_uri
from crawler.serve.app import make_datasette

TITLES = ["AI算子开发工程师", "模型训练优化开发工程师"]
REFUSED = "is on a read-only filesystem: this command writes to it (export, history, serve, sources --health, " \
          "watch list and score --report only read)"


def _run(*command: str) -> None:
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode:
        raise OSError(f"{' '.join(command)}: {proc.stderr.strip() or proc.returncode}")


@pytest.fixture(scope="module")
def source_db(tmp_path_factory) -> Path:
    """The seeds and a watch in a WAL database, its log checkpointed into the file and removed."""
    db = tmp_path_factory.mktemp("source") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, "-q", check=True)
    run_cli("watch", "add", "cuda", "--search", "CUDA", "--db", str(db), "--to", "stdout", check=True)
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


@contextmanager
def read_only_copy(db: Path, folder: Path, kind: str) -> Iterator[Path]:
    """``db`` copied into ``folder`` made a read-only mount: a tmpfs, or a read-only bind mount of the
    folder itself ("bind"); unmounted at the end. Skips the test where mounting is refused."""
    try:
        _run(*(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs"] if kind == "tmpfs" else ["mount", "--bind", str(folder)]),
             str(folder))
    except OSError as err:
        pytest.skip(f"cannot mount a {kind} here: {err}")
    try:
        shutil.copy(db, folder / "jobs.db")
        _run("mount", "-o", "remount,ro" + (",bind" if kind == "bind" else ""), str(folder))
        assert sorted(p.name for p in folder.iterdir()) == ["jobs.db"]
        yield folder / "jobs.db"
    finally:
        _run("umount", str(folder))


@pytest.fixture(scope="module")
def ro_db(source_db, tmp_path_factory) -> Iterator[Path]:
    """``source_db`` on a tmpfs remounted read-only."""
    with read_only_copy(source_db, tmp_path_factory.mktemp("ro-tmpfs"), "tmpfs") as db:
        yield db


@pytest.mark.slow
@pytest.mark.parametrize("args, stdout", [
    pytest.param(["history", "1"], ["#1 AI算子开发工程师 · 吉利汽车 · 杭州 — 1 version",
                                    "2026-11-29 04:00 v1: 首次出现 first seen"], id="history"),
    pytest.param(["watch", "list"], None, id="watch-list"),
    pytest.param(["sources", "--health"], [], id="sources-health"),
])
def test_reading_commands_work(ro_db, args, stdout):
    proc = run_cli(*args, "--db", str(ro_db))
    assert proc.returncode == 0, proc.stderr
    if stdout is None:  # watch list: the watch, its line ending with when it was made
        assert proc.stdout.startswith("cuda: search “CUDA” → stdout · delivered 0 postings (0 sent, 0 pending) · "
                                      "baseline 2 · since "), proc.stdout
    else:
        assert proc.stdout.splitlines() == stdout


@pytest.mark.slow
def test_export_to_a_file_elsewhere(ro_db, tmp_path):
    out = tmp_path / "postings.jsonl"
    proc = run_cli("export", "--db", str(ro_db), "--out", str(out))
    assert (proc.returncode, proc.stderr) == (0, f"exported 2 postings to {out} (jsonl)\n")
    assert sorted(json.loads(line)["title"] for line in out.read_text(encoding="utf-8").splitlines()) == TITLES


@pytest.mark.slow
def test_score_report_reads_the_stored_scores(ro_db):
    proc = run_cli("score", "--report", "--db", str(ro_db))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("agreement with source over 2 postings — mean absolute error: ")
    assert proc.stderr == (f"{ro_db} is on a read-only filesystem: reported the stored scores without scoring "
                           "again or storing the report\n")


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    pytest.param(["ingest", str(SEEDS)], id="ingest"),
    pytest.param(["score"], id="score"),
])
def test_writing_commands_say_why_not(ro_db, args):
    proc = run_cli(*args, "--db", str(ro_db))
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr == f"jobcrawl {args[0]}: {ro_db} {REFUSED}\n"


def fetch(base: str) -> tuple[str, list[tuple[int, str]]]:
    """The listing page's HTML and the postings' (id, title) from the JSON API of a served database."""
    with urllib.request.urlopen(base + "/jobs/jobs", timeout=30) as page:
        html = page.read().decode()
    with urllib.request.urlopen(base + "/jobs/postings.json?_shape=objects&_col=title&_sort=id", timeout=30) as api:
        return html, [(r["id"], r["title"]) for r in json.load(api)["rows"]]


@pytest.mark.slow
@pytest.mark.parametrize("options", [(), ("--immutable",)], ids=["serve", "immutable"])
def test_serve(ro_db, options):
    proc, base = start_serve(ro_db, *options)
    try:
        html, rows = fetch(base)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert all(title in html for title in TITLES)
    assert rows == [(1, TITLES[0]), (2, TITLES[1])]


@pytest.mark.slow
def test_a_read_only_folder_of_a_writable_filesystem(source_db, tmp_path_factory, tmp_path):
    """A read-only bind mount: what a folder this user cannot write is (as root, chmod stops nothing)."""
    out = tmp_path / "postings.csv"
    with read_only_copy(source_db, tmp_path_factory.mktemp("ro-bind"), "bind") as db:
        exported = run_cli("export", "--db", str(db), "--out", str(out), "--columns", "title")
        refused = run_cli("ingest", str(SEEDS), "--db", str(db))
        proc, base = start_serve(db)
        try:
            html, rows = fetch(base)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    assert (exported.returncode, out.read_text(encoding="utf-8-sig").split()) == (0, ["title", *TITLES])
    assert (refused.returncode, refused.stderr) == (3, f"jobcrawl ingest: {db} {REFUSED}\n")
    assert rows == [(1, TITLES[0]), (2, TITLES[1])]


def test_the_read_only_open_is_immutable_only_where_it_must_be(ro_db, source_db):
    assert readonly_uri(ro_db) == f"file://{ro_db}?mode=ro&immutable=1"
    assert readonly_uri(source_db) == f"file://{source_db}?mode=ro"


@pytest.mark.slow
def test_an_old_schema_on_read_only_media_asks_for_an_upgrade(source_db, tmp_path_factory):
    """A read never migrates: a file that cannot be written and still needs a migration is named."""
    old = tmp_path_factory.mktemp("old") / "jobs.db"
    shutil.copy(source_db, old)
    with sqlite3.connect(old) as conn:
        conn.execute("DELETE FROM _sqlite_migrations WHERE rowid = (SELECT max(rowid) FROM _sqlite_migrations)")
    conn.close()
    with read_only_copy(old, tmp_path_factory.mktemp("ro-old"), "bind") as db:
        proc = run_cli("history", "1", "--db", str(db))
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr == (f"jobcrawl history: {db} is on a read-only filesystem and was made by an older jobcrawl "
                           "(its schema needs upgrading): run a writing command on a writable copy first, e.g. "
                           "jobcrawl dedupe --db COPY\n")


# --------------------------------------------------------------------------- a sort by no column


@pytest.fixture(scope="module")
def ds(source_db):
    return make_datasette(source_db)


@pytest.mark.parametrize("path, message", [
    ("/jobs/jobs?_sort=nope", "Cannot sort table by nope"),
    ("/jobs/jobs?_sort_desc=nope", "Cannot sort table by nope"),
    ("/jobs/jobs.json?_sort=nope", "Cannot sort table by nope"),
    ("/jobs/jobs.json?_sort_desc=nope", "Cannot sort table by nope"),
    ("/jobs/postings.json?_sort=%3Cb%3Enope", "Cannot sort table by <b>nope"),
    ("/jobs/jobs.json?_sort=title&_sort_desc=nope", "Cannot use _sort and _sort_desc at the same time"),
], ids=["jobs", "jobs-desc", "jobs-json", "jobs-json-desc", "postings-json", "both"])
def test_a_sort_by_no_column_is_a_bad_request(ds, path, message):
    response = asyncio.run(ds.client.get(path))
    assert response.status_code == 400
    if ".json" in path:
        assert response.json() == {"ok": False, "error": message, "status": 400, "title": None}
    else:
        assert f">{message}</div>" in response.text


def test_a_sort_by_a_column_still_sorts(ds):
    response = asyncio.run(ds.client.get("/jobs/jobs.json?_shape=objects&_col=title&_sort_desc=title"))
    assert [r["title"] for r in response.json()["rows"]] == sorted(TITLES, reverse=True)
