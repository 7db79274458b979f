"""Re-running an ingest: text dumps unchanged since their last complete parse are counted, not parsed
again, and so are the rows of unchanged tables or blocks of tables (crawler/ingest/ledger.py); anything that
could change their postings makes them parsed again."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from bench.gen import write_dumps
from conftest import AS_OF, export_records, problem_lines, run_cli
from crawler.ingest.appdump import iter_pages
from crawler.ingest.ledger import options_digest, parser_version
from crawler.ingest.table import BLOCK_ROWS
from normalize.posting import raw_text_hash

SKIPPED_ALL = " · 3 files unchanged since their last parse, not stored again"


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


@pytest.mark.slow
def test_an_unchanged_folder_is_counted_without_parsing(dumps):
    folder, db, _ = dumps
    before = export_records(db)
    again = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True).stdout.splitlines()
    assert again[0] == "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0" + SKIPPED_ALL
    (clusters, duplicates), = _sql(db, "SELECT (SELECT count(DISTINCT cluster_id) FROM dedupe_signatures),"
                                       " (SELECT count(*) FROM cluster_members WHERE reason != 'new')")
    assert (clusters, duplicates) == (len({r["cluster_id"] for r in before}), 12 - clusters)
    assert again[1] == "dedupe and scoring: skipped, no posting changed since they last ran"
    assert export_records(db) == before
    (files, found, unchanged, stats), = _sql(db, "SELECT files, found, unchanged, stats FROM runs WHERE id = 2")
    assert (files, found, unchanged) == (3, 12, 12)
    assert json.loads(stats)["jobcrawl/files_unchanged"] == 3
    assert _sql(db, "SELECT count(*), min(parser), max(parser), min(as_of), max(as_of) FROM input_parses") == [
        (3, parser_version(200), parser_version(200), "2026-11-29T04:00:00+00:00", "2026-11-29T04:00:00+00:00")]


@pytest.mark.slow
def test_an_edited_file_is_parsed_and_restoring_it_parses_it_again(dumps):
    folder, db, files = dumps
    before = export_records(db)
    original = files[1].read_text(encoding="utf-8")
    title = before[4]["title"]  # the first posting of the second file
    assert original.count(title) >= 1
    files[1].write_text(original.replace(title, title + "（急招）", 1), encoding="utf-8")
    assert _ingest(folder, db) == (
        "files read 3 · postings found 12 · new 0 · updated 1 · unchanged 11 · quarantined 0"
        " · 2 files unchanged since their last parse, not stored again")
    assert export_records(db)[4]["title"] == title + "（急招）"
    # the edited file's other pages: their text hashed as stored, seen again without being parsed
    (stats,), = _sql(db, "SELECT stats FROM runs WHERE id = 2")
    assert json.loads(stats)["jobcrawl/postings_seen_unparsed"] == 3
    pages = [chunk.text for chunk in iter_pages(files[1].read_text(encoding="utf-8"))]
    assert _sql(db, "SELECT raw_hash FROM postings WHERE locator = ? ORDER BY id", files[1].name) == [
        (raw_text_hash(text, parser_version(200)),) for text in pages]

    # The old bytes again: their first parse no longer vouches for the postings, which the edit changed.
    files[1].write_text(original, encoding="utf-8")
    assert _ingest(folder, db) == (
        "files read 3 · postings found 12 · new 0 · updated 1 · unchanged 11 · quarantined 0"
        " · 2 files unchanged since their last parse, not stored again")
    assert export_records(db)[4]["title"] == title
    assert _ingest(folder, db).endswith(SKIPPED_ALL)


@pytest.mark.slow
def test_reparse_another_anchor_or_another_parser_parse_again(dumps):
    folder, db, _ = dumps
    assert _ingest(folder, db, "--reparse") == (
        "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0")
    later = _ingest(folder, db, as_of="2026-11-30T12:00:00+08:00")  # relative times move: parsed again
    assert later.startswith("files read 3 · postings found 12 · new 0 · ") and "not stored again" not in later
    assert _ingest(folder, db, as_of="2026-11-30T12:00:00+08:00").endswith(SKIPPED_ALL)

    with sqlite3.connect(db) as conn:  # as if parsed by an older version of the code
        conn.execute("UPDATE input_parses SET parser = 'older:200' WHERE raw_input_id = (SELECT min(raw_input_id) FROM input_parses)")
    assert _ingest(folder, db, as_of="2026-11-30T12:00:00+08:00") == (
        "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0"
        " · 2 files unchanged since their last parse, not stored again")
    assert _sql(db, "SELECT count(*) FROM input_parses WHERE parser = ?", parser_version(200)) == [(3,)]


@pytest.mark.slow
def test_a_file_whose_postings_are_not_all_stored_as_it_gave_them_is_parsed_again(dumps):
    folder, db, _ = dumps
    with sqlite3.connect(db) as conn:  # as after a posting of the first file was replaced from elsewhere
        conn.execute("UPDATE postings SET raw_input_id = NULL WHERE id = 1")
    assert _ingest(folder, db) == (
        "files read 3 · postings found 12 · new 0 · updated 0 · unchanged 12 · quarantined 0"
        " · 2 files unchanged since their last parse, not stored again")
    assert _sql(db, "SELECT raw_input_id FROM postings WHERE id = 1") == [(1,)]  # confirmed by its input again


@pytest.mark.slow
def test_quarantined_input_is_parsed_and_reported_every_time(tmp_path):
    folder = tmp_path / "in"
    write_dumps(folder, 2, per_file=2)
    (folder / "empty.txt").write_bytes(b"")
    db = tmp_path / "jobs.db"
    for run in range(2):
        proc = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF)
        assert proc.returncode == 1
        assert problem_lines(proc.stderr) == ["quarantined: empty.txt: empty file (0 bytes)"]
        assert proc.stdout.splitlines()[0] == (
            f"files read 2 · postings found 2 · new {2 - 2 * run} · updated 0 · unchanged {2 * run} · quarantined 1"
            + (" · 1 file unchanged since its last parse, not stored again" if run else ""))


@pytest.mark.slow
def test_a_database_path_with_uri_characters(tmp_path):
    folder = tmp_path / "in"
    write_dumps(folder, 2, per_file=2)
    db = tmp_path / "odd #1 ?x=y %20" / "jobs.db"
    db.parent.mkdir()
    assert _ingest(folder, db) == "files read 1 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 0"
    assert _ingest(folder, db) == ("files read 1 · postings found 2 · new 0 · updated 0 · unchanged 2 · quarantined 0"
                                   " · 1 file unchanged since its last parse, not stored again")


def test_the_parser_version_covers_the_title_limit():
    assert parser_version(200) == parser_version(200)
    assert parser_version(200).split(":") == [parser_version(80).split(":")[0], "200"]
    assert len(parser_version(200).split(":")[0]) == 16


# --------------------------------------------------------------------------- tables (CSV / JSONL)

JOBSPY = Path(__file__).resolve().parents[1] / "fixtures" / "tabular" / "jobspy.csv"
TABLE_DEFAULTS = {"format": "auto", "preset": None, "mapping": {}, "constants": {}}


@pytest.mark.slow
def test_an_unchanged_table_is_counted_without_being_stored_again(tmp_path):
    folder, db = tmp_path / "in", tmp_path / "jobs.db"
    folder.mkdir()
    (folder / "jobspy.csv").write_bytes(JOBSPY.read_bytes())
    first = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True).stdout.splitlines()
    assert first[1] == "files read 1 · postings found 3 · new 3 · updated 0 · unchanged 0 · quarantined 0"
    before = export_records(db)
    again = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True).stdout.splitlines()
    assert again[0] == (
        "jobspy.csv: csv, utf-8, delimiter comma · preset jobspy (sniffed), 19 of 34 columns mapped, the rest kept "
        "in extra · rows 3: postings 3, quarantined 0, repeated headers skipped 0, blank skipped 0"
        " · unchanged since its last parse, not stored again")
    assert again[1] == ("files read 1 · postings found 3 · new 0 · updated 0 · unchanged 3 · quarantined 0"
                        " · 1 file unchanged since its last parse, not stored again")
    assert export_records(db) == before
    stats = json.loads(_sql(db, "SELECT stats FROM runs WHERE id = 2")[0][0])
    assert (stats["jobcrawl/postings_unchanged_unparsed"], stats["jobcrawl/files_unchanged"]) == (3, 1)
    assert "jobcrawl/new" not in stats and "jobcrawl/unchanged" not in stats  # nothing reached the store
    assert _sql(db, "SELECT r.source, l.parser, l.postings FROM input_parses l JOIN raw_inputs r ON r.id = l.raw_input_id") == [
        ("tabular", parser_version(200, options_digest(TABLE_DEFAULTS)), 3)]


def _import(db: Path, *extra: str) -> str:
    """The summary line of `jobcrawl ingest` of fixtures/tabular/jobspy.csv (after the table's own line)."""
    return run_cli("ingest", str(JOBSPY), "--db", str(db), "--as-of", AS_OF, *extra, check=True).stdout.splitlines()[1]


@pytest.mark.slow
def test_other_table_options_parse_the_table_again(tmp_path):
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(JOBSPY), "--db", str(db), "--as-of", AS_OF, check=True)
    named = ("--preset", "jobspy")  # the preset it sniffed, but named: another option, so parsed again
    assert _import(db, *named) == "files read 1 · postings found 3 · new 0 · updated 0 · unchanged 3 · quarantined 0"
    assert _import(db, *named).endswith(" · 1 file unchanged since its last parse, not stored again")
    mapped = ("--preset", "jobspy", "--map", "description=title")
    assert _import(db, *mapped) == "files read 1 · postings found 3 · new 0 · updated 3 · unchanged 0 · quarantined 0"
    assert _import(db, *mapped, "--reparse") == (
        "files read 1 · postings found 3 · new 0 · updated 0 · unchanged 3 · quarantined 0")
    assert options_digest({**TABLE_DEFAULTS, "preset": "jobspy"}) != options_digest(TABLE_DEFAULTS)
    assert options_digest({"b": 1, "a": 2}) == options_digest({"a": 2, "b": 1})


def _crawl_stream(path: Path, db: Path) -> dict[str, int]:
    """`jobcrawl ingest` of ``path`` streamed in blocks (crawler.ingest.table.BLOCK_ROWS rows); the run's counters."""
    run_cli("ingest", str(path), "--db", str(db), "--as-of", AS_OF, "-s", "JOBCRAWL_TABLE_STREAM_MB=0.01", check=True)
    stats = json.loads(_sql(db, "SELECT stats FROM runs ORDER BY id DESC LIMIT 1")[0][0])
    return {key.removeprefix("jobcrawl/"): value for key, value in stats.items()
            if re.fullmatch(r"jobcrawl/[a-z_]+", key) and isinstance(value, int)}


@pytest.mark.slow
def test_only_the_changed_block_of_a_streamed_table_is_stored_again(tmp_path):
    rows = 2 * BLOCK_ROWS + 100  # three blocks
    lines = ["职位名称,公司名称,职位描述"] + [f"工程师{i},公司{i % 50},岗位职责：负责第{i}项工作" for i in range(rows)]
    path, db = tmp_path / "big.csv", tmp_path / "jobs.db"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    first = _crawl_stream(path, db)
    assert (first["new"], first.get("postings_unchanged_unparsed", 0)) == (rows, 0)
    assert _sql(db, "SELECT count(*), sum(postings) FROM input_parses") == [(3, rows)]

    again = _crawl_stream(path, db)
    assert (again["postings_found"], again["postings_unchanged_unparsed"], again["files_unchanged"]) == (rows, rows, 1)
    assert "new" not in again and "unchanged" not in again

    edited = BLOCK_ROWS + 7  # a row of the second block
    lines[1 + edited] = lines[1 + edited].replace("项工作", "项工作（急招）")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    third = _crawl_stream(path, db)
    assert (third["postings_unchanged_unparsed"], third["updated"], third["unchanged"]) == (
        rows - BLOCK_ROWS, 1, BLOCK_ROWS - 1)
    assert "files_unchanged" not in third
    assert _sql(db, "SELECT count(*) FROM raw_inputs") == [(4,)]  # the edited block's new bytes, kept
    assert _sql(db, "SELECT description FROM postings WHERE title = ?", f"工程师{edited}") == [
        (f"岗位职责：负责第{edited}项工作（急招）",)]
