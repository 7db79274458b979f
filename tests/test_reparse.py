"""`jobcrawl reparse`: a parser fix reaches the stored postings from their raw inputs, without reading or fetching."""

from __future__ import annotations

import codecs
import json
import sqlite3
import subprocess
import sys

import pytest

from conftest import AS_OF, FIXTURES, ROOT, SEEDS, run_cli
from crawler.web.pages.greenhouse import GreenhousePage
from crawler.reparse.pages import NotReparseable, kept_whole, reparse_items
from crawler.web.spiders.webbase import page_reader
from normalize.models import RawInput, RawPosting
from normalize.text import sha256_hex

# A changed salary parser: every upper bound doubled.
CHANGED_PARSER = """
import sys
import normalize.posting as posting

parse = posting.parse_salary

def doubled(text, **kwargs):
    salary = parse(text, **kwargs)
    if salary.max is not None:
        salary.max *= 2
    return salary

posting.parse_salary = doubled
from crawler.cli import main
main(sys.argv[1:])
"""


def sql(db, query: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query).fetchall()


@pytest.mark.slow
def test_a_changed_parser_reaches_stored_postings(tmp_path):
    db = tmp_path / "jobs.db"
    table = FIXTURES / "tabular" / "jobspy.csv"
    run_cli("ingest", str(SEEDS / "000_7c4373297891d5ca.txt"), str(table), "--db", str(db), "--as-of", AS_OF,
            check=True)
    before = sql(db, "SELECT key, salary_max, version FROM postings ORDER BY key")
    assert len(before) == 4 and all(version == 1 for _, _, version in before)

    same = run_cli("reparse", "--db", str(db), check=True)  # today's parsers: nothing changes
    assert same.stdout.splitlines()[0] == "files read 2 · postings found 4 · new 0 · updated 0 · unchanged 4 · quarantined 0"

    proc = subprocess.run([sys.executable, "-c", CHANGED_PARSER, "reparse", "--db", str(db)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with_salary = sum(1 for _, salary_max, _ in before if salary_max)
    assert proc.stdout.splitlines()[0] == (f"files read 2 · postings found 4 · new 0 · updated {with_salary} · "
                                           f"unchanged {4 - with_salary} · quarantined 0")
    after = {key: (salary_max, version) for key, salary_max, version in
             sql(db, "SELECT key, salary_max, version FROM postings")}
    for key, salary_max, _ in before:
        assert after[key] == ((salary_max * 2, 2) if salary_max else (None, 1))
    snapshots = {json.loads(s)["key"]: json.loads(s)["salary"]["max"] for (s,) in sql(db, "SELECT snapshot FROM posting_versions")}
    assert snapshots == {key: salary_max for key, salary_max, _ in before if salary_max}
    assert sql(db, "SELECT count(*) FROM raw_inputs") == [(2,)]  # nothing read again
    runs = sql(db, "SELECT kind, status FROM runs ORDER BY id")
    assert runs == [("ingest", "ok"), ("reparse", "ok"), ("reparse", "ok")]


def stored_row(item: RawInput) -> dict:
    return {"source": item.source, "locator": item.locator, "sha256": item.sha256, "text": item.text,
            "as_of": item.as_of, "status": item.status, "reader": item.reader}


def test_a_stored_api_response_is_parsed_again_as_it_was():
    body = (FIXTURES / "web" / "ats" / "greenhouse_gitlab_jobs.json").read_bytes()
    page = GreenhousePage("https://boards-api.greenhouse.io/v1/boards/gitlab/jobs?content=true", body,
                          fetched_at="2026-11-29T04:00:00+00:00", company="GitLab", board="gitlab")
    items = list(page.parse())
    raw = items[0]
    raw.reader = page_reader(GreenhousePage, "GitLab", {"board": "gitlab"})
    again = list(reparse_items(stored_row(raw), fetched_at="2026-12-01T00:00:00+00:00"))
    postings = [i for i in items if isinstance(i, RawPosting)]
    assert len(again) == len(postings) > 0
    for old, new in zip(postings, again):
        assert new.model_dump(exclude={"fetched_at"}) == old.model_dump(exclude={"fetched_at"})


@pytest.mark.parametrize("changes, message", [
    pytest.param({"status": "quarantined"}, "it was quarantined: only part of it is kept", id="quarantined"),
    pytest.param({"source": "tabular", "reader": {"format": "csv", "streamed": True}},
                 "a block of a streamed table: the block is not kept with its header", id="streamed-block"),
    pytest.param({"source": "tabular", "reader": None},
                 "no reader stored for source 'tabular' (stored before readers were kept: ingest or crawl it again)",
                 id="old-table"),
])
def test_inputs_kept_only_in_part_are_named_not_guessed(changes, message):
    row = {"source": "textdump", "locator": "a.txt", "sha256": "0" * 64, "text": "x", "as_of": AS_OF,
           "status": "parsed", "reader": None, **changes}
    with pytest.raises(NotReparseable, match=f"^{message.replace('(', '[(]').replace(')', '[)]')}$"):
        reparse_items(row, fetched_at=AS_OF)


SEED = (SEEDS / "003_5eabc84b6ca487f0.txt").read_text(encoding="utf-8")


def _stored(data: bytes, **columns) -> dict:
    """A raw_inputs row as reparse reads it, of an input whose bytes were ``data``."""
    return {"sha256": sha256_hex(data), "text": None, "encoding": None, "body": None, **columns}


@pytest.mark.parametrize("data, columns, whole", [
    pytest.param(SEED.encode("utf-8"), {"text": SEED, "encoding": "utf-8"}, True, id="utf-8"),
    pytest.param(codecs.BOM_UTF8 + SEED.encode("utf-8"), {"text": SEED, "encoding": "utf-8-sig"}, True, id="bom"),
    pytest.param(codecs.BOM_UTF16_LE + SEED.encode("utf-16-le"), {"text": SEED, "encoding": "utf-16-le"}, True,
                 id="utf-16-le"),
    pytest.param(SEED.encode("gb18030"), {"text": SEED, "encoding": "gb18030"}, True, id="gb18030"),
    pytest.param(b"\xff\x00\x01", {"text": "\ufffd\x00\x01", "body": b"\xff\x00\x01"}, True, id="bytes-kept"),
    pytest.param(SEED.encode("utf-8") * 2, {"text": SEED, "encoding": "utf-8"}, False, id="head-only"),
    pytest.param(SEED.encode("utf-8") * 2, {"body": SEED.encode("utf-8")}, False, id="head-bytes-only"),
    pytest.param(SEED.encode("utf-8"), {"text": SEED, "encoding": None}, False, id="encoding-unknown"),
    pytest.param(SEED.encode("utf-8"), {"text": SEED, "encoding": "no-such-codec"}, False, id="encoding-unusable"),
])
def test_a_quarantined_input_counts_as_kept_whole_only_when_its_bytes_hash_to_the_inputs(data, columns, whole):
    assert kept_whole(_stored(data, **columns)) == (data if whole else None)


def test_a_quarantined_input_kept_whole_is_parsed_again_from_its_bytes():
    data = codecs.BOM_UTF8 + SEED.encode("utf-8")
    row = {**_stored(data, text=SEED, encoding="utf-8-sig"), "source": "textdump", "locator": "a.txt",
           "as_of": AS_OF, "status": "quarantined", "reader": None}
    items = list(reparse_items(row, fetched_at=AS_OF))  # a parser fixed since: the seed is a dump
    assert [(type(i).__name__, i.title, i.input_sha256) for i in items] == [
        ("RawPosting", "模型训练优化开发工程师", sha256_hex(data))]
    binary = {**row, **_stored(b"\x00\x01\x02", body=b"\x00\x01\x02", text="\x00\x01\x02")}
    [again] = reparse_items(binary, fetched_at=AS_OF)  # still unreadable: quarantined again, with the reason
    assert (type(again).__name__, again.reason, again.position) == ("Quarantined", "binary", None)


TITLE_AS_ROLE = """
import sys
from crawler.ingest import table as tabular
tabular.PRESETS["jobspy"].columns["title"] = ("title", "opening")
from crawler.cli import main
main(sys.argv[1:])
"""


@pytest.mark.slow
def test_a_parser_fix_reaches_an_input_that_was_quarantined_whole(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "roles.csv").write_text("opening,company,location\nCUDA 算子工程师,示例科技,杭州\n"
                                               "LLM Inference Engineer,Example Inc.,Remote\n", encoding="utf-8")
    db = tmp_path / "jobs.db"
    first = run_cli("ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF)
    assert first.returncode == 1 and "quarantined 1" in first.stdout.splitlines()[-4]
    again = run_cli("reparse", "--db", str(db))  # today's parsers: quarantined again, not "not parsed again"
    assert again.returncode == 1
    assert again.stdout.splitlines()[0] == "files read 1 · postings found 0 · new 0 · updated 0 · unchanged 0 · quarantined 1"
    assert "not parsed again" not in again.stdout + again.stderr
    fixed = subprocess.run([sys.executable, "-c", TITLE_AS_ROLE, "reparse", "--db", str(db)], cwd=ROOT,
                           capture_output=True, text=True, timeout=300)
    assert fixed.returncode == 0, fixed.stderr[-2000:]
    assert fixed.stdout.splitlines()[0] == "files read 1 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 0"
    assert sql(db, "SELECT title, company FROM postings ORDER BY id") == [
        ("CUDA 算子工程师", "示例科技"), ("LLM Inference Engineer", "Example Inc.")]
    assert sql(db, "SELECT count(*) FROM raw_inputs") == [(1,)]  # nothing read again
    # the stored input takes the fixed parse's outcome, and the quarantine row of the earlier parse is retired
    assert sql(db, "SELECT status, error, postings FROM raw_inputs") == [("parsed", None, 2)]
    assert sql(db, "SELECT count(*) FROM quarantine") == [(0,)]
    mistyped = run_cli("reparse", "--db", str(db), "--source", "tabluar")  # it reparsed nothing, exit 0
    assert mistyped.returncode == 2 and mistyped.stderr.splitlines()[-1] == (
        f"Error: Invalid value for --source: no raw input of 'tabluar' in {db} (its sources: tabular)")
