"""Scraped text on the terminal (issue #38, class 4): every printed line that carries a title, company, city, file
or source name goes through normalize.shown.shown, which writes line breaks, controls and bidi characters as
visible escapes; the database keeps the text as found. Also: watch names, the include-existing count, and the
ingest output of many files (one line per kind past crawler.report.LISTED)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AS_OF, ROOT, SEEDS, run_cli
from crawler.report import LISTED
from normalize.shown import json_line, shown

# --------------------------------------------------------------------------- the function


SHOWN = [
    pytest.param("AI算子开发工程师", "AI算子开发工程师", id="plain-cjk"),
    pytest.param("x\nfailed: y", "x\\nfailed: y", id="line-feed"),
    pytest.param("a\r\nb", "a\\r\\nb", id="crlf"),
    pytest.param("red\x1b[31m", "red\\x1b[31m", id="escape-sequence"),
    pytest.param("csi\x9b31m", "csi\\x9b31m", id="c1-csi"),
    pytest.param("next\x85line", "next\\x85line", id="c1-nel"),
    pytest.param("a\u2028b\u2029c", "a\\u2028b\\u2029c", id="unicode-line-separators"),
    pytest.param("rtl\u202eexe.txt", "rtl\\u202eexe.txt", id="bidi-override"),
    pytest.param("\u2066iso\u2069", "\\u2066iso\\u2069", id="bidi-isolates"),
    pytest.param("zero\u200bwidth", "zero\\u200bwidth", id="zero-width-space"),
    pytest.param("tab\there", "tab\\there", id="tab"),
    pytest.param("nul\x00del\x7f", "nul\\x00del\\x7f", id="nul-and-del"),
    pytest.param("bad\udcff.txt", "bad\\udcff.txt", id="undecodable-byte"),
    pytest.param("tag\U000e0041", "tag\\U000e0041", id="tag-character"),
    pytest.param("职位\u3000名称 C:\\dir", "职位\u3000名称 C:\\dir", id="ideographic-space-and-backslash-kept"),
    pytest.param("'quoted'", "'quoted'", id="leading-quote-kept"),
]


@pytest.mark.parametrize("text, expected", SHOWN)
def test_shown(text, expected):
    assert shown(text) == expected


QUOTED = [
    pytest.param("a.txt", "a.txt", id="plain"),
    pytest.param("new\nline.txt", "'new\\nline.txt'", id="newline"),
    pytest.param("nel\x85.txt", "'nel\\x85.txt'", id="c1-nel"),
    pytest.param("sep\u2028.txt", "'sep\\u2028.txt'", id="line-separator"),
    pytest.param("'quoted'.txt", "\"'quoted'.txt\"", id="starts-with-a-quote"),
]


@pytest.mark.parametrize("name, expected", QUOTED)
def test_shown_quoted_names(name, expected):
    assert shown(name, quoted=True) == expected


JSON = [
    pytest.param({"t": "x\nfailed: y"}, '{"t": "x\\nfailed: y"}', id="json-escapes-lf-itself"),
    pytest.param({"t": "a\u2028b\x85c"}, '{"t": "a\\u2028b\\u0085c"}', id="line-separator-and-nel"),
    pytest.param({"t": "rtl\u202e"}, '{"t": "rtl\\u202e"}', id="bidi-override"),
    pytest.param({"t": "tag\U000e0041"}, '{"t": "tag\\udb40\\udc41"}', id="astral-as-surrogate-pair"),
    pytest.param({"t": "职位"}, '{"t": "职位"}', id="cjk-kept"),
]


@pytest.mark.parametrize("value, expected", JSON)
def test_json_line_is_the_same_value_on_one_line(value, expected):
    text = json_line(json.dumps(value, ensure_ascii=False))
    assert text == expected
    assert json.loads(text) == value
    assert text.splitlines() == [text]


# --------------------------------------------------------------------------- every printer, end to end

HOSTILE = [
    {"job_title": "x\nfailed: y", "company_name": "Acme\r\x1b[31mRed", "city": "杭州", "salary": "25-40K",
     "description": "岗位职责：负责推理优化。"},
    {"job_title": "a\u2028b\u2029c\u202ed\x85e", "company_name": "Beta\nfailed: z", "city": "上\u2028海",
     "salary": "30-50K", "description": "岗位职责：负责编译器。"},
]
# As stored (the database keeps what normalization keeps: ESC, U+202E and NEL are removed, line breaks are not).
STORED = [("x\nfailed: y", "Acme\r[31mRed", "杭州"), ("a\u2028b\u2029cde", "Beta\nfailed: z", "上")]
T3, T4 = "x\\nfailed: y · Acme\\r[31mRed · 杭州", "a\\u2028b\\u2029cde · Beta\\nfailed: z · 上"


def lines_of(*procs) -> list[str]:
    return [line for p in procs for line in (p.stdout + p.stderr).split("\n")]


def no_forged_line(*procs) -> None:
    """No line of the output starts a message the run did not print: split on every line break a terminal or
    str.splitlines() honours."""
    for p in procs:
        for line in (p.stdout + p.stderr).splitlines():
            assert not line.startswith("failed:"), line


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> tuple[Path, Path]:
    """Seeds (postings 1, 2), a stdout watch of everything, then the hostile JSONL (postings 3, 4)."""
    tmp = tmp_path_factory.mktemp("hostile")
    db = tmp / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    inputs = tmp / "in.jsonl"
    inputs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in HOSTILE), encoding="utf-8")
    return db, inputs


@pytest.mark.slow
def test_every_printer_of_postings_escapes_scraped_text(hostile_db, tmp_path):
    template, inputs = hostile_db
    db = tmp_path / "jobs.db"
    shutil.copy(template, db)
    added = run_cli("watch", "add", "all", "--to", "stdout", "--include-existing", "--db", str(db), check=True)
    assert added.stdout == "watch all added (#1) → stdout; 2 postings match already: delivered on the next run\n"

    ingest = run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    assert ingest.stdout.split("\n")[:5] == [
        "jobcrawl: 4 new postings for all",
        "- AI算子开发工程师 · 吉利汽车 · 杭州 · 43K",
        "- 模型训练优化开发工程师 · 初速度 · 苏州 · 35K",
        f"- {T3} · 25–40K",
        f"- {T4} · 30–50K"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT title, company, city FROM postings WHERE id > 2 ORDER BY id").fetchall() == STORED

    history = run_cli("history", "3", "--db", str(db), check=True)
    assert history.stdout == f"#3 {T3} — 1 version\n2026-11-29 04:00 v1: 首次出现 first seen\n"
    history = run_cli("history", "4", "--db", str(db), check=True)
    assert history.stdout.split("\n")[0] == f"#4 {T4} — 1 version"

    listed = run_cli("watch", "list", "--db", str(db), check=True)
    assert listed.stdout.startswith("all: every posting → stdout · delivered 4 postings (4 sent, 0 pending)")

    # A new watch delivers to stdout through `watch deliver`.
    run_cli("watch", "add", "again", "--to", "stdout", "--include-existing", "--search", "failed", "--db", str(db),
            check=True)
    deliver = run_cli("watch", "deliver", "--db", str(db), check=True)
    assert deliver.stdout == (f"jobcrawl: 2 new postings for again\n- {T3} · 25–40K\n  搜索“failed”\n"
                              f"- {T4} · 30–50K\n  搜索“failed”\nalerts: new matches all 0, again 2 · delivered stdout 2\n")

    # The app's own evaluation exists for the seeds only: a seed stored with a line break in its title, as a
    # JSONL import of the same posting would leave it.
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE postings SET title = ?, company = ? WHERE id = 1", ("x\nfailed: y", "Acme\r\x1b[31mRed"))
    report = run_cli("score", "--report", "--db", str(db), check=True)
    assert "  #1 Acme\\r\\x1b[31mRed · x\\nfailed: y: Σ|Δ| 16 (72→72, 70→64, 90→97, 50→50, 75→78)" in lines_of(report)

    with sqlite3.connect(db) as conn:  # a crawl run of a source named from a crawled careers page
        conn.execute("INSERT INTO runs (kind, source, started, finished, status, found, requests, new, updated, closed,"
                     " errors, responses) VALUES ('crawl', ?, '2026-11-29T04:00:00+00:00', '2026-11-29T04:01:00+00:00',"
                     " 'ok', 1, 1, 1, 0, 0, 0, '{\"200\": 1}')", ("board\nfailed: forged\u202e",))
    health = run_cli("sources", "--health", "--db", str(db))
    assert (health.returncode, health.stdout) == (0, (
        "board\\nfailed: forged\\u202e: ok · last run 4 2026-11-29T04:00:00+00:00 (ok) · last success "
        "2026-11-29T04:00:00+00:00 · requests 1 · responses 200×1 · postings found 1 · new 1 · updated 0 · closed 0 · "
        "errors 0 · HTTP cache 0 bytes in 0 entries\n"))

    jsonl = run_cli("export", "--db", str(db), "--search", "failed", check=True)
    records = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert [(r["title"], r["company"], r["city"]) for r in records] == STORED
    assert "\u2028" not in jsonl.stdout and "\u2029" not in jsonl.stdout
    # CSV on stdout is data: a quoted field holds the line break, and reads back as stored.
    # (bytes: a text-mode pipe would turn the CR into LF)
    flat = subprocess.run([sys.executable, "-m", "crawler.cli", "export", "--db", str(db), "--search", "failed",
                           "--format", "csv", "--no-bom"], cwd=ROOT, capture_output=True, check=True)
    rows = list(csv.DictReader(io.StringIO(flat.stdout.decode("utf-8"), newline="")))
    assert [(r["title"], r["company"], r["city"]) for r in rows] == STORED

    no_forged_line(added, ingest, history, listed, deliver, report, health)


# --------------------------------------------------------------------------- watch names


@pytest.mark.slow
@pytest.mark.parametrize("name, bad", [
    pytest.param("red\x1b[31m", "'\\x1b' (U+001B)", id="escape"),
    pytest.param("rtl\u202eabc", "'\\u202e' (U+202E)", id="bidi-override"),
    pytest.param("a\nb", "'\\n' (U+000A)", id="line-feed"),
    pytest.param("zw\u200bj", "'\\u200b' (U+200B)", id="zero-width-space"),
])
def test_a_watch_name_with_a_control_character_is_a_usage_error(hostile_db, tmp_path, name, bad):
    db = tmp_path / "jobs.db"
    shutil.copy(hostile_db[0], db)
    proc = run_cli("watch", "add", name, "--to", "stdout", "--db", str(db))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (f"Error: name: {shown(name, quoted=True)} holds {bad}, a control or format "
                                            "character: a watch name must be what `jobcrawl watch list` shows")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM watches").fetchone() == (0,)


@pytest.mark.slow
def test_a_watch_stored_with_a_control_character_is_listed_escaped_and_removed_by_that_name(hostile_db, tmp_path):
    db = tmp_path / "jobs.db"
    shutil.copy(hostile_db[0], db)
    run_cli("watch", "add", "plain", "--to", "stdout", "--db", str(db), check=True)
    with sqlite3.connect(db) as conn:  # as a database of an earlier version may hold it
        conn.execute("UPDATE watches SET name = ?, spec = json_set(spec, '$.name', ?)", ("red\x1b[31m",) * 2)
    listed = run_cli("watch", "list", "--db", str(db), check=True).stdout
    assert listed.startswith("red\\x1b[31m: every posting → stdout · delivered 0 postings")
    shown_name = listed.split(":")[0]
    removed = run_cli("watch", "remove", shown_name, "--db", str(db), check=True)
    assert removed.stdout == "watch red\\x1b[31m removed; 0 pending deliveries cancelled\n"
    assert run_cli("watch", "list", "--db", str(db), check=True).stdout == (
        "no watches (jobcrawl watch add NAME --search …)\n")


@pytest.mark.slow
@pytest.mark.parametrize("include, said", [
    pytest.param((), "2 postings match already: the baseline (never delivered)", id="baseline"),
    pytest.param(("--include-existing",), "2 postings match already: delivered on the next run", id="include-existing"),
])
def test_watch_add_counts_the_postings_that_match_already(hostile_db, tmp_path, include, said):
    db = tmp_path / "jobs.db"
    shutil.copy(hostile_db[0], db)
    proc = run_cli("watch", "add", "all", "--to", "stdout", *include, "--db", str(db), check=True)
    assert proc.stdout == f"watch all added (#1) → stdout; {said}\n"


# --------------------------------------------------------------------------- many files


MANY = 300


@pytest.mark.slow
def test_many_tables_are_one_line_and_a_second_run_says_unchanged_in_one_line(tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    for i in range(MANY):
        (folder / f"f{i:03}.jsonl").write_text(
            json.dumps({"job_title": f"工程师{i}", "company_name": "某公司", "city": "北京", "salary": "30K"},
                       ensure_ascii=False) + "\n", encoding="utf-8")
    db = tmp_path / "jobs.db"
    first = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True)
    assert first.stdout.splitlines() == [
        "tables read: 300 files (f000.jsonl, f001.jsonl, f002.jsonl and 297 more) · rows 300: postings 300, "
        "quarantined 0, repeated headers skipped 0, blank skipped 0",
        "files read 300 · postings found 300 · new 300 · updated 0 · unchanged 0 · quarantined 0",
        "dedupe: 300 clustered · 0 joined a cluster · 0 clusters merged · 300 clusters, 0 duplicates in all",
        "score: 300 postings scored, 0 unchanged (jobcrawl-v1)",
        f"database {db}: 300 postings (run 1)"]
    again = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True)
    assert again.stdout.splitlines()[0] == (
        "tables read: 300 files (f000.jsonl, f001.jsonl, f002.jsonl and 297 more) · rows 300: postings 300, "
        "quarantined 0, repeated headers skipped 0, blank skipped 0 · 300 files (f000.jsonl, f001.jsonl, f002.jsonl "
        "and 297 more) unchanged since their last parse, not stored again")
    assert again.stdout.splitlines()[1:] == [
        "files read 300 · postings found 300 · new 0 · updated 0 · unchanged 300 · quarantined 0 · 300 files unchanged "
        "since their last parse, not stored again",
        "dedupe and scoring: skipped, no posting changed since they last ran",
        f"database {db}: 300 postings (run 2)"]


@pytest.mark.slow
def test_many_quarantined_files_are_named_up_to_the_cap(tmp_path):
    folder = tmp_path / "dumps"
    folder.mkdir()
    for i in range(MANY):
        (folder / f"f{i:03}.txt").write_text(f"某公司 · 工程师{i} · 北京 · 30K\n岗位职责：负责开发。\n", encoding="utf-8")
    proc = run_cli("ingest", str(folder), "--db", str(tmp_path / "jobs.db"), "--as-of", AS_OF, "-q")
    assert proc.returncode == 1
    quarantined = [line for line in proc.stderr.splitlines() if line.startswith("quarantined: ")]
    assert len(quarantined) == LISTED + 1 == 21
    assert quarantined[0].startswith("quarantined: f000.txt: no posting found")
    assert quarantined[LISTED - 1].startswith("quarantined: f019.txt: no posting found")
    assert quarantined[-1] == "quarantined: 280 more, not listed (--json lists them all)"
