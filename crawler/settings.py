"""Scrapy settings for jobcrawl: pipeline order, politeness, storage.

Every ``JOBCRAWL_*`` setting can be overridden on the command line (``-s``) or by the CLI.
"""

import os

from scrapy.settings import default_settings as _scrapy_defaults

from crawler.files import MAX_FILE_BYTES as _max_file_bytes  # lower case: not a setting of its own

BOT_NAME = "jobcrawl"
SPIDER_MODULES = ["crawler.web.spiders", "crawler.ingest.textdump", "crawler.ingest.tabular", "crawler.reparse.spider"]
NEWSPIDER_MODULE = "crawler.web.spiders"
COMMANDS_MODULE = "crawler.commands"   # `scrapy crawl` checks spider arguments first (crawler/commands/crawl.py)
# Scrapy caches this check by weak reference to the callback: a bound method (callback=self.parse) dies
# with its request, so every response re-read the spider's source and parsed it (a tenth of an ingest of
# one-posting files). Our callbacks return no value (tests/test_crawl_units.py checks them once).
WARN_ON_GENERATOR_RETURN_VALUE = False

EXTENSIONS = {"crawler.extensions.QuietLog": 0,
              "crawler.web.killsafe.JobdirGuard": 0}  # a JOBDIR left by a killed crawl is discarded, not resumed
# False: an error is one log line without its traceback, a failed request only the run's line per
# source (crawler.extensions.QuietLog); the CLI sets it false unless -v.
JOBCRAWL_LOG_TRACEBACKS = True

# The one pipeline chain, one concern each (see crawler/pipelines.py). Both cores are used
# by running the whole chain in worker processes over shards of the inputs (crawler/run/runner.py).
ITEM_PIPELINES = {
    "crawler.pipelines.ValidatePipeline": 100,
    "crawler.pipelines.NormalizePipeline": 200,
    "crawler.pipelines.SkillsPipeline": 300,
    "crawler.pipelines.StorePipeline": 500,
}

# Storage
JOBCRAWL_DB = "jobs.db"
JOBCRAWL_BATCH_SIZE = 500          # postings per transaction
JOBCRAWL_RUN_ID = None             # set by the run: the runs row this crawl reports to
JOBCRAWL_MAX_FILE_SIZE = _max_file_bytes  # bytes (256 MB); a larger input file is quarantined, its first 64 KB kept
                                         # (jobcrawl ingest --max-file-size)
JOBCRAWL_MAX_TITLE_CHARS = 200     # longer "titles" are not titles: quarantined
JOBCRAWL_REPARSE = False           # parse inputs again even when unchanged since their last parse
JOBCRAWL_TAXONOMY = None           # skill taxonomy file; None = the packaged normalize/data/skills.toml
JOBCRAWL_AS_OF_SOURCE = "fetched"  # what relative post times count back from: fetched, as_of (--as-of), file_mtime
JOBCRAWL_TZ = None                 # the sources' time zone (IANA); None = Asia/Shanghai for Chinese postings, else UTC

# Politeness (web spiders). File spiders turn the throttling off for local files.
# Who we are: the User-Agent names the project and a contact (a URL or mailto:) that site owners
# can reach; set JOBCRAWL_CONTACT in the environment, with -s, or as `contact` in the sources file.
JOBCRAWL_CONTACT = os.environ.get("JOBCRAWL_CONTACT") or "https://github.com/jobcrawl/jobcrawl"
USER_AGENT = "jobcrawl/0.1 (+{contact})"     # {contact} filled by ContactUserAgentMiddleware
ROBOTSTXT_OBEY = True                        # never fetch what robots.txt disallows
ROBOTSTXT_USER_AGENT = "jobcrawl"            # the token robots.txt rules are matched against
# AutoThrottle: start 1 s apart per host, then follow the server's latency (at most 30 s apart).
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
CONCURRENT_REQUESTS = 16                     # all hosts of one spider together
CONCURRENT_REQUESTS_PER_DOMAIN = 2           # at most 2 requests in flight per host
DOWNLOAD_TIMEOUT = 30
REDIRECT_MAX_TIMES = 5                       # a redirect loop fails fast

# Safety (crawler/web/safety.py; docs/safety.md): requests go to the source's own hosts only, never to
# loopback, private, link-local or other non-public addresses (checked on the DNS answers the
# connection uses) unless the source sets allow_private; responses are capped, decompressed too.
TWISTED_DNS_RESOLVER = "crawler.web.safety.SafeResolver"
JOBCRAWL_ALLOW_PRIVATE = False               # a source's `allow_private`: its hosts may resolve to private addresses
JOBCRAWL_ALLOW_HOSTS = []                    # a source's `allow_hosts`: more host[:port] it may fetch from
DOWNLOAD_MAXSIZE = 10 * 2**20                # a source's `max_size_mb`: larger bodies (or decompressed bodies) are refused
DOWNLOAD_WARNSIZE = 2 * 2**20                # a source's `warn_size_mb`: larger bodies are logged
DEPTH_LIMIT = 5                              # links followed from a start URL, at most this deep
# Retries: 429 and 5xx, each retry after Retry-After (if the server sends one, up to
# JOBCRAWL_RETRY_AFTER_MAX seconds) or after 1, 2, 4 … s (JOBCRAWL_RETRY_BACKOFF doubling,
# at most JOBCRAWL_RETRY_BACKOFF_MAX). See crawler/web/middlewares.py.
RETRY_ENABLED = True
RETRY_TIMES = 3
RETRY_HTTP_CODES = [429, 500, 502, 503, 504, 522, 524, 408]
JOBCRAWL_RETRY_BACKOFF = 1.0
JOBCRAWL_RETRY_BACKOFF_MAX = 60.0
JOBCRAWL_RETRY_AFTER_MAX = 300.0
# Request cap per spider run: at most this many requests go over the network (0 = no cap; cache
# hits are free); then the spider closes (reason request_cap). `jobcrawl crawl --max-requests N` and
# `max_requests` in the sources file set it.
JOBCRAWL_MAX_REQUESTS = 0
# Requests a spider reading sitemaps lets wait in its queue (a source's `max_queued`): the other entries
# stay in the sitemap, read as the queue drains, and none beyond what the request cap has left.
JOBCRAWL_MAX_QUEUED = 5000
DOWNLOADER_MIDDLEWARES = {
    # Web spiders only; the source's hosts are checked first, before robots.txt and the cache.
    "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,  # OriginMiddleware checks ports too, and redirects
    "crawler.web.safety.OriginMiddleware": 40,
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawler.web.safety.RobotsRfcMiddleware": 100,
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "crawler.web.safety.LoopCheckingMetaRefreshMiddleware": 580,
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware": None,
    "crawler.web.safety.CappedCompressionMiddleware": 590,
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "crawler.web.safety.LoopCheckingRedirectMiddleware": 600,
    "crawler.web.safety.DownloadLimitsMiddleware": 960,   # closest to the network: names refused and cut-off downloads
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "crawler.web.middlewares.BackoffRetryMiddleware": 550,
    "scrapy.downloadermiddlewares.useragent.UserAgentMiddleware": None,
    "crawler.web.middlewares.ContactUserAgentMiddleware": 500,
    "crawler.web.middlewares.RequestCapMiddleware": 940,  # below the HTTP cache: cache hits are free
    "crawler.web.middlewares.WireStatsMiddleware": 950,   # below the HTTP cache: what crossed the network
}

# Incremental crawls: an HTTP cache with RFC 2616 semantics. A stored page is revalidated with
# If-None-Match / If-Modified-Since, so an unchanged page costs a 304 and no body, and its
# postings flow through the pipelines again (only last_seen moves). Web spiders turn it on
# (crawler/web/spiders/webbase.py); `jobcrawl crawl` keeps it next to the database (<db>.httpcache/).
HTTPCACHE_ENABLED = False
HTTPCACHE_POLICY = "scrapy.extensions.httpcache.RFC2616Policy"
HTTPCACHE_STORAGE = "crawler.web.killsafe.WholeEntryCacheStorage"  # Scrapy's files, a hit only when whole
HTTPCACHE_DIR = "httpcache"                  # relative: under the project's .scrapy/ folder
HTTPCACHE_GZIP = True
JOBCRAWL_HTTPCACHE_MAX_AGE_DAYS = 30        # entries not requested for this long are removed after a crawl (0: never)

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
LOG_FORMATTER = "crawler.logformatter.QuietLogFormatter"  # no per-item DEBUG records above DEBUG
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False     # Scrapy 2.19's localhost code-execution server and its job files: not for scheduled runs


def _without(base: dict, *dropped: str) -> dict:
    return {key: value for key, value in base.items() if key not in dropped}


# What a spider that makes no request (a file ingest, a reparse) runs with, over the project settings: no
# download handler, no downloader middleware, no telnet console or remote control (none would be used, and their
# modules, TLS, cookies and aiohttp among them, are not imported).
no_requests = {
    "DOWNLOAD_HANDLERS_BASE": {}, "DOWNLOAD_HANDLERS": {},
    "DOWNLOADER_MIDDLEWARES_BASE": {}, "DOWNLOADER_MIDDLEWARES": {},
    "EXTENSIONS_BASE": _without(_scrapy_defaults.EXTENSIONS_BASE, "scrapy.extensions.telnet.TelnetConsole",
                                "scrapy.extensions.remote_control.RemoteControl"),
}


def project_settings(overrides: dict | None = None):
    """crawler.settings with ``overrides`` applied at command-line priority."""
    from scrapy.settings import Settings

    settings = Settings()
    settings.setmodule("crawler.settings", priority="project")
    for key, value in (overrides or {}).items():
        settings.set(key, value, priority="cmdline")
    return settings
