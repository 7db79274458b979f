"""Postings exported by other tools — CSV, JSON lines, one free-text JD per line — → :class:`RawPosting` items.

Formats (:func:`format_for` picks one by suffix unless told):

- ``csv``: a header row, then one posting per record. Delimiter sniffed on the header line among
  ``,`` ``\\t`` ``;`` ``|``; standard quoting, so quoted fields may span lines and keep their ``\\r\\n``.
- ``jsonl``: one JSON object per line (keys are the columns); a ``.json`` file holding one array of
  objects is read the same way.
- ``lines``: one free-text job description per line, no header; constants (``--value``) give what the
  file lacks (company, title).

**Columns → fields.** A :class:`Preset` (``presets.yaml``) maps our raw fields (:data:`FIELDS`) to column
names. Without a preset name the header is sniffed: the preset explaining the most header columns wins (ties: the
preset naming fewer columns, i.e. the more specific one). ``--map field=column`` overrides or
extends it (``field=colA+colB`` joins columns; ``field=`` unmaps); ``--value field=value`` gives every
row that value. Columns no field uses go to ``extra`` under their header name: nothing is dropped.
Tags and benefits are split on ``, ， 、 ; ； | ｜`` and line breaks, or read as a JSON / Python list
literal (``['大数据', 'SQL']``); benefits become a ``福利待遇`` section. Company facts run together
(``互联网A轮1000-9999人``) go to ``RawPosting.company_info``.

**Rows.** A row's number is the record's number counting the header as row 1 (the row number a
spreadsheet shows); for ``jsonl`` and ``lines`` it is the line number (item number in a JSON array).
It is the posting's ``position`` and appears in every problem (``row 17: no title``). Blank rows and
rows repeating the header are skipped and counted. Title and company are required: the store keys
dedupe and scoring on them, and a file without them can supply constants (``--value company=…``).
A row with more non-empty cells than the header has columns is quarantined (misaligned); fewer cells
mean empty trailing cells.

**Identity.** ``source`` is ``tabular`` (the preset is a property of the file, not of the posting;
re-importing with another mapping updates the same postings). ``source_id`` is the mapped id column,
else the URL of a web page, else ``<locator>#<row>``.

**Raw inputs.** A file up to :data:`SINGLE_INPUT_BYTES` is one raw input, stored verbatim and yielded
before its rows (a first pass counts what the rows become, so its status is known). A larger UTF-8 or
GB18030 file is read as a stream, line by line (:class:`normalize.text.LineDecoder`), and stored as
consecutive raw inputs of whole records, up to :data:`BLOCK_ROWS` rows / :data:`BLOCK_BYTES` each (same locator, each with the
SHA-256 of its own bytes): memory stays flat however long the file is, and the texts concatenated
are the file.

:func:`parse_table` never raises: every problem becomes a :class:`Quarantined` naming the row (or the
file) and the problem.

Modules: ``sniff`` (format, encoding, line ends, delimiter), ``records`` (CSV, JSON lines, JSON array and line
records, streamed), ``presets`` (``presets.yaml``), ``columns`` (binding a header), ``rows`` (records → items),
``report`` (options and report); this one: the parse.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from crawler.ingest.table.columns import Binding, missing_columns, sniff_preset
from crawler.ingest.table.fields import FIELDS, canonical_field, parse_assignments, split_list
from crawler.ingest.table.presets import PRESETS, Preset
from crawler.ingest.table.records import (Record, Source, csv_records, header_names, json_array, json_records,
                                          line_records)
from crawler.ingest.table.report import TableOptions, TableReport
from crawler.ingest.table.rows import Table, classify, row_item
from crawler.ingest.table.sniff import (FORMATS, NOT_ONE_VALUE, SEP_LINE, backslash_escaped, delimiter, first_line,
                                        format_for, open_source)
from normalize.models import Quarantined, RawInput, RawPosting
from normalize.text import DecodeError, LineDecoder

__all__ = [
    "FIELDS",
    "FORMATS",
    "PRESETS",
    "Preset",
    "TableOptions",
    "TableReport",
    "canonical_field",
    "format_for",
    "missing_columns",
    "parse_assignments",
    "parse_table",
    "sniff_preset",
    "split_list",
    "table_columns",
]

SINGLE_INPUT_BYTES = 16 * 2**20
BLOCK_BYTES = 2 * 2**20
BLOCK_ROWS = 1000
_JSON_SCAN_LINES = 200  # JSON lines read ahead to learn the keys
_QUARANTINE_TEXT = 64 * 1024  # text kept for a file-level problem of a large file


def table_columns(path: Path, fmt: str) -> list[str] | None:
    """The columns of a ``csv`` or ``jsonl`` file as its parse sees them (the header row; the keys of the first
    JSON objects); None when it has none or cannot be read (its parse will say why)."""
    report = TableReport(locator=path.name, format=fmt)
    table = Table(locator=path.name, fetched_at="", as_of="", source="tabular", options=TableOptions(preset="none"),
                  report=report)
    try:
        with path.open("rb") as stream:
            _start(open_source(stream, fmt, SINGLE_INPUT_BYTES), table, report, path.name)
    except (OSError, DecodeError):
        return None
    return table.header or None


@dataclass
class _Block:
    """Records read since the last raw input was emitted: their text, bytes (hashed) and items."""

    texts: list[str] = field(default_factory=list)
    raws: list[bytes] = field(default_factory=list)
    digest: Any = field(default_factory=hashlib.sha256)
    size: int = 0
    rows: int = 0
    lossy: bool = False  # a record's bytes are not in the file's encoding: the raw input keeps the bytes
    items: list[RawPosting | Quarantined] = field(default_factory=list)

    def add(self, record: Record) -> None:
        self.texts.append(record.text)
        if record.raw is not None:
            self.raws.append(record.raw)
            self.digest.update(record.raw)
            self.size += len(record.raw)
        self.lossy = self.lossy or (record.error is not None and record.error[0] == "bad_encoding")


def parse_table(data: bytes | Path | BinaryIO, *, locator: str, fetched_at: str, as_of: str, fmt: str,
                options: TableOptions | None = None, source: str = "tabular", report: TableReport | None = None,
                single_input_bytes: int | None = None) -> Iterator[RawInput | RawPosting | Quarantined]:
    """One CSV / JSONL / lines file — its bytes, or its path or open binary file to read it as a
    stream (the file is closed at the end) — → a
    :class:`RawInput` before the items read from it (one per block of rows when the file is larger
    than ``single_input_bytes``, default :data:`SINGLE_INPUT_BYTES`), then a :class:`RawPosting` or a
    :class:`Quarantined` per data row. Never raises. ``report`` (filled in as rows are read) says how
    the file was read and counts its rows.
    """
    options = options or TableOptions()
    report = report if report is not None else TableReport(locator=locator, format=fmt)
    report.format = fmt
    report.streamed = not isinstance(data, bytes)
    limit = SINGLE_INPUT_BYTES if single_input_bytes is None else single_input_bytes
    base = dict(source=source, locator=locator, fetched_at=fetched_at)
    stream: BinaryIO = data.open("rb") if isinstance(data, Path) else io.BytesIO(data) if isinstance(data, bytes) else data
    with stream:
        try:
            src = open_source(stream, fmt, limit, locator)
            report.zero_tail = src.zero_tail
        except DecodeError as err:
            report.error = str(err)
            sha, size = _file_sha(stream)
            stream.seek(0)
            kept = stream.read(limit)  # all of it unless the file is large
            yield RawInput(**base, sha256=sha, size=size, as_of=as_of, body=kept,
                           text=LineDecoder("utf-8").text(kept), error=str(err), status="quarantined")
            yield Quarantined(**base, input_sha256=sha, reason=err.reason, detail=str(err), text=None)
            return
        report.encoding = src.encoding
        table = Table(locator=locator, fetched_at=fetched_at, as_of=as_of, source=source, options=options, report=report)
        try:
            yield from _parse(stream, src, table, report, base, as_of)
        except Exception as err:  # a parser bug must not stop the run: the file is kept with the reason
            detail = f"parser error: {type(err).__name__}: {err}"
            report.error = detail
            sha, size = _file_sha(stream)
            yield RawInput(**base, sha256=sha, size=size, as_of=as_of, encoding=src.encoding,
                           text=_head_text(src), error=detail, status="quarantined")
            yield Quarantined(**base, input_sha256=sha, reason="parser_error", detail=detail, text=None)


def _file_sha(stream: BinaryIO) -> tuple[str, int]:
    """SHA-256 and size of the whole input, read again from the start."""
    stream.seek(0)
    digest, size = hashlib.sha256(), 0
    for block in iter(lambda: stream.read(2**20), b""):
        digest.update(block)
        size += len(block)
    return digest.hexdigest(), size


def _head_text(src: Source) -> str:
    if src.text is not None and len(src.text) <= _QUARANTINE_TEXT * 4:
        return src.text
    head = src.head[:_QUARANTINE_TEXT]
    return src.shown(head[: head.rfind(b"\n") + 1 or len(head)])


def _parse(stream: BinaryIO, src: Source, table: Table, report: TableReport, base: dict,
           as_of: str) -> Iterator[RawInput | RawPosting | Quarantined]:
    def file_problem(reason: str, detail: str) -> Iterator[RawInput | Quarantined]:
        report.error = detail
        sha, size = _file_sha(stream)
        short = src.text is not None and len(src.text) <= _QUARANTINE_TEXT * 4
        yield RawInput(**base, sha256=sha, size=size, encoding=src.encoding, as_of=as_of, text=_head_text(src),
                       status="quarantined", error=detail + ("" if short else f"; first {_QUARANTINE_TEXT // 1024} KB kept"))
        yield Quarantined(**base, input_sha256=sha, reason=reason, detail=detail, text=src.text if short else None)

    start = _start(src, table, report, base["locator"])
    if isinstance(start, _FileProblem):
        yield from file_problem(start.reason, start.detail)
        return
    block, records, unit = start
    if src.whole:
        # One raw input for the file, yielded before its items: a first pass counts what the rows
        # become (without building them) so the raw input's status is known; the second builds them.
        scratch = TableReport(locator=report.locator, format=report.format)
        kinds = [classify(table, record, unit, scratch, build=False) for record in records]
        postings = sum(kind is True for kind in kinds)
        quarantined = sum(isinstance(kind, Quarantined) for kind in kinds)
        sha, size = _file_sha(stream)
        yield RawInput(**base, sha256=sha, size=size, encoding=src.encoding, text=_whole_text(stream, src), as_of=as_of,
                       body=_whole_bytes(stream) if src.lossy else None, status="parsed" if not quarantined else "partial" if postings else "quarantined",
                       postings=postings, error=f"{quarantined} rows quarantined" if quarantined else None)
        report.inputs += 1
        again = _start(src.reopen(stream), table, report, base["locator"], bound=True)
        assert not isinstance(again, _FileProblem)
        for record in again[1]:
            report.rows += 1
            item = row_item(table, record, unit, report)
            if item is not None:
                item.input_sha256 = sha
                yield item
        return
    for record in records:
        report.rows += 1
        block.rows += 1
        block.add(record)
        item = row_item(table, record, unit, report)
        if item is not None:
            block.items.append(item)
        if block.rows >= BLOCK_ROWS or block.size >= BLOCK_BYTES:
            yield from _emit(block, src, base, as_of, report)
            block = _Block()
    if block.rows or report.inputs == 0:
        yield from _emit(block, src, base, as_of, report)


def _whole_bytes(stream: BinaryIO) -> bytes:
    """The whole input's bytes (small inputs only)."""
    stream.seek(0)
    return stream.read()


def _whole_text(stream: BinaryIO, src: Source) -> str:
    """The whole input decoded (small inputs only)."""
    if src.text is not None:
        return src.text
    stream.seek(0)
    return src.shown(stream.read())


@dataclass
class _FileProblem:
    reason: str
    detail: str


def _start(src: Source, table: Table, report: TableReport, locator: str,
           bound: bool = False) -> tuple[_Block, Iterator[Record], str] | _FileProblem:
    """Read up to the data rows: the header (CSV: the first non-blank record), the keys of the first
    objects (JSON lines) or nothing (lines), and bind the columns unless ``bound``. Returns the first
    block (holding the header's text), the data records and the unit rows are counted in, or a
    file-level problem."""
    fmt = report.format
    directive = None
    if fmt == "csv":
        first = first_line(src)
        directive = SEP_LINE.fullmatch(first)  # Excel's `sep=;` line names the delimiter: it is no header
        report.delimiter = directive.group(1) if directive else delimiter(first, prefer_tab=locator.lower().endswith(".tsv"))
        report.backslash_escapes = backslash_escaped(src)
        records: Iterator[Record] = csv_records(src, report.delimiter, "\\" if report.backslash_escapes else None)
        unit = "row"
    elif fmt == "jsonl" and src.array is not None and src.array != NOT_ONE_VALUE:
        records, unit = json_array(src), "item"
    elif fmt == "jsonl":
        records, unit = json_records(src), "line"
    else:
        records, unit = line_records(src), "line"
    block = _Block()
    pending: list[Record] = []  # records read while looking for the header that are rows themselves
    problem = None
    if fmt == "csv":
        for record in records:
            if directive and record.error is None and SEP_LINE.fullmatch(record.text.rstrip("\r\n")):
                block.add(record)
                directive = None
                continue
            if record.error is None and record.cells and any(c.strip() for c in record.cells):
                block.add(record)
                if not bound:
                    problem = table.set_header(header_names(record.cells), record.cells)
                break
            if record.error:
                pending.append(record)  # an unreadable record before the header is still a row
            else:
                block.add(record)  # blank lines before the header
        else:
            return _FileProblem("no_posting", "no header row: the file holds only blank lines")
    elif fmt == "jsonl":
        keys: dict[str, None] = {}
        for record in records:
            pending.append(record)
            if isinstance(record.obj, dict):
                keys.update(dict.fromkeys(record.obj))
            if len(pending) >= _JSON_SCAN_LINES:
                break
        if bound:
            pass
        elif keys:
            problem = table.set_header(list(keys))
        elif any(r.error for r in pending):  # only malformed lines so far: each is quarantined
            table.binding = Binding(None, {}, [], frozenset(), 0)
        else:
            return _FileProblem("no_posting", "no JSON object in the file")
    elif not bound:  # one description per line: title and company are --set, or unknown (hidden employer)
        table.binding = Binding(None, {"description": ("description",)}, [], frozenset({"description"}), 1)
    if problem:
        return _FileProblem("no_mapping", problem)
    return block, _chain(pending, records), unit


def _chain(first: list[Record], rest: Iterator[Record]) -> Iterator[Record]:
    yield from first
    yield from rest


def _emit(block: _Block, src: Source, base: dict, as_of: str,
          report: TableReport) -> Iterator[RawInput | RawPosting | Quarantined]:
    """The raw input of a block of rows of a large file, then the block's items."""
    sha = block.digest.hexdigest()
    postings = sum(isinstance(i, RawPosting) for i in block.items)
    quarantined = len(block.items) - postings
    status = "parsed" if not quarantined else "partial" if postings else "quarantined"
    report.inputs += 1
    yield RawInput(**base, sha256=sha, size=block.size, encoding=src.encoding, text="".join(block.texts), as_of=as_of,
                   body=b"".join(block.raws) if block.lossy else None, status=status, postings=postings, error=f"{quarantined} rows quarantined" if quarantined else None)
    for item in block.items:
        item.input_sha256 = sha
        yield item
