"""A quarantine row keeps no copy of its input's whole text: the raw input holds it once (``text_in_input``), and
the ``quarantine_review`` query shows it as before. Rows of other text (a table row, a clipped record) keep it.
Databases made before have their copies cleared by migration 0031."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import zlib

import pytest

from crawler.store.rows import COMPRESS_ABOVE, Batch, input_row, quarantine_row
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from crawler.serve.app import make_datasette
from normalize.models import Quarantined, RawInput
from test_migrations import made_by

T0 = "2026-11-29T04:00:00+00:00"
SHORT = "not a posting at all just some words\n"
LONG = "这不是职位。" * 400 + "\n"  # over 512 characters: stored compressed
PAGE = "职位详情\nPython工程师\n负责后端开发\n"

# locator → (input text, input encoding, quarantine position, quarantine text, reason)
INPUTS = {
    "short.txt": (SHORT, "utf-8", None, SHORT, "no_posting"),
    "long.txt": (LONG, "utf-8", None, LONG, "no_posting"),
    "cut.txt": (PAGE, "utf-8", 0, PAGE, "truncated"),
    "empty.txt": ("", None, None, None, "empty"),
    "rows.csv": ("title,company\n,某公司\n", "utf-8", 1, ",某公司\n", "missing_field"),
}
# locator → (quarantine.text, text_in_input, the text quarantine_review shows)
STORED = {
    "short.txt": (None, 1, SHORT),
    "long.txt": (None, 1, LONG),
    "cut.txt": (None, 1, PAGE),
    "empty.txt": (None, 0, None),
    "rows.csv": (",某公司\n", 0, ",某公司\n"),
}


def _sha(locator: str) -> str:
    return hashlib.sha256(locator.encode()).hexdigest()


def _batch() -> Batch:
    inputs, problems = [], []
    for locator, (text, encoding, position, q_text, reason) in INPUTS.items():
        inputs.append(input_row(RawInput(source="textdump", locator=locator, sha256=_sha(locator), size=len(text),
                                         encoding=encoding, text=text, fetched_at=T0, as_of=T0, status="quarantined")))
        problems.append(quarantine_row(Quarantined(source="textdump", locator=locator, position=position,
                                                   input_sha256=_sha(locator), reason=reason, detail=reason,
                                                   text=q_text, fetched_at=T0)))
    return Batch(1, inputs=inputs, quarantine=problems)


def review(path) -> dict[str, tuple]:
    """locator → (text_start, text_chars) as the quarantine_review canned query shows them."""
    response = asyncio.run(make_datasette(path).client.get("/jobs/quarantine_review.json?_shape=array&reason="))
    assert response.status_code == 200, response.text[:300]
    return {r["locator"]: (r["text_start"], r["text_chars"]) for r in response.json()}


def shown(text: str | None) -> tuple:
    return (None, None) if text is None else (text[:300], len(text))


def stored(path) -> dict[str, tuple]:
    conn = sqlite3.connect(path)
    try:
        return {loc: (text, flag) for loc, text, flag in conn.execute("SELECT locator, text, text_in_input FROM quarantine")}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    path = tmp_path_factory.mktemp("once") / "jobs.db"
    db = open_db(str(path))
    Writer(db).write(_batch())
    db.close()
    return path


@pytest.mark.parametrize("locator", list(STORED))
def test_a_quarantine_row_stores_no_copy_of_its_inputs_text(written, locator):
    assert stored(written)[locator] == STORED[locator][:2]


@pytest.mark.parametrize("locator", list(STORED))
def test_the_review_query_shows_the_offending_text(written, locator):
    assert review(written)[locator] == shown(STORED[locator][2])


def test_a_database_made_before_has_its_copies_cleared(tmp_path):
    """Made by 6e4c4bc (no text_in_input), with the copies that version stored; migration 0031 clears them."""
    path = made_by("6e4c4bc", tmp_path)
    conn = sqlite3.connect(path)
    for locator, (text, encoding, position, q_text, reason) in INPUTS.items():
        long = text is not None and len(text) > COMPRESS_ABOVE  # that version's form: a long text zlib-compressed
        packed, packed_zlib = (None, zlib.compress(text.encode("utf-8", "surrogatepass"))) if long else (text, None)
        raw_id = conn.execute(
            "INSERT INTO raw_inputs (source, locator, sha256, size, encoding, text, text_zlib, fetched_at, as_of, status)"
            " VALUES ('textdump', ?, ?, ?, ?, ?, ?, ?, ?, 'quarantined')",
            (locator, _sha(locator), len(text), encoding, packed, packed_zlib, T0, T0)).lastrowid
        conn.execute("INSERT INTO quarantine (raw_input_id, source, locator, position, input_sha256, reason, detail, text, at)"
                     " VALUES (?, 'textdump', ?, ?, ?, ?, ?, ?, ?)",
                     (raw_id, locator, -1 if position is None else position, _sha(locator), reason, reason, q_text, T0))
    conn.commit()
    conn.close()
    open_db(str(path)).close()
    assert stored(path) == {locator: row[:2] for locator, row in STORED.items()}
    assert review(path) == {locator: shown(row[2]) for locator, row in STORED.items()}
