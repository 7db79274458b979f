"""Raw inputs stored compressed when long (crawler/store/rows.py: pack_text, raw_text; migrations 0028, 0054)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from urllib.parse import quote

import pytest

from conftest import AS_OF, SEEDS, run_cli
from crawler.store.rows import COMPRESS_ABOVE, SQL_RAW_TEXT_LIMIT, pack_text, raw_text, zstd
from crawler.serve.app import make_datasette

LONG = "算子" * (COMPRESS_ABOVE // 2) + "!"  # one character over the limit


@pytest.mark.parametrize("text, stored_as_text", [
    pytest.param(None, True, id="none"),
    pytest.param("", True, id="empty"),
    pytest.param("短文本 short", True, id="short"),
    pytest.param("x" * COMPRESS_ABOVE, True, id="at-the-limit"),
    pytest.param(LONG, False, id="one-over-the-limit"),
    pytest.param("\ud800" + "y" * COMPRESS_ABOVE, False, id="lone-surrogate-kept"),
])
def test_pack_text_round_trips(text, stored_as_text):
    stored, packed = pack_text(text)
    assert (stored is not None or text is None, packed is not None) == (stored_as_text, not stored_as_text)
    assert raw_text(stored, packed) == text
    if packed is not None:
        assert len(packed) < len(text) // 10  # repetitive text: far smaller


def test_a_long_dump_is_stored_compressed_and_reparsed_from_it(tmp_path):
    seeds = sorted(SEEDS.glob("*.txt"))
    dump = tmp_path / "in" / "many.txt"
    dump.parent.mkdir()
    text = "\n".join(p.read_text(encoding="utf-8").strip() for p in seeds * 4) + "\n"
    assert len(text) > COMPRESS_ABOVE
    dump.write_text(text, encoding="utf-8")
    small = tmp_path / "in" / seeds[0].name
    small.write_text(seeds[0].read_text(encoding="utf-8"), encoding="utf-8")
    db = tmp_path / "jobs.db"
    first = run_cli("ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF, "--json", check=True)
    with sqlite3.connect(db) as conn:
        rows = dict((locator, (stored, packed)) for locator, stored, packed in conn.execute(
            "SELECT locator, text, text_zstd FROM raw_inputs"))
        conn.create_function("raw_text", 2, raw_text)
        via_sql = conn.execute("SELECT raw_text(text, text_zstd) FROM raw_inputs WHERE locator = 'many.txt'").fetchone()
    assert rows["many.txt"][0] is None and zstd.decompress(rows["many.txt"][1]).decode("utf-8") == text
    assert rows[small.name][0] is None and raw_text(*rows[small.name]) == small.read_text(encoding="utf-8")
    assert via_sql == (text,)
    ds = make_datasette(db)
    response = asyncio.run(ds.client.get("/jobs.json?_shape=arrays&sql=" + quote(
        "select raw_text(text, text_zstd) from raw_inputs order by locator")))
    assert response.status_code == 200 and response.json()["rows"] == [[small.read_text(encoding="utf-8")], [text]]
    again = run_cli("reparse", "--db", str(db), check=True)
    found = json.loads(first.stdout)["crawl"]["found"]
    assert found == len(seeds) * 4 + 1
    assert again.stdout.splitlines()[0] == (f"files read 2 · postings found {found} · new 0 · updated 0 · "
                                            f"unchanged {found} · quarantined 0")


BOMB = zstd.compress(b"\0" * (64 * 2**20), 19)  # 2 KB that expand to 64 MiB


@pytest.mark.parametrize("limit, expands", [
    pytest.param(64 * 2**20, True, id="at-its-size"),
    pytest.param(64 * 2**20 - 1, False, id="one-byte-short"),
    pytest.param(SQL_RAW_TEXT_LIMIT, False, id="the-sql-limit"),
])
def test_raw_text_expands_a_blob_only_up_to_its_limit(limit, expands):
    if expands:
        assert raw_text(None, BOMB, limit) == "\0" * (64 * 2**20)
    else:
        with pytest.raises(ValueError, match=f"more than {limit:,} bytes"):
            raw_text(None, BOMB, limit)


_WHOLE = zstd.compress(("算子开发 CUDA " * 100).encode())


@pytest.mark.parametrize("blob, message", [
    pytest.param(_WHOLE[:-5], "cut short", id="cut-short"),
    pytest.param(b"\x78\x9c" + _WHOLE[2:], "damaged", id="not-a-frame"),
    pytest.param(b"", "cut short", id="empty"),
])
def test_a_damaged_blob_is_a_value_error(blob, message):
    with pytest.raises(ValueError, match=message):
        raw_text(None, blob)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # sqlite3 reports the ValueError so
def test_a_blob_that_expands_too_far_is_an_sql_error_in_datasette(tmp_path):
    """Anyone who may run SQL can hand ``raw_text`` any blob: it stops at 16 MiB with an error, and the server
    goes on answering."""
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    ds = make_datasette(db)
    bomb = zstd.compress(b"\0" * (SQL_RAW_TEXT_LIMIT + 1), 19)  # short enough for a URL
    query = f"select length(raw_text(null, x'{bomb.hex()}'))"
    bad = asyncio.run(ds.client.get("/jobs.json?_shape=arrays&sql=" + quote(query)))
    assert (bad.status_code, bad.json()["error"]) == (400, "user-defined function raised exception")
    small = zstd.compress("算子".encode())
    good = asyncio.run(ds.client.get("/jobs.json?_shape=arrays&sql=" + quote(f"select raw_text(null, x'{small.hex()}')")))
    assert good.json()["rows"] == [["算子"]]


def test_migration_0054_stores_zlib_texts_as_zstd_keeping_every_text(tmp_path):
    """A database from before 0054 holds long texts zlib-compressed in ``text_zlib``; migrated, each is the same text
    in ``text_zstd``, and a short text stays as it was."""
    import zlib

    from test_migrations import made_by
    from crawler.store.schema import open_db

    path = made_by("6e4c4bc", tmp_path)  # the last version with zlib-compressed texts
    texts = {"long.txt": LONG, "short.txt": "短文本", "surrogate.txt": "\ud800" + "y" * COMPRESS_ABOVE}
    with sqlite3.connect(path) as conn:
        for locator, text in texts.items():
            packed = len(text) > COMPRESS_ABOVE
            conn.execute("INSERT INTO raw_inputs (source, locator, sha256, text, text_zlib) VALUES ('file', ?, ?, ?, ?)",
                         (locator, locator, None if packed else text,
                          zlib.compress(text.encode("utf-8", "surrogatepass"), 3) if packed else None))
    open_db(path).close()
    with sqlite3.connect(path) as conn:
        rows = {locator: (text, blob) for locator, text, blob in conn.execute(
            "SELECT locator, text, text_zstd FROM raw_inputs WHERE locator LIKE '%.txt' AND source = 'file'")}
    assert {locator: raw_text(*row) for locator, row in rows.items()} == texts
    assert rows["short.txt"] == ("短文本", None)
    assert zstd.decompress(rows["long.txt"][1]).decode("utf-8") == LONG
