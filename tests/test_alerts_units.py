"""crawler/alerts/transports.py and config.py in-process: the retry schedule, what is not retried, the config's
paths and secrets."""

from __future__ import annotations

import json
import os
import threading

import pytest

from crawler.alerts import transports
from crawler.alerts.config import ConfigError, EmailDest, FileDest, NtfyDest, WebhookDest, load_config
from crawler.alerts.transports import Alert, SendError, send_alert
from receivers import Dripper, Receiver

POSTING = {"id": 1, "title": "AI算子开发工程师", "company": "吉利汽车", "city": "杭州", "salary": "43K", "salary_raw": "43K",
           "url": None, "fit": 87, "first_seen": "2026-11-29T04:00:00+00:00", "reasons": ["城市杭州"], "page": None}


def _send(receiver: Receiver, **dest) -> tuple[int, list[float]]:
    waits: list[float] = []
    attempts = send_alert(WebhookDest(type="webhook", url=receiver.url("/h"), **dest), Alert("w", [POSTING]),
                          out=None, sleep=waits.append)
    return attempts, waits


@pytest.mark.parametrize("plan, dest, attempts, waits", [
    pytest.param([], {}, 1, [], id="first-time"),
    pytest.param([500, 502], {"backoff": 0.5}, 3, [0.5, 1.0], id="backoff-doubles"),
    pytest.param([503], {"backoff": 5}, 2, [0.0], id="retry-after-wins"),
    pytest.param([429, 500, 500], {"backoff": 2, "retries": 3}, 4, [2, 4, 8], id="429-is-retried"),
])
def test_retry_schedule(plan, dest, attempts, waits):
    with Receiver(plan=plan) as hook:
        assert _send(hook, **dest) == (attempts, waits)
        assert len(hook.requests) == attempts


@pytest.mark.parametrize("plan, retries, message, attempts", [
    pytest.param([500, 500, 500], 2, "HTTP 500", 3, id="gives-up-after-the-retries"),
    pytest.param([404], 3, "HTTP 404", 1, id="client-error-not-retried"),
    pytest.param([302], 3, "HTTP 302", 1, id="redirect-not-followed"),
])
def test_failures(plan, retries, message, attempts):
    with Receiver(plan=plan) as hook:
        with pytest.raises(SendError, match=message) as err:
            _send(hook, retries=retries, backoff=0)
        assert (err.value.attempts, len(hook.requests)) == (attempts, attempts)


def test_nothing_listening_is_retried_then_reported():
    waits: list[float] = []
    dest = WebhookDest(type="webhook", url="http://127.0.0.1:9/h", retries=2, backoff=0.25, timeout=5)
    with pytest.raises(SendError, match="Connection refused") as err:
        send_alert(dest, Alert("w", [POSTING]), out=None, sleep=waits.append)
    assert (err.value.attempts, waits) == (3, [0.25, 0.5])


HTTP_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n" * 4
SMTP_GREETING = b"220 " + b"x" * 300 + b" ESMTP\r\n"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["webhook", "email"])
def test_an_answer_dripped_a_byte_at_a_time_is_given_up_at_the_attempts_deadline(kind):
    """Each byte within the socket timeout reset it: a delivery (and the run waiting for it) hung for minutes."""
    with Dripper(HTTP_ANSWER if kind == "webhook" else SMTP_GREETING, interval=0.1) as drip:
        if kind == "webhook":
            dest = WebhookDest(type="webhook", url=f"http://127.0.0.1:{drip.port}/h", retries=1, backoff=0, timeout=0.5)
            where = None
        else:
            dest = EmailDest(type="email", host="127.0.0.1", port=drip.port, security="none", sender="a@example.org",
                             to=["b@example.org"], timeout=0.5)
            where = f"SMTP 127.0.0.1:{drip.port}"
        with pytest.raises(SendError) as err:
            send_alert(dest, Alert("w", [POSTING]), out=None, sleep=lambda s: None)
    assert str(err.value) == (f"{where}: " if where else "") + "no whole answer within 1.5 s" and err.value.retry


def test_the_payload_and_key():
    alert = Alert("w", [POSTING])
    assert alert.payload() == {"watch": "w", "key": alert.key, "count": 1, "postings": [POSTING]}
    assert alert.key == Alert("w", [dict(POSTING, fit=10)]).key != Alert("v", [POSTING]).key  # watch and ids
    with Receiver() as hook:
        _send(hook)
    assert json.loads(hook.requests[0].body) == alert.payload()


def test_ntfy_title_plain_when_ascii():
    with Receiver() as topic:
        send_alert(NtfyDest(type="ntfy", url=topic.url("/t"), priority="high"), Alert("cuda", [POSTING]), out=None)
    headers = topic.requests[0].headers
    assert (headers["Title"], headers["Priority"], "Authorization" in headers) == ("jobcrawl: 1 new posting for cuda", "high", False)


def test_config_paths_are_relative_to_the_file_and_secrets_come_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HOOK_TOKEN", "s3cret")
    path = tmp_path / "alerts.toml"
    path.write_text('profile = "me.toml"\n[destinations.log]\ntype = "file"\npath = "out/a.jsonl"\n'
                    '[destinations.hook]\ntype = "webhook"\nurl = "https://example.org/h"\n'
                    'headers = { Authorization = "Bearer ${HOOK_TOKEN}" }\n', encoding="utf-8")
    config = load_config(path)
    assert (config.profile, config.destinations["log"].path) == (str(tmp_path / "me.toml"), str(tmp_path / "out/a.jsonl"))
    assert config.destinations["hook"].headers == {"Authorization": "Bearer s3cret"}
    assert (config.destinations["hook"].retries, config.destinations["hook"].timeout) == (3, 10)


def test_the_default_config_is_optional_and_a_named_one_is_not(tmp_path, monkeypatch):
    monkeypatch.delenv("JOBCRAWL_ALERTS_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert load_config() is None
    (tmp_path / "jobcrawl").mkdir()
    (tmp_path / "jobcrawl" / "alerts.toml").write_text('browse_url = "http://127.0.0.1:8001"\n', encoding="utf-8")
    assert load_config().browse_url == "http://127.0.0.1:8001"
    with pytest.raises(ConfigError, match="no such alerts config"):
        load_config(tmp_path / "missing.toml")


def _read_fifo(path, lines: list, ready):
    fd = os.open(path, os.O_RDONLY)
    ready.set()
    with os.fdopen(fd, "rb") as fh:
        lines.extend(fh.read().splitlines())


@pytest.mark.slow
def test_a_file_destination_takes_one_line_per_alert_in_a_regular_file_a_fifo_or_a_device(tmp_path):
    """A FIFO read by another program got the alert, then fsync failed (EINVAL): the alert was kept pending and
    written again at every delivery. /dev/null failed the same way."""
    alert = Alert("w", [POSTING])
    line = json.dumps(alert.payload(), ensure_ascii=False).encode()
    regular = tmp_path / "alerts.jsonl"
    for _ in range(2):
        assert send_alert(FileDest(type="file", path=str(regular)), alert, out=None) == 1
    assert regular.read_bytes().splitlines() == [line, line]
    fifo = tmp_path / "alerts.fifo"
    os.mkfifo(fifo)
    lines, ready = [], threading.Event()
    reader = threading.Thread(target=_read_fifo, args=(fifo, lines, ready))
    reader.start()
    ready.wait(10)
    assert send_alert(FileDest(type="file", path=str(fifo)), alert, out=None) == 1
    reader.join(10)
    assert lines == [line]
    assert send_alert(FileDest(type="file", path="/dev/null"), alert, out=None) == 1


def test_a_fifo_nobody_reads_is_a_failed_delivery_not_a_hang(tmp_path, monkeypatch):
    """Opening a FIFO without a reader for writing waits for one: `watch deliver`, and every ingest and crawl that
    delivers alerts, hung."""
    fifo = tmp_path / "alerts.fifo"
    os.mkfifo(fifo)
    with pytest.raises(SendError, match=f"^{fifo}: a FIFO \\(named pipe\\) that nobody reads$"):
        send_alert(FileDest(type="file", path=str(fifo)), Alert("w", [POSTING]), out=None)
    monkeypatch.setattr(transports, "FILE_WRITE_SECONDS", 0.5)  # a reader that opened it and reads nothing
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        big = Alert("w", [dict(POSTING, title="职" * 40_000)])  # more than a pipe holds
        with pytest.raises(SendError, match=f"^{fifo}: its reader took nothing for 0.5 s$"):
            send_alert(FileDest(type="file", path=str(fifo)), big, out=None)
    finally:
        os.close(held)
