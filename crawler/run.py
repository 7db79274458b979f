"""Run spiders through the real Scrapy engine from Python and return their stats."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings

# Per-crawl settings sit above the command-line priority (and the spider's custom_settings), so the
# process-wide overrides that CrawlerProcess merges into every crawler never replace them.
CRAWL_PRIORITY = 50


def project_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """crawler.settings with ``overrides`` applied at command-line priority."""
    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    for key, value in (overrides or {}).items():
        settings.set(key, value, priority="cmdline")
    return settings


@dataclass
class SpiderRun:
    """One crawl of a multi-spider run: the spider (class or name), its own settings and its arguments."""

    spidercls: type | str
    settings: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)


def run_spiders(runs: list[SpiderRun], overrides: dict[str, Any] | None = None, *,
                on_response: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """Crawl every run at once in this process, to the end (blocking); return each crawl's stats, in order.

    Each crawler has the project settings, then ``overrides``, then its own settings. A Twisted
    reactor cannot be restarted: call this once per process (the CLI does).
    """
    process = CrawlerProcess(project_settings(overrides))
    crawlers = []
    for run in runs:
        crawler = process.create_crawler(run.spidercls)
        for key, value in run.settings.items():
            crawler.settings.set(key, value, priority=CRAWL_PRIORITY)
        if on_response is not None:
            crawler.signals.connect(lambda **_: on_response(), signal=signals.response_received, weak=False)
        process.crawl(crawler, **run.kwargs)
        crawlers.append(crawler)
    process.start()
    return [dict(crawler.stats.get_stats()) for crawler in crawlers]


def run_spider(spidercls, overrides: dict[str, Any] | None = None, *,
               on_response: Callable[[], None] | None = None, **spider_kwargs) -> dict[str, Any]:
    """Crawl one spider to the end in this process (blocking) and return the crawl's stats."""
    return run_spiders([SpiderRun(spidercls, kwargs=spider_kwargs)], overrides, on_response=on_response)[0]
