"""A section whose every bullet is in the posting's description, in order, is stored as where (``sections.spans``,
character offsets) and no text; the view ``section_texts`` gives back exactly the text that was stored before:
in SQLite's characters as in Python's, for CJK and astral characters alike, after a real ingest, through the
full-text index and after the migration of a database that kept every text."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from conftest import FIXTURES, export_records, run_cli
from crawler.store import fts
from crawler.store.read import iter_export
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.sections import stored_spans
from crawler.store.writer import Writer
from normalize.models import RawPosting
from normalize.posting import normalize_posting
from normalize.sections import spans_of

# description, bullets → spans (None: the section keeps its text)
SPANS = [
    pytest.param("负责算子开发，熟悉CUDA", ["负责算子开发", "熟悉CUDA"], [(0, 6), (7, 6)], id="found"),
    pytest.param("1.负责A；2.负责B；", ["负责A", "负责B"], [(2, 3), (8, 3)], id="numbering-and-semicolons-removed"),
    pytest.param("负责算子开发", ["负责算子开发", "熟悉CUDA"], None, id="a-bullet-not-found"),
    pytest.param("甲乙", ["乙", "甲"], None, id="out-of-order"),
    pytest.param("aba", ["ab", "ba"], None, id="overlapping"),
    pytest.param("五险一金 五险一金", ["五险一金", "五险一金"], [(0, 4), (5, 4)], id="a-bullet-twice"),
    pytest.param("ab", ["a", "", "b"], [(0, 1), (1, 0), (1, 1)], id="an-empty-bullet"),
    pytest.param("任职要求", [], None, id="no-bullets"),
    pytest.param(None, ["熟悉CUDA"], None, id="no-description"),
    pytest.param("", [""], None, id="an-empty-description"),
    pytest.param("🚀负责😀CUDA𠀀算子", ["负责", "CUDA𠀀算子"], [(1, 2), (4, 7)], id="astral-characters"),
    pytest.param("é\u0301中文\u2028x", ["\u0301中文", "x"], [(1, 3), (5, 1)], id="combining-and-line-separator"),
    pytest.param("a\x00b", ["b"], None, id="a-nul-in-the-description"),
]


@pytest.mark.parametrize("description,bullets,spans", SPANS)
def test_spans_of(description, bullets, spans):
    assert spans_of(description, bullets) == spans
    assert stored_spans(description, bullets) == (None if spans is None else json.dumps(spans).replace(" ", ""))


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A fresh database holding a posting per case of :data:`SPANS` (its one section stored as the writer would)."""
    db = open_db(tmp_path_factory.mktemp("spans") / "jobs.db")
    for pid, case in enumerate(SPANS, 1):
        description, bullets, _ = case.values
        db.execute("INSERT INTO postings (id, key, description) VALUES (?, ?, ?)", (pid, f"k{pid}", description))
        spans = stored_spans(description, bullets)
        db.execute("INSERT INTO sections (posting_id, seq, key_stored, heading_stored, text, spans) VALUES (?, 0, 1, 1, ?, ?)",
                   (pid, "\n".join(bullets) if spans is None else None, spans))
    db.conn.commit()
    yield db
    db.close()


@pytest.mark.parametrize("pid,case", list(enumerate(SPANS, 1)), ids=[case.id for case in SPANS])
def test_the_view_reads_in_sqlite_the_characters_python_counted(db, pid, case):
    _, bullets, _ = case.values
    assert db.execute("SELECT text FROM section_texts WHERE posting_id = ?", (pid,)).fetchone() == ("\n".join(bullets),)


BASE = {"source": "tabular", "locator": "x.csv", "fetched_at": "2026-12-01T00:00:00+00:00",
        "as_of": "2026-12-01T00:00:00+00:00", "company": "示例智能", "title": "CUDA工程师"}
JD = RawPosting(**BASE, source_id="x.csv#1", position=1,
                description="岗位职责：1.负责🚀推理算子开发；2.优化𠀀CUDA内核。任职要求：熟悉C++")
JD_CHANGED = JD.model_copy(update={"description": "岗位职责：1.负责🚀推理算子开发；2.优化CUDA内核。任职要求：熟悉Rust",
                                   "as_of": "2026-12-02T00:00:00+00:00", "fetched_at": "2026-12-02T00:00:00+00:00"})
CARD = RawPosting(**BASE, source_id="x.csv#2", position=2, description="负责推理",
                  sections=[{"heading": "福利待遇", "lines": ["五险一金", "带薪年假"]}])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The writer's rows of a JD with astral characters and a card whose benefits are in no description, then the
    JD changed (the index deletes what it held through the view)."""
    path = tmp_path_factory.mktemp("written") / "jobs.db"
    db = open_db(path)
    writer = Writer(db)
    first = [normalize_posting(raw) for raw in (JD, CARD)]
    rows = [posting_row(p) for p in first]
    writer.write(Batch(None, postings=rows))
    stored = {"path": path, "search": [tuple(row.search) for row in rows],
              "source": [tuple(r[1:]) for r in db.execute(f"SELECT * FROM {fts.SOURCE} ORDER BY id")],
              "rows": db.execute("SELECT posting_id, seq, key, text, spans FROM sections ORDER BY 1, 2").fetchall(),
              "texts": db.execute("SELECT posting_id, seq, text FROM section_texts ORDER BY 1, 2").fetchall(),
              "made": [{k: b for k, b in p.sections.items() if b} for p in first],
              "export": [r["sections"] for r in iter_export(db)]}
    writer.write(Batch(None, postings=[posting_row(normalize_posting(JD_CHANGED))]))
    yield db, stored
    db.close()


def test_the_writer_stores_spans_where_every_bullet_is_in_the_description(written):
    _, stored = written
    assert stored["rows"] == [(1, 0, "responsibilities", None, "[[7,9],[19,10]]"),
                              (1, 1, "requirements", None, "[[34,5]]"),
                              (2, 0, "about", None, "[[0,4]]"),
                              (2, 1, "benefits", "五险一金\n带薪年假", None)]
    assert stored["texts"] == [(1, 0, "负责🚀推理算子开发\n优化𠀀CUDA内核。"), (1, 1, "熟悉C++"),
                               (2, 0, "负责推理"), (2, 1, "五险一金\n带薪年假")]
    assert stored["export"] == stored["made"]
    assert stored["source"] == stored["search"]  # the index reads through the view what the writer indexed


def test_a_changed_posting_gets_new_spans_and_the_index_stays_whole(written):
    db, _ = written
    assert db.execute("SELECT seq, text, spans FROM sections WHERE posting_id = 1 ORDER BY seq").fetchall() == [
        (0, None, "[[7,9],[19,9]]"), (1, None, "[[33,6]]")]
    assert db.execute("SELECT text FROM section_texts WHERE posting_id = 1 ORDER BY seq").fetchall() == [
        ("负责🚀推理算子开发\n优化CUDA内核。",), ("熟悉Rust",)]
    db.execute(f"INSERT INTO {fts.TABLE} ({fts.TABLE}, rank) VALUES ('integrity-check', 1)")
    assert [fts.search_ids(db.conn, term) for term in ("Rust", "五险一金", "C++", "推理算子")] == [[1], [2], [], [1]]


def _downgraded(path) -> None:
    """Make ``path`` a database of the version before sections kept spans: every text stored, no spans column."""
    conn = sqlite3.connect(path)
    fts.register(conn)
    conn.execute("UPDATE sections SET text = (SELECT v.text FROM section_texts v"
                 " WHERE v.posting_id = sections.posting_id AND v.seq = sections.seq)")
    conn.execute("DROP VIEW postings_fts_source")
    conn.execute("DROP VIEW section_texts")
    conn.execute("ALTER TABLE sections DROP COLUMN spans")
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0043_sections_spans'")
    conn.commit()
    conn.close()


def test_the_migration_turns_the_texts_of_an_old_database_into_spans(written, tmp_path):
    db, stored = written
    rows = db.execute("SELECT posting_id, seq, key, heading, text, spans FROM sections ORDER BY 1, 2").fetchall()
    texts = db.execute("SELECT * FROM section_texts ORDER BY 1, 2").fetchall()
    path = tmp_path / "old.db"
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(stored["path"], path)
    _downgraded(path)
    assert sqlite3.connect(path).execute("SELECT posting_id, seq, text FROM sections ORDER BY 1, 2").fetchall() == [
        (pid, seq, text) for pid, seq, _, _, text in texts]
    migrated = open_db(path)
    assert migrated.execute("SELECT posting_id, seq, key, heading, text, spans FROM sections ORDER BY 1, 2"
                            ).fetchall() == rows
    assert migrated.execute("SELECT * FROM section_texts ORDER BY 1, 2").fetchall() == texts
    migrated.execute(f"INSERT INTO {fts.TABLE} ({fts.TABLE}, rank) VALUES ('integrity-check', 1)")
    migrated.close()


@pytest.mark.slow
def test_an_ingest_of_full_jds_stores_spans_and_reads_the_same_text(tmp_path):
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(FIXTURES / "tabular" / "jds.txt"), "--format", "lines", "--db", str(db),
            "--as-of", "2026-12-01", check=True)
    conn = sqlite3.connect(db)
    fts.register(conn)
    assert conn.execute("SELECT posting_id, seq, key, text, spans FROM sections ORDER BY 1, 2").fetchall() == [
        (1, 0, "responsibilities", None, "[[7,14],[24,12]]"), (1, 1, "requirements", None, "[[43,12],[58,12]]"),
        (2, 0, "responsibilities", None, "[[5,12]]"), (2, 1, "requirements", None, "[[23,18]]"),
        (3, 0, "about", None, "[[0,22]]")]
    assert conn.execute("SELECT posting_id, seq, text FROM section_texts ORDER BY 1, 2").fetchall() == [
        (1, 0, "负责GPU集群调度系统的开发\n参与训练任务的性能分析。"), (1, 1, "熟悉Kubernetes\n熟悉Go或Python。"),
        (2, 0, "维护模型推理服务的稳定性"), (2, 1, "三年以上后端开发经验，熟悉Linux"),
        (3, 0, "负责数据标注平台的前端开发，熟悉React。")]
    assert [list(r["sections"].values()) for r in export_records(db)] == [
        [["负责GPU集群调度系统的开发", "参与训练任务的性能分析。"], ["熟悉Kubernetes", "熟悉Go或Python。"]],
        [["维护模型推理服务的稳定性"], ["三年以上后端开发经验，熟悉Linux"]], [["负责数据标注平台的前端开发，熟悉React。"]]]
    conn.execute(f"INSERT INTO {fts.TABLE} ({fts.TABLE}, rank) VALUES ('integrity-check', 1)")
    conn.close()
