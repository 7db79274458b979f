"""Store: items become plain rows (crawler/store/rows.py), handed in batches to the run's sink (crawler/run/sinks.py).

Each posting's dedupe key (normalize.dedupe.posting_signatures: fingerprint, identity, MinHash signature) is made
here, a batch at a time in the worker processes, so the dedupe step after the run does only the corpus's work.
"""

from __future__ import annotations

from itemadapter import ItemAdapter

from crawler.store.dedupe import key_values
from crawler.store.rows import Batch, input_row, posting_row, quarantine_row
from crawler.report import report_of
from crawler.run.sinks import SINKS, WriterSink
from normalize.dedupe import posting_signatures
from normalize.models import Posting, Quarantined, RawInput

from crawler.pipelines import item_where


class StorePipeline:
    """Batches of ``batch_size`` postings (with the raw inputs and quarantine rows met meanwhile) go to the
    sink named by ``JOBCRAWL_SINK``; without one, to a writer of its own on ``JOBCRAWL_DB``."""

    def __init__(self, crawler, sink_name: str | None, db_path: str | None, run_id: int | None, batch_size: int):
        self.crawler = crawler
        self.report = report_of(crawler)
        self.sink_name, self.db_path = sink_name, db_path
        self.run_id, self.batch_size = run_id, batch_size
        self.sink = None
        self.own_sink = False
        self.batch = Batch(run_id)
        self.postings: list[Posting] = []  # of the batch: rows once their dedupe keys are made
        self.parsers: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        run_id = s.get("JOBCRAWL_RUN_ID")
        return cls(crawler, s.get("JOBCRAWL_SINK"), s.get("JOBCRAWL_DB"), int(run_id) if run_id else None,
                   s.getint("JOBCRAWL_BATCH_SIZE"))

    def open_spider(self, spider=None):
        # The file spiders name the parser versions under which complete parses are recorded (crawler/ingest/ledger.py).
        self.parsers = dict(getattr(self.crawler.spider, "parsers", None) or {})
        self.batch = Batch(self.run_id, parsers=self.parsers)
        if self.sink_name:
            self.sink = SINKS[self.sink_name]
        else:
            self.sink, self.own_sink = WriterSink(self.db_path, migrate=True), True

    def process_item(self, item, spider=None):
        if isinstance(item, Posting):
            self.postings.append(item)
            if len(self.postings) >= self.batch_size:
                self.flush()
        elif isinstance(item, RawInput):
            self.batch.inputs.append(input_row(item))
        elif isinstance(item, Quarantined):
            self.report.problems.append(f"{item_where(ItemAdapter(item))}: {item.detail}")
            self.batch.quarantine.append(quarantine_row(item))
        return item

    def flush(self) -> None:
        postings, self.postings = self.postings, []
        self.batch.postings = self.rows(postings)
        batch, self.batch = self.batch, Batch(self.run_id, parsers=self.parsers)
        if batch:
            try:
                self.sink.put(batch)
            except Exception as err:
                self.report.stage_failed = self.report.stage_failed or f"storing failed: {err}"
                raise

    def rows(self, postings: list[Posting]) -> list:
        """The rows of ``postings``, their dedupe keys made together. A posting whose row cannot be made (a bug
        meeting odd data) is quarantined with the error, and the others are stored: one posting never costs the
        batch it is in."""
        try:
            return [posting_row(p, key_values(k)) for p, k in zip(postings, posting_signatures(postings))]
        except Exception:
            if len(postings) == 1:
                raise
        rows = []
        for posting in postings:
            try:
                rows.extend(self.rows([posting]))
            except Exception as err:
                item = Quarantined(source=posting.source, locator=posting.locator, position=posting.position,
                                   input_sha256=posting.input_sha256, reason="store_error",
                                   detail=f"store error: {type(err).__name__}: {err}", text=posting.model_dump_json(),
                                   fetched_at=posting.last_seen)
                self.process_item(item)
        return rows

    def close_spider(self, spider=None):
        self.flush()
        if self.own_sink:  # a crawl outside a run (`scrapy crawl`): the writer's counts go to its stats
            self.sink.close()
            for key, value in self.sink.writer.counts_of(self.run_id).items():
                self.crawler.stats.inc_value(f"jobcrawl/{key}", value)
