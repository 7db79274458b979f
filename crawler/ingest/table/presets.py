"""The column presets (``presets.yaml``, validated on load) and the functions their derived fields call."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from crawler.ingest.table.fields import FIELDS, flatten, split_list
from normalize.fields import EDUCATION_LEVELS

PRESETS_YAML = Path(__file__).with_name("presets.yaml")


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
    out: dict[str, Any] = {"benefits": flatten(data[0]), "tags": [], "extra": {}}
    location = cells.get("地址", "")
    for chip in flatten(data[1]):
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


def _recomputed(cells: dict[str, str]) -> dict[str, Any]:
    """Columns this database computes again: consumed, nothing derived from them."""
    return {}


DERIVATIONS: dict[str, Callable[[dict[str, str]], dict[str, Any]]] = {
    "jobspy_salary": _jobspy_salary, "remote_flag": _remote_flag, "jobcrawl_sections": _jobcrawl_sections,
    "jobcrawl_salary": _jobcrawl_salary, "51job_labels": _51job_labels, "recomputed": _recomputed,
}
"""The functions a preset's ``derived`` entry names (``fn``)."""


class Derived(BaseModel):
    """Fields computed from several columns (JobSpy's min/max/interval/currency → one salary text).

    ``fn`` (a name of :data:`DERIVATIONS` in ``presets.yaml``) gets ``{column: cell}`` for ``columns`` and returns
    ``{field: value}`` (``"extra"``: a dict for ``extra``). Derived values fill only fields the column mapping left
    empty, never title or company (those are checked before anything is derived). The columns are consumed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    columns: tuple[str, ...] = Field(min_length=1)
    fn: Callable[[dict[str, str]], dict[str, Any]]

    @field_validator("fn", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        if isinstance(value, str):
            if value not in DERIVATIONS:
                raise ValueError(f"unknown function {value!r}; functions: {', '.join(DERIVATIONS)}")
            return DERIVATIONS[value]
        return value


class Preset(BaseModel):
    """A column layout: field → candidate column names (the first one the header has is used; an alternative
    ``a+b`` joins columns ``a`` and ``b``). ``loses_ties``: when sniffing, the preset is picked only if it explains
    more columns than any other."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    about: str
    columns: dict[str, tuple[str, ...]]
    derived: tuple[Derived, ...] = ()
    markdown: tuple[str, ...] = ()
    """Fields the tool writes as Markdown: their backslash escapes (``\\-``, ``\\.``, ``\\&``) are undone."""
    loses_ties: bool = False

    @field_validator("markdown")
    @classmethod
    def _markdown(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if name not in FIELDS:
                raise ValueError(f"unknown field {name!r}; fields: {', '.join(FIELDS)}")
        return names

    @field_validator("columns")
    @classmethod
    def _fields(cls, columns: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for name, alternatives in columns.items():
            if name not in FIELDS:
                raise ValueError(f"unknown field {name!r}; fields: {', '.join(FIELDS)}")
            if not alternatives or not all(part.strip() for alt in alternatives for part in alt.split("+")):
                raise ValueError(f"{name}: a blank column name")
        return columns


def load_presets(path: Path = PRESETS_YAML) -> dict[str, Preset]:
    """The presets of ``path`` by name, in file order; pydantic's ValidationError (a ValueError) names what is wrong."""
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return {name: Preset(name=name, **spec) for name, spec in data.items()}


PRESETS: dict[str, Preset] = load_presets()
"""Presets by name; see ``jobcrawl ingest --help``."""
