"""The schema is the pydantic models, flattened; migrations bring old databases forward."""

from __future__ import annotations

import sqlite_utils

from crawler.store.schema import POSTING_COLUMNS, column_descriptions, migrations, open_db


def test_every_posting_column_is_documented():
    docs = column_descriptions()["postings"]
    assert [c for c, *_ in POSTING_COLUMNS if not docs.get(c)] == []
    assert docs["salary_monthly_min"] == "Lower base pay per month (day × 21.75, hour × 174, year ÷ 12)."


def test_migrations_bring_an_old_database_forward(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="0002_experience_and_company_info")
    # 0001 made postings with every column of the time; drop what 0002 adds to get the table as it was.
    added = [c for c in db["postings"].columns_dict if c.startswith(("company_info_", "experience_m"))]
    db["postings"].transform(drop=added)
    db["postings"].insert({"id": 1, "key": "k", "title": "旧岗位"})
    assert "company_info_industry" not in db["postings"].columns_dict
    db.close()

    db = open_db(path)
    columns = {row[1] for row in db.execute("PRAGMA table_xinfo(postings)")}  # first_seen, last_seen: generated
    assert {"company_info_industry", "company_info_size_min", "experience_min_years"} <= columns
    assert [c for c, *_ in POSTING_COLUMNS if c not in columns] == []
    assert db.execute("SELECT title FROM postings WHERE id = 1").fetchone() == ("旧岗位",)
    applied = [m.name for m in migrations.applied(db)]
    assert applied[:2] == ["0001_initial", "0002_experience_and_company_info"]
    db.close()
    open_db(path).close()  # idempotent


def test_a_new_database_gets_4_kb_pages_and_wal_mode(tmp_path):
    # page_size takes effect only before the file's first write, so connect() sets it before WAL mode.
    db = open_db(tmp_path / "jobs.db")
    assert db.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    again = open_db(tmp_path / "jobs.db")  # an existing file keeps its pages
    assert again.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert "postings" in again.table_names()
