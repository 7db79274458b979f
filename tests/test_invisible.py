"""Invisible format characters (issue #38, class 3): ``外\\u200b包`` was not blocked, ``CU\\u200bDA`` not found by
search nor tagged. Every Unicode format character (category Cf, read from ``unicodedata`` over the whole code
space) is read as nothing by every matcher, while the stored text keeps it and evidence points into the stored text.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import unicodedata

import pytest
import sqlite_utils

from conftest import run_cli
from crawler.store import fts
from crawler.store.read import export_record
from crawler.fit.step import score_fit_and_blocks
from normalize.blocklist import Blocklist, BlockHit
from normalize.fit import load_profile
from normalize.dedupe import normalize_company, posting_signature
from normalize.salary import parse_salary
from normalize.sections import section_key, split_sections
from normalize.skills import SkillHit, hit_evidence, load_taxonomy
from normalize.text import FORMAT_CHARS, MAYBE_FORMAT_CHARS, FormatMap, clean_line, fold
from test_fts import _index

CF = [chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"]
EVERY_CF = [pytest.param(c, id=f"U+{ord(c):04X}") for c in CF]
# Removed from stored text by clean_line (they can display a title reversed); every other one is kept.
BIDI_OVERRIDES = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
BLOCKLIST = Blocklist(companies=["星云人才"], keywords=["外包", "/驻场(开发)?/"])
TAXONOMY = load_taxonomy()


def test_the_format_characters_are_every_cf_code_point():
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert len(CF) > 150  # Unicode 14: 163
    assert re.findall(f"[{FORMAT_CHARS}]", every) == CF
    assert re.findall(f"[{MAYBE_FORMAT_CHARS}]", "".join(CF)) == CF


# --------------------------------------------------------------------------- every Cf × every matcher


@pytest.mark.parametrize("cf", EVERY_CF)
def test_fold_reads_a_format_character_as_nothing(cf):
    assert fold(f"外{cf}包 ＣＵ{cf}ＤＡ{cf}") == "外包 cuda"


@pytest.mark.parametrize("cf", EVERY_CF)
def test_blocklist_blocks_through_a_format_character(cf):
    assert BLOCKLIST.check_posting(title=f"算法工程师（外{cf}包）", company="甲公司") == BlockHit(
        "keyword:外包", "title", "外包", "算法工程师(外包)")
    assert BLOCKLIST.check_posting(title="算法工程师", company=f"星云{cf}人才") == BlockHit(
        "company:星云人才", "company", "星云人才", "星云人才")
    assert BLOCKLIST.check_posting(title="算法工程师", company="甲", description=f"需要驻{cf}场开发") == BlockHit(
        "keyword:/驻场(开发)?/", "text", "驻场开发", "需要驻场开发")


@pytest.mark.parametrize("cf", EVERY_CF)
def test_search_finds_through_a_format_character_both_ways(cf):
    conn = _index([f"精通CU{cf}DA编程", "算法工程师（外包）", f"人力资源外{cf}包", "Go 开发"])
    assert fts.search_ids(conn, "CUDA") == [1]
    assert fts.search_ids(conn, "外包") == [2, 3]
    assert fts.search_ids(conn, f"外{cf}包") == [2, 3]
    assert fts.search_ids(conn, f"CU{cf}DA -Go") == [1]
    assert fts.fts_query(f"外{cf}包") == fts.fts_query("外包")


@pytest.mark.parametrize("cf", EVERY_CF)
def test_tagging_reads_through_a_format_character_and_reports_the_span_as_written(cf):
    line = f"熟悉CU{cf}DA，会用G{cf}it"
    hits = TAXONOMY.tag({"requirements": [line]})
    assert hits == [SkillHit("CUDA", "gpu", "requirements", 1, 2, f"CU{cf}DA"),
                    SkillHit("Git", "tool", "requirements", 1, 10, f"G{cf}it")]
    assert [e["snippet"] for e in hit_evidence(hits, {"requirements": [line]}, ())] \
        == [line, line]


@pytest.mark.parametrize("cf", EVERY_CF)
def test_a_heading_with_a_format_character_is_a_heading(cf):
    assert section_key(f"任职{cf}要求") == "requirements"
    line = f"岗位职责：负责算子开发 任职{cf}要求：熟悉CUDA"
    heading = clean_line(f"任职{cf}要求：")
    assert split_sections(line) == [("responsibilities", "岗位职责：", ["负责算子开发"]),
                                    ("requirements", heading, ["熟悉CUDA"])]


@pytest.mark.parametrize("cf", EVERY_CF)
def test_dedupe_keys_read_a_format_character_as_nothing(cf):
    def posting(infix: str) -> dict:
        return {"key": "1", "company": f"吉利{infix}汽车有限{infix}公司", "title": f"AI算子{infix}开发工程师",
                "city": f"杭{infix}州", "sections": {"requirements": [f"熟悉CU{infix}DA", f"精通C{infix}++"]},
                "first_seen": "2026-11-29T12:00:00+08:00", "url": None, "salary": None}

    assert normalize_company(f"吉利汽车有限{cf}公司") == "吉利汽车"
    assert posting_signature(posting(cf)) == posting_signature(posting(""))


@pytest.mark.parametrize("cf", EVERY_CF)
def test_salary_reads_through_a_format_character(cf):
    read = parse_salary(f"20{cf}-30K·1{cf}4薪")
    assert (read.status, read.min, read.max, read.months, read.raw) == ("parsed", 20000, 30000, 14, f"20{cf}-30K·1{cf}4薪")


# --------------------------------------------------------------------------- stored text and offsets

CLEAN = [  # U+200B and U+FEFF were spaces: 外 包 was stored, and matched
    pytest.param("外\u200b包", "外\u200b包", id="zero-width-space-kept-inside"),
    pytest.param("CU\ufeffDA", "CU\ufeffDA", id="bom-kept-inside"),
    pytest.param("\ufeff 算法 \u200b工程师 \u200b", "算法 \u200b工程师", id="trimmed-at-the-ends-as-before"),
]


@pytest.mark.parametrize("line, stored", CLEAN)
def test_clean_line_keeps_format_characters_inside_a_line(line, stored):
    assert clean_line(line) == stored


def test_evidence_offsets_point_at_the_span_of_the_stored_text():
    lines = ["\u200b\u200b熟悉\u2060CU\u200bDA\u00ad和C\u200d++", "了解Py\u00adTorch\ufeff、Trit\u200bon"]
    text = "\n".join(lines)
    hits = {h.skill: h for h in TAXONOMY.tag({"requirements": lines})}
    spans = {name: (h.first_offset, h.matched) for name, h in hits.items()}
    assert spans == {"CUDA": (5, "CU\u200bDA"), "C++": (12, "C\u200d++"), "PyTorch": (19, "Py\u00adTorch"),
                     "Triton": (29, "Trit\u200bon")}
    for offset, matched in spans.values():
        assert text[offset:offset + len(matched)] == matched


@pytest.mark.parametrize("text, spans", [
    pytest.param("abc", [(0, 3, "abc")], id="none"),
    pytest.param("\u200bab\u200b\u200bc\u200b", [(0, 3, "ab\u200b\u200bc"), (1, 2, "b"), (0, 1, "a"), (2, 3, "c")],
                 id="format-characters-outside-a-span-are-left-out"),
])
def test_format_map_maps_spans_back(text, spans):
    where = FormatMap(text)
    assert where.visible == "abc"
    assert [(s, e, text[where.start(s):where.end(e)]) for s, e, _ in spans] == spans


# --------------------------------------------------------------------------- end to end

E2E_CF = ["\u200b", "\u200d", "\u00ad", "\u2060", "\ufeff", "\U000e0041"]


@pytest.mark.slow
def test_ingest_stores_what_was_found_and_blocks_searches_and_tags_through_it(tmp_path):
    rows = [{"title": f"CU{cf}DA工程师", "company": f"甲{i}公司", "city": "杭州", "salary": "30-40K",
             "description": f"岗位职责：负责算子开发\n任职{cf}要求：熟悉CU{cf}DA\n驻{cf}场开发，外{cf}包岗位"}
            for i, cf in enumerate(E2E_CF)]
    rows += [{"title": "算法工程师", "company": "乙公司", "city": "杭州", "salary": "30-40K",
              "description": "任职要求：熟悉Python"},
             {"title": "CUDA工程师", "company": "丙公司", "city": "杭州", "salary": "30-40K", "description": "外 包"}]
    dump = tmp_path / "postings.jsonl"
    dump.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(dump), "--db", str(db), "--workers", "1", "-q", check=True)
    # Both terms must match: the query's 外\u200b包 and CUDA, in postings holding CU<Cf>DA and 外<Cf>包.
    found = run_cli("export", "--db", str(db), "--search", "CUDA 外\u200b包", "--columns", "company", check=True).stdout
    marked = [f"甲{i}公司" for i in range(len(E2E_CF))]
    assert sorted(json.loads(line)["company"] for line in found.splitlines()) == marked
    store = sqlite_utils.Database(db)
    profile = load_profile('name = "p"\nskills_have = ["CUDA"]\n[block]\nkeywords = ["外包"]\n', TAXONOMY)
    assert score_fit_and_blocks(store, profile)["blocked"] == len(E2E_CF)
    with sqlite3.connect(db) as conn:
        stored = conn.execute("SELECT title, skills FROM postings WHERE company LIKE '甲%' ORDER BY company").fetchall()
        assert stored == [(f"CU{cf}DA工程师", '["operator development", "CUDA"]') for cf in E2E_CF]
        evidence = [(e["section"], e["first_offset"], e["matched"]) for pid in range(1, len(E2E_CF) + 1)
                    for e in export_record(store, pid)["skill_evidence"] if e["skill"] == "CUDA"]
        assert evidence == [("requirements", 2, f"CU{cf}DA") for cf in E2E_CF]
        headings = conn.execute("SELECT DISTINCT heading FROM sections WHERE key = 'requirements'").fetchall()
        assert sorted(headings) == sorted([(f"任职{cf}要求：",) for cf in E2E_CF] + [("任职要求：",)])
        assert fts.search_ids(conn, "外包") == fts.search_ids(conn, "驻场") == list(range(1, len(E2E_CF) + 1))
        blocked = conn.execute("SELECT p.company, b.rule FROM posting_blocks b JOIN postings p ON p.id = b.posting_id "
                               "ORDER BY p.company").fetchall()
        assert blocked == [(company, "keyword:外包") for company in marked]
