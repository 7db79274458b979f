"""``postings.tz`` is generated from ``tz_stored``: the two zones the normalizer gives (Asia/Shanghai, UTC) as the
codes 1 and 2, any other zone as written — also a text that reads as a number, which the writer stores as its bytes
so that it is never a code (crawler/store/rows.py: coded). What users read is the zone as it was written."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import AS_OF
from crawler.store.codes import TZ_CODES, coded
from crawler.store.rows import Batch, posting_row
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from normalize.models import Posting
from test_migrations import made_by

ZONES = [
    # zone as written, how tz_stored holds it (typeof, value)
    ("Asia/Shanghai", ("integer", 1)),
    ("UTC", ("integer", 2)),
    ("America/New_York", ("text", "America/New_York")),
    ("Asia/Tokyo", ("text", "Asia/Tokyo")),
    ("1", ("blob", b"1")),
    (" 2.0", ("blob", b" 2.0")),
    ("utc", ("text", "utc")),
    ("", ("text", "")),
    (None, ("null", None)),
]


@pytest.mark.parametrize("zone, stored", ZONES, ids=[repr(z) for z, _ in ZONES])
def test_coded_keeps_every_zone(zone, stored):
    value = coded(zone, TZ_CODES)
    assert (type(value).__name__, value) == ({"integer": "int", "text": "str", "blob": "bytes", "null": "NoneType"}
                                             [stored[0]], stored[1])


def test_the_writer_stores_the_code_and_users_read_the_zone(tmp_path):
    postings = [Posting(key=f"k{i}", source="s", source_id=str(i), locator="f", content_hash=f"h{i}", as_of=AS_OF,
                        first_seen=AS_OF, last_seen=AS_OF, title="t", tz=zone) for i, (zone, _) in enumerate(ZONES)]
    db = open_db(tmp_path / "jobs.db")
    Writer(db).write(Batch(None, postings=[posting_row(p) for p in postings]))
    rows = db.conn.execute("SELECT tz, typeof(tz_stored), tz_stored FROM postings ORDER BY id").fetchall()
    assert rows == [(zone, *stored) for zone, stored in ZONES]
    db.close()


def test_the_migration_codes_the_stored_zones(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    with sqlite3.connect(path) as conn:
        before = conn.execute("SELECT id, tz FROM postings ORDER BY id").fetchall()
        conn.execute("UPDATE postings SET tz = 'America/New_York' WHERE id = 2")
    open_db(path).close()
    with sqlite3.connect(path) as conn:
        after = conn.execute("SELECT id, tz, typeof(tz_stored) FROM postings ORDER BY id").fetchall()
    assert before == [(1, "Asia/Shanghai"), (2, "Asia/Shanghai")]
    assert after == [(1, "Asia/Shanghai", "integer"), (2, "America/New_York", "text")]
