"""Recruitee careers-site API → RawPosting.

Listing: ``GET https://{company}.recruitee.com/api/offers/`` (``{"offers": […]}``: every published
offer with its description, no paging; a complete listing). Single offer: ``/api/offers/{slug}``
(``{"offer": {…}}``). A company on its own domain serves the same paths there.

Salary: the offer's ``salary`` object (``{"min": "3750", "max": "5250", "period": "month",
"currency": "EUR"}``, figures as strings) becomes ``EUR 3750-5250/MONTH``, the object itself goes
to ``extra["salary_json"]``; without figures, the line of the description that states the pay.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from crawler.web.pages.base import BoardPage, extra_text, json_text, shape_error, text_of
from crawler.web.pages.html import blocks_text, description_blocks
from crawler.web.pages.parts import TextEntry, joined, pay_object

__all__ = ["RecruiteePage", "RecruiteeOffer"]


class RecruiteePage(BoardPage):
    """A Recruitee offers listing or single offer.

    ``board`` is the company's Recruitee subdomain (taken from the host ``{board}.recruitee.com``
    when not given). Company: the configured ``company`` display name, else the offer's
    ``company_name``, else the subdomain.
    """

    source = "recruitee"
    board_pattern = re.compile(r"(?!)")  # the board is in the host, not the path

    def __init__(self, url: str, body: bytes | str, *, board: str | None = None, **kwargs: Any):
        host = urlsplit(url).hostname or ""
        if board is None and host.endswith(".recruitee.com"):
            board = host.split(".", 1)[0]
        super().__init__(url, body, board=board, **kwargs)

    def is_listing(self) -> bool:
        return isinstance(self.data, dict) and isinstance(self.data.get("offers"), list)

    def complete_listing(self) -> bool:
        return self.is_listing()

    def entries(self) -> list[RecruiteeOffer]:
        data = self.data
        if self.is_listing():
            offers = data["offers"]
        elif isinstance(data, dict) and isinstance(data.get("offer"), dict):
            offers = [data["offer"]]
        else:
            raise shape_error(data, "an object with an 'offers' list or one 'offer'", "Recruitee")
        return [RecruiteeOffer(self, offer, i) for i, offer in enumerate(offers)]


class RecruiteeOffer(TextEntry):
    """One Recruitee offer."""

    page: RecruiteePage

    def parts(self) -> list[tuple[str | None, Any]]:
        return [(None, self.get("description")), (None, self.get("requirements"))]

    def pay(self) -> str | None:
        """``salary`` as ``EUR 3750-5250/MONTH``."""
        return pay_object(self.get("salary"))

    def source_id(self) -> str:
        return self.required_id("id")

    def url(self) -> str | None:
        return self.text("careers_url")

    def company(self) -> str | None:
        return self.page.company or self.text("company_name") or self.page.board

    def title(self) -> str | None:
        return self.text("title")

    def location(self) -> str | None:
        return self.text("location") or ", ".join(
            t for t in (self.text("city"), self.text("state_name"), self.text("country")) if t) or None

    def posted(self) -> str | None:
        return self.text("published_at") or self.text("created_at")

    def valid_through(self) -> str | None:
        return self.text("close_at")

    def employment_type(self) -> str | None:
        return self.text("employment_type_code")

    def work_mode(self) -> str | None:
        """``Remote``, ``Hybrid`` or ``On-site`` from the offer's flags (the first one set)."""
        for key, mode in (("remote", "Remote"), ("hybrid", "Hybrid"), ("on_site", "On-site")):
            if self.get(key) is True:
                return mode
        return None

    def category(self) -> str | None:
        return self.text("department") or self.text("category_code")

    def experience(self) -> str | None:
        return self.text("experience_code")

    def education(self) -> str | None:
        return self.text("education_code")

    def tags(self) -> list[str]:
        tags = self.get("tags")
        return [t for t in (text_of(v) for v in tags) if t] if isinstance(tags, list) else []

    def extra(self) -> dict[str, str]:
        extra = {key: extra_text(self.get(key)) for key in (
            "slug", "guid", "country_code", "state_code", "postal_code", "careers_apply_url", "category_code",
            "min_hours", "max_hours", "updated_at", "status")}
        extra["locations"] = joined(self.get("locations"), "name", "; ")
        highlight = self.get("highlight")
        extra["highlight"] = blocks_text(description_blocks(highlight)) if isinstance(highlight, str) else None
        if self.pay():
            extra["salary_json"] = json_text(self.get("salary"))
        return {k: v for k, v in extra.items() if v}
