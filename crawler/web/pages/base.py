"""Base for web page objects: one HTTP response in, :class:`RawPosting` items out.

A page object wraps one response (URL, body, headers, fetch time). ``to_items()`` returns every
posting it holds, in source order; entries that cannot become a posting are skipped and listed in
``problems`` as :class:`Quarantined` records; a response that cannot be read at all raises
:class:`PageError`. ``parse()`` wraps all of it for a spider callback: the :class:`RawInput`
first, then the postings, then the problems; it never raises. Each posting is built by an
:class:`Entry` with one method per field (web-poet style), so a new source is one small subclass
pair. Spiders only navigate; page objects never touch SQLite and never see the normalized models.

Shared helpers: values as text (:func:`text_of`, :func:`json_text`), salary text that a parser reads back
exactly (:func:`salary_text`); HTML → lines → sections is crawler/web/pages/html.py.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from functools import cached_property
from typing import Any, ClassVar, Iterator, Mapping
from urllib.parse import urlsplit

from w3lib.encoding import read_bom

from crawler.files import TOO_DEEP
from normalize.models import Quarantined, RawInput, RawPosting, RawSection
from normalize.text import DETECTED, DecodeError, clean_line, declared_charset, decode_bytes, sha256_hex

__all__ = [
    "TOO_DEEP",
    "PageError",
    "EntryError",
    "WebPage",
    "BoardPage",
    "Entry",
    "load_json",
    "shape_error",
    "number_text",
    "salary_text",
    "text_of",
    "extra_text",
    "json_text",
]


_CHARSET_LABELS = {"cp1252": "windows-1252", "gb18030": "GB18030"}  # WHATWG names of the detected encodings


class PageError(Exception):
    """The response cannot be read as a whole.

    ``reason`` is a short code for the quarantine table (``empty``, ``binary``, ``bad_encoding``,
    ``mixed_encoding``, ``bad_json``, ``api_error``, ``unexpected_shape``); ``str(err)`` is one line for humans.
    """

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class EntryError(PageError):
    """One entry of a listing cannot become a posting (``bad_entry``, ``no_id``); the others still can."""


# --------------------------------------------------------------------------- pages and entries


class WebPage:
    """One fetched response. Subclasses set ``source`` and implement :meth:`entries`.

    ``company`` is a display name from the crawl configuration; each source documents whether it
    overrides or only backs up the name the response gives. ``source`` replaces the class's for the postings
    and the raw input (a saved answer ingested as a file).
    """

    source: ClassVar[str] = "web"
    html: ClassVar[bool] = False
    """The body is an HTML page: a ``<meta>`` charset counts when Content-Type names none."""

    def __init__(
        self,
        url: str,
        body: bytes | str,
        *,
        fetched_at: str,
        as_of: str | None = None,
        headers: Mapping[Any, Any] | None = None,
        company: str | None = None,
        source: str | None = None,
    ):
        if source:  # a saved answer ingested under a source of its own (crawler/ingest/boards.py)
            self.source = source
        self.url = url
        if isinstance(body, str):
            self._text: str | None = body
            self.body = body.encode("utf-8")
        else:
            self._text = None
            self.body = bytes(body)
        self.headers = _plain_headers(headers)
        self.fetched_at = fetched_at
        self.as_of = as_of or fetched_at
        self.company = company
        self.problems: list[Quarantined] = []

    @classmethod
    def from_response(cls, response: Any, *, fetched_at: str, as_of: str | None = None, **kwargs: Any) -> WebPage:
        """Build from a Scrapy-like response (``url``, ``body``, ``headers``)."""
        return cls(response.url, response.body, headers=response.headers, fetched_at=fetched_at, as_of=as_of, **kwargs)

    @cached_property
    def _decoded(self) -> tuple[str | None, str | None, PageError | None]:
        """(encoding, text, None), or (None, None, the error) for a body that cannot be decoded."""
        if self._text is not None or not self.body:
            return "utf-8", self._text or "", None
        try:
            text, encoding = decode_bytes(self.body, declared=self.declared_charset)
        except DecodeError as err:
            return None, None, PageError(err.reason, f"body cannot be decoded: {err}")
        return encoding, text, None

    @cached_property
    def declared_charset(self) -> str | None:
        """The charset Content-Type names, else (an HTML page) its ``<meta>`` one, as the codec it is read with
        (:func:`normalize.text.declared_charset`)."""
        html_body = self.body if self.html and self._text is None else None
        return declared_charset(self.headers.get("content-type"), html_body)

    @property
    def text(self) -> str:
        """The body decoded as :func:`normalize.text.decode_bytes` reads it, given :attr:`declared_charset`;
        raises :class:`PageError` when it cannot be decoded (``binary``, ``bad_encoding`` …)."""
        encoding, text, error = self._decoded
        if error is not None:
            raise error
        return text

    @property
    def encoding(self) -> str | None:
        """The encoding :attr:`text` was decoded with (Python codec name); None when the body cannot be decoded."""
        return self._decoded[0]

    @property
    def decoding_repair(self) -> str | None:
        """One line when the body was read in an encoding it does not declare (found by detection), else None."""
        encoding, declared = self._decoded[0], self.declared_charset
        if encoding is None or encoding == declared or read_bom(self.body)[0] is not None:
            return None
        if declared is None and encoding not in DETECTED:
            return None
        label = _CHARSET_LABELS.get(encoding, encoding)
        said = f"declares charset {declared} but is not in it" if declared else "declares no charset and is not UTF-8"
        return f"the body {said}: decoded as {label} (detected)"

    @cached_property
    def sha256(self) -> str:
        return sha256_hex(self.body)

    def entries(self) -> list[Entry]:
        """The postings of the response, one :class:`Entry` each; raises :class:`PageError`."""
        raise NotImplementedError

    def complete_listing(self) -> bool:
        """True when the response lists every open posting of its source (absent ones may be closed)."""
        return False

    def to_items(self) -> list[RawPosting]:
        """Every good posting in source order; bad entries go to ``problems``. Raises :class:`PageError`.

        ``complete_listing`` is set on the items only when the listing is complete and no entry
        failed: a posting we could not read must not be taken for a closed one.
        """
        self.problems = []
        items: list[RawPosting] = []
        if (error := self._decoded[2]) is not None:
            raise error
        for entry in self.entries():
            try:
                items.append(entry.to_item())
            except EntryError as err:
                self.problems.append(self.quarantine(err, entry.position, entry.raw_text()))
        complete = self.complete_listing() and not self.problems
        for item in items:
            item.complete_listing = complete
        return items

    def parse(self) -> Iterator[RawInput | RawPosting | Quarantined]:
        """Everything a spider yields for this response: its :class:`RawInput` first (status ``parsed``,
        ``partial`` or ``quarantined``), then the postings, then a :class:`Quarantined` per problem.
        Never raises :class:`PageError`: an unreadable response becomes a quarantined input.
        """
        encoding, text, error = self._decoded
        raw = dict(source=self.source, locator=self.url, sha256=self.sha256, size=len(self.body), encoding=encoding,
                   text=text, body=None if error is None else self.body, fetched_at=self.fetched_at, as_of=self.as_of)
        try:
            items = self.to_items()
        except PageError as err:
            yield RawInput(**raw, status="quarantined", error=err.detail)
            yield self.quarantine(err)
            return
        status = "partial" if items and self.problems else "quarantined" if self.problems else "parsed"
        error = "; ".join(problem.detail for problem in self.problems) or None
        yield RawInput(**raw, status=status, postings=len(items), error=error)
        yield from items
        yield from self.problems

    def item(self, position: int, **fields: Any) -> RawPosting:
        """A RawPosting carrying this response's provenance."""
        return RawPosting(
            source=self.source,
            locator=self.url,
            position=position,
            input_sha256=self.sha256,
            fetched_at=self.fetched_at,
            as_of=self.as_of,
            **fields,
        )

    def quarantine(self, err: PageError, position: int | None = None, text: str | None = None) -> Quarantined:
        """The quarantine record for an error of this response (the whole text when no part is given)."""
        return Quarantined(
            source=self.source,
            locator=self.url,
            position=position,
            input_sha256=self.sha256,
            reason=err.reason,
            detail=err.detail,
            text=self._decoded[1] if text is None and position is None else text,
            fetched_at=self.fetched_at,
        )

    @cached_property
    def data(self) -> Any:
        """The body as JSON (API pages); raises :class:`PageError` (``empty``, ``bad_json``)."""
        return load_json(self.text)


class BoardPage(WebPage):
    """A JSON response of a hosted job board (ATS API).

    ``board`` names the board (Greenhouse board token, Lever site, Ashby job-board name); when not
    given it is read from the URL path with ``board_pattern``.
    """

    board_pattern: ClassVar[re.Pattern[str]]

    def __init__(self, url: str, body: bytes | str, *, board: str | None = None, **kwargs: Any):
        super().__init__(url, body, **kwargs)
        match = self.board_pattern.search(urlsplit(url).path)
        self.board = board or (match.group(1) if match else None)


class Entry:
    """One posting inside a page: one method per :class:`RawPosting` field, assembled by :meth:`to_item`.

    ``data`` is the source's record (a JSON object). Methods return strings as the source wrote
    them, or None; :meth:`source_id` raises :class:`EntryError` when the record has no identity.
    """

    FIELDS: ClassVar[tuple[str, ...]] = (
        "source_id", "url", "company", "title", "location", "posted", "published", "valid_through",
        "seniority", "employment_type", "work_mode", "category", "experience", "education", "tags",
        "salary", "description", "sections", "extra",
    )

    def __init__(self, page: WebPage, data: Any, position: int):
        self.page = page
        self.data = data
        self.position = position

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def text(self, key: str) -> str | None:
        """The record's value at ``key`` as a cleaned line (numbers as written), or None."""
        return text_of(self.data.get(key))

    def source_id(self) -> str:
        raise NotImplementedError

    def url(self) -> str | None:
        return None

    def company(self) -> str | None:
        return None

    def title(self) -> str | None:
        return None

    def location(self) -> str | None:
        return None

    def posted(self) -> str | None:
        return None

    def published(self) -> str | None:
        return None

    def valid_through(self) -> str | None:
        return None

    def seniority(self) -> str | None:
        return None

    def employment_type(self) -> str | None:
        return None

    def work_mode(self) -> str | None:
        return None

    def category(self) -> str | None:
        return None

    def experience(self) -> str | None:
        return None

    def education(self) -> str | None:
        return None

    def tags(self) -> list[str]:
        return []

    def salary(self) -> str | None:
        return None

    def description(self) -> str | None:
        return None

    def sections(self) -> list[RawSection]:
        return []

    def extra(self) -> dict[str, str]:
        return {}

    def raw_text(self) -> str:
        """The record as JSON text, for the quarantine table."""
        return self.data if isinstance(self.data, str) else json_text(self.data)

    def required_id(self, *keys: str) -> str:
        """The first of ``keys`` holding an id, as text; :class:`EntryError` ``no_id`` when none does."""
        for key in keys:
            value = text_of(self.data.get(key))
            if value:
                return value
        raise EntryError("no_id", f"entry {self.position} has no {' or '.join(keys)}")

    def to_item(self) -> RawPosting:
        if not isinstance(self.data, dict):
            raise EntryError("bad_entry", f"entry {self.position} is a JSON {type(self.data).__name__}, not an object")
        values = {name: getattr(self, name)() for name in self.FIELDS}
        pay = values.get("salary")
        if isinstance(pay, Pay):
            values["salary"], values["salary_parts"] = str(pay), pay.parts
        return self.page.item(self.position, **{k: v for k, v in values.items() if v not in (None, [], {})})


def _plain_headers(headers: Mapping[Any, Any] | None) -> dict[str, str]:
    """Lower-case str → str headers from a dict or Scrapy ``Headers`` (bytes keys, list values)."""
    out: dict[str, str] = {}
    for key, value in (headers or {}).items():
        if isinstance(value, (list, tuple)):
            value = value[-1] if value else ""
        if isinstance(key, bytes):
            key = key.decode("latin-1")
        if isinstance(value, bytes):
            value = value.decode("latin-1")
        out[str(key).lower()] = str(value)
    return out


# --------------------------------------------------------------------------- values




def load_json(text: str) -> Any:
    """Strict JSON from an API body; :class:`PageError` ``empty`` or ``bad_json`` with the position."""
    if not text.strip():
        raise PageError("empty", "empty response body")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise PageError("bad_json", f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise PageError("bad_json", f"invalid JSON: {TOO_DEEP}") from None


def shape_error(data: Any, expected: str, api: str) -> PageError:
    """The error for a JSON body that is not what the endpoint returns: the API's own error when it sent one."""
    if isinstance(data, dict):
        message = next((text_of(data.get(k)) for k in ("error", "message", "errors") if text_of(data.get(k))), None)
        if message:
            return PageError("api_error", f"{api} API error: {message}")
        keys = ", ".join(list(data)[:6]) or "none"
        return PageError("unexpected_shape", f"expected {expected}; got an object with keys {keys}")
    return PageError("unexpected_shape", f"expected {expected}; got a JSON {type(data).__name__}")


def json_text(value: Any) -> str:
    """Compact JSON, non-ASCII kept: the raw twin of a structured source field."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def number_text(value: Any) -> str | None:
    """A number as its shortest exact text (``120000.0`` → ``120000``); strings are kept as written."""
    if isinstance(value, str):
        return clean_line(value) or None
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value.is_finite() else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        return None
    return format(Decimal(repr(value)).normalize(), "f")


def text_of(value: Any) -> str | None:
    """A scalar as one cleaned line (numbers via :func:`number_text`); None for empty or structured values."""
    if isinstance(value, str):
        return clean_line(value) or None
    return number_text(value)


def extra_text(value: Any) -> str | None:
    """Any source value as text for ``RawPosting.extra``: scalars as written, lists of scalars comma-joined, else JSON."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return text_of(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return ", ".join(t for t in (text_of(v) for v in value) if t) or None
    return json_text(value)


class Pay(str):
    """Salary text written from an API's numbers by :func:`salary_text`, carrying those numbers (``parts``,
    a :class:`~normalize.models.SalaryParts` dict): the item stores them as they are instead of having the
    text parsed again. Any string operation on it gives plain text, without the numbers."""

    parts: dict[str, Any]

    def __new__(cls, text: str, parts: dict[str, Any]) -> "Pay":
        pay = super().__new__(cls, text)
        pay.parts = parts
        return pay


_ISO_CURRENCY = re.compile(r"[A-Za-z]{3}")
_PERIODS = {"HOUR": "hour", "DAY": "day", "WEEK": "week", "MONTH": "month", "YEAR": "year"}


def salary_text(
    currency: str | None, low: Any, high: Any = None, unit: str | None = None, *, estimated: bool = False
) -> Pay | None:
    """Salary as ``[estimated: ]CUR LOW[-HIGH][/UNIT]``, e.g. ``USD 120000-150000/YEAR``; None without figures.

    Figures are written exactly (no thousands separators, no rounding); a range whose ends are equal
    is written as one figure. The text is a :class:`Pay` carrying the numbers.
    """
    low_text, high_text = number_text(low), number_text(high)
    if low_text is None and high_text is None:
        return None
    if low_text is None or high_text is None or low_text == high_text:
        amount = low_text or high_text
    else:
        amount = f"{low_text}-{high_text}"
    text = " ".join(part for part in (currency, amount) if part)
    if unit:
        text += f"/{unit}"
    text = f"estimated: {text}" if estimated else text
    try:  # figures given as text (`120,000`, `50k`) and odd currencies are left to the salary parser
        numbers = [float(t) for t in (low_text, high_text) if t is not None]
    except ValueError:
        return text
    if (currency is not None and not _ISO_CURRENCY.fullmatch(currency)) or not all(map(math.isfinite, numbers)):
        return text
    parts = {"currency": currency.upper() if currency else None, "min": min(numbers), "max": max(numbers),
             "period": _PERIODS.get((unit or "").upper()), "estimated": estimated}
    return Pay(text, parts)
