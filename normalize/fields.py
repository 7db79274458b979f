"""Run-together listing fields of Chinese job boards and CSV exports, split into their parts.

- :func:`parse_experience_education`: ``1-3年本科``, ``经验不限学历不限``, ``4天/周6个月本科``, ``3-4年经验``.
- :func:`parse_company_info`: ``互联网A轮1000-9999人``, ``计算机软件不需要融资20-99人``, ``少于15人``.
- :func:`parse_location`: ``北京·海淀区·中关村``, ``深圳-南山区``, ``北京市朝阳区``, ``Remote - US``, ``San Francisco, CA``.

Each returns a dict with every key present (None when the part is absent); the experience and location
parsers add ``unparsed``: the text no rule recognised, so callers can count it instead of losing it.
"""

from __future__ import annotations

import functools
import re

import pycountry

from .counts import MAX_COUNT
from .text import clean_line, fold

__all__ = ["parse_experience_education", "parse_company_info", "parse_location", "EDUCATION_LEVELS", "FUNDING_STAGES"]

_NUM = r"\d{1,2}"
_TO = r"\s*[-~～至到]\s*"

# --------------------------------------------------------------------------- experience and education

EDUCATION_LEVELS = ("初中及以下", "高中", "中专/中技", "中专", "中技", "大专", "本科", "硕士", "博士")
"""Education levels as the boards write them, lowest first; ``不限`` means no requirement."""

_EDUCATION_ALIASES = {"研究生": "硕士", "专科": "大专", "学士": "本科", "mba": "硕士", "初中": "初中及以下"}
_EDUCATION = re.compile(
    r"(?:学历)?(?P<level>不限|初中及以下|中专/中技|"
    + "|".join(sorted(set(EDUCATION_LEVELS) | set(_EDUCATION_ALIASES), key=len, reverse=True))
    + r")(?:及以上|以上)?(?:学历)?",
    re.I,
)
_EXPERIENCE = re.compile(
    rf"(?:经验|工作经验)?\s*(?:"
    rf"(?P<lo>{_NUM}){_TO}(?P<hi>{_NUM})\s*年"
    rf"|(?P<atleast>{_NUM})\s*年(?:及?以上|\+)"
    rf"|(?P<under>{_NUM})\s*年(?:以内|以下)"
    rf"|(?P<exact>{_NUM})\s*年"
    rf"|(?P<fresh>在校/应届|应届毕业生|应届生|应届|在校生|在校|无工作经验|无经验)"
    rf"|(?P<any>经验不限|不限)"
    rf")(?:工作)?(?:经验)?"
)
_ENGLISH_YEARS = re.compile(rf"(?P<lo>{_NUM})(?:{_TO}(?P<hi>{_NUM})|\s*(?P<plus>\+))?\s*(?:years?|yrs?)(?:\s+of\s+experience)?", re.I)
_INTERNSHIP = re.compile(rf"(?P<days>\d)\s*天\s*/\s*周\s*(?P<months>{_NUM})\s*个?月")
_GLUE = re.compile(r"[\s/|｜·,，、]+")


def _years(match: re.Match[str]) -> tuple[int | None, int | None]:
    group = match.groupdict()
    if group.get("lo"):
        return int(group["lo"]), int(group["hi"]) if group.get("hi") else None
    if group.get("atleast"):
        return int(group["atleast"]), None
    if group.get("under"):
        return 0, int(group["under"])
    if group.get("exact"):
        return int(group["exact"]), int(group["exact"])
    if group.get("fresh"):
        return 0, 0
    return None, None  # 不限: no requirement


def parse_experience_education(text: str | None) -> dict:
    """Split experience, education and internship terms run together (``1-3年本科``, ``4天/周6个月本科``).

    Keys: ``experience`` (the experience part as written: ``1-3年``, ``经验不限``, ``在校/应届``),
    ``experience_min_years`` / ``experience_max_years`` (``N年以上`` → (N, None); ``1年以内`` → (0, 1);
    ``应届``/``无工作经验`` → (0, 0); ``不限`` → (None, None)), ``education`` (a level of
    :data:`EDUCATION_LEVELS` or ``不限``; ``本科及以上`` → ``本科``), ``days_per_week``, ``months``,
    ``unparsed``. A bare ``不限`` is the experience when it comes first (``不限大专``), else the education.
    """
    result: dict = dict.fromkeys(
        ("experience", "experience_min_years", "experience_max_years", "education", "days_per_week", "months", "unparsed")
    )
    rest = clean_line(text or "")
    leftover: list[str] = []
    while rest:
        glue = _GLUE.match(rest)
        if glue:
            rest = rest[glue.end():]
            continue
        if result["days_per_week"] is None and (match := _INTERNSHIP.match(rest)):
            result["days_per_week"], result["months"] = int(match["days"]), int(match["months"])
        elif result["experience"] is None and (match := _EXPERIENCE.match(rest) or _ENGLISH_YEARS.match(rest)):
            result["experience"] = match.group().strip()
            result["experience_min_years"], result["experience_max_years"] = _years(match)
        elif result["education"] is None and (match := _EDUCATION.match(rest)):
            level = match["level"].lower()
            result["education"] = _EDUCATION_ALIASES.get(level, match["level"])
        else:
            leftover.append(rest[0])
            rest = rest[1:]
            continue
        rest = rest[match.end():]
    result["unparsed"] = "".join(leftover).strip() or None
    return result


# --------------------------------------------------------------------------- company

FUNDING_STAGES = (
    "未融资", "种子轮", "天使轮", "Pre-A轮", "A轮", "A+轮", "Pre-B轮", "B轮", "B+轮", "C轮", "C+轮", "D轮", "D轮及以上",
    "E轮", "F轮", "战略投资", "战略融资", "新三板", "已上市", "上市公司", "不需要融资",
)
"""Funding stages as the boards write them (BOSS直聘: ``已上市``; 拉勾: ``上市公司``)."""

_FUNDING = re.compile(
    r"(?P<funding>" + "|".join(re.escape(s) for s in sorted(FUNDING_STAGES, key=len, reverse=True)) + r")(?:融资)?\s*$",
    re.I,
)
_COUNT = r"\d[\d,]*"
_SIZE = re.compile(
    rf"(?P<size>(?:(?P<fewer>少于|小于|不足|<)\s*(?P<cap>{_COUNT})|(?P<lo>{_COUNT})(?:{_TO}(?P<hi>{_COUNT}))?)"
    rf"\s*(?P<plus>\+)?\s*(?:人|名员工|employees)(?P<tail>以上|以下)?)\s*$",
    re.I,
)


def _count(value: str | None) -> int | None:
    """A head count as written; None when absent or beyond :data:`normalize.counts.MAX_COUNT`."""
    count = int(value.replace(",", "")) if value else None
    return count if count is not None and count <= MAX_COUNT else None


def parse_company_info(text: str | None) -> dict:
    """Split ``industry + funding stage + size`` written together (``互联网A轮1000-9999人``).

    Keys: ``industry`` (as written, may be ``移动互联网,金融``), ``funding_stage`` (one of
    :data:`FUNDING_STAGES`), ``size_min`` / ``size_max`` (``10000人以上`` → (10000, None);
    ``少于15人`` → (None, 15)), ``size_raw`` (``1000-9999人``). What is left before the funding stage
    and the size is the industry. Each part is optional.
    """
    result: dict = dict.fromkeys(("industry", "funding_stage", "size_min", "size_max", "size_raw"))
    rest = clean_line(text or "")
    if match := _SIZE.search(rest):
        result["size_raw"] = match["size"]
        if match["fewer"]:
            result["size_max"] = _count(match["cap"])
        elif match["hi"]:
            result["size_min"], result["size_max"] = _count(match["lo"]), _count(match["hi"])
        elif match["tail"] == "以下":
            result["size_max"] = _count(match["lo"])
        else:
            result["size_min"] = _count(match["lo"])
            result["size_max"] = None if match["plus"] or match["tail"] else result["size_min"]
        rest = rest[:match.start()]
    if match := _FUNDING.search(rest):
        stage = match["funding"]
        result["funding_stage"] = next(s for s in FUNDING_STAGES if s.lower() == stage.lower())
        rest = rest[:match.start()]
    result["industry"] = rest.strip(" ·|,，/-") or None
    return result


# --------------------------------------------------------------------------- location

_REMOTE = re.compile(r"\b(?:remote|anywhere|work from home|wfh)\b|远程|居家办公|在家办公", re.I)
_ONSITE = re.compile(r"\b(?:on-?site|in-office|in office)\b|仅现场办公|现场办公|坐班", re.I)
_HYBRID = re.compile(r"\bhybrid\b|混合办公", re.I)
_ZH_SEP = re.compile(r"\s*[·\-—–|/、,，\s]\s*")
_EN_SEP = re.compile(r"\s*(?:[,;|/]|\s[-–—]\s|\(|\))\s*")
# `北京市朝阳区` / `广东省深圳市南山区`: province and city suffixes cut a run-together name.
_ZH_RUN = re.compile(r"^(?P<province>.{2,3}?(?:省|自治区))?(?P<city>.{2,4}?市)?(?P<district>.+?(?:区|县|旗|市))?(?P<area>.*)$")
_NOT_A_PLACE = {"异地招聘", "全国", "多地", "不限", "其他"}
_PLACE_COUNT = re.compile(r"(?:\d+|multiple|several|various)\s+locations?", re.I)
"""A location that counts places and names none (Workday's ``2 Locations``)."""
_COUNTRY_ALIASES = {"uk": "GB", "england": "GB", "usa": "US", "u.s.": "US", "u.s.a.": "US", "russia": "RU", "korea": "KR", "中国": "CN"}
_REGIONS = {"europe", "emea", "apac", "latam", "americas", "north america", "south america", "asia", "worldwide", "global"}


@functools.lru_cache(maxsize=4096)
def _country(part: str) -> str | None:
    """ISO 3166 alpha-2 code for a country name or code, else None."""
    key = part.strip().lower()
    if key in _COUNTRY_ALIASES:
        return _COUNTRY_ALIASES[key]
    if len(key) < 2:
        return None
    try:
        return pycountry.countries.lookup(key).alpha_2
    except LookupError:
        return None


def _is_cjk(text: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in text)


def parse_location(text: str | None) -> dict:
    """Split a location as boards write it into city, district and area, and say whether it is remote.

    Chinese: ``北京·海淀区·中关村``, ``深圳-南山区``, ``上海 浦东新区``, ``北京市朝阳区`` (``市`` dropped from
    the city). English: ``San Francisco, CA`` (region ``CA``), ``Seoul, South Korea`` (country ``KR``),
    ``Remote - US``. A count of places (``2 Locations``, ``Multiple Locations``) names no city. Keys: ``city``, ``district``, ``area``, ``region`` (state or province as written),
    ``country`` (ISO alpha-2 when named), ``remote`` (True for remote, False for on-site, None when
    not stated; hybrid counts as not remote), ``unparsed``.
    """
    result: dict = dict.fromkeys(("city", "district", "area", "region", "country", "remote", "unparsed"))
    value = clean_line(text or "")
    if not value:
        return result
    if _HYBRID.search(value) or _ONSITE.search(value):
        result["remote"] = False
    elif _REMOTE.search(value):
        result["remote"] = True
    value = _HYBRID.sub(" ", _ONSITE.sub(" ", _REMOTE.sub(" ", value)))
    if _PLACE_COUNT.fullmatch(value.strip(" ,;-")):
        result["unparsed"] = value.strip(" ,;-")
    elif _is_cjk(value):
        _chinese_location(value, result)
    else:
        _english_location(value, result)
    return result


def _chinese_location(value: str, result: dict) -> None:
    parts = [p for p in _ZH_SEP.split(value.strip(" ·-|/,，")) if p]
    while parts and _country(parts[-1]):
        result["country"] = _country(parts.pop())
    if len(parts) == 1 and parts[0] in _NOT_A_PLACE:
        result["unparsed"] = parts.pop()
    if len(parts) == 1:
        match = _ZH_RUN.match(parts[0])
        assert match is not None  # every part of it is optional
        if match["province"] or match["city"]:
            result["region"] = match["province"]
            parts = [p for p in (match["city"], match["district"], match["area"]) if p]
    if parts:
        city = parts[0]
        result["city"] = city[:-1] if city.endswith("市") and len(city) > 2 else city
        result["district"] = parts[1] if len(parts) > 1 else None
        result["area"] = "·".join(parts[2:]) or None


def _english_location(value: str, result: dict) -> None:
    parts = [p for p in _EN_SEP.split(value.strip(" ,;-–—|/()")) if p]
    named: list[str] = []
    for part in parts:
        key = fold(part)
        code = _COUNTRY_ALIASES.get(key) or (None if len(part) == 2 and part.isupper() and named else _country(key))
        if code and result["country"] is None:
            result["country"] = code
        elif key in _REGIONS and result["region"] is None:
            result["region"] = part
        else:
            named.append(part)
    if named:
        result["city"] = named.pop(0)
    if named and result["region"] is None:
        result["region"] = named.pop(0)
    if named:
        result["unparsed"] = ", ".join(named)
