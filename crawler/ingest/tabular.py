"""``tabular``: ingest CSV / JSON-lines / one-JD-per-line exports of other tools (read as the text dump
spider reads its files; the format and the column mapping are in :mod:`crawler.ingest.table`).

Arguments (keywords from Python; ``-a NAME=VALUE`` strings on the command line):

- ``paths`` or ``inputs``, ``as_of``: as for :mod:`crawler.ingest.textdump`;
- ``format``: ``auto`` (by suffix: .csv/.tsv, .jsonl/.ndjson/.json, anything else ``text``), ``csv``,
  ``jsonl``, ``lines`` or ``text``. Files read as ``text`` go to the job app's dump parser with source
  ``textdump``, so one run can mix dumps and tables;
- ``preset``: a name of :data:`crawler.ingest.table.PRESETS`, ``none`` (the mapping only), or unset
  (each file's header picks the best preset);
- ``mapping`` (``--map``): field → column (``colA+colB`` joins, empty unmaps); ``constants``
  (``--value``): field → value for every row. Dicts, or strings of ``field=value`` pairs separated by ``;``.

A table file larger than ``JOBCRAWL_TABLE_STREAM_MB`` (default 16, :data:`~crawler.ingest.table.SINGLE_INPUT_BYTES`)
is only opened (a regular file within the size cap, checked on the descriptor:
:func:`crawler.files.open_stream`) and read as a stream, stored as raw inputs of blocks of rows, so memory stays flat however long the
file is. ``JOBCRAWL_MAX_FILE_SIZE`` (``--max-file-size``) caps every file, as for text dumps.

A re-run reads every table file, but the rows of a raw input (the file, or a block of a streamed
file) unchanged since its last complete parse with the same options (crawler/ingest/ledger.py) are only
counted: they are not normalized or stored again (``JOBCRAWL_REPARSE`` turns that off).

The run report gets one :class:`~crawler.ingest.table.TableReport` dict per table file (``tables``);
stats count ``jobcrawl/rows``, ``jobcrawl/rows/header_skipped``, ``jobcrawl/rows/blank_skipped``,
``jobcrawl/rows/duplicate_id``, ``jobcrawl/repaired/json_type`` (rows with a JSON value of the wrong
type read as text; the table's ``repaired`` lines name them).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator

from crawler.files import InputFile
from crawler.ingest.ledger import options_digest
from crawler.ingest.table import (
    PRESETS,
    SINGLE_INPUT_BYTES,
    TableOptions,
    TableReport,
    format_for,
    parse_assignments,
    parse_table,
)
from crawler.report import FILES, FILES_UNCHANGED, FOUND, UNPARSED
from crawler.ingest.textdump import TextdumpArgs, TextdumpCommandArgs, TextdumpSpider
from normalize.clock import now_iso
from normalize.models import Quarantined, RawInput

NOT_CONSTANT = ("source_id", "url")  # the same value on every row would merge all rows into one posting


class TabularArgs(TextdumpArgs):
    """Validated spider arguments."""

    format: Literal["auto", "text", "csv", "jsonl", "lines"] = Field("auto", description="How to read each file.")
    preset: str | None = Field(None, description="Preset name, `none`, or None to sniff each header.")
    mapping: dict[str, str] = Field(default_factory=dict, description="Field → column spec (`--map`).")
    constants: dict[str, str] = Field(default_factory=dict, description="Field → value for every row (`--value`).")

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value != "none" and value not in PRESETS:
            raise ValueError(f"unknown preset {value!r}; presets: {', '.join(PRESETS)}, none")
        return value

    @field_validator("mapping", "constants", mode="before")
    @classmethod
    def _pairs(cls, value, info):
        what = "--map" if info.field_name == "mapping" else "--value"
        if isinstance(value, str):
            value = [pair for pair in value.split(";") if pair.strip()]
        if isinstance(value, dict):
            value = [f"{k}={v}" for k, v in value.items()]
        out = parse_assignments(list(value or []), what)
        if info.field_name == "constants" and (fixed := [f for f in NOT_CONSTANT if f in out]):
            raise ValueError(f"--value {fixed[0]}: one value for every row would make them all one posting")
        return out


class TabularCommandArgs(TextdumpCommandArgs):
    """The arguments on the command line (``scrapy crawl tabular -a paths=jobs.csv -a preset=jobspy``)."""

    format: str | None = Field(None, description="auto, text, csv, jsonl or lines.")
    preset: str | None = Field(None, description="A preset name, or none (the mapping only).")
    mapping: str | list[str] | dict[str, str] | None = Field(
        None, description="field=column pairs separated by ';' (--map).")
    constants: str | list[str] | dict[str, str] | None = Field(
        None, description="field=value pairs separated by ';' (--value).")


class TabularSpider(TextdumpSpider):
    name = "tabular"
    CommandArgs = TabularCommandArgs

    def __init__(self, paths: str | list[str] | None = None, as_of: str | datetime | None = None,
                 inputs: list[InputFile] | None = None, format: str = "auto", preset: str | None = None,
                 mapping=None, constants=None, unchanged: dict | None = None, **kwargs):
        options = {"format": format, "preset": preset, "mapping": mapping, "constants": constants}
        super().__init__(paths=paths, as_of=as_of, inputs=inputs, unchanged=unchanged, **options, **kwargs)
        self.args = self.validated(TabularArgs, inputs=self.args.inputs, as_of=self.args.as_of, format=format,
                                   preset=preset, mapping=mapping or {}, constants=constants or {})
        self.options = TableOptions(self.args.preset, self.args.mapping, self.args.constants)
        self.stream_above = SINGLE_INPUT_BYTES

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        stream_mb = crawler.settings.getfloat("JOBCRAWL_TABLE_STREAM_MB", SINGLE_INPUT_BYTES / 2**20)
        spider.stream_above = int(stream_mb * 2**20)
        return spider

    def reading_options(self) -> dict[str, str]:
        """Text dumps as the text dump spider reads them; tables under the options given."""
        options = self.args.model_dump(include={"format", "preset", "mapping", "constants"})
        return {**super().reading_options(), self.source_of("tabular"): options_digest(options)}

    def _page_items(self, page):
        """The items of a saved board API answer read by its page object (an input unchanged since its last
        complete parse: counted, its postings only listed)."""
        ledger = self.unchanged.get(self.source_of("tabular")) or {}
        stored = ledger.get((page.url, page.sha256))
        skip = stored is not None and stored[0] == page.as_of
        found = 0
        for item in page.parse():
            if isinstance(item, RawInput):
                item.reader = page.reader
            elif not (isinstance(item, Quarantined) and item.position is None):
                found += 1
            if skip:
                self.list_item(item)
            else:
                yield item
        stats = self.crawler.stats
        stats.inc_value(FOUND, found)
        stats.inc_value(FILES)
        if skip:
            stats.inc_value(UNPARSED, found)
            stats.inc_value(FILES_UNCHANGED)

    def file_format(self, inp: InputFile) -> str:
        return format_for(inp.path, self.args.format)

    def streamed(self, inp: InputFile, st) -> bool:
        """Tables larger than ``JOBCRAWL_TABLE_STREAM_MB`` are read as streams."""
        return self.file_format(inp) != "text" and st.st_size > self.stream_above

    def parse_input(self, inp: InputFile, data, as_of: str):
        fmt = self.file_format(inp)
        if fmt == "text":
            yield from super().parse_input(inp, data, as_of)
            return
        fetched = now_iso()
        if fmt == "jsonl" and isinstance(data, bytes) and inp.path.suffix.lower() == ".json":
            from crawler.ingest.boards import saved_answer_page

            page = saved_answer_page(data, locator=inp.locator, source=self.source_of("tabular"), fetched_at=fetched,
                                     as_of=as_of)
            if page is not None:
                yield from self._page_items(page)
                return
        report = TableReport(locator=inp.locator, format=fmt)
        found = unparsed = 0
        ledger = self.unchanged.get(self.source_of("tabular"))
        skip = False  # the items of an unchanged raw input (crawler/ingest/ledger.py) are counted, not passed on
        for item in parse_table(data, locator=inp.locator, fetched_at=fetched, as_of=as_of,
                                fmt=fmt, options=self.options, report=report, single_input_bytes=self.stream_above,
                                source=self.source_of("tabular")):
            if isinstance(item, RawInput):
                item.reader = {"format": fmt, **self.args.model_dump(include={"preset", "mapping", "constants"}),
                               "streamed": not isinstance(data, bytes)}
                stored = ledger.get((item.locator, item.sha256)) if ledger and item.status == "parsed" else None
                skip = stored is not None and stored[0] == item.as_of
                report.unchanged += skip
                if skip:
                    continue
            elif not (isinstance(item, Quarantined) and item.position is None):
                found += 1
                unparsed += skip
            if skip:
                self.list_item(item)  # not passed on, but still a posting of the listing
            else:
                yield item
        stats = self.crawler.stats
        stats.inc_value(FOUND, found)
        stats.inc_value(UNPARSED, unparsed)
        stats.inc_value(FILES)
        if report.unchanged and report.unchanged == report.inputs:
            stats.inc_value(FILES_UNCHANGED)
        stats.inc_value("jobcrawl/rows", report.rows)
        stats.inc_value("jobcrawl/rows/header_skipped", report.header_rows)
        stats.inc_value("jobcrawl/rows/blank_skipped", report.blank_rows)
        stats.inc_value("jobcrawl/rows/duplicate_id", report.duplicates)
        stats.inc_value("jobcrawl/repaired/json_type", report.repaired_rows)
        self.report.tables.append(report.as_dict() | {"summary": report.line()})
        self.logger.info("table read: %r", self.report.tables[-1])
