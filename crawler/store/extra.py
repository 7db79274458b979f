"""A posting's extra fields stored once: each distinct ``[key, value]`` pair a row of ``extra_entries``, the
posting's ``extra`` column the JSON array of their ids in the object's key order (NULL: no extra).

Postings of one file repeat the same pairs (the company's introduction, its labels, the site), so a pair is stored
the first time it occurs and named by id after (the mechanism: crawler/store/entries.py). :func:`entry_texts` packs
an object (crawler/store/rows.py), the writer stores it (:func:`intern_values`), :func:`expand` gives the object
back exactly: same keys in the same order, same values. The writer deletes the pairs a replaced ``extra`` leaves
unnamed (:func:`prune`); the view ``posting_extra`` lists every posting's pairs for SQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from normalize.evaluation import dumps

from crawler.store import entries

TABLE = "extra_entries"
_USED = "SELECT i.value FROM postings p, json_each(p.extra) i WHERE p.extra IS NOT NULL"


def entry_texts(extra: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    """An ``extra`` object as the texts of its pairs, in key order (None when it has none)."""
    return tuple(dumps([key, value]) for key, value in extra.items()) if extra else None


def intern_values(conn: sqlite3.Connection, packed: Sequence[tuple[str, ...] | None]) -> list[str | None]:
    """Each packed ``extra`` (:func:`entry_texts`) as stored: the JSON array of its pairs' ids, the pairs not yet
    stored added to ``extra_entries``."""
    ids = entries.ids_of(conn, TABLE, {text for texts in packed if texts for text in texts})
    return [dumps([ids[text] for text in texts]) if texts else None for texts in packed]


def expand(conn: sqlite3.Connection, stored: Sequence[str | None]) -> list[dict[str, Any]]:
    """Each stored ``extra`` value as its object (``{}`` for none); an object stored whole (a database not yet
    migrated) is read as it is."""
    values = [json.loads(s) if s else None for s in stored]
    found = entries.entries_of(conn, TABLE, (i for v in values if type(v) is list for i in v))
    return [dict(found[i] for i in v) if type(v) is list else v or {} for v in values]


def ids_in(stored: str | None) -> list[int]:
    """The entry ids a stored ``extra`` value names."""
    value = json.loads(stored) if stored else None
    return value if type(value) is list else []


def object_text(texts: tuple[str, ...] | None) -> str:
    """A packed ``extra`` as the JSON text of its object (what a quarantine row of a refused posting shows)."""
    return json.dumps(dict(json.loads(t) for t in texts or ()), ensure_ascii=False)


def prune(conn: sqlite3.Connection, among: Iterable[int] | None = None) -> int:
    """Delete the pairs no posting's ``extra`` names (of ``among`` only, when given); returns how many."""
    return entries.prune(conn, TABLE, _USED, among)
