"""Derived rows stored once and small (issue 39): what users read is rendered from what is stored, identical to
what the tagger made."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import AS_OF, SEEDS, run_cli
from crawler.store.rows import raw_text
from crawler.store.skills import PS_COLS, evidence_records, skill_rows
from normalize.skills import load_taxonomy, snippet
from test_skills import SHARED, _load_eval, _random_texts

TAXONOMY = load_taxonomy()
CATEGORIES = {row["name"]: row["category"] for row in TAXONOMY.rows()}


def tagged_evidence(sections, tags) -> list[dict]:
    """The tagger's hits with the snippet of each first hit cut from the whole text the tagger scans (its blocks:
    the tags, then the sections, joined by line breaks)."""
    blocks = [("tags", tags)] if tags else []
    blocks += list(sections.items())
    whole, base = "\n".join("\n".join(lines) for _, lines in blocks), {}
    at = 0
    for key, lines in blocks:
        base.setdefault(key, at)
        at += len("\n".join(lines)) + 1
    return [{**hit._asdict(), "snippet": snippet(whole, base[hit.section] + hit.first_offset,
                                                 base[hit.section] + hit.first_offset + len(hit.matched))}
            for hit in TAXONOMY.tag(sections, tags)]


def assert_evidence_read_back(cases) -> int:
    """Each case's evidence, stored as ``posting_skills`` rows and read back, is the tagger's, field for field, its
    snippet as cut from the whole text the tagger scanned."""
    hits_seen = 0
    for sections, tags in cases:
        sections = {key: [lines] if isinstance(lines, str) else list(lines) for key, lines in sections.items()}
        if tags and "tags" in sections:
            continue  # a section keyed like the tags block: normalize_sections never makes one ("tags (section)")
        hits = TAXONOMY.tag(sections, tags)
        rows = [dict(zip(PS_COLS, row)) for row in skill_rows(1, hits)]
        assert evidence_records(rows, sections, list(tags), CATEGORIES) == tagged_evidence(sections, tags)
        hits_seen += len(hits)
    return hits_seen


@pytest.mark.parametrize("seed", [pytest.param(seed, id=f"seed-{seed}") for seed in range(3)])
def test_evidence_read_back_equals_the_taggers_on_random_text(seed):
    texts = _random_texts(300, seed)
    cases = [({"about": texts[i:i + 3], "requirements": texts[i + 3].split("\n")}, texts[i + 4].split("\n"))
             for i in range(0, len(texts) - 5, 5)]
    assert assert_evidence_read_back(cases) > 100


@pytest.mark.shared_data
def test_evidence_read_back_equals_the_taggers_on_the_shared_rows():
    if not SHARED.is_dir():
        pytest.skip("../shared/data is absent")
    cases = _load_eval().load_reference_cases(SHARED)
    assert assert_evidence_read_back([(case.sections, case.tags) for case in cases]) >= 60


@pytest.fixture(scope="module")
def seeds_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("lean") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    return db


def test_posting_skills_store_offsets_not_copies(seeds_db):
    conn = sqlite3.connect(seeds_db)
    columns = [row[1] for row in conn.execute("PRAGMA table_xinfo(posting_skills)")]
    assert columns == ["posting_id", "skill", "section_stored", "seq", "count", "first_offset", "length", "section"]
    assert conn.execute("SELECT sql LIKE '%WITHOUT ROWID' FROM sqlite_master WHERE name = 'posting_skills'").fetchone() == (1,)
    # seed 003's 性能优化 in its responsibilities: the text as written at the offset
    row = conn.execute("SELECT s.first_offset, s.length, group_concat(t.text, char(10)) FROM posting_skills s"
                       " JOIN postings p ON p.id = s.posting_id AND p.locator LIKE '%003%'"
                       " JOIN sections t ON t.posting_id = s.posting_id AND t.key = s.section"
                       " WHERE s.skill = 'performance optimization' AND s.section = 'responsibilities'").fetchone()
    assert row[2][row[0]:row[0] + row[1]] == "性能优化"
    conn.close()


def test_a_one_posting_input_is_stored_compressed(seeds_db):
    conn = sqlite3.connect(seeds_db)
    rows = conn.execute("SELECT locator, text, text_zstd FROM raw_inputs ORDER BY locator").fetchall()
    conn.close()
    seeds = sorted(SEEDS.glob("*.txt"))
    assert [(locator, text) for locator, text, _ in rows] == [(p.name, None) for p in seeds]
    assert [raw_text(text, packed) for _, text, packed in rows] == [p.read_text(encoding="utf-8") for p in seeds]
    assert all(len(packed) < len(p.read_bytes()) * 0.6 for (_, _, packed), p in zip(rows, seeds))
