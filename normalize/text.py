"""Text utilities shared by every parser: decoding, folding, cleaning, HTML to text.

Pure functions; no Scrapy or SQLite imports.
"""

from __future__ import annotations

import codecs
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Iterator

__all__ = [
    "DecodeError",
    "decode_bytes",
    "LineDecoder",
    "DETECTED",
    "reads_as_chinese",
    "reads_as_western",
    "fold",
    "FORMAT_CHARS",
    "MAYBE_FORMAT_CHARS",
    "FormatMap",
    "drop_format",
    "clean_line",
    "clean_text",
    "split_lines",
    "sha256_hex",
    "LONE_SURROGATE",
    "find_matches",
    "replace_lone_surrogates",
    "declared_codec",
    "declared_charset",
    "zero_filled_tail",
]


class DecodeError(ValueError):
    """The bytes are not text we can read; ``reason`` is a code, ``str(err)`` one line for humans."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


_DECODED_AS = {"gbk": "gb18030", "gb2312": "gb18030"}


def declared_codec(charset: str) -> str | None:
    """The codec a declared ``charset`` is read with: Python's name for it, GBK and GB2312 read as GB18030, their
    superset, as the WHATWG Encoding Standard decodes those labels (w3lib ≥ 2.6 names them ``gbk``, earlier
    versions ``gb18030``); None for a charset Python does not know or whose codec is no text encoding (``base64``,
    ``rot13``: a page may name anything)."""
    try:
        info = codecs.lookup(charset)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    return _DECODED_AS.get(info.name, info.name)


def declared_charset(content_type: str | None, html_body: bytes | None = None) -> str | None:
    """The charset ``content_type`` names, else the ``<meta>`` one of ``html_body`` (an HTML page's bytes), as the
    codec it is read with (:func:`declared_codec`); None when neither names one."""
    from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding

    charset = http_content_type_encoding(content_type) or (
        html_body_declared_encoding(html_body) if html_body else None)
    return declared_codec(charset) if charset else None


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # must precede UTF-16 LE: it starts with the same two bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

WIDE_BOMS = tuple(bom for bom, encoding in _BOMS if encoding != "utf-8")
ZERO_TAIL = "{:,} NUL bytes at its end left out (a zero-filled tail: a write cut short)"

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate code point on its own (JSON and ``surrogateescape`` let them into a str); Rust-backed matchers
refuse such text, so it is searched with each replaced by U+FFFD (same length, same offsets)."""


def find_matches(automaton, text: str, *, overlapping: bool = False) -> list[tuple[int, int, int]]:
    """``(pattern index, start, end)`` of an ahocorasick-rs automaton's matches in ``text``; a lone surrogate,
    which the automaton cannot take (and no pattern holds), is searched as U+FFFD (offsets unchanged)."""
    try:
        return automaton.find_matches_as_indexes(text, overlapping=overlapping)
    except UnicodeEncodeError:
        return automaton.find_matches_as_indexes(LONE_SURROGATE.sub("\ufffd", text), overlapping=overlapping)


def replace_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (a str, or lists, tuples and dicts of them, keys too) with each lone surrogate replaced by U+FFFD,
    and how many there were; ``value`` itself when there were none."""
    if isinstance(value, str):
        return (value, 0) if value.isascii() else LONE_SURROGATE.subn("\ufffd", value)
    if isinstance(value, (list, tuple)):
        parts = [replace_lone_surrogates(v) for v in value]
        found = sum(n for _, n in parts)
        return (type(value)(v for v, _ in parts), found) if found else (value, 0)
    if isinstance(value, dict):
        pairs = [(replace_lone_surrogates(k), replace_lone_surrogates(v)) for k, v in value.items()]
        found = sum(kn + vn for (_, kn), (_, vn) in pairs)
        return ({k: v for (k, _), (v, _) in pairs}, found) if found else (value, 0)
    return value, 0


# C0 controls except \t \n \r, DEL, and C1 controls: never part of real postings.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BINARY_SAMPLE = 8192


def decode_bytes(data: bytes, *, declared: str | None = None) -> tuple[str, str]:
    """Decode an input file or an HTTP body: returns ``(text, encoding)`` or raises :class:`DecodeError`.

    The order browsers follow: a BOM (UTF-8, UTF-16/32); then ``declared``, the charset the input names (HTTP
    Content-Type, HTML ``<meta>``; read as :func:`declared_codec`), when it decodes every byte; then UTF-8; then
    the one of GB18030 (which covers GBK and GB2312) and windows-1252 (``cp1252``) whose reading is plausible text
    (:func:`reads_as_chinese`, :func:`reads_as_western`). A :func:`zero_filled_tail` of an input without a BOM is
    left out.
    Rejected with a reason: empty input, binary data (NUL bytes or many control characters), UTF-8 mixed with
    another encoding, and bytes no candidate reads as text (``bad_encoding``); no character is ever replaced.
    """
    if not data:
        raise DecodeError("empty", "empty file (0 bytes)")
    if kind := next((kind for magic, kind in _CONTAINERS if data.startswith(magic)), None):
        raise DecodeError("binary", f"binary file: {kind}")
    if tail := zero_filled_tail(data):
        data = data[:-tail]
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(encoding)
            except UnicodeDecodeError as err:
                raise DecodeError("bad_encoding", f"invalid {encoding} after its byte-order mark at byte {err.start + len(bom)}") from None
            return _check_not_binary(text, encoding), encoding + ("-sig" if encoding == "utf-8" else "")
    if declared and (encoding := declared_codec(declared)):
        try:
            return _check_not_binary(data.decode(encoding), encoding), encoding
        except UnicodeError:  # the bytes do not fit it (or the codec reads nothing: ``undefined``)
            pass  # read them as if none were declared
    if b"\x00" in data[:_BINARY_SAMPLE]:
        raise DecodeError("binary", "binary file (NUL bytes; UTF-16 without a byte-order mark is not accepted)")
    try:
        return _check_not_binary(data.decode("utf-8"), "utf-8"), "utf-8"
    except UnicodeDecodeError as err:
        utf8_error = err
    if utf8_error.reason == "unexpected end of data" and utf8_error.end == len(data):
        # Cut inside the last character (a truncated file): keep what is whole.
        try:
            return _check_not_binary(data[: utf8_error.start].decode("utf-8"), "utf-8"), "utf-8"
        except UnicodeDecodeError as err:
            utf8_error = err
    if _has_utf8_multibyte(data):
        raise DecodeError(
            "mixed_encoding",
            f"mixed encoding: valid UTF-8 text plus bytes that are not UTF-8 (first at byte {utf8_error.start})"
        )
    for encoding, plausible in (("gb18030", reads_as_chinese), ("cp1252", reads_as_western)):
        try:
            text = data.decode(encoding)
            if plausible(text):
                return _check_not_binary(text, encoding), encoding
        except (UnicodeDecodeError, DecodeError):
            continue
    raise DecodeError("bad_encoding", f"unknown encoding: not UTF-8 (bad byte at {utf8_error.start}), and neither "
                                      "GB18030 nor windows-1252 reads it as text")


@dataclass(frozen=True)
class LineDecoder:
    """The streaming form of :func:`decode_bytes`: an input decoded line by line, in bounded memory however long it
    is. :meth:`for_head` judges the encoding on the input's first bytes as :func:`decode_bytes` judges a whole input;
    :meth:`for_mixed` reads one that :func:`decode_bytes` rejects for mixed or bad bytes line by line anyway
    (``lossy``). :meth:`line` decodes one line alone: in :attr:`by_line` encodings a ``\\n`` byte is never part of a
    character. Unlike :func:`decode_bytes` it replaces bytes not in the encoding (by U+FFFD) and says so: the caller
    sets the line apart and keeps its bytes."""

    encoding: str
    """As :func:`decode_bytes` names it (``utf-8-sig``: UTF-8 after a byte-order mark)."""
    lossy: bool = False
    """Lines with bytes not in the encoding are expected (the input mixes encodings or holds broken bytes)."""

    @property
    def codec(self) -> str:
        """The codec lines are decoded with (the byte-order mark is skipped, not decoded)."""
        return "utf-8" if self.encoding == "utf-8-sig" else self.encoding

    @property
    def bom(self) -> int:
        """Bytes of the byte-order mark that start the input, left out of its first line."""
        return len(codecs.BOM_UTF8) if self.encoding == "utf-8-sig" else 0

    @property
    def by_line(self) -> bool:
        """The input can be decoded line by line (UTF-8, GB18030), else only whole (UTF-16/32, windows-1252)."""
        return self.encoding in ("utf-8", "utf-8-sig", "gb18030")

    def line(self, data: bytes) -> tuple[str, bool]:
        """One line's text, and True when it held bytes not in the encoding (each read as U+FFFD)."""
        try:
            return data.decode(self.codec), False
        except UnicodeDecodeError:
            return data.decode(self.codec, "replace"), True

    def text(self, data: bytes) -> str:
        """Bytes shown as text: each byte not in the encoding read as U+FFFD."""
        return data.decode(self.codec, "replace")

    @classmethod
    def for_head(cls, head: bytes) -> LineDecoder:
        """The decoder of an input that starts with ``head`` and goes on: ``head`` up to its last ``\\n`` byte (all of it
        when it has none) read by :func:`decode_bytes`, which may raise :class:`DecodeError`. In UTF-8 and GB18030 that
        cut falls between characters; a UTF-16/32 head cut so is refused (``bad_encoding``)."""
        cut = head.rfind(b"\n")
        return cls(decode_bytes(head[:cut + 1] if cut > 0 else head)[1])

    @classmethod
    def for_mixed(cls, sample: bytes) -> LineDecoder:
        """The lossy decoder of an input :func:`decode_bytes` rejects as ``mixed_encoding`` or ``bad_encoding``: UTF-8
        after a UTF-8 byte-order mark, else the one of UTF-8 and GB18030 that reads more lines of ``sample`` (the
        input's first bytes; UTF-8 on a tie). :class:`DecodeError` when ``sample`` looks binary."""
        if sample.startswith(codecs.BOM_UTF8):
            encoding = "utf-8-sig"
        else:
            readable = dict.fromkeys(("utf-8", "gb18030"), 0)
            for line in sample.split(b"\n")[:-1] or [sample]:
                for codec in readable:
                    try:
                        line.decode(codec)
                        readable[codec] += 1
                    except UnicodeDecodeError:
                        pass
            encoding = "utf-8" if readable["utf-8"] >= readable["gb18030"] else "gb18030"
        decoder = cls(encoding, lossy=True)
        controls = len(_C0_CONTROLS.findall(decoder.text(sample)))
        if controls > max(8, len(sample) // 20):
            raise DecodeError("binary", f"binary file ({controls} control characters in the first {len(sample)} bytes)")
        return decoder


_C0_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


DETECTED = ("gb18030", "cp1252")
"""The encodings :func:`decode_bytes` reads an input in by detection, when it declares none and is not UTF-8."""
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _runs(text: str) -> tuple[int, list[str]]:
    runs = _NON_ASCII.findall(text)
    return sum(map(len, runs)), runs


def reads_as_chinese(text: str) -> bool:
    """A GB18030 reading is Chinese: at least 80% of its non-ASCII characters are in GB2312 (the common hanzi, CJK
    punctuation, full-width forms) and at least half stand next to another. Chinese words are runs of hanzi; an
    accented letter of windows-1252 read as GB18030 becomes one rare hanzi between Latin letters (``Ing閚ieur``)."""
    chars, runs = _runs(text)
    outside = "".join(runs).encode("gb2312", "replace").count(b"?")
    paired = sum(len(run) for run in runs if len(run) > 1)
    return chars > 0 and outside <= chars * 0.2 and paired >= chars * 0.5


def reads_as_western(text: str) -> bool:
    """A windows-1252 reading is Western text: at most a quarter of its non-ASCII characters stand in runs of three
    or more. Accented letters stand between plain ones (``Ingénieur``, ``Größe``); GBK or random bytes read as
    windows-1252 are long runs of symbols and accented capitals."""
    chars, runs = _runs(text)
    return chars > 0 and sum(len(run) for run in runs if len(run) > 2) <= chars * 0.25


_AS_CSV = "save the sheet as CSV (UTF-8) to ingest it"
_CONTAINERS = (  # files people hand in for job data that hold no text to read as they are
    (b"PK\x03\x04", f"a ZIP archive (an .xlsx workbook is one): {_AS_CSV}"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", f"an old Office document (.xls, .doc): {_AS_CSV}"),
    (b"\x1f\x8b", "gzip-compressed: decompress it (gunzip) to ingest what it holds"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it (unxz) to ingest what it holds"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive: extract it to ingest what it holds"),
    (b"Rar!\x1a\x07", "a RAR archive: extract it to ingest what it holds"),
    (b"%PDF-", "a PDF document: no text is read from PDFs"),
    (b"SQLite format 3\x00", "an SQLite database (export its postings as CSV or JSON lines to ingest them)"),
)


def zero_filled_tail(data: bytes) -> int:
    """How many NUL bytes end ``data`` after its last other byte (0 when it holds nothing else, or
    starts with a UTF-16/32 byte-order mark: there NUL bytes are text).

    A file system fills the part of a file a crash kept it from writing with zeros: such a tail is
    no data, and the text before it is read as if the file ended there."""
    if data.startswith(WIDE_BOMS):
        return 0
    kept = len(data.rstrip(b"\x00"))
    return len(data) - kept if kept else 0


# Four well-formed 3-byte UTF-8 characters in a row (CJK text): GBK bytes almost never form this
# by chance (about 0.02⁴ per position), so finding it in a file that fails UTF-8 means mixing.
_UTF8_CJK_RUN = re.compile(rb"(?:[\xe0-\xef][\x80-\xbf]{2}){4}")


def _has_utf8_multibyte(data: bytes) -> bool:
    """True when the bytes hold a run of well-formed multi-byte UTF-8 (so a failed UTF-8 decode means mixing)."""
    return _UTF8_CJK_RUN.search(data) is not None


def _check_not_binary(text: str, encoding: str) -> str:
    sample = text[:_BINARY_SAMPLE]
    if not sample:
        raise DecodeError("empty", "empty file (only a byte-order mark)")
    controls = len(_CONTROL_RE.findall(sample))
    replacement = sample.count("\ufffd")
    if controls + replacement > max(8, len(sample) // 20):
        raise DecodeError("binary", f"binary file ({controls + replacement} control characters in the first {len(sample)} as {encoding})")
    return text


_FORMAT_RANGES = ((0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD), (0x70F, 0x70F), (0x890, 0x891),
                  (0x8E2, 0x8E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064),
                  (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
                  (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F))
"""The Unicode format characters (category Cf of this Python's ``unicodedata``: zero-width spaces and joiners, word
joiner, BOM, soft hyphen, bidirectional controls, tags …) as code point ranges, written out so that no start
reads the category of every code point; tests/test_invisible.py checks them against ``unicodedata``."""
FORMAT_CHARS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _FORMAT_RANGES)
""":data:`_FORMAT_RANGES` as the body of a regex character class."""
_FORMAT_RE = re.compile(f"[{FORMAT_CHARS}]")
_VISIBLE_RE = re.compile(f"[^{FORMAT_CHARS}]")
MAYBE_FORMAT_CHARS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _FORMAT_RANGES if hi <= 0xFFFF) + "\U00010000-\U0010ffff"
"""Those of the BMP and everything beyond it: a superset of :data:`FORMAT_CHARS` of few ranges (a fast regex class),
to check text for them before removing them."""
_MAYBE_FORMAT_RE = re.compile(f"[{MAYBE_FORMAT_CHARS}]")


def drop_format(text: str) -> str:
    """``text`` without its format characters (:data:`FORMAT_CHARS`): invisible, so ``外\u200b包`` reads ``外包``.

    For the forms text is matched in (blocklists, search, skills, headings, dedupe keys); stored text keeps them.
    """
    # isprintable() is False for every format character: a C-speed pre-check, line breaks aside.
    if text.isprintable() or text.replace("\n", " ").isprintable() or not _MAYBE_FORMAT_RE.search(text):
        return text
    return _FORMAT_RE.sub("", text)


class FormatMap:
    """``visible``: :func:`drop_format` of ``text``; :meth:`start` and :meth:`end` map a span of it back to ``text``
    (a span's ends, not the format characters just outside it; spans that tile ``visible`` tile ``text``)."""

    def __init__(self, text: str):
        self.visible = drop_format(text)
        self._length = len(text)
        self._kept = [m.start() for m in _VISIBLE_RE.finditer(text)] if self.visible is not text else None

    def start(self, i: int) -> int:
        """Where the span starting at ``visible[i]`` starts in ``text``."""
        if self._kept is None:
            return i
        return self._kept[i] if i < len(self._kept) else self._length

    def end(self, i: int) -> int:
        """Where the span ending before ``visible[i]`` ends in ``text``."""
        if self._kept is None:
            return i
        return self._kept[i - 1] + 1 if i else 0


def fold(text: str) -> str:
    """Unicode-fold for matching: format characters dropped (:func:`drop_format`), NFKC (full-width to
    half-width, compatibility forms) and casefold."""
    return unicodedata.normalize("NFKC", text if text.isprintable() else drop_format(text)).casefold()


# Zero-width spaces (U+200B) and BOMs (U+FEFF) are format characters, not spaces: kept as found inside a line
# (fold drops them), trimmed at its ends.
_SPACES = "\t\u00a0\u3000\u2000-\u200a\u202f\u205f"
_SPACE_RE = re.compile(rf"[ {_SPACES}]+")
_ENDS_RE = re.compile(r"^[\s\u200b\ufeff]+|[\s\u200b\ufeff]+$")
# The controls, and the bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069), which can make
# a title display reversed (Trojan Source); the marks U+200E and U+200F, which do not reorder, are kept.
_INVISIBLE_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_line(text: str) -> str:
    """One line as a value: control characters removed, runs of spaces collapsed, ends trimmed.

    Width and case are kept as written (``Cuda`` stays ``Cuda``); use :func:`fold` for matching.
    """
    # isprintable() is False for every control and every space but U+0020: a C-speed pre-check.
    if text.isprintable() and "  " not in text:
        return text.strip()
    return _ENDS_RE.sub("", _SPACE_RE.sub(" ", _INVISIBLE_RE.sub("", text)))


def clean_lines(text: str) -> Iterator[str]:
    """Every line of ``text`` (:func:`split_lines`) cleaned (:func:`clean_line`), lazily; a text without double
    spaces whose lines are all printable is only trimmed (what :func:`clean_line` does to each of its lines)."""
    lines = split_lines(text)
    if "  " not in text and all(map(str.isprintable, lines)):
        return map(str.strip, lines)
    return map(clean_line, lines)


def clean_text(text: str) -> str:
    """Multi-line text: every line cleaned, blank runs collapsed to one blank line."""
    lines = clean_lines(text)
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def split_lines(text: str) -> list[str]:
    """Split on LF, CRLF, CR and the Unicode line separators."""
    return text.splitlines()


def sha256_hex(data: bytes | str) -> str:
    """Hex SHA-256 of bytes, or of a string encoded as UTF-8."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()
