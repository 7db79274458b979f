"""A description's HTML or text → lines (:class:`Block`: headings, list items, text) → sections split on headings
(:func:`describe`), for every page object."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

import lxml.html
from lxml import etree

from normalize.models import RawSection
from normalize.sections import section_key
from normalize.text import clean_line


@dataclass(frozen=True)
class Block:
    """One line of a description: a heading, a list item (``depth`` 1 = top-level list) or text."""

    kind: Literal["heading", "item", "text"]
    text: str
    depth: int = 0


HEADING_MAX_CHARS = 80
"""A line set wholly in bold counts as a heading only up to this length (longer is emphasised prose)."""

_PARSER = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
_HEADING_TAGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_BLOCK_TAGS = _HEADING_TAGS | frozenset(
    "address article aside blockquote center dd details dialog div dl dt fieldset figcaption figure footer "
    "form header hgroup hr li main nav ol p pre section summary table tbody tfoot thead tr ul".split()
)
_LIST_TAGS = frozenset(("ul", "ol"))
_CELL_TAGS = frozenset(("td", "th"))
_DROP_TAGS = frozenset("script style template noscript svg head title button select textarea iframe object".split())
_BOLD_TAGS = frozenset(("b", "strong"))
_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"<[a-zA-Z!/][^>]*>|&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);")


_BASIC_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&#39;", "'"), ("&#x27;", "'"), ("&amp;", "&"))


def unescape_markup(markup: str) -> str:
    """Entity-escaped HTML (``&lt;p&gt;``, as Greenhouse sends it, sometimes twice) back to HTML.

    Only the characters an HTML escaper writes are replaced (``&amp;`` last); other entities are
    left for the HTML parser, which decodes them the same way.
    """
    for _ in range(2):
        if "<" in markup or ("&lt;" not in markup and "&amp;lt;" not in markup):
            break
        for entity, char in _BASIC_ENTITIES:
            markup = markup.replace(entity, char)
    return markup


def parse_html(markup: str) -> etree._Element:
    """An HTML fragment or document as a tree; returns the ``<body>`` (an empty ``<div>`` for no content)."""
    try:
        root = lxml.html.document_fromstring(unescape_markup(markup).encode("utf-8"), parser=_PARSER)
    except etree.ParserError:
        return lxml.html.Element("div")
    body = root.find("body")
    return body if body is not None else root


class _BlockWriter:
    """Walks a tree collecting lines; block elements and ``<br>`` end a line."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.parts: list[tuple[str, bool]] = []  # (text, set in bold)
        self.bold = self.heading = self.lists = self.items = self.pre = 0
        self.item_pending = False
        self.item_depth = 0

    def add(self, text: str | None) -> None:
        if not text:
            return
        if self.pre:
            for i, line in enumerate(text.split("\n")):
                if i:
                    self.flush()
                self.parts.append((line, self.bold > 0))
        else:
            self.parts.append((_SPACE.sub(" ", text), self.bold > 0))

    def flush(self) -> None:
        if not self.parts:
            return
        text = clean_line("".join(part for part, _ in self.parts))
        all_bold = all(bold or not part.strip() for part, bold in self.parts)
        self.parts = []
        if not text:
            return
        if self.heading:
            self.blocks.append(Block("heading", text))
        elif self.item_pending:
            self.item_pending = False
            self.blocks.append(Block("item", text, self.item_depth))
        elif not self.items and len(text) <= HEADING_MAX_CHARS and (all_bold or section_key(text) is not None):
            self.blocks.append(Block("heading", text))
        else:
            self.blocks.append(Block("text", text))

    def walk(self, el: etree._Element) -> None:
        tag = el.tag
        if not isinstance(tag, str) or tag in _DROP_TAGS:  # comments and processing instructions have no str tag
            return
        if tag == "br":
            self.flush()
            return
        block = tag in _BLOCK_TAGS
        if block:
            self.flush()
        elif tag in _CELL_TAGS and self.parts:
            self.parts.append((" ", self.bold > 0))
        in_list, in_item, in_heading, in_bold, in_pre = (
            tag in _LIST_TAGS, tag == "li", tag in _HEADING_TAGS, tag in _BOLD_TAGS, tag == "pre")
        self.lists += in_list
        self.items += in_item
        self.heading += in_heading
        self.bold += in_bold
        self.pre += in_pre
        if in_item:
            self.item_pending, self.item_depth = True, max(self.lists, 1)
        self.add(el.text)
        for child in el:
            self.walk(child)
            self.add(child.tail)
        if block:
            self.flush()
        if in_item:
            self.item_pending = False
        self.lists -= in_list
        self.items -= in_item
        self.heading -= in_heading
        self.bold -= in_bold
        self.pre -= in_pre


def html_blocks(markup: str | etree._Element | None) -> list[Block]:
    """HTML as lines: ``<h1>``–``<h6>`` and short wholly-bold lines (``<p><strong>…</strong></p>``,
    ``<b>…</b><br>``) or known heading words are headings; ``<li>`` are items; ``<br>`` breaks lines.

    Entities are decoded, scripts and styles dropped, whitespace collapsed. Lines inside list
    items are never headings.
    """
    if markup is None:
        return []
    root = parse_html(markup) if isinstance(markup, str) else markup
    writer = _BlockWriter()
    writer.walk(root)
    writer.flush()
    return writer.blocks


def text_blocks(text: str | None) -> list[Block]:
    """Plain text as lines: a line in the heading vocabulary (``Requirements:``) is a heading, others text as written."""
    blocks = []
    for line in (text or "").splitlines():
        line = clean_line(line)
        if line:
            blocks.append(Block("heading" if section_key(line) is not None else "text", line))
    return blocks


def blocks_text(blocks: list[Block]) -> str:
    """Lines as text: items as ``- item`` (indented two spaces per nesting level)."""
    return "\n".join(
        "  " * (b.depth - 1) + "- " + b.text if b.kind == "item" else b.text for b in blocks
    )


def blocks_sections(blocks: list[Block]) -> list[RawSection]:
    """Lines split at headings; lines before the first heading go under heading ``""``. Items lose their marker."""
    sections: list[RawSection] = []
    for block in blocks:
        if block.kind == "heading":
            sections.append(RawSection(heading=block.text))
            continue
        if not sections:
            sections.append(RawSection(heading=""))
        sections[-1].lines.append(block.text)
    return sections


def looks_like_html(text: str) -> bool:
    """True when the text has tags or entities (so an HTML parser must read it)."""
    return bool(_MARKUP.search(text))


def description_blocks(value: str | etree._Element | None) -> list[Block]:
    """Lines of a description given as HTML (string or tree) or as plain text."""
    if value is None:
        return []
    if isinstance(value, str) and not looks_like_html(value):
        return text_blocks(value)
    return html_blocks(value)


def describe(value: str | etree._Element | None) -> tuple[str | None, list[RawSection]]:
    """``(description, sections)`` for ``RawPosting``: sections when the text has headings, else the text alone."""
    blocks = description_blocks(value)
    if any(b.kind == "heading" for b in blocks):
        return None, blocks_sections(blocks)
    return blocks_text(blocks) or None, []
