"""Secrets out of messages: URLs and error texts shown, logged or stored without the credentials they carry.

:func:`redact_url` keeps what names a destination (scheme, host, port, the plain words of its path) and puts
:data:`REDACTED` for everything that may be a credential: the userinfo (``user:password@``), every query value,
the fragment, and each path segment that holds a known secret or looks like a token (:func:`looks_like_token`).
:func:`redact` does that to every URL in a text (an HTTP client's error message), then replaces every other
occurrence of a secret, as written or percent-encoded. Neither raises.
"""

from __future__ import annotations

import re
from typing import Iterable
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit

REDACTED = "…"
MIN_SECRET = 4
"""Shorter secrets are not searched for in free text (they would blank out ordinary words and numbers)."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()\[\]{}]+")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-+=.~%]{16,}")
_HEX = re.compile(r"[0-9A-Fa-f]{16,}")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_DELIMITERS = re.compile(r"[/?#@]")


def looks_like_token(text: str) -> bool:
    """A long random-looking string: 16+ hex digits (or digits), a run of 16+ letters and digits mixing two of
    lower case, upper case and digits, or 24+ base64 characters mixing all three."""
    if not _TOKEN_CHARS.fullmatch(text):
        return False
    if _HEX.fullmatch(text):
        return True
    classes = sum(bool(re.search(p, text)) for p in ("[a-z]", "[A-Z]", "[0-9]"))
    runs = (r for r in _ALNUM_RUN.findall(text) if sum(bool(re.search(p, r)) for p in ("[a-z]", "[A-Z]", "[0-9]")) >= 2)
    return any(True for _ in runs) or (len(text) >= 24 and classes == 3)


def url_secrets(url: str) -> set[str]:
    """What :func:`redact_url` hides of ``url``, as written and decoded: userinfo parts, query values, the fragment,
    token-like path segments."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return {url}
    userinfo, at, _ = parts.netloc.rpartition("@")
    found = set(userinfo.split(":", 1)) | {userinfo} if at else set()
    for pair in parts.query.split("&"):
        key, eq, value = pair.partition("=")
        found.add(value if eq else key)
    found.add(parts.fragment)
    found.update(seg for seg in parts.path.split("/") if looks_like_token(seg))
    found |= {unquote_plus(s) for s in found}
    return {s for s in found if s}


def _variants(secrets: Iterable[str]) -> list[str]:
    """The secrets long enough to search for, as written and percent-encoded, longest first. A secret that is not a
    URL is also searched for by the pieces that ``/ ? # @`` cut it into (what is left of it in a URL it broke)."""
    out = set()
    for secret in secrets:
        pieces = [secret] if "://" in secret else [secret, *_DELIMITERS.split(secret)]
        for piece in pieces:
            if len(piece) >= MIN_SECRET:
                out |= {piece, quote(piece, safe=""), quote(piece), quote_plus(piece)}
    return sorted(out, key=lambda s: (-len(s), s))


def _replace(text: str, variants: list[str]) -> str:
    for secret in variants:
        text = text.replace(secret, REDACTED)
    return text


def _holds(segment: str, variants: list[str]) -> bool:
    return looks_like_token(segment) or looks_like_token(unquote(segment)) or any(
        s in segment or s in unquote(segment) for s in variants)


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """``url`` with its userinfo, query values, fragment and the path segments that hold one of ``secrets`` or look
    like a token replaced by ``…``, then any other occurrence of a secret (a host made of one). An ``@`` after the
host part ends the userinfo there: a ``/ ? #`` left unencoded in a password cannot show the rest of it.

    >>> redact_url("https://bot:pw@hooks.example.org:8443/services/T0/aB3dE5fG7hJ9kL1m?token=x&v=2#frag")
    'https://…@hooks.example.org:8443/services/T0/…?token=…&v=…#…'
    """
    variants = _variants(secrets)
    try:
        parts = urlsplit(url)
        scheme, sep, rest = url.partition("://")
        if sep and "@" in rest and "@" not in parts.netloc:  # a / ? # in a user:password@ moved it out of the host
            parts = urlsplit(f"{scheme}://{REDACTED}@{rest.rpartition('@')[2]}")
    except ValueError:
        return REDACTED
    if not parts.scheme or not parts.netloc:
        return _replace(url, _variants(url_secrets(url) | set(secrets)))
    _, at, hostport = parts.netloc.rpartition("@")
    shown = f"{parts.scheme}://{REDACTED + '@' if at else ''}{hostport}"
    shown += "/".join(REDACTED if seg and _holds(seg, variants) else seg for seg in parts.path.split("/"))
    if parts.query:
        shown += "?" + "&".join(f"{key}={REDACTED}" if eq else REDACTED if key else ""
                                for key, eq, _ in (pair.partition("=") for pair in parts.query.split("&")))
    if parts.fragment:
        shown += "#" + REDACTED
    return _replace(shown, variants)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every URL in it shown by :func:`redact_url`, and every occurrence of a secret of ``secrets`` or
    of those URLs (as written or percent-encoded; :data:`MIN_SECRET` characters or more) replaced by ``…``."""
    secrets = set(secrets)
    urls = _URL.findall(text)
    for url in urls:
        secrets |= url_secrets(url)
    variants = _variants(secrets)
    pieces = _URL.split(text)
    out = [_replace(pieces[0], variants)]
    for url, rest in zip(urls, pieces[1:]):
        out.append(redact_url(url, secrets))
        out.append(_replace(rest, variants))
    return "".join(out)
