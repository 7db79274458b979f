"""Readable history of a posting: what changed from one version to the next, field by field. Pure.

Input: the posting's versions as export records (``jobcrawl export`` shape; the stored snapshots of
``posting_versions`` and the current record), oldest first, each with the time it was first seen,
its closing and reopening events, and the status changes of its job's application (``jobcrawl track``). Output:
one :class:`Step` per new version or event, in time order, with a :class:`Change` per field that differs: a salary as people read it (``40–60K →
45–65K``), bullets and tags added and removed, skills gained and lost, other fields before → after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

__all__ = ["Change", "Step", "Version", "pay_label", "diff_records", "history", "format_history"]

# Fields compared as one value each: record key → label.
SCALARS = {
    "title": "职位 title", "company": "公司 company", "city": "城市 city", "district": "区域 district",
    "category": "类别 category", "seniority": "级别 seniority", "employment_type": "类型 employment type",
    "work_mode": "工作模式 work mode", "experience": "经验 experience", "education": "学历 education",
    "url": "链接 url",
}
SECTION_LABELS = {"about": "关于 about", "requirements": "要求 requirements", "responsibilities": "职责 responsibilities",
                  "preferred": "加分 preferred", "benefits": "福利 benefits"}
SYMBOLS = {"CNY": "", "USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "HKD": "HK$", "SGD": "S$"}


def _thousands(value: float) -> str:
    k = value / 1000
    return f"{k:.0f}" if k >= 100 or k == int(k) else f"{k:.1f}".rstrip("0").rstrip(".")


def pay_label(salary: Mapping[str, Any] | None) -> str | None:
    """A record's ``salary`` as people write monthly pay: ``40–60K``, ``30–50K ×14``, ``$10–12.5K``,
    ``面议``; the text as written when nothing was parsed; None when there is none."""
    salary = salary or {}
    low, high = salary.get("monthly_min"), salary.get("monthly_max")
    if low is None and high is None:
        return {"negotiable": "面议", "undisclosed": "未披露"}.get(salary.get("status") or "") or salary.get("raw")
    low, high = (high if low is None else low), (low if high is None else high)
    currency = salary.get("currency") or "CNY"
    text = SYMBOLS.get(currency, currency + " ") + _thousands(low) + ("" if low == high else "–" + _thousands(high)) + "K"
    if salary.get("months") and salary["months"] != 12:
        text += f" ×{salary['months']}"
    return text + (" (est.)" if salary.get("estimated") else "")


@dataclass(frozen=True)
class Change:
    """One field's change: ``kind`` ``changed`` (``before`` → ``after``), ``added`` or ``removed``
    (an item of a list: a bullet, a tag, a skill)."""

    field: str
    label: str
    kind: str
    before: str | None = None
    after: str | None = None

    def text(self) -> str:
        if self.kind == "added":
            return f"{self.label} + {self.after}"
        if self.kind == "removed":
            return f"{self.label} − {self.before}"
        return f"{self.label}: {self.before if self.before is not None else '–'} → {self.after if self.after is not None else '–'}"


@dataclass(frozen=True)
class Version:
    """A version's number, when it was first seen (UTC ISO) and its export record."""

    number: int
    seen: str
    record: Mapping[str, Any]


@dataclass
class Step:
    """What happened at ``at``: version ``version`` appeared (``changes`` against the one before; none
    for the first), the posting was ``closed`` or ``reopened``, or its job's application got status ``status``
    (event ``application``, with the user's ``note``)."""

    at: str
    event: str  # first_seen, changed, closed, reopened, application
    version: int | None = None
    changes: list[Change] = field(default_factory=list)
    status: str | None = None
    note: str | None = None


def _list_changes(name: str, label: str, before: Sequence[str], after: Sequence[str]) -> list[Change]:
    gone = [Change(name, label, "removed", before=b) for b in before if b not in after]
    new = [Change(name, label, "added", after=a) for a in after if a not in before]
    return gone + new


def diff_records(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """The changes from record ``old`` to record ``new``: scalar fields, pay, tags, bullets per section,
    skills, the free description (only its length is shown)."""
    changes = [Change(k, label, "changed", old.get(k), new.get(k)) for k, label in SCALARS.items()
               if old.get(k) != new.get(k)]
    before, after = pay_label(old.get("salary")), pay_label(new.get("salary"))
    if before != after:
        changes.append(Change("salary", "薪资 salary", "changed", before, after))
    changes += _list_changes("tags", "标签 tags", old.get("tags") or [], new.get("tags") or [])
    old_sections, new_sections = old.get("sections") or {}, new.get("sections") or {}
    for key in [*old_sections, *(k for k in new_sections if k not in old_sections)]:
        changes += _list_changes(f"sections.{key}", SECTION_LABELS.get(key, key), old_sections.get(key, []),
                                 new_sections.get(key, []))
    changes += _list_changes("skills", "技能 skills", old.get("skills") or [], new.get("skills") or [])
    if (old.get("description") or "") != (new.get("description") or ""):
        changes.append(Change("description", "描述 description", "changed", f"{len(old.get('description') or '')} 字符",
                              f"{len(new.get('description') or '')} 字符"))
    return changes


def history(versions: Sequence[Version], events: Sequence[tuple[str, str]] = (),
            applications: Sequence[tuple[str, str, str | None]] = ()) -> list[Step]:
    """Every version after the first as its changes against the one before, the ``(at, event)`` pairs (``closed``,
    ``reopened``) and the ``(at, status, note)`` of the application, in time order (a version before an event at
    the same time, the application's changes last, in their given order)."""
    steps: list[Step] = []
    ordered = sorted(versions, key=lambda v: v.number)
    for i, version in enumerate(ordered):
        if i == 0:
            steps.append(Step(version.seen, "first_seen", version.number))
        else:
            steps.append(Step(version.seen, "changed", version.number, diff_records(ordered[i - 1].record, version.record)))
    steps += [Step(at, event) for at, event in events]
    steps += [Step(at, "application", status=status, note=note) for at, status, note in applications]
    order = {"first_seen": 0, "changed": 1, "closed": 2, "reopened": 3, "application": 4}
    return sorted(steps, key=lambda s: (s.at or "", order[s.event], s.version or 0))


EVENT_LABELS = {"first_seen": "首次出现 first seen", "closed": "已关闭 closed", "reopened": "重新开放 reopened"}


def format_history(steps: Sequence[Step]) -> list[str]:
    """Lines for a terminal: one per step (``2026-11-25 v2: 薪资 salary: 40–60K → 45–65K``), then one
    indented line per change of a version with several."""
    lines = []
    for step in steps:
        head = f"{step.at[:16].replace('T', ' ')}" + (f" v{step.version}" if step.version else "")
        if step.event == "application":
            lines.append(f"{head}: 申请 application: {step.status}" + (f" — {step.note}" if step.note else ""))
        elif step.event != "changed":
            lines.append(f"{head}: {EVENT_LABELS[step.event]}")
        elif not step.changes:
            lines.append(f"{head}: 内容有变化，但不在比较的字段内 (changed outside the compared fields)")
        elif len(step.changes) == 1:
            lines.append(f"{head}: {step.changes[0].text()}")
        else:
            lines.append(f"{head}: {len(step.changes)} changes")
            lines.extend(f"    {c.text()}" for c in step.changes)
    return lines
