"""An evaluation's input digest stored as a 64-bit integer (normalize/score/scorer.py: digest_int), and the
migration that converts the 32 hex characters older versions stored without scoring anything again."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from conftest import run_cli, sql
from crawler.store.schema import open_db
from normalize.score.scorer import digest_int

ROOT = Path(__file__).resolve().parents[1]
AS_OF = "2026-03-01T00:00:00+00:00"


@pytest.mark.parametrize("sha, expected", [
    pytest.param(bytes(32), 0, id="zero"),
    pytest.param(bytes([0x7F] + [0xFF] * 7) + bytes(24), 2 ** 63 - 1, id="largest"),
    pytest.param(bytes([0x80]) + bytes(31), -2 ** 63, id="smallest"),
    pytest.param(bytes([0xFF] * 8) + bytes([0x12] * 24), -1, id="minus-one-rest-ignored"),
    pytest.param(hashlib.sha256(b"jobcrawl").digest(), int.from_bytes(
        bytes.fromhex(hashlib.sha256(b"jobcrawl").hexdigest()[:16]), "big", signed=True), id="hex-prefix"),
])
def test_a_digest_is_the_first_eight_bytes_as_a_signed_integer(sha, expected):
    assert digest_int(sha) == expected


@pytest.mark.slow
def test_hex_digests_of_an_older_version_become_the_same_integers_and_nothing_is_scored_again(tmp_path):
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(ROOT / "seeds"), "--db", str(db), "--as-of", AS_OF, check=True)
    current = sql(db, "SELECT posting_id, scorer, inputs_digest FROM evaluations ORDER BY 1, 2")
    assert [(s, type(d)) for _, s, d in current] == [("jobcrawl-v1", int), ("source", type(None))] * 2
    # the column as the version before stored it: 32 hex characters, whose first 16 are the integer's 8 bytes
    with sqlite3.connect(db) as conn:
        conn.create_function("hex32", 1, lambda d: d and (d % 2 ** 64).to_bytes(8, "big").hex() + "0f" * 8)
        conn.execute("ALTER TABLE evaluations ADD COLUMN old TEXT")
        conn.execute("UPDATE evaluations SET old = hex32(inputs_digest)")
        conn.execute("ALTER TABLE evaluations DROP COLUMN inputs_digest")
        conn.execute("ALTER TABLE evaluations RENAME COLUMN old TO inputs_digest")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name LIKE '%_evaluations_inputs_digest_integer'")
        assert type(conn.execute("SELECT inputs_digest FROM evaluations WHERE scorer != 'source'").fetchone()[0]) is str
    open_db(db).close()
    assert sql(db, "SELECT posting_id, scorer, inputs_digest FROM evaluations ORDER BY 1, 2") == current
    assert sql(db, "SELECT type FROM pragma_table_info('evaluations') WHERE name = 'inputs_digest'") == [("INTEGER",)]
    again = run_cli("score", "--db", str(db), check=True)
    assert again.stdout.startswith("scored 0 postings, 2 unchanged (jobcrawl-v1)")
