"""``reparse``: parse the stored raw inputs of a database again, with today's parsers (crawler/pages/reparse.py).

Arguments: ``db`` (the database, read only here: the run's writer stores the results), ``sources`` (only
these sources; default all). Each (source, locator)'s newest raw input is parsed again and its items go
through the whole pipeline chain; the writer stores a posting again only when what it says has changed (a
new version). An input that cannot be parsed again is named in the run's errors.
"""

from __future__ import annotations

import sqlite3

import scrapy

from crawler.db import readonly_uri
from crawler.db.queries import latest_raw_inputs
from crawler.pages.reparse import NotReparseable, reparse_items
from crawler.report import report_of
from normalize.clock import now_iso
from normalize.models import Quarantined


class ReparseSpider(scrapy.Spider):
    name = "reparse"
    custom_settings = {"AUTOTHROTTLE_ENABLED": False, "ROBOTSTXT_OBEY": False}

    def __init__(self, db: str | None = None, sources: str | list[str] | None = None, **kwargs):
        super().__init__(**kwargs)
        if not db:
            raise ValueError("reparse needs db=<database file>")
        self.db = db
        self.sources = [s for s in (sources.split(",") if isinstance(sources, str) else sources or []) if s]

    async def start(self):
        report = report_of(self.crawler)
        conn = sqlite3.connect(readonly_uri(self.db), uri=True)
        try:
            for row in latest_raw_inputs(conn, self.sources):
                fetched = now_iso()
                try:
                    items = reparse_items(row, fetched_at=fetched)
                except NotReparseable as err:
                    report.error_count += 1
                    report.errors.append(f"{row['locator']}: not parsed again: {err}")
                    continue
                report.files += 1
                for item in items:
                    if not (isinstance(item, Quarantined) and item.position is None):
                        report.found += 1
                    yield item
        finally:
            conn.close()
