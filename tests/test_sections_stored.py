"""``sections.key`` and ``heading`` are generated from ``key_stored`` and ``heading_stored``: the canonical keys and
the most common headings as a code, any other text as written — also a text that reads as a number, which the writer
stores as its bytes so that it is never a code (crawler/store/rows.py: coded). What users read is the text as written."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import AS_OF
from crawler.store.codes import HEADING_CODES, SECTION_CODES, case_sql, coded
from crawler.store.migrations import normalized
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.skills import insert_skill_rows
from crawler.store.writer import Writer
from normalize.models import SECTION_KEYS, Posting
from test_migrations import migrated

SECTIONS = [
    # key, heading as written, how key_stored and heading_stored hold them (typeof, value)
    ("requirements", "最低要求", ("integer", 2), ("integer", 4)),
    ("benefits", "福利待遇", ("integer", 6), ("integer", 2)),
    ("about", "", ("integer", 1), ("integer", 1)),
    ("responsibilities", "岗位职责：", ("integer", 3), ("integer", 7)),
    ("preferred", "加分项", ("integer", 4), ("integer", 18)),
    ("compensation", "薪资待遇", ("integer", 5), ("text", "薪资待遇")),
    ("团队介绍", "团队介绍", ("text", "团队介绍"), ("text", "团队介绍")),
    ("1", "2.5", ("blob", b"1"), ("blob", b"2.5")),
    ("Requirements", "Requirements:", ("text", "Requirements"), ("text", "Requirements:")),
]
TYPE = {"integer": "int", "text": "str", "blob": "bytes"}


@pytest.mark.parametrize("key, heading, key_stored, heading_stored", SECTIONS, ids=[s[0] for s in SECTIONS])
def test_coded_keeps_every_key_and_heading(key, heading, key_stored, heading_stored):
    for text, codes, stored in ((key, SECTION_CODES, key_stored), (heading, HEADING_CODES, heading_stored)):
        value = coded(text, codes)
        assert (type(value).__name__, value) == (TYPE[stored[0]], stored[1])


def test_the_writer_stores_the_codes_and_users_read_the_texts(tmp_path):
    postings = [Posting(key=f"k{i}", source="s", source_id=str(i), locator="f", content_hash=f"h{i}", as_of=AS_OF,
                        first_seen=AS_OF, last_seen=AS_OF, title="t", sections={key: ["一条"]},
                        section_headings={key: heading}) for i, (key, heading, *_) in enumerate(SECTIONS)]
    db = open_db(tmp_path / "jobs.db")
    Writer(db).write(Batch(None, postings=[posting_row(p) for p in postings]))
    stored = db.conn.execute("SELECT key, heading, typeof(key_stored), key_stored, typeof(heading_stored),"
                             " heading_stored FROM sections ORDER BY posting_id").fetchall()
    assert stored == [(key, heading, *ks, *hs) for key, heading, ks, hs in SECTIONS]
    read = db.conn.execute("SELECT key, heading, text FROM section_texts ORDER BY posting_id").fetchall()
    assert read == [(key, heading, "一条") for key, heading, *_ in SECTIONS]
    db.close()


SKILL_SECTIONS = [("tags", ("integer", 7)), ("requirements", ("integer", 2)), ("团队介绍", ("text", "团队介绍")),
                  ("1", ("blob", b"1"))]


def test_the_skills_section_is_stored_as_its_code(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    with db.conn:
        insert_skill_rows(db.conn, [(1, "CUDA", section, seq, 1, 0, 4) for seq, (section, _) in enumerate(SKILL_SECTIONS)])
        insert_skill_rows(db.conn, [(1, "CUDA", "tags", 0, 2, 5, 4)])  # the same skill and section again: replaced
    got = db.execute("SELECT section, typeof(section_stored), section_stored, count, first_offset FROM posting_skills"
                     " ORDER BY seq").fetchall()
    assert got == [("tags", "integer", 7, 2, 5)] + [(section, *stored, 1, 0) for section, stored in SKILL_SECTIONS[1:]]
    db.close()


@pytest.mark.parametrize("table, column, codes", [
    ("sections", "key", SECTION_CODES), ("sections", "heading", HEADING_CODES), ("posting_skills", "section", SECTION_CODES)])
def test_schema_reads_each_code_back_as_its_text(tmp_path, table, column, codes):
    """schema.sql's generated column is the one crawler/store/codes.py makes (the migrations add that one), and each
    code reads back as its text."""
    db = open_db(tmp_path / "jobs.db")
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", [table]).fetchone()[0]
    assert normalized(case_sql(column, codes)) in normalized(sql)
    insert, rows = ((f"INSERT INTO sections (posting_id, seq, {column}_stored) VALUES (1, ?, ?)", enumerate(codes.values()))
                    if table == "sections" else
                    ("INSERT INTO posting_skills (posting_id, skill, seq, section_stored) VALUES (1, ?, ?, ?)",
                     ((f"s{seq}", seq, code) for seq, code in enumerate(codes.values()))))
    with db.conn:
        db.conn.executemany(insert, rows)
    assert [r[0] for r in db.execute(f"SELECT {column} FROM {table} ORDER BY seq")] == list(codes)
    assert SECTION_KEYS == tuple(SECTION_CODES)[:6] and list(SECTION_CODES)[6:] == ["tags"]
    db.close()


def test_the_migrations_code_the_stored_sections(tmp_path):
    """A database whose sections and skills hold their key, heading and section as text (before migrations 0061 and
    0062), and one of an earlier version: opened, each reads the same texts, now from their codes."""
    path = tmp_path / "jobs.db"
    test_the_writer_stores_the_codes_and_users_read_the_texts(tmp_path)
    conn = sqlite3.connect(path)
    with conn:
        insert_skill_rows(conn, [(1, "CUDA", section, seq, 1, 0, 4) for seq, (section, _) in enumerate(SKILL_SECTIONS)])
    read = ("SELECT posting_id, seq, key, heading, text, spans FROM sections ORDER BY 1, 2",
            "SELECT posting_id, skill, section, seq, count, first_offset, length FROM posting_skills ORDER BY seq")
    expected = [conn.execute(query).fetchall() for query in read]
    with conn:
        for name, kind in conn.execute("SELECT name, type FROM sqlite_master WHERE type IN ('view', 'trigger')").fetchall():
            conn.execute(f"DROP {kind} [{name}]")
        for table, columns, key in (("sections", "posting_id, seq, key, heading, text, spans", "posting_id, seq"),
                                    ("posting_skills", "posting_id, skill, section, seq, count, first_offset, length",
                                     "posting_id, skill, section")):
            conn.execute(f"CREATE TABLE old ({columns}, PRIMARY KEY ({key})) WITHOUT ROWID")
            conn.execute(f"INSERT INTO old SELECT {columns} FROM {table}")
            conn.execute(f"DROP TABLE {table}")
            conn.execute(f"ALTER TABLE old RENAME TO {table}")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name IN ('0061_sections_codes', '0062_posting_skills_section_code')")
    conn.close()
    open_db(path).close()
    conn = sqlite3.connect(path)
    assert [conn.execute(query).fetchall() for query in read] == expected
    assert conn.execute("SELECT typeof(key_stored), key_stored, typeof(heading_stored), heading_stored FROM sections"
                        " ORDER BY posting_id").fetchall() == [(*ks, *hs) for _, _, ks, hs in SECTIONS]
    assert conn.execute("SELECT typeof(section_stored), section_stored FROM posting_skills ORDER BY seq").fetchall() \
        == [stored for _, stored in SKILL_SECTIONS]
    conn.close()
    query = "SELECT posting_id, seq, key, heading FROM sections ORDER BY posting_id, seq"
    _, _, after = migrated("6e4c4bc", tmp_path, query)  # a file of its own: 6e4c4bc.db
    seed = [("about", "关于这个职位"), ("requirements", "最低要求"), ("responsibilities", "工作职责"), ("preferred", "优先资格")]
    assert after == [(1, seq, *s) for seq, s in enumerate(seed)] + [(2, seq, *s) for seq, s in enumerate(seed[:3])]


@pytest.mark.parametrize("version", ["6e4c4bc", "60ec602", "efe1ac1"])
def test_old_databases_keep_their_skills_sections(tmp_path, version):
    query = "SELECT posting_id, skill, section, count FROM posting_skills ORDER BY 1, 2, 3"
    _, before, after = migrated(version, tmp_path, query)
    assert after == before and len(after) == 104
    assert {section for _, _, section, _ in after} == {"tags", "about", "requirements", "responsibilities", "preferred"}
