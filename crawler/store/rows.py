"""Plain rows: what the store stage makes of an item and the writer stores.

The writer takes these, and only these: tuples of plain values, cheap to pickle, the same whether
they were made in this process, in a worker process or on another machine (a Redis spool). Ids are
not known here: the writer gives each posting its id and fills ``posting_id`` in the child rows.
"""

from __future__ import annotations

import calendar
import codecs
import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Mapping, NamedTuple

try:
    from compression import zstd  # Python 3.14+
except ImportError:
    from backports import zstd

from normalize.evaluation import POSTING_FIELDS, dumps, pack_evidence, pack_signals
from normalize.models import DIMENSIONS, Evaluation, Posting, Quarantined, RawInput, SeenPostings
from normalize.posting import level_for
from normalize.score import SCORER

from crawler.store import extra, fts
from crawler.store.codes import SCORER_CODES, coded
from crawler.store.schema import APP_COLUMNS, APP_EMPTY, MODEL_COLUMNS, POSTING_COLUMNS, flatten_posting, source_id_of
from crawler.store.sections import section_text, section_values
from crawler.store.skills import skill_values

POSTING_COLS = tuple(c for c, *_ in POSTING_COLUMNS if c != "id")
"""The ``postings`` columns a :class:`PostingRow` carries, in order (the writer adds id, raw_input_id, version)."""
LEVEL_COLS = tuple(f"{d}_level" for d in ("overall", *DIMENSIONS))
STORED_AS = ({"first_seen": "first_seen_stored", "last_seen": "last_seen_stored", "content_hash": "content_hash_stored",
              "as_of": "as_of_stored", "computed_at": "computed_at_stored", "score_level": "score_level_given",
              "score_by": "score_by_stored", "scorer": "scorer_stored", "tz": "tz_stored"}
             | {c: f"{c}_given" for c in LEVEL_COLS})
"""Generated columns (schema.sql) → the column their value is written to: ``postings.first_seen`` and ``last_seen``
NULL where the time is ``as_of``, its ``content_hash`` as bytes (:func:`hash_bytes`), its ``as_of`` and
``evaluations.computed_at`` as unix seconds (:func:`time_stored`); the ``evaluations`` levels and
``postings.score_level`` (written by the score triggers) NULL for ours (``jobcrawl-v1``), whose levels the schema's
rule gives; ``postings.score_by`` and ``evaluations.scorer`` as a code (:func:`scorer_stored`), ``postings.tz`` as
one (:data:`TZ_CODES`, :func:`coded`)."""
_HEX_SHA256 = re.compile(r"[0-9a-f]{64}")
_UTC_SECOND = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00")


def stored_columns(columns: tuple[str, ...] | list[str], each: str = "[{}]") -> str:
    """``columns`` as an INSERT (or, with ``each="[{}] = ?"``, an UPDATE) names them: each generated one as its
    :data:`STORED_AS` column."""
    return ", ".join(each.format(STORED_AS.get(c, c)) for c in columns)


def hash_bytes(text: str | None) -> bytes | str | None:
    """A SHA-256 in lowercase hex as its 32 bytes (what ``content_hash`` reads back as the same text); any other
    value as it is."""
    return bytes.fromhex(text) if isinstance(text, str) and _HEX_SHA256.fullmatch(text) else text


def scorer_stored(scorer: str | None) -> int | str | bytes | None:
    """A scorer as stored: 1 for ours (``jobcrawl-v1``), 2 for the app's own (``source``), any other as written."""
    return coded(scorer, SCORER_CODES)


@lru_cache(maxsize=4096)  # an input's postings share their as_of, a scoring pass its computed_at
def time_stored(text: str | None) -> int | str | None:
    """A time as the clock writes it (normalize/clock.py: UTC to the second, ``2026-12-07T03:39:44+00:00``) as its
    unix seconds, which the generated column reads back as the same text; any other value (fractional seconds,
    another offset or form, not a date) as it is."""
    if not (isinstance(text, str) and _UTC_SECOND.fullmatch(text)):
        return text
    try:
        return calendar.timegm(datetime.fromisoformat(text).utctimetuple())
    except ValueError:  # no such day or time (02-30, 24:00)
        return text


APP_COLS = tuple(c for c, *_ in APP_COLUMNS)
"""The ``app_market`` columns after ``posting_id``, in order."""
_APP_EMPTY = tuple(APP_EMPTY[c] for c in APP_COLS)
_SOURCE_ID, _URL, _EXTRA = (POSTING_COLS.index(c) for c in ("source_id", "url", "extra"))
_MODEL_ORDER = tuple(c for c, *_ in MODEL_COLUMNS if c != "id")
EVAL_COLS = (
    "posting_id", "scorer", "overall", "pay", "growth", "worklife", "mission", *LEVEL_COLS,
    "summary", "notes", "explanations", "evidence", "problems", "computed_at", "signals",
)
"""The ``evaluations`` columns of an evaluation's row (the levels and ``computed_at`` written to their :data:`STORED_AS`
columns)."""
INPUT_COLS = ("source", "locator", "sha256", "size", "encoding", "text", "body", "fetched_at", "as_of", "status",
              "error", "postings", "reader", "text_zstd")
COMPRESS_ABOVE = 512
"""A raw input's text longer than this many characters is stored Zstandard-compressed (``text_zstd``), not as
text (a single posting's text shrinks to about half; a shorter one hardly)."""
ZSTD_LEVEL = 3
"""The Zstandard level of raw inputs: the format's default."""
QUARANTINE_COLS = ("source", "locator", "position", "input_sha256", "reason", "detail", "text")


class PostingRow(NamedTuple):
    """One posting and its child rows, without ids."""

    key: str
    content_hash: str
    locator: str
    input_sha256: str | None
    first_seen: str
    last_seen: str
    complete_listing: bool
    values: tuple
    """The ``postings`` columns of :data:`POSTING_COLS`, in order (``source_id`` None where it is the ``url``,
    ``extra`` its pairs' texts: crawler/store/extra.py, ``entry_texts``)."""
    sections: list[tuple]
    """``(seq, key, heading, text, spans)`` per section with bullets (crawler/store/sections.py: section_values)."""
    skills: list[tuple]
    """``(skill, section, seq, count, first_offset, length)`` per skill and section (:func:`crawler.store.skills.skill_values`)."""
    evaluation: tuple | None
    """The source's own evaluation: the ``evaluations`` columns after ``posting_id``."""
    app: tuple | None
    """The ``app_market`` columns of :data:`APP_COLS`; None when the posting has none of them."""
    search: tuple
    """The posting's full-text index columns, made of the values stored (crawler.store.fts.index_values)."""
    dedupe: tuple | None = None
    """Its dedupe key's columns (crawler.store.dedupe.key_values), made by the store stage; None: the dedupe step makes it."""
    raw_hash: str | None = None
    """The raw item's hash (normalize.posting.raw_item_hash), when its reader made one."""


def row_values(row: PostingRow) -> dict[str, Any]:
    """Every model column of ``row`` (``postings`` and ``app_market``), in the model's order."""
    values = dict(zip(POSTING_COLS, row.values)) | dict(zip(APP_COLS, row.app or _APP_EMPTY))
    values["source_id"] = source_id_of(values)
    values["extra"] = extra.object_text(values["extra"])
    return {c: values[c] for c in _MODEL_ORDER}


def evaluation_values(ev: Evaluation, computed_at: str, overall_level: str | None,
                      posting: Mapping[str, Any] | None = None) -> tuple:
    """An evaluation as its ``evaluations`` columns of :data:`EVAL_COLS` after ``posting_id``: evidence and signals
    compact (normalize/evaluation.py), the evidence as packed entries the writer stores once each
    (crawler/store/evidence.py: ``intern_rows``) without the values equal to ``posting``'s (its columns of
    ``POSTING_FIELDS``), the scorer as :func:`scorer_stored` and ``computed_at`` as :func:`time_stored` make them;
    ours (``jobcrawl-v1``) without levels, summary, notes, explanations and signals: they are rendered from its
    numbers and evidence when read (``normalize.score.render_evaluation``, crawler/store/read.py)."""
    ours = ev.scorer == SCORER
    levels = (None,) * len(LEVEL_COLS) if ours else (overall_level, *(ev.levels.get(d) for d in DIMENSIONS))
    summary, notes, explanations, signals = (None,) * 4 if ours else (
        ev.summary, dumps(ev.notes), dumps(ev.explanations), dumps(pack_signals(ev.signals)))
    return (
        scorer_stored(ev.scorer), ev.overall, ev.pay, ev.growth, ev.worklife, ev.mission, *levels,
        summary, notes, explanations, pack_evidence(ev.evidence, posting), dumps(ev.problems),
        time_stored(computed_at), signals,
    )


_EV_SCORER, _EV_OVERALL, _EV_LEVEL = (EVAL_COLS.index(c) - 1 for c in ("scorer", "overall", "overall_level"))
NO_SCORE = (None, None, None)


def listing_score(evaluation: tuple | None) -> tuple:
    """``(score, score_level_given, score_by_stored)`` of a posting whose only evaluation is ``evaluation`` (of
    :func:`evaluation_values`), as the score triggers (schema.sql) would set them: its overall, level as given and
    scorer code when it is ours (code 1, whose level is never NULL) or the source's (code 2) with an overall or a
    level; :data:`NO_SCORE` otherwise."""
    if evaluation is None:
        return NO_SCORE
    scorer, overall, level = evaluation[_EV_SCORER], evaluation[_EV_OVERALL], evaluation[_EV_LEVEL]
    if scorer == 1 or scorer == 2 and (overall is not None or level is not None):
        return overall, level, scorer
    return NO_SCORE


SQLITE_INT_MIN, SQLITE_INT_MAX = -2**63, 2**63 - 1


def posting_row(p: Posting, dedupe: tuple | None = None) -> PostingRow:
    """A normalized, tagged posting as the rows the writer stores (``dedupe``: its dedupe key's columns). Raises
    ValueError for a number SQLite cannot store (a parser let an absurd count through) or a bullet the section rows
    cannot (crawler/store/sections.py): the store stage quarantines that posting, where the writer would have failed
    its whole batch."""
    flat = flatten_posting(p)
    filled = [(k, b) for k, b in p.sections.items() if b]
    sections = [(seq, key, p.section_headings.get(key), *section_values(key, bullets, p.description))
                for seq, (key, bullets) in enumerate(filled)]
    skills = skill_values(p.skill_evidence)
    ev = p.source_evaluation
    evaluation = (evaluation_values(ev, p.as_of, level_for(ev.overall), {c: flat[c] for c in POSTING_FIELDS})
                  if ev else None)
    values = [flat[c] for c in POSTING_COLS]
    if values[_SOURCE_ID] == values[_URL]:  # stored once (crawler.store.schema.source_id_of reads it back)
        values[_SOURCE_ID] = None
    values[_EXTRA] = extra.entry_texts(p.extra)
    values = tuple(values)
    app = tuple(flat[c] for c in APP_COLS)
    for column, value in zip(POSTING_COLS + APP_COLS, values + app):
        if type(value) is int and not SQLITE_INT_MIN <= value <= SQLITE_INT_MAX:
            raise ValueError(f"{column} {value} does not fit an SQLite integer")
    body = fts.body_text(p.tags, "\n".join(section_text(k, b) for k, b in filled), p.description)
    search = fts.index_values(p.title, p.company, p.city, p.skills, body)
    return PostingRow(p.key, p.content_hash, p.locator, p.input_sha256, p.first_seen, p.last_seen,
                      p.complete_listing, values, sections, skills, evaluation, None if app == _APP_EMPTY else app,
                      search, dedupe, p.raw_hash)


SEEN_COLS = ("key", "source", "locator", "input_sha256", "seen_at", "complete_listing", "raw_hash")


def seen_rows(item: SeenPostings) -> list[tuple]:
    """The postings of a :class:`~normalize.models.SeenPostings` as the values of :data:`SEEN_COLS`."""
    return [(key, item.source, item.locator, item.input_sha256, item.seen_at, item.complete_listing, raw_hash)
            for key, raw_hash in item.postings]


def input_row(item: RawInput) -> tuple:
    """A raw input as its ``raw_inputs`` columns of :data:`INPUT_COLS` (the reader as JSON, a long text
    compressed: :func:`pack_text`)."""
    text, text_zstd = pack_text(item.text)
    return (item.source, item.locator, item.sha256, item.size, item.encoding, text, item.body, item.fetched_at,
            item.as_of, item.status, item.error, item.postings,
            None if item.reader is None else json.dumps(item.reader, ensure_ascii=False, sort_keys=True), text_zstd)


def pack_text(text: str | None) -> tuple[str | None, bytes | None]:
    """(text, text_zstd) as stored: a text over :data:`COMPRESS_ABOVE` characters goes compressed (UTF-8,
    lone surrogates kept), a shorter one as it is."""
    if text is None or len(text) <= COMPRESS_ABOVE:
        return text, None
    return None, zstd.compress(text.encode("utf-8", "surrogatepass"), ZSTD_LEVEL)


RAW_TEXT_LIMIT = 2**30
"""The most bytes a stored text may expand to when read (four times the default input cap)."""
SQL_RAW_TEXT_LIMIT = 16 * 2**20
"""The same for the SQL function ``raw_text`` in Datasette, where anyone who may run SQL can call it on any blob."""


def raw_text(text: str | None, text_zstd: bytes | None, limit: int = RAW_TEXT_LIMIT) -> str | None:
    """A stored raw input's text, whichever way it was stored (:func:`pack_text`). A blob that expands to more
    than ``limit`` bytes (not one this project wrote) raises ValueError, after expanding only ``limit``; one that
    is no whole Zstandard frame raises ValueError too."""
    if text_zstd is None:
        return text
    expander = zstd.ZstdDecompressor()
    try:
        data = expander.decompress(text_zstd, limit)
    except zstd.ZstdError as e:
        raise ValueError(f"raw_text: the compressed text is damaged ({e})") from None
    if not expander.eof:
        if not expander.needs_input:
            raise ValueError(f"raw_text: the compressed text expands to more than {limit:,} bytes")
        raise ValueError("raw_text: the compressed text is cut short")
    return data.decode("utf-8", "surrogatepass")


def sql_raw_text(text: str | None, text_zstd: bytes | None) -> str | None:
    """:func:`raw_text` as the SQL function ``raw_text(text, text_zstd)`` (Datasette), capped at
    :data:`SQL_RAW_TEXT_LIMIT`."""
    return raw_text(text, text_zstd, SQL_RAW_TEXT_LIMIT)


def copies_input(text: str | None, input_text: str | None) -> bool:
    """Whether a quarantine row's ``text`` is its input's whole stored text (a file that is no posting, the one
    truncated posting of a page), stored there once: the row keeps NULL and ``text_in_input`` 1, read back as
    ``raw_text(r.text, r.text_zstd)`` of its raw input. A text the SQL function cannot expand (over
    :data:`SQL_RAW_TEXT_LIMIT` bytes) keeps its copy."""
    return (text is not None and text == input_text
            and (len(text) <= SQL_RAW_TEXT_LIMIT // 4 or len(text.encode("utf-8", "surrogatepass")) <= SQL_RAW_TEXT_LIMIT))


def quarantine_row(item: Quarantined) -> tuple:
    """A quarantined input or posting as :data:`QUARANTINE_COLS` (position -1: the whole input)."""
    return (item.source, item.locator, -1 if item.position is None else item.position, item.input_sha256,
            item.reason, item.detail, item.text)


@dataclass
class Batch:
    """What one transaction writes: raw inputs, postings, quarantine rows, plain values only.

    ``parsers`` maps a source to the parser version under which its inputs' complete parses are
    recorded (crawler/ingest/ledger.py); ``run_id`` is the run the rows belong to; ``id`` names a batch that
    travels through the Redis spool, which may deliver it twice: the writer stores each id once.
    """

    run_id: int | None = None
    inputs: list[tuple] = field(default_factory=list)
    postings: list[PostingRow] = field(default_factory=list)
    quarantine: list[tuple] = field(default_factory=list)
    parsers: dict[str, str] = field(default_factory=dict)
    id: str | None = None
    seen: list[tuple] = field(default_factory=list)
    """Postings read again as stored (:func:`seen_rows`): only seen, not parsed again."""

    def __len__(self) -> int:
        return len(self.inputs) + len(self.postings) + len(self.quarantine) + len(self.seen)


NOTHING_READ = hashlib.sha256(b"").hexdigest()
"""``input_sha256`` of the quarantine row of a file not read at all (a FIFO, unreadable): the same problem on a
re-run is the same row, and storing any input of that file later retires it."""

_BOMS = {"utf-8-sig": codecs.BOM_UTF8, "utf-16-le": codecs.BOM_UTF16_LE, "utf-16-be": codecs.BOM_UTF16_BE,
         "utf-32-le": codecs.BOM_UTF32_LE, "utf-32-be": codecs.BOM_UTF32_BE}


def kept_whole(row: Mapping[str, Any]) -> bytes | None:
    """The input's bytes when what is kept of it is all of it: its stored bytes, or its text in its encoding
    (with the byte-order mark its decoding took off), whichever hashes to the input's SHA-256; else None."""
    candidates = [bytes(row["body"])] if row.get("body") is not None else []
    text, encoding = row.get("text"), row.get("encoding")
    if text is not None and encoding:
        codec = "utf-8" if encoding == "utf-8-sig" else encoding
        try:
            encoded = text.encode(codec)
        except (LookupError, UnicodeError):
            encoded = None
        if encoded is not None:
            candidates += [encoded, _BOMS.get(encoding, b"") + encoded]
    return next((data for data in candidates if hashlib.sha256(data).hexdigest() == row["sha256"]), None)
