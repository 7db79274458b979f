"""What a served instance accepts beyond reading: the writable canned queries and the MCP endpoint.

A local server that writes is a target for any web page its user opens: a cross-site form post, or
a page whose domain is made to resolve to 127.0.0.1 (DNS rebinding). Every request that can write
(a POST to a writable canned query) and every request to ``/-/mcp`` must therefore come from the
served address: its ``Host`` names it (on loopback: ``localhost``, ``127.0.0.1`` or ``[::1]``; on
another address: that address, this machine's name or any IP address, as no rebinding sends one),
with the served port; an ``Origin``, when sent, is that same host (``http`` or ``https``), or ``null``
when the browser says the request is same-origin (``Sec-Fetch-Site``: Datasette's pages have a
no-referrer policy, under which Chromium sends a form's Origin as ``null``); a ``Sec-Fetch-Site`` of
another site is refused whatever the Origin. Anything else is answered 403 with one line saying why
(:meth:`Access.forged`).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
MCP_PATH = "/-/mcp"
MCP_METHODS = ("GET", "POST", "DELETE")  # the Streamable HTTP transport's


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def is_local(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost`` (only this machine can connect)."""
    address = _ip(host.strip("[]"))
    return host.lower() == "localhost" or (address is not None and address.is_loopback)


def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header (or an origin's netloc) as (lower-case name, port); None when malformed."""
    try:
        parts = urlsplit("//" + value)
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


@dataclass(frozen=True)
class Access:
    """The served address (``host``, ``port``: None when not served on a socket, as in tests, where any
    port is taken), whether ``/-/mcp`` answers (``mcp``) and why writes are refused (``refused``:
    None when allowed)."""

    host: str = "127.0.0.1"
    port: int | None = None
    mcp: bool = True
    refused: str | None = None

    @classmethod
    def of(cls, host: str, port: int | None, *, immutable: bool, allow_writes: bool, mcp: bool) -> Access:
        """What ``jobcrawl serve`` allows: writes on loopback, elsewhere only with ``allow_writes``;
        never on a file opened immutable."""
        refused = None
        if immutable:
            refused = "Writes are off: the database is served immutable (--immutable, or a file that cannot be written)."
        elif not (is_local(host) or allow_writes):
            refused = f"Writes are off: the server listens on {host}, not on this machine only (--allow-writes allows them)."
        return cls(host=host, port=port, mcp=mcp, refused=refused)

    def _host_allowed(self, name: str) -> bool:
        if name in LOCAL_NAMES or name == self.host.lower().strip("[]"):
            return True
        if is_local(self.host):
            return False
        return _ip(name) is not None or name in {socket.gethostname().lower(), socket.getfqdn().lower()}

    def forged(self, headers: dict[bytes, bytes]) -> str | None:
        """Why a request with these headers does not come from the served address (None when it does)."""
        raw_host = headers.get(b"host", b"").decode("latin-1")
        host = split_host(raw_host)
        if host is None or not host[0] or not self._host_allowed(host[0]) or (
                self.port is not None and (host[1] or 80) != self.port):
            return f"Refused: the Host header {raw_host!r} is not the address this server is served at."
        origin = headers.get(b"origin", b"").decode("latin-1")
        fetched_from = headers.get(b"sec-fetch-site", b"").decode("latin-1")
        if fetched_from in ("cross-site", "same-site"):
            return f"Refused: a request from another site (Sec-Fetch-Site {fetched_from})."
        if origin == "null" and fetched_from == "same-origin":
            return None  # a page of this server under Datasette's no-referrer policy: its browser vouches for it
        if origin:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or split_host(parts.netloc) != host:
                return f"Refused: a request from another site (Origin {origin!r})."
        return None
