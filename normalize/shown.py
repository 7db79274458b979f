"""Text as shown in one line of terminal output (and of a plain-text alert): the one escaping function of every
printer of scraped text, file names and other names found in inputs. Display only: stored values stay as found."""

from __future__ import annotations

import unicodedata

__all__ = ["shown", "json_line", "aligned"]

ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
"""Controls (C0, DEL, C1: CR, LF, ESC, NEL …), format characters (bidi embeddings, overrides, isolates and marks,
zero-width characters, the BOM), lone surrogates (undecodable bytes of a file name) and the line and paragraph
separators: what can end a line, move the cursor, recolour or reorder text, or hide a character."""


def _escape(ch: str) -> str:
    return repr(ch)[1:-1] if unicodedata.category(ch) in ESCAPED_CATEGORIES else ch


def _json_escape(ch: str) -> str:
    if unicodedata.category(ch) not in ESCAPED_CATEGORIES:
        return ch
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def shown(text: str, *, quoted: bool = False) -> str:
    """``text`` with every character of :data:`ESCAPED_CATEGORIES` written as its Python escape (``\\n``, ``\\r``,
    ``\\t``, ``\\x1b``, ``\\x85``, ``\\u2028``, ``\\u202e``, ``\\udcff``), everything else as is, so that it stays one
    visible line that cannot forge or hide another.

    ``quoted`` (names: files, symlink targets, patterns): the name as is when nothing needs escaping and it does
    not start with a quote, else as a Python string literal (``'a\\nb.txt'``), exact to the character."""
    if text.isprintable():  # False for every escaped character: a C-speed pre-check
        return repr(text) if quoted and text.startswith(("'", '"')) else text
    escaped = "".join(map(_escape, text))
    if quoted:
        return repr(text) if escaped != text or text.startswith(("'", '"')) else text
    return escaped


def json_line(text: str) -> str:
    """A JSON text (``json.dumps(..., ensure_ascii=False)``, no indent) with every character of
    :data:`ESCAPED_CATEGORIES` left raw in its strings (C1 controls, U+2028/U+2029, bidi controls) written as a
    ``\\uXXXX`` escape: the same JSON value, one line for any line splitter, nothing a terminal acts on."""
    return text if text.isprintable() else "".join(map(_json_escape, text))


def width(text: str) -> int:
    """The columns ``text`` takes in a terminal: two for each wide or full-width (CJK) character."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def aligned(rows: list[list[str]], right: frozenset[int] = frozenset()) -> list[str]:
    """Rows of cells as lines of aligned columns, two spaces apart, each cell :func:`shown`; the columns numbered in
    ``right`` right-aligned (figures), the others left-aligned; no trailing spaces."""
    cells = [[shown(c) for c in row] for row in rows]
    widths = [max(width(row[i]) for row in cells) for i in range(len(cells[0]))] if cells else []
    lines = []
    for row in cells:
        padded = [(" " * (w - width(c)) + c) if i in right else (c + " " * (w - width(c)))
                  for i, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(padded).rstrip())
    return lines
