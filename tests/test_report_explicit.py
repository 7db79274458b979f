"""A crawl's counts are its Scrapy stats and its lines are in the one report the run hands its crawler
(crawler/report.py): the counts read from the stats, the ``runs.stats`` and ``--json`` shapes they make, and
what a distributed worker pushes of them (crawler/distributed/worker.py)."""

from __future__ import annotations

import json

import pytest
from scrapy.utils.test import get_crawler

from crawler.distributed.worker import ReportDelta
from crawler.report import (FILES, FILES_UNCHANGED, FOUND, REPORT_SETTING, REQUESTS, STATUS, UNPARSED, CrawlReport,
                            RunReport, handed_report)


@pytest.mark.parametrize("stats, counts", [
    pytest.param({}, {"files": 0, "found": 0, "files_unchanged": 0, "unchanged_unparsed": 0, "requests": 0},
                 id="nothing-counted"),
    pytest.param({FILES: 3, FOUND: 7, FILES_UNCHANGED: 1, UNPARSED: 2, REQUESTS: 5},
                 {"files": 3, "found": 7, "files_unchanged": 1, "unchanged_unparsed": 2, "requests": 5}, id="each"),
])
def test_counts_are_read_from_the_stats(stats, counts):
    report = CrawlReport(stats=stats)
    assert {name: getattr(report, name) for name in counts} == counts


@pytest.mark.parametrize("stats, errors, request_errors, expected", [
    pytest.param({}, [], [], 0, id="none"),
    pytest.param({"spider_exceptions/KeyError": 2, "spider_exceptions/ValueError": 1}, [], [], 3, id="exceptions"),
    pytest.param({"jobcrawl/errors": 9}, ["a.txt#1: KeyError: 'x'"], ["http://x/: HTTP 503"], 2, id="lines"),
])
def test_errors_are_the_error_lines_and_spider_exceptions(stats, errors, request_errors, expected):
    assert CrawlReport(stats=stats, errors=errors, request_errors=request_errors).error_count == expected


def test_responses_are_the_status_stats_in_their_order():
    report = CrawlReport(stats={STATUS + "304": 1, "jobcrawl/http/cache_hits": 4, STATUS + "200": 3})
    assert list(report.responses.items()) == [("304", 1), ("200", 3)]


def test_runs_stats_keep_scrapy_order_and_put_the_counts_after():
    crawl = CrawlReport(stats={"start_time": "t", FOUND: 2, "item_scraped_count": 2, FILES: 1, UNPARSED: 0,
                               "finish_reason": "finished"}, finish_reason="finished")
    assert list(RunReport(1, "ingest", crawl=crawl, written={"new": 2}).stats.items()) == [
        ("start_time", "t"), ("item_scraped_count", 2), ("finish_reason", "finished"), ("jobcrawl/files", 1),
        ("jobcrawl/postings_found", 2), ("jobcrawl/new", 2), ("jobcrawl/listings_complete", 0),
        ("jobcrawl/workers", 1)]


def test_the_json_report_names_the_counts_and_keeps_them_out_of_its_stats():
    crawl = CrawlReport(stats={FILES: 1, FOUND: 2, REQUESTS: 1, STATUS + "200": 1, "item_scraped_count": 2},
                        finish_reason="finished", request_errors=["u: HTTP 503"])
    crawl.failures.update({"HTTP 503": 1})
    data = json.loads(json.dumps(RunReport(5, "crawl", source="acme", crawl=crawl).as_dict()))["crawl"]
    assert data == {"files": 1, "found": 2, "files_unchanged": 0, "unchanged_unparsed": 0, "requests": 1,
                    "responses": {"200": 1}, "problems": [], "repaired": [], "errors": [],
                    "request_errors": ["u: HTTP 503"], "notes": [], "failures": {"HTTP 503": 1}, "error_count": 1, "listings": {},
                    "tables": [], "finish_reason": "finished", "stage_failed": None,
                    "stats": {"jobcrawl/http/requests": 1, "jobcrawl/http/status/200": 1, "item_scraped_count": 2}}


def test_a_crawler_gets_the_report_its_run_hands_it():
    crawler = get_crawler(settings_dict={REPORT_SETTING: CrawlReport()})
    assert handed_report(crawler) is handed_report(crawler) is crawler.settings[REPORT_SETTING]
    alone = get_crawler()  # `scrapy crawl`: nobody reads its lines
    assert handed_report(alone) is not handed_report(alone)


def test_a_worker_pushes_what_its_stats_and_lines_added_and_the_pushes_add_up():
    crawler = get_crawler(settings_dict={REPORT_SETTING: CrawlReport()})
    stats, report = crawler.stats, handed_report(crawler)
    delta = ReportDelta(crawler)
    pushed = []

    def push(final: bool = False) -> CrawlReport | None:
        got = delta.take(final=final)
        if got is not None:
            delta.commit()
            pushed.append(got)
        return got

    stats.inc_value(FILES)
    stats.inc_value(FOUND, 3)
    stats.set_value("start_time", "t")
    first = push()
    assert first.stats == {FILES: 1, FOUND: 3}
    stats.inc_value("log_count/INFO")  # not a count of the report: nothing to push
    assert push() is None
    report.problems.append("a.txt: empty")
    stats.inc_value(FOUND, 2)
    second = push()
    assert (second.stats, second.problems) == ({"log_count/INFO": 1, FOUND: 2}, ["a.txt: empty"])
    report.ended(stats.get_stats(), "finished")
    last = push(final=True)
    assert (last.finish_reason, last.problems) == ("finished", [])
    merged = CrawlReport()
    for part in pushed:
        merged.merge(part)
    assert (merged.stats, merged.problems, merged.finish_reason) == (
        {FILES: 1, FOUND: 5, "start_time": "t", "log_count/INFO": 1}, ["a.txt: empty"], "finished")
