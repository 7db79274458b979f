"""The item pipelines, one class per concern, in the one ``ITEM_PIPELINES`` order (crawler/settings.py):
validate → normalize → skills → store. Each passes items it does not handle through unchanged and reads the fields
of those it handles (the project's models) as attributes; the rules are in normalize/.

- **Validate** raw postings: a title or a description present, names of sane length, at most
  :data:`MAX_POSTING_CHARS` characters of text in all, or quarantine with the reason. A posting without company is
  kept (the employer is hidden: 猎聘 and BOSS confidential searches), counted in ``jobcrawl/field/company/missing``.
  Lone UTF-16 surrogates (``\\ud800`` cut from its pair) are replaced by U+FFFD, counted in
  ``jobcrawl/repaired/lone_surrogates`` and named in the run report; the raw input keeps them as written.
- **Normalize** raw postings into :class:`Posting` (``normalize.posting``).
- **Skills** tagged against the taxonomy (``normalize.skills``), with evidence per section.
- **Store**: items become plain rows (crawler/store/rows.py; a :class:`SeenPostings`, read again as stored, only
  rows that they were seen), handed in batches to the run's sink
  (crawler/run/sinks.py). Each posting's dedupe key (fingerprint, identity, MinHash signature) is made here, a batch
  at a time in the worker processes, so the dedupe step after the run does only the corpus's work. A raw posting
  any stage raised on (a bug meeting odd data; Scrapy drops it) is kept here as a quarantine row with the error, and
  a posting whose row cannot be made as one with its own: the run goes on, the posting is not lost.
"""

from __future__ import annotations

import json

from itemadapter import ItemAdapter, is_item
from pydantic import BaseModel
from scrapy import signals

from crawler.files import quote_name, read_taxonomy
from crawler.report import handed_report
from crawler.run.sinks import WriterSink, attached, progress_of
from crawler.store.dedupe import key_values
from crawler.store.rows import Batch, input_row, posting_row, quarantine_row, seen_rows
from normalize.dedupe import posting_signatures
from normalize.models import Posting, Quarantined, RawInput, RawPosting, SeenPostings
from normalize.posting import normalize_posting
from normalize.skills import tag_posting
from normalize.text import replace_lone_surrogates


def item_where(adapter) -> str:
    """Where an item came from, for a one-line message: ``locator#position``, or the locator alone
    (quoted when it holds a newline or another character that is not printable)."""
    position = adapter.get("position")
    return quote_name(f"{adapter.get('locator')}") + ("" if position is None else f"#{position}")


def quarantine_record(item: RawPosting | Posting, reason: str, detail: str, text: str) -> Quarantined:
    """The quarantine record of a posting, raw or normalized: where it came from, why, the text at fault."""
    return Quarantined(source=item.source, locator=item.locator, position=item.position,
                       input_sha256=item.input_sha256, reason=reason, detail=detail, text=text,
                       fetched_at=item.fetched_at if isinstance(item, RawPosting) else item.last_seen)


OPTIONAL_FIELDS = ("company", "posted", "salary", "location", "category", "work_mode", "employment_type")
MAX_POSTING_CHARS = 200_000
"""Characters of text one posting may hold in all its fields (a long JD holds about 20,000): past this, a cell, a
page or a JSON field holds something else, which every later stage would copy many times over. Quarantined;
the raw input keeps it whole."""
QUARANTINE_FIELD_CHARS = 4096
QUARANTINE_TEXT_CHARS = 65_536
"""How much of each string, and of all its text, the quarantine record of an oversized posting keeps."""
STRICTLY_DECODED = {"textdump"}  # every string decoded from bytes by a strict codec: no lone surrogate can occur


def _strings(value: object) -> list[str]:
    """Every string inside a model, list, tuple or dict (keys too)."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        kind = type(v)
        if kind is list:  # most strings stand in lists (a section's lines): kept here, not pushed and popped
            for x in v:
                if type(x) is str:
                    out.append(x)
                elif x is not None:
                    stack.append(x)
        elif kind is str:
            out.append(v)
        elif v is None or kind in _SCALARS:  # no isinstance through the model's metaclass
            continue
        elif isinstance(v, BaseModel):
            stack.extend(v.__dict__.values())
        elif isinstance(v, str):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())
    return out


_SCALARS = frozenset({int, float, bool})
_SAID = tuple(name for name, info in RawPosting.model_fields.items() if not info.exclude)
"""The fields of what a raw posting says (not those its reader sets beside it, such as its hash)."""


def _chars(value: object) -> int:
    return sum(map(len, _strings(value)))


def _clipped(value: object, budget: list[int]) -> object:
    """``value`` (plain data) within about ``budget[0]`` characters of JSON (spent as it goes): each string cut at
    :data:`QUARANTINE_FIELD_CHARS` and its length noted, the entries left over once the budget is spent counted."""
    if isinstance(value, str):
        keep = max(0, min(len(value), QUARANTINE_FIELD_CHARS, budget[0]))
        budget[0] -= keep + 4  # with its quotes and separator in the JSON
        return value if keep == len(value) else f"{value[:keep]}… [{len(value):,} characters]"
    if isinstance(value, (dict, list, tuple)):
        entries = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        out = []
        for done, (key, item) in enumerate(entries):
            if budget[0] <= 0:
                out.append(("…", f"{len(entries) - done:,} more"))
                break
            out.append((_clipped(key, budget), _clipped(item, budget)))
        return dict(out) if isinstance(value, dict) else [item for _, item in out]
    return value


def clipped_json(item: RawPosting) -> str:
    """The JSON a quarantine row keeps of a raw posting that holds too much text: :func:`_clipped` to
    :data:`QUARANTINE_TEXT_CHARS` (the raw input keeps it whole)."""
    return json.dumps(_clipped(item.model_dump(), [QUARANTINE_TEXT_CHARS]), ensure_ascii=False)


def _has_description(item: RawPosting) -> bool:
    return bool((item.description or "").strip()) or any(line.strip() for block in item.sections for line in block.lines)


class ValidatePipeline:
    def __init__(self, stats, max_title: int, repaired_log: list[str]):
        self.count = stats.inc_value  # bound once: Scrapy's stats wrap each attribute look-up
        self.max_title = max_title
        self.repaired_log = repaired_log

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats, crawler.settings.getint("JOBCRAWL_MAX_TITLE_CHARS"), handed_report(crawler).repaired)

    def oversized(self, item: RawPosting, strings: list[str]) -> str | None:
        """The detail when ``item`` (whose strings are ``strings``) holds more than :data:`MAX_POSTING_CHARS`
        characters of text, else None."""
        total = sum(map(len, strings))
        if total <= MAX_POSTING_CHARS:
            return None
        name, most = max(((name, _chars(value)) for name, value in item.__dict__.items()), key=lambda kv: kv[1])
        return (f"posting holds {total:,} characters of text, {most:,} of them in {name} (limit {MAX_POSTING_CHARS:,}):"
                " not one job posting")

    def problem(self, item: RawPosting) -> tuple[str, str] | None:
        """(reason, detail) when the posting cannot be stored, else None."""
        for name in ("company", "title"):
            value = (getattr(item, name) or "").strip()
            if len(value) > self.max_title:
                return "invalid", f"{name} is {len(value)} characters long (limit {self.max_title}): not a {name}"
        if not (item.title or "").strip() and not _has_description(item):
            return "invalid", "posting has neither title nor description"
        return None

    def repaired(self, item: RawPosting, strings: list[str]) -> RawPosting:
        """``item`` (whose strings are ``strings``) with lone surrogates replaced (see the module docstring), or
        ``item`` itself."""
        if item.source in STRICTLY_DECODED:
            return item
        try:
            "".join(v for v in strings if not v.isascii()).encode("utf-8")  # only a lone surrogate fails
            return item
        except UnicodeEncodeError:
            pass
        data, found = replace_lone_surrogates(item.model_dump())
        self.count("jobcrawl/repaired/lone_surrogates", found)
        self.repaired_log.append(f"{item_where(ItemAdapter(item))}: {found} lone UTF-16 surrogate{'s' * (found > 1)} "
                                 "(a broken escape such as \\ud800) replaced by U+FFFD")
        return RawPosting.model_validate(data)

    def process_item(self, item, spider=None):
        if not isinstance(item, RawPosting):
            return item
        strings = _strings([getattr(item, name) for name in _SAID])
        too_long = self.oversized(item, strings)  # before anything copies its text
        if too_long:
            return self.quarantined(item, "invalid", too_long, clipped_json(item))
        item = self.repaired(item, strings)
        for name in OPTIONAL_FIELDS:
            if not getattr(item, name):
                self.count(f"jobcrawl/field/{name}/missing")
        problem = self.problem(item)
        if problem is None:
            return item
        return self.quarantined(item, *problem, item.model_dump_json())

    def quarantined(self, item: RawPosting, reason: str, detail: str, text: str) -> Quarantined:
        self.count(f"jobcrawl/invalid/{reason}")
        return quarantine_record(item, reason, detail, text)


class NormalizePipeline:
    """``JOBCRAWL_AS_OF_SOURCE``: what the inputs' as_of anchors are (``fetched``, ``as_of``, ``file_mtime``);
    ``JOBCRAWL_TZ``: the sources' time zone (default: Asia/Shanghai for Chinese postings, else UTC)."""

    def __init__(self, stats, as_of_source: str = "fetched", tz: str | None = None):
        self.count = stats.inc_value
        self.as_of_source = as_of_source
        self.tz = tz

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        return cls(crawler.stats, settings.get("JOBCRAWL_AS_OF_SOURCE") or "fetched", settings.get("JOBCRAWL_TZ") or None)

    def process_item(self, item, spider=None):
        if not isinstance(item, RawPosting):
            return item
        posting = normalize_posting(item, as_of_source=self.as_of_source, tz=self.tz)
        for problem in posting.problems:
            self.count("jobcrawl/quality/" + problem.split(":")[0].split(" stated")[0])
        if posting.salary.status != "missing":
            self.count(f"jobcrawl/salary/{posting.salary.status}")
        return posting


class SkillsPipeline:
    def __init__(self, stats, taxonomy_path: str | None):
        self.count = stats.inc_value
        self.taxonomy = read_taxonomy(taxonomy_path)  # a FIFO or a huge file is refused unread

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats, crawler.settings.get("JOBCRAWL_TAXONOMY"))

    def process_item(self, item, spider=None):
        if not isinstance(item, Posting):
            return item
        tag_posting(item, self.taxonomy)
        if not item.skills:
            self.count("jobcrawl/skills/none")
        return item


def _no_progress(**counts: int) -> None:
    pass


class StorePipeline:
    """Batches of ``batch_size`` postings (with the raw inputs and quarantine rows met meanwhile) go to the
    sink the run attached to the crawler (crawler/run/sinks.py); without one, to a writer of its own on
    ``JOBCRAWL_DB``. Each posting and raw input taken is counted in the run's progress, given with the sink."""

    def __init__(self, crawler, db_path: str | None, run_id: int | None, batch_size: int):
        self.crawler = crawler
        self.report = handed_report(crawler)
        self.db_path = db_path
        self.run_id, self.batch_size = run_id, batch_size
        self.sink = None
        self.progress = _no_progress
        self.own_sink = False
        self.batch = Batch(run_id)
        self.postings: list[Posting] = []  # of the batch: rows once their dedupe keys are made
        self.parsers: dict[str, str] = {}

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        run_id = s.get("JOBCRAWL_RUN_ID")
        pipeline = cls(crawler, s.get("JOBCRAWL_DB"), int(run_id) if run_id else None, s.getint("JOBCRAWL_BATCH_SIZE"))
        crawler.signals.connect(pipeline.item_failed, signal=signals.item_error)
        return pipeline

    def open_spider(self, spider=None):
        # The file spiders name the parser versions under which complete parses are recorded (crawler/ingest/ledger.py).
        self.parsers = dict(getattr(self.crawler.spider, "parsers", None) or {})
        self.batch = Batch(self.run_id, parsers=self.parsers)
        self.sink, self.progress = attached(self.crawler), progress_of(self.crawler) or _no_progress
        if self.sink is None:
            self.sink, self.own_sink = WriterSink(self.db_path, migrate=True), True

    def process_item(self, item, spider=None):
        if isinstance(item, Posting):
            self.postings.append(item)
            self.progress(postings=1)
            if len(self.postings) >= self.batch_size:
                self.flush()
        elif isinstance(item, SeenPostings):
            self.batch.seen += seen_rows(item)
            if len(self.batch.seen) >= self.batch_size:
                self.flush()
        elif isinstance(item, RawInput):
            self.batch.inputs.append(input_row(item))
            self.progress(nbytes=item.size or 0)
        elif isinstance(item, Quarantined):
            self.report.problems.append(f"{item_where(ItemAdapter(item))}: {item.detail}")
            self.batch.quarantine.append(quarantine_row(item))
        return item

    def item_failed(self, item, response, spider, failure) -> None:
        """An item a stage raised on, which Scrapy drops (``item`` as the spider emitted it): a raw posting is kept
        as a quarantine row with the error (``pipeline_error``: `jobcrawl reparse` reads it again once the bug is
        fixed), its text clipped as the validator clips it when it holds more than :data:`MAX_POSTING_CHARS`
        characters (the stage that raised may be the validator); another item is named in the run's errors (the
        run is partial)."""
        error = f"{failure.type.__name__}: {failure.getErrorMessage()}"
        if isinstance(item, RawPosting):
            self.crawler.stats.inc_value("jobcrawl/pipeline_error")
            text = clipped_json(item) if _chars([getattr(item, name) for name in _SAID]) > MAX_POSTING_CHARS \
                else item.model_dump_json()
            self.process_item(quarantine_record(item, "pipeline_error", f"pipeline error: {error}", text))
            return
        self.crawler.stats.inc_value("jobcrawl/errors")
        where = item_where(ItemAdapter(item)) if is_item(item) else "?"
        self.report.errors.append(f"{where}: {error}; this {type(item).__name__} was not stored")

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
                self.process_item(quarantine_record(posting, "store_error", f"store error: {type(err).__name__}: {err}",
                                                    posting.model_dump_json()))
        return rows

    def close_spider(self, spider=None):
        self.flush()
        if self.own_sink:  # a crawl outside a run (`scrapy crawl`): the writer's counts go to its stats
            self.sink.close()
            for key, value in self.sink.writer.counts_of(self.run_id).items():
                self.crawler.stats.inc_value(f"jobcrawl/{key}", value)
