"""``jsonld``: career sites whose job pages carry schema.org ``JobPosting`` (JSON-LD or microdata).

Where pages come from: ``start_urls`` (fetched, then links followed), ``sitemap_urls`` (sitemaps,
sitemap indexes, or a ``robots.txt`` whose ``Sitemap:`` lines are read; Scrapy's SitemapSpider),
and, with ``robots_sitemaps``, the ``Sitemap:`` lines of each start URL's robots.txt. Links found
on fetched HTML pages are followed when they match ``allow`` (regular expressions searched in the
URL; none given: any link) and no ``deny``, on the hosts (and ports) of the start and sitemap URLs,
their subdomains and the source's ``allow_hosts`` only, up to ``DEPTH_LIMIT``; sitemap entries are
filtered the same way. A sitemap that cannot be read (not XML, or decompressing beyond the size
cap) is a failed request of the source. Every page is parsed by
:class:`crawler.pages.jsonld.JsonLdPage`; pages without a posting (indexes, navigation) are not
stored as raw inputs.

``complete=true`` declares that the crawl reaches every open posting of the site (a full sitemap,
say): after a run that finished with no failed request and no unreadable page, postings of this
site seen before but not in this run are marked closed (listing ``jsonld:<site>``, ``site``
defaulting to the first host).

    scrapy crawl jsonld -a sitemap_urls=https://careers.example.com/robots.txt -a 'allow=/jobs/\\d+'
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Iterable
from urllib.parse import urlsplit

import scrapy
from pydantic import Field, field_validator, model_validator
from scrapy.http import TextResponse
from scrapy.linkextractors import LinkExtractor
from scrapy.spiders import SitemapSpider
from scrapy.utils.gz import gzip_magic_number

from crawler.pages.jsonld import JsonLdPage
from crawler.safety import Origin, Refused, decompressed_too_large
from normalize.models import RawInput

from .webbase import Flag, Names, WebArgs, WebSpider


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
        self._allow = [re.compile(p) for p in args.allow]
        self._deny = [re.compile(p) for p in args.deny]
        # LinkExtractor's allow_domains compares host:port, which never matches a host with a port.
        self.links = LinkExtractor(allow=args.allow, deny=args.deny)

    def own_origins(self) -> list[Origin]:
        return [Origin.of_url(u, subdomains=True) for u in self.args.start_urls + self.args.sitemap_urls]

    async def start(self):
        for url in self.sitemap_urls:
            yield scrapy.Request(url, callback=self._parse_sitemap, errback=self.failed)
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
        try:
            requests = list(super()._parse_sitemap(response))
        except Exception as err:  # Scrapy's Sitemap raises StopIteration on a body that is not XML
            self.problem(response.url, f"unreadable sitemap: {type(err).__name__}: {err}".rstrip(": "))
            return
        for request in requests:
            yield request.replace(errback=self.failed)

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
