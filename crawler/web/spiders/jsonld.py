"""``jsonld``: career sites whose job pages carry schema.org ``JobPosting`` (JSON-LD or microdata).

Where pages come from: ``start_urls`` (fetched, then links followed), ``sitemap_urls`` (sitemaps,
sitemap indexes, or a ``robots.txt`` whose ``Sitemap:`` lines are read; Scrapy's SitemapSpider),
and, with ``robots_sitemaps``, the ``Sitemap:`` lines of each start URL's robots.txt. Links found
on fetched HTML pages are followed when they match ``allow`` (regular expressions searched in the
URL; none given: any link) and no ``deny``, on the hosts (and ports) of the start and sitemap URLs,
their subdomains and the source's ``allow_hosts`` only, up to ``DEPTH_LIMIT``; sitemap entries are
filtered the same way. A sitemap that cannot be read (not XML, or decompressing beyond the size
cap) is a failed request of the source. Sitemaps are read as a stream, as the request queue has
room: at most ``JOBCRAWL_MAX_QUEUED`` (a source's ``max_queued``) requests wait, never more than the
request cap has left (plus the one it refuses, which ends the crawl); the sitemaps an index lists
are read one at a time (in a distributed run, a listed sitemap that another worker fetched releases
its lister once this worker runs idle), and the crawl ends once every sitemap is read. Stats:
``jobcrawl/sitemap/urls_read`` (entries read) and ``jobcrawl/sitemap/queue_peak`` (the most
requests queued after a read). Every page is parsed by
:class:`crawler.web.pages.jsonld.JsonLdPage`; pages without a posting (indexes, navigation) are not
stored as raw inputs.

``complete=true`` declares that the crawl reaches every open posting of the site (a full sitemap,
say): after a run that finished with no failed request and no unreadable page, postings of this
site seen before but not in this run are marked closed (listing ``jsonld:<site>``, ``site``
defaulting to the first host).

    scrapy crawl jsonld -a sitemap_urls=https://careers.example.com/robots.txt -a 'allow=/jobs/\\d+'
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Iterator
from urllib.parse import urlsplit

import scrapy
from pydantic import Field, field_validator, model_validator
from scrapy import signals
from scrapy.exceptions import DontCloseSpider
from scrapy.http import TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import SitemapSpider
from scrapy.utils.gz import gzip_magic_number
from scrapy.utils.sitemap import Sitemap, sitemap_urls_from_robots

from crawler.web.pages.jsonld import JsonLdPage
from crawler.web.safety import Origin, Refused, decompressed_too_large
from normalize.models import RawInput

from crawler.web.spiders.webbase import Flag, Names, WebArgs, WebSpider


class JsonLdArgs(WebArgs):
    start_urls: Names = Field(default_factory=list, description="Pages to start from (career index pages).")
    sitemap_urls: Names = Field(default_factory=list, description="Sitemaps, sitemap indexes or robots.txt URLs.")
    robots_sitemaps: Flag = Field(False, description="Also read the Sitemap: lines of each start URL's robots.txt.")
    allow: Names = Field(default_factory=list, description="Regexes: follow links and sitemap entries matching one (none: all).")
    deny: Names = Field(default_factory=list, description="Regexes: never follow links or sitemap entries matching one.")
    follow: Flag = Field(True, description="Follow links found on fetched pages.")
    complete: Flag = Field(False, description="The crawl reaches every open posting of the site: close the missing ones.")
    site: str | None = Field(None, description="Name of the site's listing for closing; default the first host.")

    @field_validator("start_urls", "sitemap_urls")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"not an http(s) URL: {url!r}")
        return urls

    @field_validator("allow", "deny")
    @classmethod
    def _regexes(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as err:
                raise ValueError(f"bad regular expression {pattern!r}: {err}") from None
        return patterns

    @model_validator(mode="after")
    def _somewhere(self) -> JsonLdArgs:
        if not self.start_urls and not self.sitemap_urls:
            raise ValueError("give start_urls or sitemap_urls")
        return self

    def hosts(self) -> list[str]:
        """Hosts of the start and sitemap URLs, in order, once each."""
        return list(dict.fromkeys(urlsplit(u).hostname or "" for u in self.start_urls + self.sitemap_urls))


@dataclass(eq=False)
class SitemapReading:
    """A sitemap, sitemap index or robots.txt being read: its entries not read yet, as (URL, is a sitemap)."""

    url: str
    request: scrapy.Request
    entries: Iterator[tuple[str, bool]]
    depth: int
    token: int
    child: bool = False
    """A sitemap it lists is being fetched: that one is read first."""


class JsonLdSpider(WebSpider, SitemapSpider):
    name = "jsonld"
    Args = JsonLdArgs
    args: JsonLdArgs
    # SitemapSpider reads these in __init__; set per instance from the arguments before it runs.
    sitemap_rules: ClassVar[list] = []

    def configure(self) -> None:
        args = self.args
        self.allowed_domains = args.hosts()
        self.sitemap_urls = list(args.sitemap_urls)
        if args.robots_sitemaps:
            origins = dict.fromkeys(f"{urlsplit(u).scheme}://{urlsplit(u).netloc}" for u in args.start_urls)
            self.sitemap_urls += [origin + "/robots.txt" for origin in origins]
        self.sitemap_rules = [("", "parse_html")]
        self.reading: list[SitemapReading] = []
        self._sitemaps_seen = set(self.sitemap_urls)
        self._tokens = itertools.count(1)
        self._allow = [re.compile(p) for p in args.allow]
        self._deny = [re.compile(p) for p in args.deny]
        # LinkExtractor's allow_domains compares host:port, which never matches a host with a port.
        self.links = LinkExtractor(allow=args.allow, deny=args.deny)

    def own_origins(self) -> list[Origin]:
        return [Origin.of_url(u, subdomains=True) for u in self.args.start_urls + self.args.sitemap_urls]

    @property
    def still_reading(self) -> set[scrapy.Request]:
        """The requests of the sitemaps being read (a distributed run keeps their leases: crawler/distributed/)."""
        return {reading.request for reading in self.reading}

    @classmethod
    def from_crawler(cls, crawler, *args, **kwargs):
        spider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider._idle, signal=signals.spider_idle)
        return spider

    async def start(self):
        for url in self.sitemap_urls:  # read again on a resumed crawl: what was left unread is in no queue
            yield scrapy.Request(url, callback=self._parse_sitemap, errback=self._sitemap_failed, dont_filter=True)
        for url in self.args.start_urls:
            yield scrapy.Request(url, callback=self.parse_html, errback=self.failed)

    def wanted(self, url: str) -> bool:
        """The URL matches an ``allow`` pattern (or none was given) and no ``deny`` pattern."""
        return (not self._allow or any(p.search(url) for p in self._allow)) and not any(p.search(url) for p in self._deny)

    def sitemap_filter(self, entries: Iterable[dict[str, Any]]) -> Iterable[dict[str, Any]]:
        """Entries on the source's hosts; page entries of a urlset must also pass ``allow``/``deny``."""
        urlset = getattr(entries, "type", "urlset") == "urlset"
        for entry in entries:
            loc = entry.get("loc") or ""
            if self.on_site(loc) and (not urlset or self.wanted(loc)):
                yield entry

    def _parse_sitemap(self, response):
        """Open the sitemap for reading (its entries are scheduled by :meth:`feed`)."""
        self._child_done(response.request)
        entries = self._sitemap_entries(response)
        if entries is not None:
            self.reading.append(SitemapReading(response.url, response.request, entries,
                                               response.meta.get("depth", 0), next(self._tokens)))
        self.feed()
        return ()

    def _sitemap_entries(self, response) -> Iterator[tuple[str, bool]] | None:
        """The entries of a sitemap response, read lazily; None (reported) when it is no sitemap."""
        if response.url.endswith("/robots.txt"):
            return ((url, True) for url in sitemap_urls_from_robots(response.body, base_url=response.url))
        body = self._get_sitemap_body(response)
        if not body:
            return None
        try:
            sitemap = Sitemap(body)
        except Exception as err:  # Scrapy's Sitemap raises StopIteration on a body that is not XML
            self.problem(response.url, f"unreadable sitemap: {type(err).__name__}: {err}".rstrip(": "))
            return None
        entries = self.sitemap_filter(sitemap)
        if sitemap.type == "sitemapindex":
            return ((loc, True) for loc in self._get_urls_from_sitemapindex(entries))
        if sitemap.type == "urlset":
            return ((loc, False) for loc, _ in self._get_urls_and_callbacks_from_urlset(entries))
        self.logger.warning("not a sitemap (root element %s): %s", sitemap.type, response.url)
        return None

    def feed(self) -> int:
        """Schedule requests for the entries of the sitemaps being read while the queue has room (see the
        module docstring); the newest sitemap first. Returns how many were scheduled."""
        engine = self.crawler.engine
        if not self.reading or engine is None or not engine.running or engine.scheduler is None:
            return 0
        cap = getattr(self.crawler, "jobcrawl_request_cap", None)
        if cap is not None and cap.closing:
            return 0
        limit = self.settings.getint("JOBCRAWL_MAX_QUEUED")
        if cap is not None:
            limit = min(limit, cap.left() + 1)
        room, scheduled = limit - len(engine.scheduler), 0
        while scheduled < room:
            reading = next((r for r in reversed(self.reading) if not r.child), None)
            if reading is None:
                break
            try:
                url, is_sitemap = next(reading.entries)
            except StopIteration:
                self.reading.remove(reading)
                continue
            except Exception as err:  # lxml on a body broken past its start
                self.problem(reading.url, f"unreadable sitemap: {type(err).__name__}: {err}".rstrip(": "))
                self.reading.remove(reading)
                continue
            self.crawler.stats.inc_value("jobcrawl/sitemap/urls_read")
            request = self._entry_request(reading, url, is_sitemap)
            if request is not None:
                engine.crawl(request)
                scheduled += 1
        if scheduled:
            self.crawler.stats.max_value("jobcrawl/sitemap/queue_peak", len(engine.scheduler))
        return scheduled

    def _entry_request(self, reading: SitemapReading, url: str, is_sitemap: bool) -> scrapy.Request | None:
        depth = reading.depth + 1
        if not is_sitemap:
            return scrapy.Request(url, callback=self.parse_html, errback=self.failed, meta={"depth": depth})
        limit = self.settings.getint("DEPTH_LIMIT")
        if url in self._sitemaps_seen or 0 < limit < depth:  # a sitemap listing itself, or nested without end
            return None
        self._sitemaps_seen.add(url)
        reading.child = True
        return scrapy.Request(url, callback=self._parse_sitemap, errback=self._sitemap_failed, dont_filter=True,
                              meta={"depth": depth, "jobcrawl_sitemap_of": reading.token})

    def _child_done(self, request) -> None:
        """A sitemap listed by a sitemap being read was fetched (or failed): read the lister on."""
        token = request.meta.get("jobcrawl_sitemap_of")
        for reading in self.reading:
            if reading.token == token:
                reading.child = False

    def _sitemap_failed(self, failure) -> None:
        self._child_done(failure.request)
        self.failed(failure)

    def failed(self, failure) -> None:
        super().failed(failure)
        self.feed()

    def _idle(self, spider) -> None:
        """Nothing in flight: a listed sitemap whose response never came here (dropped, or fetched by
        another worker) blocks its lister no more; the crawl stays open while sitemaps have entries."""
        for reading in self.reading:
            reading.child = False
        if self.feed():
            raise DontCloseSpider

    def _get_sitemap_body(self, response) -> bytes | None:
        """SitemapSpider's, but a response that is no sitemap, or a gzipped sitemap beyond the size cap,
        is reported instead of being ignored with a log line."""
        body = super()._get_sitemap_body(response)
        if body is not None:
            return body
        if gzip_magic_number(response):  # SitemapSpider gives up on a gzip body only at the size cap
            cap = response.meta.get("download_maxsize", self._max_size)
            self.crawler.stats.inc_value("jobcrawl/oversize")
            self.problem(response.url, f"{Refused.__name__}: {decompressed_too_large(len(response.body), cap)}")
        else:
            kind = (response.headers.get("Content-Type") or b"no Content-Type").decode("latin-1")
            self.problem(response.url, f"not a sitemap ({kind})")
        return None

    def parse_html(self, response):
        self.feed()
        if not isinstance(response, TextResponse):
            self.crawler.stats.inc_value("jobcrawl/skipped_not_text")
            return
        yield from self.parse_page(response, JsonLdPage)
        if self.args.follow:
            for link in self.links.extract_links(response):
                if self.on_site(link.url):
                    yield scrapy.Request(link.url, callback=self.parse_html, errback=self.failed)

    def keep_input(self, raw: RawInput) -> bool:
        """Pages without postings (indexes, navigation) are not stored, unless they failed to parse."""
        return raw.postings > 0 or raw.status != "parsed"

    def seen(self, keys: list[str], raw: RawInput | None) -> None:
        book = self.book
        book.setdefault("site_keys", []).extend(keys)
        if raw is not None and raw.status != "parsed":
            book["bad_pages"] = book.get("bad_pages", 0) + 1

    def closing_listings(self, reason: str) -> dict[str, list[str]]:
        listings = super().closing_listings(reason)
        book = self.book
        if self.args.complete and reason == "finished" and not book["errors"] and not book.get("bad_pages"):
            listings[f"jsonld:{self.args.site or self.allowed_domains[0]}"] = list(dict.fromkeys(book.get("site_keys", [])))
        return listings
