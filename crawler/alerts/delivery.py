"""Alerts: postings new to a watch, delivered to its destinations after every ingest and crawl.

:func:`deliver_new_matches` is the hook the runs call (and ``jobcrawl watch deliver``): with a
profile in the config it scores fit and refreshes the blocklist's flags (``crawler.fit.step``), then
matches every watch against the open postings it has not seen (rules: :mod:`normalize.watch`), then
sends every pending delivery.

Destinations come from a TOML config (``--config``, else ``$JOBCRAWL_ALERTS_CONFIG``, else
``$XDG_CONFIG_HOME/jobcrawl/alerts.toml``, ``~/.config/jobcrawl/alerts.toml``); ``${NAME}`` in any
string is the environment variable NAME (secrets stay out of the file)::

    profile = "profile.toml"            # fit (--min-fit) and blocklists; relative to this file
    browse_url = "http://127.0.0.1:8001" # links to the posting pages of `jobcrawl serve`

    [destinations.log]
    type = "file"                        # one JSON object per alert, appended
    path = "alerts.jsonl"
    [destinations.hook]
    type = "webhook"                     # JSON POST, retried with backoff
    url = "https://example.org/hooks/jobs" # user:password@ in it is sent as HTTP Basic auth
    headers = { Authorization = "Bearer ${JOBCRAWL_HOOK_TOKEN}" }
    [destinations.phone]
    type = "ntfy"                        # plain-text POST to a topic URL
    url = "https://ntfy.sh/my-job-alerts"
    [destinations.mail]
    type = "email"                       # SMTP (smtplib)
    host = "smtp.example.org"
    port = 587
    security = "starttls"                # starttls | ssl | none
    username = "me@example.org"
    password = "${JOBCRAWL_SMTP_PASSWORD}"
    sender = "jobcrawl <me@example.org>"
    to = ["me@example.org"]

``stdout`` is always there (the alert printed by the run). The hosts are the user's own choice, so
loopback and private addresses are allowed; every network call has a timeout, and every attempt a deadline
(:data:`ATTEMPT_TIMEOUTS` × its timeout: a server that drips its answer a byte at a time resets a socket
timeout forever); redirects are not followed and at most :data:`MAX_RESPONSE` bytes of an answer are read.

**At-least-once.** A match and one ``pending`` delivery per destination are recorded in one
transaction before anything is sent; a delivery becomes ``sent`` only after its destination accepted
it. A crash between the two leaves it pending and the next run sends it again (a duplicate, never a
loss); a recorded delivery is never sent again. The key of an alert (webhook ``Idempotency-Key``
header and ``key`` field, e-mail ``Message-ID``, file ``key``) is the same when it is sent again, so
a receiver can drop the duplicate. A failed destination keeps its deliveries pending; the other
destinations go on.

**Secrets stay in the config.** A failed delivery is reported (stderr, ``watch_deliveries.error``) by the
destination's name and its URL redacted (:mod:`normalize.redact`: no userinfo, query values, fragment,
token-like path segments), and no value of an environment variable the config expanded, header, token or
password appears in the message (:func:`send_alert` redacts every error it raises).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import re
import select
import smtplib
import socket
import ssl
import stat
import sys
import threading
import time
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from email.header import Header
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path
from typing import Annotated, Any, Callable, Literal, TextIO, Union
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from crawler.alerts import store
from crawler.files import ConfigFileError, read_config_text
from normalize.history import pay_label
from normalize.redact import redact, redact_url, url_secrets
from normalize.shown import shown
from normalize.watch import WatchSpec, candidate, match

CONFIG_ENV = "JOBCRAWL_ALERTS_CONFIG"
MAX_CONFIG = 1 << 20
MAX_RESPONSE = 64 << 10
MAX_PER_MESSAGE = 20
"""Postings in one alert; more new matches of a watch go out as several alerts."""
MAX_WAIT = 60.0
"""Longest pause between two attempts (backoff or Retry-After)."""
USER_AGENT = "jobcrawl-alerts/0.1"
ATTEMPT_TIMEOUTS = 3
"""An attempt (connect, send, the whole answer) that takes longer than this many of its destination's timeouts is
given up and counts as failed (retried like a timeout)."""
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ConfigError(ValueError):
    """The alerts config cannot be used; the message names the file and the problem."""


class _Dest(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StdoutDest(_Dest):
    type: Literal["stdout"] = "stdout"


class FileDest(_Dest):
    type: Literal["file"]
    path: str = Field(description="File the alerts are appended to, one JSON object a line.")


class _HttpDest(_Dest):
    url: str = Field(pattern=r"^https?://", description="http(s) URL to POST to.")
    timeout: float = Field(10, gt=0, le=120, description="Seconds per attempt.")
    retries: int = Field(3, ge=0, le=10, description="Attempts after the first one.")
    backoff: float = Field(1.0, ge=0, le=MAX_WAIT, description="Seconds before the first retry, doubled each time.")

    @field_validator("url")
    @classmethod
    def _usable(cls, url: str) -> str:
        """A host and a numeric port (the message never repeats the URL: it may hold a secret)."""
        try:
            parts = urlsplit(url)
            parts.port
        except ValueError:
            raise ValueError("the port is not a number (a user:password@ or ${NAME} holding / ? # breaks the URL;"
                             " percent-encode it)") from None
        if not parts.hostname:
            raise ValueError("no host name")
        if "@" in url.partition("://")[2] and "@" not in parts.netloc:
            raise ValueError("an @ after the host name (percent-encode / ? # in a user:password@ and an @ elsewhere)")
        return url


class WebhookDest(_HttpDest):
    type: Literal["webhook"]
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers.")


class NtfyDest(_HttpDest):
    type: Literal["ntfy"]
    token: str | None = Field(None, description="Access token (Authorization: Bearer).")
    priority: str | None = Field(None, description="ntfy priority: min, low, default, high, max.")


class EmailDest(_Dest):
    type: Literal["email"]
    host: str
    port: int = Field(587, gt=0, lt=65536)
    security: Literal["starttls", "ssl", "none"] = "starttls"
    username: str | None = None
    password: str | None = None
    sender: str
    to: list[str] = Field(min_length=1)
    timeout: float = Field(20, gt=0, le=120)


Destination = Annotated[Union[StdoutDest, FileDest, WebhookDest, NtfyDest, EmailDest], Field(discriminator="type")]


class AlertsConfig(BaseModel):
    """The alerts config file."""

    model_config = ConfigDict(extra="forbid")

    profile: str | None = Field(None, description="Profile TOML (fit and blocklists), relative to the config file.")
    browse_url: str | None = Field(None, pattern=r"^https?://", description="Base URL of `jobcrawl serve`.")
    destinations: dict[str, Destination] = Field(default_factory=dict)
    _expanded: frozenset[str] = PrivateAttr(default=frozenset())
    """The values of the environment variables the file's ``${NAME}`` became: secrets wherever they appear."""

    @property
    def secrets(self) -> frozenset[str]:
        return self._expanded

    def destination(self, name: str) -> Any:
        if name in self.destinations:
            return self.destinations[name]
        return StdoutDest() if name == "stdout" else None


def default_config_path() -> Path:
    """``$JOBCRAWL_ALERTS_CONFIG``, else ``alerts.toml`` in ``$XDG_CONFIG_HOME/jobcrawl`` (``~/.config``)."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV]).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "jobcrawl" / "alerts.toml"


def _expand(value: Any, where: str, used: set[str]) -> Any:
    """``value`` with every ``${NAME}`` of its strings replaced by the variable's value (added to ``used``)."""
    if isinstance(value, str):
        def var(m: re.Match) -> str:
            if m.group(1) not in os.environ:
                raise ConfigError(f"{where}: environment variable {m.group(1)} is not set")
            used.add(os.environ[m.group(1)])
            return os.environ[m.group(1)]

        return _VAR.sub(var, value)
    if isinstance(value, dict):
        return {k: _expand(v, f"{where}.{k}" if where else k, used) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, where, used) for v in value]
    return value


def load_config(path: str | Path | None = None) -> AlertsConfig | None:
    """The config at ``path`` (an error when it is missing), else at :func:`default_config_path`
    (None when there is none). Relative paths in it are relative to its folder."""
    explicit = path is not None
    path = Path(path).expanduser() if explicit else default_config_path()
    if not path.is_file():
        if explicit:
            raise ConfigError(f"{path}: no such alerts config")
        return None
    with path.open("rb") as fh:
        raw = fh.read(MAX_CONFIG + 1)
    if len(raw) > MAX_CONFIG:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG} bytes")
    expanded: set[str] = set()
    try:
        data = _expand(tomllib.loads(raw.decode("utf-8")), "", expanded)
        config = AlertsConfig.model_validate(data)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: not TOML: {err}") from None
    except ValidationError as err:
        first = err.errors()[0]
        raise ConfigError(redact(f"{path}: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}", expanded)) from None
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    if config.profile:
        config.profile = str((path.parent / Path(config.profile).expanduser()))
    config._expanded = frozenset(expanded)
    for dest in config.destinations.values():
        if isinstance(dest, FileDest):
            dest.path = str(path.parent / Path(dest.path).expanduser())
    return config


def load_profile_of(config: AlertsConfig | None):
    """The config's profile (:class:`normalize.fit.FitProfile`), or None when it names none."""
    if config is None or not config.profile:
        return None
    from normalize.fit import ProfileError, load_profile
    from normalize.skills import load_taxonomy

    try:
        return load_profile(read_config_text(Path(config.profile)), load_taxonomy())
    except (ConfigFileError, UnicodeDecodeError, ProfileError) as err:
        raise ConfigError(f"profile {config.profile}: {err}") from None


# --------------------------------------------------------------------------- alerts


@dataclass
class Alert:
    """One message: a watch's new postings for one destination (at most :data:`MAX_PER_MESSAGE`)."""

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


def _posting(row: dict[str, Any], browse_url: str | None) -> dict[str, Any]:
    salary = {"monthly_min": row["salary_monthly_min"], "monthly_max": row["salary_monthly_max"],
              "currency": row["salary_currency"], "months": row["salary_months"], "status": row["salary_status"],
              "estimated": bool(row["salary_estimated"]), "raw": row["salary_raw"]}
    return {"id": row["posting_id"], "title": row["title"], "company": row["company"], "city": row["city"],
            "salary": pay_label(salary), "salary_raw": row["salary_raw"], "url": row["url"], "fit": row["fit"],
            "first_seen": row["first_seen"], "reasons": json.loads(row["reasons"] or "[]"),
            "page": f"{browse_url.rstrip('/')}/jobs/postings/{row['posting_id']}" if browse_url else None}


# --------------------------------------------------------------------------- senders


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
        while data:
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:  # a full pipe: wait until its reader takes some
                if not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
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
    return f"{label} ({redact_url(dest.url, secrets)})" if isinstance(dest, _HttpDest) else label


def dest_secrets(dest: Any) -> set[str]:
    """What a destination's settings hold that no message may show: its URL's userinfo, query values, fragment and
    token-like path segments, its header values and token, its SMTP password."""
    if isinstance(dest, _HttpDest):
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


# --------------------------------------------------------------------------- the step


@dataclass
class DeliveryReport:
    """What one delivery step did: new matches per watch, postings delivered per destination, deliveries
    still pending, and one line per problem."""

    matched: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    errors: list[str] = field(default_factory=list)
    fit: dict[str, int] = field(default_factory=dict)

    def counters(self) -> dict[str, int]:
        """Plain integer counters for a run's stats (``jobcrawl/alerts/<name>``)."""
        return {"matched": sum(self.matched.values()), "sent": sum(self.sent.values()), "pending": self.pending,
                "errors": len(self.errors)}

    def lines(self) -> list[str]:
        """One summary line (when there were watches), then the problems."""
        if not self.matched and not self.sent and not self.pending and not self.errors:
            return []
        new = ", ".join(f"{w} {n}" for w, n in self.matched.items()) or "none"
        sent = ", ".join(f"{d} {n}" for d, n in self.sent.items()) or "nothing"
        line = f"alerts: new matches {new} · delivered {sent}"
        if self.pending:
            line += f" · {self.pending} pending (sent again on the next run, or `jobcrawl watch deliver`)"
        return [line, *(f"alerts: {e}" for e in self.errors)]


def find_matches(db, watch: store.Watch, profile: str | None) -> list[tuple[int, list[str]]]:
    """``(posting id, reasons)`` of every open posting the watch has not seen and matches now."""
    found = store.search_ids(db, watch.spec.search) if watch.spec.search else None
    out = []
    for row in store.unseen_rows(db, watch.id, profile=profile, cities=watch.spec.cities, ids=found):
        reasons = match(watch.spec, candidate(row, found=found is None or row["id"] in found))
        if reasons is not None:
            out.append((row["id"], reasons))
    return out


def _refresh_fit(db, profile, report: DeliveryReport) -> None:
    from crawler.fit.step import score_fit_and_blocks

    report.fit = score_fit_and_blocks(db, profile, incremental=True)


def add_watch(db, spec: WatchSpec, *, config: AlertsConfig | None, include_existing: bool = False) -> dict[str, int]:
    """Store a watch: its ``id``, and how many open postings match it now (``matching``). They are its baseline
    (seen, never delivered) unless ``include_existing``: then the next delivery sends them. Raises ValueError for a
    name in use, a destination the config lacks, or ``min_fit`` without a profile in the config."""
    for name in spec.destinations:
        if (config.destination(name) if config else StdoutDest() if name == "stdout" else None) is None:
            raise ValueError(f"destination {name!r} is not in the alerts config ({default_config_path()} or --config)")
    profile = load_profile_of(config)
    if spec.min_fit is not None and profile is None:
        raise ValueError("--min-fit needs a profile: profile = \"…\" in the alerts config")
    if profile is not None:
        _refresh_fit(db, profile, DeliveryReport())
    matching = find_matches(db, store.Watch(store.NEW_WATCH, spec, ""), profile and profile.name)
    return {"id": store.add_watch(db.conn, spec, [] if include_existing else matching), "matching": len(matching)}


def deliver_new_matches(db_path: str | Path, run_id: int | None = None, *, config_path: str | Path | None = None,
                        out: TextIO | None = None, sleep: Callable[[float], None] = time.sleep) -> DeliveryReport:
    """After a run: score the config's profile (fit and blocklist, :func:`crawler.fit.step.score_fit_and_blocks`),
    record each watch's new matches, then send every pending delivery (of this run and of earlier ones).
    Never raises for a config, profile or destination problem: it is a line of the report, and the
    deliveries it holds up stay pending. Without a profile or a watch it reads the config and one row."""
    from crawler.store.schema import open_db

    report = DeliveryReport()
    out = out or sys.stdout
    try:
        config = load_config(config_path)
        profile = load_profile_of(config)
    except ConfigError as err:
        report.errors.append(str(err))
        config, profile = None, None
    db = open_db(db_path)
    try:
        watching = store.has_watches(db.conn)
        if profile is not None:  # its fit and blocklist, for the watches and for browsing
            _refresh_fit(db, profile, report)
        if not watching:
            return report
        for watch in store.active_watches(db.conn):
            if watch.spec.min_fit is not None and profile is None:
                report.errors.append(f"watch {watch.spec.name}: --min-fit needs a profile in the alerts config; not matched")
                continue
            new = find_matches(db, watch, profile and profile.name)
            report.matched[watch.spec.name] = store.record_matches(db.conn, watch, new, run_id=run_id)
        _send_pending(db, config, profile and profile.name, report, out, sleep)
        return report
    finally:
        db.close()


def _send_pending(db, config: AlertsConfig | None, profile: str | None, report: DeliveryReport, out: TextIO,
                  sleep: Callable[[float], None]) -> None:
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for row in store.pending(db.conn, profile=profile):
        groups.setdefault((row["watch_id"], row["destination"]), []).append(row)
    browse_url = config.browse_url if config else None
    secrets = config.secrets if config else frozenset()
    failed: dict[str, str] = {}  # destination → why it took no alert in this delivery: not tried again in it
    for (watch_id, name), rows in groups.items():
        dest = config.destination(name) if config else (StdoutDest() if name == "stdout" else None)
        if dest is None:
            report.pending += len(rows)
            report.errors.append(f"watch {rows[0]['name']}: destination {name!r} is not in the alerts config; "
                                 f"{len(rows)} kept pending")
            continue
        sent = 0
        while sent < len(rows) and name not in failed:  # one failed message is enough: the rest wait
            part = rows[sent:sent + MAX_PER_MESSAGE]
            alert = Alert(part[0]["name"], [_posting(r, browse_url) for r in part])
            ids = [r["posting_id"] for r in part]
            try:
                attempts = send_alert(dest, alert, out=out, sleep=sleep, secrets=secrets)
            except SendError as err:  # redacted
                failed[name] = f"{describe(name, dest, secrets)}: {err}"
                store.mark_failed(db.conn, watch_id, name, ids, attempts=err.attempts, error=failed[name])
                break
            store.mark_sent(db.conn, watch_id, name, ids, attempts=attempts)
            report.sent[name] = report.sent.get(name, 0) + len(ids)
            sent += len(part)
        if sent < len(rows):
            report.pending += len(rows) - sent
            report.errors.append(f"watch {rows[0]['name']} → {failed[name]}; {len(rows) - sent} kept pending")
