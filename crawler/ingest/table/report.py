"""What the user says about a table file's columns (:class:`TableOptions`) and what reading it did
(:class:`TableReport`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping

from crawler.files import quote_name
from normalize.text import ZERO_TAIL

REPAIR_LINES = 20  # repaired rows named one by one per file; the others are counted


@dataclass(frozen=True)
class TableOptions:
    """What the user said about the columns: a preset name (None: sniff; ``none``: mapping only), a
    mapping (field → column spec, ``""`` unmaps) and constants (field → value for every row)."""

    preset: str | None = None
    mapping: Mapping[str, str] = field(default_factory=dict)
    constants: Mapping[str, str] = field(default_factory=dict)


@dataclass
class TableReport:
    """What reading one file did. ``rows`` = ``postings + quarantined + header_rows + blank_rows``."""

    locator: str
    format: str
    encoding: str | None = None
    delimiter: str | None = None
    backslash_escapes: bool = False  # written with escapechar="\\" (crawler.ingest.table.sniff.backslash_escaped)
    preset: str | None = None
    sniffed: bool = False
    columns: int = 0
    matched: int = 0
    rows: int = 0
    postings: int = 0
    quarantined: int = 0
    header_rows: int = 0
    blank_rows: int = 0
    duplicates: int = 0
    inputs: int = 0
    unchanged: int = 0  # raw inputs unchanged since their last parse (crawler/ingest/ledger.py): rows counted, not stored again
    streamed: bool = False
    error: str | None = None
    repaired_rows: int = 0  # rows with a JSON value of the wrong type, read as text
    repaired: list[str] = field(default_factory=list)  # one line for each of the first REPAIR_LINES of them
    zero_tail: int = 0  # NUL bytes ending the file (a write cut short), left out

    def note_repair(self, where: str, notes: list[str]) -> None:
        """Count a repaired row; keep its line (``locator#row: field: …``) if fewer than REPAIR_LINES are kept."""
        self.repaired_rows += 1
        if len(self.repaired) < REPAIR_LINES:
            self.repaired.append(f"{quote_name(self.locator)}#{where}: {'; '.join(notes)}")

    def repair_lines(self) -> list[str]:
        """The kept repair lines, and one for the rows beyond them."""
        more = self.repaired_rows - len(self.repaired)
        return (self.repaired + ([f"{quote_name(self.locator)}: {more} more rows repaired the same way"] if more else [])
                + ([f"{quote_name(self.locator)}: {ZERO_TAIL.format(self.zero_tail)}"] if self.zero_tail else []))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"repaired": self.repair_lines()}

    def line(self) -> str:
        """One line for humans: how the file was read and what became of its rows."""
        how = [self.format + (f", read as a stream into {self.inputs} raw inputs" if self.streamed else "")]
        if self.encoding:
            how.append(self.encoding)
        if self.delimiter:
            how.append("delimiter " + {"\t": "tab", ",": "comma", ";": "semicolon", "|": "bar"}.get(self.delimiter, repr(self.delimiter)))
        if self.backslash_escapes:
            how.append("backslash escapes")
        mapping = ""
        if self.format != "lines" and self.columns:
            chosen = f"preset {self.preset}" + (" (sniffed)" if self.sniffed else "") if self.preset else "no preset"
            rest = ", the rest kept in extra" if self.matched < self.columns else ""
            mapping = f" · {chosen}, {self.matched} of {self.columns} columns mapped{rest}"
        where = quote_name(self.locator)
        if self.error:
            return f"{where}: {', '.join(how)}{mapping} · not imported: {self.error}"
        return (f"{where}: {', '.join(how)}{mapping} · rows {self.rows}: postings {self.postings}, "
                f"quarantined {self.quarantined}, repeated headers skipped {self.header_rows}, "
                f"blank skipped {self.blank_rows}" + (f" · {self.duplicates} repeat an earlier row's id (the later row wins)"
                                                       if self.duplicates else "")
                + (f" · repaired {self.repaired_rows} (JSON values of the wrong type read as text)" if self.repaired_rows else "")
                + (f" · {ZERO_TAIL.format(self.zero_tail)}" if self.zero_tail else "")
                + self._unchanged_note())

    def _unchanged_note(self) -> str:
        if not self.unchanged:
            return ""
        if self.streamed:
            return f" · {self.unchanged} of {self.inputs} raw inputs unchanged since their last parse, not stored again"
        return " · unchanged since its last parse, not stored again"
