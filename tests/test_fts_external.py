"""The full-text index keeps no copy of the text (crawler/store/fts.py): ``postings_fts`` reads it from the view
``postings_fts_source`` over ``postings`` and ``sections``. What the writer indexes is what the view reads, and
every write that changes an indexed value (a changed posting, retagging, a rebuild, the migration) leaves the index
exact: FTS5's integrity check against the content (``rank`` 1) passes."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from conftest import AS_OF, SEEDS, indexed_postings, run_cli
from crawler.store import connect_readonly, fts
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from normalize.models import Posting
from test_migrations import made_by

INTEGRITY = f"INSERT INTO {fts.TABLE} ({fts.TABLE}, rank) VALUES ('integrity-check', 1)"


def _posting(n: int, **fields) -> Posting:
    return Posting(key=f"k{n}", source="s", source_id=str(n), locator=f"f{n}", content_hash=f"h{n}", as_of=AS_OF,
                   first_seen=AS_OF, last_seen=AS_OF, **fields)


SHAPES = [
    pytest.param(dict(title="AI算子开发工程师", company="吉利汽车", city="杭州", tags=["五险一金", "CUDA"],
                      skills=["CUDA", "FlashAttention"], sections={"about": ["负责算子开发"], "requirements": ["熟悉C++"]}),
                 id="tags-skills-sections"),
    pytest.param(dict(title="数据分析师", description="负责报表，熟悉SQL"), id="description-without-sections"),
    pytest.param(dict(title="PyTorch Engineer", description="left out", sections={"about": ["vLLM serving"]}),
                 id="sections-leave-the-description-out"),
    pytest.param(dict(title="运维", description="岗位职责：", sections={"responsibilities": []}),
                 id="sections-without-bullets-keep-the-description"),
    pytest.param(dict(title="ＣＵＤＡ 工程师", company=None, city=None, tags=["TensorRT-LLM"]),
                 id="full-width-and-no-company"),
    pytest.param(dict(), id="nothing-to-index"),
]


@pytest.mark.parametrize("fields", SHAPES)
def test_the_view_reads_what_the_writer_indexed(tmp_path, fields):
    row = posting_row(_posting(1, **fields))
    db = open_db(tmp_path / "jobs.db")
    Writer(db).write(Batch(None, postings=[row]))
    conn = db.conn
    assert conn.execute(f"SELECT * FROM {fts.SOURCE}").fetchall() == [(1, *row.search)]
    assert conn.execute(f"SELECT rowid, * FROM {fts.TABLE}").fetchall() == [(1, *row.search)]
    conn.execute(INTEGRITY)


def test_the_index_stores_no_copy_of_the_text(seeded_db):
    conn = sqlite3.connect(seeded_db)
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'postings_fts%'")}
    assert names == {"postings_fts", "postings_fts_data", "postings_fts_idx", "postings_fts_config", "postings_fts_source"}


def test_a_connection_without_the_functions_finds_ids_but_reads_no_text(seeded_db):
    plain = sqlite3.connect(seeded_db)
    assert fts.search_ids(plain, "算子") == [1, 2]
    with pytest.raises(sqlite3.OperationalError, match="^SQL logic error$"):  # FTS5 reports the missing fts_text so
        plain.execute(f"SELECT {fts.snippet_sql()} FROM {fts.TABLE} WHERE {fts.TABLE} MATCH ?", (fts.fts_query("吉利"),))
    start, end = fts.HIGHLIGHT
    reader = connect_readonly(seeded_db)
    assert reader.execute(f"SELECT rowid, {fts.snippet_sql(tokens=8)} FROM {fts.TABLE} WHERE {fts.TABLE} MATCH ?",
                          (fts.fts_query("吉利"),)).fetchall() == [(1, f"{start}吉利{end}汽车")]


def _changed_seeds(tmp_path):
    """The seeds again, the first one's title changed: an updated posting."""
    folder = tmp_path / "seeds"
    shutil.copytree(SEEDS, folder)
    first = folder / "000_7c4373297891d5ca.txt"
    text = first.read_text(encoding="utf-8")
    assert text.count("AI算子开发工程师") == 2  # the title, twice in the dump
    first.write_text(text.replace("AI算子开发工程师", "AI编译器开发工程师"), encoding="utf-8")
    return folder


def _taxonomy_without_vtune(tmp_path):
    from importlib import resources

    from normalize import skills as skills_module

    text = resources.files(skills_module.__package__).joinpath("data/skills.toml").read_text(encoding="utf-8")
    custom = tmp_path / "skills.toml"
    custom.write_text("".join(line + "\n" for line in text.splitlines()
                              if not line.lstrip().startswith('{ name = "VTune"')), encoding="utf-8")
    return custom


def _rebuild(path):
    db = open_db(path)
    with db.conn:
        fts.rebuild(db.conn)
    db.close()


@pytest.mark.parametrize("change, found", [
    pytest.param(lambda db, tmp: run_cli("ingest", str(_changed_seeds(tmp)), "--db", str(db), "--as-of", AS_OF,
                                         check=True),
                 {"编译器": [1], "AI算子开发工程师": [], "算子": [1, 2]}, id="a-changed-posting"),
    pytest.param(lambda db, tmp: run_cli("retag", "--db", str(db), "--taxonomy", str(_taxonomy_without_vtune(tmp)),
                                         check=True),
                 {"VTune": [1], "算子": [1, 2]}, id="retag"),
    pytest.param(lambda db, tmp: _rebuild(db), {"算子": [1, 2], "苏州": [2]}, id="rebuild"),
])
def test_writes_keep_the_index_exact(seeded_db, tmp_path, change, found):
    db = tmp_path / "jobs.db"
    shutil.copy(seeded_db, db)
    change(db, tmp_path)
    conn = open_db(db).conn
    conn.execute(INTEGRITY)
    assert {query: fts.search_ids(conn, query) for query in found} == found


def test_retag_changes_the_skills_the_index_reads(seeded_db, tmp_path):
    db = tmp_path / "jobs.db"
    shutil.copy(seeded_db, db)
    run_cli("retag", "--db", str(db), "--taxonomy", str(_taxonomy_without_vtune(tmp_path)), check=True)
    conn = open_db(db).conn
    skills = conn.execute(f"SELECT {fts.PLAIN_SQL.format('skills')} FROM {fts.TABLE} WHERE rowid = 1").fetchone()[0]
    assert "Nsight Compute" in skills and "VTune" not in skills
    conn.execute(INTEGRITY)


@pytest.mark.parametrize("version", ["bd6b0cc", "6e4c4bc"])
def test_the_migration_makes_the_index_read_the_stored_text(tmp_path, version):
    db = open_db(made_by(version, tmp_path))
    conn = db.conn
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'postings_fts_content'").fetchone() == (0,)
    conn.execute(INTEGRITY)
    assert (fts.search_ids(conn, "算子"), fts.search_ids(conn, "Attention")) == ([1, 2], [1])
    db.close()


@pytest.mark.parametrize("version", ["bd6b0cc", "60ec602", "6e4c4bc"])
def test_the_index_stops_keeping_column_sizes_and_finds_the_same(tmp_path, version):
    found = {"算子": [1, 2], "Attention": [1], "CUDA": [1, 2], "苏州": [2], "工程师": [1, 2], "nothing-matches": []}
    path = made_by(version, tmp_path)
    if version == "6e4c4bc":  # its index is already this one, with the sizes
        with sqlite3.connect(path) as conn:
            assert {q: fts.search_ids(conn, q) for q in found} == found
    db = open_db(path)
    conn = db.conn
    assert conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'postings_fts_%' ORDER BY name").fetchall() == [
        ("postings_fts_config",), ("postings_fts_data",), ("postings_fts_idx",), ("postings_fts_source",)]
    conn.execute(INTEGRITY)
    assert {q: fts.search_ids(conn, q) for q in found} == found
    assert indexed_postings(conn) == 2
    db.close()


def test_an_index_left_empty_by_a_migration_is_filled_at_the_next_open(seeded_db, tmp_path):
    """A run killed between migration 0058 and the rebuild leaves the empty index and the note: the next open fills it."""
    db = tmp_path / "jobs.db"
    shutil.copy(seeded_db, db)
    with sqlite3.connect(db) as conn:
        conn.execute(f"INSERT INTO {fts.TABLE} ({fts.TABLE}) VALUES ('delete-all')")  # as a new index: empty
        assert fts.search_ids(conn, "算子") == []
        conn.execute("INSERT INTO meta (key, value) VALUES ('fts_rebuild_pending', '1')")
    conn = open_db(db).conn
    assert (fts.search_ids(conn, "算子"), indexed_postings(conn)) == ([1, 2], 2)
    assert conn.execute("SELECT count(*) FROM meta WHERE key = 'fts_rebuild_pending'").fetchone() == (0,)
    conn.execute(INTEGRITY)


@pytest.mark.parametrize(("stored", "indexed"), [
    pytest.param('["CUDA", "TensorRT"]', "CUDA; TensorRT", id="names"),
    pytest.param(None, "", id="null"),
    pytest.param("", "", id="empty-text"),
    pytest.param("not json [", "", id="not-json"),
    pytest.param('{"CUDA": 1}', "", id="an-object"),
    pytest.param('"CUDA"', "", id="a-bare-string"),
    pytest.param('[1, null, "CUDA", ["x"]]', "CUDA", id="only-its-strings"),
])
def test_the_view_reads_any_stored_skills_value(stored, indexed):
    """A ``skills`` or ``tags`` column edited by hand into anything else is read as the names it holds, never an error
    that would stop every read of the index."""
    assert fts.FUNCTIONS["fts_skills"](stored) == fts.index_text(indexed)
    assert fts.FUNCTIONS["fts_body"](stored, None, None) == fts.index_text(indexed.replace("; ", " "))
