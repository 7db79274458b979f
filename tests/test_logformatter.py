"""The quiet log formatter: per-item and per-response records only at DEBUG."""

import pytest
from scrapy import Spider
from scrapy.http import Request, TextResponse
from scrapy.utils.test import get_crawler

from crawler.logformatter import QuietLogFormatter


@pytest.mark.parametrize(
    ("level", "logs"),
    [("DEBUG", True), ("INFO", False), ("WARNING", False), (10, True), (20, False)],
    ids=["debug", "info", "warning", "numeric-debug", "numeric-info"],
)
def test_per_item_records_only_at_debug(level, logs):
    crawler = get_crawler(Spider, {"LOG_LEVEL": level, "LOG_FORMATTER": "crawler.logformatter.QuietLogFormatter"})
    formatter = QuietLogFormatter.from_crawler(crawler)
    spider = Spider.from_crawler(crawler, name="s")
    response = TextResponse("http://127.0.0.1/x", body=b"", request=Request("http://127.0.0.1/x"))
    scraped = formatter.scraped({"title": "t"}, response, spider)
    crawled = formatter.crawled(response.request, response, spider)
    assert (scraped is not None, crawled is not None) == (logs, logs)
    if logs:
        assert scraped["args"] == {"src": response, "item": {"title": "t"}}
    # Dropped items are always reported.
    from scrapy.exceptions import DropItem
    assert formatter.dropped({"title": "t"}, DropItem("bad"), response, spider)["msg"]


def test_the_project_settings_use_it():
    from scrapy.utils.project import get_project_settings

    assert get_project_settings()["LOG_FORMATTER"] == "crawler.logformatter.QuietLogFormatter"
