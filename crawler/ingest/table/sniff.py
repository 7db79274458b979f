"""How a table file is read: its format (by suffix), its encoding and line ends (:func:`open_source`), its
delimiter, and whether a ``.json`` file is one value (an array, or an object wrapping the postings)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import BinaryIO

from crawler.files import TOO_DEEP
from crawler.ingest.table.records import Source
from normalize.text import WIDE_BOMS, DecodeError, LineDecoder, decode_bytes, zero_filled_tail

FORMATS = ("auto", "text", "csv", "jsonl", "lines")
SUFFIX_FORMATS = {".csv": "csv", ".tsv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
HEAD_BYTES = 2**20  # what a large file's encoding and delimiter are judged on


def format_for(path: str | Path, requested: str = "auto") -> str:
    """The format to read ``path`` with: ``requested`` unless ``auto``, else by suffix (.csv/.tsv → csv,
    .jsonl/.ndjson/.json → jsonl), else ``text`` (the job app's dump)."""
    if requested != "auto":
        return requested
    return SUFFIX_FORMATS.get(Path(path).suffix.lower(), "text")


def open_source(stream: BinaryIO, fmt: str, limit: int, locator: str = "") -> Source:
    """Check the encoding (the whole input up to ``limit`` bytes, else its first :data:`HEAD_BYTES`)
    and choose byte or text mode; raises DecodeError.

    A file mixing encodings, or holding bytes its encoding cannot read, is not rejected whole: it is
    read line by line (UTF-8 when it holds UTF-8 text, else GB18030) and only the records with bad
    bytes are quarantined (``lossy``: its raw inputs keep their bytes)."""
    head = stream.read(limit + 1)
    whole = len(head) <= limit
    size = len(head) if whole else stream.seek(0, io.SEEK_END)
    wide = head.startswith(WIDE_BOMS)
    end = size if wide else size - zero_filled_tail(head) if whole else _data_end(stream, size)
    sample = head[:min(HEAD_BYTES, end)]
    newline = "\r" if b"\n" not in sample and b"\r" in sample else "\n"
    # One JSON value (an array, or an object wrapping the postings: a saved API answer); a large file, or one with
    # bytes its encoding cannot read, that starts with an object is JSON lines, read line by line.
    start = sample.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    json_array = (fmt == "jsonl" and not locator.lower().endswith((".jsonl", ".ndjson"))
                  and (start == b"[" or (start == b"{" and whole)))
    try:
        if whole:
            text, encoding = decode_bytes(head)
            decoder = LineDecoder(encoding)
        else:
            text, decoder = None, LineDecoder.for_head(head[:HEAD_BYTES])
    except DecodeError as err:
        json_array = json_array and start == b"["
        if err.reason not in ("mixed_encoding", "bad_encoding") or newline != "\n" or json_array or wide:
            raise
        text, decoder = None, LineDecoder.for_mixed(sample)
    stream.seek(0)
    if decoder.by_line and newline == "\n" and not json_array:
        return Source(decoder=decoder, head=sample, whole=whole, stream=stream, end=end, size=size)
    if text is None:
        text, encoding = decode_bytes(stream.read(end))  # UTF-16/32, windows-1252 or \r lines: decoded whole
        decoder = LineDecoder(encoding)
    src = Source(decoder=decoder, head=sample, whole=True, text=text, newline=newline, end=end, size=size)
    if json_array:
        src.array = load_array(text)
    return src


def _data_end(stream: BinaryIO, size: int) -> int:
    """Where a large input's data ends: ``size`` less its :func:`zero_filled_tail` (``size`` when it
    holds nothing but NUL bytes), read back from its end."""
    end = size
    while end:
        start = max(0, end - 2**20)
        stream.seek(start)
        kept = len(stream.read(end - start).rstrip(b"\x00"))
        if kept:
            return start + kept
        end = start
    return size


def load_array(text: str) -> list | tuple[str, str]:
    """A ``.json`` file's value as a list of records (an object: itself, or the list it wraps), or the
    problem of a file that is not one JSON value. A file of several values (JSON lines under another
    suffix: ``Extra data``), or one starting with an object that does not parse as one value, is read
    line by line (:data:`NOT_ONE_VALUE`), so that each line is quarantined alone."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data" or text.lstrip("\ufeff \t\r\n").startswith("{"):
            return NOT_ONE_VALUE
        return ("bad_json", f"not JSON ({err.msg} at line {err.lineno} column {err.colno})")
    except RecursionError:
        return NOT_ONE_VALUE if text.lstrip("\ufeff \t\r\n").startswith("{") else ("bad_json", TOO_DEEP)
    if isinstance(data, dict):
        return _wrapped_list(data) or [data]
    return data if isinstance(data, list) else [data]


_WRAPPERS = frozenset(("jobs", "jobpostings", "postings", "positions", "offers", "results", "result", "data", "items",
                       "content", "list", "records", "rows", "hits", "positionresult"))
"""Keys under which a saved API answer holds its postings (Greenhouse and Ashby ``jobs``, Workday
``jobPostings``, Recruitee ``offers``, SmartRecruiters ``content``, 拉勾 ``content.positionResult.result`` …)."""


def _wrapped_list(data: dict, depth: int = 3) -> list | None:
    """The list of objects a JSON object wraps under one of :data:`_WRAPPERS` (at most ``depth`` objects down),
    else None (the object is a record itself)."""
    for key, value in data.items():
        if not isinstance(key, str) or key.casefold() not in _WRAPPERS:
            continue
        if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            return value
        if isinstance(value, dict) and depth > 1 and (inner := _wrapped_list(value, depth - 1)):
            return inner
    return None


NOT_ONE_VALUE = ("lines", "")


SEP_LINE = re.compile(r'\s*"?sep=([^"\r\n])"?\s*', re.IGNORECASE)


def delimiter(first_line: str, prefer_tab: bool) -> str:
    """The delimiter of a header line: the most frequent of ``, \\t ; |`` outside quotes (comma if none)."""
    unquoted = re.sub(r'"[^"]*"', "", first_line)
    counts = {d: unquoted.count(d) for d in (",", "\t", ";", "|")}
    if prefer_tab and counts["\t"]:
        return "\t"
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def _sample(src: Source) -> str:
    return src.text[:HEAD_BYTES] if src.text is not None else src.shown(src.head)


def first_line(src: Source) -> str:
    """The first non-blank line (for sniffing the delimiter)."""
    return next((line for line in _sample(src).splitlines() if line.strip()), "")


_BACKSLASHES = re.compile(r'(\\+)(")?')


def backslash_escaped(src: Source) -> bool:
    """Whether a CSV was written with ``escapechar="\\"`` (pandas' ``to_csv(quoting=csv.QUOTE_NONNUMERIC,
    escapechar="\\")``, as JobSpy's README saves its results): a backslash of the data is then written as two, a
    quote as two quotes or as ``\\"``. Judged on the first :data:`HEAD_BYTES`: it holds backslashes and every run
    of them is even, or odd before a quote. A plain CSV writes a backslash as itself, so a lone one (a markdown
    ``\\-``) shows the file is plain."""
    runs = [(len(m.group(1)), m.group(2)) for m in _BACKSLASHES.finditer(_sample(src))]
    return bool(runs) and all(n % 2 == 0 or quote for n, quote in runs)
