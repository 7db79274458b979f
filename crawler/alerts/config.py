"""The alerts config: where a watch's alerts go, read from a TOML file and validated.

The file is ``--config``, else ``$JOBCRAWL_ALERTS_CONFIG``, else ``$XDG_CONFIG_HOME/jobcrawl/alerts.toml``,
``~/.config/jobcrawl/alerts.toml``; ``${NAME}`` in any string is the environment variable NAME (secrets stay out
of the file; their values are :attr:`AlertsConfig.secrets`)::

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

``stdout`` is always there (the alert printed by the run). A config error names the file and never shows a value
an environment variable put in it.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal, Union
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from crawler.files import ConfigFileError, read_config_text
from normalize.redact import redact

CONFIG_ENV = "JOBCRAWL_ALERTS_CONFIG"
MAX_CONFIG = 1 << 20
MAX_WAIT = 60.0
"""Longest pause between two attempts (backoff or Retry-After)."""
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


class HttpDest(_Dest):
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


class WebhookDest(HttpDest):
    type: Literal["webhook"]
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers.")


class NtfyDest(HttpDest):
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
        """The destination called ``name`` (``stdout`` is always there), else None."""
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


def load_profile_of(config: AlertsConfig):
    """The config's profile (:class:`normalize.fit.FitProfile`), or None when it names none."""
    if not config.profile:
        return None
    from normalize.fit import ProfileError, load_profile
    from normalize.skills import load_taxonomy

    try:
        return load_profile(read_config_text(Path(config.profile)), load_taxonomy())
    except (ConfigFileError, UnicodeDecodeError, ProfileError) as err:
        raise ConfigError(f"profile {config.profile}: {err}") from None
