"""Saved answers of board APIs among ingested files, read by the page object a crawl of that board uses.

A ``.json`` file holding a board API's listing answer, as git-scraping repositories keep them, is read by that
board's page object (crawler/web/pages/) instead of the generic table reading: every field a crawl takes from
the answer, and the posting's URL is the board's public posting URL the crawl stores, so snapshots of one board
keep one posting per job. Recognized (:data:`SAVED_ANSWERS`, each by its shape, not by the file's name):

- Greenhouse ``{"jobs": [{"id", "title", "absolute_url", …}]}`` (``/v1/boards/{token}/jobs?content=true``);
- Lever, a JSON array of ``{"id", "text", "categories", "hostedUrl" or "applyUrl", …}`` (``/v0/postings/{site}``);
- Ashby ``{"jobs": [{"id", "title", "jobUrl" or "applyUrl", …}], "apiVersion"}`` (``/posting-api/job-board/…``);
- Workable, the widget ``{"name", "jobs": [{"shortcode", "title", …}]}`` or a jobs-list page ``{"total",
  "results": [{"shortcode", "title", …}]}``;
- SmartRecruiters ``{"totalFound", "content": [{"id", "name", …}]}``;
- Recruitee ``{"offers": [{"id", "title", "careers_url", …}]}``;
- Workday ``{"total", "jobPostings": [{"title", "externalPath", …}]}``.

A saved answer names no API address: Lever's site and Ashby's board (the company a crawl names when it is given
none) are read from the first posting's public URL. Listings without descriptions (a crawl fetches a detail per
job) give what they carry: SmartRecruiters the URL, id, title, company, location, date, employment type,
department; Workable's jobs list the id, title, location, date, department, work mode, but no URL or company
(both need the account, which the answer does not name); Workday the title, location text, the relative
``postedOn`` and the path's id, but no URL, company or tenant (the host and site are not in it). None of them
has a description, sections or salary. The postings keep the ingest's source (``tabular``, or ``--source``); the
stored input names the page class and board, so ``jobcrawl reparse`` reads it the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Set
from typing import Any, Callable, NamedTuple
from urllib.parse import urlsplit

from crawler.web.pages.base import WebPage


def _listed(data: Any, key: str | None, fields: Set[str], *, envelope: Set[str] = frozenset(),
            any_of: Set[str] = frozenset()) -> list | None:
    """The entries of ``data`` (its ``key`` list, or ``data`` itself for None) when the object has every key of
    ``envelope`` and the first entry every key of ``fields`` and one of ``any_of``; else None."""
    if key is None:
        entries = data
    elif isinstance(data, dict) and envelope <= data.keys():
        entries = data.get(key)
    else:
        return None
    if not (isinstance(entries, list) and entries and isinstance(entries[0], dict)):
        return None
    first = entries[0].keys()
    return entries if fields <= first and (not any_of or any_of & first) else None


def _lever(data: Any) -> list | None:
    entries = _listed(data, None, {"id", "text", "categories"}, any_of={"hostedUrl", "applyUrl"})
    return entries if entries and isinstance(entries[0]["categories"], dict) else None


def _workable(data: Any) -> list | None:
    return (_listed(data, "jobs", {"shortcode", "title"}, envelope={"name"})
            or _listed(data, "results", {"shortcode", "title"}, envelope={"total"}))


class SavedAnswer(NamedTuple):
    page: str
    """The page class reading it (dotted path)."""
    entries: Callable[[Any], list | None]
    """The answer's postings when the decoded JSON has this board's shape, else None."""
    board_url: str | None = None
    """The entry key of a public posting URL whose first path segment is the board (when the page needs one)."""


SAVED_ANSWERS = (
    SavedAnswer("crawler.web.pages.greenhouse.GreenhousePage",
                lambda d: _listed(d, "jobs", {"id", "title", "absolute_url"})),
    SavedAnswer("crawler.web.pages.lever.LeverPage", _lever, "hostedUrl"),
    SavedAnswer("crawler.web.pages.ashby.AshbyPage",
                lambda d: _listed(d, "jobs", {"id", "title"}, any_of={"jobUrl", "applyUrl"}), "jobUrl"),
    SavedAnswer("crawler.web.pages.workable.WorkablePage", _workable),
    SavedAnswer("crawler.web.pages.smartrecruiters.SmartRecruitersPage",
                lambda d: _listed(d, "content", {"id", "name"}, envelope={"totalFound"})),
    SavedAnswer("crawler.web.pages.recruitee.RecruiteePage",
                lambda d: _listed(d, "offers", {"id", "title", "careers_url"})),
    SavedAnswer("crawler.web.pages.workday.WorkdayPage",
                lambda d: _listed(d, "jobPostings", {"title", "externalPath"}, envelope={"total"})),
)
"""The board APIs whose saved answers are recognized; the first whose shape fits reads the answer."""

_SNIFF = re.compile(rb'"(?:jobs|results|content|offers|jobPostings|hostedUrl)"')
"""A key one of :data:`SAVED_ANSWERS` needs: a body without any is not decoded here."""


def _board(entries: list, key: str | None) -> str | None:
    url = entries[0].get(key) if key else None
    segments = urlsplit(url).path.strip("/").split("/") if isinstance(url, str) else [""]
    return segments[0] or None


def saved_answer_page(body: bytes, *, locator: str, source: str, fetched_at: str, as_of: str) -> WebPage | None:
    """The page object that reads ``body`` when it is a saved board API answer (:data:`SAVED_ANSWERS`), else
    None. The page's postings and raw input get ``source`` and ``locator``; its ``reader`` is set for reparse."""
    from scrapy.utils.misc import load_object

    from crawler.web.spiders.webbase import page_reader

    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith((b"{", b"[")) or not _SNIFF.search(body):
        return None
    try:
        data = json.loads(body)
    except ValueError:  # the table reader names what is wrong with it
        return None
    for answer in SAVED_ANSWERS:
        entries = answer.entries(data)
        if entries is not None:
            page_class = load_object(answer.page)
            kwargs = {"source": source, "board": _board(entries, answer.board_url)}
            kwargs = {k: v for k, v in kwargs.items() if v is not None}
            page = page_class(locator, body, fetched_at=fetched_at, as_of=as_of, **kwargs)
            page.reader = page_reader(page_class, None, kwargs)
            return page
    return None
