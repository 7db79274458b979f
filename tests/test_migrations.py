"""A new database is schema.sql; a database made by any earlier version migrates to exactly that schema,
keeping its data."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sqlite3

import pytest
import sqlite_utils

from conftest import AS_OF, FIXTURES, SEEDS, run_cli
from crawler.store.migrations import LEGACY_NAMES, derive_views_and_triggers, normalized
from crawler.store.rows import POSTING_COLS
from crawler.store.schema import column_descriptions, migrations, open_db

OLD = FIXTURES / "migrations" / "db-042b469.db"
# Databases made by `jobcrawl ingest seeds/` with the code of each version (fixtures/migrations/README.md):
# version → (old migration names it recorded, postings).
MADE_BY = {
    "042b469": (1, 2),     # the first schema
    "bd6b0cc": (10, 2),    # m010: the segmented index and the first jobs view
    "ab31731": (12, 2),    # before the branches of issues #27-#29
    "8d9aacf": (16, 2),    # alerts: watches, the fit view, the closing triggers
    "60ec602": (22, 2),    # alerts, distributed and serve: one search index, the compact jobs view
    "efe1ac1": (26, 2),    # trust: the third jobs view, the score triggers made again
    "6e4c4bc": (28, 2),    # every migration of the per-branch numbering
}
# What its insights table holds (56 rows): posting → key → items.
INSIGHT_COUNTS = {1: {"pros": 6, "cons": 1, "role": 9, "strategy": 8, "interview": 8},
                  2: {"pros": 4, "cons": 1, "role": 7, "strategy": 5, "interview": 7}}


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
    assert objects(old_db, ordered=False) == objects(fresh, ordered=False)
    conn = sqlite3.connect(old_db)
    applied = [name for (name,) in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == ["m001_initial"] + [m.name for m in migrations._migrations]
    assert conn.execute("SELECT title, company, salary_max FROM postings ORDER BY id").fetchall() == [
        ("AI算子开发工程师", "吉利汽车", 43000.0), ("模型训练优化开发工程师", "初速度", 35000.0)]
    # m011: the first schema's insights table became the JSON column, which 0063 moved to app_market
    insights = {pid: json.loads(text) for pid, text in conn.execute("SELECT posting_id, insights FROM app_market")}
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
    columns = {column[0] for column in objects(db, ordered=False)[("table", "postings")][0]}
    assert set(POSTING_COLS) <= columns, sorted(set(POSTING_COLS) - columns)


# --------------------------------------------------------------------------- schema.sql and the linear migrations


def made_by(version: str, tmp_path):
    """A copy of the database the code of ``version`` made."""
    path = tmp_path / f"{version}.db"
    if version == "042b469":
        shutil.copy(OLD, path)
    else:
        packed = FIXTURES / ("db/seeds_main_bd6b0cc.db.gz" if version == "bd6b0cc" else f"migrations/db-{version}.db.gz")
        path.write_bytes(gzip.decompress(packed.read_bytes()))
    return path


def migrated(version: str, tmp_path, query: str) -> tuple:
    """(path, rows of ``query`` before, after) for a copy of the database ``version`` made, opened (migrated) once."""
    path = made_by(version, tmp_path)
    with sqlite3.connect(path) as conn:
        before = conn.execute(query).fetchall()
    open_db(path).close()
    with sqlite3.connect(path) as conn:
        return path, before, conn.execute(query).fetchall()


def objects(path, *, ordered: bool) -> dict:
    """Every schema object, comparable across ways of writing it: a table as its columns (name, type, not null,
    default, primary key; a set unless ``ordered``, as ALTER TABLE appends), foreign keys and WITHOUT ROWID;
    anything else as its normalized SQL (an automatic index as its columns)."""
    conn = sqlite3.connect(path)
    try:
        out = {}
        for kind, name, table, sql in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"):
            if name == "_sqlite_migrations" or table == "_sqlite_migrations":
                continue
            if kind == "table" and not sql.upper().startswith("CREATE VIRTUAL"):
                columns = [tuple(row[1:]) for row in conn.execute(f"PRAGMA table_xinfo([{name}])")]
                keys = sorted(tuple(row[2:5]) for row in conn.execute(f"PRAGMA foreign_key_list([{name}])"))
                out[kind, name] = (columns if ordered else sorted(columns), keys, "without rowid" in normalized(sql))
            elif sql is None:
                out[kind, name] = (table, [row[2] for row in conn.execute(f"PRAGMA index_info([{name}])")])
            else:
                out[kind, name] = normalized(sql)
        return out
    finally:
        conn.close()


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    path = tmp_path_factory.mktemp("fresh") / "jobs.db"
    open_db(path).close()
    return path


def test_migrations_are_numbered_once_in_one_line():
    names = [m.name for m in migrations._migrations]
    assert [int(name[:4]) for name in names] == list(range(1, len(names) + 1))
    assert all(re.fullmatch(r"\d{4}_[a-z0-9_]+", name) for name in names)
    assert list(LEGACY_NAMES) == names[:28]  # named before the linear numbering
    assert len(set(LEGACY_NAMES.values())) == 28
    assert [LEGACY_NAMES[n] for n in ("0013_watches", "0017_spool_batches", "0023_dedupe_keys")] == [
        "m101_alerts_watches", "m101_distributed_spool_batches", "m101_trust_dedupe_keys"]


def test_a_new_database_is_schema_sql_with_every_migration_recorded(fresh):
    conn = sqlite3.connect(fresh)
    assert [name for (name,) in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")] == [
        m.name for m in migrations._migrations]
    # no trace of the objects migrations made and dropped again
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    assert not names & {"postings_seg", "insights", "idx_posting_skills_skill",
                        "idx_quarantine_source_locator_input_sha256_position"}
    kinds = dict(conn.execute("SELECT type, count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%'"
                              " GROUP BY type"))
    assert kinds == {"table": 35, "index": 37, "view": 10, "trigger": 7}  # 29 tables of ours, FTS and its 3, migrations
    conn.close()


def test_replaying_every_migration_from_empty_makes_schema_sql(fresh, tmp_path):
    replayed = tmp_path / "replayed.db"
    db = sqlite_utils.Database(replayed)
    migrations.apply(db)
    derive_views_and_triggers(db)
    db.close()
    assert objects(replayed, ordered=True) == objects(fresh, ordered=True)
    # the tables' SQL too, column order included
    sql = "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name != '_sqlite_migrations'"
    a, b = (sorted((k, n, normalized(s)) for k, n, s in sqlite3.connect(p).execute(sql)) for p in (replayed, fresh))
    assert a == b


@pytest.mark.parametrize("version", list(MADE_BY))
def test_a_database_of_every_earlier_version_migrates_to_schema_sql(version, fresh, tmp_path):
    path = made_by(version, tmp_path)
    conn = sqlite3.connect(path)
    recorded = [name for (name,) in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    postings = conn.execute("SELECT id, key, title, company FROM postings ORDER BY id").fetchall()
    conn.close()
    assert (len(recorded), len(postings)) == MADE_BY[version]
    open_db(path).close()
    assert objects(path, ordered=False) == objects(fresh, ordered=False)
    conn = sqlite3.connect(path)
    applied = [name for (name,) in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    # its own records kept, then each migration under its name, once
    assert applied[:len(recorded)] == recorded
    assert sorted(applied[len(recorded):]) == [m.name for m in migrations._migrations]
    assert conn.execute("SELECT id, key, title, company FROM postings ORDER BY id").fetchall() == postings
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    conn.close()


def test_a_database_of_the_last_version_only_records_the_new_names(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    sql = "SELECT type, name, sql FROM sqlite_master WHERE tbl_name != '_sqlite_migrations'"
    conn = sqlite3.connect(path)
    before = conn.execute(sql).fetchall()
    conn.close()
    open_db(path).close()
    conn = sqlite3.connect(path)
    after = conn.execute(sql).fetchall()
    conn.close()
    # only the migrations numbered after that version change anything
    assert {(kind, name) for kind, name, _ in set(after) ^ set(before)} == {
        ("table", "evaluations"), ("table", "signals"), ("index", "sqlite_autoindex_signals_1"),  # 0029
        ("table", "posting_skills"), ("index", "sqlite_autoindex_posting_skills_1"),
        ("index", "idx_posting_skills_skill_posting_id"),  # 0030
        ("table", "quarantine"),  # 0031
        ("table", "dedupe_signatures"), ("index", "idx_dedupe_signatures_cluster_id"),  # 0032
        ("table", "sections"), ("index", "sqlite_autoindex_sections_1"), ("index", "idx_sections_key"),  # 0033
        ("table", "postings_fts"), ("table", "postings_fts_content"), ("view", "postings_fts_source"),  # 0034
        ("table", "postings"), ("table", "app_market"), ("trigger", "postings_closed"),  # 0035: postings made again,
        ("trigger", "postings_reopened"), ("trigger", "evaluations_score_insert"),  # the triggers that name it too
        ("trigger", "evaluations_score_update"), ("trigger", "evaluations_score_delete"),
        ("index", "idx_dedupe_signatures_fingerprint"),  # 0036: dedupe_signatures made again
        ("table", "application_events"), ("index", "idx_application_events_posting_id"),  # 0037
        ("view", "applications"), ("trigger", "application_events_note_length"),
        ("view", "jobs"), ("view", "fit"),  # made again from schema.sql on open
        ("table", "velocity_weekly"), ("view", "job_timeline"),  # 0038
        ("table", "ghost_signals"), ("table", "likely_employers"),  # 0039; 0040 adds a postings column
        ("index", "idx_postings_city"), ("index", "idx_postings_category"), ("index", "idx_postings_last_seen"),  # 0041
        ("table", "evidence_entries"), ("index", "idx_evidence_entries_hash"), ("view", "evaluation_evidence"),  # 0042
        ("view", "section_texts"),  # 0043 adds a sections column; the view reads it
        ("table", "market_stats"), ("index", "idx_market_stats_scope_key"), ("table", "market_figures"),  # 0045
        ("view", "market_stats"),
        ("table", "extra_entries"), ("index", "idx_extra_entries_hash"), ("view", "posting_extra"),  # 0046
        ("index", "idx_skills_category"), ("index", "idx_skills_kind"),  # 0047
        ("table", "raw_inputs"),  # 0054
        ("index", "idx_postings_score_level"),  # 0055
        ("index", "idx_evaluations_scorer_overall"),  # 0056
        ("table", "postings_fts"), ("table", "postings_fts_docsize"),  # 0058
        ("trigger", "evaluations_score_insert_ours")}  # made from schema.sql on open


def test_an_up_to_date_database_opens_without_a_write(fresh, tmp_path):
    path = tmp_path / "jobs.db"
    shutil.copy(fresh, path)
    db = open_db(path)
    assert (tmp_path / "jobs.db-wal").stat().st_size == 0
    db.close()


def test_a_view_or_trigger_edited_in_schema_sql_reaches_an_existing_database(fresh, tmp_path):
    path = tmp_path / "jobs.db"
    shutil.copy(fresh, path)
    conn = sqlite3.connect(path)
    conn.executescript("DROP VIEW jobs; CREATE VIEW jobs AS SELECT id, title FROM postings;"
                       "DROP TRIGGER postings_closed; DROP VIEW fit;")
    conn.close()
    open_db(path).close()
    assert objects(path, ordered=True) == objects(fresh, ordered=True)


def test_every_column_is_described_and_every_description_has_its_column(fresh):
    conn = sqlite3.connect(fresh)
    names = [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'postings_fts%'"
        " AND name != '_sqlite_migrations'")]
    columns = {name: [row[1] for row in conn.execute(f"PRAGMA table_xinfo([{name}])")] for name in names}
    conn.close()
    docs = column_descriptions()
    postings = docs["postings"]
    undescribed = {table: [c for c in cols if not (docs.get(table, {}).get(c) or table in ("jobs", "fit") and postings.get(c))]
                   for table, cols in columns.items()}
    assert {t: cols for t, cols in undescribed.items() if cols} == {}
    assert {t: sorted(set(cols) - set(columns.get(t, ()))) for t, cols in docs.items()
            if set(cols) - set(columns.get(t, ()))} == {}
