"""`scrapy crawl <spider> -a NAME=VALUE … -o out.jsonl` for every spider of the project: a wrong argument is one line
naming the spider's arguments (crawler/web/spiders/__init__.py, crawler/commands/crawl.py), and the feed holds the
postings (real crawls of the recorded fixtures on 127.0.0.1, of the seeds and of a table file)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, SEEDS, run_cli
from crawler.web.sources import project_spiders
from crawler.arguments import SpiderArgumentError
from mockserver import MockServer, build_docroot

WRONG_NAME = {
    "ashby": "ashby: unknown argument 'board' (did you mean boards?); argument 'boards' is required; "
             "arguments: boards (required), company, base_url",
    "greenhouse": "greenhouse: unknown argument 'board' (did you mean boards?); argument 'boards' is required; "
                  "arguments: boards (required), company, base_url",
    "jsonld": "jsonld: unknown argument 'board'; arguments: company, start_urls, sitemap_urls, robots_sitemaps, allow, "
              "deny, follow, complete, site",
    "lever": "lever: unknown argument 'board' (did you mean boards?); argument 'boards' is required; "
             "arguments: boards (required), company, base_url, eu",
    "recruitee": "recruitee: unknown argument 'board' (did you mean boards?); argument 'boards' is required; "
                 "arguments: boards (required), company, base_url",
    "reparse": "reparse: unknown argument 'board'; argument 'db' is required; arguments: db (required), sources",
    "smartrecruiters": "smartrecruiters: unknown argument 'board' (did you mean boards?); argument 'boards' is "
                       "required; arguments: boards (required), company, base_url, page_size",
    "tabular": "tabular: unknown argument 'board'; arguments: paths, as_of, source, listing, format, preset, mapping, "
               "constants",
    "textdump": "textdump: unknown argument 'board'; arguments: paths, as_of, source, listing",
    "workable": "workable: unknown argument 'board' (did you mean boards?); argument 'boards' is required; "
                "arguments: boards (required), company, base_url, api",
    "workday": "workday: unknown argument 'board'; argument 'tenant' is required; argument 'site' is required; "
               "arguments: tenant (required), site (required), company, wd, base_url, page_size",
}


def test_every_spider_is_listed():
    assert sorted(project_spiders()) == sorted(WRONG_NAME)


@pytest.mark.parametrize("name", sorted(WRONG_NAME))
def test_a_wrong_argument_name_is_one_line_naming_the_spiders_arguments(name):
    with pytest.raises(SpiderArgumentError) as caught:
        project_spiders()[name](board="x")
    assert str(caught.value) == WRONG_NAME[name]


@pytest.mark.parametrize("name, kwargs, message", [
    pytest.param("textdump", {"inputs": "seeds/"},
                 "textdump: unknown argument 'inputs'; arguments: paths, as_of, source, listing",
                 id="inputs-is-python-only"),
    pytest.param("textdump", {"paths": "no/such/dir"}, "textdump: paths: no/such/dir: no such file or folder; "
                 "arguments: paths, as_of, source, listing", id="missing-path"),
    pytest.param("textdump", {"paths": str(SEEDS), "as_of": "yesterday"}, "textdump: as_of: Input should be a valid "
                 "datetime or date, input is too short; arguments: paths, as_of, source, listing", id="bad-as-of"),
    pytest.param("tabular", {"paths": str(SEEDS), "preset": "indeed"}, "tabular: preset: unknown preset 'indeed'; "
                 "presets: jobspy, zh-board, boss-list, boss-jd, lagou-jd, lagou-api, 51job-list, jobcrawl, generic, "
                 "none; arguments: paths, as_of, source, listing, format, preset, mapping, constants", id="bad-preset"),
    pytest.param("greenhouse", {"boards": "a/b"}, "greenhouse: boards: not a board name: 'a/b'; arguments: boards "
                 "(required), company, base_url", id="bad-value"),
    pytest.param("jsonld", {"company": "x"}, "jsonld: give start_urls or sitemap_urls; arguments: company, start_urls, "
                 "sitemap_urls, robots_sitemaps, allow, deny, follow, complete, site", id="model-rule"),
])
def test_bad_argument_values_are_one_line_too(name, kwargs, message):
    with pytest.raises(SpiderArgumentError) as caught:
        project_spiders()[name](**kwargs)
    assert str(caught.value) == message


def scrapy_crawl(tmp: Path, spider: str, *args: str) -> subprocess.CompletedProcess:
    """`scrapy crawl SPIDER ARGS` in the project folder, storing into ``tmp/jobs.db``, its cache under ``tmp``."""
    env = dict(os.environ, PYTHONUTF8="1", JOBCRAWL_CONTACT="https://example.org/jobcrawl-tests")
    command = [str(Path(sys.executable).parent / "scrapy"), "crawl", spider, *args, "-s", f"JOBCRAWL_DB={tmp / 'jobs.db'}",
               "-s", f"HTTPCACHE_DIR={tmp / 'cache'}", "-s", "LOG_LEVEL=ERROR",
               "-s", "JOBCRAWL_ALLOW_PRIVATE=1"]  # the local server is on 127.0.0.1 (crawler/web/safety.py)
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
@pytest.mark.parametrize("spider", ["textdump", "greenhouse"])
def test_scrapy_crawl_with_a_wrong_argument_exits_2_with_one_line(tmp_path, spider):
    proc = scrapy_crawl(tmp_path, spider, "-a", "board=x", "-o", str(tmp_path / "out.jsonl"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"scrapy: error: {WRONG_NAME[spider]}"
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "jobs.db").exists() and not (tmp_path / "out.jsonl").exists()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = build_docroot(tmp_path_factory.mktemp("www"))
    with MockServer(root, root.parent / "requests.log") as srv:
        yield srv


CRAWLS = {
    "textdump": ["-a", f"paths={SEEDS}"],
    "tabular": ["-a", f"paths={FIXTURES / 'tabular' / 'jobspy.csv'}"],
    "reparse": [],  # -a db=… of a database ingested first
    "greenhouse": ["-a", "boards=gitlab", "-a", "base_url={base}/greenhouse"],
    "lever": ["-a", "boards=matchgroup", "-a", "base_url={base}/lever"],
    "ashby": ["-a", "boards=linear", "-a", "base_url={base}/ashby"],
    "jsonld": ["-a", "start_urls={base}/careers/", "-a", "allow=/jobs/", "-a", "company=Acme Careers"],
    "workable": ["-a", "boards=examplerobotics", "-a", "base_url={base}/workable"],
    "smartrecruiters": ["-a", "boards=ExampleAI", "-a", "base_url={base}/smartrecruiters"],
    "recruitee": ["-a", "boards=examplevision", "-a", "base_url={base}/recruitee/{{board}}"],
    "workday": ["-a", "tenant=exampleai", "-a", "site=External", "-a", "base_url={base}/workday"],
}


def test_every_spider_has_a_crawl():
    assert sorted(CRAWLS) == sorted(project_spiders())


@pytest.mark.slow
@pytest.mark.parametrize("spider", list(CRAWLS))
def test_scrapy_crawl_writes_the_postings_to_the_feed(server, tmp_path, spider):
    args = [arg.format(base=server.base) for arg in CRAWLS[spider]]
    if spider == "reparse":
        run_cli("ingest", str(SEEDS), "--db", str(tmp_path / "jobs.db"), check=True)
        args = ["-a", f"db={tmp_path / 'jobs.db'}"]
    out = tmp_path / "out.jsonl"
    proc = scrapy_crawl(tmp_path, spider, *args, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    conn = sqlite3.connect(tmp_path / "jobs.db")
    stored = {row[0] for row in conn.execute("SELECT key FROM postings")}
    conn.close()
    assert records and {r["key"] for r in records} == stored  # every posting, and nothing but postings
    assert all(r["title"] and r["company"] for r in records)


def test_the_crawl_command_limits_o_feeds_to_postings():
    import argparse

    from crawler.commands.crawl import Command
    from crawler.settings import project_settings

    command = Command()
    command.settings = project_settings()
    parser = argparse.ArgumentParser()
    command.add_options(parser)
    opts = parser.parse_args(["-o", "out.jsonl", "-o", "all.csv:csv", "-a", "boards=x"])
    command.process_options(["greenhouse"], opts)
    feeds = command.settings.getdict("FEEDS")
    assert {uri: (options["format"], options["item_classes"]) for uri, options in feeds.items()} == {
        "out.jsonl": ("jsonl", ["normalize.models.Posting"]), "all.csv": ("csv", ["normalize.models.Posting"])}


@pytest.mark.parametrize("logger, message, kept", [
    pytest.param("scrapy.downloadermiddlewares.retry", "Gave up retrying %(request)s", False, id="retries-given-up"),
    pytest.param("scrapy.downloadermiddlewares.robotstxt", "Error downloading %(request)s: %(f_exception)s", False,
                 id="robots-download-error"),
    pytest.param("scrapy.core.scraper", "Error downloading %(request)s", False, id="download-error"),
    pytest.param("scrapy.core.scraper", "Spider error processing %(request)s", True, id="spider-error-kept"),
])
def test_without_v_failed_downloads_leave_the_log_and_errors_lose_their_traceback(logger, message, kept):
    import logging

    from scrapy.utils.test import get_crawler

    from crawler.extensions import QuietLog

    QuietLog.from_crawler(get_crawler(settings_dict={"JOBCRAWL_LOG_TRACEBACKS": False}))
    log = logging.getLogger(logger)
    try:
        try:
            raise ValueError("boom")
        except ValueError:
            record = logging.LogRecord(logger, logging.ERROR, __file__, 1, message, None, sys.exc_info())
        assert log.filter(record) is kept
        if kept:
            assert logging.Formatter().format(record) == message  # one line, no traceback
    finally:
        for name in QuietLog.LOGGERS:  # the filters are process-wide: leave the other tests' loggers as they were
            for f in list(logging.getLogger(name).filters):
                logging.getLogger(name).removeFilter(f)


def test_with_v_the_log_keeps_its_tracebacks():
    from scrapy.exceptions import NotConfigured
    from scrapy.utils.test import get_crawler

    from crawler.extensions import QuietLog

    with pytest.raises(NotConfigured):
        QuietLog.from_crawler(get_crawler(settings_dict={"JOBCRAWL_LOG_TRACEBACKS": True}))


def test_the_feed_keeps_the_class_spiders_emit_for_postings():
    import crawler.items
    import normalize.models
    from crawler.commands.crawl import POSTINGS

    module, name = POSTINGS.rsplit(".", 1)
    assert getattr(normalize.models, name) is crawler.items.Posting and module == "normalize.models"
