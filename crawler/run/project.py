"""Run spiders through the real Scrapy engine from Python; each crawl's :class:`~crawler.report.CrawlReport`, made
here and handed to its crawler at its creation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from scrapy import signals
from scrapy.crawler import CrawlerProcess

from crawler.report import REPORT_SETTING, CrawlReport
from crawler.run.sinks import attach
from crawler.settings import project_settings
from crawler.ingest.textdump import input_read

# Per-crawl settings sit above the command-line priority (and the spider's custom_settings), so the
# process-wide overrides that CrawlerProcess merges into every crawler never replace them.
CRAWL_PRIORITY = 50


@dataclass
class SpiderRun:
    """One crawl of a multi-spider run: the spider (class or name), its own settings and its arguments."""

    spidercls: type | str
    settings: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)


def _crawl_failed(failure, report: CrawlReport) -> None:
    """A crawl that could not start or broke down (a component that cannot be built): the report says why."""
    report.stage_failed = report.stage_failed or f"{failure.type.__name__}: {failure.getErrorMessage()}"


def run_spiders(runs: list[SpiderRun], overrides: dict[str, Any] | None = None, *,
                on_response: Callable[[int], None] | None = None,
                on_stored: Callable[..., None] | None = None,
                on_started: Callable[[CrawlerProcess], None] | None = None,
                install_signal_handlers: bool = True, sink=None) -> list[CrawlReport]:
    """Crawl every run at once in this process, to the end (blocking); return each crawl's report, in order.

    Each crawler has the project settings, then ``overrides``, then its own settings. A Twisted
    reactor cannot be restarted: call this once per process. ``on_response`` is called with 1 for each
    input read: a response, or a file of an ingest (:data:`~crawler.ingest.textdump.input_read`); ``on_stored`` by
    the store stage, with ``postings=1`` for each posting it takes and ``nbytes=`` the size of each raw input
    (progress; with a ``sink``); ``on_started`` gets the process before the reactor
    starts (a worker uses it to stop the crawl on its parent's word); ``sink``: where every crawler's store stage
    sends its rows (crawler/run/sinks.py; None: each opens a writer of its own).
    """
    # Spiders given by class need no spider loader: it would import every spider module of the project.
    by_name = any(isinstance(run.spidercls, str) for run in runs)
    process = CrawlerProcess(project_settings({**(overrides or {}), **({} if by_name else {"SPIDER_MODULES": []})}))
    crawlers = []
    for run in runs:
        crawler = process.create_crawler(run.spidercls)
        report = CrawlReport()
        crawler.settings.set(REPORT_SETTING, report, priority=CRAWL_PRIORITY)
        if sink is not None:
            attach(crawler, sink, on_stored)
        for key, value in run.settings.items():
            crawler.settings.set(key, value, priority=CRAWL_PRIORITY)
        if on_response is not None:
            for signal in (signals.response_received, input_read):
                crawler.signals.connect(lambda **_: on_response(1), signal=signal, weak=False)
        process.crawl(crawler, **run.kwargs).addErrback(_crawl_failed, report)
        crawlers.append((crawler, report))
    if on_started is not None:
        on_started(process)
    process.start(install_signal_handlers=install_signal_handlers)
    for crawler, report in crawlers:
        stats = crawler.stats.get_stats()
        report.ended(stats, stats.get("finish_reason"))
    return [report for _, report in crawlers]
