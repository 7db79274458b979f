"""Migrations are frozen DDL: an old database file migrates to the schema a new one gets, keeping its data."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from conftest import AS_OF, FIXTURES, SEEDS, run_cli
from crawler.db.rows import POSTING_COLS
from crawler.db.schema import migrations, open_db

OLD = FIXTURES / "migrations" / "db-042b469.db"
# What its insights table holds (56 rows): posting → key → items.
INSIGHT_COUNTS = {1: {"pros": 6, "cons": 1, "role": 9, "strategy": 8, "interview": 8},
                  2: {"pros": 4, "cons": 1, "role": 7, "strategy": 5, "interview": 7}}


def schema(path) -> dict:
    """Tables and views with their columns (as sets: ALTER TABLE appends), indexes and triggers."""
    conn = sqlite3.connect(path)
    try:
        objects = conn.execute("SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'").fetchall()
        out = {}
        for kind, name, table in objects:
            if kind in ("table", "view"):
                out[(kind, name)] = frozenset(row[1] for row in conn.execute(f"PRAGMA table_info([{name}])"))
            else:
                out[(kind, name)] = table
        return out
    finally:
        conn.close()


@pytest.fixture
def old_db(tmp_path):
    path = tmp_path / "jobs.db"
    shutil.copy(OLD, path)
    return path


def test_the_old_database_is_the_first_schema():
    conn = sqlite3.connect(OLD)
    assert conn.execute("SELECT name FROM _sqlite_migrations").fetchall() == [("m001_initial",)]
    assert len(conn.execute("PRAGMA table_info(postings)").fetchall()) == 76  # 74 model columns, raw_input_id, version
    conn.close()


def test_every_migration_brings_an_old_database_to_the_schema_of_a_new_one(old_db, tmp_path):
    open_db(old_db).close()
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    assert schema(old_db) == schema(fresh)
    conn = sqlite3.connect(old_db)
    applied = [name for (name,) in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == [m.name for m in migrations._migrations]
    assert conn.execute("SELECT title, company, salary_max FROM postings ORDER BY id").fetchall() == [
        ("AI算子开发工程师", "吉利汽车", 43000.0), ("模型训练优化开发工程师", "初速度", 35000.0)]
    # m011: the first schema's insights table became the JSON column
    insights = {pid: json.loads(text) for pid, text in conn.execute("SELECT id, insights FROM postings")}
    assert {pid: {key: len(items) for key, items in v.items()} for pid, v in insights.items()} == INSIGHT_COUNTS
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


@pytest.mark.slow
def test_a_migrated_database_takes_new_runs(old_db):
    proc = run_cli("ingest", str(SEEDS), "--db", str(old_db), "--as-of", AS_OF, check=True)
    assert proc.stdout.splitlines()[0].startswith("files read 2 · postings found 2 · new 0 · updated ")
    conn = sqlite3.connect(old_db)
    assert conn.execute("SELECT count(*) FROM postings").fetchone() == (2,)
    assert conn.execute("SELECT count(*) FROM evaluations WHERE scorer = 'jobcrawl-v1'").fetchone() == (2,)
    conn.close()
    found = run_cli("export", "--db", str(old_db), check=True).stdout.count("\n")
    assert found == 2


def test_every_model_column_has_a_migration(tmp_path):
    """A field added to the Posting model needs a new migration: the schema is never derived from the model."""
    db = tmp_path / "jobs.db"
    open_db(db).close()
    columns = schema(db)[("table", "postings")]
    assert set(POSTING_COLS) <= columns, sorted(set(POSTING_COLS) - columns)
