"""``recruitee``: Recruitee careers sites through their public offers API.

One request per company: ``{base_url}/api/offers/`` (every published offer with its description;
a complete listing). ``base_url`` defaults to ``https://{board}.recruitee.com``: ``{board}`` is
filled with each board; a company on its own domain gives that domain. Parsed by
:class:`crawler.web.pages.recruitee.RecruiteePage`.

Arguments: ``boards`` (Recruitee subdomains), ``company`` (display name, wins over the offers'
``company_name``), ``base_url``.

    scrapy crawl recruitee -a boards=channable -a company=Channable
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from crawler.web.pages.recruitee import RecruiteePage
from crawler.web.safety import Origin

from crawler.web.spiders.webbase import BoardArgs, BoardSpider

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


class RecruiteeArgs(BoardArgs):
    base_url: str = Field("https://{board}.recruitee.com",
                          description="Careers site root; `{board}` is replaced by each board.")

    @field_validator("boards")
    @classmethod
    def _subdomains(cls, boards: list[str]) -> list[str]:
        for board in boards:  # a board goes into a host name
            if not _LABEL.fullmatch(board):
                raise ValueError(f"not a Recruitee subdomain: {board!r}")
        return boards


class RecruiteeSpider(BoardSpider):
    name = "recruitee"
    Args = RecruiteeArgs
    page_class = RecruiteePage
    path = "/api/offers/"

    def own_origins(self) -> list[Origin]:
        """Each board's own site (``base_url`` names one host per board)."""
        return list(dict.fromkeys(Origin.of_url(self.board_url(board)) for board in self.args.boards))

    def board_url(self, board: str) -> str:
        return self.args.base_url.replace("{board}", board) + self.path
