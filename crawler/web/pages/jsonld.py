"""schema.org ``JobPosting`` on any career page → RawPosting (shared by every career-site spider).

Postings come from ``<script type="application/ld+json">`` blocks (top level, arrays, ``@graph``,
nested in other nodes; ``{"@id": …}`` references resolved within a block). Blocks with comments,
trailing commas, an HTML-comment or CDATA wrapper, or entity-escaped JSON are still read; a block
that cannot be read is skipped and listed in ``problems`` (reason ``bad_jsonld``). When no JSON-LD
posting is found, microdata (``itemtype=".../JobPosting"``) is read instead, so a page carrying
both does not yield each posting twice.
"""

from __future__ import annotations

import html
import json
import re
from functools import cached_property
from typing import Any
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree
from parsel import Selector

from normalize.models import RawSection
from normalize.text import clean_line

from crawler.web.pages.base import TOO_DEEP, Entry, PageError, WebPage, extra_text, json_text, salary_text, text_of
from crawler.web.pages.html import description_blocks, describe

__all__ = ["JsonLdPage", "JsonLdPosting", "loads_lenient", "find_postings", "microdata_item"]


# --------------------------------------------------------------------------- lenient JSON

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_WRAPPER = re.compile(r"^\s*(?://\s*)?(?:<!--|<!\[CDATA\[)|(?://\s*)?(?:-->|\]\]>)\s*$")


def _relax(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and trailing commas outside JSON strings."""
    out, pos = [], 0
    for match in _JSON_STRING.finditer(text):
        out.append(_TRAILING_COMMA.sub(r"\1", _COMMENT.sub("", text[pos:match.start()])))
        out.append(match.group())
        pos = match.end()
    out.append(_TRAILING_COMMA.sub(r"\1", _COMMENT.sub("", text[pos:])))
    return "".join(out)


def loads_lenient(raw: str) -> Any:
    """JSON as sites write it inside ``<script>``: strict first, then without comments, trailing
    commas, wrappers and a final ``;``, then entity-unescaped. Raises ``json.JSONDecodeError``
    from the strict attempt when nothing works, or one saying :data:`TOO_DEEP` at position 0.
    """
    text = _WRAPPER.sub("", raw.strip()).strip().rstrip(";")
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError as err:
        first = err
    except RecursionError:  # hostile nesting: no relaxing helps
        raise json.JSONDecodeError(TOO_DEEP, text, 0) from None
    for candidate in (_relax(text), _relax(html.unescape(text))):
        try:
            return json.loads(candidate, strict=False)
        except json.JSONDecodeError:
            pass
    raise first


# --------------------------------------------------------------------------- finding postings


def _is_type(node: dict, name: str) -> bool:
    types = node.get("@type")
    for t in types if isinstance(types, list) else [types]:
        if isinstance(t, str) and re.split(r"[/:#]", t)[-1] == name:
            return True
    return False


def find_postings(node: Any) -> list[dict]:
    """Every ``JobPosting`` object in a JSON-LD value, in document order (not looking inside a posting)."""
    found: list[dict] = []

    def visit(value: Any) -> None:
        if isinstance(value, list):
            for v in value:
                visit(v)
        elif isinstance(value, dict):
            if _is_type(value, "JobPosting"):
                found.append(value)
            else:
                for v in value.values():
                    visit(v)

    visit(node)
    return found


def _id_index(node: Any) -> dict[str, dict]:
    """``@id`` → node for every node of a block that says more than its ``@id``."""
    index: dict[str, dict] = {}

    def visit(value: Any) -> None:
        if isinstance(value, list):
            for v in value:
                visit(v)
        elif isinstance(value, dict):
            if isinstance(value.get("@id"), str) and len(value) > 1:
                index.setdefault(value["@id"], value)
            for v in value.values():
                visit(v)

    visit(node)
    return index


# Properties whose microdata value is markup (lists become lines), not flattened text.
_MARKUP_PROPS = frozenset(
    ("description", "qualifications", "responsibilities", "skills", "experienceRequirements",
     "educationRequirements", "jobBenefits", "incentiveCompensation")
)
_URL_ATTRS = {"a": "href", "area": "href", "link": "href", "img": "src", "audio": "src", "embed": "src",
              "iframe": "src", "source": "src", "track": "src", "video": "src", "object": "data"}


def _item_props(el: etree._Element):
    for child in el.iterchildren():
        if not isinstance(child.tag, str):
            continue
        if child.get("itemprop") is not None:
            yield child
        if child.get("itemscope") is None:
            yield from _item_props(child)


def _prop_value(el: etree._Element, names: list[str], base_url: str) -> str:
    tag = el.tag.lower()
    if tag == "meta":
        return el.get("content", "")
    if tag in _URL_ATTRS and el.get(_URL_ATTRS[tag]) is not None:
        return urljoin(base_url, el.get(_URL_ATTRS[tag]))
    if tag == "time" and el.get("datetime"):
        return el.get("datetime")
    if tag in ("data", "meter") and el.get("value") is not None:
        return el.get("value")
    if _MARKUP_PROPS.intersection(names):
        return lxml.html.tostring(el, encoding="unicode", with_tail=False)
    return clean_line(el.text_content())


def microdata_item(el: etree._Element, base_url: str = "") -> dict:
    """A microdata item (``itemscope``) as a JSON-LD-like dict; repeated properties become lists."""
    item: dict[str, Any] = {"@type": [t.rstrip("/").rsplit("/", 1)[-1] for t in el.get("itemtype", "").split()]}
    for prop in _item_props(el):
        names = prop.get("itemprop").split()
        value = microdata_item(prop, base_url) if prop.get("itemscope") is not None else _prop_value(prop, names, base_url)
        for name in names:
            if name in item:
                item[name] = (item[name] if isinstance(item[name], list) else [item[name]]) + [value]
            else:
                item[name] = value
    return item


# --------------------------------------------------------------------------- page


class JsonLdPage(WebPage):
    """A career page: every schema.org JobPosting on it becomes a RawPosting.

    ``company`` backs up a posting without ``hiringOrganization`` (a page may list other companies'
    jobs, so the page's own statement wins).
    """

    source = "jsonld"
    html = True

    @cached_property
    def selector(self) -> Selector:
        text = self.text
        if not text.strip():
            raise PageError("empty", "empty response body")
        if "\x00" in text[:8192]:
            raise PageError("binary", "binary body (NUL bytes), not an HTML page")
        return Selector(text=text)

    @cached_property
    def canonical_url(self) -> str:
        """``<link rel="canonical">`` resolved against the page URL, else the page URL without fragment."""
        href = self.selector.xpath(
            '//link[contains(concat(" ", normalize-space(translate(@rel, "CANONICAL", "canonical")), " "),'
            ' " canonical ")]/@href'
        ).get()
        return urljoin(self.url, href.strip()) if href and href.strip() else self.url.split("#", 1)[0]

    def jsonld_blocks(self) -> list[str]:
        return self.selector.xpath(
            '//script[contains(translate(@type, "LDJSON", "ldjson"), "ld+json")]/text()'
        ).getall()

    def entries(self) -> list[JsonLdPosting]:
        found: list[tuple[dict, dict, str]] = []
        for number, raw in enumerate(self.jsonld_blocks(), 1):
            try:
                data = loads_lenient(raw)
            except json.JSONDecodeError as err:
                detail = f"JSON-LD block {number}: {err.msg} (line {err.lineno}, column {err.colno})"
                self.problems.append(self.quarantine(PageError("bad_jsonld", detail), text=raw))
                continue
            refs = _id_index(data)
            found.extend((node, refs, "json-ld") for node in find_postings(data))
        if not found:
            for el in self.selector.root.xpath('//*[@itemscope][contains(@itemtype, "JobPosting")]'):
                if not el.xpath('ancestor::*[@itemscope][contains(@itemtype, "JobPosting")]'):
                    found.append((microdata_item(el, self.url), {}, "microdata"))
        return [JsonLdPosting(self, node, i, refs=refs, syntax=syntax, alone=len(found) == 1)
                for i, (node, refs, syntax) in enumerate(found)]


def _as_list(value: Any) -> list:
    return value if isinstance(value, list) else [] if value is None else [value]


def _unique(values: list[str | None]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


class JsonLdPosting(Entry):
    """One schema.org JobPosting (from JSON-LD or microdata)."""

    page: JsonLdPage

    def __init__(self, page: JsonLdPage, data: dict, position: int, *, refs: dict, syntax: str, alone: bool):
        super().__init__(page, data, position)
        self.refs = refs
        self.syntax = syntax
        self.alone = alone

    # ---- value helpers

    def resolve(self, value: Any) -> Any:
        """A ``{"@id": …}`` reference replaced by the node it names in the same block."""
        if isinstance(value, dict) and set(value) == {"@id"} and isinstance(value["@id"], str):
            return self.refs.get(value["@id"], value)
        return value

    def text(self, key: str) -> str | None:
        """A property as one line, HTML entities decoded (``R&amp;D`` → ``R&D``); see :meth:`thing_text`."""
        return self.thing_text(self.data.get(key))

    def thing_text(self, value: Any) -> str | None:
        """A string, number or schema.org thing (its name, credential, subject, issuer) as one line."""
        value = self.resolve(value)
        if not isinstance(value, dict):
            text = text_of(value)
            return clean_line(html.unescape(text)) or None if text else None
        parts = [self.thing_text(value.get(key)) for key in ("name", "credentialCategory", "about", "recognizedBy")]
        if value.get("monthsOfExperience") is not None:
            parts.append(f"{text_of(value['monthsOfExperience'])} months")
        return ", ".join(_unique(parts)) or self.thing_text(value.get("description"))

    def lines(self, key: str) -> list[str]:
        """A property's text as lines: HTML lists and paragraphs split, lists of values one per line."""
        out: list[str] = []
        for value in _as_list(self.data.get(key)):
            if isinstance(value, str):
                out.extend(b.text for b in description_blocks(value))
            elif (text := self.thing_text(value)) is not None:
                out.append(text)
        return out

    def place(self, value: Any) -> str | None:
        value = self.resolve(value)
        if not isinstance(value, dict):
            return self.thing_text(value)
        address = self.resolve(value.get("address"))
        if isinstance(address, dict):
            parts = [self.thing_text(address.get(k)) for k in ("addressLocality", "addressRegion", "addressCountry")]
            if any(parts):
                return ", ".join(p for p in parts if p)
        elif address:
            return self.thing_text(address)
        return self.thing_text(value.get("name"))

    def applicant_locations(self) -> str | None:
        return "; ".join(_unique([self.thing_text(v) for v in _as_list(self.data.get("applicantLocationRequirements"))])) or None

    def monetary(self, value: Any, estimated: bool) -> str | None:
        """MonetaryAmount (value a QuantitativeValue or a number) or a bare figure → salary text."""
        value = self.resolve(value)
        currency = self.text("salaryCurrency")
        if not isinstance(value, dict):
            return salary_text(currency, value, estimated=estimated)
        currency = text_of(value.get("currency")) or currency
        amount = self.resolve(value.get("value"))
        holder = amount if isinstance(amount, dict) else value
        low, high = holder.get("minValue"), holder.get("maxValue")
        if low is None and high is None:
            low = holder.get("value") if holder is amount else amount
        if low is None and high is None:  # MonetaryAmountDistribution
            low, high = holder.get("percentile10"), holder.get("percentile90")
            if low is None and high is None:
                low = holder.get("median")
        return salary_text(currency, low, high, text_of(holder.get("unitText")), estimated=estimated)

    def salary_of(self, key: str, estimated: bool) -> str | None:
        """The first readable amount of a salary property (all of them stay in ``extra``'s JSON)."""
        texts = [self.monetary(v, estimated) for v in _as_list(self.data.get(key))]
        return next((t for t in texts if t), None)

    @cached_property
    def _described(self) -> tuple[str | None, list[RawSection]]:
        return describe(self.data.get("description") if isinstance(self.data.get("description"), str) else None)

    # ---- fields

    def source_id(self) -> str:
        """``host#identifier`` (identifiers are per site), else the posting URL (``#position`` when the page has several)."""
        identifier = self.resolve(self.data.get("identifier"))
        if isinstance(identifier, list):
            identifier = identifier[0] if identifier else None
        value = self.thing_text(identifier.get("value")) if isinstance(identifier, dict) else self.thing_text(identifier)
        if value:
            host = urlsplit(self.page.canonical_url).hostname or ""
            return f"{host}#{value}"
        own_url = self.url_property()
        if own_url:
            return own_url
        return self.page.canonical_url if self.alone else f"{self.page.canonical_url}#{self.position}"

    def url_property(self) -> str | None:
        """The posting's own ``url``, resolved against the canonical page URL."""
        own_url = self.text("url")
        return urljoin(self.page.canonical_url, own_url) if own_url else None

    def url(self) -> str | None:
        return self.url_property() or self.page.canonical_url

    def company(self) -> str | None:
        names = [self.thing_text(org) for org in _as_list(self.data.get("hiringOrganization"))]
        return next((n for n in names if n), None) or self.page.company

    def title(self) -> str | None:
        return self.text("title") or self.text("name")

    def location(self) -> str | None:
        places = _unique([self.place(p) for p in _as_list(self.data.get("jobLocation"))])
        return "; ".join(places) or self.applicant_locations()

    def posted(self) -> str | None:
        return self.text("datePosted")

    def valid_through(self) -> str | None:
        return self.text("validThrough")

    def employment_type(self) -> str | None:
        return ", ".join(_unique([self.thing_text(v) for v in _as_list(self.data.get("employmentType"))])) or None

    def work_mode(self) -> str | None:
        types = [str(t).upper() for t in _as_list(self.data.get("jobLocationType"))]
        return "Remote" if "TELECOMMUTE" in types else None

    def category(self) -> str | None:
        return self.thing_text(self.data.get("occupationalCategory"))

    def experience(self) -> str | None:
        return "; ".join(self.lines("experienceRequirements")) or None

    def education(self) -> str | None:
        return "; ".join(self.lines("educationRequirements")) or None

    def salary(self) -> str | None:
        return self.salary_of("baseSalary", False) or self.salary_of("estimatedSalary", True)

    def description(self) -> str | None:
        return self._described[0]

    def sections(self) -> list[RawSection]:
        """Description sections, then ``Qualifications``, ``Responsibilities``, ``Skills``, ``Benefits`` from their properties."""
        sections = list(self._described[1])
        for key, heading in (("qualifications", "Qualifications"), ("responsibilities", "Responsibilities"),
                             ("skills", "Skills"), ("jobBenefits", "Benefits")):
            lines = self.lines(key)
            if lines:
                sections.append(RawSection(heading=heading, lines=lines))
        return sections

    def extra(self) -> dict[str, str]:
        extra = {"syntax": self.syntax}
        for key in ("industry", "workHours", "incentiveCompensation", "employerOverview", "specialCommitments"):
            extra[key] = "; ".join(self.lines(key))
        for key in ("jobLocationType", "directApply"):
            if (text := extra_text(self.data.get(key))) is not None:
                extra[key] = text
        if (text := self.applicant_locations()) is not None:
            extra["applicantLocationRequirements"] = text
        if self.data.get("baseSalary") is not None:
            extra["salary_json"] = json_text(self.data["baseSalary"])
        if self.data.get("estimatedSalary") is not None:
            extra["estimated_salary_json"] = json_text(self.data["estimatedSalary"])
            if self.data.get("baseSalary") is not None:
                extra["estimated_salary"] = self.salary_of("estimatedSalary", True) or ""
        if isinstance(self.data.get("description"), dict | list):
            extra["description_json"] = json_text(self.data["description"])
        return {k: v for k, v in extra.items() if v}
