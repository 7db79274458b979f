"""``jobcrawl export``: postings as CSV or TSV (flat columns a spreadsheet opens), JSON lines or one JSON array.

The format comes from the output's suffix (:data:`SUFFIXES`) unless ``--format`` names it; the two must
agree. JSON formats carry the nested export record (crawler/store/read.py); CSV and TSV carry
:func:`flat_row`: one column per salary part, each JD section as text (one bullet per line), skills
and tags joined by ``; ``, our score with its level, completeness and four dimensions (``信息不足``: an empty
number, never a default or the app's, which has its own column), the duplicate cluster with the reason,
similarity and member it matched, the application's status and since, the job's ghost signal codes and the likely
employer behind an agency's or hidden posting, times in UTC and in the posting's zone. CSV and TSV start with a
UTF-8 byte order mark by default: Excel reads a file without one in the machine's ANSI code page, which
turns Chinese into mojibake. ``jobcrawl ingest`` reads such a file back (the ``jobcrawl`` preset of
crawler/ingest/table/presets.yaml).
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from crawler.store.read import LOCAL_TIMES
from normalize.ghost import Employer, employer_evidence
from normalize.models import DIMENSIONS
from normalize.shown import json_line

FORMATS = ("csv", "tsv", "jsonl", "json")
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
NOT_BUILT_IN = {
    "parquet": "Parquet is not built in: the lightest writer (fastparquet) brings pandas, about 60 MB installed "
               "(pyarrow 166 MB, polars 175 MB); export CSV or JSONL and convert it, e.g. "
               "duckdb -c \"COPY (FROM 'postings.jsonl') TO 'postings.parquet'\"",
}
DIMENSION_LABELS = ("薪资福利", "成长发展", "工作生活", "使命价值")
SECTION_COLUMNS = ("about", "responsibilities", "requirements", "preferred", "benefits")
LIST_SEPARATOR = "; "

FLAT_COLUMNS: dict[str, str] = {
    "id": "Posting id in the database.",
    "source": "Where it came from: textdump, tabular, greenhouse, lever, …",
    "source_id": "Its id in that source.",
    "url": "Posting page.",
    "title": "Job title.",
    "company": "Company.",
    "city": "City.",
    "district": "District.",
    "category": "Category (人工智能 …).",
    "seniority": "Seniority as written.",
    "employment_type": "Employment type as written (全职 …).",
    "work_mode": "Work mode as written (仅现场办公, remote …).",
    "remote": "true when fully remote.",
    "experience": "Experience requirement as written.",
    "education": "Education requirement as written.",
    "company_info": "Company information as written (industry, funding, size).",
    "salary_raw": "Salary as written (43K, 15-25k·13薪, $120,000 - $150,000 a year).",
    "salary_min": "Lower pay per period, in salary_currency.",
    "salary_max": "Upper pay per period.",
    "salary_currency": "ISO currency (CNY, USD …).",
    "salary_period": "Period of min/max: hour, day, month or year.",
    "salary_months": "Months paid a year (13 for 13薪).",
    "salary_monthly_min": "Lower pay per month.",
    "salary_monthly_max": "Upper pay per month.",
    "salary_source": "Where the salary was read: field (a salary field of the source) or text (the JD text).",
    "posted_raw": "Post time as written.",
    "posted_at": "Post time (ISO 8601, UTC).",
    "posted_local": "Post time in the posting's zone (tz), with its offset.",
    "posted_source": "What the post time rests on: source (a date it states), as_of, fetched or file_mtime "
                     "(counted back from the file's modification time: approximate).",
    "valid_through": "Application deadline.",
    "first_seen": "When jobcrawl first stored it (UTC).",
    "first_seen_local": "first_seen in the posting's zone.",
    "last_seen": "When jobcrawl last saw it (UTC).",
    "last_seen_local": "last_seen in the posting's zone.",
    "closed_at": "When it disappeared from its complete listing (UTC; empty: open).",
    "closed_at_local": "closed_at in the posting's zone.",
    "tz": "The posting's time zone (Asia/Shanghai for Chinese postings unless --tz said otherwise, else UTC).",
    "score": "Our overall score 0–100 (jobcrawl-v1): the weighted mean of the known dimensions; empty when "
             "score_level is 信息不足 or the posting is not scored yet. Never the app's (that is source_score).",
    "score_level": "Level of our overall: 较低 (<60), 中等 (60–79), 较高 (≥80) or 信息不足 (fewer than two "
                   "dimensions known).",
    "score_by": "Our scorer (jobcrawl-v1); empty when not scored yet.",
    "completeness": "Share of the overall's weight whose dimension is known (0–1).",
    **{f"score_{dim}{part}": f"Our {label} {what}." for dim, label in zip(DIMENSIONS, DIMENSION_LABELS)
       for part, what in (("", "score 0–100; empty when its level is 信息不足"),
                          ("_level", "level: 较低, 中等, 较高 or 信息不足 (too little evidence)"))},
    "score_summary": "Our one-sentence explanation.",
    "source_score": "The app's own 综合评分, where it gave one (kept apart from ours).",
    "cluster_id": "Duplicate cluster.",
    "duplicate_of": "Canonical posting of its cluster, when it is a duplicate.",
    "dedupe_reason": "How it joined its cluster: new (its first member), same_url, same_content, same_identity, "
                     "near_duplicate or cross_company_copy.",
    "dedupe_similarity": "Similarity of its JD text with the posting it matched (0–1; 1 for the exact reasons).",
    "dedupe_matched": "The posting it matched when it joined.",
    "cross_company": "true when it matched a posting of another company (a copy: staffing agency).",
    "different_city": "true when it matched a posting in another city.",
    "application_status": "The status of its job's application (jobcrawl track: saved, applied, interviewing, offer, "
                          "accepted, rejected, withdrawn), set on it or another member of its cluster; empty: untracked.",
    "application_since": "Since when the job has had that status (UTC); empty: untracked.",
    "ghost_signals": "Ghost signals of its job, on the job's canonical posting (not on its duplicates), joined by '; ': "
                     "open_long, reposted, reopened, mass_agency; empty: none. The JSON export has their sentences.",
    "likely_employer": "For an agency's or hidden posting: the company of a direct posting of the same job.",
    "likely_employer_evidence": "That direct posting and the JD similarity: #12, similarity 0.8684 (same cluster).",
    "skills": "Canonical skills found, joined by '; '.",
    "tags": "The source's tags, joined by '; '.",
    "about": "About the role: one bullet per line.",
    "responsibilities": "Responsibilities: one bullet per line.",
    "requirements": "Requirements: one bullet per line.",
    "preferred": "Preferred qualifications: one bullet per line.",
    "benefits": "Benefits: one bullet per line.",
    "other_sections": "Sections under other headings: the heading, a bullet per line; a blank line between sections.",
}
"""Columns of a CSV or TSV export, in order, with what each holds."""


class ExportError(ValueError):
    """A usage problem of an export: a format that does not match the output's suffix, an unknown column."""


def choose_format(out: str, requested: str | None) -> str:
    """The export format for output ``out`` (``-``: standard output) and ``--format`` (None: not given)."""
    suffix = Path(out).suffix.lower() if out != "-" else ""
    if requested in NOT_BUILT_IN or suffix.lstrip(".") in NOT_BUILT_IN:
        raise ExportError(NOT_BUILT_IN[requested if requested in NOT_BUILT_IN else suffix.lstrip(".")])
    implied = SUFFIXES.get(suffix)
    if requested and implied and requested != implied:
        raise ExportError(f"--format {requested} does not match --out {out} (a {suffix} file is {implied}); "
                          f"change one of them")
    if requested or implied:
        return requested or implied  # type: ignore[return-value]
    if out == "-":
        return "jsonl"
    known = ", ".join(SUFFIXES)
    raise ExportError(f"cannot tell the format of --out {out} from its suffix ({known}); add --format")


def is_flat(fmt: str) -> bool:
    return fmt in ("csv", "tsv")


def available_columns(fmt: str, first: dict[str, Any] | None) -> list[str]:
    """Column names ``--columns`` may name: the flat columns, or the keys of a JSON record."""
    if is_flat(fmt):
        return list(FLAT_COLUMNS)
    return list(first) if first else []


def _text(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _joined(values: Iterable[str] | None) -> str:
    return LIST_SEPARATOR.join(v for v in (values or []) if v)


def flat_row(record: dict[str, Any]) -> dict[str, Any]:
    """An export record (crawler/store/read.py) as the flat columns of :data:`FLAT_COLUMNS`."""
    salary = record.get("salary") or {}
    ours = record.get("evaluation") or {}
    theirs = record.get("source_evaluation") or {}
    sections: dict[str, list[str]] = record.get("sections") or {}
    row: dict[str, Any] = {name: record.get(name) for name in (
        "id", "source", "source_id", "url", "title", "company", "city", "district", "category", "seniority",
        "employment_type", "work_mode", "remote", "experience", "education", "posted_raw", "posted_at",
        "posted_local", "posted_source", "valid_through", *LOCAL_TIMES, *(f"{t}_local" for t in LOCAL_TIMES), "tz",
        "cluster_id", "duplicate_of", "dedupe_reason", "dedupe_similarity", "dedupe_matched", "cross_company",
        "different_city", "application_status", "application_since")}
    row["company_info"] = (record.get("company_info") or {}).get("raw")
    row["salary_raw"] = salary.get("raw")
    for part in ("min", "max", "currency", "period", "months", "monthly_min", "monthly_max"):
        row[f"salary_{part}"] = salary.get(part)
    row["salary_source"] = salary.get("source")
    row["score"] = ours.get("overall")
    row["score_level"] = ours.get("overall_level")
    row["score_by"] = ours.get("scorer")
    row["completeness"] = ours.get("completeness")
    levels = ours.get("levels") or {}
    for dim in DIMENSIONS:
        row[f"score_{dim}"] = ours.get(dim)
        row[f"score_{dim}_level"] = levels.get(dim)
    row["score_summary"] = ours.get("summary")
    row["source_score"] = theirs.get("overall")
    row["ghost_signals"] = _joined(signal["code"] for signal in record.get("ghost_signals") or [])
    row["likely_employer"] = record.get("likely_employer")
    evidence = record.get("likely_employer_evidence")
    row["likely_employer_evidence"] = (employer_evidence(Employer(record["likely_employer"], **evidence))
                                       if evidence else None)
    row["skills"] = _joined(record.get("skills"))
    row["tags"] = _joined(record.get("tags"))
    for key in SECTION_COLUMNS:
        row[key] = "\n".join(sections.get(key) or [])
    row["other_sections"] = "\n\n".join(
        "\n".join([key, *bullets]) for key, bullets in sections.items() if key not in SECTION_COLUMNS)
    return {name: _text(row[name]) for name in FLAT_COLUMNS}


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A spreadsheet takes a cell that starts with one of these for a formula (``=HYPERLINK(…)`` in a scraped title)."""


def as_cell(value: Any) -> Any:
    """``value`` for a spreadsheet cell: text that would start a formula gets a leading ``'``, which spreadsheets
    show as text (`jobcrawl ingest` takes it off again)."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def _picked(record: dict[str, Any], columns: list[str] | None) -> dict[str, Any]:
    return record if columns is None else {name: record.get(name) for name in columns}


def write_records(stream: IO[str], records: Iterator[dict[str, Any]], fmt: str, *,
                  columns: list[str] | None = None, bom: bool = False) -> int:
    """Write ``records`` to the text ``stream`` (opened with ``newline=""``) as ``fmt``; returns how many."""
    if bom:
        stream.write("\ufeff")
    n = 0
    if is_flat(fmt):
        names = columns or list(FLAT_COLUMNS)
        writer = csv.DictWriter(stream, fieldnames=names, delimiter="\t" if fmt == "tsv" else ",",
                                extrasaction="ignore")
        writer.writeheader()
        for n, record in enumerate(records, 1):
            writer.writerow({name: as_cell(value) for name, value in flat_row(record).items()})
        return n
    if fmt == "json":
        stream.write("[")
    for n, record in enumerate(records, 1):
        text = json_line(json.dumps(_picked(record, columns), ensure_ascii=False))
        if fmt == "json":
            stream.write(("\n" if n == 1 else ",\n") + text)
        else:
            stream.write(text + "\n")
    if fmt == "json":
        stream.write("\n]\n" if n else "]\n")
    return n


def write_file(out: str, write) -> int:
    """Call ``write(stream)`` on ``out`` (``-``: standard output), returning what it returns. A file is
    written beside its final name and moved there when complete: a failed export never leaves half a
    file where the last good one was."""
    if out == "-":
        sys.stdout.flush()
        stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="")
        try:
            result = write(stream)
            stream.flush()
        finally:
            stream.detach()  # standard output stays open
        return result
    target = Path(out)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.resolve().parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as stream:
            result = write(stream)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return result
