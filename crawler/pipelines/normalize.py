"""Normalize raw postings into :class:`Posting` (the logic is in ``normalize.posting``)."""

from __future__ import annotations

from itemadapter import ItemAdapter

from normalize.models import Quarantined, RawPosting
from normalize.posting import normalize_posting


class NormalizePipeline:
    def __init__(self, stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats)

    def process_item(self, item, spider=None):
        if not isinstance(item, RawPosting):
            return item
        try:
            posting = normalize_posting(item)
        except Exception as err:  # keep the run going: the posting is kept in quarantine with the reason
            self.stats.inc_value("jobcrawl/normalize_error")
            adapter = ItemAdapter(item)
            return Quarantined(
                source=adapter["source"], locator=adapter["locator"], position=adapter["position"],
                input_sha256=adapter.get("input_sha256"), reason="normalize_error",
                detail=f"normalize error: {type(err).__name__}: {err}", text=item.model_dump_json(),
                fetched_at=adapter["fetched_at"],
            )
        for problem in posting.problems:
            self.stats.inc_value("jobcrawl/quality/" + problem.split(":")[0].split(" stated")[0])
        if posting.salary.status != "missing":
            self.stats.inc_value(f"jobcrawl/salary/{posting.salary.status}")
        return posting
