"""Skill taxonomy and tagger: canonical skills from a posting's tags and JD sections, with evidence.

The taxonomy is the hand-curated ``normalize/data/skills.toml`` (its header documents categories,
guards and the matching rules). Matching is one Aho-Corasick automaton over the folded aliases
(``text.fold``: NFKC + casefold), built once per taxonomy, then:

- Latin boundaries: an alias that starts (ends) with an ASCII letter or digit matches only when the
  character before (after) it is not one; a CJK character or punctuation is a boundary. A digit
  right after a letter-final alias is a version (``Python3``, ``Qt5``) unless the alias is guarded.
- Guards: ambiguous aliases (``C``, ``R``, ``Go``, ``Spark``, ``量化`` …) carry a named guard from the
  file that checks the case as written and the text around the hit.
- Longest match wins: of overlapping accepted hits the leftmost-longest is kept, so ``Nsight Compute``
  never also yields a bare ``Nsight``, ``C++`` never a ``C``, ``大模型推理`` only ``LLM inference``.
  Broader skills come back through ``parent``.

Speed (bench/skills.py): NFKC over every line costs more than the whole match, so the text is only
casefolded and the automaton also holds the full-width forms of each alias (``ＣＵＤＡ``, ``C＋＋``);
lines where casefolding changes the length or that hold characters outside the BMP are folded with
``fold`` character by character instead. Guards always see ``fold``-ed context. The automaton runs
over the UTF-16 hex digits of the text: pyahocorasick searches a node's children one by one, and
Chinese text meets ~1,000 distinct first characters at the root where hex meets 16. Text without CJK
or full-width characters (English postings) is read directly by a second automaton that holds only
the aliases without them.

Pure functions; no Scrapy or SQLite imports.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import ahocorasick

from .text import fold

__all__ = [
    "CATEGORIES",
    "Skill",
    "SkillHit",
    "Taxonomy",
    "TaxonomyError",
    "load_taxonomy",
    "tag",
    "skills_in_order",
]

CATEGORIES = (
    "language", "framework", "gpu", "compiler", "tool", "model",
    "technique", "infra", "data", "domain", "soft",
)
"""Allowed categories; the file header maps them to the issue's names."""

TAGS_SECTION = "tags"
SNIPPET_RADIUS = 20
_WINDOW = 32  # characters of context a guard sees on each side of a hit (within the line)
_ASCII_WORD = "abcdefghijklmnopqrstuvwxyz0123456789"
_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}  # ! … ~ → ！ … ～
_WORD = frozenset(_ASCII_WORD + "".join(_FULLWIDTH[c] for c in _ASCII_WORD))
_DIGITS = frozenset("0123456789０１２３４５６７８９")
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")
_WIDE = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")  # CJK, Hangul, full width


class TaxonomyError(ValueError):
    """The taxonomy file is malformed; the message names the skill or guard at fault."""


@dataclass(frozen=True, slots=True)
class Skill:
    """One canonical skill of the taxonomy."""

    name: str
    category: str
    parent: str | None
    aliases: tuple[str, ...]  # as written in the file (English, Chinese, guarded), without the name
    frontier: bool


class SkillHit(NamedTuple):
    """One skill found in one section, with the evidence of its first occurrence."""

    skill: str
    category: str
    section: str
    count: int
    first_offset: int  # in the section text: its lines joined with "\n"
    matched: str  # the text as written
    snippet: str  # ~40 characters around the first hit, on one line


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" or "\uf900" <= ch <= "\ufaff"


_LAST_LETTER = re.compile(r"([^\W\d_])[\W\d_]*\Z")
_FIRST_LETTER = re.compile(r"[\W\d_]*([^\W\d_])")


def _next_to_cjk(left: str, right: str) -> bool:
    """Whether the nearest letter before or after the hit is CJK."""
    before, after = _LAST_LETTER.search(left), _FIRST_LETTER.match(right)
    return bool((before and _is_cjk(before.group(1))) or (after and _is_cjk(after.group(1))))


@dataclass(frozen=True, slots=True)
class _Case:
    """Accepted spellings as written: a fixed set, or the rule ``capitalized`` / ``upper``."""

    rule: str | frozenset[str]

    def accepts(self, written: str) -> bool:
        if self.rule == "capitalized":
            return written[:1].isupper()
        if self.rule == "upper":
            return written.isupper()
        return written in self.rule


def _case(name: str, value: object) -> _Case | None:
    if value is None:
        return None
    if value in ("capitalized", "upper"):
        return _Case(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return _Case(frozenset(value))
    raise TaxonomyError(f"guard {name!r}: a case rule is a list of spellings, 'capitalized' or 'upper'")


@dataclass(frozen=True, slots=True)
class _Guard:
    """Context rule for ambiguous aliases; see the ``[guards]`` documentation in the taxonomy file."""

    name: str
    latin: str  # "accept" | "context": in Latin text (nearest letters on both sides are not CJK)
    cjk: str  # "accept" | "context": next to CJK text
    latin_case: _Case | None  # spellings accepted in Latin text, as written
    case: _Case | None  # spellings accepted everywhere, as written
    left: re.Pattern[str] | None  # each list of patterns compiled as one alternation
    right: re.Pattern[str] | None
    reject_left: re.Pattern[str] | None
    reject_right: re.Pattern[str] | None
    reject_around: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]
    trailing_digit: bool

    def accepts(self, left: str, right: str, written: str) -> bool:
        """Whether a hit written ``written`` stands, given the folded text just before and after it."""
        if (self.reject_left and self.reject_left.search(left)) or (self.reject_right and self.reject_right.match(right)):
            return False
        if any(lp.search(left) and rp.match(right) for lp, rp in self.reject_around):
            return False
        if self.case is not None and not self.case.accepts(written):
            return False
        cjk = _next_to_cjk(left, right)
        if not cjk and self.latin_case is not None and not self.latin_case.accepts(written):
            return False
        if (self.cjk if cjk else self.latin) == "accept":
            return True
        return bool((self.left and self.left.search(left)) or (self.right and self.right.match(right)))


_GUARD_KEYS = {"doc", "latin", "cjk", "latin_case", "case", "left", "right", "reject_left", "reject_right",
               "reject_around", "trailing_digit"}
_SKILL_KEYS = {"name", "en", "zh", "guarded", "guard", "parent", "frontier", "match_name"}


def _compile_guard(name: str, spec: Mapping) -> _Guard:
    unknown = set(spec) - _GUARD_KEYS
    if unknown:
        raise TaxonomyError(f"guard {name!r}: unknown keys {sorted(unknown)}")
    if not spec.get("doc"):
        raise TaxonomyError(f"guard {name!r}: needs a `doc` line stating the rule")
    modes = {}
    for key in ("latin", "cjk"):
        modes[key] = spec.get(key, "context")
        if modes[key] not in ("accept", "context"):
            raise TaxonomyError(f"guard {name!r}: {key} must be 'accept' or 'context'")

    def pats(key: str, suffix: bool) -> re.Pattern[str] | None:
        patterns = spec.get(key, ())
        if not patterns:
            return None
        try:
            for p in patterns:
                re.compile(p)
            either = "|".join(f"(?:{p})" for p in patterns)
            return re.compile(f"(?:{either})\\Z" if suffix else f"(?:{either})")
        except re.error as err:
            raise TaxonomyError(f"guard {name!r}: bad regex in {key}: {err}") from None

    around = spec.get("reject_around", ())
    if any(len(pair) != 2 for pair in around):
        raise TaxonomyError(f"guard {name!r}: reject_around holds [left, right] pairs")
    try:
        around_patterns = tuple((re.compile(f"(?:{lp})\\Z"), re.compile(rp)) for lp, rp in around)
    except re.error as err:
        raise TaxonomyError(f"guard {name!r}: bad regex in reject_around: {err}") from None
    return _Guard(
        name=name,
        latin=modes["latin"],
        cjk=modes["cjk"],
        latin_case=_case(name, spec.get("latin_case")),
        case=_case(name, spec.get("case")),
        left=pats("left", True),
        right=pats("right", False),
        reject_left=pats("reject_left", True),
        reject_right=pats("reject_right", False),
        reject_around=around_patterns,
        trailing_digit=bool(spec.get("trailing_digit", False)),
    )


@dataclass(frozen=True, slots=True)
class _Alias:
    skill: int  # index into Taxonomy.skills
    length: int
    check_left: bool
    check_right: bool
    trailing_digit: bool
    guard: _Guard | None


_URL = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)[^\s\u3000-\u303f\u4e00-\u9fff]+")
_SEPARATED = re.compile(r"(?<=[a-z0-9])[ -](?=[a-z0-9])")


def _variants(folded: str) -> list[str]:
    """``flash attention`` → also ``flash-attention`` and ``flashattention`` (and the same from hyphens)."""
    if not _SEPARATED.search(folded):
        return []
    return [v for v in (_SEPARATED.sub(" ", folded), _SEPARATED.sub("-", folded), _SEPARATED.sub("", folded))
            if v != folded]


def _hex(text: str) -> str:
    return text.encode("utf-16-be").hex()


def _width_variants(folded: str) -> set[str]:
    """The alias with its ASCII written full width, all of it or only the punctuation (C＋＋, TCP／IP)."""
    if not any("!" <= c <= "~" for c in folded):
        return set()
    full = "".join(_FULLWIDTH.get(c, c) for c in folded)
    punct = "".join(c if c in _ASCII_WORD else _FULLWIDTH.get(c, c) for c in folded)
    return {full, punct} - {folded}


def _match_text(text: str) -> tuple[str, list[int] | None]:
    """The text the automaton reads, and a map from its offsets to ``text`` when they differ."""
    folded = text.casefold()
    if len(folded) == len(text) and not _ASTRAL.search(folded):
        return folded, None
    pieces = []
    for ch in text:
        piece = fold(ch)
        pieces.append("\ufffd" * len(piece) if _ASTRAL.search(piece) else piece)
    offsets = [i for i, piece in enumerate(pieces) for _ in piece]
    offsets.append(len(text))
    return "".join(pieces), offsets


class Taxonomy:
    """The parsed taxonomy: ``skills`` in file order, ``version`` (content hash), and the matcher."""

    def __init__(self, data: bytes, origin: str = "<bytes>") -> None:
        self.version = hashlib.sha256(data).hexdigest()[:16]
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
            raise TaxonomyError(f"{origin}: {err}") from None
        guards = {name: _compile_guard(name, spec) for name, spec in doc.get("guards", {}).items()}
        self.skills: list[Skill] = []
        self._index: dict[str, int] = {}
        self._aliases: dict[str, _Alias] = {}
        used_guards: set[str] = set()
        skills_doc = doc.get("skills", {})
        unknown_cats = set(skills_doc) - set(CATEGORIES)
        if unknown_cats:
            raise TaxonomyError(f"unknown categories {sorted(unknown_cats)}; allowed: {', '.join(CATEGORIES)}")
        variants: list[tuple[str, _Alias]] = []
        for category in CATEGORIES:
            for entry in skills_doc.get(category, ()):
                self._add_skill(category, entry, guards, used_guards, variants)
        for folded, alias in variants:
            self._aliases.setdefault(folded, alias)
        self._check_parents()
        unused = set(guards) - used_guards
        if unused:
            raise TaxonomyError(f"guards never used: {sorted(unused)}")
        self._automaton = ahocorasick.Automaton()  # over UTF-16 hex digits
        self._latin_automaton = ahocorasick.Automaton()  # aliases without CJK, over plain text without CJK
        # One-letter aliases (C, R) would hit at every c and r of English text: a regex finds only the
        # free-standing ones (one-letter aliases therefore never take a version digit).
        self._letters: dict[str, tuple] = {}
        for folded, alias in self._aliases.items():
            if _ASTRAL.search(folded):
                raise TaxonomyError(f"alias {folded!r} of {self.skills[alias.skill].name!r}: only BMP characters")
            value = (alias.skill, alias.length, alias.check_left, alias.check_right, alias.trailing_digit,
                     alias.guard)
            for key in {folded} | _width_variants(folded):
                if key != folded and key in self._aliases:
                    continue
                if len(key) == 1 and key in _WORD:
                    self._letters[key] = value
                else:
                    self._automaton.add_word(_hex(key), value)
                    if not _WIDE.search(key):
                        self._latin_automaton.add_word(key, value)
        self._automaton.make_automaton()
        self._latin_automaton.make_automaton()
        word = "".join(sorted(_WORD))
        self._letter_re = re.compile(f"(?<![{word}])[{''.join(sorted(self._letters))}](?![{word}])") \
            if self._letters else None

    def _add_skill(self, category: str, entry: Mapping, guards: Mapping[str, _Guard],
                   used_guards: set[str], variants: list[tuple[str, _Alias]]) -> None:
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip():
            raise TaxonomyError(f"{category}: a skill without a name: {entry!r}")
        unknown = set(entry) - _SKILL_KEYS
        if unknown:
            raise TaxonomyError(f"skill {name!r}: unknown keys {sorted(unknown)}")
        if name in self._index:
            raise TaxonomyError(f"skill {name!r} is defined twice")
        by_guard = self._guarded(name, entry, guards)
        used_guards.update(by_guard)
        guarded = [alias for aliases in by_guard.values() for alias in aliases]
        plain = list(entry.get("en", ())) + list(entry.get("zh", ()))
        idx = len(self.skills)
        self.skills.append(Skill(name=name, category=category, parent=entry.get("parent"),
                                 aliases=tuple(plain + guarded), frontier=bool(entry.get("frontier", False))))
        self._index[name] = idx
        folded_guarded = {fold(a).strip() for a in guarded}
        name_matches = entry.get("match_name", True) and fold(name).strip() not in folded_guarded
        for text in ([name] if name_matches else []) + plain:
            folded = fold(text).strip()
            self._register(name, folded, self._alias(idx, folded, None))
            for variant in _variants(folded):
                variants.append((variant, self._alias(idx, variant, None)))
        for guard_name, aliases in by_guard.items():
            for alias in aliases:
                folded = fold(alias).strip()
                self._register(name, folded, self._alias(idx, folded, guards[guard_name]))

    @staticmethod
    def _guarded(name: str, entry: Mapping, guards: Mapping[str, _Guard]) -> dict[str, list[str]]:
        """Guarded aliases by guard name: ``guarded = [...]`` with ``guard = "g"``, or ``guarded = {g = [...]}``."""
        guarded = entry.get("guarded", ())
        if isinstance(guarded, Mapping):
            if "guard" in entry:
                raise TaxonomyError(f"skill {name!r}: `guard` is implied when `guarded` is a table")
            by_guard = {g: list(aliases) for g, aliases in guarded.items()}
        elif guarded or "guard" in entry:
            if not guarded or "guard" not in entry:
                raise TaxonomyError(f"skill {name!r}: `guarded` aliases and `guard` go together")
            by_guard = {entry["guard"]: list(guarded)}
        else:
            return {}
        for g in by_guard:
            if g not in guards:
                raise TaxonomyError(f"skill {name!r}: unknown guard {g!r}")
        return by_guard

    @staticmethod
    def _alias(idx: int, folded: str, guard: _Guard | None) -> _Alias:
        return _Alias(
            skill=idx,
            length=len(folded),
            check_left=folded[0] in _WORD,
            check_right=folded[-1] in _WORD,
            trailing_digit=folded[-1].isalpha() and (guard.trailing_digit if guard else True),
            guard=guard,
        )

    def _register(self, name: str, folded: str, alias: _Alias) -> None:
        if not folded:
            raise TaxonomyError(f"skill {name!r}: empty alias")
        other = self._aliases.get(folded)
        if other is not None and self.skills[other.skill].name != name:
            owner = self.skills[other.skill].name
            raise TaxonomyError(f"alias {folded!r} of {name!r} is already an alias of {owner!r}")
        self._aliases[folded] = alias

    def _check_parents(self) -> None:
        for skill in self.skills:
            seen = {skill.name}
            parent = skill.parent
            while parent is not None:
                if parent not in self._index:
                    raise TaxonomyError(f"skill {skill.name!r}: parent {parent!r} is not a skill")
                if parent in seen:
                    raise TaxonomyError(f"skill {skill.name!r}: parent cycle through {parent!r}")
                seen.add(parent)
                parent = self.skills[self._index[parent]].parent

    # ------------------------------------------------------------------ lookups

    def skill(self, name: str) -> Skill:
        """The skill of that canonical name (KeyError when absent)."""
        return self.skills[self._index[name]]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def lineage(self, name: str) -> list[str]:
        """The skill and its ancestors, nearest first: ``FlashAttention`` → ``attention optimization`` → …"""
        out = [name]
        while (parent := self.skill(out[-1]).parent) is not None:
            out.append(parent)
        return out

    def rows(self) -> list[dict]:
        """One dict per skill for storage: name, category, parent, aliases (list), frontier."""
        return [
            {"name": s.name, "category": s.category, "parent": s.parent,
             "aliases": list(s.aliases), "frontier": s.frontier}
            for s in self.skills
        ]

    # ------------------------------------------------------------------ matching

    def scan(self, text: str) -> list[tuple[int, int, int]]:
        """Accepted, non-overlapping hits in ``text``: ``(start, end, skill index)``, offsets in ``text``.

        Hits never span a line break; guards see context only from the hit's own line.
        """
        folded, offsets = _match_text(text)
        n = len(folded)
        urls = [m.span() for m in _URL.finditer(folded)] if ("://" in folded or "www." in folded) else ()
        found: list[tuple[int, int, int]] = []
        if not _WIDE.search(folded):
            matches, mask, shift = self._latin_automaton.iter(folded), 0, 0
        else:
            matches, mask, shift = self._automaton.iter(_hex(folded)), 3, 2
        for last, (skill, length, check_left, check_right, trailing_digit, guard) in matches:
            if last & mask != mask:  # a hex match that does not end on a character boundary
                continue
            end = (last + 1) >> shift
            start = end - length
            if check_left and start > 0 and folded[start - 1] in _WORD:
                continue
            if check_right and end < n:
                nxt = folded[end]
                if nxt in _WORD and not (trailing_digit and nxt in _DIGITS):
                    continue
            if urls and any(lo <= start < hi for lo, hi in urls):
                continue
            found.append((start, -end, skill, guard))
        if self._letter_re is not None:
            for m in self._letter_re.finditer(folded):
                skill, _, _, _, _, guard = self._letters[m.group()]
                if not (urls and any(lo <= m.start() < hi for lo, hi in urls)):
                    found.append((m.start(), -m.end(), skill, guard))
        if not found:
            return []
        found.sort()  # (start, -end, skill) never tie: one alias per position and end
        kept: list[tuple[int, int, int]] = []
        reach = -1
        for start, neg_end, skill, guard in found:  # leftmost-longest; guards only for contenders
            if start >= reach:
                if guard is not None:
                    lo, hi = (start, -neg_end) if offsets is None else (offsets[start], offsets[-neg_end])
                    if not self._guard_accepts(guard, text, lo, hi):
                        continue
                kept.append((start, -neg_end, skill))
                reach = -neg_end
        if offsets is not None:
            kept = [(offsets[s], offsets[e], k) for s, e, k in kept]
        return kept

    @staticmethod
    def _guard_accepts(guard: _Guard, text: str, start: int, end: int) -> bool:
        left = text[max(0, start - _WINDOW):start].rpartition("\n")[2]
        right = text[end:end + _WINDOW].partition("\n")[0]
        left = left.lower() if left.isascii() else fold(left)
        right = right.lower() if right.isascii() else fold(right)
        return guard.accepts(left, right, text[start:end])

    def tag(self, sections: Mapping[str, Sequence[str]], tags: Sequence[str] = ()) -> list[SkillHit]:
        """See :func:`tag`."""
        blocks = [(TAGS_SECTION, tags)] if tags else []
        blocks += [(key, [lines] if isinstance(lines, str) else lines) for key, lines in sections.items()]
        texts = ["\n".join(lines) for _, lines in blocks]
        bounds = []  # where each section starts in the whole text, scanned once
        pos = 0
        for text in texts:
            bounds.append(pos)
            pos += len(text) + 1
        whole = "\n".join(texts)
        first: list[dict[int, list]] = [{} for _ in blocks]
        block = 0
        for start, end, skill in self.scan(whole):  # hits come in text order and never span a line break
            while block + 1 < len(bounds) and start >= bounds[block + 1]:
                block += 1
            entry = first[block].get(skill)
            if entry is None:
                first[block][skill] = [start, end, 1]
            else:
                entry[2] += 1
        hits: list[SkillHit] = []
        skills = self.skills
        for (section, _), base, found in zip(blocks, bounds, first):
            for skill, (start, end, count) in found.items():  # dicts keep insertion order: by first offset
                before = whole[max(base, start - SNIPPET_RADIUS):start].rpartition("\n")[2]
                after = whole[end:end + SNIPPET_RADIUS].partition("\n")[0]
                s = skills[skill]
                hits.append(SkillHit(s.name, s.category, section, count, start - base, whole[start:end],
                                     (before + whole[start:end] + after).strip()))
        return hits


_PACKAGED = "data/skills.toml"


@functools.lru_cache(maxsize=8)
def _load(path: str | None) -> Taxonomy:
    if path is None:
        data = resources.files(__package__).joinpath(_PACKAGED).read_bytes()
        return Taxonomy(data, origin=f"normalize/{_PACKAGED}")
    return Taxonomy(Path(path).read_bytes(), origin=path)


def load_taxonomy(path: str | Path | None = None) -> Taxonomy:
    """The taxonomy from ``path`` (default: the packaged ``normalize/data/skills.toml``), cached per path.

    Raises :class:`TaxonomyError` on a malformed file (unknown category or key, duplicate skill or
    alias, missing parent, parent cycle, unknown or unused guard, bad regex).
    """
    return _load(None if path is None else str(Path(path).resolve()))


def tag(sections: Mapping[str, Sequence[str]], tags: Sequence[str] = (),
        taxonomy: Taxonomy | None = None) -> list[SkillHit]:
    """Skills in a posting: one :class:`SkillHit` per (skill, section).

    ``tags`` are scanned first as section ``tags`` (one tag per line), then ``sections`` in the order
    given (each a key → its lines; a plain string counts as one line). Within a section hits are in
    order of first appearance. Each hit's ``count`` is its occurrences in that section.
    """
    return (taxonomy or load_taxonomy()).tag(sections, tags)


def skills_in_order(hits: Sequence[SkillHit]) -> list[str]:
    """Unique canonical skill names by first appearance."""
    return list(dict.fromkeys(hit.skill for hit in hits))
