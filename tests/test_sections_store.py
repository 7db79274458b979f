"""A posting's sections are stored one row per section, its bullets one a line (or their spans of the description:
tests/test_section_spans.py), and read back as they were through the view ``section_texts``: the export, the dedupe
and scoring steps and the skill evidence see the same bullets; every query of ``sections`` the project makes finds
its rows by the primary key alone."""

from __future__ import annotations

import sqlite3

import pytest

from crawler.store.read import iter_export
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.sections import bullets_by_posting, section_bullets, section_text
from crawler.store.writer import Writer
from normalize.models import RawPosting, RawSection
from normalize.posting import normalize_posting
from test_migrations import made_by

BASE = {"source": "tabular", "locator": "x.csv", "fetched_at": "2026-12-01T00:00:00+00:00",
        "as_of": "2026-12-01T00:00:00+00:00", "company": "示例智能", "title": "CUDA工程师"}
CARD = RawPosting(**BASE, source_id="x.csv#2", position=2,
                  sections=[RawSection(heading="福利待遇", lines=["五险一金", "带薪年假", "年终奖"])])
JD = RawPosting(**BASE, source_id="x.csv#3", position=3,
                description="岗位职责：1、负责推理算子开发；2、优化CUDA内核。任职要求：1、熟悉C++\n2、三年以上经验",
                sections=[RawSection(heading="福利待遇", lines=["五险一金"]), RawSection(heading="【团队氛围】", lines=[])])
NO_TEXT = RawPosting(**BASE, source_id="x.csv#4", position=4)


@pytest.mark.parametrize("bullets,text", [
    pytest.param(["五险一金", "带薪年假"], "五险一金\n带薪年假", id="two-bullets"),
    pytest.param(["熟悉CUDA, C++"], "熟悉CUDA, C++", id="one-bullet"),
    pytest.param(["a", "", "b"], "a\n\nb", id="an-empty-bullet-between"),
    pytest.param([""], "", id="one-empty-bullet"),
    pytest.param(["\u2028a\rb"], "\u2028a\rb", id="other-line-separators-kept"),
])
def test_a_section_is_stored_as_its_bullets_one_a_line_and_read_back(bullets, text):
    assert section_text("about", bullets) == text
    assert section_bullets(text) == bullets


def test_a_bullet_holding_a_line_break_is_refused_so_the_posting_is_quarantined_not_misread():
    with pytest.raises(ValueError, match="a bullet of section 'about' holds a line break"):
        section_text("about", ["做算子", "熟悉\nCUDA"])
    posting = normalize_posting(CARD).model_copy(update={"sections": {"benefits": ["五险\n一金"]}})
    with pytest.raises(ValueError, match="a bullet of section 'benefits' holds a line break"):
        posting_row(posting)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    postings = [normalize_posting(raw) for raw in (CARD, JD, NO_TEXT)]
    path = tmp_path_factory.mktemp("sections") / "jobs.db"
    db = open_db(path)
    Writer(db).write(Batch(None, postings=[posting_row(p) for p in postings]))
    yield db, postings
    db.close()


def test_the_rows_of_a_list_card_a_jd_and_a_posting_without_text(stored):
    db, _ = stored
    assert db.execute("SELECT posting_id, seq, key, heading, text FROM section_texts ORDER BY posting_id, seq"
                      ).fetchall() == [
        (1, 0, "benefits", "福利待遇", "五险一金\n带薪年假\n年终奖"),
        (2, 0, "responsibilities", "岗位职责：", "负责推理算子开发\n优化CUDA内核。"),
        (2, 1, "requirements", "任职要求：", "熟悉C++\n三年以上经验"),
        (2, 2, "benefits", "福利待遇", "五险一金"),
    ]  # the section without bullets has no row, as it had none before
    # the bullets found in the description, in order, are stored as where; the others as text
    assert db.execute("SELECT posting_id, seq, text, spans FROM sections ORDER BY posting_id, seq").fetchall() == [
        (1, 0, "五险一金\n带薪年假\n年终奖", None), (2, 0, None, "[[7,8],[18,9]]"), (2, 1, None, "[[34,5],[42,6]]"),
        (2, 2, "五险一金", None)]


def test_every_reader_gets_the_bullets_the_normalizer_made(stored):
    db, postings = stored
    made = [{key: bullets for key, bullets in p.sections.items() if bullets} for p in postings]
    assert made[1] == {"responsibilities": ["负责推理算子开发", "优化CUDA内核。"], "requirements": ["熟悉C++", "三年以上经验"],
                       "benefits": ["五险一金"]}
    records = list(iter_export(db))
    assert [r["sections"] for r in records] == made
    assert [r["section_headings"] for r in records] == [
        {"benefits": "福利待遇"}, {"responsibilities": "岗位职责：", "requirements": "任职要求：", "benefits": "福利待遇"}, {}]
    rows = db.execute("SELECT posting_id, key, text FROM section_texts ORDER BY posting_id, seq")
    assert bullets_by_posting(rows) == {1: made[0], 2: made[1]}


def test_the_table_is_its_primary_key_and_has_no_other_index(stored):
    db, _ = stored
    assert db.execute("SELECT sql LIKE '%WITHOUT ROWID' FROM sqlite_master WHERE name = 'sections'").fetchone() == (1,)
    assert db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'sections'").fetchall() == []


# Every query of sections in crawler/ (read.py, sections.py for dedupe, retagging and scoring, fts.py, writer.py):
# through the view section_texts (its sections are `s`, its postings `p`), the writer's delete on the table.
READER_QUERIES = [
    pytest.param("SELECT * FROM section_texts WHERE posting_id IN (?,?) ORDER BY posting_id, seq", (1, 2), "s",
                 id="export"),
    pytest.param("SELECT posting_id, key, text FROM section_texts WHERE posting_id IN (?,?) ORDER BY posting_id, seq",
                 (1, 2), "s", id="dedupe-and-retag"),
    pytest.param("SELECT posting_id, key, text FROM section_texts WHERE posting_id BETWEEN ? AND ?"
                 " ORDER BY posting_id, seq", (1, 2), "s", id="score"),
    pytest.param("SELECT body FROM postings_fts_source WHERE id = ?", (1,), "s", id="search-rebuild"),
    pytest.param("DELETE FROM sections WHERE posting_id = ?", (1,), "sections", id="writer-update"),
]


@pytest.mark.parametrize("sql,params,name", READER_QUERIES)
def test_each_query_of_sections_searches_the_primary_key_without_sorting(stored, sql, params, name):
    db, _ = stored
    plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {sql}", params).fetchall()]
    assert [step for step in plan if step.split()[1:2] == [name]] in (
        [f"SEARCH {name} USING PRIMARY KEY (posting_id=?)"],
        [f"SEARCH {name} USING PRIMARY KEY (posting_id>? AND posting_id<?)"])
    assert [step for step in plan if step.split()[1:2] == ["p"]] in ([], ["SEARCH p USING INTEGER PRIMARY KEY (rowid=?) LEFT-JOIN"])
    assert not any("TEMP B-TREE" in step for step in plan)


def test_the_migration_keeps_every_bullet_and_heading_of_an_old_database(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    conn = sqlite3.connect(path)
    before: dict[int, dict[str, list[str]]] = {}
    headings: dict[int, dict[str, str]] = {}
    for pid, key, heading, text in conn.execute("SELECT posting_id, key, heading, text FROM sections ORDER BY posting_id, seq"):
        before.setdefault(pid, {}).setdefault(key, []).append(text)
        headings.setdefault(pid, {}).setdefault(key, heading or "")
    conn.close()
    assert sum(len(b) for s in before.values() for b in s.values()) == 28
    db = open_db(path)
    records = list(iter_export(db))
    assert {r["id"]: r["sections"] for r in records} == before
    assert {r["id"]: r["section_headings"] for r in records} == headings
    assert db.execute("SELECT posting_id, seq, key FROM sections ORDER BY posting_id, seq").fetchall() == [
        (pid, seq, key) for pid, sections in before.items() for seq, key in enumerate(sections)]
    db.close()
