"""Values stored once: each distinct entry (a JSON text) one row ``(id, hash, entry)`` of an entries table, the rows
that use it naming its id.

Two tables work this way: ``evidence_entries`` (an evaluation's evidence, crawler/store/evidence.py) and
``extra_entries`` (a posting's extra fields, crawler/store/extra.py). An entry is found by the CRC-32 of its text
(``hash``, indexed; two texts may share one, so the text is compared), added the first time it occurs, read back by
id, and deleted once nothing names it (:func:`prune`).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable
from typing import Any

CHUNK = 500
"""Hashes or ids per ``IN (…)`` lookup (under SQLite's default limit of host parameters)."""


def entry_hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def ids_of(conn: sqlite3.Connection, table: str, texts: set[str]) -> dict[str, int]:
    """The id in ``table`` of each entry text, stored first where it is new."""
    ids: dict[str, int] = {}
    hashes = sorted({entry_hash(text) for text in texts})
    for i in range(0, len(hashes), CHUNK):
        part = hashes[i:i + CHUNK]
        for id_, text in conn.execute(
                f"SELECT id, entry FROM {table} WHERE hash IN ({','.join('?' * len(part))})", part):
            if text in texts:
                ids[text] = id_
    for text in sorted(texts - ids.keys()):
        ids[text] = conn.execute(f"INSERT INTO {table} (hash, entry) VALUES (?, ?)",
                                 (entry_hash(text), text)).lastrowid
    return ids


def entries_of(conn: sqlite3.Connection, table: str, ids: Iterable[int]) -> dict[int, Any]:
    """Id → the entry read back from its JSON text, for each of ``ids`` stored in ``table``."""
    wanted = sorted(set(ids))
    entries: dict[int, Any] = {}
    for i in range(0, len(wanted), CHUNK):
        part = wanted[i:i + CHUNK]
        entries.update((id_, json.loads(text)) for id_, text in conn.execute(
            f"SELECT id, entry FROM {table} WHERE id IN ({','.join('?' * len(part))})", part))
    return entries


def prune(conn: sqlite3.Connection, table: str, used: str, among: Iterable[int] | None = None) -> int:
    """Delete the entries of ``table`` that the query ``used`` (the ids named, e.g. through ``json_each``) does not
    list — only those of ``among`` when given (nothing to do when it is empty); returns how many."""
    if among is None:
        return conn.execute(f"DELETE FROM {table} WHERE id NOT IN ({used})").rowcount
    candidates, deleted = sorted(set(among)), 0
    for i in range(0, len(candidates), CHUNK):
        part = candidates[i:i + CHUNK]
        deleted += conn.execute(f"DELETE FROM {table} WHERE id IN ({','.join('?' * len(part))}) AND id NOT IN ({used})",
                                part).rowcount
    return deleted
