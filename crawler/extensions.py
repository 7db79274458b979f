"""Scrapy extensions of jobcrawl."""

from __future__ import annotations

from itemadapter import ItemAdapter, is_item
from scrapy import signals

from .pipelines import item_where
from .report import report_of


class ItemErrors:
    """A posting a pipeline raised on is dropped by Scrapy with a logged traceback only: count it and name it in the
    run report (input#position, the error), so that the run is partial, the CLI prints a ``failed:`` line and exits 1.
    The pipelines quarantine every input problem they know of; this is for the others.
    """

    def __init__(self, stats, report):
        self.stats = stats
        self.report = report

    @classmethod
    def from_crawler(cls, crawler):
        extension = cls(crawler.stats, report_of(crawler))
        crawler.signals.connect(extension.item_error, signal=signals.item_error)
        return extension

    def item_error(self, item, response, spider, failure):
        where = item_where(ItemAdapter(item)) if is_item(item) else "?"
        self.stats.inc_value("jobcrawl/errors")
        self.report.error_count += 1
        self.report.errors.append(f"{where}: {failure.type.__name__}: {failure.getErrorMessage()}; "
                        f"this {type(item).__name__} was not stored")
