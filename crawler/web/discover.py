"""Board discovery: which job board a company's careers page embeds, as a sources-file entry.

Three parts, each usable alone:

- :func:`detect` (pure): the boards a page's URL and HTML point to. Each vendor is a few URL
  patterns (embed scripts, iframes, links, API calls in inline scripts): Greenhouse, Lever, Ashby,
  Workable, SmartRecruiters, Recruitee, Workday. A page with no board but schema.org
  ``JobPosting`` markup (JSON-LD or microdata) is a ``jsonld`` source of its own.
- :func:`fetch_page`: one polite GET — robots.txt honoured (read with Protego, as the crawler
  reads it; 401/403 forbid everything, a missing or unreadable one nothing), the project's
  User-Agent, a size cap, a time limit, redirects capped and each hop checked; loopback,
  private, link-local and other non-public addresses are refused unless ``allow_private``
  (checked when the connection is made, so a name cannot resolve to a public address at check
  time and a private one at connect time). Environment proxies are not used.
- :func:`entry_toml` / :func:`add_entries`: the TOML of an entry, and appending entries to a
  sources file (a board the file already has is not added again; a name the file uses is never
  reused; the new file is validated before it replaces the old one).
"""

from __future__ import annotations

import html
import ipaddress
import json
import os
import re
import socket
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.client import HTTPConnection, HTTPSConnection
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import urljoin, urlsplit

from protego import Protego

from normalize.text import DecodeError, declared_charset, decode_bytes

__all__ = ["Found", "FetchError", "Fetched", "detect", "fetch_page", "entry_toml", "add_entries", "discover",
           "unique_name", "user_agent", "MAX_BYTES", "TIMEOUT"]

MAX_BYTES = 2_000_000
"""Default size cap of a careers page (robots.txt: a quarter of it)."""
TIMEOUT = 20.0
"""Default seconds for a whole fetch."""


@dataclass
class Found:
    """A source a page points to: a spider and its arguments, with the text that gave it away."""

    spider: str
    args: dict[str, Any]
    evidence: str
    name: str = ""
    page: str = ""
    """The URL the board was found on (written above its entry)."""

    def boards(self) -> list[str]:
        """What the source lists: its boards (Workday: ``tenant/site``; jsonld: its start URLs)."""
        if self.spider == "workday":
            return [f"{self.args['tenant']}/{site}" for site in self.args["site"]]
        return list(self.args.get("boards") or self.args.get("start_urls") or [])

    def home(self) -> tuple:
        """Everything but the boards: sources with the same home can share one entry."""
        return (self.spider, *sorted((k, json.dumps(v)) for k, v in self.args.items()
                                     if k not in ("boards", "site", "start_urls")))

    def covered_by(self, spider: str, args: dict[str, Any]) -> bool:
        """A source of ``spider`` with ``args`` already lists every board of this one."""
        if spider != self.spider:
            return False
        try:
            return set(self.boards()) <= set(Found(spider, args, "").boards())
        except (KeyError, TypeError):
            return False


# --------------------------------------------------------------------------- detection (pure)

_TOKEN = r"([A-Za-z0-9][A-Za-z0-9_.-]*)"
_NOT_A_TOKEN = re.compile(r"[._-]+$")
_RESERVED = {
    # names in the vendors' own hosts and paths that are not boards
    "greenhouse": {"embed", "v1", "api", "jobs", "static"},
    "lever": {"v0", "api", "static", "assets"},
    "ashby": {"api", "embed", "static"},
    "workable": {"api", "j", "www", "apply", "jobs", "careers-page", "help", "resources", "blog", "app", "static", "assets"},
    "smartrecruiters": {"api", "oneclick-ui", "static", "assets", "careers"},
    "recruitee": {"www", "app", "api", "blog", "support", "help", "careers", "static", "assets", "cdn"},
    "workday": {"wday", "en-us"},
}


@dataclass(frozen=True)
class _Pattern:
    spider: str
    regex: re.Pattern[str]
    build: Callable[[re.Match[str]], dict[str, Any]]


def _board(group: int = 1, **extra: Any) -> Callable[[re.Match[str]], dict[str, Any]]:
    return lambda m: {"boards": [m.group(group)], **extra}


def _greenhouse(m: re.Match[str]) -> dict[str, Any]:
    args: dict[str, Any] = {"boards": [m.group("token")]}
    if m.group("eu"):
        args["base_url"] = "https://boards-api.eu.greenhouse.io"
    return args


def _lever(m: re.Match[str]) -> dict[str, Any]:
    return {"boards": [m.group("token")], **({"eu": True} if m.group("eu") else {})}


def _workday(m: re.Match[str]) -> dict[str, Any]:
    return {"tenant": m.group("tenant"), "site": [m.group("site")], "wd": int(m.group("wd"))}


def _workday_site(m: re.Match[str]) -> dict[str, Any]:
    return {"tenant": m.group("tenant"), "site": [m.group("site")],
            "base_url": f"https://wd{m.group('wd')}.myworkdaysite.com"}


_GH = r"(?:boards|job-boards)(?P<eu>\.eu)?\.greenhouse\.io"
_LOCALE = r"(?:[a-z]{2}(?:-[A-Za-z]{2})?/)?"
PATTERNS: list[_Pattern] = [
    _Pattern("greenhouse", re.compile(_GH + r"/embed/job_board(?:/js)?/?\?(?:[^\"'\s<>]*?&)?for=(?P<token>[A-Za-z0-9_-]+)", re.I),
             _greenhouse),
    _Pattern("greenhouse", re.compile(r"boards-api(?P<eu>\.eu)?\.greenhouse\.io/v1/boards/(?P<token>[A-Za-z0-9_-]+)", re.I),
             _greenhouse),
    _Pattern("greenhouse", re.compile(_GH + r"/(?P<token>[A-Za-z0-9_-]+)", re.I), _greenhouse),
    _Pattern("lever", re.compile(r"(?:jobs|api)(?P<eu>\.eu)?\.lever\.co/(?:v0/postings/)?(?P<token>[A-Za-z0-9][A-Za-z0-9_.-]*)",
                                 re.I), _lever),
    _Pattern("ashby", re.compile(r"api\.ashbyhq\.com/posting-api/job-board/" + _TOKEN, re.I), _board()),
    _Pattern("ashby", re.compile(r"(?:jobs|job-boards)\.ashbyhq\.com/" + _TOKEN, re.I), _board()),
    _Pattern("workable", re.compile(r"apply\.workable\.com/api/v\d+/(?:widget/)?accounts/" + _TOKEN, re.I), _board()),
    _Pattern("workable", re.compile(r"apply\.workable\.com/" + _TOKEN, re.I), _board()),
    _Pattern("workable", re.compile(r"(?<![A-Za-z0-9.-])([a-z0-9][a-z0-9-]*)\.workable\.com", re.I), _board()),
    _Pattern("smartrecruiters", re.compile(r"api\.smartrecruiters\.com/v1/companies/" + _TOKEN, re.I), _board()),
    _Pattern("smartrecruiters", re.compile(r"(?:careers|jobs)\.smartrecruiters\.com/" + _TOKEN, re.I), _board()),
    _Pattern("recruitee", re.compile(r"(?<![A-Za-z0-9.-])([a-z0-9][a-z0-9-]*)\.recruitee\.com", re.I), _board()),
    _Pattern("workday", re.compile(r"(?P<tenant>[a-z0-9][a-z0-9_-]*)\.wd(?P<wd>\d{1,3})\.myworkdayjobs\.com/wday/cxs/[^/\s\"'<>]+/"
                                   r"(?P<site>[A-Za-z0-9_-]+)", re.I), _workday),
    _Pattern("workday", re.compile(r"(?P<tenant>[a-z0-9][a-z0-9_-]*)\.wd(?P<wd>\d{1,3})\.myworkdayjobs\.com/" + _LOCALE
                                   + r"(?P<site>[A-Za-z0-9_-]+)", re.I), _workday),
    _Pattern("workday", re.compile(r"wd(?P<wd>\d{1,3})\.myworkdaysite\.com/" + _LOCALE + r"recruiting/(?P<tenant>[a-z0-9_-]+)/"
                                   r"(?P<site>[A-Za-z0-9_-]+)", re.I), _workday_site),
]


def _clean(args: dict[str, Any], spider: str) -> dict[str, Any] | None:
    """The arguments with trailing dots/dashes cut from names, or None when a name is one the vendor reserves."""
    reserved = _RESERVED.get(spider, set())
    out = dict(args)
    for key in ("boards", "site"):
        if key in out:
            names = [_NOT_A_TOKEN.sub("", n) for n in out[key]]
            if not all(names) or any(n.casefold() in reserved for n in names):
                return None
            out[key] = names
    if "tenant" in out and out["tenant"].casefold() in reserved:
        return None
    return out


def _jsonld(url: str, text: str) -> Found | None:
    from crawler.web.pages.base import PageError
    from crawler.web.pages.jsonld import JsonLdPage

    try:
        count = len(JsonLdPage(url, text, fetched_at="1970-01-01T00:00:00+00:00").to_items())
    except PageError:
        return None
    if not count:
        return None
    plural = "s" if count > 1 else ""
    return Found("jsonld", {"start_urls": [url]}, f"{count} schema.org JobPosting{plural} on the page")


def detect(url: str, text: str = "") -> list[Found]:
    """The boards ``url`` and the page ``text`` point to, in order of appearance, boards of one home merged.

    Without any board, a page whose schema.org ``JobPosting`` markup yields postings is a ``jsonld``
    source starting at ``url``.
    """
    haystack = (url + "\n" + html.unescape(text)).replace("\\/", "/")  # URLs in JSON strings (https:\/\/…)
    hits: list[tuple[int, Found]] = []
    for pattern in PATTERNS:
        for match in pattern.regex.finditer(haystack):
            args = _clean(pattern.build(match), pattern.spider)
            if args is not None:
                hits.append((match.start(), Found(pattern.spider, args, match.group(0))))
    merged: dict[tuple, Found] = {}
    claimed: list[tuple[int, int]] = []
    for start, found in sorted(hits, key=lambda hit: hit[0]):
        end = start + len(found.evidence)
        if any(s <= start < e for s, e in claimed):  # a shorter pattern matching inside a longer one's text
            continue
        claimed.append((start, end))
        into = merged.setdefault(found.home(), found)
        key = "site" if found.spider == "workday" else "boards"
        if into is not found:
            into.args[key] = list(dict.fromkeys(into.args[key] + found.args[key]))
    founds = list(merged.values())
    if not founds and text:
        page = _jsonld(url, text)
        founds = [page] if page else []
    for found in founds:
        found.name = suggest_name(found)
    return founds


def suggest_name(found: Found) -> str:
    """A source name: the first board (Workday: the tenant; jsonld: the host), lower case, ``[a-z0-9-]``."""
    if found.spider == "workday":
        base = found.args["tenant"]
    elif found.spider == "jsonld":
        base = urlsplit(found.args["start_urls"][0]).hostname or "site"
    else:
        base = found.boards()[0]
    return re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-") or found.spider


# --------------------------------------------------------------------------- entries


def unique_name(name: str, taken: Iterable[str]) -> str:
    """``name``, or ``name-2``, ``name-3`` … the first not in ``taken``."""
    taken = set(taken)
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)  # JSON's escapes are TOML's


def entry_toml(found: Found, name: str | None = None) -> str:
    """The ``[sources.NAME]`` table of ``found`` after a comment saying where it was found (checked:
    valid TOML, valid spider arguments)."""
    name = name or found.name or suggest_name(found)
    where = f"found on {found.page}: " if found.page else "found: "
    lines = ["# " + where + " ".join(found.evidence.split())[:200]]
    lines += [f"[sources.{name}]", f"spider = {_toml_value(found.spider)}"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in found.args.items()]
    text = "\n".join(lines) + "\n"
    table = tomllib.loads(text)["sources"][name]
    _spider_args(found.spider)(**{k: v for k, v in table.items() if k != "spider"})
    return text


def _spider_args(spider: str):
    from crawler.web.sources import project_spiders

    return project_spiders()[spider].Args


def add_entries(path: Path, founds: list[Found]) -> list[tuple[Found, str, bool]]:
    """Append the entries of ``founds`` to the sources file ``path`` (created when missing).

    Returns ``(found, source name, added)`` each: a board the file (or an earlier entry of this
    call) already lists is not added and names the source that has it. Names are never reused.
    The new text is validated as a whole (:func:`crawler.web.sources.load_sources`) and replaces the
    file atomically; :class:`crawler.web.sources.SourcesError` when the file is not a valid sources file.
    """
    from crawler.files import read_config_text
    from crawler.web.sources import load_sources

    path = Path(path)
    text = read_config_text(path) if path.exists() else ""
    existing: dict[str, tuple[str, dict[str, Any]]] = {}
    if text.strip():
        loaded = load_sources(path)
        existing = {name: (source.spider, source.args) for name, source in loaded.sources.items()}
    results = []
    for found in founds:
        have = next((name for name, (spider, args) in existing.items() if found.covered_by(spider, args)), None)
        if have is not None:
            results.append((found, have, False))
            continue
        name = unique_name(found.name or suggest_name(found), existing)
        entry = entry_toml(found, name)
        text = (text + ("\n" if text and not text.endswith("\n") else "") + ("\n" if text else "") + entry)
        existing[name] = (found.spider, found.args)
        results.append((found, name, True))
    if any(added for _, _, added in results):
        folder = path.resolve().parent
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=folder, suffix=".toml", delete=False) as tmp:
            tmp.write(text)
        try:
            load_sources(tmp.name)
            os.replace(tmp.name, path)
        finally:
            if os.path.exists(tmp.name):
                os.unlink(tmp.name)
    return results


# --------------------------------------------------------------------------- fetching


class FetchError(Exception):
    """The page could not be fetched (or may not be): one line naming why."""


@dataclass
class Fetched:
    url: str
    status: int
    content_type: str
    body: bytes
    redirects: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The body as every input is decoded (:func:`normalize.text.decode_bytes`, its declared charset first); one
        no encoding reads, as UTF-8 with its bad bytes replaced."""
        try:
            return decode_bytes(self.body, declared=declared_charset(self.content_type, self.body))[0]
        except DecodeError:
            return self.body.decode("utf-8", "replace")


def user_agent(contact: str | None = None) -> str:
    """The crawler's User-Agent (settings.USER_AGENT) with its contact: ``contact``, else JOBCRAWL_CONTACT."""
    from crawler import settings

    return settings.USER_AGENT.replace("{contact}", contact or settings.JOBCRAWL_CONTACT)


def _check_address(host: str, address: str, allow_private: bool) -> None:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if not allow_private and not ip.is_global:
        raise FetchError(f"{host} is at {ip}, not a public address: refused (--allow-private allows it)")


def _guarded_connect(allow_private: bool):
    """``socket.create_connection`` that checks each address it resolves before connecting to it."""
    def create_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None, **_):
        host, port = address
        error: OSError | None = None
        for family, kind, proto, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            _check_address(host, sockaddr[0], allow_private)
            sock = socket.socket(family, kind, proto)
            try:
                if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                    sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
                return sock
            except OSError as err:
                sock.close()
                error = err
        raise error or OSError(f"cannot resolve {host}")
    return create_connection


def _opener(allow_private: bool, robots: Callable[[str], None] | None, max_redirects: int) -> urllib.request.OpenerDirector:
    connect = _guarded_connect(allow_private)

    def guarded(cls):
        def make(host, **kwargs):
            conn = cls(host, **kwargs)
            conn._create_connection = connect
            return conn
        return make

    class Http(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(guarded(HTTPConnection), req)

    class Https(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(guarded(HTTPSConnection), req, context=self._context)

    class Redirect(urllib.request.HTTPRedirectHandler):
        max_redirections = max_redirects

        def redirect_request(self, req, fp, code, msg, headers, newurl):
            if urlsplit(newurl).scheme not in ("http", "https"):
                raise FetchError(f"redirected to {newurl}: not http(s)")
            if robots is not None:
                robots(newurl)
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return urllib.request.build_opener(urllib.request.ProxyHandler({}), Http, Https, Redirect)


def _read(opener, url: str, agent: str, deadline: float, max_bytes: int) -> Fetched:
    request = urllib.request.Request(url, headers={"User-Agent": agent,
                                                   "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"})
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchError("timed out")
    try:
        with opener.open(request, timeout=remaining) as response:
            chunks, size = [], 0
            while True:
                if time.monotonic() > deadline:
                    raise FetchError("timed out")
                chunk = response.read(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(f"larger than {max_bytes} bytes: not read")
                chunks.append(chunk)
            return Fetched(response.geturl(), response.status, response.headers.get("Content-Type", ""), b"".join(chunks))
    except urllib.error.HTTPError as err:
        err.close()
        raise FetchError(f"HTTP {err.code}") from None
    except urllib.error.URLError as err:
        reason = err.reason
        if isinstance(reason, FetchError):
            raise reason from None
        raise FetchError(f"{type(reason).__name__}: {reason}" if isinstance(reason, Exception) else str(reason)) from None
    except (TimeoutError, socket.timeout):
        raise FetchError("timed out") from None
    except OSError as err:
        raise FetchError(f"{type(err).__name__}: {err}") from None


def fetch_page(url: str, *, agent: str | None = None, robots_agent: str | None = None, timeout: float = TIMEOUT,
               max_bytes: int = MAX_BYTES, allow_private: bool = False, max_redirects: int | None = None) -> Fetched:
    """GET ``url`` politely (see the module docstring); :class:`FetchError` naming the reason otherwise."""
    from crawler import settings

    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise FetchError("not an http(s) URL")
    agent = agent or user_agent()
    token = robots_agent or settings.ROBOTSTXT_USER_AGENT
    deadline = time.monotonic() + timeout
    redirects = settings.REDIRECT_MAX_TIMES if max_redirects is None else max_redirects
    rules: dict[str, Protego | bool] = {}
    plain = _opener(allow_private, None, redirects)

    def allowed(target: str) -> None:
        parts = urlsplit(target)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in rules:
            try:
                rules[origin] = Protego.parse(_read(plain, urljoin(origin, "/robots.txt"), agent, deadline,
                                                    max_bytes // 4).text)
            except FetchError as err:
                # 401/403 forbid everything; a missing or unreadable robots.txt forbids nothing
                rules[origin] = str(err) not in ("HTTP 401", "HTTP 403")
        rule = rules[origin]
        if not (rule if isinstance(rule, bool) else rule.can_fetch(target, token)):
            raise FetchError(f"robots.txt disallows {target}")

    allowed(url)
    return _read(_opener(allow_private, allowed, redirects), url, agent, deadline, max_bytes)


def discover(url: str, **fetch_kwargs: Any) -> list[Found]:
    """The sources ``url`` points to: from the URL alone when it is itself a board's, else from the
    page fetched with :func:`fetch_page` (raises :class:`FetchError`)."""
    founds = detect(url)
    if not founds:
        fetched = fetch_page(url, **fetch_kwargs)
        founds = detect(fetched.url, fetched.text)
    for found in founds:
        found.page = url
    return founds
