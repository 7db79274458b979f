"""Validate raw postings: a title or a description present, names of sane length, or quarantine with the reason.

A posting without company is kept (the employer is hidden: 猎聘 and BOSS confidential searches), counted in
``jobcrawl/field/company/missing``; normalizing notes ``company hidden`` among its problems.

Lone UTF-16 surrogates (a JSON escape such as ``\\ud800`` cut from its pair) cannot be stored or encoded: each is
replaced by U+FFFD, counted in ``jobcrawl/repaired/lone_surrogates`` and named in the run report (one line per
posting, printed by the CLI). The raw input keeps them as written.
"""

from __future__ import annotations

from collections.abc import Iterator

from itemadapter import ItemAdapter
from pydantic import BaseModel

from crawler.report import report_of
from normalize.models import Quarantined, RawPosting
from normalize.text import replace_lone_surrogates

from . import item_where

OPTIONAL_FIELDS = ("company", "posted", "salary", "location", "category", "work_mode", "employment_type")
STRICTLY_DECODED = {"textdump"}  # every string decoded from bytes by a strict codec: no lone surrogate can occur


def _non_ascii_strings(value: object) -> Iterator[str]:
    """Every non-ASCII string inside a model, list, tuple or dict (keys too)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                yield v
        elif isinstance(v, BaseModel):
            stack.extend(v.__dict__.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v)
            stack.extend(v.values())


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
            "".join(_non_ascii_strings(item)).encode("utf-8")  # one C-speed pass: only a lone surrogate fails
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
        item = self.repaired(item)
        adapter = ItemAdapter(item)
        for name in OPTIONAL_FIELDS:
            if not adapter.get(name):
                self.stats.inc_value(f"jobcrawl/field/{name}/missing")
        problem = self.problem(item)
        if problem is None:
            return item
        reason, detail = problem
        self.stats.inc_value(f"jobcrawl/invalid/{reason}")
        return Quarantined(
            source=adapter["source"], locator=adapter["locator"], position=adapter["position"],
            input_sha256=adapter.get("input_sha256"), reason=reason, detail=detail,
            text=item.model_dump_json(), fetched_at=adapter["fetched_at"],
        )
