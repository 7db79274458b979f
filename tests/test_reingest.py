"""Re-running an ingest: text dumps unchanged since their last complete parse are counted, not parsed
again (crawler/ledger.py); anything that could change their postings makes them parsed again."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from bench.gen import write_dumps
from conftest import AS_OF, export_records, run_cli
from crawler.ledger import parser_version

SKIPPED_ALL = " · 3 files unchanged since their last parse, not parsed again"


@pytest.fixture
def dumps(tmp_path) -> tuple[Path, Path, list[Path]]:
    """Three dump files of four postings each, ingested once: (folder, database, files)."""
    files = write_dumps(tmp_path / "in", 12, per_file=4)
    db = tmp_path / "jobs.db"
    first = run_cli("ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF, check=True)
    assert first.stdout.splitlines()[0] == (
        "files read 3 · postings found 12 · new 12 · updated 0 · unchanged 0 · quarantined 0")
    return tmp_path / "in", db, files


def _ingest(folder: Path, db: Path, *extra: str, as_of: str = AS_OF) -> str:
    return run_cli("ingest", str(folder), "--db", str(db), "--as-of", as_of, *extra, check=True).stdout.splitlines()[0]


def _sql(db: Path, query: str, *args) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query, args).fetchall()


def test_an_unchanged_folder_is_counted_without_parsing(dumps):
    folder, db, _ = dumps
    before = export_records(db)
    again = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True).stdout.splitlines()
    assert again[0] == "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0" + SKIPPED_ALL
    (clusters, duplicates), = _sql(db, "SELECT (SELECT count(*) FROM clusters),"
                                       " (SELECT count(*) FROM cluster_members WHERE reason != 'new')")
    assert (clusters, duplicates) == (len({r["cluster_id"] for r in before}), 12 - clusters)
    assert again[1] == (f"dedupe: 0 clustered · 0 joined a cluster · 0 clusters merged · {clusters} clusters, "
                        f"{duplicates} duplicates in all")
    assert export_records(db) == before
    (files, found, unchanged, stats), = _sql(db, "SELECT files, found, unchanged, stats FROM runs WHERE id = 2")
    assert (files, found, unchanged) == (3, 12, 12)
    assert json.loads(stats)["jobcrawl/files_unchanged"] == 3
    assert _sql(db, "SELECT count(*), min(parser), max(parser), min(as_of), max(as_of) FROM input_parses") == [
        (3, parser_version(200), parser_version(200), "2026-11-29T04:00:00+00:00", "2026-11-29T04:00:00+00:00")]


def test_an_edited_file_is_parsed_and_restoring_it_parses_it_again(dumps):
    folder, db, files = dumps
    before = export_records(db)
    original = files[1].read_text(encoding="utf-8")
    title = before[4]["title"]  # the first posting of the second file
    assert original.count(title) >= 1
    files[1].write_text(original.replace(title, title + "（急招）", 1), encoding="utf-8")
    assert _ingest(folder, db) == (
        "files read 3 · postings found 12 · new 0 · updated 1 · unchanged 11 · quarantined 0"
        " · 2 files unchanged since their last parse, not parsed again")
    assert export_records(db)[4]["title"] == title + "（急招）"

    # The old bytes again: their first parse no longer vouches for the postings, which the edit changed.
    files[1].write_text(original, encoding="utf-8")
    assert _ingest(folder, db) == (
        "files read 3 · postings found 12 · new 0 · updated 1 · unchanged 11 · quarantined 0"
        " · 2 files unchanged since their last parse, not parsed again")
    assert export_records(db)[4]["title"] == title
    assert _ingest(folder, db).endswith(SKIPPED_ALL)


def test_reparse_another_anchor_or_another_parser_parse_again(dumps):
    folder, db, _ = dumps
    assert _ingest(folder, db, "--reparse") == (
        "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0")
    later = _ingest(folder, db, as_of="2026-11-30T12:00:00+08:00")  # relative times move: parsed again
    assert later.startswith("files read 3 · postings found 12 · new 0 · ") and "not parsed again" not in later
    assert _ingest(folder, db, as_of="2026-11-30T12:00:00+08:00").endswith(SKIPPED_ALL)

    with sqlite3.connect(db) as conn:  # as if parsed by an older version of the code
        conn.execute("UPDATE input_parses SET parser = 'older:200' WHERE raw_input_id = (SELECT min(raw_input_id) FROM input_parses)")
    assert _ingest(folder, db, as_of="2026-11-30T12:00:00+08:00") == (
        "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0"
        " · 2 files unchanged since their last parse, not parsed again")
    assert _sql(db, "SELECT count(*) FROM input_parses WHERE parser = ?", parser_version(200)) == [(3,)]


def test_a_file_whose_postings_are_not_all_stored_as_it_gave_them_is_parsed_again(dumps):
    folder, db, _ = dumps
    with sqlite3.connect(db) as conn:  # as after a posting of the first file was replaced from elsewhere
        conn.execute("UPDATE postings SET raw_input_id = NULL WHERE id = 1")
    assert _ingest(folder, db) == (
        "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0"
        " · 2 files unchanged since their last parse, not parsed again")
    assert _sql(db, "SELECT raw_input_id FROM postings WHERE id = 1") == [(1,)]  # confirmed by its input again


def test_quarantined_input_is_parsed_and_reported_every_time(tmp_path):
    folder = tmp_path / "in"
    write_dumps(folder, 2, per_file=2)
    (folder / "empty.txt").write_bytes(b"")
    db = tmp_path / "jobs.db"
    for run in range(2):
        proc = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF)
        assert proc.returncode == 1
        assert proc.stderr.splitlines() == ["quarantined: empty.txt: empty file (0 bytes)"]
        assert proc.stdout.splitlines()[0] == (
            f"files read 2 · postings found 2 · new {2 - 2 * run} · updated 0 · unchanged {2 * run} · quarantined 1"
            + (" · 1 file unchanged since their last parse, not parsed again" if run else ""))


def test_a_database_path_with_uri_characters(tmp_path):
    folder = tmp_path / "in"
    write_dumps(folder, 2, per_file=2)
    db = tmp_path / "odd #1 ?x=y %20" / "jobs.db"
    db.parent.mkdir()
    assert _ingest(folder, db) == "files read 1 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 0"
    assert _ingest(folder, db) == ("files read 1 · postings found 2 · new 0 · updated 0 · unchanged 2 · quarantined 0"
                                   " · 1 file unchanged since their last parse, not parsed again")


def test_the_parser_version_covers_the_title_limit():
    assert parser_version(200) == parser_version(200)
    assert parser_version(200).split(":") == [parser_version(80).split(":")[0], "200"]
    assert len(parser_version(200).split(":")[0]) == 16
