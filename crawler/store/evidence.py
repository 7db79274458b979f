"""Evaluation evidence stored once and small: each distinct entry a row of ``evidence_entries``, an evaluation's
``evidence`` column the ids of its entries per dimension.

Scores repeat the same entries across postings (``["social_insurance","benefits","五险一金",1]``, the company's
open jobs, ``"insufficient"``), so an entry is stored the first time it occurs and referred to by id after. Entries
are the compact form of normalize/evaluation.py (``pack_evidence``), without the values that are exactly their
posting's (``FROM_POSTING``: a company's open jobs are one entry for all its postings); :func:`expand` gives that
form back, exactly, those values read from the posting (the mechanism: crawler/store/entries.py).

The column is JSON in one of two forms (:func:`stored_form`). Evidence whose dimensions are some of :data:`ORDER`,
in that order, each a list — our scorer's — is positional: ``[[3,17],[5],…]``, the lists in :data:`ORDER`'s
order, ``null`` for a dimension it does not have, trailing empty lists left out (a missing one reads as ``[]``).
Any other (another scorer's dimensions, another order, a value that is not a list, none at all) is the object
``{"skills":[9],…}``. :func:`expand` reads both; ``json_each`` over either lists the id lists (:func:`prune`).
An entry no evaluation refers to any more is deleted by :func:`prune` (the scoring step calls it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from normalize.evaluation import dumps, from_posting
from normalize.models import DIMENSIONS

from crawler.store import entries

TABLE = "evidence_entries"
ORDER = (*DIMENSIONS, "overall", "market")
"""The dimensions of the positional form, in their stored order (part of the stored format: never reordered;
the view ``evaluation_evidence`` in schema.sql names them in the same order)."""


def stored_form(evidence: Mapping[str, Any]) -> list | Mapping[str, Any]:
    """``evidence`` as the column stores it: positional where it can be, else as it is (see the module docstring)."""
    rest = iter(ORDER)
    if not evidence or not all(isinstance(v, list) and k in rest for k, v in evidence.items()):
        return evidence
    lists = [evidence.get(d) for d in ORDER]
    while lists and lists[-1] == []:
        lists.pop()
    return lists


def object_form(stored: list | dict) -> dict:
    """A stored value back as the object it was (:func:`stored_form` undone)."""
    if not isinstance(stored, list):
        return stored
    return {d: stored[i] if i < len(stored) else [] for i, d in enumerate(ORDER)
            if i >= len(stored) or stored[i] is not None}


def intern_rows(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]], at: int) -> list[tuple]:
    """``rows`` with their item ``at`` — packed evidence (a mapping, or its JSON text) — replaced by the stored form,
    every entry not yet stored added to ``evidence_entries``."""
    rows = list(rows)
    text_of: dict[str, str] = {}  # repr → JSON text: an entry repeated in the batch is written as JSON once

    def text(entry: Any) -> str:
        key = repr(entry)  # equal reprs, equal JSON texts (for the plain values evidence holds)
        found = text_of.get(key)
        if found is None:
            found = text_of[key] = dumps(entry)
        return found

    texts = [None if ev is None else {dim: [text(e) for e in items] if isinstance(items, list) else items
                                      for dim, items in ev.items()}
             for ev in (json.loads(r[at]) if isinstance(r[at], str) else r[at] for r in rows)]
    ids = entries.ids_of(conn, TABLE, {t for ev in texts if ev for items in ev.values() if isinstance(items, list)
                                       for t in items})
    return [(*row[:at], None if ev is None else dumps(stored_form(
        {dim: [ids[t] for t in items] if isinstance(items, list) else items for dim, items in ev.items()})),
        *row[at + 1:]) for row, ev in zip(rows, texts)]


def expand(conn: sqlite3.Connection, stored: Sequence[str | None],
           postings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each stored ``evidence`` value as packed evidence (``{}`` for none): entry ids read back from
    ``evidence_entries``, the values an entry leaves out filled in from its posting (``postings``, one for each
    value: mappings with the postings columns of ``POSTING_FIELDS``, normalize/evaluation.py); an entry stored
    inline (a database not yet migrated) is kept as it is."""
    values = [object_form(json.loads(s)) if s else {} for s in stored]
    found = entries.entries_of(conn, TABLE, (e for ev in values for items in ev.values() if isinstance(items, list)
                                             for e in items if type(e) is int))
    return [{dim: [from_posting(found[e], posting) if type(e) is int else e for e in items]
             if isinstance(items, list) else items for dim, items in ev.items()}
            for ev, posting in zip(values, postings, strict=True)]


def prune(conn: sqlite3.Connection, among: Iterable[int] | None = None) -> int:
    """Delete the entries no evaluation refers to (only those of ``among`` when given); returns how many (one scan
    of ``evaluations``: ``json_each`` lists the id lists of either stored form)."""
    return entries.prune(conn, TABLE, "SELECT item.value FROM evaluations e, json_each(e.evidence) dim,"
                                      " json_each(dim.value) item WHERE dim.type = 'array' AND item.type = 'integer'",
                         among)
