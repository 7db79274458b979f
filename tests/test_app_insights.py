"""The fields only the app's dumps fill (salary signal, company activity, market) live in ``app_market``: one row a
posting that states any of them, read back by the export, the scoring facts and the watches as they were."""

from __future__ import annotations

import sqlite3

import pytest

from test_migrations import made_by
from test_pipelines import raw_posting
from crawler.alerts.store import unseen_rows
from crawler.score.store import FACT_COLUMNS, read_range
from crawler.store.read import export_record, iter_export
from crawler.store.rows import APP_COLS, Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from normalize.posting import normalize_posting

SIGNAL = ("市场水准 (35K-50K/月)", "市场水准", 35000.0, 50000.0, "CNY", "month", 0, 0)
COMPANY = ("这家公司招聘很活跃", "约 1900 个在招 · 其中人工智能 19 个", None, "人工智能", 1900, 1, 19)
MARKET = ("选择面较广", "杭州 · 人工智能 · 约 190 个在招", "杭州", "人工智能", 190, 1, None)
NO_SIGNAL = (None,) * 8
NO_COUNTS = (None, None, None, None, None, 0, None)
CASES = [
    pytest.param({}, SIGNAL + COMPANY + MARKET, id="the-seed"),
    pytest.param({"market": []}, SIGNAL + COMPANY + NO_COUNTS, id="no-market-lines"),
    pytest.param({"evaluation": None, "market": []}, NO_SIGNAL + COMPANY + NO_COUNTS, id="company-lines-only"),
    pytest.param({"evaluation": None, "company_activity": [], "market": []}, None, id="none-of-them"),
]
APP_FIELDS = ("company_activity", "market")


def posting(changes: dict):
    return normalize_posting(raw_posting(**changes))


def store(db, *postings) -> None:
    Writer(db).write(Batch(postings=[posting_row(p) for p in postings]))


def app_rows(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM app_market ORDER BY posting_id").fetchall()


@pytest.mark.parametrize("changes, stored", CASES)
def test_a_posting_stores_a_row_only_when_it_states_any_of_them(tmp_path, changes, stored):
    p = posting(changes)
    db = open_db(tmp_path / "jobs.db")
    store(db, p)
    assert app_rows(tmp_path / "jobs.db") == ([] if stored is None else [(1, *stored)])
    record = export_record(db, 1)
    no_signal = dict.fromkeys(("raw", "label", "min", "max", "currency", "period", "estimated", "implausible"))
    assert record["salary"]["signal"] == (p.salary.signal.model_dump() if p.salary.signal else no_signal)
    assert {f: record[f] for f in APP_FIELDS} == {f: getattr(p, f).model_dump() for f in APP_FIELDS}


def test_postings_keep_none_of_the_app_columns(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    columns = {row[1] for row in db.conn.execute("PRAGMA table_info(postings)")}
    assert [c for c in APP_COLS if c in columns] == []
    assert [row[1] for row in db.conn.execute("PRAGMA table_info(app_market)")] == ["posting_id", *APP_COLS]


@pytest.mark.parametrize("changes, stored", CASES[1:])
def test_a_new_version_replaces_its_row(tmp_path, changes, stored):
    db = open_db(tmp_path / "jobs.db")
    store(db, posting({}))
    store(db, posting(changes))
    assert app_rows(tmp_path / "jobs.db") == ([] if stored is None else [(1, *stored)])
    assert db.conn.execute("SELECT version FROM postings").fetchall() == [(2,)]
    store(db, posting({}))
    assert app_rows(tmp_path / "jobs.db") == [(1, *SIGNAL, *COMPANY, *MARKET)]


@pytest.mark.parametrize("changes, stored", CASES)
def test_scoring_and_watches_read_the_values(tmp_path, changes, stored):
    db = open_db(tmp_path / "jobs.db")
    store(db, posting(changes))
    values = dict(zip(APP_COLS, stored or NO_SIGNAL + NO_COUNTS + NO_COUNTS))
    rows, _ = read_range(db.conn, 1, 1)
    facts = dict(zip(FACT_COLUMNS.values(), rows[0][1:]))
    assert {c: facts[c] for c in facts if c in values} == {c: values[c] for c in facts if c in values}
    watched = next(unseen_rows(db, 0, profile=None))
    assert {c: watched[c] for c in watched if c in values} == {c: values[c] for c in watched if c in values}
    assert sorted(c for c in watched if c in values) == [
        "salary_signal_currency", "salary_signal_implausible", "salary_signal_max", "salary_signal_min",
        "salary_signal_period", "salary_signal_raw"]


def test_the_migration_moves_the_values_of_an_old_database(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    with sqlite3.connect(path) as conn:
        before = conn.execute(f"SELECT id, {', '.join(APP_COLS)} FROM postings ORDER BY id").fetchall()
    db = open_db(path)
    assert app_rows(path) == before
    assert [(r["id"], r["company_activity"]["open_jobs"], r["market"]["open_jobs"], r["salary"]["signal"]["max"])
            for r in iter_export(db)] == [(1, 1900, 190, 50000.0), (2, 73, 10, 45000.0)]
