"""``textdump``: ingest text dumps exported from the job app (file:// requests through the engine).

Arguments (``-a`` on the command line, keywords from Python):
- ``paths``: files, folders (recursive) or globs, separated by ``os.pathsep`` on the command line;
- ``as_of``: ISO date-time anchoring relative times (default: each file's modification time).

Files are read by :class:`RegularFileHandler` (``file://``): only regular files, of at most
``JOBCRAWL_MAX_FILE_SIZE`` bytes (``jobcrawl ingest --max-file-size``), checked on the opened
descriptor (:func:`crawler.inputs.open_regular`). Anything else (a FIFO, socket or device, a symlink to
one, a dangling symlink, a symlink loop, a folder that cannot be listed) is one quarantine record with
its reason, and the run goes on; a file over the cap keeps its first 64 KB as its raw input.

The run takes files unchanged since their last complete parse out of the inputs before the spider
starts (crawler/runner.py, crawler/ledger.py); the spider never reads the database. Its ``parsers``
(source → parser version) tell the writer whose complete parses to record; ``unchanged`` (from the
run: source → ledger) lets the table spider skip unchanged blocks of rows.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime, timezone

import scrapy
from scrapy.core.downloader.handlers.file import FileDownloadHandler
from scrapy.http import Response
from scrapy.utils.asyncio import run_in_thread
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crawler.db.rows import NOTHING_READ
from crawler.inputs import (MAX_FILE_BYTES, InputError, InputFile, Problem, TooLarge, open_regular, read_group,
                            quote_name, resolve_inputs, saved_at, stat_of)
from crawler.ledger import parser_of
from crawler.pages.appexport import parse_dump
from crawler.report import report_of
from crawler.spiders import SpiderArgumentError, argument_error, check_arguments, describe
from normalize.clock import iso_utc, now_iso
from normalize.models import Quarantined, RawInput
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
"""Small files read by one request at most: a request through the engine costs about as much as parsing a small
file, so a folder of one-posting files is read a group at a time."""
GROUP_FILE_BYTES = 64 * 2**10
"""Regular files of at most this size when the spider starts are read in groups; others by a request each."""
GROUP_BYTES = 4 * 2**20
"""A group's reading stops once this many bytes are read (files that grew since they were listed); its other
files are asked for again, in a request of their own."""


class FilesResponse(Response):
    """The response to a request for a group of files (``meta["group"]``): ``files`` holds each file's bytes or
    its :class:`~crawler.inputs.Problem`, in the group's order, shorter than the group when the byte budget
    stopped the reading."""

    def __init__(self, *args, files: list[bytes | Problem], **kwargs):
        super().__init__(*args, **kwargs)
        self.files = files


def inputs_in(response: Response) -> int:
    """How many inputs a response brings: the files read of a group, else 1."""
    return len(response.files) if isinstance(response, FilesResponse) else 1


class InputProblem(Exception):
    """Raised by the file handler for an input it does not read; the spider's errback quarantines it."""

    def __init__(self, problem: Problem):
        super().__init__(problem.detail)
        self.problem = problem


class RegularFileHandler(FileDownloadHandler):
    """``file://`` for the inputs of an ingest: only a regular file of at most ``meta["max_bytes"]``
    is read (:func:`crawler.inputs.open_regular`); anything else raises :class:`InputProblem`."""

    async def download_request(self, request, *args):
        group = request.meta.get("group")
        if group is not None:
            files = await run_in_thread(read_group, [inp.path for inp, _ in group], request.meta["max_bytes"],
                                        GROUP_BYTES)
            return FilesResponse(url=request.url, body=b"", files=files)
        inp: InputFile | None = request.meta.get("input")
        if inp is None:
            return await super().download_request(request, *args)
        body = await run_in_thread(open_regular, inp.path, request.meta["max_bytes"])
        if isinstance(body, Problem):
            raise InputProblem(body)
        return Response(url=request.url, body=body)


class TextdumpCommandArgs(BaseModel):
    """The arguments on the command line (``scrapy crawl textdump -a paths=seeds/``). Python callers (the run)
    give the resolved ``inputs`` instead of ``paths``, and ``unchanged``."""

    model_config = ConfigDict(extra="forbid")

    paths: str | list[str] | None = Field(None, description="Files, folders or globs (separated by os.pathsep).")
    as_of: str | datetime | None = Field(None, description="Anchor for relative times; default each file's mtime.")


class TextdumpSpider(scrapy.Spider):
    name = "textdump"
    CommandArgs: type[TextdumpCommandArgs] = TextdumpCommandArgs
    # Local files are not someone else's server: no throttling, no robots.txt. One request (a file,
    # or a group of small files) at a time, in the order given (start requests of one priority leave
    # the scheduler first in, first out), so row ids follow file order. One priority: each distinct
    # one is a queue of its own, and the scheduler scans them all at every request.
    custom_settings = {
        "AUTOTHROTTLE_ENABLED": False,
        "DOWNLOAD_DELAY": 0,
        "CONCURRENT_REQUESTS": 1,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "ROBOTSTXT_OBEY": False,
        "RETRY_ENABLED": False,
        "DOWNLOAD_WARNSIZE": 0,
        "DOWNLOAD_MAXSIZE": 0,
        "DOWNLOAD_HANDLERS": {"file": "crawler.spiders.textdump.RegularFileHandler"},
    }

    def __init__(self, paths: str | list[str] | None = None, as_of: str | datetime | None = None,
                 inputs: list[InputFile] | None = None, unchanged: dict | None = None, **kwargs):
        super().__init__()
        inputs = self.command_inputs(paths, inputs, {"as_of": as_of, **kwargs})
        self.args = self.validated(TextdumpArgs, inputs=inputs, as_of=as_of)
        self.unchanged = unchanged or {}  # source → crawler.ledger.unchanged_inputs, from the run

    def command_inputs(self, paths, inputs, given: dict) -> list[InputFile]:
        """The inputs: ``inputs`` from Python, else ``paths`` resolved; checks the other arguments ``given``
        against :attr:`CommandArgs` (:class:`~crawler.spiders.SpiderArgumentError` for an unknown one).
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
        spider.report = report_of(crawler)
        if settings.getbool("JOBCRAWL_REPARSE"):
            spider.unchanged = {}
        return spider

    def reading_options(self) -> dict[str, str]:
        """Source of the inputs this spider stores → digest of the options their parse depends on."""
        return {"textdump": ""}

    group_small_files = True
    """Read small regular files in groups (:data:`GROUP_FILES`); a subclass whose requests need one file each
    turns it off."""

    async def start(self):
        group: list[tuple[InputFile, str]] = []
        for inp in self.args.inputs:
            st = stat_of(inp.path) if inp.problem is None else inp.problem
            if isinstance(st, Problem):
                if group:
                    yield self.request(group)
                    group = []
                for item in self._problem(inp, st, iso_utc(self.args.as_of or datetime.now(timezone.utc))):
                    yield item
                continue
            as_of = iso_utc(self.args.as_of or self._saved_at(inp, st))
            if self.group_small_files and stat.S_ISREG(st.st_mode) and st.st_size <= GROUP_FILE_BYTES:
                group.append((inp, as_of))
                if len(group) == GROUP_FILES:
                    yield self.request(group)
                    group = []
                continue
            if group:
                yield self.request(group)
                group = []
            yield self.request([(inp, as_of)])
        if group:
            yield self.request(group)

    def _saved_at(self, inp: InputFile, st) -> datetime:
        when, note = saved_at(st)
        if note:
            self.report.repaired.append(f"{quote_name(inp.locator)}: {note}")
        return when

    def request(self, files: list[tuple[InputFile, str]]) -> scrapy.Request:
        """The request for one file, or for a group of them (``meta["group"]``: (input, as_of) in order)."""
        first, as_of = files[0]
        meta = {"max_bytes": self.args.max_bytes}
        meta.update({"input": first, "as_of": as_of} if len(files) == 1 else {"group": files})
        return scrapy.Request(first.path.as_uri(), callback=self.parse, errback=self.failed, meta=meta,
                              dont_filter=True)

    def parse(self, response):
        group = response.meta.get("group")
        if group is None:
            yield from self.parse_file(response.meta["input"], response.body, response.meta["as_of"])
            return
        for (inp, as_of), got in zip(group, response.files):
            if isinstance(got, Problem):
                yield from self._problem(inp, got, as_of)
            else:
                yield from self.parse_file(inp, got, as_of)
        if len(response.files) < len(group):  # the byte budget stopped the reading: the rest comes next
            yield self.request(group[len(response.files):])

    def parse_file(self, inp: InputFile, body: bytes, as_of: str):
        """The items of one file's bytes."""
        found = 0
        for item in parse_dump(body, locator=inp.locator, fetched_at=now_iso(), as_of=as_of):
            if not isinstance(item, RawInput) and not (isinstance(item, Quarantined) and item.position is None):
                found += 1
            yield item
        self.report.found += found
        self.report.files += 1
        if tail := zero_filled_tail(body):
            self.report.repaired.append(f"{quote_name(inp.locator)}: {ZERO_TAIL.format(tail)}")

    def failed(self, failure):
        meta = failure.request.meta
        if failure.check(InputProblem):
            problem = failure.value.problem
        else:
            problem = Problem("unreadable", f"unreadable: {failure.getErrorMessage()}")
        for inp, as_of in meta.get("group") or [(meta["input"], meta["as_of"])]:
            yield from self._problem(inp, problem, as_of)

    def _problem(self, inp: InputFile, problem: Problem, as_of: str):
        """The items of an input not read: a quarantine record (and, for a file over the size cap, its
        first 64 KB as its raw input)."""
        now = now_iso()
        self.report.files += 1
        self.crawler.stats.inc_value(f"jobcrawl/files_refused/{problem.reason}")
        sha = NOTHING_READ  # a stable key: the same problem on a re-run is the same quarantine row
        if isinstance(problem, TooLarge):
            sha = problem.sha256
            yield RawInput(source=self.name, locator=inp.locator, sha256=sha, size=problem.size, body=problem.head,
                           fetched_at=now, as_of=as_of, status="quarantined", error=problem.detail)
        yield Quarantined(source=self.name, locator=inp.locator, input_sha256=sha, reason=problem.reason,
                          detail=problem.detail, fetched_at=now)
