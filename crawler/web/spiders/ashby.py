"""``ashby``: Ashby job boards through the public posting API.

One request per board: ``{base_url}/posting-api/job-board/{board}?includeCompensation=true`` (every
listed job with compensation tiers; a complete listing). Parsed by :class:`crawler.web.pages.ashby.AshbyPage`.

Arguments: ``boards`` (job-board names), ``company`` (display name, else the board name), ``base_url``.

    scrapy crawl ashby -a boards=linear -a company=Linear
"""

from __future__ import annotations

from pydantic import Field

from crawler.web.pages.ashby import AshbyPage

from crawler.web.spiders.webbase import BoardArgs, BoardSpider


class AshbyArgs(BoardArgs):
    base_url: str = Field("https://api.ashbyhq.com", description="Posting API root.")


class AshbySpider(BoardSpider):
    name = "ashby"
    Args = AshbyArgs
    page_class = AshbyPage
    path = "/posting-api/job-board/{board}?includeCompensation=true"
