"""Secrets in alert destinations (issue #38): a destination URL's credentials stay in the alerts config.

A failed delivery names the destination and its URL redacted (normalize/redact.py); no userinfo, query value,
fragment, token-like or ``${NAME}``-expanded path segment, header value or token reaches stdout, stderr,
``watch_deliveries`` (the database file and its WAL) or `jobcrawl serve`. Deliveries go to real failing
receivers on 127.0.0.1: a port with nothing listening and an HTTP server answering 500.
"""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import sqlite3
import string
import urllib.request
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import AS_OF, SEEDS, examples, free_port, run_cli, start_serve
from crawler.alerts.config import ConfigError, NtfyDest, WebhookDest, load_config
from crawler.alerts.delivery import add_watch, deliver_new_matches
from crawler.alerts.transports import Alert, send_alert
from crawler.store import fts
from crawler.store.schema import open_db
from normalize.redact import looks_like_token, redact, redact_url
from normalize.watch import WatchSpec
from receivers import Receiver
from test_alerts_units import POSTING

# --------------------------------------------------------------------------- the redaction function

SLACK = "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/aBcDeFgHiJkLmNoPqRsTuVwX"


@pytest.mark.parametrize("url, secrets, shown", [
    pytest.param("https://example.org/hooks/jobs", [], "https://example.org/hooks/jobs", id="nothing-secret"),
    pytest.param("http://127.0.0.1:8080/h", [], "http://127.0.0.1:8080/h", id="port-kept"),
    pytest.param("https://bot:hunter22@hooks.example.org/h", [], "https://…@hooks.example.org/h", id="user-and-password"),
    pytest.param("https://tok123@h.example.org:8443/", [], "https://…@h.example.org:8443/", id="user-only"),
    pytest.param("https://ntfy.sh/alerts?auth=abc&priority=high", [], "https://ntfy.sh/alerts?auth=…&priority=…",
                 id="query-values"),
    pytest.param("https://x.org/h?sekrit&a=", [], "https://x.org/h?…&a=…", id="bare-query-item"),
    pytest.param("https://x.org/h#tok", [], "https://x.org/h#…", id="fragment"),
    pytest.param("https://x.org/hooks/teamalpha/in", ["teamalpha"], "https://x.org/hooks/…/in", id="env-segment"),
    pytest.param("https://x.org/hook-teamalpha.json", ["teamalpha"], "https://x.org/…", id="env-inside-a-segment"),
    pytest.param("https://x.org/p/a%20b%2Fc", ["a b/c"], "https://x.org/p/…", id="env-percent-encoded"),
    pytest.param("https://teamalpha.example.org/h", ["teamalpha"], "https://….example.org/h", id="env-in-the-host"),
    pytest.param(SLACK, [], "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/…", id="slack-token"),
    pytest.param("https://discord.com/api/webhooks/123456789012345678/Ab_cD-efGhIjKlMnOpQrStUvWxYz012345",
                 [], "https://discord.com/api/webhooks/…/…", id="discord-id-and-token"),
    pytest.param("https://x.org/k/0123456789abcdef0123", [], "https://x.org/k/…", id="hex"),
    pytest.param("https://ntfy.sh/my-job-alerts-2024", [], "https://ntfy.sh/my-job-alerts-2024", id="words-kept"),
    pytest.param("http://[::1]:8080/h?t=1", [], "http://[::1]:8080/h?t=…", id="ipv6"),
    pytest.param("redis://:pw@127.0.0.1:6379/0", [], "redis://…@127.0.0.1:6379/0", id="redis-password"),
    pytest.param("https://x.org/h", ["abc"], "https://x.org/h", id="short-secret-not-searched"),
    pytest.param("http://zq0?0e:zqpass@127.0.0.1:9/h?token=x", [], "http://…@127.0.0.1:9/h?token=…",
                 id="unencoded-question-mark-in-the-user"),
    pytest.param("http://u:zq/pass@127.0.0.1:9/h", [], "http://…@127.0.0.1:9/h", id="unencoded-slash-in-the-password"),
    pytest.param("http://u:zq#pass@127.0.0.1:9/h", [], "http://…@127.0.0.1:9/h", id="unencoded-hash-in-the-password"),
])
def test_redact_url(url, secrets, shown):
    assert redact_url(url, secrets) == shown


@pytest.mark.parametrize("text, secrets, shown", [
    pytest.param("HTTP 500", [], "HTTP 500", id="no-url"),
    pytest.param("<urlopen error http://u:pw12345@h:1/x?t=abcd> refused", [],
                 "<urlopen error http://…@h:1/x?t=…> refused", id="urllib-message"),
    pytest.param("http://a:hunter22@h/ failed: hunter22 rejected", [], "http://…@h/ failed: … rejected",
                 id="a-url-secret-elsewhere-in-the-text"),
    pytest.param("nonnumeric port: 'hunter22@h'", ["hunter22"], "nonnumeric port: '…@h'", id="given-secret"),
    pytest.param("login p%40ss%20word failed", ["p@ss word"], "login … failed", id="percent-encoded"),
    pytest.param("login p+ss+word failed", ["p ss word"], "login … failed", id="form-encoded"),
    pytest.param("port 'zqabc'", ["zqabc/def"], "port '…'", id="piece-of-a-secret-a-url-cut"),
    pytest.param("port 587", ["587"], "port 587", id="short-secret-not-searched"),
    pytest.param("cannot reach Redis at redis://:pw1234@127.0.0.1:1/0: Error 111", [],
                 "cannot reach Redis at redis://…@127.0.0.1:1/0: Error 111", id="redis"),
])
def test_redact(text, secrets, shown):
    assert redact(text, secrets) == shown


@pytest.mark.parametrize("text, token", [
    pytest.param("aBcDeFgHiJkLmNoPqRsTuVwX", True, id="mixed-case"),
    pytest.param("0123456789abcdef", True, id="hex"),
    pytest.param("123456789012345678", True, id="long-number"),
    pytest.param("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0", True, id="jwt-ish"),
    pytest.param("Xk9f_3k-9sdfA8_q-Lp0_Zz7w", True, id="base64url"),
    pytest.param("my-job-alerts-2024", False, id="words-and-a-year"),
    pytest.param("notifications", False, id="a-word"),
    pytest.param("abcdefghijklmnopqrstuvwxyz", False, id="long-lowercase-word"),
    pytest.param("T0ABCDEF1", False, id="short-id"),
])
def test_looks_like_token(text, token):
    assert looks_like_token(text) is token


# --------------------------------------------------------------------------- Basic auth from the URL

def basic(credentials: str) -> str:
    return "Basic " + base64.b64encode(credentials.encode()).decode()


@pytest.mark.parametrize("kind, userinfo, extra, authorization", [
    pytest.param("webhook", "bot:hunter22", {}, basic("bot:hunter22"), id="webhook"),
    pytest.param("ntfy", "bot:hunter22", {}, basic("bot:hunter22"), id="ntfy"),
    pytest.param("webhook", "bot%40team:p%3As%2Fs", {}, basic("bot@team:p:s/s"), id="percent-encoded"),
    pytest.param("webhook", "onlyuser", {}, basic("onlyuser:"), id="user-only"),
    pytest.param("webhook", "bot:hunter22", {"headers": {"Authorization": "Bearer t0k"}}, "Bearer t0k",
                 id="a-configured-header-wins"),
    pytest.param("ntfy", "bot:hunter22", {"token": "t0k"}, "Bearer t0k", id="an-ntfy-token-wins"),
])
def test_a_url_with_user_and_password_is_sent_with_basic_auth(kind, userinfo, extra, authorization):
    """The userinfo went into the host lookup: "Name or service not known", and the URL in the error."""
    with Receiver() as hook:
        url = hook.url("/hooks/jobs").replace("://", f"://{userinfo}@")
        dest = (WebhookDest if kind == "webhook" else NtfyDest)(type=kind, url=url, retries=0, **extra)
        assert send_alert(dest, Alert("w", [POSTING]), out=None) == 1
    [got] = hook.requests
    assert (got.path, got.headers["Authorization"], got.headers["Host"]) == (
        "/hooks/jobs", authorization, url.split("@")[1].split("/")[0])


@pytest.mark.parametrize("url, problem", [
    pytest.param("http://zq?pw@127.0.0.1:9/h", "an @ after the host name (percent-encode / ? # in a user:password@ "
                 "and an @ elsewhere)", id="question-mark-in-the-user"),
    pytest.param("http://bot:zq#pw@127.0.0.1:9/h", "the port is not a number (a user:password@ or ${NAME} holding / ? # "
                 "breaks the URL; percent-encode it)", id="hash-in-the-password"),
    pytest.param("http:///h", "no host name", id="no-host"),
])
def test_a_url_that_cannot_be_used_is_a_config_error_that_does_not_repeat_it(tmp_path, url, problem):
    config = tmp_path / "alerts.toml"
    config.write_text(f'[destinations.h]\ntype = "webhook"\nurl = "{url}"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert str(err.value) == f"{config}: destinations.h.webhook.url: Value error, {problem}"


# --------------------------------------------------------------------------- failed deliveries keep nothing secret


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("seeded") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    return path


@contextmanager
def environment(values: dict[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def forms(secret: str) -> set[str]:
    """A secret as it could be written anywhere: as is and percent-encoded."""
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret)}


def stored_text(db: Path) -> str:
    """Every cell of every table, as text."""
    with sqlite3.connect(db) as conn:
        fts.register(conn)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(repr(row) for t in tables for row in conn.execute(f'SELECT * FROM "{t}"'))


def leaks(secrets: set[str], *, printed: str, db: Path, wal: bytes) -> list[str]:
    """Where any form of a secret appears: in the printed text, a table, the database file, its WAL."""
    places = {"printed": printed.encode(), "tables": stored_text(db).encode(), "file": db.read_bytes(), "wal": wal}
    return [f"{secret!r} in {where}" for secret in secrets for form in forms(secret)
            for where, data in places.items() if form.encode() in data]


def deliver_once(db: Path, config: Path, env: dict[str, str], destinations: list[str]) -> tuple[str, bytes, list[str]]:
    """Add a watch to ``destinations`` and deliver, in process, as `jobcrawl watch deliver` does: (everything printed,
    the WAL's bytes after the delivery, the report's errors). A connection held open keeps the WAL on disk."""
    out, err = io.StringIO(), io.StringIO()
    with environment(env), redirect_stdout(out), redirect_stderr(err):
        try:
            config_read = load_config(config)
        except ConfigError as problem:
            return str(problem), b"", [str(problem)]
        database = open_db(db)
        try:
            add_watch(database, WatchSpec(name="cuda-sh", destinations=destinations), config=config_read,
                      include_existing=True)
        finally:
            database.close()
        keep = sqlite3.connect(db)
        try:
            keep.execute("SELECT count(*) FROM watches").fetchone()
            report = deliver_new_matches(db, config_path=config, out=out, sleep=lambda s: None)
            wal = Path(f"{db}-wal").read_bytes() if Path(f"{db}-wal").exists() else b""
        finally:
            keep.close()
    return "\n".join(report.lines()) + out.getvalue() + err.getvalue(), wal, report.errors


WORD = st.text(string.ascii_lowercase, min_size=6, max_size=10).map("zq".__add__)
"""A secret that looks like a plain word: only knowing where it came from hides it."""
TOKEN = st.text(string.ascii_letters + string.digits, min_size=18, max_size=28).map("Zq7".__add__)
"""A secret that looks like a token wherever it is."""
ODD = st.text(string.ascii_lowercase + string.digits + "@:/ %+&=#?!$", min_size=4, max_size=12).map("zq".__add__)
"""A secret that must be percent-encoded to be written into a URL."""


@dataclass
class Case:
    """A destination whose URL (and headers or token) hold secrets; ``env`` the variables its ``${NAME}`` name."""

    kind: str
    url: str
    env: dict[str, str] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)
    extra: str = ""

    def toml(self, name: str) -> str:
        return f'[destinations.{name}]\ntype = "{self.kind}"\nurl = "{self.url}"\nretries = 0\ntimeout = 5\n{self.extra}'


@st.composite
def secret_destinations(draw, base: str) -> Case:
    """A webhook or ntfy destination at ``base`` with a secret in every position of its URL (userinfo user and
    password, a path segment from ``${NAME}``, a token-like path segment, query values, the fragment) and in its
    Authorization header or token; each secret written into the config (percent-encoded) or, when it needs no
    encoding, maybe expanded from the environment. The credentials of the Basic auth header are a secret too."""
    case = Case(draw(st.sampled_from(["webhook", "ntfy"])), "")
    drawn: list[str] = []

    def put(strategy, *, env_ok: bool = True) -> str:
        drawn.append(draw(strategy))
        case.secrets.add(drawn[-1])
        if env_ok and drawn[-1].isalnum() and draw(st.booleans()):
            name = f"JC_SECRET_{len(case.env)}"
            case.env[name] = drawn[-1]
            return "${" + name + "}"
        return quote(drawn[-1], safe="")

    userinfo = f"{put(st.one_of(WORD, TOKEN, ODD))}:{put(st.one_of(WORD, TOKEN, ODD))}"
    case.secrets.add(basic(f"{drawn[0]}:{drawn[1]}").split()[1])
    case.env["JC_PATH"] = draw(WORD)
    case.secrets.add(case.env["JC_PATH"])
    token_segment = put(TOKEN, env_ok=False)
    query = "&".join(f"{key}={put(st.one_of(WORD, TOKEN, ODD))}" for key in ("token", "key", "v"))
    case.url = f"http://{userinfo}@{base.split('://')[1]}/hooks/${{JC_PATH}}/{token_segment}?{query}#{put(WORD)}"
    if case.kind == "webhook":
        case.extra = f'headers = {{ Authorization = "Bearer {put(TOKEN)}" }}\n'
    else:
        case.extra = f'token = "{put(st.one_of(WORD, TOKEN))}"\n'
    return case


@pytest.fixture(scope="module", params=["nothing-listening", "http-500"])
def failing(request):
    """(the base URL of a destination that fails, how the delivery's error ends)."""
    if request.param == "nothing-listening":
        yield f"http://127.0.0.1:{free_port()}", "[Errno 111] Connection refused"
    else:
        with Receiver(plan=[500] * 1000) as hook:
            yield hook.url(""), "HTTP 500"


def delivered_case(seeded: Path, folder: Path, case: Case) -> tuple[str, bytes, list[str]]:
    """:func:`deliver_once` to the case's destination (named ``team``), on a copy of the seeded database."""
    db = folder / "jobs.db"
    shutil.copy(seeded, db)
    config = folder / "alerts.toml"
    config.write_text(case.toml("team"), encoding="utf-8")
    return deliver_once(db, config, case.env, ["team"])


SETTINGS = settings(max_examples=examples(25), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(data=st.data())
def test_a_failed_delivery_stores_and_prints_no_secret_of_its_destination(seeded, tmp_path_factory, failing, data):
    base, why = failing
    case = data.draw(secret_destinations(base))
    folder = tmp_path_factory.mktemp("case")
    printed, wal, errors = delivered_case(seeded, folder, case)
    assert errors == [f'watch cuda-sh → {case.kind} "team" (http://…@{base.split("://")[1]}/hooks/…/…?token=…&key=…&v=…#…): '
                      f'{why}; 2 kept pending']
    assert leaks(case.secrets, printed=printed, db=folder / "jobs.db", wal=wal) == []


@pytest.mark.slow
def test_the_cli_and_serve_show_the_destination_by_name_and_its_url_redacted(seeded, tmp_path):
    """`watch deliver` to a webhook answering 500, an ntfy topic and an SMTP server with nothing listening: the
    lines, the stored errors and `jobcrawl serve --no-sql` name each destination and show no credential."""
    env = {"JC_PATH": "zqteamroom", "JC_TOKEN": "Zq7xK2mP9vR4tL8wQ3nB", "JC_SMTP": "zqmailpassword"}
    secrets = {"zqhookuser", "zqhookpass", "zqteamroom", "Zq7hG5kL2mN8pQ4rS6tV", "zqqueryvalue", "zqfragment",
               "Zq7xK2mP9vR4tL8wQ3nB", "zqmailpassword", basic("zqhookuser:zqhookpass").split()[1]}
    db = tmp_path / "jobs.db"
    shutil.copy(seeded, db)
    dead, smtp = free_port(), free_port()
    with Receiver(plan=[500] * 10) as hook:
        port = hook.server.server_address[1]
        config = tmp_path / "alerts.toml"
        config.write_text(
            f'[destinations.team]\ntype = "webhook"\nretries = 1\nbackoff = 0\n'
            f'url = "http://zqhookuser:zqhookpass@127.0.0.1:{port}/hooks/${{JC_PATH}}/Zq7hG5kL2mN8pQ4rS6tV'
            f'?token=zqqueryvalue#zqfragment"\nheaders = {{ Authorization = "Bearer ${{JC_TOKEN}}" }}\n'
            f'[destinations.phone]\ntype = "ntfy"\nretries = 0\nurl = "http://127.0.0.1:{dead}/${{JC_PATH}}"\n'
            f'token = "${{JC_TOKEN}}"\n'
            f'[destinations.mail]\ntype = "email"\nhost = "127.0.0.1"\nport = {smtp}\nsecurity = "none"\n'
            f'username = "jobcrawl"\npassword = "${{JC_SMTP}}"\nsender = "a@example.org"\nto = ["b@example.org"]\n'
            f'timeout = 5\n', encoding="utf-8")
        added = run_cli("watch", "add", "cuda-sh", "--db", str(db), "--config", str(config), "--include-existing",
                        env=env, check=True)
        keep = sqlite3.connect(db)  # holds the WAL on disk after `watch deliver` exits
        try:
            keep.execute("SELECT count(*) FROM watches").fetchone()
            proc = run_cli("watch", "deliver", "--db", str(db), "--config", str(config), env=env)
            wal = Path(f"{db}-wal").read_bytes()
        finally:
            keep.close()
        assert len(hook.requests) == 2
    listed = run_cli("watch", "list", "--db", str(db), check=True)
    errors = {
        "mail": f"email \"mail\": SMTP 127.0.0.1:{smtp}: [Errno 111] Connection refused",
        "phone": f"ntfy \"phone\" (http://127.0.0.1:{dead}/…): [Errno 111] Connection refused",
        "team": f"webhook \"team\" (http://…@127.0.0.1:{port}/hooks/…/…?token=…#…): HTTP 500",
    }
    assert proc.returncode == 1
    assert proc.stdout == "alerts: new matches cuda-sh 2 · delivered nothing · 6 pending (sent again on the next run, " \
                          "or `jobcrawl watch deliver`)\n"
    assert proc.stderr.splitlines() == [f"alerts: watch cuda-sh → {errors[n]}; 2 kept pending" for n in sorted(errors)]
    with sqlite3.connect(db) as conn:
        assert dict(conn.execute("SELECT DISTINCT destination, error FROM watch_deliveries")) == errors
    serve, base = start_serve(db, "--no-sql")
    try:
        body = urllib.request.urlopen(f"{base}/jobs/watch_deliveries.json?_shape=array", timeout=10).read()
    finally:
        serve.terminate()
        serve.wait(10)
    assert {r["destination"]: r["error"] for r in json.loads(body)} == errors
    printed = added.stdout + added.stderr + proc.stdout + proc.stderr + listed.stdout + listed.stderr + body.decode()
    assert leaks(secrets, printed=printed, db=db, wal=wal) == []
