"""A posting's sections as stored: one ``sections`` row per section that has bullets, its bullets one a line.

The joined text is the text ``posting_skills`` offsets count in (crawler/store/skills.py: evidence_records) and
the full-text body's bullets (crawler/store/fts.py), so it is kept once, as it is read.
"""

from __future__ import annotations

from typing import Iterable

SEP = "\n"


def section_text(key: str, bullets: list[str]) -> str:
    """A section's bullets as its stored ``text``. Raises ValueError for a bullet holding a line break (normalize
    never makes one: it could not be read back as one bullet)."""
    if any(SEP in b for b in bullets):
        raise ValueError(f"a bullet of section {key!r} holds a line break")
    return SEP.join(bullets)


def section_bullets(text: str) -> list[str]:
    """The bullets of a stored section's ``text`` (:func:`section_text` read back)."""
    return text.split(SEP)


def bullets_by_posting(rows: Iterable[tuple[int, str, str]]) -> dict[int, dict[str, list[str]]]:
    """``{posting_id: {key: bullets}}`` from stored ``(posting_id, key, text)`` rows in ``seq`` order."""
    out: dict[int, dict[str, list[str]]] = {}
    for pid, key, text in rows:
        out.setdefault(pid, {})[key] = section_bullets(text)
    return out
