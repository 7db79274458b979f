"""A posting's extra fields stored once: each distinct [key, value] pair a row of ``extra_entries``, ``postings.extra``
the array of their ids in key order, read back exactly as the object (crawler/store/extra.py, crawler/store/entries.py)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import export_records, run_cli, sql
from crawler.store import extra
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.writer import Writer, refused_row
from normalize.posting import normalize_posting
from test_migrations import made_by
from test_pipelines import raw_posting

AS_OF = "2026-12-01T12:00:00+08:00"


@pytest.fixture
def db(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    yield db
    db.close()


def entries(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT id, entry FROM extra_entries ORDER BY id").fetchall()


# --------------------------------------------------------------------------- one row per distinct pair

STORED = [
    pytest.param([{"b": "2", "a": "1"}], [(1, '["a","1"]'), (2, '["b","2"]')], ["[2,1]"], id="ids-in-key-order"),
    pytest.param([{"a": "1"}, {"a": "1", "c": "3"}], [(1, '["a","1"]'), (2, '["c","3"]')], ["[1]", "[1,2]"],
                 id="a-pair-shared-is-stored-once"),
    pytest.param([{"a": "1"}, {"a": "2"}], [(1, '["a","1"]'), (2, '["a","2"]')], ["[1]", "[2]"],
                 id="same-key-other-value-is-another-pair"),
    pytest.param([{}, None, {"k": None}], [(1, '["k",null]')], [None, None, "[1]"], id="none-stored-as-null"),
]


@pytest.mark.parametrize(("objects", "rows", "stored"), STORED)
def test_each_distinct_pair_is_one_row(db, objects, rows, stored):
    assert extra.intern_values(db.conn, [extra.entry_texts(o) for o in objects]) == stored
    assert entries(db.conn) == rows
    assert extra.expand(db.conn, stored) == [o or {} for o in objects]


VALUES = [
    pytest.param({"s": "文本"}, id="string"),
    pytest.param({"n": 3, "x": 2.5, "neg": -1}, id="numbers"),
    pytest.param({"b": True, "f": False}, id="booleans"),
    pytest.param({"l": ["D轮融资", "弹性工作", 1]}, id="list"),
    pytest.param({"o": {"inner": {"deep": [1, {"k": "v"}]}, "z": None}}, id="nested-object"),
    pytest.param({"null": None}, id="null"),
    pytest.param({"公司介绍": "数据驱动 🚀 ÄÖ"}, id="unicode-key-and-value"),
    pytest.param({"nul": "a\x00b"}, id="nul-character"),
    pytest.param({"ls": "line\u2028sep\u2029para"}, id="line-separators"),
    pytest.param({"z": "1", "a": "2", "m": "3"}, id="key-order-not-sorted"),
    pytest.param({"1": "x", "": "empty key"}, id="odd-keys"),
]


@pytest.mark.parametrize("obj", VALUES)
def test_an_object_comes_back_exactly(db, obj):
    [stored] = extra.intern_values(db.conn, [extra.entry_texts(obj)])
    [back] = extra.expand(db.conn, [stored])
    assert back == obj
    assert list(back) == list(obj)  # key order
    assert [type(v) for v in back.values()] == [type(v) for v in obj.values()]
    assert sorted(json.loads(stored)) == [i for i, _ in entries(db.conn)] == list(range(1, len(obj) + 1))


@pytest.mark.parametrize(("stored", "obj"), [
    pytest.param(None, {}, id="null"),
    pytest.param('{"site":"indeed","n":"2"}', {"site": "indeed", "n": "2"}, id="object-not-yet-migrated"),
    pytest.param("{}", {}, id="empty-object-not-yet-migrated"),
])
def test_a_value_not_made_of_ids_reads_as_it_is(db, stored, obj):
    assert extra.expand(db.conn, [stored]) == [obj]


# --------------------------------------------------------------------------- through the writer


def posting(source_id: str, fields: dict[str, str]):
    return posting_row(normalize_posting(raw_posting(source_id=source_id, extra=fields)))


def stored_extra(db) -> list[tuple]:
    return db.conn.execute("SELECT source_id, extra FROM postings ORDER BY id").fetchall()


INTRO = "甲公司是一家数据公司"


def test_a_second_posting_reusing_pairs_adds_no_rows(db):
    Writer(db).write(Batch(postings=[posting("p1", {"公司介绍": INTRO, "firstType": "开发"})]))
    first = entries(db.conn)
    Writer(db).write(Batch(postings=[posting("p2", {"公司介绍": INTRO, "firstType": "开发"})]))
    assert entries(db.conn) == first == [(1, '["firstType","开发"]'), (2, f'["公司介绍","{INTRO}"]')]
    assert stored_extra(db) == [("p1", "[2,1]"), ("p2", "[2,1]")]


def test_writing_the_same_postings_again_adds_no_entries(db):
    batch = Batch(postings=[posting("p1", {"a": "1", "b": "2"}), posting("p2", {"a": "1"})])
    Writer(db).write(batch)
    before = (entries(db.conn), stored_extra(db))
    Writer(db).write(batch)
    assert (entries(db.conn), stored_extra(db)) == before == (
        [(1, '["a","1"]'), (2, '["b","2"]')], [("p1", "[1,2]"), ("p2", "[1]")])


REPLACED = [
    pytest.param({"a": "new"}, [(1, '["a","1"]'), (3, '["a","new"]')], [("p1", "[3]"), ("p2", "[1]")],
                 id="orphan-pruned-shared-kept"),
    pytest.param({}, [(1, '["a","1"]')], [("p1", None), ("p2", "[1]")], id="extra-dropped"),
    pytest.param({"b": "2", "a": "1"}, [(1, '["a","1"]'), (2, '["b","2"]')], [("p1", "[2,1]"), ("p2", "[1]")],
                 id="same-pairs-reordered-nothing-pruned"),
]


@pytest.mark.parametrize(("fields", "rows", "postings"), REPLACED)
def test_a_replaced_extra_prunes_the_pairs_no_posting_names(db, fields, rows, postings):
    Writer(db).write(Batch(postings=[posting("p1", {"a": "1", "b": "2"}), posting("p2", {"a": "1"})]))
    Writer(db).write(Batch(postings=[posting("p1", fields)]))
    assert (entries(db.conn), stored_extra(db)) == (rows, postings)
    [(snapshot,)] = db.conn.execute("SELECT snapshot FROM posting_versions").fetchall()
    assert json.loads(snapshot)["extra"] == {"a": "1", "b": "2"}  # the version replaced, read before the prune


@pytest.mark.parametrize(("fields", "text"), [
    pytest.param({"b": "2", "a": "1"}, '{"b": "2", "a": "1"}', id="pairs"),
    pytest.param({}, "{}", id="none"),
])
def test_a_refused_postings_quarantine_row_shows_its_extra_as_the_object(fields, text):
    assert json.loads(refused_row(posting("p1", fields), ValueError("x"))[-1])["extra"] == text


def test_the_view_lists_each_postings_pairs_in_order(db):
    Writer(db).write(Batch(postings=[posting("p1", {"z": "1", "a": "2"}), posting("p2", {})]))
    assert db.conn.execute("SELECT * FROM posting_extra ORDER BY posting_id, position").fetchall() == [
        (1, 0, "z", "1"), (1, 1, "a", "2")]


# --------------------------------------------------------------------------- an old database


OLD = {"公司介绍": INTRO, "n": 3, "list": ["a", 1], "nested": {"k": None}, "ls": "x\u2028y", "nul": "a\x00b"}


def test_migration_converts_each_object_to_ids_and_back(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    conn = sqlite3.connect(path)
    ids = [pid for (pid,) in conn.execute("SELECT id FROM postings ORDER BY id")]
    conn.executemany("UPDATE postings SET extra = ? WHERE id = ?", [
        (json.dumps(OLD, ensure_ascii=False), ids[0]), (json.dumps({"n": 3, "公司介绍": INTRO}), ids[1])])
    conn.commit()
    conn.close()
    open_db(path).close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT id, extra FROM postings ORDER BY id").fetchall() == [(ids[0], "[6,3,1,4,2,5]"),
                                                                                     (ids[1], "[3,6]")]
    assert entries(conn) == [(1, '["list",["a",1]]'), (2, '["ls","x\u2028y"]'), (3, '["n",3]'),
                             (4, '["nested",{"k":null}]'), (5, '["nul","a\\u0000b"]'), (6, f'["公司介绍","{INTRO}"]')]
    back = extra.expand(conn, [e for (e,) in conn.execute("SELECT extra FROM postings ORDER BY id")])
    assert back == [OLD, {"n": 3, "公司介绍": INTRO}] and list(back[0]) == list(OLD)
    conn.close()


# --------------------------------------------------------------------------- a real ingest

CSV = ("title,company,city,公司介绍,firstType\n"
       f"数据分析师,甲公司,北京,{INTRO},开发|测试\n"
       f"SQL工程师,甲公司,上海,{INTRO},开发|测试\n"
       "算法工程师,乙公司,北京,乙公司做算法,算法\n")
INGESTED = [(1, '["firstType","开发|测试"]'), (2, '["firstType","算法"]'), (3, '["公司介绍","乙公司做算法"]'),
            (4, f'["公司介绍","{INTRO}"]')]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """A CSV ingested, ingested again unchanged, then with one cell changed: the database after each."""
    folder = tmp_path_factory.mktemp("extra")
    csv, path = folder / "jobs.csv", folder / "jobs.db"
    csv.write_text(CSV, encoding="utf-8")
    steps = {}
    for step, text in (("first", CSV), ("again", CSV), ("changed", CSV.replace("乙公司做算法", "乙公司做推荐"))):
        csv.write_text(text, encoding="utf-8")
        run_cli("ingest", str(csv), "--db", str(path), "--as-of", AS_OF, "-q", check=True)
        steps[step] = (sql(path, "SELECT id, entry FROM extra_entries ORDER BY id"),
                       sql(path, "SELECT id, extra FROM postings ORDER BY id"),
                       [(r["id"], r["extra"]) for r in export_records(path)])
    steps["path"] = path
    return steps


EXPORTED = [(1, {"公司介绍": INTRO, "firstType": "开发|测试"}), (2, {"公司介绍": INTRO, "firstType": "开发|测试"}),
            (3, {"公司介绍": "乙公司做算法", "firstType": "算法"})]


@pytest.mark.slow
@pytest.mark.parametrize(("step", "rows", "postings", "exported"), [
    pytest.param("first", INGESTED, [(1, "[4,1]"), (2, "[4,1]"), (3, "[3,2]")], EXPORTED, id="first-ingest"),
    pytest.param("again", INGESTED, [(1, "[4,1]"), (2, "[4,1]"), (3, "[3,2]")], EXPORTED, id="same-file-adds-none"),
    pytest.param("changed", [*INGESTED[:2], INGESTED[3], (5, '["公司介绍","乙公司做推荐"]')],
                 [(1, "[4,1]"), (2, "[4,1]"), (3, "[5,2]")],
                 [*EXPORTED[:2], (3, {"公司介绍": "乙公司做推荐", "firstType": "算法"})], id="changed-cell-prunes-the-old"),
])
def test_an_ingest_stores_each_pair_once(ingested, step, rows, postings, exported):
    assert ingested[step] == (rows, postings, exported)


@pytest.mark.slow
def test_datasette_shows_a_postings_extra_as_its_object(ingested):
    """The posting page's "All columns of this row" and the postings table show the object, as when it was stored
    whole; the row's JSON keeps the stored ids."""
    import asyncio

    from markupsafe import escape

    from crawler.serve.app import make_datasette

    ds = make_datasette(ingested["path"])
    cell = f'<td class="col-extra type-str">{escape(json.dumps(EXPORTED[0][1], ensure_ascii=False))}</td>'
    page = asyncio.run(ds.client.get("/jobs/postings/1")).text
    table = asyncio.run(ds.client.get("/jobs/postings?_columns=all&id=1")).text
    data = asyncio.run(ds.client.get("/jobs/postings/1.json?_shape=array")).json()
    assert (cell in page, cell in table) == (True, True)
    assert "[4,1]" not in page and data[0]["extra"] == "[4,1]"
