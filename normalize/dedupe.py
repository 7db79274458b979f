"""Duplicate postings: the same posting seen again, reposted, or copied to another site, kept as clusters.

:func:`posting_signature` gives a posting's :class:`DedupeKey` (no corpus needed); :class:`Clusterer` clusters
keys incrementally (:meth:`Clusterer.add_keys`; :meth:`Clusterer.from_stored` rebuilds from stored keys, no raw
text). A member joins a cluster for a reason stored as a word: ``same_url`` (:func:`canonical_url`),
``same_content`` (:func:`fingerprint`), ``near_duplicate`` (MinHash/LSH over 5-shingles of the JD lines,
boilerplate (:class:`CommonShingles`) left out, titles agreeing, estimated Jaccard ≥ :data:`THRESHOLD`),
``cross_company_copy`` (the same under another company, ≥ :data:`CROSS_COMPANY_THRESHOLD`) or
``same_identity`` (:func:`identity`, when one of the two has no JD text). Only JD text counts as content
(requirement, responsibility and preferred bullets; at least :data:`MIN_JD_CHARS`); a posting without
company matches by URL only. No chaining: a candidate joins only through the cluster's canonical member or a
majority of its members with JD text; clusters are never merged. Each member records its similarity and the
member it matched.
"""

from __future__ import annotations

import hashlib
import re
import struct
import sys
from functools import lru_cache
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import numpy as np
from w3lib.url import canonicalize_url

from .sections import clean_bullet
from .text import drop_format, fold

__all__ = [
    "TRACKING_PARAMS",
    "HOST_TRACKING_PARAMS",
    "SHINGLE_K",
    "NUM_PERM",
    "SEED",
    "BANDS",
    "ROWS",
    "THRESHOLD",
    "CROSS_COMPANY_THRESHOLD",
    "MIN_JD_CHARS",
    "SIGNATURE_VERSION",
    "REASONS",
    "canonical_url",
    "same_record",
    "normalize_company",
    "normalize_title",
    "normalize_city",
    "companies_agree",
    "titles_agree",
    "fingerprint",
    "identity",
    "salary_identity",
    "jd_text",
    "shingles",
    "shingle_hashes",
    "signature",
    "signature_to_bytes",
    "signature_from_bytes",
    "jaccard",
    "completeness",
    "choose_canonical",
    "canonical_rank",
    "Record",
    "record_from_posting",
    "DedupeKey",
    "posting_signature",
    "posting_signatures",
    "keys_of",
    "CommonShingles",
    "common_shingles",
    "Assignment",
    "Clusterer",
]

# --------------------------------------------------------------------------- (a) URLs

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


def _field(record: Any, name: str, default: Any = None) -> Any:
    kind = type(record)
    if kind is not dict and (kind is Record or not isinstance(record, Mapping)):  # the ABC check last: it is slow
        return getattr(record, name, default)
    return record.get(name, default)


def same_record(a: Any, b: Any) -> bool:
    """Level (a): the same source record — equal ``(source, source_id)``, or equal non-empty canonical URLs.

    ``a`` and ``b`` are dicts or objects with optional ``source``, ``source_id`` and ``url``.
    """
    sa, ia = _field(a, "source"), _field(a, "source_id")
    if sa and ia and (sa, ia) == (_field(b, "source"), _field(b, "source_id")):
        return True
    ua, ub = _field(a, "url"), _field(b, "url")
    if not (ua and ub):
        return False
    ca = canonical_url(ua)
    return bool(ca) and ca == canonical_url(ub)


# --------------------------------------------------------------------------- (b) fingerprints

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


def _agree(a: str, b: str) -> bool:
    if not a or not b:
        return True  # unknown never disagrees
    if a == b:
        return True
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 2 and short in long


def companies_agree(a: str, b: str) -> bool:
    """Normalized company names agree: equal, one contains the other (``吉利`` / ``吉利汽车``), or one unknown."""
    return _agree(a, b)


def count_companies(names) -> int:
    """Companies among normalized names as :func:`companies_agree` sees them: a name contained in another
    (``天力物业`` in ``天力物业发展``) is not a company of its own. Blank names are not counted."""
    distinct = sorted({n for n in names if n}, key=len, reverse=True)
    kept: list[str] = []
    for name in distinct:
        if not (len(name) >= 2 and any(name in longer for longer in kept)):
            kept.append(name)
    return len(kept)


def titles_agree(a: str, b: str) -> bool:
    """Normalized titles agree: equal, one contains the other (``java开发工程师`` / ``高级java开发工程师``),
    or one unknown. Titles that differ inside (``前端开发工程师`` / ``后端开发工程师``) disagree.
    """
    return _agree(a, b)


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


def _fingerprint_of(company: str, title: str, city: str, lines: list[str]) -> str:
    if not lines:
        return ""
    parts = [company, title, city, *sorted(set(lines))]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def fingerprint(
    company: str | None,
    title: str | None,
    city: str | None,
    requirements: Sequence[str] = (),
    responsibilities: Sequence[str] = (),
    text: str | None = None,
) -> str:
    """Level (b) exact content fingerprint (32 hex characters), or ``""`` when there is no JD content.

    Over the normalized company, title and city and the set of requirement + responsibility bullets, each
    folded with its marker, spaces and punctuation removed, then sorted: reordered bullets, a bullet moved
    between the two sections (sources cut headings differently) and width/punctuation variants give the
    same fingerprint. Without bullets, the lines of ``text`` are used the same way.
    """
    lines = _content_lines(requirements, responsibilities, text)
    return _fingerprint_of(normalize_company(company), normalize_title(title), normalize_city(city), lines)


def salary_identity(salary: Any) -> str:
    """The salary as an identity part: ``CNY 15000-25000 x13`` from the monthly figures (a dict or object with
    ``monthly_min``, ``monthly_max``, ``currency``, ``months``), else the folded text as written (``面议``),
    else ``""``."""
    if not salary:
        return ""
    low, high = _field(salary, "monthly_min"), _field(salary, "monthly_max")
    if low is not None or high is not None:
        low, high = (low if low is not None else high), (high if high is not None else low)
        return f"{_field(salary, 'currency') or ''} {low:g}-{high:g} x{_field(salary, 'months') or 12}"
    return _squash(_field(salary, "raw") or "")


def identity(company: str | None, title: str | None, city: str | None, salary: str | None) -> str:
    """``same_identity`` key (32 hex characters): normalized company, title and city and the salary identity
    (:func:`salary_identity`); ``""`` without company or title. A missing city or salary is part of it."""
    company, title = normalize_company(company), normalize_title(title)
    if not company or not title:
        return ""
    parts = [company, title, normalize_city(city), salary or ""]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


# --------------------------------------------------------------------------- (c) MinHash signatures

SHINGLE_K = 5
"""Characters per shingle."""

NUM_PERM = 128
"""MinHash permutations (datasketch ``affine32`` scheme): estimate standard error ≤ 0.045."""

SEED = 1
"""datasketch permutation seed. Changing it, :data:`SHINGLE_K` or the folding invalidates stored signatures."""

BANDS, ROWS = 42, 3
"""LSH banding: 42 bands of 3 rows (126 of the 128 values). A pair becomes a candidate with probability
1 − (1 − J³)⁴² (0.996 at :data:`THRESHOLD`); candidates are verified on the full signature."""

THRESHOLD = 0.5
"""Minimum estimated Jaccard of the JD shingles, boilerplate left out, for a ``near_duplicate`` (titles must
agree too: a shared company template can come close to it)."""
CROSS_COMPANY_THRESHOLD = 0.8
"""Minimum for a ``cross_company_copy`` (companies disagree): the JD texts must be near-identical, so a
cluster spans several companies only for a copied JD, never for two jobs that share a template."""
MIN_INFORMATIVE = 24
"""Signature values (of 128) whose shingle is not boilerplate that a comparison needs. With fewer, the two JDs
are mostly boilerplate: similar only when the whole texts are :data:`NEAR_IDENTICAL`."""
NEAR_IDENTICAL = 0.9
"""Estimated Jaccard of the whole JD texts, boilerplate included, at which two mostly-boilerplate JDs are the same."""
MAJORITY_CAP = 64
"""Members with JD text checked for the majority rule at most; a larger cluster is joined through its
canonical member only."""
BUCKET_CAP = 64
"""Rows an LSH bucket contributes to one query at most (its most recent): bounds the work per new record."""
MIN_JD_CHARS = 30
"""JD characters (folded, punctuation and spaces removed) below which a posting has no JD text: a list card's
one-line blurb or a bullet such as 五险一金 is not a job description."""
COMMON_SHARE = 0.01
COMMON_MIN_COMPANIES = 10
"""A shingle is boilerplate when the JD text of more than ``max(COMMON_MIN_COMPANIES, COMMON_SHARE × companies)``
companies holds it (document frequency counted over companies, so a family of reposts counts once)."""
COMMON_MAX = 20_000
"""Boilerplate shingles kept at most (the most frequent): bounds the lookup table (128 × 8 bytes each)."""

SIGNATURE_VERSION = f"minhash-affine32-p{NUM_PERM}-s{SEED}-k{SHINGLE_K}-jd-v2"
"""Stored with keys: a store whose version differs must recompute them."""


def _permutations() -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) parameters of datasketch's affine32 permutations for ``NUM_PERM`` and ``SEED``, drawn the way
    ``MinHash._init_permutations`` draws them (odd a), without importing datasketch (whose import loads scipy)."""
    gen = np.random.RandomState(SEED)
    a = gen.randint(0, 1 << 31, NUM_PERM, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, NUM_PERM, dtype=np.uint32)
    return a, b


_PERM_A, _PERM_B = _permutations()
_EMPTY = np.uint32(0xFFFFFFFF)
_ROLL = np.uint64(0x100000001B3)  # FNV-1a 64-bit prime: multiplier of the rolling shingle hash


def jd_text(record: Any) -> str:
    """The JD text a record is shingled on: its requirement and responsibility bullets, one per line; its
    free ``text`` only when it has no bullets. Company intros and benefit paragraphs, which staffing agencies
    rewrite and which every posting of a company shares, stay out of the comparison."""
    bullets = [*(_field(record, "requirements") or ()), *(_field(record, "responsibilities") or ())]
    return "\n".join(bullets) if bullets else (_field(record, "text") or "")


def shingles(text: str, k: int = SHINGLE_K) -> set[str]:
    """Character k-shingles of the JD text, line by line: each line folded, its bullet marker, spaces and
    punctuation removed; a line shorter than k is one shingle. No shingle spans two lines, so reordered
    bullets and renumbering leave the set unchanged."""
    out: set[str] = set()
    for line in _bullet_lines([text]):
        out.update(line[i : i + k] for i in range(max(1, len(line) - k + 1)))
    return out


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of a sorted 1-d array: its distinct values, and the index where the run of each starts."""
    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return values[starts], starts


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-d array, by a sort (NumPy ≥ 2.3 hashes integers instead, slower here)."""
    return _runs(np.sort(values))[0]


def shingle_hashes(text: str, k: int = SHINGLE_K) -> np.ndarray:
    """The distinct 32-bit hashes of :func:`shingles` (a rolling polynomial hash of the code points, mixed and
    folded to 32 bits), computed vectorized over the whole text. Same set of shingles → same array."""
    return _distinct(_line_hashes(_bullet_lines([text]), k))


def _line_hashes(lines: list[str], k: int = SHINGLE_K) -> np.ndarray:
    return _record_hashes([lines], k)[0]


_MASK64 = (1 << 64) - 1


def _record_hashes(line_lists: Sequence[Sequence[str]], k: int = SHINGLE_K) -> tuple[np.ndarray, np.ndarray]:
    """The 32-bit shingle hashes of many records' content lines (may repeat) and the record index of each,
    in record order: a rolling polynomial hash of the code points of every k-window of a line (of the whole
    line when it is shorter), mixed and folded to 32 bits; one numpy pass over all the records' lines."""
    long_lines: list[str] = []
    long_owner: list[int] = []
    short: list[int] = []
    short_owner: list[int] = []
    roll = int(_ROLL)
    for i, lines in enumerate(line_lists):
        for line in lines:
            if len(line) >= k:
                long_lines.append(line)
                long_owner.append(i)
            else:  # one window: the whole line
                h = 0
                for ch in line:
                    h = (h * roll + ord(ch)) & _MASK64
                short.append(h)
                short_owner.append(i)
    hashes = [np.asarray(short, dtype=np.uint64)]
    owners = [np.asarray(short_owner, dtype=np.int64)]
    if long_lines:
        codes = np.frombuffer("\0".join(long_lines).encode("utf-32-le"), dtype=np.uint32)
        h = _rolling_codes(codes, k)
        breaks = np.concatenate([[0], np.cumsum(codes == 0)])
        inside = breaks[k:] == breaks[:-k]  # windows that do not cross a line break
        hashes.append(h[inside])
        owners.append(np.asarray(long_owner, dtype=np.int64)[breaks[: len(h)][inside]])
    h = np.concatenate(hashes)
    owner = np.concatenate(owners)
    if short and long_lines:
        order = np.argsort(owner, kind="stable")
        h, owner = h[order], owner[order]
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(32)
    return h.astype(np.uint32), owner


def _rolling_codes(codes: np.ndarray, k: int) -> np.ndarray:
    """Polynomial hash (mod 2⁶⁴) of every window of k code points."""
    codes = codes.astype(np.uint64)
    n = len(codes) - k + 1
    h = np.zeros(n, dtype=np.uint64)
    for j in range(k):
        h = h * _ROLL + codes[j : j + n]
    return h


def signature(text: str) -> np.ndarray:
    """MinHash signature (``NUM_PERM`` uint32 values) of the text's :func:`shingle_hashes`; an empty text gives
    the empty signature (all ``2³² − 1``)."""
    return _minhash(shingle_hashes(text))


def _minhash(hashes: np.ndarray) -> np.ndarray:
    return _minhashes(hashes, np.zeros(len(hashes), dtype=np.int64), 1)[0]


_BLOCK = 8192
"""Hashes per step of :func:`_minhashes` (a NUM_PERM × 8192 uint32 block: 4 MB)."""


def _fmix32(hashes: np.ndarray) -> np.ndarray:
    """MurmurHash3's fmix32 of each 32-bit shingle hash (a new array): what the permutations are applied to."""
    h = hashes.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def _minhashes(hashes: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """MinHash signatures (n × ``NUM_PERM``) of many records' hashes at once; ``owner`` (sorted) gives each hash's
    record; a record without hashes gets the empty signature (all ``2³² − 1``).

    datasketch's affine32 MinHash (MurmurHash3 fmix32 pre-mix, then a·h + b mod 2³² per permutation, its own
    permutation parameters), vectorized; bit-identical to datasketch's.
    """
    out = np.full((n, NUM_PERM), _EMPTY, dtype=np.uint32)
    h = _fmix32(hashes)
    block = np.empty((NUM_PERM, min(_BLOCK, len(h))), dtype=np.uint32)  # permutation-major: contiguous minima
    for s in range(0, len(h), _BLOCK):
        part, who = h[s : s + _BLOCK], owner[s : s + _BLOCK]
        b = block[:, : len(part)]
        np.multiply(_PERM_A[:, None], part, out=b)
        np.add(b, _PERM_B[:, None], out=b)
        starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
        rec = who[starts]
        out[rec] = np.minimum(out[rec], np.minimum.reduceat(b, starts, axis=1).T)
    return out


_SIGNATURE_CHARS = 1 << 18
"""Content characters whose shingles :func:`_signatures` hashes in one numpy pass: its temporary arrays take
about 60 bytes a character (16 MB), however many records it is given."""


def _signatures(contents: Sequence[Sequence[str]]) -> np.ndarray:
    """MinHash signatures (len(contents) × ``NUM_PERM``) of many records' content lines, computed a slice of
    records at a time (about ``_SIGNATURE_CHARS`` characters each): a record's signature does not depend on
    the others in its slice."""
    out = np.empty((len(contents), NUM_PERM), dtype=np.uint32)
    start, chars = 0, 0
    for i, lines in enumerate(contents):
        chars += sum(map(len, lines))
        if chars >= _SIGNATURE_CHARS or i == len(contents) - 1:
            hashes, owner = _record_hashes(contents[start : i + 1])
            out[start : i + 1] = _minhashes(hashes, owner, i + 1 - start)
            start, chars = i + 1, 0
    return out


_HEADER = struct.pack("<qiB", SEED, -NUM_PERM, 1)
"""What every stored signature starts with: LeanMinHash's seed, −size (a scheme follows) and scheme code
(1 = affine32), little-endian."""


def signature_to_bytes(sig: np.ndarray) -> bytes:
    """Serialize a signature in datasketch's LeanMinHash format, little-endian (525 bytes)."""
    return _HEADER + np.asarray(sig, dtype="<u4").tobytes()


_EMPTY_BYTES = _HEADER + np.full(NUM_PERM, _EMPTY, dtype="<u4").tobytes()
"""The stored form of the empty signature (a key stores ``b""`` instead)."""


def signature_from_bytes(data: bytes) -> np.ndarray:
    """Inverse of :func:`signature_to_bytes`; raises ValueError for another seed, scheme or size."""
    from datasketch import LeanMinHash  # only here: it loads scipy (see _permutations)

    lean = LeanMinHash.deserialize(data, "<")
    if lean.seed != SEED or lean.scheme != "affine32" or len(lean.hashvalues) != NUM_PERM:
        raise ValueError(f"signature made with other parameters (seed {lean.seed}, {lean.scheme}, {len(lean.hashvalues)} values)")
    return lean.hashvalues


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity estimated from two signatures (fraction of equal values); 0 if either is empty."""
    if _is_empty(a) or _is_empty(b):
        return 0.0
    return float(np.count_nonzero(a == b)) / len(a)


def _is_empty(sig: np.ndarray) -> bool:
    return bool((sig == _EMPTY).all())


# --------------------------------------------------------------------------- records, keys and canonical member

JD_KEYS = ("responsibilities", "requirements", "preferred")
"""Section keys whose bullets are JD text."""
NOT_JD_KEYS = frozenset({"benefits", "compensation"})
"""Section keys never read as JD text: pay and benefits, which every posting of a company shares."""


@dataclass(slots=True)
class Record:
    """What the clusterer needs of a posting; dicts with these keys work too."""

    key: str
    company: str | None = None
    title: str | None = None
    city: str | None = None
    text: str | None = None
    """Free JD text; used only when the record has no bullets. Never benefits, pay or tags."""
    requirements: Sequence[str] = ()
    responsibilities: Sequence[str] = ()
    first_seen: str | None = None
    url: str | None = None
    salary: str | None = None
    """The salary identity (:func:`salary_identity`), part of :func:`identity`."""


def record_from_posting(posting: Any) -> Record:
    """The :class:`Record` of a normalized ``Posting`` (or a dict of its fields, ``salary`` nested).

    Requirement and preferred bullets are ``requirements``; responsibility bullets ``responsibilities``;
    ``text`` holds the bullets of its other sections but benefits and compensation (a JD without headings
    is all ``about``), or its description when it has no sections at all. Tags are never read.
    """
    sections: Mapping[str, Sequence[str]] = _field(posting, "sections") or {}
    other = [line for key, lines in sections.items() if key not in JD_KEYS and key not in NOT_JD_KEYS
             for line in lines]
    text = "\n".join(other) if sections else (_field(posting, "description") or "")
    return Record(
        key=str(_field(posting, "key")), company=_field(posting, "company"), title=_field(posting, "title"),
        city=_field(posting, "city"), text=text or None,
        requirements=[*sections.get("requirements", ()), *sections.get("preferred", ())],
        responsibilities=list(sections.get("responsibilities", ())), first_seen=_field(posting, "first_seen"),
        url=_field(posting, "url"), salary=salary_identity(_field(posting, "salary")) or None,
    )


def completeness(record: Any) -> int:
    """Non-empty fields among company, title, city, text (format characters alone are nothing), plus the number of
    requirement and responsibility bullets."""
    fields = sum(1 for name in ("company", "title", "city", "text") if drop_format(_field(record, name) or ""))
    bullets = len(_field(record, "requirements") or ()) + len(_field(record, "responsibilities") or ())
    return fields + bullets


def canonical_rank(completeness: int, first_seen: str | None, key: str | int) -> tuple:
    """Sort key of the canonical member of a cluster, best first: most complete, then earliest ``first_seen``
    (missing counts as latest), then smallest key (keys of digits in numeric order; an int key is a number). The
    dedupe step gives as key the posting's place in the corpus order (the run that first saw it, then its place
    in its input), not its row id: ids follow the order in which worker processes delivered the postings, which
    differs from run to run."""
    if isinstance(key, str):
        key = f"{int(key):020d}" if key.isdigit() else key
    return -completeness, first_seen is None, first_seen or "", key


def choose_canonical(members: Iterable[Any]) -> Any:
    """The canonical member of a cluster by :func:`canonical_rank` (``completeness`` read from each member
    unless it has one). Raises ValueError on an empty cluster."""
    def rank(r: Any) -> tuple:
        given = _field(r, "completeness")
        return canonical_rank(completeness(r) if given is None else given, _field(r, "first_seen"), str(_field(r, "key")))

    best = min(members, key=rank, default=None)
    if best is None:
        raise ValueError("empty cluster")
    return best


@dataclass(frozen=True, slots=True)
class DedupeKey:
    """What dedupe needs of one posting, computed from the posting alone (:func:`posting_signature`) and stored
    with it (``dedupe_signatures``), so that clustering never reads its text again."""

    company: str
    """Company, normalized (:func:`normalize_company`); ``""`` when hidden."""
    title: str
    city: str
    fingerprint: str
    """Exact content (:func:`fingerprint`); ``""`` without JD text or without company."""
    identity: str
    """Company, title, city and salary (:func:`identity`); ``""`` without company or title."""
    url: str
    """Canonical URL (:func:`canonical_url`); ``""`` without one."""
    has_jd: bool
    """The posting has JD text (at least :data:`MIN_JD_CHARS`): only then can it be similar to another."""
    completeness: int
    """:func:`completeness`, for the canonical member."""
    signature: bytes
    """MinHash signature of the JD shingles (:func:`signature_to_bytes`); ``b""`` without JD text or company."""

    @property
    def matchable(self) -> bool:
        """Compared by content (fingerprint, near-duplicate): JD text and a company."""
        return self.has_jd and bool(self.company)


def keys_of(records: Iterable[Any]) -> list[DedupeKey]:
    """The :class:`DedupeKey` of each record (:class:`Record` or dict with its fields); the signatures of all
    of them are computed at once, which costs much less per record than one at a time."""
    parts: list[tuple] = []
    contents: list[list[str]] = []
    for record in records:
        lines = _content_lines(_field(record, "requirements") or (), _field(record, "responsibilities") or (),
                               _field(record, "text"))
        raw = _field(record, "company"), _field(record, "title"), _field(record, "city")
        company, title, city = normalize_company(raw[0]), normalize_title(raw[1]), normalize_city(raw[2])
        matchable = bool(company) and sum(map(len, lines)) >= MIN_JD_CHARS
        parts.append((company, title, city, _fingerprint_of(company, title, city, lines) if matchable else "",
                      identity(*raw, _field(record, "salary")),
                      canonical_url(_field(record, "url") or ""), sum(map(len, lines)) >= MIN_JD_CHARS,
                      completeness(record)))
        contents.append(lines if matchable else [])
    sigs = _signatures(contents)
    return [DedupeKey(*p, signature=signature_to_bytes(sig) if content else b"")
            for p, sig, content in zip(parts, sigs, contents)]


def posting_signatures(postings: Iterable[Any]) -> list[DedupeKey]:
    """:func:`posting_signature` of many postings, computed together."""
    return keys_of(record_from_posting(p) for p in postings)


def posting_signature(posting: Any) -> DedupeKey:
    """The :class:`DedupeKey` of one normalized posting (a ``Posting`` or a dict of its fields): pure, per
    posting, for the item pipeline's dedupe-signature stage."""
    return posting_signatures([posting])[0]


# --------------------------------------------------------------------------- boilerplate


class CommonShingles:
    """Boilerplate shingles (their 32-bit hashes, as :func:`shingle_hashes` gives them), and for each signature
    position the value each takes under that position's permutation, so that :meth:`contains` tells whether a
    signature value is the minimum of a boilerplate shingle.

    A comparison then counts only the positions whose smaller value (the minimum over both postings' shingles)
    is not boilerplate: each such position matches with probability J(A − C, B − C), the Jaccard of the two
    shingle sets with the boilerplate C left out (the minimum over A ∪ B, given that it is outside C, is
    uniform over (A ∪ B) − C).
    """

    def __init__(self, hashes: Iterable[int] | np.ndarray = (), companies: int = 0) -> None:
        self.hashes = _distinct(np.asarray(list(hashes) if not isinstance(hashes, np.ndarray) else hashes,
                                           dtype=np.uint32))
        self.companies = companies
        """Companies whose JD text the document frequency was counted over."""
        permuted = _PERM_A[:, None] * _fmix32(self.hashes)[None, :] + _PERM_B[:, None]  # uint32, wraps
        slots = np.arange(NUM_PERM, dtype=np.uint64)[:, None] << np.uint64(32)
        self._keys = np.sort((slots | permuted.astype(np.uint64)).ravel())
        # A bit per (position, high bits of the value), at most 16 MB and about 1 in 32 set: most values are ruled
        # out by one lookup, and only the others are searched among the sorted keys. Built from the sorted keys:
        # the bits of one byte are neighbours, OR-ed together segment by segment.
        bits = max(3, min(20, (32 * len(self.hashes)).bit_length()))
        self._shift = np.uint64(32 - bits)
        self._row = 1 << (bits - 3)  # bytes per position
        flat = (self._keys >> np.uint64(32)) * np.uint64(1 << bits) + ((self._keys & np.uint64(0xFFFFFFFF)) >> self._shift)
        byte, starts = _runs(flat >> np.uint64(3))  # flat is sorted
        self._bits = np.zeros(NUM_PERM * self._row, dtype=np.uint8)
        if len(flat):
            self._bits[byte] = np.bitwise_or.reduceat(np.uint8(1) << (flat & np.uint64(7)).astype(np.uint8), starts)

    def __len__(self) -> int:
        return len(self.hashes)

    def contains(self, values: np.ndarray) -> np.ndarray:
        """For signature values (shape ``(…, NUM_PERM)``, position last), whether each is a boilerplate
        shingle's value at its position."""
        out = np.zeros(values.shape, dtype=bool)
        if not len(self._keys):
            return out
        high = values.astype(np.uint64) >> self._shift
        at = np.arange(NUM_PERM, dtype=np.uint64) * np.uint64(self._row) + (high >> np.uint64(3))
        where = np.nonzero((self._bits[at] >> (high & np.uint64(7)).astype(np.uint8)) & 1)
        keys = (where[-1].astype(np.uint64) << np.uint64(32)) | values[where].astype(np.uint64)
        found = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        out[where] = self._keys[found] == keys
        return out


def common_shingles(records: Iterable[Any], *, share: float = COMMON_SHARE, minimum: int = COMMON_MIN_COMPANIES,
                    cap: int = COMMON_MAX) -> CommonShingles:
    """The boilerplate of a corpus: the shingles of JD text found under more than
    ``max(minimum, share × companies)`` companies (normalized names). Records without company or JD text
    are not counted; the ``cap`` most frequent are kept."""
    groups: dict[str, int] = {}
    contents: list[list[str]] = []
    owners: list[int] = []
    for record in records:
        company = normalize_company(_field(record, "company"))
        lines = _content_lines(_field(record, "requirements") or (), _field(record, "responsibilities") or (),
                               _field(record, "text"))
        if company and sum(map(len, lines)) >= MIN_JD_CHARS:
            contents.append(lines)
            owners.append(groups.setdefault(company, len(groups)))
    if not contents:
        return CommonShingles()
    company_of = np.asarray(owners, dtype=np.uint64)
    pairs = []  # (company << 32 | shingle), once per company
    start, chars = 0, 0
    for i, lines in enumerate(contents):
        chars += sum(map(len, lines))
        if chars >= _SIGNATURE_CHARS or i == len(contents) - 1:
            hashes, owner = _record_hashes(contents[start : i + 1])
            pairs.append(_distinct((company_of[owner + start] << np.uint64(32)) | hashes.astype(np.uint64)))
            start, chars = i + 1, 0
    shingle = np.sort((_distinct(np.concatenate(pairs)) & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    values, starts = _runs(shingle)
    counts = np.diff(starts, append=len(shingle))
    common = np.flatnonzero(counts > max(minimum, share * len(groups)))
    common = common[np.argsort(-counts[common], kind="stable")[:cap]]
    return CommonShingles(values[common], len(groups))


# --------------------------------------------------------------------------- clustering

def _digest(text: str) -> int:
    """A 64-bit digest of ``text``: the clusterer's lookup key for URLs, fingerprints and identities (a collision
    among 10 million of them has a chance of about 3 in a million)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class _DigestMap:
    """64-bit digest → the first row given for it: open addressing in numpy arrays, 12 bytes a slot at most two
    thirds full, instead of a dict of Python ints (about 100 bytes an entry). Slots never written stay unpaged."""

    def __init__(self) -> None:
        self._digests = np.zeros(0, dtype=np.uint64)
        self._rows = np.zeros(0, dtype=np.int32)  # row + 1; 0: the slot is free
        self._n = 0

    def reserve(self, entries: int) -> None:
        """Make room for ``entries`` digests in all (no rehash until then)."""
        if 3 * entries > 2 * len(self._rows):
            old = [(int(d), int(r)) for d, r in zip(self._digests[self._rows > 0], self._rows[self._rows > 0])]
            size = 1024
            while 2 * size < 3 * entries:
                size *= 2
            self._digests, self._rows = np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.int32)
            for digest, row in old:
                slot = self._slot(digest)
                self._rows[slot], self._digests[slot] = row, digest

    def _slot(self, digest: int) -> int:
        """The slot holding ``digest``, or the free slot where it goes (linear probing)."""
        mask = len(self._rows) - 1
        slot = digest & mask
        rows, digests = self._rows, self._digests
        while rows[slot] and int(digests[slot]) != digest:
            slot = (slot + 1) & mask
        return slot

    def get(self, digest: int) -> int | None:
        if not self._n:
            return None
        row = int(self._rows[self._slot(digest)])
        return row - 1 if row else None

    def setdefault(self, digest: int, row: int) -> None:
        self.reserve(self._n + 1)
        slot = self._slot(digest)
        if not self._rows[slot]:
            self._rows[slot], self._digests[slot] = row + 1, digest
            self._n += 1


REASONS = ("new", "same_url", "same_content", "same_identity", "near_duplicate", "cross_company_copy")
"""Why a member is in its cluster (see the module docstring); ``new``: the first of its cluster."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where :meth:`Clusterer.add_keys` put a record and why."""

    key: str
    cluster_id: int
    reason: Literal["new", "same_url", "same_content", "same_identity", "near_duplicate", "cross_company_copy"]
    similarity: float
    """The estimated Jaccard (boilerplate left out) with ``matched_key`` for a near-duplicate; else 1.0."""
    matched_key: str | None = None
    """The member it matched (``None`` for ``new``): the canonical member, or for the majority rule the most
    similar member."""
    cross_company: bool = False
    """It matched a posting of a company that does not agree (staffing agency copy)."""
    different_city: bool = False
    """It matched a posting in another city: another opening of the same job."""
    absorbed: tuple[int, ...] = ()
    """Clusters of list cards (no member with JD text) whose identity this record, with JD text, has: their
    members moved into ``cluster_id`` (they are the cards of this posting); the storage layer moves them."""


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with room for ``rows`` rows, its rows kept (a copy)."""
    grown = np.empty((rows, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


def _with_slot(array: np.ndarray, index: int, fill: int) -> np.ndarray:
    """A per-cluster-id array that has slot ``index``: ``array`` itself, or a copy at least twice as long whose new
    slots hold ``fill``."""
    if index < len(array):
        return array
    grown = np.full(max(2 * len(array), index + 1, 1024), fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown


class _Run:
    """One sorted run of the band table: band keys and row ids in buffers that may be longer than ``n``."""

    __slots__ = ("keys", "rows", "n")

    def __init__(self, capacity: int) -> None:
        # np.empty: the pages past ``n`` are never written until a merge fills them, so they are not resident.
        self.keys = np.empty(capacity, dtype=np.uint32)
        self.rows = np.empty(capacity, dtype=np.int32)
        self.n = 0


class _BandIndex:
    """LSH band table as sorted numpy runs (log-structured merge) plus a dict for recent rows.

    About 8 bytes per (row, band). With :meth:`reserve` every run's buffer is sized for the whole table, so a merge moves the newer run's
    entries into the older run's buffer in place: no merge holds two copies of the table.
    """

    _FLUSH = 2048  # rows kept in the dict before they become a sorted run
    _STEP = 1 << 16  # entries moved at a time by an in-place merge

    def __init__(self) -> None:
        self._runs: list[_Run] = []  # oldest first
        self._recent: dict[int, int | list[int]] = {}  # a bare row until a second row shares the key
        self._recent_rows: list[int] = []
        self._recent_keys: list[np.ndarray] = []
        self._capacity = 0
        self._seen = np.empty(0, dtype=np.int32)  # scratch for query: a slot per row added
        self.generation = 0
        """Changes whenever the runs do: :meth:`run_hits` computed before then are stale (merges reuse buffers)."""

    def reserve(self, entries: int) -> None:
        """Size run buffers for ``entries`` (row, band) pairs in all, so that merges happen in place."""
        self._capacity = max(self._capacity, entries)

    def bulk_load(self, chunks: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
        """Add many rows at once, given as chunks of ``(rows, keys)`` (``keys``: rows × bands), as one run with
        the rows in order among equal keys."""
        run = None
        for rows, keys in chunks:
            if not len(rows):
                continue
            self._room_for(int(rows.max()) + 1)
            part = self._sorted_run(np.repeat(rows, keys.shape[1]), keys.ravel(),
                                     self._capacity if run is None else 0)
            if run is None:
                run = part
            else:
                self._merge(run, part)
        if run is not None:
            self._runs.append(run)
            self.generation += 1

    @staticmethod
    def _sorted_run(rows: np.ndarray, keys: np.ndarray, capacity: int) -> _Run:
        order = np.argsort(keys, kind="stable")
        run = _Run(max(capacity, len(keys)))
        run.n = len(keys)
        run.keys[: run.n] = keys[order]
        run.rows[: run.n] = rows[order]
        return run

    def _push_run(self, rows: np.ndarray, keys: np.ndarray) -> None:
        self._runs.append(self._sorted_run(rows, keys, self._capacity))
        while len(self._runs) >= 2 and self._runs[-2].n <= 2 * self._runs[-1].n:
            newer = self._runs.pop()
            self._merge(self._runs[-1], newer)
        self.generation += 1

    def _merge(self, older: _Run, newer: _Run) -> None:
        """Stable merge of ``newer`` into ``older`` (the older run's rows first among equal keys)."""
        n1, n2 = older.n, newer.n
        n = n1 + n2
        if len(older.keys) < n:  # no room (no reserve): a bigger buffer, the only merge that copies
            size = max(2 * n, self._capacity)
            older.keys, older.rows = _grown(older.keys[:n1], size), _grown(older.rows[:n1], size)
        keys, rows, k2 = older.keys, older.rows, newer.keys[:n2]
        # An older entry moves right by the number of newer keys below it. Moved from the end, a step at a time,
        # no entry is overwritten before it has moved: its slot is at or after its place, and past every
        # entry still to move.
        taken = np.zeros(n, dtype=bool)
        for stop in range(n1, 0, -self._STEP):
            start = max(0, stop - self._STEP)
            step_keys, step_rows = keys[start:stop].copy(), rows[start:stop].copy()
            slots = np.searchsorted(k2, step_keys, "left")
            slots += np.arange(start, stop)
            keys[slots], rows[slots] = step_keys, step_rows
            taken[slots] = True
        free = ~taken  # the newer entries' slots, in order
        keys[:n][free], rows[:n][free] = k2, newer.rows[:n2]
        older.n = n

    def run_hits(self, keys: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each row of ``keys`` (records × bands), the rows of the sorted runs sharing one of its band keys:
        per run ``(rows, offsets)``, record ``i``'s rows being ``rows[offsets[i]:offsets[i + 1]]``, repeated once
        per shared key (:meth:`query` makes them unique). A huge bucket (a family of reposts) gives each run's
        most recent rows only (see Clusterer._near)."""
        records, bands = keys.shape
        flat = keys.ravel()
        out = []
        for run in self._runs:
            run_keys, run_rows = run.keys[: run.n], run.rows[: run.n]
            lo = np.searchsorted(run_keys, flat, "left")
            found = lo < len(run_keys)
            found[found] = run_keys[lo[found]] == flat[found]
            hit = np.flatnonzero(found)
            if not len(hit):
                continue
            hi = np.searchsorted(run_keys, flat[hit], "right")
            lo = np.maximum(lo[hit], hi - BUCKET_CAP)
            lengths = hi - lo
            # The ranges lo[s]:hi[s] one after another (in record order): position j of range s is lo[s] + j.
            ends = np.cumsum(lengths)
            at = np.arange(ends[-1])
            at += np.repeat(lo - ends + lengths, lengths)
            offsets = np.r_[0, ends][np.searchsorted(hit, np.arange(records + 1) * bands)]
            out.append((run_rows[at], offsets))
        return out

    @staticmethod
    def record_hits(run_hits: list[tuple[np.ndarray, np.ndarray]], i: int) -> list[np.ndarray]:
        """Record ``i``'s part of :meth:`run_hits`: its rows of each run."""
        return [rows[offsets[i] : offsets[i + 1]] for rows, offsets in run_hits]

    def query(self, keys: np.ndarray, run_hits: list[np.ndarray] | None = None) -> np.ndarray:
        """Rows sharing at least one band key (unique, in no order); ``run_hits``: this record's
        :meth:`record_hits`, when computed since the runs last changed."""
        parts = self.record_hits(self.run_hits(keys[None, :]), 0) if run_hits is None else list(run_hits)
        extra: list[int] = []
        for hit in map(self._recent.get, keys.tolist()):
            if hit is None:
                continue
            if isinstance(hit, int):
                extra.append(hit)
            else:
                extra.extend(hit[-BUCKET_CAP:])
        if extra:
            parts.append(np.asarray(extra, dtype=np.int32))
        found = np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
        # Unique without sorting: every occurrence of a row writes its position into the row's slot of _seen; the
        # slot ends holding one of them (NumPy does not say which), and only that occurrence is kept.
        positions = np.arange(len(found), dtype=np.int32)
        self._seen[found] = positions
        return found[self._seen[found] == positions]

    def _room_for(self, rows: int) -> None:
        if rows > len(self._seen):
            self._seen = np.empty(max(rows, 2 * len(self._seen)), dtype=np.int32)

    def add(self, row: int, keys: np.ndarray) -> None:
        self._room_for(row + 1)
        recent, listed = self._recent, keys.tolist()
        fresh = dict.fromkeys(listed, row)
        if len(fresh) == len(listed) and not any(map(recent.__contains__, listed)):
            recent.update(fresh)  # the common case: no key seen yet
        else:
            for k in listed:
                hit = recent.get(k)
                if hit is None:
                    recent[k] = row
                elif isinstance(hit, int):
                    recent[k] = [hit, row]
                else:
                    hit.append(row)
        self._recent_rows.append(row)
        self._recent_keys.append(keys)
        if len(self._recent_rows) >= self._FLUSH:
            self._push_run(
                np.repeat(np.asarray(self._recent_rows, dtype=np.int64), len(keys)),
                np.concatenate(self._recent_keys),
            )
            self._recent, self._recent_rows, self._recent_keys = {}, [], []


_BAND_MUL = np.uint64(0x9E3779B97F4A7C15)


def _band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """32-bit key per (signature, band): the band's values and the band number mixed together in 64 bits, the
    high half kept. Two different bands share a key with probability 2⁻³²: at most an extra candidate, checked
    on its full signature like any other. 32 bits instead of 64 save 17 MB of index per 100k postings."""
    sigs = np.ascontiguousarray(sigs[:, : bands * rows], dtype=np.uint32).reshape(len(sigs), bands, rows)
    h = np.zeros((len(sigs), bands), dtype=np.uint64) + np.arange(1, bands + 1, dtype=np.uint64)
    for j in range(rows):
        h = (h ^ sigs[:, :, j].astype(np.uint64)) * _BAND_MUL
        h ^= h >> np.uint64(29)
    return (h >> np.uint64(32)).astype(np.uint32)


_COMPANY, _TITLE, _CITY = range(3)  # columns of Clusterer._fields


class _Match(NamedTuple):
    row: int
    similarity: float
    same_company: bool
    same_city: bool
    cluster: int

    def order(self) -> tuple:
        """Larger is better: same company, same city, most similar, then the oldest cluster."""
        return self.same_company, self.same_city, self.similarity, -self.cluster


class _Chains:
    """Per cluster id, its rows in the order they joined, as linked lists in numpy arrays: a few bytes a row and a
    cluster instead of a Python list per cluster."""

    def __init__(self) -> None:
        self.next = np.empty(0, dtype=np.int32)  # per row: the next row of its cluster, -1 after the last
        self.head = np.empty(0, dtype=np.int32)  # per cluster id: first and last row (when size > 0)
        self.tail = np.empty(0, dtype=np.int32)
        self.size = np.zeros(0, dtype=np.int32)

    def reserve(self, rows: int) -> None:
        if rows > len(self.next):
            self.next = _grown(self.next, rows)

    def _room_for(self, cluster_id: int) -> None:
        self.head, self.tail, self.size = (_with_slot(a, cluster_id, fill)
                                           for a, fill in ((self.head, -1), (self.tail, -1), (self.size, 0)))

    def count(self, cluster_id: int) -> int:
        return int(self.size[cluster_id]) if 0 <= cluster_id < len(self.size) else 0

    def append(self, cluster_id: int, row: int) -> None:
        self._room_for(cluster_id)
        self.next[row] = -1
        if self.size[cluster_id]:
            self.next[self.tail[cluster_id]] = row
        else:
            self.head[cluster_id] = row
        self.tail[cluster_id] = row
        self.size[cluster_id] += 1

    def rows(self, cluster_id: int) -> list[int]:
        out, row = [], int(self.head[cluster_id]) if self.count(cluster_id) else -1
        nxt = self.next
        while row >= 0:
            out.append(row)
            row = int(nxt[row])
        return out

    def move(self, source: int, target: int) -> None:
        """The rows of ``source`` join the end of ``target``'s; ``source`` is left empty."""
        if not self.count(source):
            return
        self._room_for(target)
        if self.size[target]:
            self.next[self.tail[target]] = self.head[source]
        else:
            self.head[target] = self.head[source]
        self.tail[target] = self.tail[source]
        self.size[target] += self.size[source]
        self.size[source] = 0

    def ids(self) -> list[int]:
        """Cluster ids with rows, in ascending order."""
        return np.flatnonzero(self.size).tolist()


@dataclass
class Clusterer:
    """Incremental clustering of postings by their :class:`DedupeKey` (see the module docstring).

    ``add_keys`` assigns each record to an existing cluster or a new one; cluster ids are integers starting
    at ``first_cluster_id``. Near-duplicates are compared with ``common`` (the corpus's boilerplate) left out.
    A record matching several clusters joins the best (same company, then same city, then most similar,
    then oldest); clusters are never merged.
    """

    threshold: float = THRESHOLD
    cross_company_threshold: float = CROSS_COMPANY_THRESHOLD
    common: CommonShingles | None = None
    bands: int = BANDS
    rows: int = ROWS
    first_cluster_id: int = 1
    _keys: list[str] = field(default_factory=list, init=False, repr=False)
    # Per row, what its canonical rank is made of (:meth:`_rank`): first_seen (one string per run) and the order.
    _seen: list[str | None] = field(default_factory=list, init=False, repr=False)
    _order: list[str | int] = field(default_factory=list, init=False, repr=False)
    # Per row, numpy arrays sized like _sigs: the signature, the cluster, the interned company, title and city
    # (columns _COMPANY, _TITLE, _CITY of ids into _names; 0 is ""), whether it is compared by content, and its
    # completeness.
    _sigs: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _clusters: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _fields: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _matchable: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _boiler: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]  # value is boilerplate, packed bits
    _completeness: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _names: list[str] = field(default_factory=lambda: [""], init=False, repr=False)
    _name_ids: dict[str, int] = field(default_factory=lambda: {"": 0}, init=False, repr=False)
    _name_flags: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), init=False, repr=False)  # scratch
    _row_of: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    # URL, fingerprint and identity (with JD text, without) → first row, keyed by the text's 64-bit digest
    # (:func:`_digest`).
    _by_url: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    _by_fp: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    _by_identity_jd: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    _by_identity_no_jd: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    # Per cluster id: its rows, its rows compared by content, its canonical row (-1: no such cluster).
    _members: _Chains = field(default_factory=_Chains, init=False, repr=False)
    _jd_members: _Chains = field(default_factory=_Chains, init=False, repr=False)
    _canonical: np.ndarray = field(default_factory=lambda: np.full(0, -1, dtype=np.int32), init=False, repr=False)
    _index: _BandIndex = field(default_factory=_BandIndex, init=False, repr=False)
    _next_cluster: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.bands * self.rows > NUM_PERM:
            raise ValueError(f"bands × rows must be ≤ {NUM_PERM}")
        self._sigs = np.empty((0, NUM_PERM), dtype=np.uint32)
        self._clusters = np.empty(0, dtype=np.int64)
        self._fields = np.empty((0, 3), dtype=np.int32)
        self._matchable = np.empty(0, dtype=bool)
        self._boiler = np.empty((0, NUM_PERM // 8), dtype=np.uint8)
        self._completeness = np.empty(0, dtype=np.int32)
        self.reserve(1024)
        self._next_cluster = self.first_cluster_id

    def __len__(self) -> int:
        return len(self._keys)

    # ---- inspection

    def cluster_of(self, key: str) -> int:
        """Cluster id of an added record (KeyError if unknown)."""
        return int(self._clusters[self._row_of[key]])

    def members(self, cluster_id: int) -> list[str]:
        """Keys of a cluster's members, in the order they were added."""
        return [self._keys[r] for r in self._members.rows(cluster_id)]

    def clusters(self) -> dict[int, list[str]]:
        """Every cluster id → member keys."""
        return {cid: self.members(cid) for cid in self._members.ids()}

    def canonical(self, cluster_id: int) -> str:
        """Key of a cluster's canonical member (:func:`canonical_rank`), which new members are matched with."""
        row = self._canonical_of(cluster_id)
        if row < 0:
            raise KeyError(cluster_id)
        return self._keys[row]

    def _canonical_of(self, cluster_id: int) -> int:
        """The canonical row of a cluster, -1 for none."""
        return int(self._canonical[cluster_id]) if 0 <= cluster_id < len(self._canonical) else -1

    def _rank(self, row: int) -> tuple:
        return canonical_rank(int(self._completeness[row]), self._seen[row], self._order[row])

    def _name_id(self, name: str) -> int:
        found = self._name_ids.get(name)
        if found is None:
            found = self._name_ids[name] = len(self._names)
            self._names.append(name)
        return found

    # ---- building

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` records in all: the per-row arrays are not grown (a copy) and the band
        index merges its runs in place."""
        if rows > len(self._sigs):
            self._sigs, self._clusters, self._fields, self._matchable, self._boiler, self._completeness = (
                _grown(a, rows) for a in (self._sigs, self._clusters, self._fields, self._matchable, self._boiler,
                                          self._completeness))
        self._members.reserve(rows)
        self._jd_members.reserve(rows)
        for digests in (self._by_url, self._by_fp, self._by_identity_jd, self._by_identity_no_jd):
            digests.reserve(rows)
        self._index.reserve(rows * self.bands)

    def _append(self, key: str, dk: DedupeKey, seen: tuple[str | None, str], cluster_id: int) -> int:
        """Register a record (``seen``: its first_seen and order) in every index and its cluster; the caller stores
        its signature at the returned row."""
        if key in self._row_of:
            raise ValueError(f"record {key!r} already added")
        row = len(self._keys)
        if row == len(self._sigs):
            self.reserve(2 * row)
        self._keys.append(key)
        first_seen, order = seen
        self._seen.append(None if first_seen is None else sys.intern(first_seen))  # one string per run
        self._order.append(order)
        self._completeness[row] = dk.completeness
        self._fields[row] = (self._name_id(dk.company), self._name_id(dk.title), self._name_id(dk.city))
        self._clusters[row] = cluster_id
        self._matchable[row] = dk.matchable and bool(dk.signature)
        self._row_of[key] = row
        self._members.append(cluster_id, row)
        if self._matchable[row]:
            self._jd_members.append(cluster_id, row)
        best = self._canonical_of(cluster_id)
        if best < 0 or self._rank(row) < self._rank(best):
            self._set_canonical(cluster_id, row)
        if dk.url:
            self._by_url.setdefault(_digest(dk.url), row)
        if dk.company and dk.has_jd and dk.fingerprint:
            self._by_fp.setdefault(_digest(dk.fingerprint), row)
        if dk.identity:
            (self._by_identity_jd if dk.has_jd else self._by_identity_no_jd).setdefault(_digest(dk.identity), row)
        self._next_cluster = max(self._next_cluster, cluster_id + 1)
        return row

    def _set_canonical(self, cluster_id: int, row: int) -> None:
        self._canonical = _with_slot(self._canonical, cluster_id, -1)
        self._canonical[cluster_id] = row

    def add(self, record: Any) -> Assignment:
        """Match a record (``Record``, dict or object with its fields) against all earlier ones and add it."""
        return self.add_many([record])[0]

    def add_many(self, records: Iterable[Any]) -> list[Assignment]:
        """:meth:`add` each record in turn; their keys are computed together (:func:`keys_of`)."""
        records = list(records)
        return self.add_keys((str(_field(r, "key")), k, _field(r, "first_seen")) for r, k in zip(records, keys_of(records)))

    _PREFETCH = 128  # records whose sorted-run lookups are done in one numpy pass (bounds its temporary arrays)

    def add_keys(self, items: Iterable[tuple]) -> list[Assignment]:
        """Match each ``(key, dedupe key, first_seen)`` or ``(key, dedupe key, first_seen, order)`` against
        everything added before it and add it, in order; ``order`` (default: the key) breaks the canonical
        member's ties (:func:`canonical_rank`)."""
        items = [(*item, item[0]) if len(item) == 3 else tuple(item) for item in items]
        sigs = np.empty((len(items), NUM_PERM), dtype=np.uint32)
        _decode_into(sigs, [item[1].signature for item in items])
        boiler = self._boilerplate(sigs)
        band_keys = _band_keys(sigs, self.bands, self.rows)
        index = self._index
        out: list[Assignment] = []
        hits: list[tuple[np.ndarray, np.ndarray]] = []
        first, generation = 0, -1
        for i, (key, dk, first_seen, order) in enumerate(items):
            if index.generation != generation or i - first >= self._PREFETCH:
                first, generation = i, index.generation
                hits = index.run_hits(band_keys[i : i + self._PREFETCH])
            out.append(self._add(key, dk, (first_seen, order), sigs[i], boiler[i], band_keys[i],
                                 index.record_hits(hits, i - first)))
        return out

    def _boilerplate(self, sigs: np.ndarray) -> np.ndarray:
        """Per signature value, whether it is a boilerplate shingle's (all False without ``common``): a comparison
        leaves out the positions whose smaller value is, and that value is one of the two compared."""
        if self.common is None or not len(self.common):
            return np.zeros(sigs.shape, dtype=bool)
        return self.common.contains(sigs)

    def _add(self, key: str, dk: DedupeKey, seen: tuple[str | None, str], sig: np.ndarray, boiler: np.ndarray,
             band_keys: np.ndarray, run_hits: list[np.ndarray]) -> Assignment:
        if key in self._row_of:
            raise ValueError(f"record {key!r} already added")
        matchable = dk.matchable and bool(dk.signature)
        match: tuple[int, float, str] | None = None
        if dk.url and (row := self._by_url.get(_digest(dk.url))) is not None:
            match = row, 1.0, "same_url"
        elif dk.company:
            if dk.has_jd and dk.fingerprint and (row := self._by_fp.get(_digest(dk.fingerprint))) is not None:
                match = row, 1.0, "same_content"
            elif matchable and (near := self._near(sig, boiler, dk, band_keys, run_hits)) is not None:
                match = near.row, near.similarity, "near_duplicate" if near.same_company else "cross_company_copy"
            elif dk.identity and (row := self._identity_match(dk)) is not None:
                match = row, 1.0, "same_identity"
        if match is None:
            result = Assignment(key, self._next_cluster, "new", 1.0)
        else:
            row, similarity, reason = match
            company, _, city = (self._names[i] for i in self._fields[row].tolist())
            result = Assignment(key, int(self._clusters[row]), reason, similarity, self._keys[row],  # type: ignore[arg-type]
                                not companies_agree(dk.company, company), bool(dk.city and city and dk.city != city))
        if dk.has_jd and dk.identity and (cards := self._card_cluster(dk.identity, result.cluster_id)) is not None:
            self._absorb(result.cluster_id, cards)
            result = replace(result, absorbed=(cards,))
        row = self._append(key, dk, seen, result.cluster_id)
        self._sigs[row] = sig
        self._boiler[row] = np.packbits(boiler)
        if self._matchable[row]:
            self._index.add(row, band_keys)
        return result

    def _identity_match(self, dk: DedupeKey) -> int | None:
        """The member this record joins by identity: for a record with JD text, a list card (a record without);
        for a list card, a record with JD text, else another card."""
        identity = _digest(dk.identity)
        if dk.has_jd:
            return self._by_identity_no_jd.get(identity)
        found = self._by_identity_jd.get(identity)
        return self._by_identity_no_jd.get(identity) if found is None else found

    def _card_cluster(self, identity_key: str, cluster_id: int) -> int | None:
        """The cluster of list cards with this identity, when it has no member with JD text and is not ``cluster_id``."""
        row = self._by_identity_no_jd.get(_digest(identity_key))
        if row is None:
            return None
        cid = int(self._clusters[row])
        return None if cid == cluster_id or self._jd_members.count(cid) else cid

    def _absorb(self, survivor: int, absorbed: int) -> None:
        """Move the members of cluster ``absorbed`` (list cards) into ``survivor``."""
        self._clusters[self._members.rows(absorbed)] = survivor
        self._members.move(absorbed, survivor)
        self._jd_members.move(absorbed, survivor)  # none: a cluster of list cards
        best, kept = self._canonical_of(absorbed), self._canonical_of(survivor)
        self._canonical[absorbed] = -1
        if kept < 0 or self._rank(best) < self._rank(kept):
            self._set_canonical(survivor, best)

    # ---- matching

    def _agreeing(self, agree: Callable[[str, str], bool], name: str, ids: np.ndarray) -> np.ndarray:
        """Per id in ``ids`` (interned names), whether ``agree(name, that name)``; called once per distinct id."""
        others = set(ids.tolist())
        agreeing = [other for other in others if agree(name, self._names[other])]
        if len(agreeing) == len(others):
            return np.ones(len(ids), dtype=bool)
        if len(agreeing) <= 1:
            return ids == (agreeing[0] if agreeing else -1)
        flags = self._name_flags
        if len(flags) < len(self._names):
            flags = self._name_flags = np.zeros(2 * len(self._names), dtype=bool)
        flags[agreeing] = True
        out = flags[ids]
        flags[agreeing] = False
        return out

    def similarity(self, sig: np.ndarray, rows: np.ndarray, boiler: np.ndarray | None = None) -> np.ndarray:
        """Estimated Jaccard of ``sig`` with the signatures of ``rows``, boilerplate (``common``) left out: the
        share of equal values among the positions whose smaller value is not a boilerplate shingle's. Where
        fewer than :data:`MIN_INFORMATIVE` positions are left, the whole texts' estimate when it reaches
        :data:`NEAR_IDENTICAL`, else 0. ``boiler``: which of ``sig``'s values are boilerplate (looked up when
        not given)."""
        other = self._sigs[rows]
        equal = other == sig
        whole = np.count_nonzero(equal, axis=1) / NUM_PERM
        if self.common is None or not len(self.common):
            return whole
        if boiler is None:
            boiler = self._boilerplate(sig[None, :])[0]
        # the smaller of two values is one of them, and equal values are one shingle: its flag is known
        informative = ~np.where(other <= sig, np.unpackbits(self._boiler[rows], axis=1, count=NUM_PERM).view(bool), boiler)
        n = np.count_nonzero(informative, axis=1)
        hits = np.count_nonzero(equal & informative, axis=1)
        return np.where(n >= MIN_INFORMATIVE, hits / np.maximum(n, 1), np.where(whole >= NEAR_IDENTICAL, whole, 0.0))

    def _verified(self, sig: np.ndarray, boiler: np.ndarray, dk: DedupeKey, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """For ``rows``: (matches, similarity, same company, same city); a match has an agreeing title and a
        similarity of at least the threshold (the cross-company one when the companies disagree). Similarity and
        company are worked out only where the titles agree: elsewhere they read 0 and False (no match)."""
        fields = self._fields[rows]
        ok = self._agreeing(titles_agree, dk.title, fields[:, _TITLE])
        city = self._name_ids.get(dk.city, -1) if dk.city else 0
        same_city = (fields[:, _CITY] == 0) | (fields[:, _CITY] == city) if city else np.ones(len(rows), dtype=bool)
        if ok.all():
            titled = rows
        else:
            titled = rows[ok]
            fields = fields[ok]
        sims_t = self.similarity(sig, titled, boiler) if len(titled) else np.zeros(0)
        company_t = self._agreeing(companies_agree, dk.company, fields[:, _COMPANY])
        match_t = sims_t >= np.where(company_t, self.threshold, self.cross_company_threshold)
        if titled is rows:
            return match_t, sims_t, company_t, same_city
        sims, same_company = np.zeros(len(rows)), np.zeros(len(rows), dtype=bool)
        sims[ok], same_company[ok] = sims_t, company_t
        ok[ok] = match_t
        return ok, sims, same_company, same_city

    def _near(self, sig: np.ndarray, boiler: np.ndarray, dk: DedupeKey, band_keys: np.ndarray,
              run_hits: list[np.ndarray]) -> _Match | None:
        """The best cluster this record is a near-duplicate in, through its canonical member or a majority of
        its members with JD text; ``None`` when there is none.

        LSH candidates that match the record themselves only say which clusters to check. In a large family of
        reposts every member is a candidate of every new one: each band bucket gives at most its
        ``BUCKET_CAP`` most recent rows, and one candidate is enough to point at its cluster.
        """
        cand = self._index.query(band_keys, run_hits)
        if not len(cand):
            return None
        ok = self._verified(sig, boiler, dk, cand)[0]
        best = None
        for cid in sorted(set(self._clusters[cand[ok]].tolist())):
            found = self._cluster_match(sig, boiler, dk, cid)
            if found is not None and (best is None or found.order() > best.order()):
                best = found
        return best

    def _cluster_match(self, sig: np.ndarray, boiler: np.ndarray, dk: DedupeKey, cid: int) -> _Match | None:
        """The record's match in cluster ``cid``: its canonical member when that matches, else the most similar
        member when a majority of the members with JD text (at most :data:`MAJORITY_CAP`) match."""
        canonical = self._canonical_of(cid)
        if self._matchable[canonical]:
            ok, sims, same_company, same_city = self._verified(sig, boiler, dk, np.array([canonical]))
            if ok[0]:
                return _Match(canonical, float(sims[0]), bool(same_company[0]), bool(same_city[0]), cid)
        if not 0 < self._jd_members.count(cid) <= MAJORITY_CAP:
            return None
        rows = np.asarray(self._jd_members.rows(cid), dtype=np.int64)
        ok, sims, same_company, same_city = self._verified(sig, boiler, dk, rows)
        if 2 * np.count_nonzero(ok) <= len(rows):
            return None
        best = max(np.flatnonzero(ok).tolist(), key=lambda i: (same_company[i], same_city[i], sims[i], -rows[i]))
        return _Match(int(rows[best]), float(sims[best]), bool(same_company[best]), bool(same_city[best]), cid)

    # ---- stored keys

    @classmethod
    def from_stored(cls, items: Iterable[tuple], capacity: int = 0, **options: Any) -> Clusterer:
        """Rebuild a clusterer from stored ``(key, dedupe key, cluster id, first_seen)`` (or with a fifth element,
        the order: see :meth:`add_keys`) without raw text.

        Records keep their stored clusters; later :meth:`add_keys` calls match against them. ``capacity``: the
        records expected in all, stored and to come (:meth:`reserve`). ``items`` are read a chunk at a time,
        so the stored signatures are held once, decoded.
        """
        self = cls(**options)
        self.reserve(capacity)
        blobs: list[bytes] = []
        for key, dk, cluster_id, first_seen, *order in items:
            self._append(key, dk, (first_seen, order[0] if order else key), int(cluster_id))
            blobs.append(dk.signature)
            if len(blobs) == _DECODE_CHUNK:
                self._put_signatures(blobs)
        self._put_signatures(blobs)
        self._index.bulk_load(self._live_band_keys(start, min(start + _DECODE_CHUNK, len(self)))
                              for start in range(0, len(self), _DECODE_CHUNK))
        return self

    def _live_band_keys(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``start:stop`` compared by content, and their band keys."""
        live = np.flatnonzero(self._matchable[start:stop]) + start
        return live.astype(np.int64), _band_keys(self._sigs[live], self.bands, self.rows)

    def _put_signatures(self, blobs: list[bytes]) -> None:
        """Decode the signatures of the last ``len(blobs)`` records appended (and which values are boilerplate),
        and empty ``blobs``."""
        stop = len(self)  # _append made room
        start = stop - len(blobs)
        _decode_into(self._sigs[start:stop], blobs)
        self._boiler[start:stop] = np.packbits(self._boilerplate(self._sigs[start:stop]), axis=1)
        blobs.clear()


_DECODE_CHUNK = 16384


def _decode_into(out: np.ndarray, blobs: list[bytes]) -> None:
    """Signatures from their stored bytes into ``out`` (len(blobs) × NUM_PERM); all checked like
    :func:`signature_from_bytes`, decoded in one numpy pass when they share the expected header."""
    if not blobs:
        return
    blobs = [b or _EMPTY_BYTES for b in blobs]
    size = len(_HEADER) + 4 * NUM_PERM
    if all(len(b) == size and b.startswith(_HEADER) for b in blobs):
        raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), size)[:, len(_HEADER):]
        out[:] = raw.copy().view("<u4").reshape(len(blobs), NUM_PERM)
    else:
        for i, b in enumerate(blobs):
            out[i] = signature_from_bytes(b)
