"""Job-description sections: heading vocabulary (zh/en) → canonical keys, section splitting, bullets.

Canonical keys: about, requirements, responsibilities, preferred, compensation (pay), benefits (see
``models.SECTION_KEYS``).
Unknown headings are never dropped: they are kept under their own text.

:func:`split_sections` cuts free JD text (one line or many, headings inline or on their own lines)
into ``(key, heading_as_written, bullets)``; :func:`split_bullets` cuts one section's text into
bullets. Every letter of the input ends up in a heading or a bullet, except the Chinese numerals
of list markers (``一、``).
"""

from __future__ import annotations

import functools
import re
from itertools import chain
from typing import NamedTuple

import ahocorasick_rs

from .text import FormatMap, clean_line, clean_lines, drop_format, find_matches, fold

__all__ = [
    "HEADINGS",
    "heading_text",
    "section_key",
    "clean_bullet",
    "split_bullets",
    "split_sections",
    "sections_dict",
    "spans_of",
]


def _vocabulary() -> dict[str, str]:
    words = {
        "about": (
            "关于这个职位 职位介绍 岗位介绍 职位概述 职位概要 岗位概述 职位简介 岗位简介 职位亮点 公司介绍 公司简介 "
            "关于我们 团队介绍 部门介绍 项目介绍",
            "about the role|about this role|about the job|about the position|about the team|about us|about the company|"
            "overview|role overview|position overview|job overview|the role|the opportunity|job summary|summary|"
            "job description|who we are|an overview of this role|about this opportunity|role description",
        ),
        "responsibilities": (
            # 职位描述/岗位描述 on Chinese boards almost always hold the duties (`职位描述：1.负责…`).
            "岗位职责 工作职责 主要工作职责 职责描述 工作内容 主要工作内容 主要职责 职位职责 岗位内容 职责 岗位描述 职位描述 工作描述 "
            "职位说明 岗位说明 职责范围 工作任务 主要工作 具体职责 具体工作 具体工作内容 你将负责 你的职责 你要做的事 "
            "你将要做的 岗位工作 职务描述",
            "responsibilities|key responsibilities|main responsibilities|job responsibilities|your responsibilities|"
            "roles and responsibilities|role and responsibilities|duties|job duties|key duties|what you'll do|"
            "what you will do|what you'll be doing|what you will be doing|what you'll work on|your role|your mission|"
            "in this role|in this role, you will|day to day|day-to-day|position description|the job",
        ),
        "requirements": (
            "任职要求 任职资格 岗位要求 职位要求 任职条件 应聘要求 应聘条件 招聘要求 招聘条件 岗位条件 上岗条件 任职资质 "
            "资格要求 基本要求 基本条件 最低要求 能力要求 技能要求 专业技能要求 专业要求 学历要求 经验要求 素质要求 "
            "专业素质要求 人员要求 任用资格 职位资格 岗位资格 其他要求 其它要求 其它招聘要求 我们希望你 希望你 "
            "你需要具备 我们需要你 招聘需求 工作要求 要求 资格",
            "requirements|job requirements|position requirements|minimum requirements|requirements and qualifications|"
            "qualifications|minimum qualifications|basic qualifications|required qualifications|required skills|"
            "skills and experience|skills & experience|what you'll need|what you will need|what you need|"
            "what we're looking for|what we are looking for|who you are|about you|you have|you should have|"
            "must have|must haves|must-haves|experience|skills|what you'll bring|what you will bring|what you bring|"
            "key qualifications|your background|you might be a fit if|requirements and qualifications",
        ),
        "preferred": (
            "加分项 加分 加分条件 加分技能 优先 优先条件 优先考虑 优先资格 优先录用 更好的是",
            "nice to have|nice to haves|nice-to-have|nice-to-haves|preferred qualifications|preferred skills|"
            "preferred experience|preferred requirements|preferred|bonus|bonus points|pluses|extra credit|it's a plus|good to have|even better if|"
            "ideally you have|nice if you have",
        ),
        "compensation": (
            # Pay: read for a salary when the source has no salary field (normalize.salary.salary_from_text).
            "薪资待遇 薪酬待遇 薪资范围 薪酬范围 工资待遇 薪资 薪酬 工资 月薪 年薪",
            "compensation|pay range|pay ranges|salary|salary range|salary ranges|base salary|base pay|"
            "compensation range|pay transparency|annual salary|hourly rate",
        ),
        "benefits": (
            # Not 薪资福利: in the job app's export it labels an evaluation dimension (models.DIMENSION_LABELS).
            "福利待遇 薪酬福利 薪酬与福利 职位福利 公司福利 员工福利 福利保障 其他福利 基础福利 "
            "工作福利 福利 待遇 职位诱惑 我们提供 我们能提供",
            "benefits|perks|perks and benefits|perks & benefits|benefits and perks|what we offer|"
            "compensation and benefits|compensation & benefits|why join us|why you'll love working here|benefits & perks|"
            "our benefits|what's in it for you|total rewards",
        ),
    }
    vocabulary: dict[str, str] = {}
    for key, (zh, en) in words.items():
        for word in chain(zh.split(), en.split("|")):
            vocabulary[word] = key
    # Combined headings (`岗位职责及要求`, `工作职责与任职要求`) take the key of their first part.
    for first in ("岗位职责", "工作职责", "职位职责", "职责", "岗位描述", "职位描述", "工作内容"):
        for joint in ("", "及", "与", "和", "、", "/", "&"):
            for second in ("要求", "任职要求", "任职资格", "资格", "职位要求", "岗位要求"):
                vocabulary.setdefault(first + joint + second, "responsibilities")
    return vocabulary


# Heading (folded, without brackets, colons, numbering or markdown) → canonical key.
HEADINGS: dict[str, str] = _vocabulary()
_KEYS = frozenset(HEADINGS.values())

# Short or everyday words that are headings only at a line start / after a sentence end, and
# followed by a colon, the line end, a list or a closing bracket (`有XX经验者优先` is not a heading).
_WEAK = frozenset({"职责", "要求", "资格", "优先", "加分", "福利", "待遇", "希望你", "薪资", "薪酬", "工资", "月薪", "年薪"})
# Unambiguous headings, taken at a line start or after a sentence even when text follows at once
# (`岗位职责负责LTE基带软件设计…`).
_SOLID = frozenset({"岗位职责", "工作职责", "主要职责", "职责描述", "任职要求", "任职资格", "岗位要求", "职位要求", "任职条件", "职位描述", "岗位描述"})

_OPEN = "【[〔〖「<《("
_CLOSE = "】]〕〗」>》)"
_SYMBOLS = "●•■◆▪◇○◎★☆➢➤▶►▸✓✔√‣⁃\uf06c\uf076\uf0a7\uf0b7\uf0d8\uf0fc"
_CN_NUM = "一二三四五六七八九十"
_MARKS = f"-*·–—{_SYMBOLS}"
"""A bullet's marks (``_BULLET``'s first branch): a line that begins with one loses its run of them and the spaces
after."""
_MARKS_RE = re.escape(_MARKS)
_SENT_END = set("。；;！!？?:：，,")


def _fold_table() -> dict[int, str]:
    # Same-length folding (full width → half width, case), so positions in the folded view match the text.
    table: dict[int, str] = {0x2018: "'", 0x2019: "'"}
    for cp in chain(range(0x41, 0x5B), range(0xC0, 0x250), range(0x3000, 0x3040), range(0xFE30, 0xFE70), range(0xFF00, 0xFFF0)):
        folded = fold(chr(cp))
        if len(folded) == 1 and folded != chr(cp):
            table[cp] = folded
    return table


_FOLD1 = _fold_table()


def _fold1(text: str) -> str:
    return text.translate(_FOLD1)


_DECORATION = re.compile(
    rf"^(?:[\s#*{_SYMBOLS}]|\*\*)*"
    rf"(?:(?:第?[{_CN_NUM}]{{1,3}}|\d{{1,2}})[、.](?!\d)\s*|\((?:[{_CN_NUM}]{{1,3}}|\d{{1,2}})\)\s*|[①-⑳]\s*)?"
    rf"[\s{re.escape(_OPEN)}*]*|[\s{re.escape(_CLOSE)}*:;]*$"
)


def heading_text(line: str) -> str:
    """A candidate heading without brackets, numbering, bullets, markdown, colons; folded for lookup."""
    text = fold(_DECORATION.sub("", _fold1(clean_line(line))))
    return re.sub(r"\s+", " ", text).strip()


@functools.lru_cache(maxsize=4096)  # the same headings recur in every posting of a source
def section_key(heading: str) -> str | None:
    """Canonical key for a heading line, or None when the heading is not in the vocabulary."""
    return HEADINGS.get(heading_text(heading))


_BULLET = re.compile(
    rf"^\s*(?:[{_MARKS_RE}]+|\d{{1,2}}\s*(?:[、)）]|[.．](?!\d))|[(（]\d{{1,2}}[)）]|[①-⑳⑴-⒇⒈-⒛]"
    rf"|[{_CN_NUM}]{{1,3}}、|[(（][{_CN_NUM}]{{1,3}}[)）])\s*"
)


_BULLET_START = re.compile(rf"[\s\d{_MARKS_RE}(（①-⑳⑴-⒇⒈-⒛{_CN_NUM}]")
"""The characters a match of ``_BULLET`` can begin with: a line that begins otherwise has no marker."""


def clean_bullet(line: str) -> str:
    """A bullet's text without its marker (``- ``, ``1.``, ``1、``, ``(1)``, ``①``, ``•``, ``一、``)."""
    line = clean_line(line)
    if not (line and _BULLET_START.match(line)):
        return line.strip()
    if line[0] in _MARKS:
        return line.lstrip(_MARKS).strip()
    return _BULLET.sub("", line, count=1).strip()


# --------------------------------------------------------------------------- headings in running text


_TERM_LIST = list(HEADINGS)
_TERMS = ahocorasick_rs.AhoCorasick(_TERM_LIST)  # every overlapping match: the longest per start is chosen below


def _term_starts(folded: str) -> list[tuple[int, str]]:
    """``(start, term)`` for the longest vocabulary term starting at each position; English ones as whole words."""
    longest: dict[int, str] = {}
    for index, start, end in find_matches(_TERMS, folded, overlapping=True):
        term = _TERM_LIST[index]
        if term[0].isascii() and (folded[start - 1:start].isalpha() and folded[start - 1:start].isascii()
                                  or folded[end:end + 1].isalpha() and folded[end:end + 1].isascii()):
            continue
        if len(term) > len(longest.get(start, "")):
            longest[start] = term
    return sorted(longest.items())


_PREFIX = re.compile(
    rf"(?:(?:#{{1,6}}|\*\*|[{_SYMBOLS}])[ ]*)*"
    rf"(?:(?:第?[{_CN_NUM}]{{1,3}}|\d{{1,2}})[、.][ ]*|\((?:[{_CN_NUM}]{{1,3}}|\d{{1,2}})\)[ ]*|[①-⑳][ ]*)?"
    rf"(?P<open>[{re.escape(_OPEN)}][ ]*)?(?:\*\*)?\Z"
)
_SUFFIX_CLOSED = re.compile(rf"[ ]*[{re.escape(_CLOSE)}][ ]*(?:\*\*)?[ ]*:?(?:\*\*)?[ ]*")
_SUFFIX = re.compile(r"[ ]*(?:\*\*)?[ ]*(?:(?P<colon>:)|(?P<semicolon>;))?(?:\*\*)?[ ]*")
_FIRST_ITEM = re.compile(rf"(?:1(?:\.(?!\d)|[、)]| (?=[\u4e00-\u9fff]))|\(1\)|[①⑴⒈]|一、|\(一\)|[{_SYMBOLS}]|-)")


class _Heading(NamedTuple):
    start: int
    end: int
    key: str


def _char_before(text: str, position: int, floor: int = 0) -> str:
    """The last non-space character before ``position`` (not before ``floor``), or ''."""
    while position > floor and text[position - 1].isspace():
        position -= 1
    return text[position - 1] if position > floor else ""


def _char_after(text: str, position: int) -> str:
    """The first non-space character from ``position`` on, or ''."""
    while position < len(text) and text[position].isspace():
        position += 1
    return text[position:position + 1]


def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff"


def _headings_in(folded: str) -> list[_Heading]:
    """Known headings in one folded line, with their spans (decoration and colon included)."""
    found: list[_Heading] = []
    floor = 0
    for start, term in _term_starts(folded):
        if start >= floor:
            heading = _accept_heading(start, term, folded, floor)
            if heading is not None:
                found.append(heading)
                floor = heading.end
    return found


def _accept_heading(term_start: int, term: str, folded: str, floor: int) -> _Heading | None:
    term_end = term_start + len(term)
    prefix = _PREFIX.search(folded, max(floor, term_start - 24), term_start)
    assert prefix is not None  # every part of it is optional
    start = prefix.start()
    left = _char_before(folded, start, floor)
    boundary = (
        not left
        or left in _SENT_END
        or left == "." and folded[start - 1].isspace()  # `…the API. Requirements:`
        or bool(set(prefix.group()) & set(_SYMBOLS + "#"))
    )
    opened = prefix.group("open") is not None and (boundary or not prefix.group("open").startswith("("))
    suffix = _SUFFIX_CLOSED.match(folded, term_end) if opened else None
    colon = suffix is not None
    if suffix is None:
        suffix = _SUFFIX.match(folded, term_end)
        assert suffix is not None  # every part of it is optional
        colon = suffix.group("colon") is not None or boundary and suffix.group("semicolon") is not None
    rest = folded[suffix.end():]
    listed = _FIRST_ITEM.match(rest) is not None
    if term[0].isascii() or term in _WEAK:
        ok = boundary and (colon or listed or not rest.strip())
    elif colon or listed:
        ok = True
    elif not rest.strip():
        ok = boundary or folded[start - 1:start].isspace()
    else:  # `岗位职责负责…` at a line start or after a sentence
        ok = boundary and term in _SOLID
    return _Heading(start, suffix.end(), HEADINGS[term]) if ok else None


_UNKNOWN = re.compile(
    r"^(?:#{1,6}[ ]*(?P<md>[^#]+?)[ ]*:?"
    r"|\*\*(?P<bold>[^*]+?)[ ]*:?[ ]*\*\*[ ]*:?"
    r"|[【\[](?P<bracket>[^】\]]+)[】\]][ ]*:?"
    r"|(?P<colon>[^:]+?)[ ]*:)"
)


def _unknown_heading(line: str, folded: str, in_known_section: bool) -> tuple[str, str] | None:
    """``(heading_as_written, key)`` for a heading-like line not in the vocabulary, else None."""
    match = _UNKNOWN.match(folded)
    if match is None:
        return None
    kind = match.lastgroup
    if kind != "bracket" and match.end() != len(folded):
        return None
    if kind == "colon" and in_known_section:
        return None
    start, end = match.span(kind)
    name = line[start:end].strip()
    words = name.split()
    if (
        not any(c.isalpha() for c in name)
        or re.search(r"[。；;，,!?！？]", name)
        or clean_bullet(name) != name
        or (len(words) > 6 if name.isascii() else len(name) > 12)
    ):
        return None
    return line[:match.end()].strip(), name


# --------------------------------------------------------------------------- bullets

_NUMBERED = {
    "paren": r"\((?P<paren>{n})\)",
    "cnparen": r"\((?P<cnparen>{c})\)",
    "arabic": r"(?<![\d.])(?P<arabic>{n})(?:\.(?!\d)|、)",
    "years": r"(?<![\d.])(?P<years>{n})\.(?=\d{{1,2}}\s*年)",
    "rparen": r"(?<![\d(])(?P<rparen>{n})\)",
    "spaced": r"(?<![\d.])(?P<spaced>{n}) (?=[\u4e00-\u9fff])",
    "cn": r"(?P<cn>{c})、",
}
_CIRCLED = "①-⑳⑴-⒇⒈-⒛"
_DASHES = "*·—–"  # besides - and --
_MARKERS = (
    rf"(?P<circled>[{_CIRCLED}])|(?P<symbol>[{_SYMBOLS}])|"
    + "|".join(p.format(n=r"\d{1,2}", c=f"[{_CN_NUM}]{{1,3}}") for p in _NUMBERED.values())
    + rf"|(?:^|(?<=\s))(?P<dash>-{{1,2}}|[{_DASHES}])(?=\s|[^\x00-\x7f])|(?<=[:;])(?P<dash2>-{{1,2}})(?=\s)"
    + r"|(?<=[\u4e00-\u9fff])(?P<star>\*)(?=[\u4e00-\u9fff])"
)
"""The list-marker forms, one named group each (the group names the form)."""
# Every marker starts with one of these characters: the lookahead lets the scan pass over any other
# character with one test instead of trying each alternative there.
_MARK_FIRST = rf"{_CIRCLED}{_SYMBOLS}(\d{_CN_NUM}\-{_DASHES}"
_MARK = re.compile(rf"(?=[{_MARK_FIRST}])(?:{_MARKERS})")


def _cn_numeral(value: int) -> str:
    tens, units = divmod(value, 10)
    return ("" if tens == 0 else "十" if tens == 1 else _CN_NUM[tens - 1] + "十") + (_CN_NUM[units - 1] if units else "")


_LOOKAHEAD = 2000  # how far to look for the next item of a list


@functools.lru_cache(maxsize=256)
def _item_pattern(family: str, value: int) -> re.Pattern[str]:
    """Marker ``value`` of a numbered list form: a `1.` glued to text is a marker only if a `2.` follows."""
    return re.compile(_NUMBERED[family].format(n=value, c=_cn_numeral(value)))


def _cn_value(numeral: str) -> int:
    digits = [_CN_NUM.index(c) + 1 for c in numeral]
    if len(digits) == 1:
        return digits[0]
    if digits[0] == 10:  # 十一 … 十九
        return 10 + digits[1]
    return digits[0] * 10 + (digits[2] if len(digits) > 2 else 0)


def _accept_marker(match: re.Match[str], folded: str, state: dict[str, int]) -> bool:
    """Is this candidate a list marker here? Numbered ones must follow their list's sequence."""
    family = match.lastgroup
    assert family is not None
    if family in ("circled", "symbol", "star"):
        return True
    start = match.start()
    left = _char_before(folded, start)
    after = folded[match.end():match.end() + 1]
    if family.startswith("dash"):  # not the dash of a range `7 - 10`
        return not (left.isdigit() and _char_after(folded, match.end()).isdigit())
    value = _cn_value(match.group(family)) if family.startswith("cn") else int(match.group(family))
    if family == "years":  # `；3.3年以上经验` in a list at item 2 is item 3, not 3.3 years
        last = state.get("arabic", 0)
        ok = last > 0 and value == last + 1 and left in (";", "。")
        if ok:
            state["arabic"] = value
        return ok
    last = state.get(family, 0)
    at_boundary = not left or left in _SENT_END or folded[start - 1:start].isspace()
    follows = value == last + 1 and last > 0
    # A list's first marker (`1.`, or a later number at a boundary when the text starts mid-list) counts
    # when the next number of the same form follows.
    first = (
        last == 0 and (value == 1 or at_boundary) and value < 20
        and _item_pattern(family, value + 1).search(folded, match.end(), match.end() + _LOOKAHEAD) is not None
    )
    if family in ("paren", "cnparen"):
        ok = value == 1 or follows
    elif family in ("cn", "spaced"):
        ok = (at_boundary or family == "spaced") and (follows or first)
    elif not left and not (match.group().endswith("、") and after.isdigit()):
        ok = True  # a line starting with a number: `5、有pcie2、pcie3的FPGA经验`
    elif at_boundary:
        ok = value == 1 or first or last > 0 and last <= value <= last + 2
    elif family == "arabic" and match.group().endswith("、") and after.isdigit():
        ok = False  # `有2、3年经验`
    elif _is_cjk(left) or not left.isalnum() and left not in "-/_.+#":
        ok = follows or first
    else:  # glued to a word: `PCA5.有opencv`, `COMSOL4. Practical` yes, `pcie2、pcie3` no
        ok = (follows or first) and (_is_cjk(after) or after == " ")
    if ok:
        state[family] = value
    return ok


_SEPARATOR = re.compile(r"[；;]")


def _tidy(piece: str) -> str | None:
    visible = drop_format(piece)  # format characters at a cut (`熟悉CUDA \u200b- 熟悉Triton`) go with it
    if visible is not piece:
        where = FormatMap(piece)
        body = visible.strip()
        begin = visible.index(body[0]) if body else 0
        piece = piece[where.start(begin):where.end(begin + len(body))]
    piece = piece.strip().lstrip(":：；;，,、 ").rstrip("；;，,、 ")
    return piece if any(c.isalnum() for c in piece) else None


def split_bullets(text: str) -> list[str]:
    """Bullets of one section's text: list markers cut items and are dropped; unmarked text splits at ``；``.

    Markers: ``1.`` ``1、`` ``1)`` ``(1)`` ``（1）`` ``①`` ``⑴`` ``一、`` ``（一）`` ``•`` ``●`` ``-`` ``·`` ``*``.
    Numbered markers must follow their list's sequence (restart at 1 after a sentence end), so
    ``2.5K``, ``Python 3.10``, ``C++``, ``有2、3年经验`` stay whole. Each line break ends an item.
    """
    bullets: list[str] = []
    state: dict[str, int] = {}
    for line in clean_lines(text):
        if not line:
            continue
        # Markers are found in the line without its format characters (`\u00ad·`), then cut from the line.
        where = FormatMap(line)
        folded = _fold1(where.visible)
        cuts = [(0, 0, False)]
        last_end = 0
        for match in _MARK.finditer(folded):
            if match.start() >= last_end and _accept_marker(match, folded, state):
                cuts.append((where.start(match.start()), where.end(match.end()), True))
                last_end = match.end()
        cuts.append((len(line), len(line), False))
        for (_, begin, marked), (end, _, _) in zip(cuts, cuts[1:]):
            piece = line[begin:end]
            for part in [piece] if marked else _SEPARATOR.split(piece):
                tidy = _tidy(part)
                if tidy:
                    bullets.append(tidy)
    return bullets


# --------------------------------------------------------------------------- sections


def split_sections(text: str) -> list[tuple[str, str, list[str]]]:
    """Split free JD text into ``(key, heading_as_written, bullets)`` in order.

    ``key`` is a canonical key for a known heading, or the heading's own text for a heading-like
    line that is not in the vocabulary (``【工作地点】``, ``## Team``, ``其他信息：`` outside a known
    section). Text before the first heading is ``("about", "", bullets)``. Headings are found at
    line starts and inline (``岗位职责：1.负责…；2.负责… 任职要求：1.本科…``). Every letter of the
    input is kept in a heading or a bullet.
    """
    sections: list[tuple[str, str, list[str]]] = []
    key, heading, body = "about", "", []

    def close() -> None:
        if heading or any(drop_format(part).strip() for part in body):
            sections.append((key, heading, split_bullets("\n".join(body))))

    for line in clean_lines(text):
        if not line:
            continue
        # Headings are found in the line without its format characters (任职\u200b要求), then cut from the line.
        where = FormatMap(line)
        folded = _fold1(where.visible)
        found = [_Heading(where.start(h.start), where.end(h.end), h.key) for h in _headings_in(folded)]
        position = 0
        if not found or found[0].start > 0:
            unknown = _unknown_heading(where.visible, folded, key in _KEYS and key != "about")
            if unknown and (not found or where.end(len(unknown[0])) <= found[0].start):
                close()
                position = where.end(len(unknown[0]))
                heading, key, body = line[:position].strip(), unknown[1], []
        for start, end, found_key in found:
            if line[position:start].strip():
                body.append(line[position:start])
            close()
            key, heading, body = found_key, line[start:end].strip(), []
            position = end
        if line[position:].strip():
            body.append(line[position:])
    close()
    return sections


def sections_dict(text: str) -> dict[str, list[str]]:
    """:func:`split_sections` as ``{key: bullets}``, repeated keys merged in order of appearance."""
    merged: dict[str, list[str]] = {}
    for key, _, bullets in split_sections(text):
        merged.setdefault(key, []).extend(bullets)
    return merged


def spans_of(description: str | None, bullets: list[str]) -> list[tuple[int, int]] | None:
    """``(start, length)`` in characters of each bullet found verbatim in ``description``, in order, each after
    the previous one (the leftmost place left); None when a bullet is not found, there are no bullets or no
    description, or the description holds a NUL character (SQLite's ``substr`` stops at one)."""
    if not description or not bullets or "\x00" in description:
        return None
    spans, position = [], 0
    for bullet in bullets:
        start = description.find(bullet, position)
        if start < 0:
            return None
        spans.append((start, len(bullet)))
        position = start + len(bullet)
    return spans
