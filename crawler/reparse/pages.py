"""Parse a stored raw input again (``jobcrawl reparse``): a text dump, a table file or a web response, from
the text kept in ``raw_inputs`` and its ``reader``, without reading the file or fetching the page again.

The items carry the stored input's SHA-256 (the writer links them to that row). The input is stored already:
no new RawInput, or, when the caller asks for it, one that carries only this parse's outcome (status, error,
postings), which the writer takes into the stored row, retiring its earlier quarantine rows.
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from scrapy.utils.misc import load_object

from crawler.store.rows import kept_whole
from normalize.models import Quarantined, RawInput, RawPosting

Item = RawPosting | Quarantined


class NotReparseable(ValueError):
    """The stored input cannot be parsed again (why, in one line)."""


def reparse_items(row: Mapping[str, Any], *, fetched_at: str, outcome: bool = False) -> Iterator[Item | RawInput]:
    """The postings and problems of a stored raw input (``row``: its ``raw_inputs`` columns, ``reader``
    decoded). A quarantined input is parsed again from its exact bytes when all of it is kept (:func:`kept_whole`),
    so that a parser fix reaches it too. Raises :class:`NotReparseable` for an input kept only in part (a file over
    the size cap, the head of a large table, a block of a streamed table) or of an unknown kind. ``outcome``: the
    first item is the parse's RawInput, with the stored input's SHA-256 and without its text or bytes."""
    text, reader = row["text"], row["reader"]
    data = text.encode("utf-8") if text is not None else None
    if row["status"] == "quarantined" or text is None:
        data = kept_whole(row)
        if data is None:
            raise NotReparseable("it was quarantined: only part of it is kept")
    if row["source"] == "textdump" or (reader or {}).get("format") == "text":  # a dump (of a named source)
        items = _dump(row, data, fetched_at)
    elif reader and "page" in reader:
        items = _page(row, data if text is None else text, reader, fetched_at)  # no text: a body that was undecodable
    elif reader and "format" in reader:
        if reader.get("streamed"):
            raise NotReparseable("a block of a streamed table: the block is not kept with its header")
        items = _table(row, data, reader, fetched_at)
    else:
        raise NotReparseable(f"no reader stored for source {row['source']!r} (stored before readers were kept: "
                             "ingest or crawl it again)")
    return _of_stored_input(items, row["sha256"], outcome)


def _of_stored_input(items, sha256: str, outcome: bool) -> Iterator[Item | RawInput]:
    for item in items:
        if isinstance(item, RawInput):
            if outcome:
                yield item.model_copy(update={"sha256": sha256, "text": None, "body": None})
            continue
        item.input_sha256 = sha256
        yield item


def _dump(row, data: bytes, fetched_at: str):
    from crawler.ingest.appdump import parse_dump

    return parse_dump(data, locator=row["locator"], fetched_at=fetched_at, as_of=row["as_of"], source=row["source"])


def _table(row, data: bytes, reader: dict, fetched_at: str):
    from crawler.ingest.table import TableOptions, parse_table

    options = TableOptions(reader.get("preset"), reader.get("mapping") or {}, reader.get("constants") or {})
    return parse_table(data, locator=row["locator"], fetched_at=fetched_at, as_of=row["as_of"],
                       fmt=reader["format"], options=options, source=row["source"])


def _page(row, text: str | bytes, reader: dict, fetched_at: str):
    """A web response's items as its spider stored them: a paged board's listing gives no postings (each is
    stored from its detail), and a detail is completed by what its listing said (crawler/web/spiders/paged.py)."""
    from crawler.web.pages.parts import merge_listed

    page_class = load_object(reader["page"])
    page = page_class(row["locator"], text, fetched_at=fetched_at, as_of=row["as_of"], company=reader.get("company"),
                      **(reader.get("kwargs") or {}))
    page.sha256 = row["sha256"]
    listed = RawPosting.model_validate(reader["listed"]) if reader.get("listed") else None
    for item in page.parse():
        if isinstance(item, RawPosting):
            if reader.get("details"):
                continue
            if listed is not None and item.source_id == listed.source_id:
                item = merge_listed(item, listed)
        yield item
