"""SmartRecruiters Posting API → RawPosting.

Listing: ``GET https://api.smartrecruiters.com/v1/companies/{company}/postings?limit=100&offset=0``
(``{"offset", "limit", "totalFound", "content": […]}``, at most 100 a page; the pages together are
the whole board, a complete listing). The listing has no description: each posting's detail,
``/v1/companies/{company}/postings/{id}`` (one posting with ``jobAd.sections``), has it.

Sections: ``jobAd.sections`` in order (company description, job description, qualifications,
additional information), each under its own ``title``. Salary: the ``compensation`` object
(``{"min", "max", "currency", "period"}``) as ``USD 95000-130000/YEAR``, else the description's pay line.
"""

from __future__ import annotations

import re
from typing import Any

from crawler.web.pages.base import BoardPage, extra_text, json_text, shape_error, text_of
from crawler.web.pages.parts import TextEntry, joined, pay_object

__all__ = ["SmartRecruitersPage", "SmartRecruitersPosting", "PUBLIC_HOST"]

PUBLIC_HOST = "https://jobs.smartrecruiters.com"
"""Where a posting's public page lives: ``{PUBLIC_HOST}/{company identifier}/{id}``."""


class SmartRecruitersPage(BoardPage):
    """A SmartRecruiters listing page or one posting's detail.

    ``board`` is the company identifier (taken from the URL path ``/companies/{id}`` when not given).
    Company: the configured ``company`` display name, else the posting's ``company.name``, else the identifier.
    """

    source = "smartrecruiters"
    board_pattern = re.compile(r"/companies/([^/?#]+)")

    def is_listing(self) -> bool:
        return isinstance(self.data, dict) and isinstance(self.data.get("content"), list)

    def complete_listing(self) -> bool:
        return self.is_listing()

    def next_offset(self) -> int | None:
        """The ``offset`` of the next listing page; None on the last page (or when this is no listing)."""
        if not self.is_listing():
            return None
        data = self.data
        offset, total, count = data.get("offset"), data.get("totalFound"), len(data["content"])
        if not isinstance(offset, int) or not isinstance(total, int) or isinstance(total, bool) or not count:
            return None
        return offset + count if offset + count < total else None

    def entries(self) -> list[SmartRecruitersPosting]:
        data = self.data
        if self.is_listing():
            postings = data["content"]
        elif isinstance(data, dict) and "id" in data and "name" in data:
            postings = [data]
        else:
            raise shape_error(data, "an object with a 'content' list or one posting", "SmartRecruiters")
        return [SmartRecruitersPosting(self, posting, i) for i, posting in enumerate(postings)]


class SmartRecruitersPosting(TextEntry):
    """One SmartRecruiters posting (a listing entry, or a detail with ``jobAd``)."""

    page: SmartRecruitersPage

    def part(self, key: str) -> dict:
        value = self.get(key)
        return value if isinstance(value, dict) else {}

    def parts(self) -> list[tuple[str | None, Any]]:
        """``(title, html)`` of each ``jobAd.sections`` entry, in order (an object or a list of them)."""
        sections = self.part("jobAd").get("sections")
        values = sections.values() if isinstance(sections, dict) else sections if isinstance(sections, list) else []
        return [(text_of(s.get("title")), s.get("text")) for s in values if isinstance(s, dict)]

    def pay(self) -> str | None:
        """``compensation`` as ``USD 95000-130000/YEAR``."""
        return pay_object(self.get("compensation"))

    def source_id(self) -> str:
        return self.required_id("id")

    def url(self) -> str | None:
        identifier = text_of(self.part("company").get("identifier")) or self.page.board
        return self.text("postingUrl") or (f"{PUBLIC_HOST}/{identifier}/{self.source_id()}" if identifier else None)

    def company(self) -> str | None:
        return self.page.company or text_of(self.part("company").get("name")) or self.page.board

    def title(self) -> str | None:
        return self.text("name")

    def location(self) -> str | None:
        location = self.part("location")
        return text_of(location.get("fullLocation")) or ", ".join(
            t for t in (text_of(location.get(k)) for k in ("city", "region", "country")) if t) or None

    def posted(self) -> str | None:
        return self.text("releasedDate")

    def employment_type(self) -> str | None:
        return joined(self.get("typeOfEmployment"))

    def seniority(self) -> str | None:
        return joined(self.get("experienceLevel"))

    def work_mode(self) -> str | None:
        location = self.part("location")
        return "Remote" if location.get("remote") is True else "Hybrid" if location.get("hybrid") is True else None

    def category(self) -> str | None:
        return joined(self.get("function")) or joined(self.get("department"))

    def extra(self) -> dict[str, str]:
        extra = {key: extra_text(self.get(key)) for key in ("refNumber", "uuid", "applyUrl", "visibility")}
        extra.update(industry=joined(self.get("industry")), department=joined(self.get("department")),
                     language=joined(self.get("language"), "code"))
        fields = self.get("customField")
        for field in fields if isinstance(fields, list) else []:
            if isinstance(field, dict) and text_of(field.get("fieldLabel")):
                extra[f"custom.{text_of(field['fieldLabel'])}"] = text_of(field.get("valueLabel"))
        if self.part("compensation"):
            extra["salary_json"] = json_text(self.part("compensation"))
        return {k: v for k, v in extra.items() if v}
