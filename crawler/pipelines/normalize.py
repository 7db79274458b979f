"""Normalize raw postings into :class:`Posting` (the logic is in ``normalize.posting``)."""

from __future__ import annotations

from itemadapter import ItemAdapter

from normalize.models import Quarantined, RawPosting
from normalize.posting import normalize_posting


class NormalizePipeline:
    """``JOBCRAWL_AS_OF_SOURCE``: what the inputs' as_of anchors are (``fetched``, ``as_of``, ``file_mtime``);
    ``JOBCRAWL_TZ``: the sources' time zone (default: Asia/Shanghai for Chinese postings, else UTC)."""

    def __init__(self, stats, as_of_source: str = "fetched", tz: str | None = None):
        self.stats = stats
        self.as_of_source = as_of_source
        self.tz = tz

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        return cls(crawler.stats, settings.get("JOBCRAWL_AS_OF_SOURCE") or "fetched", settings.get("JOBCRAWL_TZ") or None)

    def process_item(self, item, spider=None):
        if not isinstance(item, RawPosting):
            return item
        try:
            posting = normalize_posting(item, as_of_source=self.as_of_source, tz=self.tz)
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
