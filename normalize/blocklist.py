"""Blocklists: postings a person never wants to see (outsourcing 外包, dispatch 派遣, named companies). Pure.

Entries come from the profile's ``[block]`` table (``companies``: the company name; ``keywords``: title,
company, tags, JD text). An entry between slashes is a case-insensitive regular expression, any other a
plain text; both are searched in the NFKC-folded, casefolded text, each field's lines as one text (its first
:data:`MAX_TEXT` characters). A plain entry starting or ending with a Latin letter or digit must not continue a
word there (``Meta`` blocks ``Meta Platforms``, not ``Metaverse Labs``); Chinese entries match anywhere. The
first hit (entries in the order written, companies first; fields in the order title, company, tags, JD text)
is the rule that matched, kept with the folded text around it (within its line). Nothing is deleted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .text import fold

__all__ = ["MAX_TEXT", "BlockHit", "BlockRule", "Blocklist", "BlocklistError"]

MAX_TEXT = 50_000
SNIPPET = 12  # characters each side of a hit
_WORDY = re.compile(r"[a-z0-9]")


class BlocklistError(ValueError):
    """An entry cannot be read; the message names it."""


@dataclass(frozen=True)
class BlockRule:
    """One entry: ``kind`` ``company`` or ``keyword``, the entry as written, its compiled pattern."""

    kind: str
    entry: str
    pattern: re.Pattern

    @property
    def label(self) -> str:
        """How the rule is named where it matched: ``keyword:外包``, ``company:/…/``."""
        return f"{self.kind}:{self.entry}"


@dataclass(frozen=True)
class BlockHit:
    """Why a posting is blocked: the rule, the field it matched in, the text matched and around it."""

    rule: str
    field: str
    matched: str
    snippet: str

    def as_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "field": self.field, "matched": self.matched, "snippet": self.snippet}


def _compile(kind: str, entry: str) -> BlockRule:
    text = entry.strip()
    if len(text) > 2 and text.startswith("/") and text.endswith("/"):
        try:
            return BlockRule(kind, entry, re.compile(fold(text[1:-1]), re.IGNORECASE))
        except re.error as err:
            raise BlocklistError(f"{kind} entry {entry!r}: not a regular expression: {err}") from None
    folded = fold(text)
    if not folded:
        raise BlocklistError(f"{kind} entry {entry!r} is empty")
    left = r"(?<![a-z0-9])" if _WORDY.match(folded[0]) else ""
    right = r"(?![a-z0-9])" if _WORDY.match(folded[-1]) else ""
    return BlockRule(kind, entry, re.compile(left + re.escape(folded) + right))


class Blocklist:
    """The compiled rules of a profile's ``[block]`` table; an empty one blocks nothing."""

    def __init__(self, companies: Iterable[str] = (), keywords: Iterable[str] = ()):
        self.rules = tuple([_compile("company", e) for e in companies] + [_compile("keyword", e) for e in keywords])

    def __bool__(self) -> bool:
        return bool(self.rules)

    def check(self, fields: Mapping[str, Sequence[str]]) -> BlockHit | None:
        """The first hit in ``fields`` (field name → its texts: ``company``, ``title``, ``tags``,
        ``text`` …), or None. Company rules read only ``company``."""
        # One fold per field (its texts a line each): folding is most of the cost, per call.
        folded = {name: fold("\n".join(t for t in texts if t)[:MAX_TEXT]) for name, texts in fields.items()}
        for rule in self.rules:
            for name in ("company",) if rule.kind == "company" else folded:
                text = folded.get(name, "")
                m = rule.pattern.search(text)
                if m:
                    start = max(0, m.start() - SNIPPET, text.rfind("\n", 0, m.start()) + 1)
                    end = text.find("\n", m.end())
                    snippet = text[start : min(m.end() + SNIPPET, len(text) if end < 0 else end)]
                    return BlockHit(rule.label, name, m.group(), snippet)
        return None

    def check_posting(self, *, title: str | None, company: str | None, tags: Sequence[str] = (),
                      sections: Mapping[str, Sequence[str]] = {}, description: str | None = None) -> BlockHit | None:
        """:meth:`check` over a posting's title, company, tags and JD text (bullets, else the description)."""
        text = [b for bullets in sections.values() for b in bullets] or [description or ""]
        return self.check({"title": [title or ""], "company": [company or ""], "tags": list(tags), "text": text})
