"""Store items in SQLite in batches (see ``crawler.db.writer``)."""

from __future__ import annotations

from itemadapter import ItemAdapter

from crawler.db.writer import BackgroundWriter
from crawler.pipelines import item_where
from normalize.models import Posting, Quarantined, RawInput


class StorePipeline:
    def __init__(self, stats, db_path: str, run_id: int | None, batch_size: int, parsers: dict[str, str] | None = None):
        self.stats = stats
        self.db_path = db_path
        self.run_id = run_id
        self.batch_size = batch_size
        self.parsers = parsers or {}
        self.writer: BackgroundWriter | None = None
        self.quarantine_log: list[str] = []

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        run_id = s.get("JOBCRAWL_RUN_ID")
        return cls(crawler.stats, s.get("JOBCRAWL_DB"), int(run_id) if run_id else None, s.getint("JOBCRAWL_BATCH_SIZE"),
                   s.getdict("JOBCRAWL_PARSERS"))

    def open_spider(self, spider=None):
        self.writer = BackgroundWriter(self.db_path, run_id=self.run_id, batch_size=self.batch_size, parsers=self.parsers)
        self.stats.set_value("jobcrawl/quarantine_log", self.quarantine_log)

    def process_item(self, item, spider=None):
        if isinstance(item, Posting):
            self.writer.add_posting(item)
        elif isinstance(item, RawInput):
            self.writer.add_input(item)
        elif isinstance(item, Quarantined):
            adapter = ItemAdapter(item)
            self.quarantine_log.append(f"{item_where(adapter)}: {adapter['detail']}")
            self.writer.add_quarantine(item)
        return item

    def close_spider(self, spider=None):
        self.writer.close()
        for key, value in self.writer.counts.items():
            self.stats.set_value(f"jobcrawl/{key}", value)
        self.stats.set_value("jobcrawl/changed", len(self.writer.changed_ids))
