"""``lever``: Lever sites through the public Postings API.

One request per site: ``{base_url}/v0/postings/{site}?mode=json`` (the whole site, no paging; a
complete listing). Sites hosted in the EU live on ``api.eu.lever.co``: pass ``eu=true``. Parsed by
:class:`crawler.web.pages.lever.LeverPage`.

Arguments: ``boards`` (site names), ``eu``, ``company`` (display name, else the site name),
``base_url`` (wins over ``eu``).

    scrapy crawl lever -a boards=matchgroup -a company="Match Group"
"""

from __future__ import annotations

from pydantic import Field, model_validator

from crawler.web.pages.lever import LeverPage

from crawler.web.spiders.webbase import BoardArgs, BoardSpider, Flag

HOSTS = {False: "https://api.lever.co", True: "https://api.eu.lever.co"}


class LeverArgs(BoardArgs):
    eu: Flag = Field(False, description="The site is hosted in the EU (api.eu.lever.co).")
    base_url: str | None = Field(None, description="Postings API root; default by `eu`.")

    @model_validator(mode="after")
    def _host(self) -> LeverArgs:
        if self.base_url is None:
            self.base_url = HOSTS[self.eu]
        return self


class LeverSpider(BoardSpider):
    name = "lever"
    Args = LeverArgs
    page_class = LeverPage
    path = "/v0/postings/{board}?mode=json"
