"""Pure normalization logic: no Scrapy, no SQLite. Reused by pipelines and re-run commands."""
