"""Saved answers of board APIs among ingested files, read by the page object a crawl of that board uses.

A ``.json`` file holding a Greenhouse listing answer (``{"jobs": [{"id", "title", "absolute_url", …}]}``, as
``boards-api.greenhouse.io/v1/boards/{token}/jobs?content=true`` returns it and git-scraping repositories keep
it) is read by :class:`~crawler.web.pages.greenhouse.GreenhousePage`: every field a crawl takes (the posting's
URL from ``absolute_url``, its id, the HTML content's sections, pay ranges, offices, dates) instead of the
generic table reading. The postings keep the ingest's source (``tabular``, or ``--source``); the stored input
names the page class, so ``jobcrawl reparse`` reads it the same way.
"""

from __future__ import annotations

import json
from typing import Any

from crawler.web.pages.base import WebPage


def _greenhouse(data: Any) -> bool:
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return (isinstance(jobs, list) and bool(jobs) and isinstance(jobs[0], dict)
            and {"id", "title", "absolute_url"} <= jobs[0].keys())


SAVED_ANSWERS = (("crawler.web.pages.greenhouse.GreenhousePage", _greenhouse),)
"""(page class, test of the decoded JSON) of each board API whose saved answers are recognized."""


def saved_answer_page(body: bytes, *, locator: str, source: str, fetched_at: str, as_of: str) -> WebPage | None:
    """The page object that reads ``body`` when it is a saved board API answer (:data:`SAVED_ANSWERS`), else
    None. The page's postings and raw input get ``source`` and ``locator``; its ``reader`` is set for reparse."""
    from scrapy.utils.misc import load_object

    from crawler.web.spiders.webbase import page_reader

    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{") or b'"jobs"' not in body:
        return None
    try:
        data = json.loads(body)
    except ValueError:  # the table reader names what is wrong with it
        return None
    for path, test in SAVED_ANSWERS:
        if test(data):
            page_class = load_object(path)
            page = page_class(locator, body, fetched_at=fetched_at, as_of=as_of, source=source)
            page.reader = page_reader(page_class, None, {"source": source})
            return page
    return None
