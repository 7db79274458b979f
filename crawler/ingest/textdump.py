"""``textdump``: ingest text dumps exported from the job app.

Arguments (``-a`` on the command line, keywords from Python):
- ``paths``: files, folders (recursive) or globs, separated by ``os.pathsep`` on the command line;
- ``as_of``: ISO date-time anchoring relative times (default: each file's modification time);
- ``source``: the source of the inputs and their postings (default ``textdump``; the table spider's tables
  ``tabular``), so that snapshots of one board are one source whatever their file names;
- ``listing``: the name of the complete listing the inputs make together (``jobcrawl ingest --complete``):
  the spider reports the keys of every posting read (:attr:`~crawler.report.CrawlReport.listings`), or None
  when an input or row was quarantined or the spider did not finish (a listing that may lack postings
  closes nothing).

The spider makes no request: its ``start`` reads the files, in order, and yields their items to the item
pipelines. Only regular files are read, of at most ``JOBCRAWL_MAX_FILE_SIZE`` bytes (``jobcrawl ingest
--max-file-size``), checked on the opened descriptor (:func:`crawler.files.open_regular`). Anything else
(a FIFO, socket or device, a symlink to one, a dangling symlink, a symlink loop, a folder that cannot be
listed) is one quarantine record with its reason, and the run goes on; a file over the cap keeps its
first 64 KB as its raw input.

The run takes files unchanged since their last complete parse out of the inputs before the spider
starts (crawler/run/runner.py, crawler/ingest/ledger.py); the spider never reads the database. Its ``parsers``
(source → parser version) tell the writer whose complete parses to record; ``unchanged`` (from the
run: source → ledger) lets the table spider skip unchanged blocks of rows.

Each posting read gets its raw hash under its source's parser: a dump page's made from its text by the page
object (:func:`~normalize.posting.raw_text_hash`), any other's from its fields
(:func:`~normalize.posting.raw_item_hash`). ``known`` (from the run: source → posting key → the stored ``raw_hash``)
names the postings stored as read: one read again with the same hash (the row of yesterday's snapshot, unchanged
today) is seen again without being parsed: such postings leave an input as :class:`~normalize.models.SeenPostings`
items (stat ``jobcrawl/postings_seen_unparsed``).
"""

from __future__ import annotations

import os
import stat
from datetime import datetime, timezone

import scrapy
from scrapy.utils.asyncio import run_in_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crawler.store.rows import NOTHING_READ
from crawler.files import (MAX_FILE_BYTES, InputError, InputFile, Problem, TooLarge, open_stream, quote_name,
                            read_group, resolve_inputs, saved_at, stat_of)
from crawler.ingest.ledger import parser_of
from crawler.ingest.appdump import parse_dump
from crawler.report import FILES, FOUND, SEEN_UNPARSED, handed_report
from crawler.settings import no_requests
from crawler.arguments import SpiderArgumentError, argument_error, check_arguments, describe
from normalize.clock import iso_utc, now_iso
from normalize.models import Quarantined, RawInput, RawPosting, SeenPostings
from normalize.posting import posting_key, raw_item_hash
from normalize.text import ZERO_TAIL, zero_filled_tail


class TextdumpArgs(BaseModel):
    """Validated spider arguments."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inputs: list[InputFile] = Field(description="Resolved input files.")
    as_of: datetime | None = Field(None, description="Anchor for relative times; default each file's mtime.")
    max_bytes: int = Field(MAX_FILE_BYTES, description="Larger files are quarantined, their first 64 KB kept.")

    @field_validator("as_of")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.astimezone()  # naive means the machine's local time
        return value.astimezone(timezone.utc) if value else None


GROUP_FILES = 64
"""Small files read by one trip to a thread at most: the trip costs about as much as parsing a small file, so a
folder of one-posting files is read a group at a time."""
GROUP_FILE_BYTES = 64 * 2**10
"""Regular files of at most this size when the spider starts are read in groups; others one at a time."""
GROUP_BYTES = 4 * 2**20
"""A group's reading stops once this many bytes are read (files that grew since they were listed); its other
files are read by the next trip."""

SEEN_ITEM = 1000
"""Postings read again as stored that one :class:`~normalize.models.SeenPostings` item holds at most."""

input_read = object()
"""Signal sent by a file spider for each input it reads (or refuses): the run's progress counts them."""


class TextdumpCommandArgs(BaseModel):
    """The arguments on the command line (``scrapy crawl textdump -a paths=seeds/``). Python callers (the run)
    give the resolved ``inputs`` instead of ``paths``, and ``unchanged``."""

    model_config = ConfigDict(extra="forbid")

    paths: str | list[str] | None = Field(None, description="Files, folders or globs (separated by os.pathsep).")
    as_of: str | datetime | None = Field(None, description="Anchor for relative times; default each file's mtime.")
    source: str | None = Field(None, description="Source of the inputs and their postings (default: the spider's).")
    listing: str | None = Field(None, description="Name of the complete listing the inputs make together.")


class TextdumpSpider(scrapy.Spider):
    """Reads its input files in :meth:`start` and yields their items there, in file order: no request is made."""

    name = "textdump"
    custom_settings = no_requests
    CommandArgs: type[TextdumpCommandArgs] = TextdumpCommandArgs

    def __init__(self, paths: str | list[str] | None = None, as_of: str | datetime | None = None,
                 inputs: list[InputFile] | None = None, unchanged: dict | None = None, source: str | None = None,
                 listing: str | None = None, known: dict | None = None, **kwargs):
        super().__init__()
        inputs = self.command_inputs(paths, inputs, {"as_of": as_of, "source": source, "listing": listing, **kwargs})
        self.args = self.validated(TextdumpArgs, inputs=inputs, as_of=as_of)
        self.unchanged = unchanged or {}  # source → crawler.ingest.ledger.unchanged_inputs, from the run
        self.known = known or {}  # source → {posting key: raw_hash stored}, from the run
        self.source = source
        self.listing = listing
        self.listed: list[str] | None = []  # keys of the postings read; None once the listing may lack some

    def source_of(self, kind: str) -> str:
        """The source of an input of ``kind`` (``textdump`` or ``tabular``): the one named, else the kind."""
        return self.source or kind

    def list_item(self, item, key: str | None = None) -> None:
        """Keep a posting's key (``key``, when made already) for the listing; a quarantined input or row makes the
        listing incomplete."""
        if self.listing is None or self.listed is None:
            return
        if isinstance(item, RawPosting):
            self.listed.append(key or posting_key(item.source, item.source_id))
        elif isinstance(item, Quarantined) or (isinstance(item, RawInput) and item.status != "parsed"):
            self.listed = None

    def closed(self, reason: str) -> None:
        """Report the listing read (None unless the spider finished with every input and row read)."""
        if self.listing is not None:
            keys = self.listed if reason == "finished" else None
            handed_report(self.crawler).listings[self.listing] = keys

    def command_inputs(self, paths, inputs, given: dict) -> list[InputFile]:
        """The inputs: ``inputs`` from Python, else ``paths`` resolved; checks the other arguments ``given``
        against :attr:`CommandArgs` (:class:`~crawler.arguments.SpiderArgumentError` for an unknown one).
        ``inputs`` given as text comes from the command line (``-a inputs=…``), where no such argument exists."""
        if isinstance(inputs, str):
            given, inputs = {**given, "inputs": inputs}, None
        check_arguments(self.name, self.CommandArgs, {"paths": paths, **given})
        if inputs is not None:
            return inputs
        if isinstance(paths, str):
            paths = paths.split(os.pathsep)
        try:
            return resolve_inputs(list(paths or []))
        except InputError as err:
            raise SpiderArgumentError(f"{self.name}: paths: {err}; arguments: {describe(self.CommandArgs)}") from None

    def validated(self, model: type[BaseModel], **values) -> BaseModel:
        try:
            return model(**values)
        except ValidationError as err:
            raise argument_error(self.name, err, self.CommandArgs) from None

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.args.max_bytes = settings.getint("JOBCRAWL_MAX_FILE_SIZE")
        # The writer records complete parses under these versions, so that a re-run can skip them.
        spider.parsers = {source: parser_of(settings, options) for source, options in spider.reading_options().items()}
        spider.report = handed_report(crawler)
        if settings.getbool("JOBCRAWL_REPARSE"):
            spider.unchanged, spider.known = {}, {}
        return spider

    def reading_options(self) -> dict[str, str]:
        """Source of the inputs this spider stores → digest of the options their parse depends on."""
        return {self.source_of("textdump"): ""}

    async def start(self):
        """Each input's items, in order. Small regular files are read :data:`GROUP_FILES` at a time in a thread
        (:func:`~crawler.files.read_group`), others one at a time; a file :meth:`streamed` is only opened."""
        group: list[tuple[InputFile, str]] = []
        for inp in self.args.inputs:
            st = stat_of(inp.path) if inp.problem is None else inp.problem
            problem = isinstance(st, Problem)
            as_of = iso_utc(self.args.as_of or (datetime.now(timezone.utc) if problem else self._saved_at(inp, st)))
            small = not problem and stat.S_ISREG(st.st_mode) and st.st_size <= GROUP_FILE_BYTES
            if group and not small:
                async for item in self._read(group):
                    yield item
                group = []
            if problem:
                for item in self._input(inp, st, as_of):
                    yield item
            elif self.streamed(inp, st):
                opened = await run_in_thread(open_stream, inp.path, self.args.max_bytes)
                for item in self._input(inp, opened, as_of):
                    yield item
            else:
                group.append((inp, as_of))
                if not small or len(group) == GROUP_FILES:
                    async for item in self._read(group):
                        yield item
                    group = []
        async for item in self._read(group):
            yield item

    def streamed(self, inp: InputFile, st) -> bool:
        """Whether ``inp`` (of status ``st``) is read as a stream by its parser instead of into memory."""
        return False

    async def _read(self, group: list[tuple[InputFile, str]]):
        """The items of a group of files, read in a thread until :data:`GROUP_BYTES` are read, then the rest."""
        while group:
            got = await run_in_thread(read_group, [inp.path for inp, _ in group], self.args.max_bytes, GROUP_BYTES)
            for (inp, as_of), data in zip(group, got):
                for item in self._input(inp, data, as_of):
                    yield item
            group = group[len(got):]

    def _input(self, inp: InputFile, data, as_of: str):
        """The items of one input (its bytes, its open file, or its :class:`~crawler.files.Problem`); the run's
        progress hears of it (:data:`input_read`)."""
        self.crawler.signals.send_catch_log(input_read)
        items = self._problem(inp, data, as_of) if isinstance(data, Problem) else self.parse_input(inp, data, as_of)
        seen: SeenPostings | None = None
        for item in items:
            key = self._key_of(item)
            self.list_item(item, key)
            if not (isinstance(item, RawPosting) and self.stored_as_read(item, key)):
                yield item
                continue
            if seen is not None and (seen.input_sha256 != item.input_sha256 or len(seen.postings) == SEEN_ITEM):
                yield seen
                seen = None
            if seen is None:
                seen = SeenPostings(source=item.source, locator=item.locator, input_sha256=item.input_sha256,
                                    seen_at=item.as_of, complete_listing=item.complete_listing)
            seen.postings.append((key, item.raw_hash))
        if seen is not None:
            yield seen

    def _key_of(self, item) -> str | None:
        """The key of a raw posting when the listing or the stored hashes need it (made once a row), else None."""
        if not isinstance(item, RawPosting) or not (
                self.listing is not None and self.listed is not None or self.known.get(item.source)):
            return None
        return posting_key(item.source, item.source_id)

    def stored_as_read(self, item: RawPosting, key: str | None) -> bool:
        """Set ``item.raw_hash``; whether the posting of ``key`` is stored with that hash (:attr:`known`)."""
        parser = self.parsers.get(item.source)
        if parser is None:
            return False
        try:
            if item.raw_hash is None:  # a dump page's is made by its parser (normalize.posting.raw_text_hash)
                item.raw_hash = raw_item_hash(item, parser)
        except ValueError:  # a lone UTF-16 surrogate, which the validate stage repairs: no hash, parsed every time
            return False
        known = self.known.get(item.source)
        if not known or key is None:
            return False
        if known.get(key) != item.raw_hash:
            known.pop(key, None)  # stored anew from here: a later copy of the old row is parsed again
            return False
        self.crawler.stats.inc_value(SEEN_UNPARSED)
        return True

    def _saved_at(self, inp: InputFile, st) -> datetime:
        when, note = saved_at(st)
        if note:
            self.report.repaired.append(f"{quote_name(inp.locator)}: {note}")
        return when

    def parse_input(self, inp: InputFile, data, as_of: str):
        """The items of one file read: its bytes (or, for a file :meth:`streamed`, its open binary file)."""
        found = 0
        source = self.source_of("textdump")
        for item in parse_dump(data, locator=inp.locator, fetched_at=now_iso(), as_of=as_of, source=source,
                               parser=self.parsers.get(source)):
            if isinstance(item, RawInput) and self.source:
                item.reader = {"format": "text"}  # reparse tells a dump of a named source by it
            if not isinstance(item, RawInput) and not (isinstance(item, Quarantined) and item.position is None):
                found += 1
            yield item
        self.crawler.stats.inc_value(FOUND, found)
        self.crawler.stats.inc_value(FILES)
        if tail := zero_filled_tail(data):
            self.report.repaired.append(f"{quote_name(inp.locator)}: {ZERO_TAIL.format(tail)}")

    def _problem(self, inp: InputFile, problem: Problem, as_of: str):
        """The items of an input not read: a quarantine record (and, for a file over the size cap, its
        first 64 KB as its raw input)."""
        now = now_iso()
        self.crawler.stats.inc_value(FILES)
        self.crawler.stats.inc_value(f"jobcrawl/files_refused/{problem.reason}")
        sha = NOTHING_READ  # a stable key: the same problem on a re-run is the same quarantine row
        if isinstance(problem, TooLarge):
            sha = problem.sha256
            yield RawInput(source=self.source_of(self.name), locator=inp.locator, sha256=sha, size=problem.size, body=problem.head,
                           fetched_at=now, as_of=as_of, status="quarantined", error=problem.detail)
        yield Quarantined(source=self.source_of(self.name), locator=inp.locator, input_sha256=sha, reason=problem.reason,
                          detail=problem.detail, fetched_at=now)
