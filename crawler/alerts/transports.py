"""Transports: one alert sent to one destination of the config (stdout, file, webhook, ntfy, SMTP e-mail).

The hosts are the user's own choice, so loopback and private addresses are allowed; every network call has a
timeout, and every attempt a deadline (:data:`ATTEMPT_TIMEOUTS` × its timeout: a server that drips its answer a
byte at a time resets a socket timeout forever); redirects are not followed and at most :data:`MAX_RESPONSE` bytes
of an answer are read. The key of an alert (webhook ``Idempotency-Key`` header and ``key`` field, e-mail
``Message-ID``, file ``key``) is the same when it is sent again, so a receiver can drop the duplicate.

**Secrets stay in the config.** A failed delivery is reported by the destination's name and its URL redacted
(:func:`describe`, :mod:`normalize.redact`: no userinfo, query values, fragment, token-like path segments), and no
value of an environment variable the config expanded, header, token or password appears in the message
(:func:`send_alert` redacts every error it raises).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import select
import smtplib
import socket
import ssl
import stat
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.header import Header
from email.message import EmailMessage
from email.utils import formatdate
from typing import Any, Callable, TextIO
from urllib.parse import unquote, urlsplit, urlunsplit

from crawler.alerts.config import MAX_WAIT, EmailDest, FileDest, HttpDest, NtfyDest, StdoutDest, WebhookDest
from normalize.redact import redact, redact_url, url_secrets
from normalize.shown import shown

MAX_RESPONSE = 64 << 10
USER_AGENT = "jobcrawl-alerts/0.1"
ATTEMPT_TIMEOUTS = 3
"""An attempt (connect, send, the whole answer) that takes longer than this many of its destination's timeouts is
given up and counts as failed (retried like a timeout)."""


@dataclass
class Alert:
    """One message: a watch's new postings for one destination (at most
    :data:`crawler.alerts.delivery.MAX_PER_MESSAGE`)."""

    watch: str
    postings: list[dict[str, Any]]

    @property
    def key(self) -> str:
        """The same for the same watch and postings: receivers drop a message sent again."""
        ids = ",".join(str(p["id"]) for p in self.postings)
        return hashlib.sha256(f"{self.watch}\n{ids}".encode()).hexdigest()[:32]

    @property
    def title(self) -> str:
        n = len(self.postings)
        return f"jobcrawl: {n} new posting{'s' if n != 1 else ''} for {self.watch}"

    def payload(self) -> dict[str, Any]:
        return {"watch": self.watch, "key": self.key, "count": len(self.postings), "postings": self.postings}

    def text(self) -> str:
        """The alert as plain text (stdout, ntfy, e-mail): a title line, then lines per posting, each escaped
        (:func:`normalize.shown.shown`) so that scraped text cannot add or hide a line."""
        lines = [self.title]
        for p in self.postings:
            head = " · ".join(x for x in (p["title"], p["company"], p["city"], p["salary"]) if x)
            lines.append(f"- {head}" + (f" · fit {p['fit']}" if p["fit"] is not None else ""))
            for link in (p["url"], p["page"]):
                if link:
                    lines.append(f"  {link}")
            if p["reasons"]:
                lines.append("  " + "；".join(p["reasons"]))
        return "\n".join(map(shown, lines))


class SendError(RuntimeError):
    """A destination did not take the alert; ``retry`` when trying again may help."""

    def __init__(self, message: str, *, retry: bool, wait: float | None = None):
        super().__init__(message)
        self.retry, self.wait = retry, wait


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # the redirect answer is then an HTTPError, reported as such


_OPENER = urllib.request.build_opener(_NoRedirect)


def _basic_auth(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its ``user:password@``, and the HTTP Basic ``Authorization`` header that carries it."""
    parts = urlsplit(url)
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at:
        return url, {}
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode("utf-8")).decode("ascii")
    return urlunsplit(parts._replace(netloc=hostport)), {"Authorization": f"Basic {token}"}


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST ``body`` (the URL's userinfo as HTTP Basic auth, unless ``headers`` hold an Authorization); the status
    of a 2xx answer, else :class:`SendError` naming the status or the network's error."""
    url, auth = _basic_auth(url)
    request = urllib.request.Request(url, data=body, headers={"User-Agent": USER_AGENT, **auth, **headers},
                                     method="POST")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read(MAX_RESPONSE)
            return response.status
    except urllib.error.HTTPError as err:
        err.read(MAX_RESPONSE)
        wait = err.headers.get("Retry-After") if err.headers else None
        retry = err.code in (408, 425, 429) or err.code >= 500
        raise SendError(f"HTTP {err.code}", retry=retry,
                        wait=float(wait) if wait and wait.strip().isdigit() else None) from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise SendError(str(reason), retry=True) from None


def _with_retries(send: Callable[[], Any], retries: int, backoff: float, sleep: Callable[[float], None]) -> int:
    """Call ``send`` until it succeeds, at most ``1 + retries`` times, waiting ``backoff`` × 2^i seconds
    (or the answer's Retry-After, up to :data:`MAX_WAIT`) between; returns the attempts made."""
    for attempt in range(retries + 1):
        try:
            send()
            return attempt + 1
        except SendError as err:
            if not err.retry or attempt == retries:
                err.attempts = attempt + 1
                raise
            sleep(min(MAX_WAIT, err.wait if err.wait is not None else backoff * 2 ** attempt))
    raise AssertionError("unreachable")


FILE_WRITE_SECONDS = 30.0
"""How long a file destination that is a FIFO may take to take an alert (its reader stalled: not forever)."""


def _append_line(path: str, line: str) -> None:
    """Append ``line`` to the file at ``path``, synced to disk; a FIFO nobody reads or that stops reading, or a
    device, is never waited on forever. Raises :class:`SendError`."""
    data = line.encode("utf-8")
    try:  # O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of waiting for one
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as err:
        if err.errno == errno.ENXIO:
            raise SendError(f"{path}: a FIFO (named pipe) that nobody reads", retry=False) from None
        raise SendError(f"{path}: {err.strerror or err}", retry=False) from None
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
        deadline = time.monotonic() + FILE_WRITE_SECONDS
        writable = select.poll()  # poll, not select: select() refuses descriptors from 1024 on
        writable.register(fd, select.POLLOUT)
        while data:
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:  # a full pipe: wait until its reader takes some
                if not writable.poll(max(0.0, deadline - time.monotonic()) * 1000):
                    raise SendError(f"{path}: its reader took nothing for {FILE_WRITE_SECONDS:g} s", retry=False) from None
        if regular:  # fsync fails on FIFOs and devices, after the alert went through
            os.fsync(fd)
    except OSError as err:
        raise SendError(f"{path}: {err.strerror or err}", retry=False) from None
    finally:
        os.close(fd)


def _header(text: str) -> str:
    """A header value latin-1 can carry: RFC 2047 encoded when it is not ASCII (ntfy decodes it)."""
    return text if text.isascii() else Header(text, "utf-8").encode()


def describe(name: str, dest: Any, secrets: frozenset[str] = frozenset()) -> str:
    """How messages name a destination: its type, its name, and for a URL the URL redacted
    (``webhook "team" (https://…@hooks.example.org/services/…)``)."""
    if isinstance(dest, StdoutDest):
        return "stdout"
    label = f'{dest.type} "{name}"'
    return f"{label} ({redact_url(dest.url, secrets)})" if isinstance(dest, HttpDest) else label


def dest_secrets(dest: Any) -> set[str]:
    """What a destination's settings hold that no message may show: its URL's userinfo, query values, fragment and
    token-like path segments, its header values and token, its SMTP password."""
    if isinstance(dest, HttpDest):
        found = url_secrets(dest.url) | {getattr(dest, "token", None)}
        for value in getattr(dest, "headers", {}).values():
            found |= {value, value.rpartition(" ")[2]}  # "Bearer <token>"
        return {s for s in found if s}
    if isinstance(dest, EmailDest) and dest.password:
        return {dest.password}
    return set()


def send_alert(dest: Any, alert: Alert, *, out: TextIO, sleep: Callable[[float], None] = time.sleep,
               secrets: frozenset[str] = frozenset()) -> int:
    """Deliver ``alert`` to ``dest``; returns the attempts it took. Raises :class:`SendError`, for every failure
    (an HTTP client's or SMTP's error included), its message redacted: no secret of :func:`dest_secrets` or of
    ``secrets`` (the config's expanded variables) in it."""
    try:
        return _send(dest, alert, out=out, sleep=sleep)
    except Exception as err:
        send_error = isinstance(err, SendError)
        message = str(err) if send_error else f"{type(err).__name__}: {err}"
        failure = SendError(redact(message, dest_secrets(dest) | secrets), retry=send_error and err.retry)
        failure.attempts = getattr(err, "attempts", 1)
        raise failure from None


def _send(dest: Any, alert: Alert, *, out: TextIO, sleep: Callable[[float], None]) -> int:
    if isinstance(dest, StdoutDest):
        out.write(alert.text() + "\n")
        out.flush()
        return 1
    if isinstance(dest, FileDest):
        _append_line(dest.path, json.dumps(alert.payload(), ensure_ascii=False) + "\n")
        return 1
    if isinstance(dest, WebhookDest):
        body = json.dumps(alert.payload(), ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json; charset=utf-8", "Idempotency-Key": alert.key, **dest.headers}
        return _with_retries(lambda: _within(dest.timeout, None, lambda: _post(dest.url, body, headers, dest.timeout)),
                             dest.retries, dest.backoff, sleep)
    if isinstance(dest, NtfyDest):
        headers = {"Title": _header(alert.title), "Tags": "briefcase", "Content-Type": "text/plain; charset=utf-8"}
        link = next((p["page"] or p["url"] for p in alert.postings if p["page"] or p["url"]), None)
        if link:
            headers["Click"] = link
        if dest.token:
            headers["Authorization"] = f"Bearer {dest.token}"
        if dest.priority:
            headers["Priority"] = dest.priority
        body = alert.text().split("\n", 1)[-1].encode("utf-8")
        return _with_retries(lambda: _within(dest.timeout, None, lambda: _post(dest.url, body, headers, dest.timeout)),
                             dest.retries, dest.backoff, sleep)
    if isinstance(dest, EmailDest):
        _within(dest.timeout, f"SMTP {dest.host}:{dest.port}", lambda: _send_mail(dest, alert))
        return 1
    raise SendError(f"unknown destination {dest!r}", retry=False)


def _within(timeout: float, where: str | None, attempt: Callable[[], Any]) -> Any:
    """``attempt()``, given up after :data:`ATTEMPT_TIMEOUTS` × ``timeout`` seconds (:class:`SendError`, retried). It
    runs in a daemon thread, which a given-up attempt leaves to its socket timeouts."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = attempt()
        except BaseException as err:  # handed to the caller
            outcome["error"] = err

    thread = threading.Thread(target=run, name="jobcrawl-alert", daemon=True)
    thread.start()
    thread.join(ATTEMPT_TIMEOUTS * timeout)
    if thread.is_alive():
        late = f"no whole answer within {ATTEMPT_TIMEOUTS * timeout:g} s"
        raise SendError(f"{where}: {late}" if where else late, retry=True)
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def _send_mail(dest: EmailDest, alert: Alert) -> None:
    msg = EmailMessage()
    msg["Subject"] = alert.title
    msg["From"] = dest.sender
    msg["To"] = ", ".join(dest.to)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = f"<{alert.key}@jobcrawl.alerts>"
    msg.set_content(alert.text())
    smtp_class = smtplib.SMTP_SSL if dest.security == "ssl" else smtplib.SMTP
    try:
        with smtp_class(dest.host, dest.port, timeout=dest.timeout) as smtp:
            if dest.security == "starttls":
                smtp.starttls(context=ssl.create_default_context())
            if dest.username:
                smtp.login(dest.username, dest.password or "")
            smtp.send_message(msg)
    except smtplib.SMTPResponseException as err:
        raise SendError(f"SMTP {dest.host}:{dest.port}: {err.smtp_code} {err.smtp_error!r}", retry=err.smtp_code >= 400 and err.smtp_code < 500) from None
    except (smtplib.SMTPException, OSError, socket.timeout) as err:
        raise SendError(f"SMTP {dest.host}:{dest.port}: {err}", retry=True) from None
