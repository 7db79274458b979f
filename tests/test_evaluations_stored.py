"""``evaluations`` stored small (migration 0056): the scorer stored as a code in ``scorer_stored``
(crawler/store/rows.py: scorer_stored) and read back as the same text from the generated ``scorer``."""

from __future__ import annotations

import asyncio
import itertools
import re
import shutil
import sqlite3

import pytest
import sqlite_utils
from datasette.utils import tilde_encode

from conftest import sql
from crawler.alerts import store as alerts
from crawler.fit import store as fit
from crawler.score import store as score
from crawler.store.migrations import migrations
from crawler.store.rows import scorer_stored, stored_columns
from crawler.store.schema import open_db
from normalize.models import Evaluation

SCORERS = [
    # scorer, as stored
    pytest.param("jobcrawl-v1", 1, id="ours"),
    pytest.param("source", 2, id="source"),
    pytest.param("fit:x", "fit:x", id="fit"),
    pytest.param("fit:1", "fit:1", id="fit-numeric-name"),
    pytest.param("jobcrawl-v2", "jobcrawl-v2", id="another-version"),
    pytest.param("1", b"1", id="text-1-not-code-1"),
    pytest.param("2", b"2", id="text-2-not-code-2"),
    pytest.param(" 2.0", b" 2.0", id="text-a-number-reads"),
    pytest.param("1e5", b"1e5", id="exponent"),
    pytest.param("0x10", "0x10", id="hex-stays-text"),
    pytest.param("", "", id="empty"),
    pytest.param("来源", "来源", id="non-ascii"),
]


@pytest.fixture
def db(seeded_db, tmp_path):
    """A copy of the seeds' database: postings 1 and 2, each with the app's own evaluation and ours."""
    path = tmp_path / "jobs.db"
    shutil.copy(seeded_db, path)
    return path


@pytest.mark.parametrize("scorer, stored", SCORERS)
def test_a_scorer_is_stored_as_its_code_or_as_written(scorer, stored):
    assert scorer_stored(scorer) == stored


@pytest.mark.parametrize("scorer, stored", SCORERS)
def test_a_scorer_reads_back_as_written(db, scorer, stored):
    """Whatever the scorer, ``scorer`` is its text; its levels are ours' rule for code 1 only, as given for the rest;
    the row is found by its stored key."""
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM evaluations WHERE posting_id = 1")
        conn.execute("INSERT INTO evaluations (posting_id, scorer_stored, overall, overall_level_given) VALUES (1, ?, 90, 'x')",
                     (scorer_stored(scorer),))
        got = conn.execute("SELECT scorer, typeof(scorer), scorer_stored, overall_level FROM evaluations"
                           " WHERE posting_id = 1 AND scorer_stored = ?", (scorer_stored(scorer),)).fetchall()
        conn.rollback()
    assert got == [(scorer, "text", stored, "较高" if scorer == "jobcrawl-v1" else "x")]


def test_every_text_the_affinity_would_make_a_number_is_kept_apart():
    """Every text of up to four characters of digits, signs, points, exponents and spaces reads back as written
    and never as a code (the column's integer affinity makes ``'1'``, ``' 1.0'``, ``'1e0'`` the number 1)."""
    alphabet = "1.e+- \tx"
    texts = ["".join(t) for n in range(5) for t in itertools.product(alphabet, repeat=n)]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (scorer_stored INTEGER, scorer TEXT GENERATED ALWAYS AS (CASE scorer_stored"
                 " WHEN 1 THEN 'jobcrawl-v1' WHEN 2 THEN 'source' ELSE CAST(scorer_stored AS TEXT) END) VIRTUAL)")
    conn.executemany("INSERT INTO t (scorer_stored) VALUES (?)", [(scorer_stored(t),) for t in texts])
    assert [s for (s,) in conn.execute("SELECT scorer FROM t ORDER BY rowid")] == texts
    assert conn.execute("SELECT count(*) FROM t WHERE scorer_stored IN (1, 2)").fetchone() == (0,)


LISTING = "SELECT score, score_level, score_by, score_by_stored FROM postings WHERE id = 1"


@pytest.mark.parametrize("steps", [pytest.param([
    ("DELETE FROM evaluations WHERE posting_id = 1", (), (None, None, None, None)),
    ("INSERT INTO evaluations (posting_id, scorer_stored, overall, overall_level_given) VALUES (1, ?, 72, '中等')",
     (scorer_stored("source"),), (72, "中等", "source", 2)),
    ("INSERT INTO evaluations (posting_id, scorer_stored, overall) VALUES (1, ?, 85)", (scorer_stored("jobcrawl-v1"),),
     (85, "较高", "jobcrawl-v1", 1)),
    ("INSERT INTO evaluations (posting_id, scorer_stored, overall) VALUES (1, ?, 10)", (scorer_stored("1"),),
     (85, "较高", "jobcrawl-v1", 1)),  # the text '1' is no code: not the listing's score
    ("UPDATE evaluations SET overall = 59 WHERE posting_id = 1 AND scorer_stored = ?", (scorer_stored("jobcrawl-v1"),),
     (59, "较低", "jobcrawl-v1", 1)),
    ("UPDATE evaluations SET overall = NULL WHERE posting_id = 1 AND scorer_stored = ?", (scorer_stored("jobcrawl-v1"),),
     (72, "中等", "source", 2)),  # ours without an overall: the app's own
    ("DELETE FROM evaluations WHERE posting_id = 1 AND scorer_stored = ?", (scorer_stored("source"),),
     (None, "信息不足", "jobcrawl-v1", 1)),  # our level alone
    ("DELETE FROM evaluations WHERE posting_id = 1 AND scorer_stored = ?", (scorer_stored("jobcrawl-v1"),),
     (None, None, None, None)),
], id="source-ours-odd-update-delete")])
def test_the_triggers_keep_the_listing_score(db, steps):
    with sqlite3.connect(db) as conn:
        got = [conn.execute(statement, params) and conn.execute(LISTING).fetchone() for statement, params, _ in steps]
    assert got == [expected for *_, expected in steps]


@pytest.mark.parametrize("scorer", ["jobcrawl-v1", "source", "fit:me", "1"])
def test_writing_an_evaluation_again_replaces_it(db, scorer):
    """The scoring step's write on the key (posting_id, scorer_stored): one row, the new values."""
    with sqlite3.connect(db) as conn:
        for overall in (40, 90):
            row = conn.execute(f"{score._SELECT} WHERE id = 1").fetchone()  # the posting as scoring reads it
            score.write_evaluations(conn, [score.evaluation_row(row, Evaluation(scorer=scorer, overall=overall,
                                                                                pay=overall),
                                                                "2026-12-07T03:39:44+00:00", overall)])
        got = conn.execute("SELECT scorer, overall, pay, inputs_digest, computed_at FROM evaluations"
                           " WHERE posting_id = 1 AND scorer = ?", (scorer,)).fetchall()
        conn.rollback()
    assert got == [(scorer, 90, 90, 90, "2026-12-07T03:39:44+00:00")]


def test_scoring_writes_every_stored_column_of_an_evaluation(db):
    """Written again, an evaluation is updated in place: every value it stores is one the scoring step writes."""
    with sqlite3.connect(db) as conn:
        stored = [name for _, name, *_, hidden in conn.execute("PRAGMA table_xinfo(evaluations)") if hidden == 0]
    assert sorted(stored) == sorted(stored_columns(score.SCORE_COLS, "{}").split(", "))


def _statements(conn: sqlite3.Connection, call) -> list[str]:
    """The statements ``call`` runs that read ``evaluations`` (their values in place, as SQLite expands them)."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    return [s for s in seen if "evaluations" in s and not s.startswith(("BEGIN", "COMMIT", "ROLLBACK"))]


READERS = [
    # what runs, the plan each of its statements on evaluations shows
    pytest.param(lambda c: score.digests(c, "jobcrawl-v1", 1, 2),
                 ["SEARCH evaluations USING INDEX idx_evaluations_scorer_overall (scorer_stored=?)"], id="digests"),
    pytest.param(lambda c: score.best(c, "jobcrawl-v1", 5),
                 ["SEARCH e USING INDEX idx_evaluations_scorer_overall (scorer_stored=?)"], id="best"),
    pytest.param(lambda c: score.agreement_pairs(c, "jobcrawl-v1", ["overall"]),
                 ["SEARCH s USING INDEX idx_evaluations_scorer_overall (scorer_stored=?)",
                  "SEARCH o USING INDEX sqlite_autoindex_evaluations_1 (posting_id=? AND scorer_stored=?)"], id="agreement"),
    pytest.param(lambda c: fit.refresh(c, "me"),
                 ["SEARCH evaluations USING INDEX idx_evaluations_scorer_overall (scorer_stored=?)"], id="blocks"),
    pytest.param(lambda c: alerts.pending(c, profile="me"),
                 ["SEARCH e USING INDEX sqlite_autoindex_evaluations_1 (posting_id=? AND scorer_stored=?)"], id="alert-fit"),
    pytest.param(lambda c: list(alerts.unseen_rows(sqlite_utils.Database(c), 1, profile="me")),
                 ["SEARCH e USING INDEX sqlite_autoindex_evaluations_1 (posting_id=? AND scorer_stored=?)"], id="watch-fit"),
]


@pytest.mark.parametrize("call, plans", READERS)
def test_a_query_on_one_scorer_uses_the_key_or_the_index(db, call, plans):
    with sqlite3.connect(db) as conn:
        statements = _statements(conn, lambda: call(conn))
        got = [row[3] for s in statements for row in conn.execute(f"EXPLAIN QUERY PLAN {s}")
               if re.search(r"scorer_stored|idx_evaluations|^SCAN evaluations", row[3])]
        conn.rollback()
    assert list(dict.fromkeys(got)) == plans  # a batched reader runs its statement more than once


def test_the_score_triggers_and_the_writer_find_a_row_by_its_key(db):
    """The triggers' read of a posting's ours-or-source rows and the writer's removal of a source row use the key."""
    with sqlite3.connect(db) as conn:
        triggers = " ".join(s for (s,) in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'"
                                                       " AND tbl_name = 'evaluations'"))
        inner = ("SELECT overall FROM evaluations WHERE posting_id = 1 AND scorer_stored IN (1, 2)"
                 " AND (overall IS NOT NULL OR overall_level IS NOT NULL) ORDER BY overall IS NOT NULL DESC,"
                 " scorer_stored = 1 DESC LIMIT 1")
        plans = [" | ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {q}")) for q in (
            inner, f"DELETE FROM evaluations WHERE posting_id = 1 AND scorer_stored = {scorer_stored('source')}")]
    assert triggers.count("WHERE posting_id = NEW.posting_id AND scorer_stored IN (1, 2)") == 4  # 2 in insert and update
    assert plans == ["SEARCH evaluations USING INDEX sqlite_autoindex_evaluations_1 (posting_id=? AND scorer_stored=?)"
                     " | USE TEMP B-TREE FOR ORDER BY",
                     "SEARCH evaluations USING INDEX sqlite_autoindex_evaluations_1 (posting_id=? AND scorer_stored=?)"]


def test_the_key_and_the_index_hold_the_code(db):
    assert sql(db, "SELECT m.name, group_concat(c.name) FROM sqlite_master m, pragma_index_info(m.name) c"
                   " WHERE m.tbl_name = 'evaluations' AND m.type = 'index' GROUP BY 1 ORDER BY 1") == [
        ("idx_evaluations_scorer_overall", "scorer_stored,overall"),
        ("sqlite_autoindex_evaluations_1", "posting_id,scorer_stored")]


EVERY_FIELD = ("SELECT posting_id, quote(scorer), " + ", ".join(f"quote({c})" for c in (
    "overall", "pay", "growth", "worklife", "mission", "overall_level", "pay_level", "growth_level", "worklife_level",
    "mission_level", "overall_level_given", "pay_level_given", "growth_level_given", "worklife_level_given",
    "mission_level_given", "summary", "notes", "explanations", "evidence", "problems", "completeness", "signals",
    "inputs_digest", "computed_at", "computed_at_stored")) + " FROM evaluations ORDER BY posting_id, scorer")
OLD_ROWS = [
    # posting_id, scorer, overall, pay, the levels given, summary, evidence, completeness, inputs_digest, computed_at
    (1, "jobcrawl-v1", 85, None, None, None, "[[3],[],[5]]", 0.75, -2**63, 1796614784),
    (1, "source", 72, 80, "中等", "好", '{"pay":[1]}', None, None, "2026-12-07T03:39:44.5+00:00"),
    (1, "fit:me", 99, None, "很高", None, "[]", None, 2**63 - 1, None),
    (2, "1", 10, 11, "低", "odd", None, 1.0, 0, 0),
    (2, "2", None, None, None, "", "", 0.0, 1, "yesterday"),
    (2, "", 50, 50, "中", None, None, None, None, None),
    (3, "jobcrawl-v1", None, None, None, None, None, None, None, None),
]


def test_migration_0056_keeps_every_evaluation_field(tmp_path):
    """A database at 0055 (its evaluations a rowid table keyed by the scorer's text) migrates with every field read
    back as it was, byte for byte, and its postings' scores untouched."""
    path = tmp_path / "jobs.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="0056_evaluations_stored_small")
    db.conn.executemany("INSERT INTO postings (id, key, score, score_level_given, score_by_stored) VALUES (?, ?, ?, ?, ?)",
                        [(1, "a", 85, None, 1), (2, "b", None, None, None), (3, "c", None, None, 1)])
    db.conn.executemany(
        "INSERT INTO evaluations (posting_id, scorer, overall, pay, overall_level_given, pay_level_given, summary,"
        " evidence, completeness, inputs_digest, computed_at_stored, notes, signals) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
        " ?, ?, '[\"n\"]', x'00ff')", [(*r[:5], r[4], *r[5:]) for r in OLD_ROWS])
    db.conn.commit()
    before = db.execute(EVERY_FIELD).fetchall()
    scores = db.execute("SELECT id, score, score_level, score_by FROM postings ORDER BY id").fetchall()
    db.close()
    open_db(path).close()
    assert sql(path, EVERY_FIELD) == before
    assert sql(path, "SELECT id, score, score_level, score_by FROM postings ORDER BY id") == scores
    assert sql(path, "SELECT posting_id, scorer_stored FROM evaluations ORDER BY posting_id, scorer") == [
        (r[0], scorer_stored(r[1])) for r in sorted(OLD_ROWS, key=lambda r: r[:2])]
    assert sql(path, "PRAGMA integrity_check") == [("ok",)]


def test_datasette_finds_each_evaluation_by_its_key_and_pages_through_all(seeded_db, tmp_path):
    """Datasette passes a row's key values as text: each evaluation's row page opens, and a table page of one row at a
    time reaches every row once."""
    from crawler.serve.app import make_datasette

    path = tmp_path / "jobs.db"
    shutil.copy(seeded_db, path)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO evaluations (posting_id, scorer_stored, overall) VALUES (1, 'fit:me', 70)")
    expected = sql(path, "SELECT posting_id, scorer FROM evaluations ORDER BY posting_id, scorer_stored")
    ds = make_datasette(path)

    def get(url: str):
        response = asyncio.run(ds.client.get(url))
        assert response.status_code == 200, url
        return response.json()

    seen, url = [], "/jobs/evaluations.json?_shape=objects&_size=1"
    while url:
        page = get(url)
        seen += [(r["posting_id"], r["scorer"]) for r in page["rows"]]
        url = page["next"] and f"/jobs/evaluations.json?_shape=objects&_size=1&_next={page['next']}"
    assert seen == expected
    assert [get(f"/jobs/evaluations/{pid},{tilde_encode(str(scorer_stored(s)))}.json")["rows"][0][2] for pid, s in expected
            ] == [s for _, s in expected]
