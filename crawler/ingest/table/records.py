"""Streaming record readers: a table file's lines as decoded (:class:`Source`) → records of CSV, JSON lines, a JSON
array or one text per line, each with its number, text and bytes, or why it could not be read."""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator

from crawler.files import TOO_DEEP, size_text
from normalize.text import LineDecoder

csv.field_size_limit(max(csv.field_size_limit(), 64 * 2**20))  # one JD can exceed the 128 KB default


@dataclass
class Record:
    """One record: its number (row or line), first physical line, text and bytes as read, and its
    cells (CSV and lines) or object (JSON), or why it could not be read."""

    number: int
    line: int
    text: str
    raw: bytes | None = None
    cells: list[str] | None = None
    obj: Any = None
    error: tuple[str, str] | None = None


class Source:
    """The input's lines, decoded.

    Byte mode (an encoding :class:`~normalize.text.LineDecoder` reads by line: UTF-8, GB18030): lines are read from
    the bytes or the open file and decoded one by one, so a file of any size is read in bounded memory. Text mode
    (UTF-16/32, windows-1252, a file whose lines end in ``\\r`` alone, a JSON array): the decoded text is split.
    :meth:`take` returns the text and bytes of the record just read.
    """

    def __init__(self, *, decoder: LineDecoder, head: bytes, whole: bool, stream: BinaryIO | None = None,
                 text: str | None = None, newline: str = "\n", end: int | None = None, size: int | None = None):
        self.decoder, self.head, self.whole, self.stream, self.text = decoder, head, whole, stream, text
        self.end = end  # the data's end in bytes: a zero-filled tail after it is not read
        self.zero_tail = 0 if end is None or size is None else size - end
        self.array: list | tuple[str, str] | None = None  # a .json file's parsed array, or its problem
        self.skip = decoder.bom if text is None else 0  # the byte-order mark is skipped, not decoded
        self.newline = newline
        self.line_no = 0
        self.bad_bytes = False
        self._texts: list[str] = []
        self._raws: list[bytes] = []

    @property
    def encoding(self) -> str:
        return self.decoder.encoding

    @property
    def lossy(self) -> bool:
        """Some lines are not in the encoding: their records are quarantined, the bytes kept."""
        return self.decoder.lossy

    def reopen(self, stream: BinaryIO) -> Source:
        """The same input from its start (for a second pass)."""
        stream.seek(0)
        again = Source(decoder=self.decoder, head=self.head, whole=self.whole, stream=self.stream, text=self.text,
                       newline=self.newline, end=self.end)
        again.zero_tail = self.zero_tail
        again.array = self.array
        return again

    def lines(self) -> Iterator[str]:
        if self.text is not None:
            newline = re.escape(self.newline)
            for match in re.finditer(rf"[^{newline}]*{newline}|[^{newline}]+", self.text):
                self.line_no += 1
                self._texts.append(match.group())
                yield match.group()
            return
        assert self.stream is not None
        skip = self.skip
        for chunk in self._chunks():
            self._raws.append(chunk)
            if skip:
                chunk, skip = chunk[skip:], 0
            line, bad = self.decoder.line(chunk)
            self.bad_bytes = self.bad_bytes or bad
            self.line_no += 1
            self._texts.append(line)
            yield line

    def _chunks(self) -> Iterator[bytes]:
        """The stream's lines up to :attr:`end`. (Not ``yield from`` the stream: closing that generator
        would close the file.)"""
        assert self.stream is not None
        if self.end is None or not self.zero_tail:
            return iter(self.stream)
        return self._bounded_lines(self.stream, self.end - self.stream.tell())

    @staticmethod
    def _bounded_lines(stream: BinaryIO, left: int) -> Iterator[bytes]:
        while left > 0 and (chunk := stream.readline(left)):
            left -= len(chunk)
            yield chunk

    def take(self) -> tuple[str, bytes | None]:
        """Text and bytes of the lines read since the last call."""
        text = "".join(self._texts)
        raw = b"".join(self._raws) if self.text is None else None
        self._texts.clear()
        self._raws.clear()
        return text, raw

    def bad_record(self) -> tuple[str, str] | None:
        if self.bad_bytes:
            self.bad_bytes = False
            return ("bad_encoding", f"bytes that are not {self.decoder.codec}")
        return None

    def shown(self, data: bytes) -> str:
        """Bytes of the input (from its start: the byte-order mark is left out) as text, bad bytes as U+FFFD."""
        return self.decoder.text(data[self.skip:])


RECORD_CAP = 2**20
"""Characters a CSV record spanning several lines may hold: past this, a quoted field that was opened
is taken as never closed (:func:`csv_records`)."""


@dataclass(slots=True)
class _Line:
    number: int
    text: str
    raw: bytes | None
    bad: tuple[str, str] | None  # bytes not in the encoding


class _RecordTooLong(Exception):
    pass


class _LineFeed:
    """The lines a csv reader reads, one by one, with the record being read (:attr:`record`), and
    lines pushed back to be read again. Raises :class:`_RecordTooLong` when a record spanning
    several lines exceeds :data:`RECORD_CAP` characters; ``at_end`` tells that the reader asked for
    a line after the last one in the middle of a record (an open quote)."""

    def __init__(self, source: Source):
        self.source, self.lines = source, source.lines()
        self.back: list[_Line] = []
        self.record: list[_Line] = []
        self.chars = 0
        self.at_end = False

    def start(self) -> None:
        self.record, self.chars, self.at_end = [], 0, False

    def push_back(self, lines: list[_Line]) -> None:
        self.back.extend(reversed(lines))

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self.back:
            line = self.back.pop()
        else:
            try:
                text = next(self.lines)
            except StopIteration:
                self.at_end = bool(self.record)
                raise
            _, raw = self.source.take()
            line = _Line(self.source.line_no, text, raw, self.source.bad_record())
        self.record.append(line)
        self.chars += len(line.text)
        if len(self.record) > 1 and self.chars > RECORD_CAP:
            raise _RecordTooLong
        return line.text


def csv_records(source: Source, delimiter: str, escapechar: str | None = None) -> Iterator[Record]:
    """CSV records, numbered from 1; ``escapechar``: the character that escapes the next one (a file written
    with one, :func:`~crawler.ingest.table.sniff.backslash_escaped`). A quoted field that does not close — to the end of the file,
    within :data:`RECORD_CAP` characters, or closed only by a quote some lines later that text
    follows (``"x``: the reader is strict) — swallows no rows: its record is its first line alone,
    quarantined, and the lines after it are read again as records. A one-line record the strict
    reader refuses (``"a"b``) is read leniently, as spreadsheets do."""
    feed = _LineFeed(source)
    dialect = {"delimiter": delimiter, "quotechar": '"', "doublequote": True, "escapechar": escapechar}
    reader = csv.reader(feed, **dialect, strict=True)
    number = 0
    while True:
        feed.start()
        problem = None
        try:
            cells: list[str] | None = next(reader)
        except StopIteration:
            break
        except _RecordTooLong:
            cells, problem = None, f"within {len(feed.record)} lines and {size_text(RECORD_CAP)}"
        except csv.Error as err:
            cells, problem = None, f"line {feed.record[-1].number}: {err}" if feed.record else str(err)
        lines = feed.record
        number += 1
        if cells is None and (feed.at_end or len(lines) > 1):
            feed.push_back(lines[1:])
            first = lines[0]
            how = "never closes (to the end of the file)" if feed.at_end else f"does not close ({problem})"
            yield Record(number, first.number, first.text, first.raw,
                          error=first.bad or ("bad_csv", f"a quoted field opened here {how}; the lines after it are read again as rows"))
            continue
        error = None
        if cells is None:
            try:
                cells = next(csv.reader([lines[0].text], **dialect))
            except (csv.Error, StopIteration) as err:
                error = ("bad_csv", f"not CSV: {err}")
        raw = b"".join(line.raw for line in lines) if source.text is None else None
        bad = next((line.bad for line in lines if line.bad), None)
        yield Record(number, lines[0].number, "".join(line.text for line in lines), raw, cells=cells, error=bad or error)


def json_records(source: Source) -> Iterator[Record]:
    for line in source.lines():
        number = source.line_no
        text, raw = source.take()
        error = source.bad_record()
        obj = None
        if error is None and line.strip():
            try:
                obj = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as err:
                error = ("bad_json", f"not JSON ({err.msg} at column {err.colno})")
            except ValueError as err:
                error = ("bad_json", f"not JSON ({err})")
            except RecursionError:
                error = ("bad_json", TOO_DEEP)
            else:
                if not isinstance(obj, dict):
                    error, obj = ("not_object", f"a JSON {type(obj).__name__}, not an object"), None
        yield Record(number, number, text, raw, obj=obj, error=error)


def json_array(source: Source) -> Iterator[Record]:
    """A ``.json`` file holding one array (parsed by :func:`~crawler.ingest.table.sniff.load_array`): each element is a record
    numbered from 1; a file that is not JSON is one bad record."""
    data = source.array
    if isinstance(data, tuple):
        yield Record(1, 1, source.text or "", error=data)
        return
    for i, obj in enumerate(data or [], 1):
        error = None if isinstance(obj, dict) else ("not_object", f"a JSON {type(obj).__name__}, not an object")
        yield Record(i, i, json.dumps(obj, ensure_ascii=False), obj=obj if error is None else None, error=error)


def line_records(source: Source) -> Iterator[Record]:
    for line in source.lines():
        number = source.line_no
        text, raw = source.take()
        yield Record(number, number, text, raw, cells=[line.strip()], error=source.bad_record())


def header_names(cells: list[str]) -> list[str]:
    """Header cells as unique names: blanks become ``column N``, repeats get `` (2)``, `` (3)``."""
    names: list[str] = []
    seen: set[str] = set()
    for i, cell in enumerate(cells):
        name = cell.strip().lstrip("\ufeff") or f"column {i + 1}"
        base, n = name, 1
        while name in seen:
            n += 1
            name = f"{base} ({n})"
        seen.add(name)
        names.append(name)
    return names
