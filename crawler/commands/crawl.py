"""``scrapy crawl <spider> -a NAME=VALUE … -o out.jsonl``, as Scrapy's own command, with two differences:

- the spider's arguments are checked before the crawl starts: a wrong one is a usage error of one line
  naming the spider's arguments (:class:`crawler.arguments.SpiderArgumentError`), not a traceback;
- ``-o`` / ``-O`` feeds hold the postings only (``item_classes``), unless the feed URI names its own
  classes: the raw inputs and quarantine records every spider also yields go to the database.
"""

from __future__ import annotations

from scrapy.commands.crawl import Command as ScrapyCrawl
from scrapy.exceptions import UsageError

from crawler.arguments import SpiderArgumentError

POSTINGS = "normalize.models.Posting"


class Command(ScrapyCrawl):
    def process_options(self, args, opts):
        super().process_options(args, opts)
        if opts.output or opts.overwrite_output:
            feeds = {uri: {"item_classes": [POSTINGS], **options} for uri, options in self.settings.getdict("FEEDS").items()}
            self.settings.set("FEEDS", feeds, priority="cmdline")

    def run(self, args, opts):
        if len(args) == 1:
            try:
                spidercls = self.crawler_process.spider_loader.load(args[0])
            except KeyError:
                spidercls = None  # Scrapy's own message names the spiders
            if spidercls is not None:
                try:
                    spidercls(**opts.spargs)
                except SpiderArgumentError as err:
                    raise UsageError(str(err), print_help=False) from None
        super().run(args, opts)
