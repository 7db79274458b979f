"""Tag skills against the taxonomy (``normalize.skills``), with evidence per section."""

from __future__ import annotations

from pathlib import Path

from crawler.db.skills import tag_posting
from crawler.inputs import TAXONOMY_MAX_BYTES, read_config_text
from normalize.models import Posting
from normalize.skills import load_taxonomy


class SkillsPipeline:
    def __init__(self, stats, taxonomy_path: str | None):
        self.stats = stats
        if taxonomy_path:  # a FIFO or a huge file is refused before it is read (ConfigFileError fails the run)
            read_config_text(Path(taxonomy_path), TAXONOMY_MAX_BYTES)
        self.taxonomy = load_taxonomy(taxonomy_path)

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
