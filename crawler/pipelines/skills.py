"""Tag skills against the taxonomy (``normalize.skills``), with evidence per section."""

from __future__ import annotations

from normalize.skills import tag_posting
from crawler.files import read_taxonomy
from normalize.models import Posting


class SkillsPipeline:
    def __init__(self, stats, taxonomy_path: str | None):
        self.stats = stats
        self.taxonomy = read_taxonomy(taxonomy_path)  # a FIFO or a huge file is refused unread

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats, crawler.settings.get("JOBCRAWL_TAXONOMY"))

    def process_item(self, item, spider=None):
        if not isinstance(item, Posting):
            return item
        tag_posting(item, self.taxonomy)
        if not item.skills:
            self.stats.inc_value("jobcrawl/skills/none")
        return item
