"""The one full-text index over postings: ``postings_fts``, FTS5 ``unicode61`` over marked-up text.

Columns: ``title, company, city, skills, body, parts``. ``skills`` holds the posting's canonical
skill names, ``body`` its tags and JD bullets (or the description when it has no section rows), and
``parts`` the parts of the compound Latin names of its title and skills (``FlashAttention`` →
``Flash Attention``, ``TensorRT`` → ``Tensor RT``), so that ``Attention`` finds ``FlashAttention``
(the body's own compounds are not split: that cost as much as indexing the body).

Every value is indexed as :func:`index_text` writes it: each CJK character is a token of its own
(``\\x1f``, a separator for ``unicode61``, between the characters) and a break token (U+E000,
private use) between a CJK run and whatever text comes next; Latin text stays words (``CUDA``,
``c++``: ``+`` and ``#`` are token characters); full-width letters and digits are narrowed. A CJK
term is then a phrase of characters (``算子`` → ``"算 子"``): it matches wherever those characters
stand side by side in one run, so Chinese terms of any length match as substrings, and the break
token keeps ``算，子`` from matching ``算子``. A Latin term matches whole words (``Go`` is not found
in ``Google``); ``term*`` matches words it starts (``Tensor*`` finds ``TensorRT``).

The text looks as written once the two marks are removed (:func:`plain`, :data:`PLAIN_SQL`), format characters
aside (U+200B …: they would split a word or a CJK run), so FTS5's own ``snippet()`` highlights matches in it
(:func:`snippet_sql`). Its indexing cost is measured
by ``bench/fts.py`` (figures in bench/README.md).

The index keeps no copy of the text (an FTS5 external-content table): what it needs of it (snippets,
``delete``, ``rebuild``) it reads from the view ``postings_fts_source`` over ``postings`` and ``section_texts``, which
marks the stored text up through the SQL functions of :func:`register` — every connection that reads more than
the index's rowids registers them (``crawler.store.connect``, the Datasette plugin). :func:`index_values` is
what the view computes, so the writer indexes exactly what a later ``delete`` reads; a posting's indexed
columns change only between :func:`delete_rows` and an insert (:func:`set_skills` does both).

The writer calls :func:`insert_prepared` and :func:`delete_rows` in its transaction; retagging calls
:func:`set_skills`; migrations call :func:`rebuild`. Saved searches and exports call
:func:`search_ids`. No other module knows the index.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence

from normalize.text import FORMAT_CHARS, MAYBE_FORMAT_CHARS, drop_format

TABLE = "postings_fts"
SOURCE = "postings_fts_source"
"""The view the index reads its text from (schema.sql)."""
COLUMNS = ("title", "company", "city", "skills", "body", "parts")
SEP = "\x1f"  # between the characters of a CJK run: a separator for unicode61, never in stored text
BREAK = "\ue000"  # after a CJK run: a token of its own, so characters of two runs are never side by side
_JOINT = SEP + BREAK + SEP
MARKS = (SEP, BREAK)
HIGHLIGHT = ("\ue001", "\ue002")  # around a match in snippet(): private use, removed from indexed text

# Kana, CJK ideographs (with extension A and the supplementary planes), Hangul, compatibility ideographs.
_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF),
               (0x20000, 0x2FA1F))
_CJK = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
_RUNS = re.compile(f"([{_CJK}]+)")
# Full-width letters, digits, + and # (ＣＵＤＡ, Ｃ＋＋) as ASCII; unicode61 folds case but not width.
_WIDE_RANGES = ((0xFF03, 0xFF03), (0xFF0B, 0xFF0B), (0xFF10, 0xFF19), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A))
_WIDE = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _WIDE_RANGES) + "]")
_NARROW = {i: i - 0xFEE0 for lo, hi in _WIDE_RANGES for i in range(lo, hi + 1)}
# The index's marks, and the format characters (U+200B …), which would split a word or a CJK run (CU\u200bDA, 外\u200b包).
_DROPPED = re.compile(f"[{SEP}{BREAK}{''.join(HIGHLIGHT)}{FORMAT_CHARS}]")
_SPECIAL = re.compile(f"[{SEP}{BREAK}{''.join(HIGHLIGHT)}{MAYBE_FORMAT_CHARS}" + _WIDE.pattern[1:])  # may need either
# A Latin word with a lower-to-upper case change inside (PyTorch, FlashAttention, vLLM, TensorRT).
_COMPOUND = re.compile(r"[A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*|[A-Z]{2,}[a-z][A-Za-z0-9]*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Every byte but ASCII letters and digits to a space: a text's Latin runs, split without a regex.
_LATIN_RUNS = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))
_TOKEN = re.compile(r"[\w+#]")  # a character unicode61 keeps in a token (roughly: letters, digits, + #)
# Datasette's escape_fts splitting: whitespace, keeping "quoted phrases" whole.
_TERMS = re.compile(r'(-?)("[^"]*"|[^\s"]+)')
"""A term of a search box query: a word or a quoted phrase, ``-`` right before it when it is to be left out."""

TOKENIZER = "unicode61 tokenchars '+#'"
PLAIN_SQL = "replace(replace({}, char(31), ''), char(57344), '')"
"""SQL that removes the index's marks from a column or snippet of ``postings_fts``."""


# --------------------------------------------------------------------------- text


def index_text(text: str | None) -> str:
    """``text`` as stored and indexed: marks and format characters removed, full-width letters narrowed, each CJK
    character set apart by :data:`SEP` and each CJK run followed by a :data:`BREAK` token."""
    if not text:
        return ""
    if _SPECIAL.search(text):
        text = _DROPPED.sub("", text).translate(_NARROW)
    parts = _RUNS.split(text)
    if len(parts) == 1:
        return text
    parts[1::2] = map(SEP.join, parts[1::2])
    return _JOINT.join(parts)


def plain(text: str | None) -> str | None:
    """Stored text (or a snippet of it) as written: :data:`SEP` and :data:`BREAK` removed."""
    return text if text is None else text.replace(SEP, "").replace(BREAK, "")


def compound_parts(*texts: str | None) -> str:
    """The parts of every compound Latin name in ``texts``, once each (``FlashAttention vLLM`` →
    ``Flash Attention v LLM``)."""
    seen: dict[str, None] = {}
    for text in texts:
        if text:
            for run in drop_format(text).encode("ascii", "replace").translate(_LATIN_RUNS).split():
                if not (run[1:].islower() or run.isupper()):  # else no case change inside (Java, CUDA, cuda)
                    for word in _COMPOUND.findall(run.decode()):
                        seen.update(dict.fromkeys(_PART.findall(word)))
    return " ".join(seen)


def _skills_text(skills: str | Sequence[str] | None) -> str:
    if skills is None:
        return ""
    return skills if isinstance(skills, str) else "; ".join(skills)


def body_text(tags: Sequence[str], sections: str | None, description: str | None) -> str:
    """The text of the ``body`` column: the tags, then the text of the posting's sections (``section_texts``, one
    a line, in order), or its description when it has none."""
    return "\n".join(p for p in (" ".join(tags), sections or description) if p)


def index_values(title: str | None, company: str | None, city: str | None, skills: str | Sequence[str] | None,
                 body: str | None) -> tuple:
    """The :data:`COLUMNS` of a posting's ``postings_fts`` row (the text prepared for the index; the store
    stage makes them in the worker processes, the writer only inserts them). Made of a stored posting's
    values (``body``: :func:`body_text`), they are what ``postings_fts_source`` reads for it."""
    skills = _skills_text(skills)
    return (index_text(title), index_text(company), index_text(city), index_text(skills), index_text(body),
            compound_parts(title, skills))


def index_row(posting_id: int, title: str | None, company: str | None, city: str | None,
              skills: str | Sequence[str] | None, body: str | None) -> tuple:
    """One ``postings_fts`` row (rowid first, then :data:`COLUMNS`) from a posting's fields."""
    return (posting_id, *index_values(title, company, city, skills, body))


def _names(stored: str | None) -> list[str]:
    """A stored JSON list of names (tags, skills); anything else: none."""
    try:
        value = json.loads(stored) if stored else None
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


FUNCTIONS = {
    "fts_text": index_text,
    "fts_skills": lambda skills: index_text("; ".join(_names(skills))),
    "fts_body": lambda tags, sections, description: index_text(body_text(_names(tags), sections, description)),
    "fts_parts": lambda title, skills: compound_parts(title, "; ".join(_names(skills))),
}
"""The SQL functions of ``postings_fts_source``: its columns from the stored values as :func:`index_values` makes them."""


def register(conn: sqlite3.Connection) -> None:
    """Register :data:`FUNCTIONS` on ``conn``, so that it can read the index's text (snippets, columns) and write
    the index."""
    for name, function in FUNCTIONS.items():
        conn.create_function(name, function.__code__.co_argcount, function, deterministic=True)


# --------------------------------------------------------------------------- queries


def _term_phrase(term: str) -> str:
    """One search term as an FTS5 phrase (``""`` when it has no token); a trailing ``*`` makes
    its last word a prefix."""
    prefix = term.endswith("*")
    term = term.rstrip("*")
    tokens = [t for t in index_text(term).replace(SEP, " ").split() if t == BREAK or _TOKEN.search(t)]
    while tokens and tokens[0] == BREAK:  # the term may start inside a run of the document
        tokens.pop(0)
    while tokens and tokens[-1] == BREAK:  # … and the run may go on after it
        tokens.pop()
    if not tokens:
        return ""
    return '"' + " ".join(tokens).replace('"', '""') + '"' + ("*" if prefix else "")


def _terms(query: str) -> tuple[list[str], list[str]]:
    """The FTS5 phrases of a search box query: (those to find, those to leave out)."""
    if query.count('"') % 2:
        query += '"'
    wanted, unwanted = [], []
    for minus, bit in _TERMS.findall(query):
        phrase = _term_phrase(bit[1:-1] if bit.startswith('"') else bit)
        if phrase:
            (unwanted if minus else wanted).append(phrase)
    return wanted, unwanted


def only_exclusions(query: str) -> bool:
    """The query leaves terms out and names none to find (``-Java``): it finds nothing; commands refuse it."""
    wanted, unwanted = _terms(query)
    return bool(unwanted) and not wanted


def names_no_term(query: str) -> bool:
    """The query holds no word to search for (``*``, ``(``, ``-``): a search box shows everything for it, and
    commands refuse it rather than act on every posting."""
    wanted, unwanted = _terms(query)
    return not wanted and not unwanted


def fts_query(query: str) -> str:
    """A search box query as an FTS5 expression over ``postings_fts``: every term must match, and no term
    written with a leading ``-`` (``CUDA -Java``, ``-"外包"``) may.

    Quoting follows Datasette's ``escape_fts`` (unbalanced quotes closed, ``"a b"`` one phrase);
    a query with no searchable character, or with exclusions only, gives ``""`` (matches nothing:
    FTS5 leaves out only from what a term found).
    """
    wanted, unwanted = _terms(query)
    if not wanted:
        return '""'
    return " ".join(wanted) + "".join(f" NOT {phrase}" for phrase in unwanted)


MATCH_SQL = f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH escape_fts(:search)"
"""The ids of the postings a search box query finds, on a connection where ``escape_fts`` is
:func:`fts_query` (Datasette's, through the browse plugin)."""


def snippet_sql(column: int = -1, tokens: int = 32) -> str:
    """SQL of a snippet of the matched ``postings_fts`` row: the text as written, each match
    between the :data:`HIGHLIGHT` marks, ``…`` where text was cut (``tokens``: up to 64)."""
    start, end = HIGHLIGHT
    raw = f"snippet({TABLE}, {int(column)}, char({ord(start)}), char({ord(end)}), '…', {int(tokens)})"
    return PLAIN_SQL.format(raw)


def search_ids(conn: sqlite3.Connection, query: str, *, limit: int | None = None) -> list[int]:
    """Ids of the postings matching every term of the search box ``query`` (title, company, city,
    skill names or JD text, as :func:`fts_query` reads it), ascending, at most ``limit``; [] for a
    query with nothing to search."""
    expression = fts_query(query)
    if expression == '""':
        return []
    sql = f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ? ORDER BY rowid LIMIT ?"
    return [r[0] for r in conn.execute(sql, (expression, -1 if limit is None else limit))]


# --------------------------------------------------------------------------- writing

_INSERT = f"INSERT INTO {TABLE} (rowid, {', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?)"
_FROM_SOURCE = f"INSERT INTO {TABLE} (rowid, {', '.join(COLUMNS)}) SELECT id, {', '.join(COLUMNS)} FROM {SOURCE} WHERE id = ?"


def insert_rows(conn: sqlite3.Connection, rows: Iterable[Sequence]) -> None:
    """Index postings not indexed yet. Each row is ``(posting_id, title, company, city, skills,
    body)``: ``skills`` the canonical skill names (a list, or one text), ``body`` the tags and JD
    bullets (one text, :func:`body_text`); None for a missing value."""
    conn.executemany(_INSERT, [index_row(*row) for row in rows])


def insert_prepared(conn: sqlite3.Connection, rows: Iterable[Sequence]) -> None:
    """Index postings from prepared rows: ``(posting_id, *index_values(…))``."""
    conn.executemany(_INSERT, rows)


def _id_rows(ids: Iterable[int | Sequence[int]]) -> list[tuple[int]]:
    return [(i[0],) if isinstance(i, (tuple, list)) else (i,) for i in ids]


def delete_rows(conn: sqlite3.Connection, ids: Iterable[int | Sequence[int]]) -> None:
    """Remove indexed postings from the index (ids, or 1-tuples of ids as the writer keeps them) while their stored
    values are still those indexed: the index reads them back from ``postings_fts_source`` to find its entries."""
    conn.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", _id_rows(ids))


def set_skills(conn: sqlite3.Connection, rows: Iterable[tuple[int, str]]) -> None:
    """Store new skill names of indexed postings, ``(posting_id, skills as JSON)`` rows, in ``postings.skills``
    and the index (the ``skills`` and ``parts`` columns)."""
    rows = list(rows)
    ids = _id_rows(pid for pid, _ in rows)
    delete_rows(conn, ids)
    conn.executemany("UPDATE postings SET skills = ? WHERE id = ?", [(skills, pid) for pid, skills in rows])
    conn.executemany(_FROM_SOURCE, ids)


def rebuild(conn: sqlite3.Connection) -> int:
    """Index every stored posting again from ``postings_fts_source``; returns the count."""
    conn.execute(f"INSERT INTO {TABLE} ({TABLE}) VALUES ('rebuild')")
    return conn.execute("SELECT count(*) FROM postings").fetchone()[0]
