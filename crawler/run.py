"""Run a spider through the real Scrapy engine from Python and return its stats."""

from __future__ import annotations

from typing import Any, Callable

from scrapy import signals
from scrapy.crawler import CrawlerProcess
from scrapy.settings import Settings


def project_settings(overrides: dict[str, Any] | None = None) -> Settings:
    """crawler.settings with ``overrides`` applied at command-line priority."""
    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    for key, value in (overrides or {}).items():
        settings.set(key, value, priority="cmdline")
    return settings


def run_spider(spidercls, overrides: dict[str, Any] | None = None, *,
               on_response: Callable[[], None] | None = None, **spider_kwargs) -> dict[str, Any]:
    """Crawl to the end in this process (blocking) and return the crawl's stats.

    A Twisted reactor cannot be restarted: call this once per process (the CLI does).
    """
    process = CrawlerProcess(project_settings(overrides))
    crawler = process.create_crawler(spidercls)
    if on_response is not None:
        crawler.signals.connect(lambda **_: on_response(), signal=signals.response_received)
    process.crawl(crawler, **spider_kwargs)
    process.start()
    return dict(crawler.stats.get_stats())
