"""The pieces of `jobcrawl crawl` that need no server: sources files, Retry-After, closing scope, the lock."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import ROOT
from crawler.store.closing import close_missing
from crawler.store.schema import open_db
from crawler.run.lock import LockHeld, db_lock
from crawler.web.middlewares import retry_after_seconds
from crawler.settings import project_settings
from crawler.web.sources import SourcesError, load_sources, locate_sources

# --------------------------------------------------------------------------- sources files


def test_example_sources_file_loads():
    sources = load_sources(ROOT / "seeds" / "sources.toml")
    assert [(s.name, s.spider, s.enabled) for s in sources.sources.values()] == [
        ("gitlab", "greenhouse", True), ("matchgroup", "lever", True), ("linear", "ashby", True),
        ("huggingface", "workable", False), ("ubisoft", "smartrecruiters", False), ("channable", "recruitee", False),
        ("nvidia", "workday", False), ("example-careers", "jsonld", False)]
    assert [s.name for s in sources.select([], all_enabled=True)] == ["gitlab", "matchgroup", "linear"]
    careers = sources.sources["example-careers"]
    assert sources.settings_for(careers) == {
        "JOBCRAWL_MAX_REQUESTS": 500, "CONCURRENT_REQUESTS_PER_DOMAIN": 2, "DOWNLOAD_TIMEOUT": 20,
        "JOBCRAWL_CONTACT": "https://github.com/jobcrawl/jobcrawl"}
    assert careers.args == {"start_urls": ["https://careers.example.com/"], "robots_sitemaps": True,
                            "allow": [r"/jobs/\d+"], "deny": [r"/jobs/\d+/apply"], "company": "Example Inc.",
                            "complete": True}


BAD_SOURCES = [
    pytest.param('[sources.a]\nspider = "textdump"\n', "source a: spider must be one of ashby, greenhouse, jsonld, lever, "
                 "recruitee, smartrecruiters, workable, workday (got 'textdump')", id="not-a-web-spider"),
    pytest.param('[sources.a]\nboards = ["x"]\n', "source a: spider must be one of ashby, greenhouse, jsonld, lever, "
                 "recruitee, smartrecruiters, workable, workday "
                 "(got None)", id="no-spider"),
    pytest.param('[sources.a]\ntype = "greenhouse"\nboards = ["x"]\n', "source a: spider must be one of ashby, greenhouse, "
                 "jsonld, lever, recruitee, smartrecruiters, workable, workday (got None); type = 'greenhouse' names one: "
                 "write spider = 'greenhouse'", id="spider-under-another-key"),
    pytest.param('[sources.a]\nspider = "greenhose"\nboards = ["x"]\n', "source a: spider must be one of ashby, greenhouse, "
                 "jsonld, lever, recruitee, smartrecruiters, workable, workday (got 'greenhose') (did you mean greenhouse?)",
                 id="misspelt-spider"),
    pytest.param('[sources.a]\nspider = "greenhouse"\nbords = ["x"]\n', "source a: boards: Field required",
                 id="typo-means-missing"),
    pytest.param('[sources.a]\nspider = "greenhouse"\nboards = ["x"]\nboard = "y"\n',
                 "source a: board: Extra inputs are not permitted", id="unknown-argument"),
    pytest.param('[sources.a]\nspider = "greenhouse"\nboards = []\n', "source a: boards: List should have at least 1 item after validation, not 0",
                 id="no-boards"),
    pytest.param('[sources.a]\nspider = "lever"\nboards = ["a/b"]\n', "source a: boards: Value error, not a board name: 'a/b'",
                 id="slash-in-board"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nbase_url = "ftp://x"\n',
                 "source a: base_url: Value error, not an http(s) URL: 'ftp://x'", id="bad-base-url"),
    pytest.param('[sources.a]\nspider = "jsonld"\nallow = ["x"]\n', "source a: Value error, give start_urls or sitemap_urls",
                 id="jsonld-nowhere-to-start"),
    pytest.param('[sources.a]\nspider = "jsonld"\nstart_urls = ["http://x/"]\nallow = ["("]\n',
                 "source a: allow: Value error, bad regular expression '(': missing ), unterminated subpattern at "
                 "position 0", id="bad-regex"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nconcurrency = 0\n',
                 "source a: concurrency: Input should be greater than or equal to 1", id="zero-concurrency"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nsettings = { download_delay = 1 }\n',
                 "source a: not a Scrapy setting name: download_delay", id="lower-case-setting"),
    pytest.param('[defaults]\nmax_requests = -1\n', "[defaults]: max_requests: Input should be greater than or equal to 0",
                 id="bad-default"),
    pytest.param('[defaults]\nallow_private = true\n', "[defaults]: allow_private: Extra inputs are not permitted",
                 id="allow-private-only-per-source"),
    pytest.param('[defaults]\nsettings = { JOBCRAWL_ALLOW_HOSTS = ["x"] }\n',
                 "[defaults]: JOBCRAWL_ALLOW_HOSTS is set by the source key allow_hosts, not in settings",
                 id="allow-hosts-not-a-default-setting"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nsettings = { JOBCRAWL_ALLOW_PRIVATE = true }\n',
                 "source a: JOBCRAWL_ALLOW_PRIVATE is set by the source key allow_private, not in settings",
                 id="allow-private-not-a-setting"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nallow_hosts = ["example.com/jobs"]\n',
                 "source a: allow_hosts: Value error, not a host or host:port: 'example.com/jobs'", id="host-with-path"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nallow_hosts = ["example.com:99999"]\n',
                 "source a: allow_hosts: Value error, Port out of range 0-65535", id="host-with-bad-port"),
    pytest.param('[sources.a]\nspider = "ashby"\nboards = ["x"]\nmax_size_mb = 0\n',
                 "source a: max_size_mb: Input should be greater than 0", id="zero-size-cap"),
    pytest.param('[source.a]\nspider = "ashby"\n', "unknown top-level key(s) source (contact, defaults, sources)",
                 id="singular-table-name"),
    pytest.param('[sources.a\nspider = "ashby"\n', "not valid TOML: Expected ']' at the end of a table declaration "
                 "(at line 1, column 11)", id="bad-toml"),
]


@pytest.mark.parametrize(("text", "message"), BAD_SOURCES)
def test_bad_sources_file_names_the_problem(tmp_path, text, message):
    path = tmp_path / "sources.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SourcesError) as caught:
        load_sources(path)
    assert str(caught.value) == f"{path}: {message}"


def test_safety_keys_become_settings(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text('[defaults]\nmax_size_mb = 5\n'
                    '[sources.a]\nspider = "ashby"\nboards = ["a"]\nallow_private = true\n'
                    'allow_hosts = ["jobs.example.com", "127.0.0.1:8080"]\nwarn_size_mb = 0.5\n'
                    '[sources.b]\nspider = "lever"\nboards = ["b"]\nmax_size_mb = 0.25\n', encoding="utf-8")
    sources = load_sources(path)
    assert sources.settings_for(sources.sources["a"]) == {
        "DOWNLOAD_MAXSIZE": 5 * 2**20, "DOWNLOAD_WARNSIZE": 2**19, "JOBCRAWL_ALLOW_PRIVATE": True,
        "JOBCRAWL_ALLOW_HOSTS": ["jobs.example.com", "127.0.0.1:8080"]}
    assert sources.settings_for(sources.sources["b"]) == {"DOWNLOAD_MAXSIZE": 2**18}
    assert sources.sources["b"].args == {"boards": ["b"]}


def test_project_settings_are_safe_by_default():
    settings = project_settings()
    assert (settings.getint("DOWNLOAD_MAXSIZE"), settings.getint("DOWNLOAD_WARNSIZE"), settings["TWISTED_DNS_RESOLVER"],
            settings.getbool("JOBCRAWL_ALLOW_PRIVATE"), settings.getlist("JOBCRAWL_ALLOW_HOSTS")) == (
        10 * 2**20, 2 * 2**20, "crawler.web.safety.SafeResolver", False, [])


def test_select_keeps_the_order_named_and_runs_disabled_sources_by_name(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text('[sources.a]\nspider = "ashby"\nboards = ["a"]\nenabled = false\n'
                    '[sources.b]\nspider = "lever"\nboards = ["b"]\neu = true\n', encoding="utf-8")
    sources = load_sources(path)
    assert [s.name for s in sources.select(["b", "a", "b"])] == ["b", "a"]
    assert [s.name for s in sources.select([], all_enabled=True)] == ["b"]
    with pytest.raises(SourcesError, match="no source named c, d \\(sources: a, b\\)"):
        sources.select(["c", "a", "d"])


LOCATE = [
    pytest.param("mine.toml", {"JOBCRAWL_SOURCES": "env.toml"}, True, "mine.toml", id="option-first"),
    pytest.param(None, {"JOBCRAWL_SOURCES": "env.toml"}, True, "env.toml", id="then-the-variable"),
    pytest.param(None, {"JOBCRAWL_SOURCES": ""}, True, "sources.toml", id="empty-variable-is-unset"),
    pytest.param(None, {}, True, "sources.toml", id="then-the-working-folder"),
    pytest.param(None, {}, False, "no sources file: --sources not given, $JOBCRAWL_SOURCES not set, no sources.toml in "
                 "{cwd}; name one, e.g. --sources seeds/sources.toml (the bundled example)", id="nowhere"),
    pytest.param("nope.toml", {}, True, "--sources nope.toml: no such file (try --sources seeds/sources.toml, the "
                 "bundled example)", id="missing-option-file"),
    pytest.param(None, {"JOBCRAWL_SOURCES": "gone.toml"}, True, "$JOBCRAWL_SOURCES gone.toml: no such file (try "
                 "--sources seeds/sources.toml, the bundled example)", id="missing-variable-file"),
    pytest.param(".", {}, True, "--sources .: is a folder (try --sources seeds/sources.toml, the bundled example)",
                 id="a-folder"),
]


@pytest.mark.parametrize(("option", "env", "has_default", "expected"), LOCATE)
def test_the_sources_file_is_the_option_then_the_variable_then_the_working_folders(
        tmp_path, monkeypatch, option, env, has_default, expected):
    monkeypatch.chdir(tmp_path)
    for name in ("mine.toml", "env.toml") + (("sources.toml",) if has_default else ()):
        (tmp_path / name).write_text("", encoding="utf-8")
    if "{cwd}" in expected or ":" in expected:
        with pytest.raises(SourcesError) as caught:
            locate_sources(option, env, tmp_path)
        assert str(caught.value) == expected.format(cwd=tmp_path)
    else:
        assert locate_sources(option, env, tmp_path) == Path(expected)


# --------------------------------------------------------------------------- why a request failed

def _failure(error: Exception, url: str = "https://api.lever.co/v0/postings/acme"):
    from scrapy import Request
    from twisted.python.failure import Failure

    try:
        raise error
    except Exception:
        failure = Failure()
    failure.request = Request(url)
    return failure


def _http_error(status: int):
    from scrapy import Request
    from scrapy.http import Response
    from scrapy.spidermiddlewares.httperror import HttpError

    return HttpError(Response("https://x.com/a", status=status, request=Request("https://x.com/a")), "Ignoring")


FAILURES = [
    pytest.param("CannotResolveHostError", "DNS lookup failed for api.lever.co", id="dns-scrapy"),
    pytest.param("DNSLookupError", "DNS lookup failed for api.lever.co", id="dns-twisted"),
    pytest.param("DownloadConnectionRefusedError", "connection refused by api.lever.co", id="refused-scrapy"),
    pytest.param("ConnectionRefusedError", "connection refused by api.lever.co", id="refused-twisted"),
    pytest.param("DownloadTimeoutError", "timed out on api.lever.co", id="timeout-scrapy"),
    pytest.param("TimeoutError", "timed out on api.lever.co", id="timeout-twisted"),
    pytest.param("TCPTimedOutError", "timed out on api.lever.co", id="tcp-timeout"),
    pytest.param("http-503", "HTTP 503", id="http-status"),
    pytest.param("redirects", "too many redirects", id="redirect-loop"),
    pytest.param("other", "ValueError: odd", id="anything-else"),
]


@pytest.mark.parametrize(("error", "reason"), FAILURES)
def test_failure_reason_names_what_a_user_can_act_on(error, reason):
    import scrapy.exceptions
    import twisted.internet.error

    from crawler.web.spiders.webbase import failure_reason

    if error == "http-503":
        exc = _http_error(503)
    elif error == "redirects":
        exc = scrapy.exceptions.IgnoreRequest("max redirections reached")
    elif error == "other":
        exc = ValueError("odd")
    else:
        exc = getattr(scrapy.exceptions, error, None) or getattr(twisted.internet.error, error)
        exc = exc("boom")
    assert failure_reason(_failure(exc)) == reason


def test_a_refused_port_is_named_with_its_host():
    from scrapy.exceptions import DownloadConnectionRefusedError

    from crawler.web.spiders.webbase import failure_reason

    failure = _failure(DownloadConnectionRefusedError("x"), "http://127.0.0.1:9/v0/postings/acme")
    assert failure_reason(failure) == "connection refused by 127.0.0.1:9"


@pytest.mark.parametrize(("statuses", "code"), [
    pytest.param(["ok", "ok"], 0, id="all-ok"),
    pytest.param(["ok", "partial"], 1, id="partial"),
    pytest.param(["ok", "failed"], 1, id="one-source-failed"),
    pytest.param(["failed", "failed"], 3, id="every-source-failed"),
    pytest.param(["failed"], 3, id="the-only-source-failed"),
    pytest.param(["ok", "interrupted"], 3, id="interrupted"),
])
def test_crawl_exit_status(statuses, code):
    from crawler.cli.crawl import crawl_exit_status

    assert crawl_exit_status(statuses) == code


# --------------------------------------------------------------------------- Retry-After

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=timezone.utc)
RETRY_AFTER = [
    pytest.param(b"1", 1.0, id="seconds-bytes"),
    pytest.param(" 120 ", 120.0, id="seconds-spaces"),
    pytest.param("Sun, 29 Nov 2026 12:00:30 GMT", 30.0, id="http-date"),
    pytest.param("Sun, 29 Nov 2026 11:59:00 GMT", 0.0, id="date-in-the-past"),
    pytest.param("-5", None, id="negative"),
    pytest.param("soon", None, id="garbage"),
    pytest.param(None, None, id="absent"),
]


@pytest.mark.parametrize(("value", "expected"), RETRY_AFTER)
def test_retry_after_seconds(value, expected):
    assert retry_after_seconds(value, NOW) == expected


# --------------------------------------------------------------------------- closing scope


def _posting(db, key: str) -> None:
    db.execute("INSERT INTO postings (key, source, source_id, locator, title, first_seen_stored, last_seen_stored, content_hash_stored, as_of_stored) "
               "VALUES (?, 'greenhouse', ?, 'l', 't', 'x', 'x', 'h', 'x')", (key, key))


def test_closing_touches_only_members_of_the_listing_read(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    for key in ("a1", "a2", "b1"):
        _posting(db, key)
    db.conn.commit()
    first = close_missing(db, {"greenhouse:a": ["a1", "a2"], "greenhouse:b": ["b1"]}, at="T1")
    assert first == {"listings": 2, "closed": 0, "reopened": 0}
    # board a is read without a2; board b is not read at all this time (its posting stays open)
    assert close_missing(db, {"greenhouse:a": ["a1"]}, at="T2") == {"listings": 1, "closed": 1, "reopened": 0}
    assert close_missing(db, {"greenhouse:a": ["a1"]}, at="T3") == {"listings": 1, "closed": 0, "reopened": 0}
    assert db.execute("SELECT key, closed_at FROM postings ORDER BY key").fetchall() == [
        ("a1", None), ("a2", "T2"), ("b1", None)]
    db.execute("UPDATE postings SET closed_at = NULL WHERE key = 'a2'")  # what the writer does when it stores a2 again
    assert close_missing(db, {"greenhouse:a": ["a1", "a2"]}, at="T4") == {"listings": 1, "closed": 0, "reopened": 1}
    assert db.execute("SELECT listing, key, first_seen, last_seen, closed_at FROM listing_postings ORDER BY 1, 2").fetchall() == [
        ("greenhouse:a", "a1", "T1", "T4", None), ("greenhouse:a", "a2", "T1", "T4", None),
        ("greenhouse:b", "b1", "T1", "T1", None)]
    # an empty complete listing closes everything it held
    assert close_missing(db, {"greenhouse:b": []}, at="T5") == {"listings": 1, "closed": 1, "reopened": 0}
    db.close()


# --------------------------------------------------------------------------- the lock


def test_lock_is_exclusive_and_released(tmp_path):
    db = tmp_path / "jobs.db"
    with db_lock(db) as path:
        assert path == Path(f"{db}.lock")
        with pytest.raises(LockHeld, match=r"jobs\.db is locked by another jobcrawl run \(pid \d+, started "):
            with db_lock(db):
                pass
    assert not path.exists()  # removed before it was released
    with db_lock(db):  # released
        assert path.exists()


# --------------------------------------------------------------------------- spiders' requests

BOARD_URLS = [
    pytest.param("greenhouse", {"boards": "gitlab,acme"}, [
        "https://boards-api.greenhouse.io/v1/boards/gitlab/jobs?content=true",
        "https://boards-api.greenhouse.io/v1/boards/acme/jobs?content=true"], id="greenhouse-comma-separated"),
    pytest.param("lever", {"boards": ["matchgroup"]}, ["https://api.lever.co/v0/postings/matchgroup?mode=json"],
                 id="lever-global"),
    pytest.param("lever", {"boards": ["matchgroup"], "eu": "true"}, ["https://api.eu.lever.co/v0/postings/matchgroup?mode=json"],
                 id="lever-eu"),
    pytest.param("lever", {"boards": ["x"], "eu": True, "base_url": "http://127.0.0.1:9/lever/"},
                 ["http://127.0.0.1:9/lever/v0/postings/x?mode=json"], id="lever-base-url-wins"),
    pytest.param("ashby", {"boards": ["Example Co"]},
                 ["https://api.ashbyhq.com/posting-api/job-board/Example%20Co?includeCompensation=true"], id="ashby-quoted"),
]


@pytest.mark.parametrize(("spider", "args", "expected"), BOARD_URLS)
def test_board_spiders_request_the_listing_urls(spider, args, expected):
    from crawler.web.sources import project_spiders

    instance = project_spiders()[spider](**args)
    assert [instance.board_url(board) for board in instance.args.boards] == expected


def test_jsonld_spider_reads_robots_sitemaps_and_filters_links():
    from crawler.web.spiders.jsonld import JsonLdSpider

    spider = JsonLdSpider(start_urls="https://careers.example.com/jobs,https://jobs.example.org:8443/",
                          sitemap_urls=["https://careers.example.com/sitemap.xml"], robots_sitemaps="yes",
                          allow=[r"/jobs/\d+"], deny=["/apply"])
    assert spider.sitemap_urls == ["https://careers.example.com/sitemap.xml", "https://careers.example.com/robots.txt",
                                   "https://jobs.example.org:8443/robots.txt"]
    assert spider.allowed_domains == ["careers.example.com", "jobs.example.org"]
    urls = ["https://careers.example.com/jobs/12", "https://careers.example.com/jobs/12/apply",
            "https://careers.example.com/about", "https://eu.careers.example.com/jobs/3", "https://other.example.net/jobs/1",
            "https://jobs.example.org:8443/jobs/5", "https://jobs.example.org/jobs/5",
            "http://careers.example.com:8080/jobs/1", "file:///etc/jobs/1"]
    assert [(spider.wanted(u), spider.on_site(u)) for u in urls] == [
        (True, True), (False, True), (False, True), (True, True), (True, False),
        (True, True), (True, False), (True, False), (True, False)]  # the start URL's port only


def test_every_web_spider_knows_where_it_may_go():
    """Each web spider names its own origins (crawler/web/safety.py): the example source of every spider in
    seeds/sources.toml builds a spider whose origins admit the URLs it starts from."""
    from crawler.web.sources import load_sources, project_spiders
    from crawler.web.spiders.webbase import WebSpider

    spiders = project_spiders()
    sources = load_sources(ROOT / "seeds" / "sources.toml")
    seen = set()
    for source in sources.sources.values():
        cls = spiders[source.spider]
        spider = cls(**source.args)
        starts = [spider.board_url(b) for b in spider.args.boards] if hasattr(spider, "board_url") else (
            [r for r in getattr(spider.args, "start_urls", [])] + list(getattr(spider.args, "sitemap_urls", [])))
        assert spider.origins(), source.name
        for url in starts:
            assert spider.on_site(url), (source.name, url, spider.origins())
        seen.add(source.spider)
    assert seen == {name for name, cls in spiders.items() if issubclass(cls, WebSpider)}


def test_no_spider_callback_returns_a_value_from_a_generator():
    """The check Scrapy makes per response (``WARN_ON_GENERATOR_RETURN_VALUE``) is off in the project settings, as its
    cache misses on bound methods; it is made here once, over every generator method of every spider instead."""
    import inspect

    from scrapy.spiderloader import SpiderLoader
    from scrapy.utils.misc import is_generator_with_return_value

    assert project_settings().getbool("WARN_ON_GENERATOR_RETURN_VALUE") is False
    loader = SpiderLoader.from_settings(project_settings())
    checked = {f"{cls.__name__}.{name}": is_generator_with_return_value(method)
               for cls in map(loader.load, loader.list())
               for name, method in inspect.getmembers(cls, inspect.isgeneratorfunction)
               if method.__module__.startswith("crawler.")}
    assert len(checked) >= 10
    assert [name for name, returns in checked.items() if returns] == []
