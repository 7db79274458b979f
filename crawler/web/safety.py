"""What the crawler refuses to fetch or read, and why it cannot be talked into it (see docs/safety.md).

Two independent checks guard every request a web spider makes:

- **The source's hosts** (:class:`OriginMiddleware`, first of the downloader middlewares): a request,
  each redirect hop (a redirect is a new request that passes every middleware again) and each
  robots.txt fetch must go to one of the source's hosts and ports (its ``base_url``, start or
  sitemap URLs, plus ``allow_hosts``) over http(s); anything else is refused (stat
  ``jobcrawl/refused/host``). ``dont_filter`` does not exempt a request.
- **The address** (:class:`SafeResolver`, Scrapy's ``TWISTED_DNS_RESOLVER``): the connections of the
  HTTP download handlers resolve their host name through the reactor's name resolver, so the check
  sits there, on the very addresses the connection will use: a DNS answer (or an IP literal) that
  is loopback, private (RFC 1918), link-local (169.254.0.0/16, cloud metadata), unique-local,
  unspecified, multicast or otherwise not public is dropped, so nothing is connected to; a
  redirect, a DNS answer that changes between two lookups (rebinding) or an IPv6 spelling of an IPv4
  address (mapped, 6to4, NAT64, Teredo) cannot get past it. Only the hosts of a source that sets
  ``allow_private = true`` may resolve to such addresses. One resolver serves every crawl of the
  process, so for a source without it OriginMiddleware checks an IP address itself, and resolves
  and checks a host name that a source with it shares, before the request leaves.
  :class:`DownloadLimitsMiddleware` names the refusal (stat ``jobcrawl/refused/private``) instead of
  Twisted's bare DNS error, and no retry is made.

Responses are capped (``DOWNLOAD_MAXSIZE``, per source ``max_size_mb``): a body announced or received
beyond the cap, or one that decompresses beyond it (:class:`CappedCompressionMiddleware`; a gzipped
sitemap is checked by the jsonld spider) is refused: stat ``jobcrawl/oversize``. A redirect back to
a URL of its own chain is a loop (:class:`LoopCheckMixin`, stat ``jobcrawl/redirect_loops``;
a chain longer than ``REDIRECT_MAX_TIMES``: ``jobcrawl/redirects_exceeded``). A robots.txt that
answers a server error (5xx, or 429) or cannot be fetched at all disallows the whole host for the
run (RFC 9309 §2.3.1.4; :class:`RobotsRfcMiddleware`, stats ``jobcrawl/robots/unreadable`` per
host and ``jobcrawl/refused/robots`` per page); a 4xx robots.txt allows everything.

Every refusal is a :class:`Refused` exception (an ``IgnoreRequest``): the web spiders report it as a
failed request of the source, so the run's status says so and no listing is closed on its account.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request, signals
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import CannotResolveHostError, DownloadCancelledError, IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.resolver import CachingThreadedResolver, HostResolution
from scrapy.utils._compression import _DecompressionMaxSizeExceeded  # what HttpCompressionMiddleware raises from
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.address import IPv4Address, IPv6Address
from twisted.internet.defer import Deferred
from twisted.internet.error import DNSLookupError
from twisted.internet.interfaces import IHostnameResolver, IResolutionReceiver
from w3lib.url import canonicalize_url, safe_url_string
from zope.interface import implementer, provider

logger = logging.getLogger(__name__)

DEFAULT_PORTS = {"http": 80, "https": 443}
TWISTED_HANDLERS = {
    "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler",
    "scrapy.core.downloader.handlers.http2.H2DownloadHandler",
}
"""Download handlers whose connections resolve names through the reactor (and so through SafeResolver)."""


class Refused(IgnoreRequest):
    """A request or response the crawler refuses on purpose; reported as a failed request of the source.
    ``cause``: the error behind the refusal, when there is one (robots.txt unreachable: a DNS or connection error)."""

    def __init__(self, *args, cause: BaseException | None = None):
        super().__init__(*args)
        self.cause = cause


# --------------------------------------------------------------------------- addresses

_RFC1918 = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = [ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48")]


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, NAT64, Teredo client), if any."""
    if ip.ipv4_mapped or ip.sixtofour:
        return ip.ipv4_mapped or ip.sixtofour
    if any(ip in net for net in _NAT64):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.teredo[1] if ip.teredo else None


def address_problem(address: str) -> str | None:
    """Why ``address`` (an IP address) must not be connected to, or None for a public unicast address."""
    ip = ipaddress.ip_address(address.strip("[]").split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and (inner := _embedded_ipv4(ip)) is not None:
        ip = inner
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip in _UNIQUE_LOCAL:
        return "unique-local"
    if any(ip in net for net in _RFC1918):
        return "private"
    if ip.is_multicast:
        return "multicast"
    if not ip.is_global or getattr(ip, "is_site_local", False):
        return "not public"
    return None


def ip_literal(host: str) -> str | None:
    """``host`` as an IP address text when it is one (``[::1]`` → ``::1``), else None."""
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def normal_host(host: str) -> str:
    """A host name as URLs of requests spell it: lower-case, IDNA-encoded, no trailing dot, an IP
    address in its short form without brackets."""
    host = host.strip("[]").rstrip(".").lower()
    literal = ip_literal(host)
    if literal is not None:
        return literal
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


# --------------------------------------------------------------------------- hosts


@dataclass(frozen=True)
class Origin:
    """A host and port a source may fetch from. ``port`` None: the scheme's default (80 or 443)."""

    host: str
    port: int | None = None
    subdomains: bool = False

    @classmethod
    def of_url(cls, url: str, *, subdomains: bool = False) -> Origin:
        """The origin of an http(s) URL (ValueError for anything else)."""
        scheme, host, port = split_url(url)
        if scheme not in DEFAULT_PORTS or not host:
            raise ValueError(f"not an http(s) URL: {url!r}")
        return cls(host, port, subdomains)

    @classmethod
    def parse(cls, text: str) -> Origin:
        """``host`` or ``host:port`` (``[::1]:8080`` for IPv6); ValueError when it is neither."""
        if "/" in text or not text.strip():
            raise ValueError(f"not a host or host:port: {text!r}")
        return cls.of_url(f"http://{text.strip()}")

    def admits(self, host: str, port: int | None) -> bool:
        """Whether a request to ``host`` on ``port`` (None: the default port) is on this origin."""
        on_host = host == self.host or (self.subdomains and host.endswith("." + self.host))
        return on_host and port == self.port

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def split_url(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL: host lower-case and IDNA-encoded, port None when it is the
    scheme's default. ValueError for an unreadable port."""
    parts = urlsplit(safe_url_string(url))
    port = parts.port
    return parts.scheme, normal_host(parts.hostname or ""), None if port == DEFAULT_PORTS.get(parts.scheme) else port


# --------------------------------------------------------------------------- DNS

_PRIVATE_OK: set[Origin] = set()
"""Origins of this process's crawls that may resolve to non-public addresses (their source sets
``allow_private``): the name resolver serves every crawl of the process, so it keeps them here."""


def allow_private(origins) -> None:
    """Let these origins resolve to non-public addresses (a source with ``allow_private``)."""
    _PRIVATE_OK.update(origins)


def private_allowed(host: str, port: int) -> bool:
    """Whether a source with ``allow_private`` lets ``host`` (connected to on ``port``) resolve anywhere."""
    port = None if port in DEFAULT_PORTS.values() else port
    return any(origin.admits(host, port) for origin in _PRIVATE_OK)


@implementer(IResolutionReceiver)
class _PublicOnly:
    """Passes on the public addresses of a resolution; records the others in ``refusals``."""

    def __init__(self, receiver, host: str, refusals: dict[str, str]):
        self.receiver, self.host, self.refusals = receiver, host, refusals
        self.passed, self.dropped = 0, []

    def resolutionBegan(self, resolution) -> None:
        self.receiver.resolutionBegan(resolution)

    def addressResolved(self, address) -> None:
        problem = address_problem(address.host)
        if problem is None:
            self.passed += 1
            self.receiver.addressResolved(address)
        else:
            self.dropped.append(f"{address.host} ({problem})")

    def resolutionComplete(self) -> None:
        if self.dropped and not self.passed:
            self.refusals[self.host] = ", ".join(self.dropped)
        else:
            self.refusals.pop(self.host, None)
        self.receiver.resolutionComplete()


@implementer(IHostnameResolver)
class SafeResolver:
    """The process's name resolver (``TWISTED_DNS_RESOLVER``): Scrapy's caching resolver, whose
    answers pass only when public, unless the host belongs to a source that allows private ones.

    Refused names are kept in ``refusals`` (host → the addresses and why) for
    :class:`DownloadLimitsMiddleware` to name the failure.
    """

    def __init__(self, reactor, upstream: CachingThreadedResolver):
        self.reactor, self.upstream = reactor, upstream
        self.refusals: dict[str, str] = {}
        self.names = None  # the upstream resolver as an IHostnameResolver, once installed

    @classmethod
    def from_crawler(cls, crawler, reactor) -> SafeResolver:
        return cls(reactor, CachingThreadedResolver.from_crawler(crawler, reactor))

    def install_on_reactor(self) -> None:
        self.upstream.install_on_reactor()
        self.names = self.reactor.nameResolver
        self.reactor.installNameResolver(self)  # reactor.resolver (connectTCP by name) comes here too

    def addresses(self, host: str, port: int) -> Deferred:
        """The upstream resolver's answers for ``host`` (a Deferred list of address texts), unchecked."""
        done, found = Deferred(), []

        @provider(IResolutionReceiver)
        class Collect:
            resolutionBegan = staticmethod(lambda resolution: None)
            addressResolved = staticmethod(lambda address: found.append(address.host))
            resolutionComplete = staticmethod(lambda: done.callback(found))

        self.names.resolveHostName(Collect, host, port)
        return done

    def resolveHostName(self, resolutionReceiver, hostName: str, portNumber: int = 0, addressTypes=None,
                        transportSemantics: str = "TCP"):
        host = normal_host(hostName)
        if private_allowed(host, portNumber):
            return self.names.resolveHostName(resolutionReceiver, hostName, portNumber, addressTypes,
                                              transportSemantics)
        receiver = _PublicOnly(resolutionReceiver, host, self.refusals)
        literal = ip_literal(host)
        if literal is None:
            return self.names.resolveHostName(receiver, hostName, portNumber, addressTypes, transportSemantics)
        # An IP address needs no lookup (the threaded resolver cannot even read an IPv6 one).
        resolution = HostResolution(hostName)
        receiver.resolutionBegan(resolution)
        address_type = IPv6Address if ":" in literal else IPv4Address
        receiver.addressResolved(address_type("TCP", literal, portNumber))
        receiver.resolutionComplete()
        return resolution


def installed_resolver() -> SafeResolver | None:
    """The reactor's name resolver when it is a :class:`SafeResolver`."""
    from twisted.internet import reactor

    resolver = getattr(reactor, "nameResolver", None)
    return resolver if isinstance(resolver, SafeResolver) else None


# --------------------------------------------------------------------------- downloader middlewares


class OriginMiddleware:
    """Refuses a web spider's request to anything but the source's hosts (see the module docstring).

    The hosts: the spider's ``origins()`` (its URLs) and ``JOBCRAWL_ALLOW_HOSTS``. With
    ``JOBCRAWL_ALLOW_PRIVATE`` they may also resolve to private addresses: registered for the
    :class:`SafeResolver` when the crawler is built, before any crawl of the process sends a request.
    Without a SafeResolver in the reactor, or with an HTTP download handler that resolves names
    elsewhere, every request is refused.
    """

    def __init__(self, crawler):
        self.crawler, self.stats = crawler, crawler.stats
        self.origins: list[Origin] = crawler.spider.origins()
        self.allow_private = crawler.settings.getbool("JOBCRAWL_ALLOW_PRIVATE")
        if self.allow_private:
            allow_private(self.origins)
        handlers = crawler.settings.getwithbase("DOWNLOAD_HANDLERS")
        odd = {s: handlers.get(s) for s in DEFAULT_PORTS if handlers.get(s) not in TWISTED_HANDLERS}
        self.unsafe = (f"DOWNLOAD_HANDLERS sends {', '.join(odd)} through {', '.join(map(str, odd.values()))}, "
                       "whose name lookups crawler.web.safety.SafeResolver cannot check") if odd else None
        self.checked_resolver = False

    @classmethod
    def from_crawler(cls, crawler):
        if not hasattr(crawler.spidercls, "origins"):  # file spiders read local files only
            raise NotConfigured
        return cls(crawler)

    async def process_request(self, request: Request, spider=None) -> None:
        if not self.checked_resolver:  # installed when the reactor starts, after the crawlers are built
            self.checked_resolver = True
            if installed_resolver() is None:
                self.unsafe = self.unsafe or ("the reactor's DNS resolver is not crawler.web.safety.SafeResolver "
                                              "(TWISTED_DNS_RESOLVER)")
        if self.unsafe:
            raise Refused(f"no request is sent: {self.unsafe}")
        try:
            scheme, host, port = split_url(request.url)
        except ValueError:
            scheme, host, port = "", "", None
        if scheme in DEFAULT_PORTS and any(origin.admits(host, port) for origin in self.origins):
            if not self.allow_private:
                await self.check_address(host, port or DEFAULT_PORTS[scheme])
            return
        self.stats.inc_value("jobcrawl/refused/host")
        hops = request.meta.get("redirect_urls")
        raise Refused(f"{Origin(host, port) if host else request.url} is not a host of this source (its hosts: "
                      f"{', '.join(map(str, self.origins))}; more with allow_hosts)"
                      + (f", redirected from {hops[-1]}" if hops else ""))


    async def check_address(self, host: str, port: int) -> None:
        """For a source without ``allow_private``: the checks the resolver cannot make for it alone. The
        resolver lets a host name resolve anywhere once a source with ``allow_private`` lists it, so
        such a shared name is resolved and checked here first; an IP address is always checked here."""
        resolver = installed_resolver()
        if ip_literal(host):
            addresses, what = [host], ""
        elif resolver is not None and private_allowed(host, port):
            addresses, what = await maybe_deferred_to_future(resolver.addresses(host, port)), f"{host} resolves to "
        else:
            return
        bad = [f"{address} ({problem})" for address in addresses if (problem := address_problem(address))]
        if bad:
            self.stats.inc_value("jobcrawl/refused/private")
            raise Refused(private_refusal(what + ", ".join(bad)))


class DownloadLimitsMiddleware:
    """Closest to the network: names the downloads that failed on purpose, so they are not retried.

    A DNS failure of a name the :class:`SafeResolver` refused becomes a :class:`Refused` naming the
    addresses (``jobcrawl/refused/private``); a download cancelled because its body was announced or
    grew beyond ``DOWNLOAD_MAXSIZE`` becomes one naming the size (``jobcrawl/oversize``). Byte counts
    come from the ``headers_received`` and ``bytes_received`` signals.
    """

    def __init__(self, crawler):
        self.stats = crawler.stats
        self.maxsize = crawler.settings.getint("DOWNLOAD_MAXSIZE")
        self.received: dict[Request, int] = {}
        self.oversize: dict[Request, str] = {}
        crawler.signals.connect(self.headers_received, signal=signals.headers_received)
        crawler.signals.connect(self.bytes_received, signal=signals.bytes_received)

    @classmethod
    def from_crawler(cls, crawler):
        if not hasattr(crawler.spidercls, "origins"):
            raise NotConfigured
        return cls(crawler)

    def cap(self, request: Request) -> int:
        return request.meta.get("download_maxsize", self.maxsize)

    def headers_received(self, headers, body_length: int, request: Request, spider=None) -> None:
        cap = self.cap(request)
        if cap and isinstance(body_length, int) and body_length > cap:  # else Twisted's UNKNOWN_LENGTH
            self.oversize[request] = f"its Content-Length, {body_length} bytes, exceeds the size cap of {cap} bytes"

    def bytes_received(self, data: bytes, request: Request, spider=None) -> None:
        received = self.received[request] = self.received.get(request, 0) + len(data)
        cap = self.cap(request)
        if cap and received > cap and request not in self.oversize:
            self.oversize[request] = f"its body grew beyond the size cap of {cap} bytes"

    def forget(self, request: Request) -> str | None:
        self.received.pop(request, None)
        return self.oversize.pop(request, None)

    def process_response(self, request: Request, response: Response, spider=None) -> Response:
        self.forget(request)
        return response

    def process_exception(self, request: Request, exception: Exception, spider=None) -> None:
        oversize = self.forget(request)
        if oversize and isinstance(exception, DownloadCancelledError):
            self.stats.inc_value("jobcrawl/oversize")
            raise Refused(f"response too large: {oversize} (max_size_mb)") from exception
        if isinstance(exception, (CannotResolveHostError, DNSLookupError)):
            resolver = installed_resolver()
            host = urlsplit(request.url).hostname or ""
            why = resolver.refusals.get(normal_host(host)) if resolver else None
            if why:
                self.stats.inc_value("jobcrawl/refused/private")
                raise Refused(private_refusal(why if ip_literal(host) else f"{host} resolves to {why}")) from exception
        return None


def private_refusal(what: str) -> str:
    """The reason a request to a non-public address was refused."""
    return f"{what}, not a public address (allow_private = true in the source allows it)"


class CappedCompressionMiddleware(HttpCompressionMiddleware):
    """HttpCompressionMiddleware (which stops decompressing at ``DOWNLOAD_MAXSIZE`` since Scrapy 2.11)
    whose over-size responses are a counted :class:`Refused` instead of a bare ``IgnoreRequest``."""

    def process_response(self, request: Request, response: Response, spider=None):
        try:
            return super().process_response(request, response)
        except IgnoreRequest as err:
            if not isinstance(err.__cause__, _DecompressionMaxSizeExceeded):
                raise
            self.stats.inc_value("jobcrawl/oversize")
            cap = request.meta.get("download_maxsize", self._max_size)
            raise Refused(decompressed_too_large(len(response.body), cap)) from err


def decompressed_too_large(size: int, cap: int) -> str:
    """The reason a compressed body of ``size`` bytes was refused."""
    return f"response too large: its {size} bytes decompress to more than the size cap of {cap} bytes (max_size_mb)"


class LoopCheckMixin:
    """For the redirect middlewares: a redirect back to a URL of its own chain is a loop, refused at
    once (the duplicate filter would drop the repeat silently); a chain beyond ``REDIRECT_MAX_TIMES``
    is counted."""

    def _redirect(self, redirected: Request, request: Request, reason: Any) -> Request:
        chain = [*request.meta.get("redirect_urls", []), request.url]
        target = canonicalize_url(redirected.url)
        stats = self.crawler.stats
        if any(canonicalize_url(url) == target for url in chain):
            stats.inc_value("jobcrawl/redirect_loops")
            raise Refused("redirect loop: " + " → ".join([*chain, redirected.url]))
        try:
            return super()._redirect(redirected, request, reason)
        except IgnoreRequest:
            stats.inc_value("jobcrawl/redirects_exceeded")
            raise


class LoopCheckingRedirectMiddleware(LoopCheckMixin, RedirectMiddleware):
    """RedirectMiddleware with :class:`LoopCheckMixin`."""


class LoopCheckingMetaRefreshMiddleware(LoopCheckMixin, MetaRefreshMiddleware):
    """MetaRefreshMiddleware with :class:`LoopCheckMixin`."""


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception; a wrapped Twisted ``ResponseFailed`` (whose text is a list of
    Failure reprs) by the messages of its reasons."""
    reasons = getattr(exc, "reasons", None) or getattr(exc.__cause__, "reasons", None)
    message = "; ".join(r.getErrorMessage() for r in reasons) if reasons else str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


class Unreadable:
    """The robots.txt of a host that answered a server error or could not be fetched (``cause``: the network
    error, if that was it): disallows all."""

    def __init__(self, why: str, cause: BaseException | None = None):
        self.why = why
        self.cause = cause

    def allowed(self, url, user_agent) -> bool:
        return False


class RobotsRfcMiddleware(RobotsTxtMiddleware):
    """RobotsTxtMiddleware following RFC 9309 §2.3.1: a robots.txt answering 5xx (or 429), or
    unreachable (a network error, after the retries), disallows every page of its host for this run;
    a 4xx allows every page (as before). Each refused page is a :class:`Refused` naming the reason."""

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        if response.status >= 500 or response.status == 429:
            self._stats.inc_value("robotstxt/response_count")
            self._stats.inc_value(f"robotstxt/response_status_count/{response.status}")
            return self._unreadable(netloc, f"answered HTTP {response.status}")
        return await super()._parse_robots(response, netloc, request)

    def _robots_error(self, exc: Exception, netloc: str) -> None:
        if isinstance(exc, IgnoreRequest):  # not fetched on purpose (a refusal, the request cap): no rules
            return super()._robots_error(exc, netloc)
        self._unreadable(netloc, f"could not be fetched ({describe(exc)})", cause=exc)

    def _unreadable(self, netloc: str, why: str, cause: BaseException | None = None) -> None:
        self._stats.inc_value("jobcrawl/robots/unreadable")
        logger.warning("robots.txt of %s %s: every page of the host is disallowed until it can be read (RFC 9309)",
                       netloc, why)
        waiting = self._parsers[netloc]
        self._parsers[netloc] = Unreadable(why, cause)
        waiting.callback(self._parsers[netloc])

    def process_request_2(self, rp, request: Request) -> None:
        if isinstance(rp, Unreadable):
            self._stats.inc_value("jobcrawl/refused/robots")
            raise Refused(f"robots.txt of {urlsplit(request.url).netloc} {rp.why}: every page of the host is "
                          "disallowed until it can be read (RFC 9309)", cause=rp.cause)
        super().process_request_2(rp, request)
