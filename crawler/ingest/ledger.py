"""Which stored inputs a re-run of ``jobcrawl ingest`` need not parse again.

An input — a text dump, a table file, or a block of rows of a streamed table file — is skipped
when everything its parse would do is already in the database:

- the same bytes were read from the same path (``raw_inputs``: source, locator, sha256);
- its last complete parse (``input_parses``, written once all its postings were stored) had the
  same anchor for relative times and the same :func:`parser_version` (for tables it covers the
  reading options: format, preset, ``--map``, ``--value``), and quarantined nothing;
- each of its postings is still stored as that input gave it: as many postings point to the input
  (``postings.raw_input_id``, also moved to the input that last confirmed an unchanged posting)
  as its parse produced. A posting since changed by another version of the file points elsewhere.

Parsing it again would then find every posting unchanged and write nothing (an ingest never
closes postings, and ``last_seen`` is the anchor, already recorded). A text dump is then not read
at all; a table file is still read, to find its blocks and count its rows, but the rows of an
unchanged input are neither normalized nor stored again.

The spiders name their versions in ``parsers`` (source → :func:`parser_version`); the store
records complete parses of the inputs of those sources only.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path


_ROOT = Path(__file__).resolve().parents[2]
# The code that turns a dump into stored rows: parser, normalizers and their data, pipelines, storage.
_PARSER_CODE = ("normalize", "crawler/ingest", "crawler/web/pages", "crawler/pipelines.py", "crawler/store",
                "crawler/items.py")


@functools.lru_cache(maxsize=None)
def _code_digest() -> str:
    digest = hashlib.sha256()
    for entry in _PARSER_CODE:
        path = _ROOT / entry
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for file in files:
            digest.update(file.relative_to(_ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def parser_version(max_title_chars: int, options: str = "") -> str:
    """The version of the parsing code and of the settings that change its output, e.g. ``3f9c…:200``;
    with ``options`` (:func:`options_digest` of a spider's reading options) ``3f9c…:200:8d1e…``."""
    return f"{_code_digest()}:{max_title_chars}" + (f":{options}" if options else "")


def parser_of(settings, options: str = "") -> str:
    """:func:`parser_version` of the crawl's Scrapy ``settings`` (and reading ``options``)."""
    return parser_version(settings.getint("JOBCRAWL_MAX_TITLE_CHARS"), options)


def options_digest(options: Mapping) -> str:
    """A short digest of reading options (JSON values), the same for equal options in any key order."""
    text = json.dumps(options, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def unchanged_inputs(db_path: str, source: str, parser: str) -> dict[tuple[str, str], tuple[str, int]]:
    """``(locator, sha256) → (as_of, postings)`` of the inputs of ``source`` that a re-parse by ``parser`` would
    leave as they are (see the module docstring); empty when the database does not exist yet."""
    from crawler.store.queries import complete_parses

    return {(locator, sha): (as_of, postings)
            for locator, sha, as_of, postings in complete_parses(db_path, source, parser)}
