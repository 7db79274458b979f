"""Scrapy extensions of jobcrawl."""

from __future__ import annotations

from itemadapter import ItemAdapter, is_item
from scrapy import signals


class ItemErrors:
    """A posting a pipeline raised on is dropped by Scrapy with a logged traceback only: count it in ``jobcrawl/errors``
    and name it in ``jobcrawl/item_error_log`` (input#position, the error), so that the run is partial, the CLI prints
    a ``failed:`` line and exits 1. The pipelines quarantine every input problem they know of; this is for the others.
    """

    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.item_error, signal=signals.item_error)
        return extension

    def item_error(self, item, response, spider, failure):
        where = "?"
        if is_item(item):
            adapter = ItemAdapter(item)
            position = adapter.get("position")
            where = str(adapter.get("locator")) + (f"#{position}" if position is not None and position >= 0 else "")
        self.stats.inc_value("jobcrawl/errors")
        lines = self.stats.get_value("jobcrawl/item_error_log") or []
        lines.append(f"{where}: {failure.type.__name__}: {failure.getErrorMessage()}; "
                     f"this {type(item).__name__} was not stored")
        self.stats.set_value("jobcrawl/item_error_log", lines)
