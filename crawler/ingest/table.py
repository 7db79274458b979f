"""Postings exported by other tools — CSV, JSON lines, one free-text JD per line — → :class:`RawPosting` items.

Formats (:func:`format_for` picks one by suffix unless told):

- ``csv``: a header row, then one posting per record. Delimiter sniffed on the header line among
  ``,`` ``\\t`` ``;`` ``|``; standard quoting, so quoted fields may span lines and keep their ``\\r\\n``.
- ``jsonl``: one JSON object per line (keys are the columns); a ``.json`` file holding one array of
  objects is read the same way.
- ``lines``: one free-text job description per line, no header; constants (``--value``) give what the
  file lacks (company, title).

**Columns → fields.** A :class:`Preset` maps our raw fields (:data:`FIELDS`) to column names. Without a
preset name the header is sniffed: the preset explaining the most header columns wins (ties: the
preset naming fewer columns, i.e. the more specific one). ``--map field=column`` overrides or
extends it (``field=colA+colB`` joins columns; ``field=`` unmaps); ``--value field=value`` gives every
row that value. Columns no field uses go to ``extra`` under their header name: nothing is dropped.
Tags and benefits are split on ``, ， 、 ; ； | ｜`` and line breaks, or read as a JSON / Python list
literal (``['大数据', 'SQL']``); benefits become a ``福利待遇`` section. Company facts run together
(``互联网A轮1000-9999人``) go to ``RawPosting.company_info``.

**Rows.** A row's number is the record's number counting the header as row 1 (the row number a
spreadsheet shows); for ``jsonl`` and ``lines`` it is the line number (item number in a JSON array).
It is the posting's ``position`` and appears in every problem (``row 17: no title``). Blank rows and
rows repeating the header are skipped and counted. Title and company are required: the store keys
dedupe and scoring on them, and a file without them can supply constants (``--value company=…``).
A row with more non-empty cells than the header has columns is quarantined (misaligned); fewer cells
mean empty trailing cells.

**Identity.** ``source`` is ``tabular`` (the preset is a property of the file, not of the posting;
re-importing with another mapping updates the same postings). ``source_id`` is the mapped id column,
else the URL of a web page, else ``<locator>#<row>``.

**Raw inputs.** A file up to :data:`SINGLE_INPUT_BYTES` is one raw input, stored verbatim and yielded
before its rows (a first pass counts what the rows become, so its status is known). A larger UTF-8 or
GB18030 file is read as a stream, line by line, and stored as consecutive raw inputs of whole
records, up to :data:`BLOCK_ROWS` rows / :data:`BLOCK_BYTES` each (same locator, each with the
SHA-256 of its own bytes): memory stays flat however long the file is, and the texts concatenated
are the file.

:func:`parse_table` never raises: every problem becomes a :class:`Quarantined` naming the row (or the
file) and the problem.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Mapping

from normalize.dedupe import canonical_url
from normalize.fields import EDUCATION_LEVELS
from normalize.models import Quarantined, RawInput, RawPosting, RawSection
from normalize.text import WIDE_BOMS, ZERO_TAIL, DecodeError, decode_bytes, fold, zero_filled_tail

from crawler.files import TOO_DEEP, quote_name, size_text


__all__ = [
    "FIELDS",
    "FORMATS",
    "PRESETS",
    "Preset",
    "TableOptions",
    "TableReport",
    "canonical_field",
    "format_for",
    "parse_assignments",
    "parse_table",
    "sniff_preset",
    "split_list",
]

FIELDS = (
    "title", "company", "url", "location", "salary", "posted", "published", "valid_through", "description",
    "tags", "seniority", "employment_type", "work_mode", "category", "experience", "education", "benefits",
    "company_info", "source_id",
)
"""Raw fields a column may fill (``RawPosting`` fields, plus ``benefits`` → a section and ``company_info``)."""

FIELD_ALIASES = {"city": "location", "id": "source_id", "link": "url", "jd": "description", "welfare": "benefits"}
FORMATS = ("auto", "text", "csv", "jsonl", "lines")
SUFFIX_FORMATS = {".csv": "csv", ".tsv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
LIST_FIELDS = frozenset({"tags", "benefits"})
JOINERS = {"description": "\n", "location": "·"}
"""How the values of a field mapped to several columns are joined (default: a space)."""
REQUIRED = ("title", "company")
BENEFITS_HEADING = "福利待遇"

REPAIR_LINES = 20  # repaired rows named one by one per file; the others are counted

SINGLE_INPUT_BYTES = 16 * 2**20
BLOCK_BYTES = 2 * 2**20
BLOCK_ROWS = 1000
HEAD_BYTES = 2**20  # what a large file's encoding and delimiter are judged on
_JSON_SCAN_LINES = 200  # JSON lines read ahead to learn the keys
_QUARANTINE_TEXT = 64 * 1024  # text kept for a file-level problem of a large file

csv.field_size_limit(max(csv.field_size_limit(), 64 * 2**20))  # one JD can exceed the 128 KB default


# --------------------------------------------------------------------------- field values


_LIST_SEP = re.compile(r"\s*(?:[,，、;；|｜\n\r]\s*)+")


def _flatten(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _flatten(v)]
    if value is None:
        return []
    text = str(value).strip()
    return [text] if text else []


def split_list(text: str | None) -> list[str]:
    """Items of a tags/benefits cell: a JSON or Python list literal (nested lists flattened), else the
    text split on ``, ， 、 ; ； | ｜`` and line breaks. Empty items are dropped."""
    text = (text or "").strip()
    if not text:
        return []
    if text[0] == "[" and text[-1] == "]" and len(text) < 200_000:
        for load in (json.loads, ast.literal_eval):
            try:
                return _flatten(load(text))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return [item for item in _LIST_SEP.split(text) if item]


def canonical_field(name: str) -> str:
    """Our field name for ``name`` (``city`` → ``location``); ValueError naming the choices otherwise."""
    key = name.strip().lower().replace("-", "_")
    key = FIELD_ALIASES.get(key, key)
    if key not in FIELDS:
        raise ValueError(f"unknown field {name!r}; fields: {', '.join(FIELDS)} (aliases: {', '.join(FIELD_ALIASES)})")
    return key


def parse_assignments(pairs: list[str] | tuple[str, ...], what: str) -> dict[str, str]:
    """``["title=职位", "city=城市"]`` → ``{"title": "职位", "location": "城市"}``; ValueError for a pair
    without ``=`` or an unknown field. ``what`` names the option in the message."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{what} {pair!r}: expected FIELD=VALUE")
        out[canonical_field(name)] = value.strip()
    return out


# --------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class Derived:
    """Fields computed from several columns (JobSpy's min/max/interval/currency → one salary text).

    ``fn`` gets ``{column: cell}`` for ``columns`` and returns ``{field: value}`` (``"extra"``: a dict for
    ``extra``). Derived values fill only fields the column mapping left empty, never title or company
    (those are checked before anything is derived). The columns are consumed.
    """

    columns: tuple[str, ...]
    fn: Callable[[dict[str, str]], dict[str, Any]]


@dataclass(frozen=True)
class Preset:
    """A column layout: field → candidate column names (the first one the header has is used; an
    alternative ``a+b`` joins columns ``a`` and ``b``)."""

    name: str
    about: str
    columns: Mapping[str, tuple[str, ...]]
    derived: tuple[Derived, ...] = ()
    loses_ties: bool = False
    """When sniffing, the preset is picked only if it explains more columns than any other."""

    def names(self) -> set[str]:
        out = {_column_key(part) for alts in self.columns.values() for alt in alts for part in alt.split("+")}
        return out | {_column_key(c) for d in self.derived for c in d.columns}


def _number_text(value: str) -> str:
    try:
        number = float(value.replace(",", ""))
    except ValueError:
        return value
    return str(int(number)) if number.is_integer() else f"{number:g}"


_JOBSPY_INTERVALS = {"yearly": "year", "monthly": "month", "weekly": "week", "daily": "day", "hourly": "hour"}


def _jobspy_salary(cells: dict[str, str]) -> dict[str, Any]:
    """``min_amount, max_amount, interval, currency`` → ``USD 120000-150000/year``; JobSpy's currency
    defaults to USD (its model's default), so a blank currency means USD."""
    interval = cells.get("interval", "")
    text = _salary_text(cells.get("min_amount", ""), cells.get("max_amount", ""), cells.get("currency") or "USD",
                        _JOBSPY_INTERVALS.get(interval.lower(), interval))
    if text is None:
        rest = {k: v for k, v in cells.items() if v}
        return {"extra": rest} if rest else {}
    return {"salary": text}


def _salary_text(low: str, high: str, currency: str, period: str) -> str | None:
    """``USD 120000-150000/year`` from the parts of a structured salary; None without an amount."""
    low, high = _number_text(low), _number_text(high)
    if not low and not high:
        return None
    amount = f"{low}-{high}" if low and high and low != high else low or high
    return f"{currency} {amount}".strip() + (f"/{period}" if period else "")


def _remote_flag(cells: dict[str, str]) -> dict[str, Any]:
    """A boolean remote column (``is_remote``: ``True``) → work mode ``Remote``; other values stay in extra."""
    out: dict[str, Any] = {}
    for column, value in cells.items():
        if value.lower() in ("true", "1", "yes"):
            out["work_mode"] = "Remote"
        elif value:
            out.setdefault("extra", {})[column] = value
    return out


_JOBCRAWL_HEADINGS = {
    "about": ("关于这个职位", "About the role"), "responsibilities": ("岗位职责", "Responsibilities"),
    "requirements": ("任职要求", "Requirements"), "preferred": ("加分项", "Preferred qualifications"),
    "benefits": ("福利待遇", "Benefits"),
}
_CJK = re.compile(r"[\u3400-\u9fff]")


def _jobcrawl_sections(cells: dict[str, str]) -> dict[str, Any]:
    """The section columns of a ``jobcrawl export`` CSV (one bullet per line; ``other_sections``: a heading
    line, its bullets, a blank line between sections) → one description with a heading per section, which
    the description's section splitting (normalize/sections.py) cuts back into the same sections."""
    parts = []
    for key, (zh, en) in _JOBCRAWL_HEADINGS.items():
        text = cells.get(key, "").strip()
        if text:
            parts.append(f"{zh if _CJK.search(text) else en}\n{text}")
    for block in re.split(r"\n\s*\n", cells.get("other_sections", "").strip()):
        heading, _, text = block.strip().partition("\n")
        if heading:
            parts.append(f"【{heading.strip()}】\n{text.strip()}")
    return {"description": "\n".join(parts)} if parts else {}


def _jobcrawl_salary(cells: dict[str, str]) -> dict[str, Any]:
    """A ``jobcrawl export`` row without ``salary_raw``: its salary columns as ``CNY 30000-50000/month``."""
    text = _salary_text(cells.get("salary_min", ""), cells.get("salary_max", ""), cells.get("salary_currency", ""),
                        cells.get("salary_period", ""))
    return {"salary": text} if text else {}


_JOBCRAWL_DERIVED_ONLY = (
    "id", "source", "remote", "salary_months", "salary_monthly_min", "salary_monthly_max", "salary_source",
    "posted_raw", "posted_local", "posted_source", "first_seen", "first_seen_local", "last_seen", "last_seen_local",
    "closed_at", "closed_at_local", "tz", "score", "score_level", "score_by", "completeness", "score_pay",
    "score_pay_level", "score_growth", "score_growth_level", "score_worklife", "score_worklife_level", "score_mission",
    "score_mission_level", "score_summary", "source_score", "cluster_id", "duplicate_of", "dedupe_reason",
    "dedupe_similarity", "dedupe_matched", "cross_company", "different_city", "skills",
)
"""Columns of a ``jobcrawl export`` that this database computes again (ids, times, scores, clusters, skills)."""


_CHIP_EXPERIENCE = re.compile(r"经验|应届|在校")
_CHIP_EDUCATION = re.compile("^(?:" + "|".join(map(re.escape, EDUCATION_LEVELS)) + r"|学历不限)(?:及以上)?$")
_CHIP_POSTED = re.compile(r"(?:发布|更新)$")
_CHIP_HEADCOUNT = re.compile(r"^招(?:\d+|若干)人$")


def _51job_labels(cells: dict[str, str]) -> dict[str, Any]:
    """51job's 标签 cell, ``[[['五险一金'], …], ['南京-栖霞区', '2年经验', '本科', '招2人', '09-03发布']]``:
    benefits, then chips classified as experience, education, post date, head count (extra 招聘人数);
    a chip repeating 地址 is that duplicate; other chips are tags."""
    text = cells.get("标签", "")
    try:
        data = ast.literal_eval(text) if text.startswith("[") and len(text) < 200_000 else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        data = None
    if not (isinstance(data, list) and len(data) == 2 and all(isinstance(x, list) for x in data)):
        return {"tags": split_list(text)} if text else {}
    out: dict[str, Any] = {"benefits": _flatten(data[0]), "tags": [], "extra": {}}
    location = cells.get("地址", "")
    for chip in _flatten(data[1]):
        if _CHIP_EXPERIENCE.search(chip) and "experience" not in out:
            out["experience"] = chip
        elif _CHIP_EDUCATION.match(chip) and "education" not in out:
            out["education"] = chip
        elif _CHIP_POSTED.search(chip) and "posted" not in out:
            out["posted"] = chip
        elif _CHIP_HEADCOUNT.match(chip) and "招聘人数" not in out["extra"]:
            out["extra"]["招聘人数"] = chip
        elif chip != location:
            out["tags"].append(chip)
    return out


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "jobspy",
            "JobSpy's scrape_jobs() CSV (Indeed, LinkedIn, Glassdoor, Google, ZipRecruiter, Naukri …)",
            {
                "source_id": ("id",), "url": ("job_url",), "title": ("title",), "company": ("company",),
                "location": ("location",), "posted": ("date_posted",), "employment_type": ("job_type",),
                "seniority": ("job_level",), "category": ("job_function",), "description": ("description",),
                "company_info": ("company_industry",), "tags": ("skills",), "experience": ("experience_range",),
                "work_mode": ("work_from_home_type",),
            },
            (Derived(("min_amount", "max_amount", "interval", "currency"), _jobspy_salary),
             Derived(("is_remote",), _remote_flag)),
        ),
        Preset(
            "zh-board",
            "a generic Chinese board listing (职位名称, 公司名称, 薪资, 工作地点, 职位描述, 经验要求, 学历要求, 福利, 发布时间, 公司信息 …)",
            {
                "title": ("职位名称", "岗位名称", "职位", "岗位", "招聘职位"),
                "company": ("公司名称", "企业名称", "公司全称", "公司", "企业", "招聘单位"),
                "salary": ("薪资", "薪酬", "薪资范围", "薪水", "工资", "月薪", "待遇"),
                "location": ("工作地点", "工作城市", "城市+区域", "城市+地区", "城市", "地点", "地区", "位置", "地址", "职位地址"),
                "description": ("职位描述", "岗位描述", "职位详情", "岗位职责", "职位职责", "工作内容", "职位信息", "职位要求"),
                "experience": ("经验要求", "工作经验", "经验", "经验学历", "学历经验要求", "经验学历要求"),
                "education": ("学历要求", "学历", "最低学历"),
                "benefits": ("福利", "福利待遇", "公司福利", "职位福利", "职位诱惑", "职位亮点"),
                "posted": ("发布时间", "发布日期", "更新时间", "更新日期", "发布"),
                "company_info": ("公司信息", "公司规模", "规模", "企业规模", "公司描述"),
                "category": ("职位类别", "职位类型", "职能类别", "岗位类别", "行业类别"),
                "tags": ("标签", "职位标签", "技能标签", "关键词"),
                "employment_type": ("工作性质", "职位性质", "工作类型"),
                "url": ("职位链接", "链接", "网址", "详情页链接", "详情链接", "url"),
                "source_id": ("职位id", "职位编号", "岗位编号"),
            },
        ),
        Preset(
            "boss-list",
            "BOSS直聘 search cards: 职位名称, 职位地址, 薪资, 学历经验要求, 公司名称, 公司信息, 公司福利, 详情页链接",
            {
                "title": ("职位名称",), "location": ("职位地址",), "salary": ("薪资",), "experience": ("学历经验要求",),
                "company": ("公司名称",), "company_info": ("公司信息",), "benefits": ("公司福利",), "url": ("详情页链接",),
            },
        ),
        Preset(
            "boss-jd",
            "BOSS直聘 postings with JD: 公司, 公司行业, 经验学历, 职位, 工资, 位置, 公司描述, 职位描述（大概）, 福利（大概）, 职位描述 …",
            {
                "company": ("公司",), "experience": ("经验学历",), "title": ("职位",), "salary": ("工资",),
                "location": ("位置",), "company_info": ("公司描述",), "tags": ("职位描述（大概）",),
                "benefits": ("福利（大概）",), "description": ("职位描述",),
            },
        ),
        Preset(
            "lagou-jd",
            "拉勾 postings with JD: 公司, 规模, 职位, 工资, 位置, 经验要求, 学历要求, 职位诱惑, 职位描述",
            {
                "company": ("公司",), "company_info": ("规模",), "title": ("职位",), "salary": ("工资",),
                "location": ("位置",), "experience": ("经验要求",), "education": ("学历要求",),
                "benefits": ("职位诱惑",), "description": ("职位描述",),
            },
        ),
        Preset(
            "lagou-api",
            "拉勾's positionAjax JSON fields: positionName, salary, workYear, education, city, district, companyFullName, …",
            {
                "source_id": ("positionId",), "title": ("positionName",), "salary": ("salary",),
                "tags": ("positionLables",), "experience": ("workYear",), "education": ("education",),
                "benefits": ("positionAdvantage",), "employment_type": ("jobNature",),
                "location": ("city+district", "city"), "company": ("companyFullName", "companyShortName"),
                "company_info": ("industryField+financeStage+companySize",), "category": ("secondType",),
                "posted": ("createTime", "formatCreateTime"), "description": ("jobDescription",),
            },
        ),
        Preset(
            "51job-list",
            "前程无忧 list rows: 职位, 公司, 地址, 薪酬, 标签 (benefits and chips as a nested list)",
            {"title": ("职位",), "company": ("公司",), "location": ("地址",), "salary": ("薪酬",)},
            (Derived(("标签", "地址"), _51job_labels),),
        ),
        Preset(
            "jobcrawl",
            "a CSV or TSV of `jobcrawl export` (title, company, city, salary_raw, responsibilities, requirements …)",
            {
                "source_id": ("source_id",), "url": ("url",), "title": ("title",), "company": ("company",),
                "location": ("city+district", "city"), "category": ("category",), "seniority": ("seniority",),
                "employment_type": ("employment_type",), "work_mode": ("work_mode",), "experience": ("experience",),
                "education": ("education",), "company_info": ("company_info",), "salary": ("salary_raw",),
                "posted": ("posted_at",), "valid_through": ("valid_through",), "tags": ("tags",),
            },
            (Derived((*_JOBCRAWL_HEADINGS, "other_sections"), _jobcrawl_sections),
             Derived(("salary_min", "salary_max", "salary_currency", "salary_period"), _jobcrawl_salary),
             Derived(_JOBCRAWL_DERIVED_ONLY, lambda cells: {})),
            loses_ties=True,  # a plain title, company, city file is not an export: generic names it
        ),
        Preset(
            "generic",
            "columns named like our fields, or common English names (job_title, company_name, city, link …)",
            {
                "title": ("title", "job_title", "position", "position_name", "job_name", "role"),
                "company": ("company", "company_name", "employer", "organization", "hiring_organization"),
                "url": ("url", "job_url", "link", "apply_url", "posting_url"),
                "location": ("location", "city", "job_location", "place"),
                "salary": ("salary", "compensation", "pay", "salary_range", "wage"),
                "posted": ("posted", "date_posted", "posted_at", "published_at", "created_at", "date"),
                "description": ("description", "job_description", "jd", "details", "body"),
                "tags": ("tags", "skills", "keywords", "labels"),
                "seniority": ("seniority", "level", "job_level", "seniority_level"),
                "employment_type": ("employment_type", "job_type", "type"),
                "work_mode": ("work_mode", "workplace_type", "remote_type"),
                "category": ("category", "department", "function", "job_function"),
                "experience": ("experience", "years_of_experience", "experience_level"),
                "education": ("education", "degree"),
                "benefits": ("benefits", "perks"),
                "company_info": ("company_info", "industry", "company_industry"),
                "valid_through": ("valid_through", "closing_date", "deadline", "expires_at"),
                "source_id": ("source_id", "id", "job_id", "posting_id"),
            },
            (Derived(("remote", "is_remote"), _remote_flag),),
        ),
    )
}
"""Presets by name; see ``jobcrawl ingest --help``."""


# --------------------------------------------------------------------------- binding columns


def _column_key(name: str) -> str:
    """A header name as compared: NFKC (full-width brackets), case-folded, without spaces, ``_`` and ``-``."""
    return re.sub(r"[\s_\-\ufeff]+", "", fold(name))


@dataclass
class Binding:
    """How one file's columns fill fields: ``fields`` maps a field to the header names joined into it."""

    preset: str | None
    fields: dict[str, tuple[str, ...]]
    derived: list[Derived]
    consumed: frozenset[str]
    matched: int

    @property
    def binds_title(self) -> bool:
        return "title" in self.fields


def bind(header: list[str], columns: Mapping[str, tuple[str, ...]], derived: tuple[Derived, ...] = (),
         preset: str | None = None) -> Binding:
    """Bind a preset's (or a mapping's) column names to ``header``; names compare by :func:`_column_key`."""
    index: dict[str, str] = {}
    for name in header:
        index.setdefault(_column_key(name), name)
    fields: dict[str, tuple[str, ...]] = {}
    used: set[str] = set()
    for name, alternatives in columns.items():
        for alt in alternatives:
            parts = [index.get(_column_key(part)) for part in alt.split("+") if part.strip()]
            if parts and all(parts):
                fields[name] = tuple(parts)  # type: ignore[arg-type]
                used.update(parts)  # type: ignore[arg-type]
                break
    bound_derived = []
    for d in derived:
        present = {c: index[_column_key(c)] for c in d.columns if _column_key(c) in index}
        if present:
            bound_derived.append(Derived(tuple(present.values()), _renamed(d.fn, present)))
            used.update(present.values())
    return Binding(preset, fields, bound_derived, frozenset(used), len(used))


def _renamed(fn: Callable[[dict[str, str]], dict[str, Any]], names: dict[str, str]):
    """``fn`` reading cells under the preset's spelling of the header names."""
    if all(k == v for k, v in names.items()):
        return fn
    return lambda cells: fn({key: cells.get(actual, "") for key, actual in names.items()})


def missing_columns(mapping: Mapping[str, str], header: list[str]) -> list[tuple[str, str, str]]:
    """``(field, spec, column)`` for each column a mapping names that ``header`` does not have (names
    compare as :func:`bind` compares them)."""
    keys = {_column_key(h) for h in header}
    return [(name, spec, part) for name, spec in mapping.items() if spec
            for part in spec.split("+") if _column_key(part) not in keys]


def table_columns(path: Path, fmt: str) -> list[str] | None:
    """The columns of a ``csv`` or ``jsonl`` file as its parse sees them (the header row; the keys of the first
    JSON objects); None when it has none or cannot be read (its parse will say why)."""
    report = TableReport(locator=path.name, format=fmt)
    table = _Table(locator=path.name, fetched_at="", as_of="", source="tabular", options=TableOptions(preset="none"),
                   report=report)
    try:
        with path.open("rb") as stream:
            _start(_open(stream, fmt, SINGLE_INPUT_BYTES), table, report, path.name)
    except (OSError, DecodeError):
        return None
    return table.header or None


def sniff_preset(header: list[str]) -> tuple[Preset | None, int]:
    """The preset explaining the most header columns (ties: the one naming fewer columns) and how many it
    explains; ``(None, 0)`` when no preset binds a title column."""
    best: tuple[tuple[int, int], Preset] | None = None
    for preset in PRESETS.values():
        binding = bind(header, preset.columns, preset.derived, preset.name)
        if not binding.binds_title:
            continue
        score = (binding.matched, not preset.loses_ties, -len(preset.names()))
        if best is None or score > best[0]:
            best = (score, preset)
    return (best[1], best[0][0]) if best else (None, 0)


# --------------------------------------------------------------------------- options and report


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


def format_for(path: str | Path, requested: str = "auto") -> str:
    """The format to read ``path`` with: ``requested`` unless ``auto``, else by suffix (.csv/.tsv → csv,
    .jsonl/.ndjson/.json → jsonl), else ``text`` (the job app's dump)."""
    if requested != "auto":
        return requested
    return SUFFIX_FORMATS.get(Path(path).suffix.lower(), "text")


# --------------------------------------------------------------------------- reading records


@dataclass
class _Record:
    """One record: its number (row or line), first physical line, text and bytes as read, and its
    cells (CSV and lines) or object (JSON), or why it could not be read."""

    number: int
    line: int
    text: str
    raw: bytes | None = None
    cells: list[str] | None = None
    obj: Any = None
    error: tuple[str, str] | None = None


class _Source:
    """The input's lines, decoded.

    Byte mode (UTF-8 and GB18030, where a ``\\n`` byte never occurs inside a character): lines are
    read from the bytes or the open file and decoded one by one, so a file of any size is read in
    bounded memory. Text mode (UTF-16/32, a file whose lines end in ``\\r`` alone, a JSON array): the
    decoded text is split. :meth:`take` returns the text and bytes of the record just read.
    """

    def __init__(self, *, encoding: str, head: bytes, whole: bool, stream: BinaryIO | None = None,
                 text: str | None = None, skip: int = 0, newline: str = "\n", lossy: bool = False,
                 end: int | None = None, size: int | None = None):
        self.encoding, self.head, self.whole, self.stream, self.text = encoding, head, whole, stream, text
        self.end = end  # the data's end in bytes: a zero-filled tail after it is not read
        self.zero_tail = 0 if end is None or size is None else size - end
        self.lossy = lossy  # some lines are not in the encoding: their records are quarantined, the bytes kept
        self.array: list | tuple[str, str] | None = None  # a .json file's parsed array, or its problem
        self.codec = "utf-8" if encoding == "utf-8-sig" else encoding  # the BOM is skipped, not decoded
        self.skip, self.newline = skip, newline
        self.line_no = 0
        self.bad_bytes = False
        self._texts: list[str] = []
        self._raws: list[bytes] = []

    def reopen(self, stream: BinaryIO) -> _Source:
        """The same input from its start (for a second pass)."""
        stream.seek(0)
        again = _Source(encoding=self.encoding, head=self.head, whole=self.whole, stream=self.stream, text=self.text,
                        skip=self.skip, newline=self.newline, lossy=self.lossy, end=self.end)
        again.zero_tail = self.zero_tail
        again.array = self.array
        return again

    def lines(self) -> Iterator[str]:
        if self.text is not None:
            newline = re.escape(self.newline)
            for match in re.finditer(rf"[^{newline}]*{newline}|[^{newline}]+", self.text):
                self.line_no += 1
                self._texts.append(match.group())
                yield match.group()
            return
        assert self.stream is not None
        skip = self.skip
        for chunk in self._chunks():
            self._raws.append(chunk)
            if skip:
                chunk, skip = chunk[skip:], 0
            try:
                line = chunk.decode(self.codec)
            except UnicodeDecodeError:
                line = chunk.decode(self.codec, "replace")
                self.bad_bytes = True
            self.line_no += 1
            self._texts.append(line)
            yield line

    def _chunks(self) -> Iterator[bytes]:
        """The stream's lines up to :attr:`end`. (Not ``yield from`` the stream: closing that generator
        would close the file.)"""
        assert self.stream is not None
        if self.end is None or not self.zero_tail:
            return iter(self.stream)
        return self._bounded_lines(self.stream, self.end - self.stream.tell())

    @staticmethod
    def _bounded_lines(stream: BinaryIO, left: int) -> Iterator[bytes]:
        while left > 0 and (chunk := stream.readline(left)):
            left -= len(chunk)
            yield chunk

    def take(self) -> tuple[str, bytes | None]:
        """Text and bytes of the lines read since the last call."""
        text = "".join(self._texts)
        raw = b"".join(self._raws) if self.text is None else None
        self._texts.clear()
        self._raws.clear()
        return text, raw

    def bad_record(self) -> tuple[str, str] | None:
        if self.bad_bytes:
            self.bad_bytes = False
            return ("bad_encoding", f"bytes that are not {self.codec}")
        return None

    def first_line(self) -> str:
        """The first non-blank line (for sniffing the delimiter)."""
        sample = self.text[:HEAD_BYTES] if self.text is not None else self.head[self.skip:].decode(self.codec, "replace")
        return next((line for line in sample.splitlines() if line.strip()), "")


_SEP_LINE = re.compile(r'\s*"?sep=([^"\r\n])"?\s*', re.IGNORECASE)


def _delimiter(first_line: str, prefer_tab: bool) -> str:
    """The delimiter of a header line: the most frequent of ``, \\t ; |`` outside quotes (comma if none)."""
    unquoted = re.sub(r'"[^"]*"', "", first_line)
    counts = {d: unquoted.count(d) for d in (",", "\t", ";", "|")}
    if prefer_tab and counts["\t"]:
        return "\t"
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


RECORD_CAP = 2**20
"""Characters a CSV record spanning several lines may hold: past this, a quoted field that was opened
is taken as never closed (:func:`_csv_records`)."""


@dataclass(slots=True)
class _Line:
    number: int
    text: str
    raw: bytes | None
    bad: tuple[str, str] | None  # bytes not in the encoding


class _RecordTooLong(Exception):
    pass


class _LineFeed:
    """The lines a csv reader reads, one by one, with the record being read (:attr:`record`), and
    lines pushed back to be read again. Raises :class:`_RecordTooLong` when a record spanning
    several lines exceeds :data:`RECORD_CAP` characters; ``at_end`` tells that the reader asked for
    a line after the last one in the middle of a record (an open quote)."""

    def __init__(self, source: _Source):
        self.source, self.lines = source, source.lines()
        self.back: list[_Line] = []
        self.record: list[_Line] = []
        self.chars = 0
        self.at_end = False

    def start(self) -> None:
        self.record, self.chars, self.at_end = [], 0, False

    def push_back(self, lines: list[_Line]) -> None:
        self.back.extend(reversed(lines))

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self.back:
            line = self.back.pop()
        else:
            try:
                text = next(self.lines)
            except StopIteration:
                self.at_end = bool(self.record)
                raise
            _, raw = self.source.take()
            line = _Line(self.source.line_no, text, raw, self.source.bad_record())
        self.record.append(line)
        self.chars += len(line.text)
        if len(self.record) > 1 and self.chars > RECORD_CAP:
            raise _RecordTooLong
        return line.text


def _csv_records(source: _Source, delimiter: str) -> Iterator[_Record]:
    """CSV records, numbered from 1. A quoted field that does not close — to the end of the file,
    within :data:`RECORD_CAP` characters, or closed only by a quote some lines later that text
    follows (``"x``: the reader is strict) — swallows no rows: its record is its first line alone,
    quarantined, and the lines after it are read again as records. A one-line record the strict
    reader refuses (``"a"b``) is read leniently, as spreadsheets do."""
    feed = _LineFeed(source)
    reader = csv.reader(feed, delimiter=delimiter, quotechar='"', doublequote=True, strict=True)
    number = 0
    while True:
        feed.start()
        problem = None
        try:
            cells: list[str] | None = next(reader)
        except StopIteration:
            break
        except _RecordTooLong:
            cells, problem = None, f"within {len(feed.record)} lines and {size_text(RECORD_CAP)}"
        except csv.Error as err:
            cells, problem = None, f"line {feed.record[-1].number}: {err}" if feed.record else str(err)
        lines = feed.record
        number += 1
        if cells is None and (feed.at_end or len(lines) > 1):
            feed.push_back(lines[1:])
            first = lines[0]
            how = "never closes (to the end of the file)" if feed.at_end else f"does not close ({problem})"
            yield _Record(number, first.number, first.text, first.raw,
                          error=first.bad or ("bad_csv", f"a quoted field opened here {how}; the lines after it are read again as rows"))
            continue
        error = None
        if cells is None:
            try:
                cells = next(csv.reader([lines[0].text], delimiter=delimiter, quotechar='"', doublequote=True))
            except (csv.Error, StopIteration) as err:
                error = ("bad_csv", f"not CSV: {err}")
        raw = b"".join(line.raw for line in lines) if source.text is None else None
        bad = next((line.bad for line in lines if line.bad), None)
        yield _Record(number, lines[0].number, "".join(line.text for line in lines), raw, cells=cells, error=bad or error)


def _json_records(source: _Source) -> Iterator[_Record]:
    for line in source.lines():
        number = source.line_no
        text, raw = source.take()
        error = source.bad_record()
        obj = None
        if error is None and line.strip():
            try:
                obj = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as err:
                error = ("bad_json", f"not JSON ({err.msg} at column {err.colno})")
            except ValueError as err:
                error = ("bad_json", f"not JSON ({err})")
            except RecursionError:
                error = ("bad_json", TOO_DEEP)
            else:
                if not isinstance(obj, dict):
                    error, obj = ("not_object", f"a JSON {type(obj).__name__}, not an object"), None
        yield _Record(number, number, text, raw, obj=obj, error=error)


def _json_array(source: _Source) -> Iterator[_Record]:
    """A ``.json`` file holding one array (parsed by :func:`_load_array`): each element is a record
    numbered from 1; a file that is not JSON is one bad record."""
    data = source.array
    if isinstance(data, tuple):
        yield _Record(1, 1, source.text or "", error=data)
        return
    for i, obj in enumerate(data or [], 1):
        error = None if isinstance(obj, dict) else ("not_object", f"a JSON {type(obj).__name__}, not an object")
        yield _Record(i, i, json.dumps(obj, ensure_ascii=False), obj=obj if error is None else None, error=error)


def _line_records(source: _Source) -> Iterator[_Record]:
    for line in source.lines():
        number = source.line_no
        text, raw = source.take()
        yield _Record(number, number, text, raw, cells=[line.strip()], error=source.bad_record())


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        value = value.strip()
        # A spreadsheet's mark for text that would start a formula (`jobcrawl export` writes it): not part of it.
        return value[1:] if value[:1] == "'" and value[1:2] in ("=", "+", "-", "@") and len(value) > 1 else value
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value) if isinstance(value, bool) else str(value)


_JSON_KINDS = ((bool, "boolean"), (int, "number"), (float, "number"), (list, "list"), (dict, "object"))


def _as_text(name: str, value: Any) -> tuple[str, str | None]:
    """The value of a JSON key mapped to field ``name`` as text, and a repair note when it was not
    text where text is expected: a number or boolean as written in JSON, a list of plain values
    joined (lines for the description, ``, `` otherwise), anything else as its JSON text. Lists
    are what list fields (tags, benefits) expect, and a number is a common id: neither is noted."""
    if value is None or isinstance(value, str):
        return _cell(value), None
    if (name in LIST_FIELDS and isinstance(value, list)) or (name == "source_id" and type(value) in (int, float)):
        return _cell(value), None
    kind = next((k for t, k in _JSON_KINDS if isinstance(value, t)), type(value).__name__)
    objects = value if isinstance(value, list) else [value]
    keys = [_name_of(v) for v in objects]
    if isinstance(value, list) and all(v is None or isinstance(v, (str, int, float)) for v in value):
        text = ("\n" if name == "description" else ", ").join(t for v in value if (t := _cell(v)))
        how = f"its {len(value)} items joined"
    elif objects and all(keys):  # {"name": "Beijing", "id": 3}: an API's location, office, department
        text = ", ".join(_cell(v[key]) for v, key in zip(objects, keys))
        shown_keys = "/".join(repr(key) for key in sorted(set(keys)))
        how = f"its {shown_keys} read" if isinstance(value, dict) else f"the {shown_keys} of its {len(value)} items joined"
    else:
        text = _cell(value)
        how = "read as text"
    shown = text if len(text) <= 40 else text[:39] + "…"
    return text, f"{name} is a JSON {kind}, not text: {how} ({json.dumps(shown, ensure_ascii=False)})"


_NAME_KEYS = ("name", "label", "text", "title", "displayName", "value")


def _name_of(value: Any) -> str | None:
    """The key of the text that names a JSON object (``name`` of ``{"name": "Beijing", "id": 3}``), else None."""
    if not isinstance(value, dict):
        return None
    return next((key for key in _NAME_KEYS if isinstance(value.get(key), str) and value[key].strip()), None)


def _header_names(cells: list[str]) -> list[str]:
    """Header cells as unique names: blanks become ``column N``, repeats get `` (2)``, `` (3)``."""
    names: list[str] = []
    seen: set[str] = set()
    for i, cell in enumerate(cells):
        name = cell.strip().lstrip("\ufeff") or f"column {i + 1}"
        base, n = name, 1
        while name in seen:
            n += 1
            name = f"{base} ({n})"
        seen.add(name)
        names.append(name)
    return names


# --------------------------------------------------------------------------- rows → items


class _Table:
    """Turns one file's records into items, given its header and options."""

    def __init__(self, *, locator: str, fetched_at: str, as_of: str, source: str, options: TableOptions,
                 report: TableReport):
        self.locator, self.fetched_at, self.as_of, self.source = locator, fetched_at, as_of, source
        self.options, self.report = options, report
        self.header: list[str] = []
        self.header_raw: list[str] = []
        self.binding: Binding | None = None
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

    def where(self, record: _Record, unit: str) -> str:
        return f"{unit} {record.number}" + (f" (line {record.line})" if record.line != record.number else "")

    def missing(self, values: Mapping[str, Any]) -> list[str]:
        """``["title"]`` when the record has neither a title nor a description (derived values never give
        one), else ``[]``. A record without company is kept: the employer is hidden (猎聘, BOSS)."""
        assert self.binding is not None
        constants, fields = self.options.constants, self.binding.fields

        def given(name: str) -> bool:
            return bool(constants.get(name, "").strip()) or any(_as_text(name, values.get(c))[0]
                                                                  for c in fields.get(name, ()))

        return [] if given("title") or given("description") else ["title"]

    def item(self, record: _Record, values: Mapping[str, Any], unit: str,
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
                text, note = _as_text(name, values.get(column))
                parts += [text] if text else []
                notes += [note] if note else []
            if name in LIST_FIELDS:
                out[name] = [item for part in parts for item in split_list(part)]
            elif parts:
                out[name] = JOINERS.get(name, " ").join(parts)
        extra: dict[str, str] = {}
        for derived in binding.derived:
            for name, value in derived.fn({c: _cell(values.get(c)) for c in derived.columns}).items():
                if name == "extra":
                    extra.update(value)
                elif value and not out.get(name) and name not in REQUIRED:
                    out[name] = value
        out.update(self.options.constants)
        for name in [n for n in LIST_FIELDS if isinstance(out.get(n), str)]:
            out[name] = split_list(out[name])
        for key, value in values.items():
            if key not in binding.consumed and (text := _cell(value)):
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

    def quarantine(self, record: _Record, reason: str, detail: str) -> Quarantined:
        return Quarantined(source=self.source, locator=self.locator, position=record.number, reason=reason,
                           detail=detail, text=record.text, fetched_at=self.fetched_at)


def _cells_to_values(table: _Table, record: _Record) -> dict[str, str] | tuple[str, str]:
    cells = record.cells or []
    width = len(table.header)
    if len(cells) > width and any(c.strip() for c in cells[width:]):
        return ("misaligned", f"{len(cells)} cells but the header has {width} columns")
    return dict(zip(table.header, cells))


# --------------------------------------------------------------------------- the parser


@dataclass
class _Block:
    """Records read since the last raw input was emitted: their text, bytes (hashed) and items."""

    texts: list[str] = field(default_factory=list)
    raws: list[bytes] = field(default_factory=list)
    digest: Any = field(default_factory=hashlib.sha256)
    size: int = 0
    rows: int = 0
    lossy: bool = False  # a record's bytes are not in the file's encoding: the raw input keeps the bytes
    items: list[RawPosting | Quarantined] = field(default_factory=list)

    def add(self, record: _Record) -> None:
        self.texts.append(record.text)
        if record.raw is not None:
            self.raws.append(record.raw)
            self.digest.update(record.raw)
            self.size += len(record.raw)
        self.lossy = self.lossy or (record.error is not None and record.error[0] == "bad_encoding")


def parse_table(data: bytes | Path | BinaryIO, *, locator: str, fetched_at: str, as_of: str, fmt: str,
                options: TableOptions | None = None, source: str = "tabular", report: TableReport | None = None,
                single_input_bytes: int | None = None) -> Iterator[RawInput | RawPosting | Quarantined]:
    """One CSV / JSONL / lines file — its bytes, or its path or open binary file to read it as a
    stream (the file is closed at the end) — → a
    :class:`RawInput` before the items read from it (one per block of rows when the file is larger
    than ``single_input_bytes``, default :data:`SINGLE_INPUT_BYTES`), then a :class:`RawPosting` or a
    :class:`Quarantined` per data row. Never raises. ``report`` (filled in as rows are read) says how
    the file was read and counts its rows.
    """
    options = options or TableOptions()
    report = report if report is not None else TableReport(locator=locator, format=fmt)
    report.format = fmt
    report.streamed = not isinstance(data, bytes)
    limit = SINGLE_INPUT_BYTES if single_input_bytes is None else single_input_bytes
    base = dict(source=source, locator=locator, fetched_at=fetched_at)
    stream: BinaryIO = data.open("rb") if isinstance(data, Path) else io.BytesIO(data) if isinstance(data, bytes) else data
    with stream:
        try:
            src = _open(stream, fmt, limit, locator)
            report.zero_tail = src.zero_tail
        except DecodeError as err:
            report.error = str(err)
            sha, size = _file_sha(stream)
            stream.seek(0)
            kept = stream.read(limit)  # all of it unless the file is large
            yield RawInput(**base, sha256=sha, size=size, as_of=as_of, body=kept,
                           text=kept.decode("utf-8", "replace"), error=str(err), status="quarantined")
            yield Quarantined(**base, input_sha256=sha, reason=err.reason, detail=str(err), text=None)
            return
        report.encoding = src.encoding
        table = _Table(locator=locator, fetched_at=fetched_at, as_of=as_of, source=source, options=options, report=report)
        try:
            yield from _parse(stream, src, table, report, base, as_of)
        except Exception as err:  # a parser bug must not stop the run: the file is kept with the reason
            detail = f"parser error: {type(err).__name__}: {err}"
            report.error = detail
            sha, size = _file_sha(stream)
            yield RawInput(**base, sha256=sha, size=size, as_of=as_of, encoding=src.encoding,
                           text=_head_text(src), error=detail, status="quarantined")
            yield Quarantined(**base, input_sha256=sha, reason="parser_error", detail=detail, text=None)



def _file_sha(stream: BinaryIO) -> tuple[str, int]:
    """SHA-256 and size of the whole input, read again from the start."""
    stream.seek(0)
    digest, size = hashlib.sha256(), 0
    for block in iter(lambda: stream.read(2**20), b""):
        digest.update(block)
        size += len(block)
    return digest.hexdigest(), size


def _open(stream: BinaryIO, fmt: str, limit: int, locator: str = "") -> _Source:
    """Check the encoding (the whole input up to ``limit`` bytes, else its first :data:`HEAD_BYTES`)
    and choose byte or text mode; raises DecodeError.

    A file mixing encodings, or holding bytes its encoding cannot read, is not rejected whole: it is
    read line by line (UTF-8 when it holds UTF-8 text, else GB18030) and only the records with bad
    bytes are quarantined (``lossy``: its raw inputs keep their bytes)."""
    head = stream.read(limit + 1)
    whole = len(head) <= limit
    size = len(head) if whole else stream.seek(0, io.SEEK_END)
    wide = head.startswith(WIDE_BOMS)
    end = size if wide else size - zero_filled_tail(head) if whole else _data_end(stream, size)
    sample = head[:min(HEAD_BYTES, end)]
    newline = "\r" if b"\n" not in sample and b"\r" in sample else "\n"
    # One JSON value (an array, or an object wrapping the postings: a saved API answer); a large file, or one with
    # bytes its encoding cannot read, that starts with an object is JSON lines, read line by line.
    start = sample.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    json_array = (fmt == "jsonl" and not locator.lower().endswith((".jsonl", ".ndjson"))
                  and (start == b"[" or (start == b"{" and whole)))
    lossy = False
    try:
        if whole:
            text, encoding = decode_bytes(head)
        else:
            cut = head.rfind(b"\n", 0, HEAD_BYTES)
            text, encoding = None, decode_bytes(head[:cut + 1] if cut > 0 else head[:HEAD_BYTES])[1]
    except DecodeError as err:
        json_array = json_array and start == b"["
        if err.reason not in ("mixed_encoding", "bad_encoding") or newline != "\n" or json_array or wide:
            raise
        text, encoding, lossy = None, _per_line_encoding(sample), True
    stream.seek(0)
    if encoding in ("utf-8", "utf-8-sig", "gb18030") and newline == "\n" and not json_array:
        return _Source(encoding=encoding, head=sample, whole=whole, stream=stream, lossy=lossy,
                       skip=3 if encoding == "utf-8-sig" else 0, end=end, size=size)
    if text is None:
        text, encoding = decode_bytes(stream.read(end))  # UTF-16/32 or \r lines: decoded whole
    src = _Source(encoding=encoding, head=sample, whole=True, text=text, newline=newline, end=end, size=size)
    if json_array:
        src.array = _load_array(text)
    return src


def _data_end(stream: BinaryIO, size: int) -> int:
    """Where a large input's data ends: ``size`` less its :func:`zero_filled_tail` (``size`` when it
    holds nothing but NUL bytes), read back from its end."""
    end = size
    while end:
        start = max(0, end - 2**20)
        stream.seek(start)
        kept = len(stream.read(end - start).rstrip(b"\x00"))
        if kept:
            return start + kept
        end = start
    return size


def _per_line_encoding(sample: bytes) -> str:
    """The encoding to read a file of mixed or broken bytes with, line by line (its bad lines are
    quarantined): the one of UTF-8 and GB18030 that reads more lines of ``sample`` (UTF-8 on a tie);
    DecodeError when it looks binary."""
    if sample.startswith(b"\xef\xbb\xbf"):
        encoding = "utf-8-sig"
    else:
        readable = dict.fromkeys(("utf-8", "gb18030"), 0)
        for line in sample.split(b"\n")[:-1] or [sample]:
            for codec in readable:
                try:
                    line.decode(codec)
                    readable[codec] += 1
                except UnicodeDecodeError:
                    pass
        encoding = "utf-8" if readable["utf-8"] >= readable["gb18030"] else "gb18030"
    controls = len(_BINARY_CONTROLS.findall(sample.decode(encoding, "replace")))
    if controls > max(8, len(sample) // 20):
        raise DecodeError("binary", f"binary file ({controls} control characters in the first {len(sample)} bytes)")
    return encoding


_BINARY_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _load_array(text: str) -> list | tuple[str, str]:
    """A ``.json`` file's value as a list of records (an object: itself, or the list it wraps), or the
    problem of a file that is not one JSON value. A file of several values (JSON lines under another
    suffix: ``Extra data``), or one starting with an object that does not parse as one value, is read
    line by line (:data:`NOT_ONE_VALUE`), so that each line is quarantined alone."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        if err.msg == "Extra data" or text.lstrip("\ufeff \t\r\n").startswith("{"):
            return NOT_ONE_VALUE
        return ("bad_json", f"not JSON ({err.msg} at line {err.lineno} column {err.colno})")
    except RecursionError:
        return NOT_ONE_VALUE if text.lstrip("\ufeff \t\r\n").startswith("{") else ("bad_json", TOO_DEEP)
    if isinstance(data, dict):
        return _wrapped_list(data) or [data]
    return data if isinstance(data, list) else [data]


_WRAPPERS = frozenset(("jobs", "jobpostings", "postings", "positions", "offers", "results", "result", "data", "items",
                       "content", "list", "records", "rows", "hits", "positionresult"))
"""Keys under which a saved API answer holds its postings (Greenhouse and Ashby ``jobs``, Workday
``jobPostings``, Recruitee ``offers``, SmartRecruiters ``content``, 拉勾 ``content.positionResult.result`` …)."""


def _wrapped_list(data: dict, depth: int = 3) -> list | None:
    """The list of objects a JSON object wraps under one of :data:`_WRAPPERS` (at most ``depth`` objects down),
    else None (the object is a record itself)."""
    for key, value in data.items():
        if not isinstance(key, str) or key.casefold() not in _WRAPPERS:
            continue
        if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
            return value
        if isinstance(value, dict) and depth > 1 and (inner := _wrapped_list(value, depth - 1)):
            return inner
    return None


NOT_ONE_VALUE = ("lines", "")


def _head_text(src: _Source) -> str:
    if src.text is not None and len(src.text) <= _QUARANTINE_TEXT * 4:
        return src.text
    head = src.head[src.skip:_QUARANTINE_TEXT]
    return head[: head.rfind(b"\n") + 1 or len(head)].decode(src.codec, "replace")


def _parse(stream: BinaryIO, src: _Source, table: _Table, report: TableReport, base: dict,
           as_of: str) -> Iterator[RawInput | RawPosting | Quarantined]:
    def file_problem(reason: str, detail: str) -> Iterator[RawInput | Quarantined]:
        report.error = detail
        sha, size = _file_sha(stream)
        short = src.text is not None and len(src.text) <= _QUARANTINE_TEXT * 4
        yield RawInput(**base, sha256=sha, size=size, encoding=src.encoding, as_of=as_of, text=_head_text(src),
                       status="quarantined", error=detail + ("" if short else f"; first {_QUARANTINE_TEXT // 1024} KB kept"))
        yield Quarantined(**base, input_sha256=sha, reason=reason, detail=detail, text=src.text if short else None)

    start = _start(src, table, report, base["locator"])
    if isinstance(start, _FileProblem):
        yield from file_problem(start.reason, start.detail)
        return
    block, records, unit = start
    if src.whole:
        # One raw input for the file, yielded before its items: a first pass counts what the rows
        # become (without building them) so the raw input's status is known; the second builds them.
        scratch = TableReport(locator=report.locator, format=report.format)
        kinds = [_classify(table, record, unit, scratch, build=False) for record in records]
        postings = sum(kind is True for kind in kinds)
        quarantined = sum(isinstance(kind, Quarantined) for kind in kinds)
        sha, size = _file_sha(stream)
        yield RawInput(**base, sha256=sha, size=size, encoding=src.encoding, text=_whole_text(stream, src), as_of=as_of,
                       body=_whole_bytes(stream) if src.lossy else None, status="parsed" if not quarantined else "partial" if postings else "quarantined",
                       postings=postings, error=f"{quarantined} rows quarantined" if quarantined else None)
        report.inputs += 1
        again = _start(src.reopen(stream), table, report, base["locator"], bound=True)
        assert not isinstance(again, _FileProblem)
        for record in again[1]:
            report.rows += 1
            item = _row_item(table, record, unit, report)
            if item is not None:
                item.input_sha256 = sha
                yield item
        return
    for record in records:
        report.rows += 1
        block.rows += 1
        block.add(record)
        item = _row_item(table, record, unit, report)
        if item is not None:
            block.items.append(item)
        if block.rows >= BLOCK_ROWS or block.size >= BLOCK_BYTES:
            yield from _emit(block, src, base, as_of, report)
            block = _Block()
    if block.rows or report.inputs == 0:
        yield from _emit(block, src, base, as_of, report)


def _whole_bytes(stream: BinaryIO) -> bytes:
    """The whole input's bytes (small inputs only)."""
    stream.seek(0)
    return stream.read()


def _whole_text(stream: BinaryIO, src: _Source) -> str:
    """The whole input decoded (small inputs only)."""
    if src.text is not None:
        return src.text
    stream.seek(0)
    return stream.read()[src.skip:].decode(src.codec, "replace")


@dataclass
class _FileProblem:
    reason: str
    detail: str


def _start(src: _Source, table: _Table, report: TableReport, locator: str,
           bound: bool = False) -> tuple[_Block, Iterator[_Record], str] | _FileProblem:
    """Read up to the data rows: the header (CSV: the first non-blank record), the keys of the first
    objects (JSON lines) or nothing (lines), and bind the columns unless ``bound``. Returns the first
    block (holding the header's text), the data records and the unit rows are counted in, or a
    file-level problem."""
    fmt = report.format
    directive = None
    if fmt == "csv":
        first = src.first_line()
        directive = _SEP_LINE.fullmatch(first)  # Excel's `sep=;` line names the delimiter: it is no header
        report.delimiter = directive.group(1) if directive else _delimiter(first, prefer_tab=locator.lower().endswith(".tsv"))
        records: Iterator[_Record] = _csv_records(src, report.delimiter)
        unit = "row"
    elif fmt == "jsonl" and src.array is not None and src.array != NOT_ONE_VALUE:
        records, unit = _json_array(src), "item"
    elif fmt == "jsonl":
        records, unit = _json_records(src), "line"
    else:
        records, unit = _line_records(src), "line"
    block = _Block()
    pending: list[_Record] = []  # records read while looking for the header that are rows themselves
    problem = None
    if fmt == "csv":
        for record in records:
            if directive and record.error is None and _SEP_LINE.fullmatch(record.text.rstrip("\r\n")):
                block.add(record)
                directive = None
                continue
            if record.error is None and record.cells and any(c.strip() for c in record.cells):
                block.add(record)
                if not bound:
                    problem = table.set_header(_header_names(record.cells), record.cells)
                break
            if record.error:
                pending.append(record)  # an unreadable record before the header is still a row
            else:
                block.add(record)  # blank lines before the header
        else:
            return _FileProblem("no_posting", "no header row: the file holds only blank lines")
    elif fmt == "jsonl":
        keys: dict[str, None] = {}
        for record in records:
            pending.append(record)
            if isinstance(record.obj, dict):
                keys.update(dict.fromkeys(record.obj))
            if len(pending) >= _JSON_SCAN_LINES:
                break
        if bound:
            pass
        elif keys:
            problem = table.set_header(list(keys))
        elif any(r.error for r in pending):  # only malformed lines so far: each is quarantined
            table.binding = Binding(None, {}, [], frozenset(), 0)
        else:
            return _FileProblem("no_posting", "no JSON object in the file")
    elif not bound:  # one description per line: title and company are --set, or unknown (hidden employer)
        table.binding = Binding(None, {"description": ("description",)}, [], frozenset({"description"}), 1)
    if problem:
        return _FileProblem("no_mapping", problem)
    return block, _chain(pending, records), unit


def _chain(first: list[_Record], rest: Iterator[_Record]) -> Iterator[_Record]:
    yield from first
    yield from rest


def _row_item(table: _Table, record: _Record, unit: str, report: TableReport) -> RawPosting | Quarantined | None:
    """The item of one record (counted in ``report``); None for a blank row or a repeated header."""
    item = _classify(table, record, unit, report)
    assert not isinstance(item, bool)
    if isinstance(item, RawPosting):
        report.postings += 1
    elif item is not None:
        report.quarantined += 1
    return item


def _classify(table: _Table, record: _Record, unit: str, report: TableReport,
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
        if record.obj is None or not any(_cell(v) for v in record.obj.values()):
            report.blank_rows += 1
            return None
        values = record.obj
    return table.item(record, values, unit, build)


def _emit(block: _Block, src: _Source, base: dict, as_of: str,
          report: TableReport) -> Iterator[RawInput | RawPosting | Quarantined]:
    """The raw input of a block of rows of a large file, then the block's items."""
    sha = block.digest.hexdigest()
    postings = sum(isinstance(i, RawPosting) for i in block.items)
    quarantined = len(block.items) - postings
    status = "parsed" if not quarantined else "partial" if postings else "quarantined"
    report.inputs += 1
    yield RawInput(**base, sha256=sha, size=block.size, encoding=src.encoding, text="".join(block.texts), as_of=as_of,
                   body=b"".join(block.raws) if block.lossy else None, status=status, postings=postings, error=f"{quarantined} rows quarantined" if quarantined else None)
    for item in block.items:
        item.input_sha256 = sha
        yield item
