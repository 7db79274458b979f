"""Records → items: a file's header bound to fields (:class:`Table`), and each record classified as a posting, a
quarantine record, a blank row or a repeated header."""

from __future__ import annotations

from typing import Any, Mapping

from crawler.ingest.table.columns import Binding, bind, missing_columns, sniff_preset
from crawler.ingest.table.fields import (BENEFITS_HEADING, JOINERS, LIST_FIELDS, REQUIRED, as_text, cell, split_list,
                                         unescape_markdown)
from crawler.ingest.table.presets import PRESETS
from crawler.ingest.table.records import Record
from crawler.ingest.table.report import TableOptions, TableReport
from normalize.dedupe import canonical_url
from normalize.models import Quarantined, RawPosting, RawSection


class Table:
    """Turns one file's records into items, given its header and options."""

    def __init__(self, *, locator: str, fetched_at: str, as_of: str, source: str, options: TableOptions,
                 report: TableReport):
        self.locator, self.fetched_at, self.as_of, self.source = locator, fetched_at, as_of, source
        self.options, self.report = options, report
        self.header: list[str] = []
        self.header_raw: list[str] = []
        self.binding: Binding | None = None
        self.markdown: tuple[str, ...] = ()
        self.seen_ids: set[str] = set()

    def set_header(self, header: list[str], raw: list[str] | None = None) -> str | None:
        """Bind columns; returns a problem (one line) when the mapping cannot work for this file."""
        opts = self.options
        self.header = header
        self.header_raw = [c.strip() for c in (raw if raw is not None else header)]
        preset = None
        if opts.preset and opts.preset != "none":
            preset = PRESETS[opts.preset]
        elif opts.preset is None and self.report.format != "lines":
            preset, _ = sniff_preset(header)
            self.report.sniffed = preset is not None
        columns: dict[str, tuple[str, ...]] = dict(preset.columns) if preset else {}
        for name, spec in opts.mapping.items():
            if spec:
                columns[name] = (spec,)
            else:
                columns.pop(name, None)
        for name in opts.constants:
            columns.pop(name, None)
        binding = bind(header, columns, preset.derived if preset else (), preset.name if preset else None)
        self.markdown = preset.markdown if preset else ()
        self.binding = binding
        self.report.preset = binding.preset
        self.report.columns, self.report.matched = len(header), binding.matched
        for name, spec, part in missing_columns(opts.mapping, header):
            return f"--map {name}={spec}: no column {part!r} (columns: {', '.join(header)})"
        for name in REQUIRED:
            if name not in binding.fields and name not in opts.constants:
                return (f"no column gives the {name} (columns: {', '.join(header)}); "
                        f"use --map {name}=COLUMN, --value {name}=VALUE or --preset NAME")
        return None

    def is_header(self, cells: list[str]) -> bool:
        """A row repeating the header verbatim (exports that concatenate pages do this)."""
        n = len(self.header_raw)
        return (len(cells) >= n and cells[0].strip() == self.header_raw[0]
                and [c.strip() for c in cells[:n]] == self.header_raw and not any(c.strip() for c in cells[n:]))

    def where(self, record: Record, unit: str) -> str:
        return f"{unit} {record.number}" + (f" (line {record.line})" if record.line != record.number else "")

    def missing(self, values: Mapping[str, Any]) -> list[str]:
        """``["title"]`` when the record has neither a title nor a description (derived values never give
        one), else ``[]``. A record without company is kept: the employer is hidden (猎聘, BOSS)."""
        assert self.binding is not None
        constants, fields = self.options.constants, self.binding.fields

        def given(name: str) -> bool:
            return bool(constants.get(name, "").strip()) or any(as_text(name, values.get(c))[0]
                                                                  for c in fields.get(name, ()))

        return [] if given("title") or given("description") else ["title"]

    def item(self, record: Record, values: Mapping[str, Any], unit: str,
             build: bool = True) -> RawPosting | Quarantined | bool:
        """A record's values (header name → cell) as a RawPosting (``True`` when not ``build``), or why
        it cannot be one."""
        missing = self.missing(values)
        if missing:
            return self.quarantine(record, "missing_field", f"{self.where(record, unit)}: no {', no '.join(missing)}")
        if not build:
            return True
        binding = self.binding
        assert binding is not None
        out: dict[str, Any] = {}
        notes: list[str] = []
        for name, columns in binding.fields.items():
            parts = []
            for column in columns:
                text, note = as_text(name, values.get(column))
                parts += [text] if text else []
                notes += [note] if note else []
            if name in LIST_FIELDS:
                out[name] = [item for part in parts for item in split_list(part)]
            elif parts:
                out[name] = JOINERS.get(name, " ").join(parts)
                if name in self.markdown:
                    out[name] = unescape_markdown(out[name])
        extra: dict[str, str] = {}
        for derived in binding.derived:
            for name, value in derived.fn({c: cell(values.get(c)) for c in derived.columns}).items():
                if name == "extra":
                    extra.update(value)
                elif value and not out.get(name) and name not in REQUIRED:
                    out[name] = value
        out.update(self.options.constants)
        for name in [n for n in LIST_FIELDS if isinstance(out.get(n), str)]:
            out[name] = split_list(out[name])
        for key, value in values.items():
            if key not in binding.consumed and (text := cell(value)):
                extra[key] = text
        if notes:
            self.report.note_repair(str(record.number), notes)
        benefits = out.pop("benefits", [])
        url = out.get("url") or None
        page = url if url and canonical_url(url) else None  # a mailto: or javascript: link identifies no row
        source_id = out.pop("source_id", None) or page or f"{self.locator}#{record.number}"
        if source_id in self.seen_ids:
            self.report.duplicates += 1
        self.seen_ids.add(source_id)
        return RawPosting(
            source=self.source, source_id=source_id, locator=self.locator, position=record.number,
            fetched_at=self.fetched_at, as_of=self.as_of, extra=extra,
            sections=[RawSection(heading=BENEFITS_HEADING, lines=benefits)] if benefits else [],
            **{k: v for k, v in out.items() if v},
        )

    def quarantine(self, record: Record, reason: str, detail: str) -> Quarantined:
        return Quarantined(source=self.source, locator=self.locator, position=record.number, reason=reason,
                           detail=detail, text=record.text, fetched_at=self.fetched_at)


def _cells_to_values(table: Table, record: Record) -> dict[str, str] | tuple[str, str]:
    cells = record.cells or []
    width = len(table.header)
    if len(cells) > width and any(c.strip() for c in cells[width:]):
        return ("misaligned", f"{len(cells)} cells but the header has {width} columns")
    return dict(zip(table.header, cells))


def row_item(table: Table, record: Record, unit: str, report: TableReport) -> RawPosting | Quarantined | None:
    """The item of one record (counted in ``report``); None for a blank row or a repeated header."""
    item = classify(table, record, unit, report)
    assert not isinstance(item, bool)
    if isinstance(item, RawPosting):
        report.postings += 1
    elif item is not None:
        report.quarantined += 1
    return item


def classify(table: Table, record: Record, unit: str, report: TableReport,
              build: bool = True) -> RawPosting | Quarantined | bool | None:
    """What a record becomes: a posting (``True`` instead when not ``build``), a quarantine record, or
    None for a blank row or a repeated header (counted in ``report``)."""
    where = table.where(record, unit)
    if record.error:
        return table.quarantine(record, record.error[0], f"{where}: {record.error[1]}")
    if record.cells is not None and report.format == "csv":
        if not any(c.strip() for c in record.cells):
            report.blank_rows += 1
            return None
        if table.is_header(record.cells):
            report.header_rows += 1
            return None
        values = _cells_to_values(table, record)
        if isinstance(values, tuple):
            return table.quarantine(record, values[0], f"{where}: {values[1]}")
    elif record.cells is not None:  # lines
        if not record.cells[0]:
            report.blank_rows += 1
            return None
        values = {"description": record.cells[0]}
    else:
        if record.obj is None or not any(cell(v) for v in record.obj.values()):
            report.blank_rows += 1
            return None
        values = record.obj
    return table.item(record, values, unit, build)
