"""Scrapy extensions of jobcrawl."""

from __future__ import annotations

from itemadapter import ItemAdapter, is_item
from scrapy import signals

from crawler.pipelines import item_where
from crawler.report import handed_report


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
        extension = cls(crawler.stats, handed_report(crawler))
        crawler.signals.connect(extension.item_error, signal=signals.item_error)
        return extension

    def item_error(self, item, response, spider, failure):
        where = item_where(ItemAdapter(item)) if is_item(item) else "?"
        self.stats.inc_value("jobcrawl/errors")
        self.report.errors.append(f"{where}: {failure.type.__name__}: {failure.getErrorMessage()}; "
                        f"this {type(item).__name__} was not stored")


class QuietLog:
    """Without ``-v`` (``JOBCRAWL_LOG_TRACEBACKS`` false), an error of the crawl is one log line, not a traceback,
    and a request that failed for good is left to the run's one line per source (crawler/report.py): Scrapy's
    own "Gave up retrying" and "Error downloading" lines, each with a traceback, are not logged."""

    LOGGERS = ("scrapy.downloadermiddlewares.retry", "scrapy.downloadermiddlewares.robotstxt", "scrapy.core.scraper",
               "scrapy.core.engine", "scrapy.utils.signal", "scrapy.utils.defer")
    """Loggers whose records are filtered: Scrapy's, where download failures and callback errors are logged."""

    @classmethod
    def from_crawler(cls, crawler):
        import logging

        from scrapy.exceptions import NotConfigured

        if crawler.settings.getbool("JOBCRAWL_LOG_TRACEBACKS", True):
            raise NotConfigured
        for name in cls.LOGGERS:
            log = logging.getLogger(name)
            if not any(isinstance(f, _NoTracebacks) for f in log.filters):
                log.addFilter(_NoTracebacks())
        return cls()


class _NoTracebacks:
    """A logging filter: drops failed-download records (reported per source), keeps other records without traceback."""

    def filter(self, record) -> bool:
        message = str(record.msg)
        if record.name == "scrapy.downloadermiddlewares.retry" and message.startswith("Gave up retrying"):
            return False
        if message.startswith("Error downloading"):  # the robots.txt middleware and the scraper
            return False
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True
