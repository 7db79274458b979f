"""The sources file: what ``jobcrawl crawl`` fetches, in TOML.

::

    contact = "https://example.org/jobcrawl-contact"   # optional: JOBCRAWL_CONTACT (User-Agent)

    [defaults]                  # optional: settings for every source (each source may override)
    max_requests = 2000         # stop a source's crawl after this many requests
    concurrency = 2             # requests in flight per host
    delay = 0.5                 # minimum seconds between requests to one host

    [sources.gitlab]            # the source's name: `jobcrawl crawl gitlab`
    spider = "greenhouse"       # greenhouse, lever, ashby, workable, smartrecruiters, recruitee, workday or jsonld
    boards = ["gitlab"]         # every other key is an argument of the spider
    company = "GitLab"

Source keys: ``spider`` (required), ``enabled`` (default true; ``--all`` skips disabled sources,
naming one still runs it), ``max_requests``, ``max_queued`` (requests read from sitemaps that may
wait in the queue at once, default 5000: the rest of a sitemap is read as the queue drains, so a
huge sitemap costs no memory), ``concurrency``, ``delay``, ``max_size_mb`` and
``warn_size_mb`` (response size cap and warning, also of decompressed bodies), ``allow_hosts``
(more ``host`` or ``host:port`` the source may fetch from, e.g. where its pages redirect),
``allow_private`` (its hosts may resolve to loopback, private or link-local addresses: a server on
your own network; only per source, never in ``[defaults]``), and ``settings`` (a table of Scrapy
settings, for anything else). Every other key is a spider argument, validated by the spider's
``Args`` model when the file is loaded, so a typo is a usage error before anything is fetched.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crawler.files import ConfigFileError, read_config_text
from crawler.web.safety import Origin
from crawler.suggest import did_you_mean

SOURCE_KEYS = {"spider", "enabled", "max_requests", "max_queued", "concurrency", "delay", "max_size_mb",
               "warn_size_mb", "allow_hosts", "allow_private", "settings"}
_SETTING_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
# Settings that only the source keys set (allow_private in [defaults] or `settings` would widen every source).
_KEY_ONLY_SETTINGS = {"JOBCRAWL_ALLOW_PRIVATE": "allow_private", "JOBCRAWL_ALLOW_HOSTS": "allow_hosts"}


class SourcesError(ValueError):
    """The sources file cannot be used: unreadable, invalid TOML, or a source that does not validate."""


class CrawlSettings(BaseModel):
    """Per-source settings (also the ``[defaults]`` table)."""

    model_config = ConfigDict(extra="forbid")

    max_requests: int | None = Field(None, ge=0, description="Requests after which the crawl stops (0: no cap).")
    max_queued: int | None = Field(None, ge=1, description="Requests read from sitemaps that may wait in the queue.")
    concurrency: int | None = Field(None, ge=1, description="Requests in flight per host.")
    delay: float | None = Field(None, ge=0, description="Minimum seconds between requests to one host.")
    max_size_mb: float | None = Field(None, gt=0, description="Responses larger than this (in MiB, after "
                                                             "decompression too) are refused (DOWNLOAD_MAXSIZE).")
    warn_size_mb: float | None = Field(None, gt=0, description="Responses larger than this are logged (DOWNLOAD_WARNSIZE).")
    settings: dict[str, Any] = Field(default_factory=dict, description="Any Scrapy setting.")

    def scrapy_settings(self) -> dict[str, Any]:
        """These settings as Scrapy setting names and values."""
        out: dict[str, Any] = {}
        if self.max_requests is not None:
            out["JOBCRAWL_MAX_REQUESTS"] = self.max_requests
        if self.max_queued is not None:
            out["JOBCRAWL_MAX_QUEUED"] = self.max_queued
        if self.concurrency is not None:
            out["CONCURRENT_REQUESTS_PER_DOMAIN"] = self.concurrency
        if self.delay is not None:
            out["DOWNLOAD_DELAY"] = self.delay  # also AutoThrottle's lower bound
        if self.max_size_mb is not None:
            out["DOWNLOAD_MAXSIZE"] = int(self.max_size_mb * 2**20)
        if self.warn_size_mb is not None:
            out["DOWNLOAD_WARNSIZE"] = int(self.warn_size_mb * 2**20)
        out.update(self.settings)
        return out


class Source(CrawlSettings):
    """One source: a spider and its arguments."""

    name: str
    spider: str
    enabled: bool = True
    allow_hosts: list[str] = Field(default_factory=list, description="More host or host:port to fetch from.")
    allow_private: bool = Field(False, description="The source's hosts may resolve to non-public addresses.")
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("allow_hosts")
    @classmethod
    def _hosts(cls, hosts: list[str]) -> list[str]:
        for host in hosts:
            Origin.parse(host)  # a ValueError names the entry
        return hosts

    def scrapy_settings(self) -> dict[str, Any]:
        out = super().scrapy_settings()
        if self.allow_hosts:
            out["JOBCRAWL_ALLOW_HOSTS"] = list(self.allow_hosts)
        if self.allow_private:
            out["JOBCRAWL_ALLOW_PRIVATE"] = True
        return out


class SourcesFile(BaseModel):
    """A loaded sources file."""

    path: Path
    contact: str | None = None
    defaults: CrawlSettings = Field(default_factory=CrawlSettings)
    sources: dict[str, Source] = Field(default_factory=dict)

    def select(self, names: list[str] | tuple[str, ...], *, all_enabled: bool = False) -> list[Source]:
        """The named sources, in the order named (or every enabled source); :class:`SourcesError` for an unknown name."""
        if all_enabled:
            return [s for s in self.sources.values() if s.enabled]
        unknown = [n for n in names if n not in self.sources]
        if unknown:
            known = ", ".join(self.sources) or "none"
            raise SourcesError(f"{self.path}: no source named {', '.join(unknown)} (sources: {known})")
        return [self.sources[n] for n in dict.fromkeys(names)]

    def settings_for(self, source: Source) -> dict[str, Any]:
        """Scrapy settings of a source: the defaults, then its own, then the contact."""
        out = {**self.defaults.scrapy_settings(), **source.scrapy_settings()}
        if self.contact:
            out.setdefault("JOBCRAWL_CONTACT", self.contact)
        return out


def _where(err: ValidationError) -> str:
    first = err.errors()[0]
    place = ".".join(str(p) for p in first["loc"])
    return f"{place}: {first['msg']}" if place else first["msg"]


ENV_VAR = "JOBCRAWL_SOURCES"
DEFAULT_NAME = "sources.toml"
EXAMPLE = "seeds/sources.toml"


def locate_sources(option: str | None, environ: dict[str, str], cwd: Path) -> Path:
    """The sources file to use: ``--sources`` (``option``), else ``$JOBCRAWL_SOURCES``, else ``./sources.toml``.

    A file named by the option or the variable must exist; :class:`SourcesError` otherwise, and when
    none is found, naming each place looked and suggesting the bundled example.
    """
    for given, where in ((option, "--sources"), (environ.get(ENV_VAR) or None, f"${ENV_VAR}")):
        if given is not None:
            path = Path(given)
            if not path.is_file():
                what = "is a folder" if path.is_dir() else "not a regular file" if path.exists() else "no such file"
                raise SourcesError(f"{where} {given}: {what} (try --sources {EXAMPLE}, the bundled example)")
            return path
    default = cwd / DEFAULT_NAME
    if default.is_file():
        return Path(DEFAULT_NAME)
    raise SourcesError(f"no sources file: --sources not given, ${ENV_VAR} not set, no {DEFAULT_NAME} in {cwd}; "
                       f"name one, e.g. --sources {EXAMPLE} (the bundled example)")


def load_sources(path: str | Path, spider_classes: dict[str, type] | None = None) -> SourcesFile:
    """Read and validate a sources file; raise :class:`SourcesError` naming the file, the source and the problem.

    ``spider_classes`` maps spider names to classes (default: the project's spiders); a spider is
    usable here when it has an ``Args`` model.
    """
    path = Path(path)
    try:
        data = tomllib.loads(read_config_text(path))
    except ConfigFileError as err:
        raise SourcesError(f"{path}: {err}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise SourcesError(f"{path}: not valid TOML: {err}") from None
    unknown = set(data) - {"contact", "defaults", "sources"}
    if unknown:
        raise SourcesError(f"{path}: unknown top-level key(s) {', '.join(sorted(unknown))} (contact, defaults, sources)")
    classes = spider_classes if spider_classes is not None else project_spiders()
    try:
        defaults = CrawlSettings(**data.get("defaults", {}))
    except (ValidationError, TypeError) as err:
        raise SourcesError(f"{path}: [defaults]: {_where(err) if isinstance(err, ValidationError) else err}") from None
    _check_settings(f"{path}: [defaults]", defaults.settings)
    sources: dict[str, Source] = {}
    for name, table in (data.get("sources") or {}).items():
        sources[name] = _source(path, name, table, classes)
    contact = data.get("contact")
    if contact is not None and not isinstance(contact, str):
        raise SourcesError(f"{path}: contact must be a string")
    return SourcesFile(path=path, contact=contact, defaults=defaults, sources=sources)


def _source(path: Path, name: str, table: Any, classes: dict[str, type]) -> Source:
    where = f"{path}: source {name}"
    if not isinstance(table, dict):
        raise SourcesError(f"{where}: must be a table ([sources.{name}])")
    spider = table.get("spider")
    cls = classes.get(spider) if isinstance(spider, str) else None
    if cls is None or not hasattr(cls, "Args"):
        usable = sorted(n for n, c in classes.items() if hasattr(c, "Args"))
        key = next((k for k, v in table.items() if spider is None and isinstance(v, str) and v in usable), None)
        hint = (f"; {key} = {table[key]!r} names one: write spider = {table[key]!r}" if key
                else did_you_mean(spider, usable) if isinstance(spider, str) else "")
        raise SourcesError(f"{where}: spider must be one of {', '.join(usable)} (got {spider!r}){hint}")
    own = {k: v for k, v in table.items() if k in SOURCE_KEYS}
    args = {k: v for k, v in table.items() if k not in SOURCE_KEYS}
    try:
        source = Source(name=name, args=args, **own)
        cls.Args(**args)
    except ValidationError as err:
        raise SourcesError(f"{where}: {_where(err)}") from None
    _check_settings(where, source.settings)
    return source


def _check_settings(where: str, settings: dict[str, Any]) -> None:
    bad = [k for k in settings if not _SETTING_NAME.fullmatch(k)]
    if bad:
        raise SourcesError(f"{where}: not a Scrapy setting name: {', '.join(bad)}")
    keyed = [k for k in settings if k in _KEY_ONLY_SETTINGS]
    if keyed:
        raise SourcesError(f"{where}: {keyed[0]} is set by the source key {_KEY_ONLY_SETTINGS[keyed[0]]}, "
                           "not in settings")


def project_spiders() -> dict[str, type]:
    """Spider name → class, from the project's SPIDER_MODULES."""
    from scrapy.spiderloader import SpiderLoader

    from crawler.settings import project_settings

    loader = SpiderLoader.from_settings(project_settings())
    return {name: loader.load(name) for name in loader.list()}
