"""The five ``evaluations`` levels and ``postings.score_level`` are generated columns: ours (``jobcrawl-v1``) by the
rule of normalize/posting.py ``level_for`` (信息不足 where the number is NULL), every other scorer's as stored in
``<level>_given`` — which the writers (for postings: the score triggers) leave NULL for ours."""

from __future__ import annotations

import shutil
import sqlite3

import pytest

from conftest import SEEDS, sql
from crawler import api
from crawler.store.rows import LEVEL_COLS, STORED_AS, scorer_stored
from crawler.store.schema import open_db
from normalize.posting import level_for
from normalize.score import INSUFFICIENT
from test_migrations import made_by

NUMBERS = [None, *range(-5, 106)]
LEVELS = ", ".join(LEVEL_COLS)
GIVEN = ", ".join(STORED_AS[c] for c in LEVEL_COLS)
SCORES = "SELECT p.id, p.score, p.score_level, p.score_by FROM postings p ORDER BY p.id"


@pytest.fixture(scope="module", params=["schema.sql", "migrated-6e4c4bc"])
def database(request, tmp_path_factory):
    """A database made from schema.sql, and one an earlier version made and migration 0051 brought forward."""
    tmp = tmp_path_factory.mktemp("levels")
    if request.param == "schema.sql":
        path = tmp / "jobs.db"
    else:
        path = made_by(request.param.split("-")[1], tmp)
    open_db(path).close()
    return path


def test_the_sql_rule_is_level_for_or_insufficient_for_every_number(database):
    """Our levels in SQL equal ``level_for(x) or INSUFFICIENT`` for every number from -5 to 105 and NULL, in each of
    the five columns (rows of posting ids no posting has: the table keeps no foreign key check here)."""
    with sqlite3.connect(database) as conn:
        conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, overall, pay, growth, worklife, mission)"
                         " VALUES (?, 1, ?, ?, ?, ?, ?)",
                         [(100000 + i, *(x,) * 5) for i, x in enumerate(NUMBERS)])
        got = {x: row for x, row in zip(NUMBERS, conn.execute(
            f"SELECT {LEVELS} FROM evaluations WHERE posting_id >= 100000 ORDER BY posting_id"))}
        conn.execute("DELETE FROM evaluations WHERE posting_id >= 100000")
    assert got == {x: (level_for(x) or INSUFFICIENT,) * 5 for x in NUMBERS}


@pytest.mark.parametrize("scorer, numbers, given", [
    pytest.param("source", (90, 20, None, 70, 85), ("中等", None, "较高", "较低", "很高"), id="source-off-the-thresholds"),
    pytest.param("source", (None,) * 5, (None,) * 5, id="source-without-levels"),
    pytest.param("fit:me", (99, None, None, None, None), (None,) * 5, id="fit-none"),
    pytest.param("jobcrawl-v1", (85, 59, 60, 79, None), ("x",) * 5, id="ours-ignores-a-stored-level"),
])
def test_every_other_scorer_reads_what_it_stored(database, scorer, numbers, given):
    ours = scorer == "jobcrawl-v1"
    expected = tuple(level_for(x) or INSUFFICIENT for x in numbers) if ours else given
    with sqlite3.connect(database) as conn:
        conn.execute(f"INSERT INTO evaluations (posting_id, scorer_stored, overall, pay, growth, worklife, mission, {GIVEN})"
                     " VALUES (200000, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (scorer_stored(scorer), *numbers, *given))
        got = conn.execute(f"SELECT {LEVELS} FROM evaluations WHERE posting_id = 200000").fetchone()
        conn.execute("DELETE FROM evaluations WHERE posting_id = 200000")
    assert got == expected


@pytest.fixture(scope="module")
def scored(seeded_db, tmp_path_factory):
    """The seeds ingested (scored by ours), with the fit of the seeds' profile."""
    path = tmp_path_factory.mktemp("scored") / "jobs.db"
    shutil.copy(seeded_db, path)
    api.score(str(path), profile=str(SEEDS / "profile.toml"))
    return path


@pytest.mark.slow
def test_the_writers_store_levels_only_where_no_rule_gives_them(scored):
    """Ours stores none (its levels read by the rule), the app's own the levels its dump states (the overall's by
    the thresholds from its number), a fit none (it gives none)."""
    got = sql(scored, f"SELECT posting_id, scorer, overall, {LEVELS}, {GIVEN} FROM evaluations ORDER BY 1, 2")
    assert got == [
        (1, "fit:cuda-infra", 87, *(None,) * 10),
        (1, "jobcrawl-v1", 72, "中等", "中等", "较高", "较低", "中等", *(None,) * 5),
        (1, "source", 72, *("中等", "中等", "较高", "较低", "中等") * 2),
        (2, "fit:cuda-infra", 68, *(None,) * 10),
        (2, "jobcrawl-v1", 75, "中等", "较高", "较高", "较低", "中等", *(None,) * 5),
        (2, "source", 78, *("中等", "较高", "较高", "较低", "较高") * 2),
    ]


@pytest.mark.parametrize("version", ["6e4c4bc", "60ec602"])
def test_the_migration_keeps_every_level_and_score_and_stores_ours_no_more(version, tmp_path):
    path = made_by(version, tmp_path)
    query = f"SELECT posting_id, scorer, overall, pay, growth, worklife, mission, {LEVELS} FROM evaluations ORDER BY 1, 2"
    before, scores = sql(path, query), sql(path, SCORES)
    open_db(path).close()
    assert sql(path, query) == before and sql(path, SCORES) == scores
    assert sql(path, f"SELECT scorer, {GIVEN} FROM evaluations ORDER BY posting_id, scorer") == [
        (row[1], *(None if row[1] == "jobcrawl-v1" else level for level in row[7:])) for row in before]
    with sqlite3.connect(path) as conn:  # the triggers, made again, read the generated level
        conn.execute("UPDATE evaluations SET overall = 59 WHERE posting_id = 1 AND scorer = 'jobcrawl-v1'")
    assert sql(path, "SELECT score, score_level, score_by FROM postings WHERE id = 1") == [(59, "较低", "jobcrawl-v1")]


@pytest.mark.parametrize("scorer, overall, given, expected", [
    *[pytest.param("jobcrawl-v1", x, None, level_for(x) or INSUFFICIENT, id=f"ours-{x}") for x in (None, 0, 59, 60, 79, 80, 100)],
    pytest.param("source", 90, "中等", "中等", id="source-level-as-given"),
    pytest.param("source", None, "较高", "较高", id="source-level-alone"),
])
def test_the_listing_level_follows_the_evaluation_that_scores_it(database, scorer, overall, given, expected):
    """The triggers copy score and scorer to the posting; its ``score_level`` reads the same as the evaluation's
    ``overall_level``, stored only for the source's."""
    with sqlite3.connect(database) as conn:
        posting_id = conn.execute("SELECT min(id) FROM postings").fetchone()[0]
        if posting_id is None:
            conn.execute("INSERT INTO postings (id, key) VALUES (1, 'k')")
            posting_id = 1
        conn.execute("DELETE FROM evaluations WHERE posting_id = ? AND scorer IN ('jobcrawl-v1', 'source')", (posting_id,))
        conn.execute("INSERT INTO evaluations (posting_id, scorer_stored, overall, overall_level_given) VALUES (?, ?, ?, ?)",
                     (posting_id, scorer_stored(scorer), overall, given))
        got = conn.execute("SELECT p.score, p.score_level, p.score_by, p.score_level_given, e.overall_level,"
                           " p.score_by_stored FROM postings p JOIN evaluations e ON e.posting_id = p.id AND e.scorer = ?"
                           " WHERE p.id = ?", (scorer, posting_id)).fetchone()
        conn.execute("DELETE FROM evaluations WHERE posting_id = ? AND scorer = ?", (posting_id, scorer))
        cleared = conn.execute("SELECT score, score_level, score_by, score_by_stored FROM postings WHERE id = ?",
                               (posting_id,)).fetchone()
        conn.rollback()
    ours = scorer == "jobcrawl-v1"
    assert got == (overall, expected, scorer, None if ours else given, expected, 1 if ours else 2)
    assert cleared == (None, None, None, None)  # no evaluation left: the listing has no score


@pytest.mark.parametrize("version", ["6e4c4bc", "60ec602"])
def test_migration_0055_keeps_each_listing_score_storing_ours_small(version, tmp_path):
    path = made_by(version, tmp_path)
    before = sql(path, SCORES)
    open_db(path).close()
    assert sql(path, SCORES) == before
    assert sql(path, "SELECT count(*) FROM postings WHERE score_by = 'jobcrawl-v1' AND score_level_given IS NOT NULL") == [(0,)]
    assert sql(path, "SELECT score_by, score_by_stored FROM postings ORDER BY id") == [
        (by, {"jobcrawl-v1": 1, "source": 2}.get(by)) for _, _, _, by in before]
    with sqlite3.connect(path) as conn:
        plan = " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN SELECT id FROM postings WHERE score_level = '中等'"))
    assert "idx_postings_score_level" in plan


def test_a_scorer_the_code_does_not_name_reads_back_as_written(database):
    """``score_by_stored`` holds 1 for ours, 2 for the source's and any other scorer (none of ours writes one; a
    database migrated by 0055 keeps what it held) as written; its level is then the given one."""
    with sqlite3.connect(database) as conn:
        conn.execute("INSERT INTO postings (id, key, score, score_level_given, score_by_stored)"
                     " VALUES (300000, 'other', 90, '高', 'imported:v0'), (300001, 'ours', 90, NULL, 1),"
                     " (300002, 'theirs', 90, '中等', 2), (300003, 'none', NULL, NULL, NULL)")
        got = conn.execute("SELECT key, score_by, score_level FROM postings WHERE id >= 300000 ORDER BY id").fetchall()
        conn.rollback()
    assert got == [("other", "imported:v0", "高"), ("ours", "jobcrawl-v1", "较高"), ("theirs", "source", "中等"),
                   ("none", None, None)]
