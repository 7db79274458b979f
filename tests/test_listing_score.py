"""The listing's score (``postings.score``, ``score_level``, ``score_by``): kept by the score triggers (schema.sql),
set by the writer on a new posting from its source evaluation (crawler/store/rows.py: listing_score); a posting row
is rewritten only when its listing's score changes."""

from __future__ import annotations

import sqlite3
from functools import partial

import pytest

from conftest import AS_OF
from crawler.score import store as score
from crawler.store import evidence
from crawler.store.migrations import baseline, normalized
from crawler.store.rows import EVAL_COLS, NO_SCORE, Batch, evaluation_values, listing_score, posting_row, stored_columns
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from normalize.models import Evaluation
from normalize.posting import normalize_posting
from normalize.score import SCORER
from test_migrations import migrated
from test_pipelines import raw_posting

INSERT_EVAL = f"INSERT INTO evaluations ({stored_columns(EVAL_COLS)}) VALUES ({', '.join('?' * len(EVAL_COLS))})"
LISTING = "SELECT score, score_level, score_by FROM postings WHERE id = ?"
OURS = "jobcrawl-v1"
NONE = (None, None, None)


def evaluation(overall: int | None = None, level: str | None = None, scorer: str = "source") -> tuple:
    """An evaluation as the writer stores it (:func:`evaluation_values`), its overall's level as given."""
    return evaluation_values(Evaluation(scorer=scorer, overall=overall), AS_OF, level)


def insert_evaluation(conn: sqlite3.Connection, posting_id: int, values: tuple) -> None:
    conn.executemany(INSERT_EVAL, evidence.intern_rows(conn, [(posting_id, *values)], EVAL_COLS.index("evidence")))


@pytest.mark.parametrize("left, right, differs", [
    pytest.param((1, "a", 2), (1, "a", 2), 0, id="equal"),
    pytest.param((1, None, 2), (1, None, 2), 0, id="null-is-null"),
    pytest.param((None, None, None), (None, None, None), 0, id="all-null"),
    pytest.param((1, None, 2), (1, "a", 2), 1, id="null-is-not-a-value"),
    pytest.param((1, "a", 2), (1, None, 2), 1, id="a-value-is-not-null"),
    pytest.param((None, None, None), (0, None, None), 1, id="null-is-not-zero"),
    pytest.param((72, "中等", 2), (72, "中等", 1), 1, id="scorer-differs"),
    pytest.param((72, None, 1), (72.0, None, 1), 0, id="numbers-compare-by-value"),
])
def test_row_values_compare_null_as_a_value_with_is_not(left, right, differs):
    """The triggers' guard: ``IS NOT`` of row values is true where any pair differs, a NULL equal to a NULL only."""
    conn = sqlite3.connect(":memory:")
    assert conn.execute("SELECT (?, ?, ?) IS NOT (?, ?, ?)", (*left, *right)).fetchone() == (differs,)


def test_a_row_subquery_without_a_row_reads_as_nulls():
    conn = sqlite3.connect(":memory:")
    assert conn.execute("SELECT (NULL, NULL, NULL) IS NOT (SELECT 1, 2, 3 WHERE 0),"
                        " (1, NULL, NULL) IS NOT (SELECT 1, 2, 3 WHERE 0)").fetchone() == (0, 1)


@pytest.mark.parametrize("values, expected", [
    pytest.param(None, NO_SCORE, id="none"),
    pytest.param(evaluation(72, "中等"), (72, "中等", 2), id="source"),
    pytest.param(evaluation(72), (72, None, 2), id="source-overall-alone"),
    pytest.param(evaluation(None, "较高"), (None, "较高", 2), id="source-level-alone"),
    pytest.param(evaluation(), NO_SCORE, id="source-neither"),
    pytest.param(evaluation(85, scorer=SCORER), (85, None, 1), id="ours"),
    pytest.param(evaluation(scorer=SCORER), (None, None, 1), id="ours-without-overall-has-its-level"),
    pytest.param(evaluation(85, "较高", scorer="fit:me"), NO_SCORE, id="another-scorer"),
    pytest.param(evaluation(85, "较高", scorer="2"), NO_SCORE, id="the-text-2-is-no-code"),
])
def test_the_listing_score_of_a_lone_evaluation_is_the_triggers(tmp_path, values, expected):
    """:func:`listing_score` is what the insert triggers set on a posting whose only evaluation it is."""
    assert listing_score(values) == expected
    db = open_db(tmp_path / "jobs.db")
    with db.conn:
        db.execute("INSERT INTO postings (id, key) VALUES (1, 'k')")
        if values is not None:
            insert_evaluation(db.conn, 1, values)
    assert db.execute("SELECT score, score_level_given, score_by_stored FROM postings").fetchone() == expected


# --------------------------------------------------------------------------- sequences


ROW = posting_row(normalize_posting(raw_posting()))


def new(values: tuple | None, db) -> None:
    """The writer stores posting 1 new, with the source evaluation ``values``."""
    Writer(db).write(Batch(postings=[ROW._replace(evaluation=values)]))


def changed(version: int, values: tuple | None, db) -> None:
    """The writer stores posting 1 changed (a content hash of its own): its source evaluation deleted, ``values``
    inserted."""
    Writer(db).write(Batch(postings=[ROW._replace(content_hash=f"{version:064x}", evaluation=values)]))


def ours(overall: int | None, db) -> None:
    """The scoring step stores our evaluation of posting 1 (:func:`crawler.score.store.write_evaluations`)."""
    with db.conn as conn:
        row = conn.execute(f"{score._SELECT} WHERE id = 1").fetchone()
        score.write_evaluations(conn, [score.evaluation_row(row, Evaluation(scorer=SCORER, overall=overall), AS_OF,
                                                            overall or 0)])


def gone(scorer: str, db) -> None:
    with db.conn as conn:
        conn.execute("DELETE FROM evaluations WHERE posting_id = 1 AND scorer = ?", (scorer,))


@pytest.mark.parametrize("steps", [
    pytest.param([
        (partial(new, evaluation(72, "中等")), (72, "中等", "source"), 0),  # set by the writer
        (partial(ours, 85), (85, "较高", OURS), 1),
        (partial(ours, 85), (85, "较高", OURS), 0),  # scored again the same
        (partial(ours, None), (72, "中等", "source"), 1),  # ours without an overall: the app's own
        (partial(ours, 59), (59, "较低", OURS), 1),
        (partial(gone, OURS), (72, "中等", "source"), 1),
        (partial(changed, 1, evaluation(64, "中等")), (64, "中等", "source"), 2),  # deleted, then inserted
    ], id="source-then-ours"),
    pytest.param([
        (partial(new, evaluation(None, "较高")), (None, "较高", "source"), 0),
        (partial(ours, None), (None, "信息不足", OURS), 1),  # our level alone outranks the source's
        (partial(ours, 70), (70, "中等", OURS), 1),
        (partial(changed, 1, evaluation(80, "较高")), (70, "中等", OURS), 0),  # ours stays
        (partial(gone, OURS), (80, "较高", "source"), 1),
    ], id="source-level-alone"),
    pytest.param([
        (partial(new, evaluation()), NONE, 0),
        (partial(ours, None), (None, "信息不足", OURS), 1),
        (partial(gone, OURS), NONE, 1),
        (partial(changed, 1, evaluation(90)), (90, None, "source"), 1),
    ], id="source-with-neither"),
    pytest.param([
        (partial(new, None), NONE, 0),
        (partial(ours, 90), (90, "较高", OURS), 1),
        (partial(changed, 1, evaluation(50, "较低")), (90, "较高", OURS), 0),
        (partial(changed, 2, None), (90, "较高", OURS), 0),
    ], id="no-source"),
])
def test_the_listing_score_after_each_step(tmp_path, steps):
    """(score, score_level, score_by) after each step, and how many times it wrote the posting's score columns."""
    db = open_db(tmp_path / "jobs.db")
    db.execute("CREATE TEMP TABLE rewrites (id INTEGER)")
    db.execute("CREATE TEMP TRIGGER count_rewrites AFTER UPDATE OF score, score_level_given, score_by_stored"
               " ON postings BEGIN INSERT INTO rewrites VALUES (NEW.id); END")
    got = []
    for step, *_ in steps:
        step(db)
        got.append((db.execute(LISTING, [1]).fetchone(), db.execute("SELECT count(*) FROM rewrites").fetchone()[0]))
        db.execute("DELETE FROM rewrites")
    assert got == [(listing, rewrites) for _, listing, rewrites in steps]


# --------------------------------------------------------------------------- an older database


SCORE_TRIGGERS = "SELECT name, sql FROM sqlite_master WHERE name LIKE 'evaluations_score_%' ORDER BY name"


def test_a_migrated_database_gets_the_triggers_of_schema_sql_and_keeps_its_scores(tmp_path):
    path, before, after = migrated("6e4c4bc", tmp_path, SCORE_TRIGGERS)
    assert [name for name, _ in before] == ["evaluations_score_delete", "evaluations_score_insert",
                                            "evaluations_score_update"]
    assert [(name, normalized(sql)) for name, sql in after] == sorted(
        (name, normalized(sql)) for _, name, sql in baseline() if name.startswith("evaluations_score_"))
    db = open_db(path)
    listing = "SELECT id, score, score_level, score_by FROM postings ORDER BY id"
    assert db.execute(listing).fetchall() == [(1, 72, "中等", OURS), (2, 75, "中等", OURS)]  # as it was made
    with db.conn as conn:
        conn.execute("DELETE FROM evaluations WHERE posting_id = 1 AND scorer = ?", (OURS,))
    assert db.execute(listing).fetchall() == [(1, 72, "中等", "source"), (2, 75, "中等", OURS)]
    with db.conn as conn:
        insert_evaluation(conn, 1, evaluation(88, scorer=SCORER))
    assert db.execute(listing).fetchall() == [(1, 88, "较高", OURS), (2, 75, "中等", OURS)]
