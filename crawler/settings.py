"""Scrapy settings for jobcrawl: pipeline order, politeness, storage.

Every ``JOBCRAWL_*`` setting can be overridden on the command line (``-s``) or by the CLI.
"""

BOT_NAME = "jobcrawl"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"

# Pipelines, one concern each (see crawler/pipelines/__init__.py).
ITEM_PIPELINES = {
    "crawler.pipelines.validate.ValidatePipeline": 100,
    "crawler.pipelines.normalize.NormalizePipeline": 200,
    "crawler.pipelines.skills.SkillsPipeline": 300,
    "crawler.pipelines.store.StorePipeline": 900,
}

# Storage
JOBCRAWL_DB = "jobs.db"
JOBCRAWL_BATCH_SIZE = 500          # postings per transaction
JOBCRAWL_RUN_ID = None             # set by the CLI: the runs row this crawl reports to
JOBCRAWL_MAX_FILE_MB = 64          # text dumps larger than this are quarantined unread
JOBCRAWL_MAX_TITLE_CHARS = 200     # longer "titles" are not titles: quarantined
JOBCRAWL_TAXONOMY = None           # skill taxonomy file; None = the packaged normalize/data/skills.toml

# Politeness (web spiders). File spiders turn the throttling off for local files.
JOBCRAWL_CONTACT = "https://github.com/jobcrawl/jobcrawl"
USER_AGENT = f"jobcrawl/0.1 (+{JOBCRAWL_CONTACT})"
ROBOTSTXT_OBEY = True
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
CONCURRENT_REQUESTS = 16
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_TIMEOUT = 30
RETRY_ENABLED = True
RETRY_TIMES = 3
RETRY_HTTP_CODES = [429, 500, 502, 503, 504, 522, 524, 408]

FEED_EXPORT_ENCODING = "utf-8"
LOG_LEVEL = "INFO"
TELNETCONSOLE_ENABLED = False
