"""``greenhouse``: Greenhouse job boards through the public Job Board API.

One request per board: ``{base_url}/v1/boards/{token}/jobs?content=true`` (every published job
with its description; a complete listing). Parsed by :class:`crawler.web.pages.greenhouse.GreenhousePage`.

Arguments: ``boards`` (board tokens, comma-separated on the command line), ``company``
(display name, wins over the jobs' ``company_name``), ``base_url``.

    scrapy crawl greenhouse -a boards=gitlab -a company=GitLab
"""

from __future__ import annotations

from pydantic import Field

from crawler.web.pages.greenhouse import GreenhousePage

from crawler.web.spiders.webbase import BoardArgs, BoardSpider


class GreenhouseArgs(BoardArgs):
    base_url: str = Field("https://boards-api.greenhouse.io", description="Job Board API root.")


class GreenhouseSpider(BoardSpider):
    name = "greenhouse"
    Args = GreenhouseArgs
    page_class = GreenhousePage
    path = "/v1/boards/{board}/jobs?content=true"
