"""A posting's ``as_of`` and an evaluation's ``computed_at`` stored as unix seconds: generated columns read them back
as the same text (crawler/store/rows.py: time_stored); a time written in any other form is kept as written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from conftest import AS_OF, export_records, run_cli, sql
from crawler.store.history import HIDE_STALE
from crawler.store.rows import STORED_AS, time_stored
from crawler.store.schema import open_db
from test_migrations import made_by, migrated

ROOT = Path(__file__).resolve().parents[1]
CANONICAL = [
    pytest.param("2026-12-07T03:39:44+00:00", 1796614784, id="clock"),
    pytest.param("1970-01-01T00:00:00+00:00", 0, id="epoch"),
    pytest.param("1969-12-31T23:59:59+00:00", -1, id="before-epoch"),
    pytest.param("2038-01-19T03:14:08+00:00", 2**31, id="past-32-bits"),
    pytest.param("2024-02-29T12:00:00+00:00", 1709208000, id="leap-day"),
    pytest.param("0001-01-01T00:00:00+00:00", -62135596800, id="first-year"),
    pytest.param("9999-12-31T23:59:59+00:00", 253402300799, id="last-year"),
]
KEPT = [
    pytest.param("2026-12-07T03:39:44.500000+00:00", id="fractional-seconds"),
    pytest.param("2026-12-07T11:39:44+08:00", id="other-offset"),
    pytest.param("2026-12-07T03:39:44Z", id="zulu"),
    pytest.param("2026-12-07 03:39:44+00:00", id="space"),
    pytest.param("2026-12-07T03:39:44", id="naive"),
    pytest.param("2026-12-07", id="date"),
    pytest.param("2026-02-30T00:00:00+00:00", id="no-such-day"),
    pytest.param("2026-12-07T24:00:00+00:00", id="hour-24"),
    pytest.param("2016-12-31T23:59:60+00:00", id="leap-second"),
    pytest.param("２０２６-12-07T03:39:44+00:00", id="fullwidth-digits"),
    pytest.param(" 2026-12-07T03:39:44+00:00", id="leading-space"),
    pytest.param("2026-12-07T03:39:44+00:00\n", id="trailing-newline"),
    pytest.param("1796614784", id="numeric-text"),
    pytest.param("yesterday", id="words"),
    pytest.param("", id="empty"),
    pytest.param(None, id="none"),
]


@pytest.mark.parametrize("text, seconds", CANONICAL)
def test_a_time_in_the_clocks_form_is_stored_as_its_unix_seconds(text, seconds):
    assert time_stored(text) == seconds


@pytest.mark.parametrize("text", KEPT)
def test_a_time_in_any_other_form_is_stored_as_written(text):
    assert time_stored(text) == text


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    db = open_db(tmp_path_factory.mktemp("times") / "jobs.db")
    yield db
    db.close()


@pytest.mark.parametrize("text, stored_type", [
    *[pytest.param(p.values[0], "integer", id=p.id) for p in CANONICAL],
    *[pytest.param(p.values[0], "null" if p.values[0] is None else "text", id=p.id) for p in KEPT],
])
@pytest.mark.parametrize("table, column", [("postings", "as_of"), ("evaluations", "computed_at")])
def test_the_generated_column_reads_back_exactly_what_was_written(database, table, column, text, stored_type):
    stored = STORED_AS[column]
    with database.conn:
        database.execute(f"DELETE FROM {table}")
        database.execute(f"INSERT INTO {table} (posting_id, scorer_stored, {stored}) VALUES (1, 'x', ?)" if table == "evaluations"
                         else f"INSERT INTO {table} (id, key, {stored}) VALUES (1, 'k', ?)", (time_stored(text),))
    assert database.execute(f"SELECT {column}, typeof({stored}) FROM {table}").fetchall() == [(text, stored_type)]


@pytest.mark.parametrize("first, last, expected", [
    pytest.param(None, None, ("2026-12-07T03:39:44+00:00", "2026-12-07T03:39:44+00:00"), id="seen-at-as-of"),
    pytest.param("2026-12-01T00:00:00+00:00", "2026-12-08T00:00:00+00:00",
                 ("2026-12-01T00:00:00+00:00", "2026-12-08T00:00:00+00:00"), id="seen-at-other-times"),
])
def test_first_and_last_seen_read_as_of_as_text(database, first, last, expected):
    with database.conn:
        database.execute("DELETE FROM postings")
        database.execute("INSERT INTO postings (id, key, as_of_stored, first_seen_stored, last_seen_stored)"
                         " VALUES (1, 'k', ?, ?, ?)", (time_stored("2026-12-07T03:39:44+00:00"), first, last))
    assert database.execute("SELECT first_seen, last_seen FROM postings").fetchone() == expected
    # the writer's comparisons with as_of read its text: a time equal to it is stored as NULL
    with database.conn:
        database.execute("UPDATE postings SET last_seen_stored = nullif(?, as_of)", ("2026-12-07T03:39:44+00:00",))
    assert database.execute("SELECT last_seen_stored, last_seen FROM postings").fetchone() == (
        None, "2026-12-07T03:39:44+00:00")


@pytest.mark.parametrize("query, index", [
    pytest.param("SELECT id FROM postings ORDER BY first_seen", "idx_postings_first_seen", id="newest-sort"),
    pytest.param("SELECT id FROM postings WHERE first_seen >= '2026-12-01'", "idx_postings_first_seen", id="since"),
    pytest.param(f"SELECT id FROM postings WHERE {HIDE_STALE}", "idx_postings_last_seen_closed_at", id="stale"),
])
def test_the_indexes_over_the_seen_times_are_still_used(database, query, index):
    plan = " ".join(row[3] for row in database.execute(f"EXPLAIN QUERY PLAN {query}",
                                                       {"stale_cutoff": "2026-12-01T00:00:00+00:00"}))
    assert index in plan


@pytest.mark.slow
def test_an_ingest_and_a_scoring_store_seconds_and_export_the_same_text(tmp_path):
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(ROOT / "seeds"), "--db", str(db), "--as-of", AS_OF, check=True)
    assert sql(db, "SELECT typeof(as_of_stored), as_of, first_seen, last_seen FROM postings") == [
        ("integer", "2026-11-29T04:00:00+00:00", "2026-11-29T04:00:00+00:00", "2026-11-29T04:00:00+00:00")] * 2
    assert sql(db, "SELECT DISTINCT scorer, typeof(computed_at_stored) FROM evaluations ORDER BY scorer") == [
        ("jobcrawl-v1", "integer"), ("source", "integer")]
    records = export_records(db)
    assert [(r["as_of"], r["first_seen"], r["last_seen"]) for r in records] == [
        ("2026-11-29T04:00:00+00:00",) * 3] * 2
    again = run_cli("reparse", "--db", str(db), check=True)  # the stored times compared with those parsed again
    assert "new 0 · updated 0 · unchanged 2" in again.stdout


@pytest.mark.parametrize("version", ["6e4c4bc", "042b469"])
def test_the_migration_keeps_every_time_and_stores_it_as_seconds(version, tmp_path):
    path, before, after = migrated(version, tmp_path, "SELECT id, as_of, first_seen, last_seen, (SELECT group_concat("
                                   "scorer || ' ' || computed_at) FROM evaluations WHERE posting_id = postings.id)"
                                   " FROM postings ORDER BY id")
    assert before and after == before
    assert sql(path, "SELECT DISTINCT typeof(as_of_stored) FROM postings") == [("integer",)]
    assert sql(path, "SELECT DISTINCT typeof(computed_at_stored) FROM evaluations") == [("integer",)]


def test_the_migration_keeps_a_time_in_another_form_as_written(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    texts = ["2026-12-07T11:39:44+08:00", "2026-12-07T03:39:44.5+00:00", "1796614784", None]
    with sqlite3.connect(path) as conn:
        ids = [pid for (pid,) in conn.execute("SELECT id FROM postings ORDER BY id")]
        conn.executemany("UPDATE postings SET as_of = ? WHERE id = ?", zip(texts, ids))
        conn.executemany("UPDATE evaluations SET computed_at = ? WHERE posting_id = ?", zip(texts[1:], ids))
        query = ("SELECT p.id, p.as_of, typeof(p.as_of), p.first_seen, e.scorer, e.computed_at, typeof(e.computed_at)"
                 " FROM postings p JOIN evaluations e ON e.posting_id = p.id ORDER BY p.id, e.scorer")
        before = conn.execute(query).fetchall()
    open_db(path).close()
    assert sql(path, query) == before
    assert sql(path, "SELECT id, as_of_stored FROM postings ORDER BY id") == list(zip(ids, texts))
    assert sql(path, "SELECT DISTINCT posting_id, computed_at_stored FROM evaluations ORDER BY posting_id") == list(
        zip(ids, texts[1:]))
