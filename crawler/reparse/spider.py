"""``reparse``: parse the stored raw inputs of a database again, with today's parsers (crawler/reparse/pages.py).

Arguments: ``db`` (the database, read only here: the run's writer stores the results), ``sources`` (only
these sources; default all). Each (source, locator)'s newest raw input is parsed again and its items go
through the whole pipeline chain; the writer stores a posting again only when what it says has changed (a
new version), and takes the parse's outcome into the stored input (its status; its earlier quarantine rows
retired). An input that cannot be parsed again is named in the run's errors.
"""

from __future__ import annotations


import scrapy
from pydantic import BaseModel, ConfigDict, Field

from crawler.store import connect_readonly
from crawler.store.queries import latest_raw_inputs
from crawler.reparse.pages import NotReparseable, reparse_items
from crawler.report import FILES, FOUND, handed_report
from crawler.settings import no_requests
from crawler.arguments import check_arguments
from crawler.web.spiders.webbase import Names
from normalize.clock import now_iso
from normalize.models import Quarantined, RawInput


class ReparseArgs(BaseModel):
    """The spider's arguments (``scrapy crawl reparse -a db=jobs.db -a sources=greenhouse,lever``)."""

    model_config = ConfigDict(extra="forbid")

    db: str = Field(min_length=1, description="The database whose raw inputs are parsed again.")
    sources: Names = Field(default_factory=list, description="Only these sources (comma-separated); default all.")


class ReparseSpider(scrapy.Spider):
    name = "reparse"
    custom_settings = {**no_requests, "AUTOTHROTTLE_ENABLED": False, "ROBOTSTXT_OBEY": False}

    def __init__(self, **kwargs):
        super().__init__()
        args = check_arguments(self.name, ReparseArgs, kwargs)
        self.db, self.sources = args.db, args.sources

    async def start(self):
        report, stats = handed_report(self.crawler), self.crawler.stats
        conn = connect_readonly(self.db)
        try:
            for row in latest_raw_inputs(conn, self.sources):
                fetched = now_iso()
                try:
                    items = reparse_items(row, fetched_at=fetched, outcome=True)
                except NotReparseable as err:
                    report.errors.append(f"{row['locator']}: not parsed again: {err}")
                    continue
                stats.inc_value(FILES)
                for item in items:
                    if not isinstance(item, RawInput) and not (isinstance(item, Quarantined) and item.position is None):
                        stats.inc_value(FOUND)
                    yield item
        finally:
            conn.close()
