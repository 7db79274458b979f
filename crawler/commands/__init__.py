"""Scrapy commands of the project (``COMMANDS_MODULE``): ``scrapy crawl`` with jobcrawl's spider-argument checks."""
