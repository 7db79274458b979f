"""The JOBDIR guard (crawler/web/killsafe.py): a saved crawl state is resumed only when the postings of the pages
it names were committed; a state a killed crawl left is discarded."""

from __future__ import annotations

import pytest
from scrapy import Spider, signals
from scrapy.utils.test import get_crawler

from crawler.run.sinks import attach
from crawler.web.killsafe import MARK, JobdirGuard, release


def _guard(jobdir, *, in_a_run: bool = False):
    """A crawler with a JOBDIR and its guard; ``in_a_run``: the run attached a sink (crawler/run/sinks.py)."""
    crawler = get_crawler(Spider, {"JOBDIR": str(jobdir), "EXTENSIONS_BASE": {}})
    if in_a_run:
        attach(crawler, object())
    return crawler, JobdirGuard.from_crawler(crawler)


def _close(crawler) -> None:
    crawler.signals.send_catch_log(signals.spider_closed, spider=Spider("s"), reason="finished")


@pytest.mark.parametrize("in_a_run, left_after_close", [
    pytest.param(False, False, id="scrapy-crawl-stores-as-it-closes"),
    pytest.param(True, True, id="a-run-commits-after-the-spider-closed"),
])
def test_the_mark_stays_until_the_postings_are_committed(tmp_path, in_a_run, left_after_close):
    jobdir = tmp_path / "jobdir"
    crawler, _ = _guard(jobdir, in_a_run=in_a_run)
    assert (jobdir / MARK).read_text(encoding="utf-8").startswith("pid ")
    _close(crawler)
    assert (jobdir / MARK).exists() is left_after_close
    release(jobdir)  # crawler/run/runner.py, once the writer committed
    assert not (jobdir / MARK).exists()


def test_a_state_left_marked_is_discarded(tmp_path):
    """A run killed after its spider closed and before its writer committed: the next one starts afresh."""
    jobdir = tmp_path / "jobdir"
    crawler, _ = _guard(jobdir, in_a_run=True)
    (jobdir / "requests.seen").write_text("every page of the killed run\n", encoding="utf-8")
    _close(crawler)
    again, _ = _guard(jobdir, in_a_run=True)
    assert sorted(p.name for p in jobdir.iterdir()) == [MARK]
    assert again.stats.get_value("jobcrawl/jobdir_discarded") == 1


def test_a_released_state_is_resumed(tmp_path):
    jobdir = tmp_path / "jobdir"
    crawler, _ = _guard(jobdir, in_a_run=True)
    (jobdir / "requests.seen").write_text("pages stored\n", encoding="utf-8")
    _close(crawler)
    release(jobdir)
    again, _ = _guard(jobdir, in_a_run=True)
    assert (jobdir / "requests.seen").read_text(encoding="utf-8") == "pages stored\n"
    assert again.stats.get_value("jobcrawl/jobdir_discarded") is None
