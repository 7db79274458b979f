"""Scrapy extensions of jobcrawl."""

from __future__ import annotations

from itemadapter import ItemAdapter, is_item
from scrapy import signals

from .pipelines import item_where


class ItemErrors:
    """A posting a pipeline raised on is dropped by Scrapy with a logged traceback only: count it in ``jobcrawl/errors``
    and name it in ``jobcrawl/item_error_log`` (input#position, the error), so that the run is partial, the CLI prints
    a ``failed:`` line and exits 1. The pipelines quarantine every input problem they know of; this is for the others.
    """

    def __init__(self, stats):
        self.stats = stats
        self.log: list[str] = []
        stats.set_value("jobcrawl/item_error_log", self.log)

    @classmethod
    def from_crawler(cls, crawler):
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.item_error, signal=signals.item_error)
        return extension

    def item_error(self, item, response, spider, failure):
        where = item_where(ItemAdapter(item)) if is_item(item) else "?"
        self.stats.inc_value("jobcrawl/errors")
        self.log.append(f"{where}: {failure.type.__name__}: {failure.getErrorMessage()}; "
                        f"this {type(item).__name__} was not stored")
