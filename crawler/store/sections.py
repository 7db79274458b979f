"""A posting's sections as stored: one ``sections`` row per section that has bullets, its bullets one a line.

The joined text is the text ``posting_skills`` offsets count in (crawler/store/skills.py: evidence_records) and
the full-text body's bullets (crawler/store/fts.py), so it is kept once, as it is read. A section whose every
bullet is in the posting's description, in order, keeps only where (``spans``, :func:`stored_spans`) and no
``text``; the view ``section_texts`` (schema.sql) gives every section's text, and every reader reads it there.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Iterable

from normalize.sections import spans_of

SEP = "\n"


def section_text(key: str, bullets: list[str]) -> str:
    """A section's bullets as its stored ``text``. Raises ValueError for a bullet holding a line break (normalize
    never makes one: it could not be read back as one bullet)."""
    if any(SEP in b for b in bullets):
        raise ValueError(f"a bullet of section {key!r} holds a line break")
    return SEP.join(bullets)


def section_values(key: str, bullets: list[str], description: str | None) -> tuple[str | None, str | None]:
    """``(text, spans)`` of a section as stored: its spans in ``description`` where it has them, else its text."""
    text = section_text(key, bullets)
    spans = stored_spans(description, bullets)
    return (text, None) if spans is None else (None, spans)


def stored_spans(description: str | None, bullets: list[str]) -> str | None:
    """The ``spans`` value of a section with ``bullets`` (compact JSON ``[[start, length], …]``), or None when
    they are not all in ``description`` in order (normalize.sections.spans_of)."""
    spans = spans_of(description, bullets)
    return None if spans is None else json.dumps(spans, separators=(",", ":"))


def section_bullets(text: str) -> list[str]:
    """The bullets of a stored section's ``text`` (:func:`section_text` read back)."""
    return text.split(SEP)


def bullets_by_posting(rows: Iterable[tuple[int, str, str]]) -> dict[int, dict[str, list[str]]]:
    """``{posting_id: {key: bullets}}`` from stored ``(posting_id, key, text)`` rows in ``seq`` order."""
    out: dict[int, dict[str, list[str]]] = {}
    for pid, key, text in rows:
        out.setdefault(pid, {})[key] = section_bullets(text)
    return out


def stored_bullets(conn: sqlite3.Connection, where: str, params: Iterable) -> dict[int, dict[str, list[str]]]:
    """:func:`bullets_by_posting` of the sections whose ``posting_id`` matches ``where`` (an SQL condition on it),
    read through the view ``section_texts``."""
    return bullets_by_posting(conn.execute(
        f"SELECT posting_id, key, text FROM section_texts WHERE {where} ORDER BY posting_id, seq", tuple(params)))
