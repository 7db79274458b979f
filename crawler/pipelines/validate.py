"""Validate raw postings: a title or a description present, names of sane length, at most
:data:`MAX_POSTING_CHARS` characters of text in all, or quarantine with the reason.

A posting without company is kept (the employer is hidden: 猎聘 and BOSS confidential searches), counted in
``jobcrawl/field/company/missing``; normalizing notes ``company hidden`` among its problems.

Lone UTF-16 surrogates (a JSON escape such as ``\\ud800`` cut from its pair) cannot be stored or encoded: each is
replaced by U+FFFD, counted in ``jobcrawl/repaired/lone_surrogates`` and named in the run report (one line per
posting, printed by the CLI). The raw input keeps them as written.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from itemadapter import ItemAdapter
from pydantic import BaseModel

from crawler.report import report_of
from normalize.models import Quarantined, RawPosting
from normalize.text import replace_lone_surrogates

from crawler.pipelines import item_where

OPTIONAL_FIELDS = ("company", "posted", "salary", "location", "category", "work_mode", "employment_type")
MAX_POSTING_CHARS = 200_000
"""Characters of text one posting may hold in all its fields (a long JD holds about 20,000): past this, a cell, a
page or a JSON field holds something else, which every later stage would copy many times over. Quarantined;
the raw input keeps it whole."""
QUARANTINE_FIELD_CHARS = 4096
QUARANTINE_TEXT_CHARS = 65_536
"""How much of each string, and of all its text, the quarantine record of an oversized posting keeps."""
STRICTLY_DECODED = {"textdump"}  # every string decoded from bytes by a strict codec: no lone surrogate can occur


def _strings(value: object) -> Iterator[str]:
    """Every string inside a model, list, tuple or dict (keys too)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, BaseModel):
            stack.extend(v.__dict__.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())


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


def _has_description(item: RawPosting) -> bool:
    return bool((item.description or "").strip()) or any(line.strip() for block in item.sections for line in block.lines)


class ValidatePipeline:
    def __init__(self, stats, max_title: int, repaired_log: list[str]):
        self.stats = stats
        self.max_title = max_title
        self.repaired_log = repaired_log

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler.stats, crawler.settings.getint("JOBCRAWL_MAX_TITLE_CHARS"), report_of(crawler).repaired)

    def oversized(self, item: RawPosting) -> str | None:
        """The detail when ``item`` holds more than :data:`MAX_POSTING_CHARS` characters of text, else None."""
        total = _chars(item)
        if total <= MAX_POSTING_CHARS:
            return None
        name, most = max(((name, _chars(value)) for name, value in item.__dict__.items()), key=lambda kv: kv[1])
        return (f"posting holds {total:,} characters of text, {most:,} of them in {name} (limit {MAX_POSTING_CHARS:,}):"
                " not one job posting")

    def problem(self, item) -> tuple[str, str] | None:
        """(reason, detail) when the posting cannot be stored, else None."""
        adapter = ItemAdapter(item)
        for name in ("company", "title"):
            value = (adapter.get(name) or "").strip()
            if len(value) > self.max_title:
                return "invalid", f"{name} is {len(value)} characters long (limit {self.max_title}): not a {name}"
        if not (adapter.get("title") or "").strip() and not _has_description(item):
            return "invalid", "posting has neither title nor description"
        return None

    def repaired(self, item: RawPosting) -> RawPosting:
        """``item`` with lone surrogates replaced (see the module docstring), or ``item`` itself."""
        if item.source in STRICTLY_DECODED:
            return item
        try:
            "".join(v for v in _strings(item) if not v.isascii()).encode("utf-8")  # only a lone surrogate fails
            return item
        except UnicodeEncodeError:
            pass
        data, found = replace_lone_surrogates(item.model_dump())
        self.stats.inc_value("jobcrawl/repaired/lone_surrogates", found)
        self.repaired_log.append(f"{item_where(ItemAdapter(item))}: {found} lone UTF-16 surrogate{'s' * (found > 1)} "
                                 "(a broken escape such as \\ud800) replaced by U+FFFD")
        return RawPosting.model_validate(data)

    def process_item(self, item, spider=None):
        if not isinstance(item, RawPosting):
            return item
        too_long = self.oversized(item)  # before anything copies its text
        if too_long:
            clipped = _clipped(item.model_dump(), [QUARANTINE_TEXT_CHARS])
            return self.quarantined(item, "invalid", too_long, json.dumps(clipped, ensure_ascii=False))
        item = self.repaired(item)
        adapter = ItemAdapter(item)
        for name in OPTIONAL_FIELDS:
            if not adapter.get(name):
                self.stats.inc_value(f"jobcrawl/field/{name}/missing")
        problem = self.problem(item)
        if problem is None:
            return item
        return self.quarantined(item, *problem, item.model_dump_json())

    def quarantined(self, item: RawPosting, reason: str, detail: str, text: str) -> Quarantined:
        self.stats.inc_value(f"jobcrawl/invalid/{reason}")
        adapter = ItemAdapter(item)
        return Quarantined(
            source=adapter["source"], locator=adapter["locator"], position=adapter["position"],
            input_sha256=adapter.get("input_sha256"), reason=reason, detail=detail, text=text,
            fetched_at=adapter["fetched_at"],
        )
