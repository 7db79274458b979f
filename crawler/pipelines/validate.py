"""Validate raw postings: required fields present and sane, or quarantine with the reason."""

from __future__ import annotations

from itemadapter import ItemAdapter

from normalize.models import Quarantined, RawPosting

OPTIONAL_FIELDS = ("posted", "salary", "location", "category", "work_mode", "employment_type")


class ValidatePipeline:
    def __init__(self, stats, max_title: int):
        self.stats = stats
        self.max_title = max_title

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats, crawler.settings.getint("JOBCRAWL_MAX_TITLE_CHARS"))

    def problem(self, item) -> tuple[str, str] | None:
        """(reason, detail) when the posting cannot be stored, else None."""
        adapter = ItemAdapter(item)
        for name in ("company", "title"):
            value = (adapter.get(name) or "").strip()
            if not value:
                return "invalid", f"posting has no {name}"
            if len(value) > self.max_title:
                return "invalid", f"{name} is {len(value)} characters long (limit {self.max_title}): not a {name}"
        return None

    def process_item(self, item, spider=None):
        if not isinstance(item, RawPosting):
            return item
        adapter = ItemAdapter(item)
        for name in OPTIONAL_FIELDS:
            if not adapter.get(name):
                self.stats.inc_value(f"jobcrawl/field/{name}/missing")
        problem = self.problem(item)
        if problem is None:
            return item
        reason, detail = problem
        self.stats.inc_value(f"jobcrawl/invalid/{reason}")
        return Quarantined(
            source=adapter["source"], locator=adapter["locator"], position=adapter["position"],
            input_sha256=adapter.get("input_sha256"), reason=reason, detail=detail,
            text=item.model_dump_json(), fetched_at=adapter["fetched_at"],
        )
