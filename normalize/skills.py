"""Skill taxonomy and tagger: canonical skills from a posting's tags and JD sections, with evidence.

The taxonomy is ``normalize/data/skills.toml`` (its header documents categories, guards and aliases).
Aliases match in the ``text.fold``-ed text (NFKC + casefold: ``ＣＵＤＡ`` is CUDA; format characters
are read as nothing), never across a line break, and then:

- Latin boundaries: an alias that starts (ends) with an ASCII letter or digit matches only when the
  character before (after) it is not one; a CJK character or punctuation is a boundary. A digit
  right after a letter-final alias is a version (``Python3``, ``Qt5``) unless the alias is guarded.
- Guards: ambiguous aliases (``C``, ``R``, ``Go``, ``Spark``, ``量化`` …) carry a named guard from the
  file that checks the case as written and the folded text around the hit.
- Longest match wins: of overlapping accepted hits the leftmost-longest is kept, so ``Nsight Compute``
  never also yields a bare ``Nsight``, ``C++`` never a ``C``, ``大模型推理`` only ``LLM inference``.
  Broader skills come back through ``parent``.
"""

from __future__ import annotations

import functools
import hashlib
import re
import tomllib
import unicodedata
from bisect import bisect_right, insort
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, count
from operator import itemgetter
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import ahocorasick_rs

from .text import LONE_SURROGATE, FormatMap, fold

if TYPE_CHECKING:  # models imports this module
    from .models import Posting

__all__ = [
    "CATEGORIES",
    "Skill",
    "SkillHit",
    "Taxonomy",
    "TaxonomyError",
    "load_taxonomy",
    "tag",
    "evidence",
    "hit_evidence",
    "skills_in_order",
    "tag_posting",
]

CATEGORIES = (
    "language", "framework", "gpu", "compiler", "tool", "model",
    "technique", "infra", "data", "domain", "soft",
)
"""Allowed categories; the file header maps them to the issue's names."""
KINDS = ("technical", "domain", "soft")
"""What a category is a kind of (the file's ``[kinds]`` table): what browse groups skills by."""

TAGS_SECTION = "tags"
SNIPPET_RADIUS = 20
_WINDOW = 32  # characters of context a guard sees on each side of a hit (within the line)
_ASCII_WORD = "abcdefghijklmnopqrstuvwxyz0123456789"
_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}  # ! … ~ → ！ … ～
_WORD = frozenset(_ASCII_WORD + "".join(_FULLWIDTH[c] for c in _ASCII_WORD))
_DIGITS = frozenset("0123456789０１２３４５６７８９")
_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


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
    kind: str = "technical"  # of its category: technical, domain or soft ([kinds] of the file)


class SkillHit(NamedTuple):
    """One skill found in one section, with the evidence of its first occurrence (its snippet is rendered when
    read: :func:`evidence`)."""

    skill: str
    category: str
    section: str
    count: int
    first_offset: int  # in the section text: its lines joined with "\n" (:func:`section_text`)
    matched: str  # the text as written


_new_tuple = tuple.__new__  # SkillHit._make without its Python frame
_START = itemgetter(1)  # of a (key, start, end) hit


def _is_cjk(ch: str) -> bool:
    return "\u2e80" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" or "\uf900" <= ch <= "\ufaff"


_LAST_LETTER = re.compile(r"([^\W\d_])[\W\d_]*\Z")
_FIRST_LETTER = re.compile(r"[\W\d_]*([^\W\d_])")


def _next_to_cjk(left: str, right: str) -> bool:
    """Whether the nearest letter before or after the hit is CJK."""
    # Only the last letter can start a match of _LAST_LETTER: try the last character first.
    before = (left and _LAST_LETTER.match(left, len(left) - 1)) or _LAST_LETTER.search(left)
    if before and _is_cjk(before.group(1)):
        return True
    after = _FIRST_LETTER.match(right)
    return bool(after and _is_cjk(after.group(1)))


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

    def accepts(self, text: str, start: int, end: int) -> bool:
        """Whether the hit ``text[start:end]`` stands: its spelling, then the text around it within its line."""
        written = text[start:end]
        if self.case is not None and not self.case.accepts(written):
            return False  # the spelling alone rejects it (CAN bus, not "can"): no context to read
        left = text[start - _WINDOW if start > _WINDOW else 0:start].rpartition("\n")[2]
        right = text[end:end + _WINDOW].partition("\n")[0]
        # Folded in one go: a line break neither composes nor changes, so it splits the fold the same way.
        left, _, right = _fold_window(f"{left}\n{right}").partition("\n")
        return self._context_accepts(left, right, written)

    def _context_accepts(self, left: str, right: str, written: str) -> bool:
        """The rules after ``case``, given the folded text just before and after the hit."""
        # Right-side patterns first: a match at one position is cheaper than a search over the left window.
        if self.reject_right and self.reject_right.match(right):
            return False
        if self.reject_left and self.reject_left.search(left):
            return False
        if any(rp.match(right) and lp.search(left) for lp, rp in self.reject_around):
            return False
        if self.latin_case is None and self.latin == self.cjk:  # the script around the hit does not matter
            cjk = False
        else:
            cjk = _next_to_cjk(left, right)
            if not cjk and self.latin_case is not None and not self.latin_case.accepts(written):
                return False
        if (self.cjk if cjk else self.latin) == "accept":
            return True
        return bool((self.right and self.right.match(right)) or (self.left and self.left.search(left)))


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


def _fold_window(text: str) -> str:
    """``fold(text)``, without NFKC when replacing the common full-width characters already normalizes.

    Exact: replacing a character by its NFKC form keeps the string's NFKD, so an NFKC-normalized
    result is the string's NFKC.
    """
    if text.isascii():
        return text.lower()
    # The characters NFKC changes that are frequent in Chinese postings, each by its NFKC form.
    quick = text.replace("，", ",").replace("；", ";").replace("\xa0", " ").replace("：", ":").replace(
        "）", ")").replace("（", "(").replace("\u3000", " ")
    return quick.casefold() if unicodedata.is_normalized("NFKC", quick) else fold(text)


def _width_variants(folded: str) -> set[str]:
    """The alias with its ASCII written full width, all of it or only the punctuation (C＋＋, TCP／IP)."""
    if not any("!" <= c <= "~" for c in folded):
        return set()
    full = "".join(_FULLWIDTH.get(c, c) for c in folded)
    punct = "".join(c if c in _ASCII_WORD else _FULLWIDTH.get(c, c) for c in folded)
    return {full, punct} - {folded}


def _ascii_title(folded: str) -> str:
    """``folded`` with each ASCII letter that follows an ASCII letter in lower case, every other ASCII letter in upper.

    Same length and offsets; non-ASCII characters are kept (bytes.title() sees only ASCII letters as cased).
    """
    return folded.encode("utf-8", "surrogatepass").title().decode("utf-8", "surrogatepass")


_LATIN_SPACES = 20  # Latin prose: more than one space in this many characters


def _latin_prose(text: str) -> bool:
    """Whether to read ``text`` title-cased: Latin prose holds many aliases inside words (``es`` in ``test``),
    which cost more to reject than title-casing costs; mostly Chinese text holds few. Either way gives the same hits.
    """
    return text.count(" ") * _LATIN_SPACES > len(text)


_ASCII_BYTES = bytes(range(0x80))


def _titled_match_text(text: str) -> tuple[str, str, list[int] | None]:
    """:func:`_match_text`, and the folded text :func:`_ascii_title`-cased.

    When no character beyond ASCII changes under casefolding and all are in the BMP (most Latin prose), both
    come from the text's UTF-8 bytes, ASCII lower-cased and title-cased: casefolding is per character, so the
    result is the same, and a long text holding one typographic quote is not casefolded a character at a time.
    """
    raw = text.encode("utf-8", "surrogatepass")
    others = raw.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
    if others.casefold() == others and len(others.encode("utf-16-le", "surrogatepass")) == 2 * len(others):
        return raw.lower().decode("utf-8", "surrogatepass"), raw.title().decode("utf-8", "surrogatepass"), None
    folded, offsets = _match_text(text)
    return folded, _ascii_title(folded), offsets


def _match_text(text: str) -> tuple[str, list[int] | None]:
    """The text the automaton reads, and a map from its offsets to ``text`` when they differ."""
    folded = text.casefold()
    if len(folded) == len(text) and len(folded.encode("utf-16-le", "surrogatepass")) == 2 * len(folded):
        return folded, None  # no character folded longer, none outside the BMP
    pieces = []
    for ch in text:
        piece = fold(ch)
        pieces.append("\ufffd" * len(piece) if _ASTRAL.search(piece) else piece)
    offsets = [i for i, piece in enumerate(pieces) for _ in piece]
    offsets.append(len(text))
    return "".join(pieces), offsets


def _kinds(doc: Mapping) -> dict[str, str]:
    """Category → kind from the file's ``[kinds]`` table: each category in exactly one kind. A file
    without one: ``soft`` and ``domain`` are kinds of their own, every other category technical."""
    if not doc:
        return {c: c if c in KINDS else "technical" for c in CATEGORIES}
    unknown = set(doc) - set(KINDS)
    if unknown:
        raise TaxonomyError(f"[kinds]: unknown kinds {sorted(unknown)}; allowed: {', '.join(KINDS)}")
    kinds: dict[str, str] = {}
    for kind, categories in doc.items():
        for category in categories:
            if category not in CATEGORIES:
                raise TaxonomyError(f"[kinds] {kind}: unknown category {category!r}")
            if category in kinds:
                raise TaxonomyError(f"[kinds]: category {category!r} is in {kinds[category]} and {kind}")
            kinds[category] = kind
    missing = [c for c in CATEGORIES if c not in kinds]
    if missing:
        raise TaxonomyError(f"[kinds]: no kind for the categories {missing}")
    return kinds


class Taxonomy:
    """The parsed taxonomy: ``skills`` in file order, ``version`` (content hash), and the matcher (built when first
    used: a malformed file fails when loaded)."""

    def __init__(self, data: bytes, origin: str = "<bytes>") -> None:
        self.version = hashlib.sha256(data).hexdigest()[:16]
        try:
            self._build(data)
        except TaxonomyError as err:  # every problem names the file once
            raise TaxonomyError(f"{origin}: {err}") from None

    def _build(self, data: bytes) -> None:
        try:
            doc = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
            raise TaxonomyError(str(err)) from None
        guards = {name: _compile_guard(name, spec) for name, spec in doc.get("guards", {}).items()}
        self.skills: list[Skill] = []
        self._index: dict[str, int] = {}
        self._aliases: dict[str, _Alias] = {}
        used_guards: set[str] = set()
        skills_doc = doc.get("skills", {})
        unknown_cats = set(skills_doc) - set(CATEGORIES)
        if unknown_cats:
            raise TaxonomyError(f"unknown categories {sorted(unknown_cats)}; allowed: {', '.join(CATEGORIES)}")
        self.kinds = _kinds(doc.get("kinds", {}))
        variants: list[tuple[str, _Alias]] = []
        for category in CATEGORIES:
            for entry in skills_doc.get(category, ()):
                self._add_skill(category, entry, guards, used_guards, variants)
        if not self.skills:
            raise TaxonomyError("defines no skills (no entry under [skills]): it would tag nothing")
        for folded, alias in variants:
            self._aliases.setdefault(folded, alias)
        self._check_parents()
        self._skill_names = [skill.name for skill in self.skills]
        self._skill_categories = [skill.category for skill in self.skills]
        unused = set(guards) - used_guards
        if unused:
            raise TaxonomyError(f"guards never used: {sorted(unused)}")
        for folded, alias in self._aliases.items():
            if _ASTRAL.search(folded):
                raise TaxonomyError(f"alias {folded!r} of {self.skills[alias.skill].name!r}: only BMP characters")
        self._longest: ahocorasick_rs.AhoCorasick | None = None  # the matcher: built on first use (:meth:`prepare`)

    def prepare(self) -> Taxonomy:
        """Build the matcher now (tagging builds it on first use; a process that never tags never builds it);
        returns the taxonomy."""
        if self._longest is None:
            self._build_matcher()
        return self

    def _build_matcher(self) -> None:
        """The tables and automata :meth:`_hits` reads, ``_longest`` set last (a matcher in use is whole)."""
        # One-letter aliases (C, R) would hit at every c and r of English text: a regex finds only the
        # free-standing ones (one-letter aliases therefore never take a version digit).
        letters: dict[str, tuple] = {}
        keys: dict[str, tuple] = {}
        for folded, alias in self._aliases.items():
            value = (alias.skill, alias.check_left, alias.check_right, alias.trailing_digit, alias.guard)
            for key in {folded} | _width_variants(folded):
                if key != folded and key in self._aliases:
                    continue
                (letters if len(key) == 1 and key in _WORD else keys)[key] = value
        # Keys: the automaton's patterns, then the one-letter aliases; values: (skill, check_left,
        # check_right, trailing_digit, guard). Every key starting with a letter or digit checks left.
        self._values = list(keys.values()) + list(letters.values())
        self._skill_of = [value[0] for value in self._values]
        self._checked = [bool(value[1] or value[2] or value[4]) for value in self._values]
        self._guarded = [value[4] is not None for value in self._values]
        self._key_index = {key: i for i, key in enumerate(keys)}
        # For each key, the keys that are its proper prefixes, longest first: (length, key index).
        self._prefixes = [tuple((stop, self._key_index[key[:stop]]) for stop in range(len(key) - 1, 0, -1)
                                if key[:stop] in self._key_index) for key in keys]
        # The first two characters of every key, as searched and title-cased; one-character keys on their own.
        self._starts = {key[:2] for key in keys}
        self._titled_starts = {_ascii_title(key)[:2] for key in keys}
        self._letter_key = {letter: len(keys) + i for i, letter in enumerate(letters)}
        word = "".join(sorted(_WORD))
        titled_word = "".join(sorted(_WORD | set(_ASCII_WORD.upper())))

        def free_standing(letter: str, word: str) -> tuple[str, re.Pattern[str]]:
            # (?<![word])c(?![word]): starting with a literal lets the search skip ahead.
            return letter, re.compile(f"{re.escape(letter)}(?<![{word}].)(?![{word}])")

        # Per one-letter alias: its key, the letter and where it stands free, in the folded text and in the
        # title-cased one, where an ASCII letter is upper case only at a word start: far fewer places to try.
        self._letters = [(self._letter_key[letter], *free_standing(letter, word)) for letter in sorted(letters)]
        self._titled_letters = [(self._letter_key[letter], *free_standing(_ascii_title(letter), titled_word))
                                for letter in sorted(letters)]
        self._word_run = re.compile(f"[{word}]*")
        self._one_line = not any("\n" in key for key in keys)
        self._longest_key = max(map(len, keys), default=1)
        # The same keys ASCII-title-cased, for text ASCII-title-cased (:func:`_ascii_title`): a key starting with a
        # letter then cannot match inside a Latin word, where the boundary check would reject it anyway.
        self._titled = ahocorasick_rs.AhoCorasick([_ascii_title(key) for key in keys],
                                                  matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
        self._longest = ahocorasick_rs.AhoCorasick(list(keys), matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)

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
                                 aliases=tuple(plain + guarded), frontier=bool(entry.get("frontier", False)),
                                 kind=self.kinds[category]))
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
        """One dict per skill for storage: name, category, parent, aliases (list), frontier, kind."""
        return [
            {"name": s.name, "category": s.category, "parent": s.parent,
             "aliases": list(s.aliases), "frontier": s.frontier, "kind": s.kind}
            for s in self.skills
        ]

    # ------------------------------------------------------------------ matching

    def scan(self, text: str) -> list[tuple[int, int, int]]:
        """Accepted, non-overlapping hits in ``text``: ``(start, end, skill index)``, offsets in ``text``.

        Hits never span a line break; guards see context only from the hit's own line. The hits are
        the leftmost-longest choice among the candidates (occurrences of aliases) that pass the
        boundary, URL and guard checks.
        """
        hits = self._hits(text)
        skill_of = self._skill_of
        return [(start, end, skill_of[key]) for key, start, end in hits]

    def _hits(self, text: str, titled: bool | None = None) -> list[tuple[int, int, int]]:
        """:meth:`scan` as ``(key, start, end)``.

        A leftmost-longest automaton reports exactly the hits while every match it reports is
        accepted; most need no check at all (no boundary, no guard). At a match that is not accepted
        the longest accepted shorter alias at the same start is kept, if any, and the search goes on
        after it, or after the start, and past the rest of a Latin word (no candidate starts inside
        one). The automaton's later matches stand from the first that starts there, unless a skipped
        one reaches past it: then it searches again from the first place before that end where a key may
        start (:meth:`_candidate_start`, :meth:`_search_again`). A
        free-standing one-letter alias is a hit when no other hit covers it (it cannot cover another
        candidate's start). ``titled``: read the text ASCII-title-cased, with the keys so cased, so that no
        key starting with a letter matches inside a Latin word (default: :func:`_latin_prose`).
        """
        self.prepare()
        if (where := FormatMap(text)).visible is not text:
            # Format characters (CU\u200bDA) are read as nothing: hits in the text without them, spans in ``text``.
            return [(key, where.start(start), where.end(end)) for key, start, end in self._hits(where.visible, titled)]
        if titled is None:
            titled = _latin_prose(text)
        if titled:
            automaton, (folded, scan, offsets) = self._titled, _titled_match_text(text)
        else:
            automaton, (folded, offsets) = self._longest, _match_text(text)
            scan = folded
        try:
            todo = automaton.find_matches_as_indexes(scan)
        except UnicodeEncodeError:  # lone surrogates, which no alias holds
            folded = LONE_SURROGATE.sub("\ufffd", folded)
            scan = _ascii_title(folded) if titled else folded
            todo = automaton.find_matches_as_indexes(scan)
        urls = [m.span() for m in _URL.finditer(folded)] if ("://" in folded or "www." in folded) else ()
        kept: list[tuple[int, int, int]] = []
        run = 0  # todo[run:j] are accepted
        guarded, word, n = self._guarded, _WORD, len(folded)
        while True:
            if urls:
                checks: Iterable[int] = range(len(todo))
            else:
                checks = compress(count(), map(self._checked.__getitem__, map(itemgetter(0), todo)))
            for j in checks:
                if j < run:
                    continue
                key, start, end = todo[j]
                if not (guarded[key] or urls or (start and folded[start - 1] in word)
                        or (end < n and folded[end] in word)):
                    continue  # no guard, no URL, neither neighbour a letter or digit: accepted
                if self._accepted(key, text, folded, offsets, urls, start, end):
                    continue
                kept += todo[run:j]
                resume = self._after_rejection(text, folded, offsets, urls, key, start, end, kept)
                reached, run = end, j + 1
                while run < len(todo) and todo[run][1] < resume:
                    reached = todo[run][2]
                    run += 1
                if reached > resume:  # a skipped match may have hidden candidates starting after ``resume``
                    resume = self._candidate_start(scan, resume, reached, titled)
                if reached > resume:
                    todo, run = self._search_again(automaton, scan, resume, reached, todo, run), 0
                    break
            else:
                kept += todo[run:]
                break
        if self._letters:
            self._with_letters(text, folded, offsets, urls, kept, scan if titled else None)
        if offsets is not None:
            kept = [(key, offsets[start], offsets[end]) for key, start, end in kept]
        return kept

    def _candidate_start(self, scan: str, pos: int, stop: int, titled: bool) -> int:
        """The first position from ``pos`` up to ``stop`` where a key may start in ``scan``, else ``stop``."""
        starts = self._titled_starts if titled else self._starts
        while pos < stop and scan[pos:pos + 2] not in starts and scan[pos] not in starts:
            pos += 1
        return pos

    def _search_again(self, automaton: ahocorasick_rs.AhoCorasick, scan: str, resume: int, reached: int,
                      todo: list[tuple[int, int, int]], run: int) -> list[tuple[int, int, int]]:
        """The ``automaton``'s matches in ``scan`` searching from ``resume``, then ``todo`` from where they agree.

        ``todo[run:]`` are the matches after ``resume`` of the search that went on from ``reached``,
        the end of the last match skipped. The automaton reads a window at a time: its matches are
        right while they start at least one longest alias before the window's end (or the window
        ends the line), and where the last of them ends no candidate starts up to that point. From
        a position there that no match of ``todo`` spans, both searches give the same matches.
        """
        line_end = scan.find("\n", resume) if self._one_line else -1
        line_end = len(scan) if line_end < 0 else line_end
        span = self._longest_key
        found = []
        while True:
            window_end = min(line_end, max(reached, resume) + 2 * span)
            valid = line_end if window_end == line_end else window_end - span
            stand = resume  # where this search stands: no candidate starts from there up to ``valid``
            for key, start, end in automaton.find_matches_as_indexes(scan[resume:window_end]):
                if start + resume > valid:
                    break
                found.append((key, start + resume, end + resume))
                stand = end + resume
            meet = max(stand, reached)
            while run < len(todo) and todo[run][1] < meet:
                reached = todo[run][2]
                run += 1
                if reached > meet:  # that match spans ``meet``: meet at its end
                    meet = reached
            if meet <= valid + 1:
                return found + todo[run:]
            resume, reached = stand, meet

    def _after_rejection(self, text: str, folded: str, offsets: list[int] | None, urls: Sequence[tuple[int, int]],
                         key: int, start: int, end: int, kept: list[tuple[int, int, int]]) -> int:
        """Keep the longest accepted alias shorter than the rejected match at ``start``, if any; where to go on."""
        if self._values[key][1] and start and folded[start - 1] in _WORD:
            resume = start  # inside a Latin word: so is every candidate at this start
        else:
            resume = start + 1
            for length, shorter in self._prefixes[key]:  # folded[start:end] is the key
                if self._accepted(shorter, text, folded, offsets, urls, start, start + length):
                    kept.append((shorter, start, start + length))
                    resume = start + length
                    break
        if folded[resume - 1] in _WORD:  # every candidate starting in the rest of a word starts with
            resume = self._word_run.match(folded, resume).end()  # a letter or digit: rejected
        return resume

    def _accepted(self, key: int, text: str, folded: str, offsets: list[int] | None,
                  urls: Sequence[tuple[int, int]], start: int, end: int) -> bool:
        """Whether the candidate ``folded[start:end]`` passes the Latin boundaries, the URL spans and its guard."""
        _, check_left, check_right, trailing_digit, guard = self._values[key]
        if check_left and start > 0 and folded[start - 1] in _WORD:
            return False
        if check_right and end < len(folded):
            nxt = folded[end]
            if nxt in _WORD and not (trailing_digit and nxt in _DIGITS):
                return False
        if urls and any(lo <= start < hi for lo, hi in urls):
            return False
        if guard is None:
            return True
        if offsets is not None:  # guards read the text as written
            start, end = offsets[start], offsets[end]
        return guard.accepts(text, start, end)

    def _with_letters(self, text: str, folded: str, offsets: list[int] | None, urls: Sequence[tuple[int, int]],
                      kept: list[tuple[int, int, int]], titled_text: str | None = None) -> None:
        """Add to ``kept`` the accepted free-standing one-letter aliases that no hit in it covers.

        ``titled_text``: ``folded`` :func:`_ascii_title`-cased, to look for them in (same offsets).
        """
        scan = folded if titled_text is None else titled_text
        for key, letter, letter_re in self._letters if titled_text is None else self._titled_letters:
            if letter not in scan:
                continue
            for m in letter_re.finditer(scan):
                pos = m.start()
                covering = bisect_right(kept, pos, key=_START) - 1
                if covering >= 0 and kept[covering][2] > pos:
                    continue
                if self._accepted(key, text, folded, offsets, urls, pos, pos + 1):
                    insort(kept, (key, pos, pos + 1), key=_START)

    def tag(self, sections: Mapping[str, Sequence[str]], tags: Sequence[str] = ()) -> list[SkillHit]:
        """See :func:`tag`."""
        blocks = [(TAGS_SECTION, tags)] if tags else []
        blocks += [(key, [lines] if isinstance(lines, str) else lines) for key, lines in sections.items()]
        texts = ["\n".join(lines) for _, lines in blocks]
        whole = "\n".join(texts)  # scanned once; hits never span a line break
        bounds = list(accumulate((len(text) + 1 for text in texts), initial=0))  # where blocks start, and the end
        found = self._hits(whole)  # in text order
        hits: list[SkillHit] = []
        skill_of, names, categories, low = self._skill_of, self._skill_names, self._skill_categories, 0
        for (section, _), base, block_end in zip(blocks, bounds, bounds[1:]):
            high = bisect_right(found, block_end - 1, low, key=_START)
            first: dict[int, tuple[int, int, int]] = {}  # skill → its first hit
            counts: dict[int, int] = {}  # skill → its hits, when more than one
            for hit in found[low:high]:
                skill = skill_of[hit[0]]
                if skill in first:
                    counts[skill] = counts.get(skill, 1) + 1
                else:
                    first[skill] = hit
            low = high
            for skill, (_, start, end) in first.items():  # by first offset: dicts keep insertion order
                hits.append(_new_tuple(SkillHit, (names[skill], categories[skill], section, counts.get(skill, 1),
                                                  start - base, whole[start:end])))
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

    Raises :class:`TaxonomyError` on a malformed file (no skill, unknown category or key, duplicate skill
    or alias, missing parent, parent cycle, unknown or unused guard, bad regex).
    """
    return _load(None if path is None else str(Path(path).resolve()))


def snippet(text: str, start: int, end: int) -> str:
    """The snippet of the hit ``text[start:end]``: :data:`SNIPPET_RADIUS` characters around it, within its line,
    stripped. The same from a posting's whole text or from its section's text alone (a section is whole lines)."""
    around = text[start - SNIPPET_RADIUS if start > SNIPPET_RADIUS else 0:end + SNIPPET_RADIUS]
    if "\n" in around:
        around = (text[max(0, start - SNIPPET_RADIUS):start].rpartition("\n")[2] + text[start:end]
                  + text[end:end + SNIPPET_RADIUS].partition("\n")[0])
    return around.strip()


def section_text(section: str, sections: Mapping[str, Sequence[str]], tags: Sequence[str]) -> str:
    """The text a hit's ``first_offset`` counts in: the lines of its section (section ``tags``: the tags) joined by
    line breaks."""
    lines = tags if section == TAGS_SECTION else sections.get(section, ())
    return lines if isinstance(lines, str) else "\n".join(lines)


EVIDENCE_KEYS = ("skill", "category", "section", "count", "first_offset", "matched", "snippet")
"""A skill evidence record as read (export, the posting page, a posting's JSON)."""


def evidence(hits: Iterable[tuple[str, str | None, str, int, int, int]], sections: Mapping[str, Sequence[str]],
             tags: Sequence[str]) -> list[dict]:
    """Evidence records (:data:`EVIDENCE_KEYS`) of hits given as (skill, category, section, count, first_offset,
    length): the text as written and its :func:`snippet` read from the section's text (:func:`section_text`; a
    section named ``tags`` reads the tags)."""
    texts: dict[str, str] = {}
    out = []
    for skill, category, section, found, start, length in hits:
        text = texts.get(section)
        if text is None:
            text = texts[section] = section_text(section, sections, tags)
        end = start + length
        out.append({"skill": skill, "category": category, "section": section, "count": found, "first_offset": start,
                    "matched": text[start:end], "snippet": snippet(text, start, end)})
    return out


def hit_evidence(hits: Iterable[SkillHit], sections: Mapping[str, Sequence[str]], tags: Sequence[str]) -> list[dict]:
    """:func:`evidence` of the tagger's ``hits`` in the ``sections`` and ``tags`` it read."""
    return evidence(((*hit[:5], len(hit.matched)) for hit in hits), sections, tags)


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


def tag_posting(posting: Posting, taxonomy: Taxonomy) -> Posting:
    """Fill ``skills`` and ``skill_evidence`` of ``posting`` (in place; returned) from its tags and
    JD sections, every section key (the app's AI-insight lists are not sections and are not tagged)."""
    hits = taxonomy.tag(posting.sections, posting.tags)
    posting.skills = skills_in_order(hits)
    posting.skill_evidence = hits
    return posting
