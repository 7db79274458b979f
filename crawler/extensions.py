"""Scrapy extensions of jobcrawl."""

from __future__ import annotations


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
