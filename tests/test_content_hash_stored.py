"""A posting's content hash stored as its 32 bytes: ``content_hash`` is a generated column that reads them back as the
same hex text (crawler/store/rows.py: hash_bytes), so readers and the export see what they saw before."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from conftest import AS_OF, export_records, run_cli, sql
from crawler.store.rows import hash_bytes
from crawler.store.schema import open_db
from test_migrations import migrated

ROOT = Path(__file__).resolve().parents[1]
SHA = hashlib.sha256(b"jobcrawl").hexdigest()


@pytest.mark.parametrize("text, stored", [
    pytest.param(SHA, bytes.fromhex(SHA), id="sha256-hex"),
    pytest.param("0" * 64, bytes(32), id="zeros"),
    pytest.param(SHA.upper(), SHA.upper(), id="upper-case-kept-as-written"),
    pytest.param(SHA[:-1], SHA[:-1], id="63-characters-kept"),
    pytest.param(SHA + "0", SHA + "0", id="65-characters-kept"),
    pytest.param("h1", "h1", id="not-hex-kept"),
    pytest.param("", "", id="empty-kept"),
    pytest.param(None, None, id="none"),
])
def test_a_sha256_in_hex_is_stored_as_its_bytes_anything_else_as_written(text, stored):
    assert hash_bytes(text) == stored


@pytest.mark.parametrize("text", [SHA, "0" * 64, SHA.upper(), "h1", "", None])
def test_the_generated_column_reads_back_exactly_what_was_written(text, tmp_path):
    db = open_db(tmp_path / "jobs.db")
    db.execute("INSERT INTO postings (id, key, content_hash_stored) VALUES (1, 'k', ?)", (hash_bytes(text),))
    assert db.execute("SELECT content_hash FROM postings").fetchall() == [(text,)]
    db.close()


@pytest.mark.slow
def test_an_ingest_stores_32_bytes_and_exports_the_hex_text(tmp_path):
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(ROOT / "seeds"), "--db", str(db), "--as-of", AS_OF, check=True)
    stored = sql(db, "SELECT typeof(content_hash_stored), length(content_hash_stored), content_hash FROM postings"
                     " ORDER BY id")
    exported = [r["content_hash"] for r in export_records(db)]
    assert [(kind, size) for kind, size, _ in stored] == [("blob", 32)] * 2
    assert [text for _, _, text in stored] == exported and all(len(h) == 64 for h in exported)
    again = run_cli("reparse", "--db", str(db), check=True)  # the stored hash compared with the one parsed again
    assert "new 0 · updated 0 · unchanged 2" in again.stdout


@pytest.mark.parametrize("version", ["6e4c4bc", "042b469"])
def test_the_migration_keeps_every_hash_and_stores_it_as_bytes(version, tmp_path):
    path, before, after = migrated(version, tmp_path, "SELECT id, content_hash FROM postings ORDER BY id")
    assert before and after == before
    assert sql(path, "SELECT DISTINCT typeof(content_hash_stored), length(content_hash_stored) FROM postings") == [
        ("blob", 32)]
