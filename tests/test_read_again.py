"""Postings read again as stored are seen, not parsed again: a row of today's snapshot identical to yesterday's
(its raw item's hash, under the same parser, is the stored ``postings.raw_hash``) only moves the posting's
``last_seen`` and raw input; a changed, new or reordered row is parsed as before, and closing works as before."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from conftest import run_cli, sql, write_jsonl
from normalize.models import RawPosting, RawSection
from normalize.posting import raw_item_hash, raw_text_hash

T1, T2, T3 = "2026-03-02T00:00:00+00:00", "2026-03-03T00:00:00+00:00", "2026-03-04T00:00:00+00:00"
A = {"id": "a", "title": "CUDA Engineer", "company": "Acme", "location": "上海", "description": "写 CUDA 算子。"}
B = {"id": "b", "title": "Inference Engineer", "company": "Acme", "location": "北京", "description": "推理服务。"}
C = {"id": "c", "title": "GPU Kernel Engineer", "company": "Acme", "location": "深圳"}
D = {"id": "d", "title": "Training Infra Engineer", "company": "Acme", "location": "杭州"}
B2 = {**B, "description": "推理服务，vLLM。"}
A_REFORMATTED = {"location": "上海", "id": "a", "description": "写 CUDA 算子。", "company": "Acme", "title": "CUDA Engineer"}

RAW = RawPosting(source="acme", source_id="a", locator="x.jsonl", position=1, input_sha256="0" * 64,
                 fetched_at=T1, as_of=T1, title="CUDA Engineer", company="Acme",
                 sections=[RawSection(heading="职位描述", lines=["写 CUDA 算子"])])


@pytest.mark.parametrize(("change", "same"), [
    pytest.param({"locator": "y.jsonl", "position": 7, "input_sha256": "1" * 64}, True, id="where-it-was-read"),
    pytest.param({"fetched_at": T2, "as_of": T2, "complete_listing": True}, True, id="when-it-was-read"),
    pytest.param({"raw_hash": "ffff"}, True, id="its-own-hash"),
    pytest.param({"title": "CUDA Engineer "}, False, id="title"),
    pytest.param({"source_id": "b"}, False, id="source-id"),
    pytest.param({"source": "other"}, False, id="source"),
    pytest.param({"url": "https://example.org/a"}, False, id="url"),
    pytest.param({"sections": [RawSection(heading="职位描述", lines=["写 CUDA 算子!"])]}, False, id="a-section-line"),
    pytest.param({"extra": {"k": "v"}}, False, id="extra"),
])
def test_the_raw_hash_is_what_the_item_says_not_where_or_when_it_was_read(change, same):
    assert (raw_item_hash(RAW.model_copy(update=change), "p1") == raw_item_hash(RAW, "p1")) is same


def test_the_raw_hash_changes_with_the_parser():
    assert raw_item_hash(RAW, "p1") != raw_item_hash(RAW, "p2")
    assert len(raw_item_hash(RAW, "p1")) == 16


@pytest.mark.parametrize(("text", "parser", "expected"), [
    pytest.param("公司\n职位", "p1", hashlib.sha256("p1\x1f公司\n职位".encode()).hexdigest()[:16], id="page"),
    pytest.param("公司\n职位 ", "p1", hashlib.sha256("p1\x1f公司\n职位 ".encode()).hexdigest()[:16], id="a-space-more"),
    pytest.param("公司\n职位", "p2", hashlib.sha256("p2\x1f公司\n职位".encode()).hexdigest()[:16], id="another-parser"),
    pytest.param("a\udc80", "p1", hashlib.sha256(b"p1\x1fa\xed\xb2\x80").hexdigest()[:16], id="lone-surrogate"),
])
def test_a_dump_pages_raw_hash_is_its_text_under_the_parser(text, parser, expected):
    assert raw_text_hash(text, parser) == expected


def _run_stats(db: Path) -> list[tuple]:
    """(new, updated, unchanged, closed, postings seen unparsed) of each run."""
    return [(new, updated, unchanged, closed, json.loads(stats).get("jobcrawl/postings_seen_unparsed", 0))
            for new, updated, unchanged, closed, stats in sql(
                db, "SELECT new, updated, unchanged, closed, stats FROM runs ORDER BY id")]


@pytest.fixture(scope="module")
def days(tmp_path_factory) -> Path:
    """Three daily snapshots of one board: day 2 changes B, drops C, adds D and reformats A's line (same fields,
    another key order) at another position; day 3 brings C back unchanged and B's day-1 text again."""
    tmp = tmp_path_factory.mktemp("days")
    db = tmp / "jobs.db"
    for at, rows in ((T1, [A, B, C]), (T2, [D, B2, A_REFORMATTED]), (T3, [A, B, C, D])):
        run_cli("ingest", str(write_jsonl(tmp / at[:10] / "board.jsonl", rows)), "--db", str(db), "--source", "acme",
                "--complete", "--as-of", at, check=True)
    return db


@pytest.mark.slow
def test_rows_read_again_as_stored_are_counted_unchanged_and_not_parsed(days):
    assert _run_stats(days) == [
        (3, 0, 0, 0, 0),
        (1, 1, 1, 1, 1),  # D new, B changed, A read again (reformatted, at another line), C closed
        (0, 1, 3, 0, 3),  # B back to its day-1 text (a new version); A, D and C (closed at T2) read again
    ]


@pytest.mark.slow
def test_a_posting_read_again_keeps_its_version_and_moves_its_last_seen_and_raw_input(days):
    rows = sql(days, "SELECT p.source_id, p.version, p.first_seen, p.last_seen, p.closed_at, r.locator"
                      " FROM postings p JOIN raw_inputs r ON r.id = p.raw_input_id ORDER BY p.source_id")
    assert rows == [
        ("a", 1, T1, T3, None, "board.jsonl"),
        ("b", 3, T1, T3, None, "board.jsonl"),
        ("c", 1, T1, T3, None, "board.jsonl"),  # closed at T2, seen again at T3: reopened without a parse
        ("d", 1, T2, T3, None, "board.jsonl"),
    ]
    assert sql(days, "SELECT p.source_id, r.as_of FROM postings p JOIN raw_inputs r ON r.id = p.raw_input_id"
                      " ORDER BY p.source_id") == [("a", T3), ("b", T3), ("c", T3), ("d", T3)]
    assert sql(days, "SELECT p.source_id, e.event, e.at FROM posting_events e JOIN postings p ON p.id = e.posting_id"
                      " WHERE e.event IN ('closed', 'reopened') ORDER BY e.id") == [("c", "closed", T2),
                                                                                  ("c", "reopened", T3)]


@pytest.mark.slow
def test_what_a_posting_says_is_the_same_whether_it_was_parsed_or_read_again(days, tmp_path):
    once = tmp_path / "once.db"
    run_cli("ingest", str(write_jsonl(tmp_path / "board.jsonl", [A, B, C, D])), "--db", str(once), "--source", "acme",
            "--as-of", T3, check=True)
    columns = "source_id, title, company, city, description, content_hash, raw_hash"
    query = f"SELECT {columns} FROM postings ORDER BY source_id"
    assert sql(days, query) == sql(once, query)
    sections = "SELECT p.source_id, s.key, s.text FROM section_texts s JOIN postings p ON p.id = s.posting_id ORDER BY 1, 2"
    assert sql(days, sections) == sql(once, sections)


@pytest.mark.slow
def test_a_changed_row_then_the_stored_row_again_in_one_file_is_parsed_as_before(tmp_path):
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(write_jsonl(tmp_path / "d1" / "board.jsonl", [A])), "--db", str(db), "--source", "acme",
            "--as-of", T1, check=True)
    a_changed = {**A, "title": "Senior CUDA Engineer"}
    run_cli("ingest", str(write_jsonl(tmp_path / "d2" / "board.jsonl", [a_changed, A])), "--db", str(db),
            "--source", "acme", "--as-of", T2, check=True)
    # the later row wins, as it does without a stored posting: it was parsed, not taken as read again
    assert sql(db, "SELECT title, version, last_seen FROM postings") == [("CUDA Engineer", 1, T2)]
    assert _run_stats(db)[-1][-1] == 0


@pytest.mark.slow
def test_reparse_parses_every_stored_input_again(days, tmp_path):
    db = tmp_path / "jobs.db"
    shutil.copy(days, db)
    out = run_cli("reparse", "--db", str(db), check=True)
    stats = json.loads(sql(db, "SELECT stats FROM runs ORDER BY id DESC LIMIT 1")[0][0])
    assert stats.get("jobcrawl/postings_seen_unparsed", 0) == 0
    assert "new 0 · updated 0" in out.stdout + out.stderr
