"""What postings are matched on, normalized: the canonical URL, company, title and city names and when two
names agree, and the JD lines (bullets folded, markers, spaces and punctuation removed)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from w3lib.url import canonicalize_url

from ..sections import clean_bullet
from ..text import fold

# --------------------------------------------------------------------------- URLs

TRACKING_PARAMS: dict[str, str] = {
    # name (lower-case) → why it never identifies a posting
    "ka": "BOSS直聘 click-position tag (`ka=search_list_jname_1_blank`)",
    "lid": "BOSS直聘 list/session id appended to every job link",
    "securityid": "BOSS直聘 per-session security token",
    "sessionid": "per-session id (BOSS直聘 and others)",
    "spm": "Alibaba-family page-position tracking (`spm=a.b.c.d`)",
    "from": "share/referrer tag (`from=singlemessage`, `from=search`) on job detail pages",
    "source": "referrer tag (`source=linkedin`); ATS job ids use other names (`gh_jid`, `id`)",
    "ref": "referrer tag",
    "refcode": "智联招聘 referrer code on job detail links",
    "srccode": "智联招聘 source code on job detail links",
    "gh_src": "Greenhouse applicant-source tag (the job id is `gh_jid`, which is kept)",
    "lever-origin": "Lever attribution (`applied`, `referred`)",
    "lever-source": "Lever attribution source",
    "lever-via": "Lever attribution token",
    "fbclid": "Facebook click id",
    "gclid": "Google Ads click id",
    "msclkid": "Microsoft Ads click id",
    "yclid": "Yandex click id",
    "trk": "LinkedIn tracking tag",
    "trackingid": "LinkedIn tracking id",
    "refid": "LinkedIn referrer id",
    "mc_cid": "Mailchimp campaign id",
    "mc_eid": "Mailchimp recipient id",
    "_hsenc": "HubSpot e-mail tracking",
    "_hsmi": "HubSpot e-mail tracking",
}
"""Query parameters dropped from every URL, with the reason; any ``utm_*`` parameter is dropped too."""

HOST_TRACKING_PARAMS: dict[str, frozenset[str]] = {
    # 51job detail links carry `?s=sou_sou_soulb&t=0_0` (search-list position); single letters are only
    # dropped on this host, where they never identify a job.
    "51job.com": frozenset({"s", "t"}),
}
"""Extra tracking parameters dropped only on a host (or its subdomains)."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


def _is_tracking(name: str, host: str) -> bool:
    name = unquote_plus(name).lower()
    if name.startswith("utm_") or name in TRACKING_PARAMS:
        return True
    return any(
        (host == domain or host.endswith("." + domain)) and name in names
        for domain, names in HOST_TRACKING_PARAMS.items()
    )


_OTHER_URI = re.compile(r"[a-z][a-z0-9+.-]*:(?!\d)", re.IGNORECASE)
"""A scheme without ``//`` and not followed by a port number: ``mailto:hr@…``, not ``example.com:8080/jobs``."""


@lru_cache(maxsize=1 << 13)  # a posting's URL is read by its reader, its key and its dedupe key: canonicalized once
def canonical_url(url: str) -> str:
    """The URL reduced to what identifies the page, for level (a) matching.

    Scheme and host lower-cased, ``http`` folded into ``https`` (job sites serve the same page on both),
    default port dropped, fragment dropped, tracking parameters (:data:`TRACKING_PARAMS`, ``utm_*``,
    :data:`HOST_TRACKING_PARAMS`) dropped, remaining query parameters sorted, percent-encoding normalized
    (w3lib ``canonicalize_url``), trailing slash of the path removed. A string without a scheme is read as
    ``https://``. What identifies no web page gives ``""``: an empty string, another kind of URI (``mailto:``,
    ``javascript:``, ``tel:``) and a URL that cannot be read (a port that is not a number, a broken IPv6 host).
    """
    url = url.strip()
    if not url:
        return ""
    if "://" not in url:
        if _OTHER_URI.match(url):
            return ""
        url = "https://" + url.lstrip("/")
    try:
        parts = urlsplit(canonicalize_url(url))
        port = parts.port
    except ValueError:
        return ""
    scheme = "https" if parts.scheme == "http" else parts.scheme
    host = (parts.hostname or "").lower()
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if port is not None and port in (_DEFAULT_PORTS.get(parts.scheme), _DEFAULT_PORTS.get(scheme)):
        netloc = netloc.rsplit(":", 1)[0]
    query = "&".join(kv for kv in parts.query.split("&") if kv and not _is_tracking(kv.partition("=")[0], host))
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, netloc, path, query, ""))


# --------------------------------------------------------------------------- names

_CITIES = (
    "北京 上海 天津 重庆 广州 深圳 杭州 南京 苏州 成都 武汉 西安 长沙 郑州 合肥 济南 青岛 厦门 福州 宁波 无锡 "
    "东莞 佛山 珠海 大连 沈阳 哈尔滨 长春 石家庄 太原 昆明 贵阳 南宁 南昌 海口 兰州 乌鲁木齐 呼和浩特 银川 "
    "西宁 拉萨 常州 温州 嘉兴 绍兴 南通 徐州 烟台 惠州 中山 "
    "浙江 江苏 广东 山东 河南 河北 湖北 湖南 四川 福建 安徽 江西 陕西 山西 辽宁 吉林 黑龙江 云南 贵州 广西 "
    "海南 甘肃 内蒙古 新疆 宁夏 青海 西藏 香港 澳门 台湾 中国"
).split()
_CITY_ALT = "|".join(sorted(_CITIES, key=len, reverse=True))

# Legal forms and generic words at the end of a company name, longest first; applied repeatedly.
_COMPANY_SUFFIXES = (
    "股份有限公司", "有限责任公司", "有限公司", "分公司", "公司", "集团", "控股", "科技", "技术", "网络",
    "信息", "软件", "co.,ltd.", "co.,ltd", "co.ltd", "corporation", "incorporated", "limited", "company",
    "corp.", "corp", "inc.", "inc", "ltd.", "ltd", "llc", "gmbh", "plc", "co.", "co",
)
_COMPANY_SUFFIX_RE = re.compile(
    r"(?:" + "|".join(re.escape(s) for s in _COMPANY_SUFFIXES) + r")$"
)
_COMPANY_PREFIX_RE = re.compile(rf"^(?:{_CITY_ALT})(?:省|市)?")
_BRACKETED = re.compile(r"[(（【\[<《〔][^)）】\]>》〕]*[)）】\]>》〕]")
_NOT_WORD = re.compile(r"[^\w+#]|_")
_TITLE_SUFFIX_RE = re.compile(
    rf"(?:[-_—–|/·:：\s]+(?:{_CITY_ALT})(?:市)?|[-_—–|/·:：\s]*(?:急招|急聘|高薪|双休|诚聘|直招))+$"
)


def _squash(text: str) -> str:
    """Folded text with spaces, punctuation and underscores removed (``+`` and ``#`` kept: C++, C#)."""
    return _NOT_WORD.sub("", fold(text))


@lru_cache(maxsize=65536)
def normalize_company(name: str | None) -> str:
    """Company name for matching: folded, bracketed parts (``（中国）``) and a leading city or province
    removed, legal forms and generic words at the end removed (有限公司, 股份有限公司, 集团, 科技, 技术,
    Inc., Ltd., Co., …), spaces and punctuation removed. Never strips a name to fewer than 2 characters:
    ``北京字节跳动科技有限公司`` → ``字节跳动``; ``Acme Robotics, Inc.`` → ``acmerobotics``.
    """
    if not name:
        return ""
    text = _BRACKETED.sub("", fold(name))
    text = re.sub(r"[\s,，、'’]+", "", text)
    while True:
        stripped = _COMPANY_SUFFIX_RE.sub("", text).rstrip(".")
        if stripped == text or len(_squash(stripped)) < 2:
            break
        text = stripped
    unprefixed = _COMPANY_PREFIX_RE.sub("", text)
    if len(_squash(unprefixed)) >= 2:
        text = unprefixed
    return _squash(text)


@lru_cache(maxsize=65536)
def normalize_title(title: str | None) -> str:
    """Job title for matching: folded, bracketed parts removed (``（急招）``, ``(J1234)``, ``【北京】``),
    a trailing city or urgency word after a separator removed (``-北京``, `` 急招``), spaces and punctuation
    removed (``+`` and ``#`` kept). ``AI算子开发工程师（急招）-北京`` → ``ai算子开发工程师``.
    """
    if not title:
        return ""
    text = _BRACKETED.sub(" ", fold(title)).strip()
    stripped = _TITLE_SUFFIX_RE.sub("", text)
    return _squash(stripped if _squash(stripped) else text)


@lru_cache(maxsize=65536)
def normalize_city(city: str | None) -> str:
    """City for matching: folded, cut at a district separator (``北京·海淀区`` → ``北京``), trailing 市 removed."""
    if not city:
        return ""
    head = re.split(r"[·\-/,，、\s]+", fold(city).strip(), maxsplit=1)[0]
    if len(head) > 2 and head.endswith("市"):
        head = head[:-1]
    return _squash(head)


def names_agree(a: str, b: str) -> bool:
    """Normalized company names or titles agree: equal, one contains the other (``吉利`` / ``吉利汽车``,
    ``java开发工程师`` / ``高级java开发工程师``), or one unknown. Titles that differ inside
    (``前端开发工程师`` / ``后端开发工程师``) disagree."""
    if not a or not b:
        return True  # unknown never disagrees
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 2 and short in long


def count_companies(names) -> int:
    """Companies among normalized names as :func:`names_agree` sees them: a name contained in another
    (``天力物业`` in ``天力物业发展``) is not a company of its own. Blank names are not counted."""
    distinct = sorted({n for n in names if n}, key=len, reverse=True)
    kept: list[str] = []
    for name in distinct:
        if not (len(name) >= 2 and any(name in longer for longer in kept)):
            kept.append(name)
    return len(kept)


# --------------------------------------------------------------------------- JD lines

_NOT_WORD_OR_NEWLINE = re.compile(r"[^\w+#\n]|_")


def _bullet_lines(lines: Iterable[str]) -> list[str]:
    """Each line (bullets may hold several) without its bullet marker, folded, spaces and punctuation removed;
    empty ones dropped. One ``fold`` and one regex pass over the joined text: this runs for every posting."""
    cleaned = [clean_bullet(part) for line in lines if line for part in line.splitlines()]
    squashed = _NOT_WORD_OR_NEWLINE.sub("", fold("\n".join(cleaned)))
    return [line for line in squashed.split("\n") if line]


@lru_cache(maxsize=1 << 14)
def _bullet(line: str) -> tuple[str, ...]:
    """:func:`_bullet_lines` of one bullet, cached: bullets recur across postings (reposts, company templates).
    ``fold`` never acts across a line break, so bullet by bullet gives the lines of the whole list."""
    return tuple(_bullet_lines([line]))


def _content_lines(requirements: Sequence[str], responsibilities: Sequence[str], text: str | None) -> list[str]:
    lines = [part for line in (*requirements, *responsibilities) if line for part in _bullet(line)]
    return lines or _bullet_lines([text or ""])
