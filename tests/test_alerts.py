"""Watches and alerts end to end: the real `jobcrawl` CLI on real SQLite files, delivering to real local
receivers (an HTTP server for webhooks and ntfy topics, aiosmtpd for e-mail) on 127.0.0.1."""

from __future__ import annotations

import email.header
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AS_OF, ROOT, SEEDS, run_cli
from receivers import Receiver, SmtpSink

pytestmark = pytest.mark.slow

SEED0 = SEEDS / "000_7c4373297891d5ca.txt"  # 吉利汽车 · AI算子开发工程师 · 杭州 · 43K
SEED3 = SEEDS / "003_5eabc84b6ca487f0.txt"  # 初速度 · 模型训练优化开发工程师 · 苏州 · 35K
TITLES = {1: "AI算子开发工程师", 2: "模型训练优化开发工程师"}


@pytest.fixture(scope="module")
def seeded_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("template") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    return path


@pytest.fixture
def db(seeded_template, tmp_path) -> Path:
    """A database holding the two seeds (posting 1: seed 000, posting 2: seed 003)."""
    path = tmp_path / "jobs.db"
    shutil.copy(seeded_template, path)
    return path


def write_config(path: Path, body: str, **top: str) -> Path:
    head = "".join(f'{k} = "{v}"\n' for k, v in top.items())
    path.write_text(head + body, encoding="utf-8")
    return path


def webhook(url: str, *, retries: int = 3) -> str:
    return f'[destinations.hook]\ntype = "webhook"\nurl = "{url}"\nretries = {retries}\nbackoff = 0.01\ntimeout = 10\n'


def rows(db: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params).fetchall()


def deliveries(db: Path) -> list[tuple]:
    return rows(db, "SELECT posting_id, destination, status, attempts FROM watch_deliveries ORDER BY posting_id, destination")


def add(db: Path, config: Path, name: str, *args: str) -> subprocess.CompletedProcess:
    return run_cli("watch", "add", name, "--db", str(db), "--config", str(config), *args, check=True)


def deliver(db: Path, config: Path) -> subprocess.CompletedProcess:
    return run_cli("watch", "deliver", "--db", str(db), "--config", str(config))


def posted(receiver: Receiver) -> list[list[int]]:
    return [[p["id"] for p in json.loads(r.body)["postings"]] for r in receiver.requests]


# --------------------------------------------------------------------------- webhook


def test_a_webhook_is_retried_with_backoff_then_the_delivery_is_recorded(db, tmp_path):
    with Receiver(plan=[503, 503]) as hook:
        config = write_config(tmp_path / "alerts.toml", webhook(hook.url("/jobs")))
        add(db, config, "all", "--include-existing")
        proc = deliver(db, config)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == "alerts: new matches all 2 · delivered hook 2\n"
        assert posted(hook) == [[1, 2], [1, 2], [1, 2]]
        assert len({r.headers["Idempotency-Key"] for r in hook.requests}) == 1
        assert {r.body for r in hook.requests} == {hook.requests[0].body}
        body = json.loads(hook.requests[0].body)
        assert (body["watch"], body["count"], body["key"]) == ("all", 2, hook.requests[0].headers["Idempotency-Key"])
        assert [(p["title"], p["company"], p["city"], p["salary"]) for p in body["postings"]] == [
            ("AI算子开发工程师", "吉利汽车", "杭州", "43K"), ("模型训练优化开发工程师", "初速度", "苏州", "35K")]
        assert hook.requests[0].headers["Content-Type"] == "application/json; charset=utf-8"
        assert deliveries(db) == [(1, "hook", "sent", 3), (2, "hook", "sent", 3)]
        again = deliver(db, config)
        assert (again.returncode, again.stdout, len(hook.requests)) == (0, "alerts: new matches all 0 · delivered nothing\n", 3)


def test_a_destination_that_fails_is_not_tried_again_in_the_same_delivery(db, tmp_path, monkeypatch):
    """Each message of 20 postings was tried on its own: a webhook that timed out held the run for retries × timeout
    per message (an hour for 2,000 new matches), and each printed the same line."""
    import io

    from crawler.alerts import delivery as alerts
    monkeypatch.setattr(alerts, "MAX_PER_MESSAGE", 1)  # the two seeds: two messages per watch
    with Receiver(plan=[500] * 10) as hook:
        config = write_config(tmp_path / "alerts.toml", webhook(hook.url("/jobs"), retries=1))
        add(db, config, "a", "--include-existing")
        add(db, config, "b", "--include-existing")
        report = alerts.deliver_new_matches(db, config_path=config, out=io.StringIO(), sleep=lambda s: None)
        assert len(hook.requests) == 2  # the first message and its one retry
    assert report.errors == [f'watch a → webhook "hook" ({hook.url("/jobs")}): HTTP 500; 2 kept pending',
                             f'watch b → webhook "hook" ({hook.url("/jobs")}): HTTP 500; 2 kept pending']
    assert (report.pending, report.sent) == (4, {})
    assert rows(db, "SELECT watch_id, posting_id, status, attempts FROM watch_deliveries ORDER BY 1, 2") == [
        (1, 1, "pending", 2), (1, 2, "pending", 0), (2, 1, "pending", 0), (2, 2, "pending", 0)]


def test_a_webhook_that_keeps_failing_keeps_its_deliveries_pending_for_the_next_run(db, tmp_path):
    with Receiver(plan=[500, 500]) as hook:
        config = write_config(tmp_path / "alerts.toml", webhook(hook.url("/jobs"), retries=1))
        add(db, config, "all", "--include-existing")
        proc = deliver(db, config)
        assert proc.returncode == 1
        assert proc.stderr == f'alerts: watch all → webhook "hook" ({hook.url("/jobs")}): HTTP 500; 2 kept pending\n'
        assert deliveries(db) == [(1, "hook", "pending", 2), (2, "hook", "pending", 2)]
        assert rows(db, "SELECT DISTINCT error FROM watch_deliveries") == [(f'webhook "hook" ({hook.url("/jobs")}): HTTP 500',)]
        proc = deliver(db, config)
        assert (proc.returncode, proc.stdout) == (0, "alerts: new matches all 0 · delivered hook 2\n")
        assert posted(hook) == [[1, 2]] * 3
        assert deliveries(db) == [(1, "hook", "sent", 3), (2, "hook", "sent", 3)]


def test_a_client_error_is_not_retried(db, tmp_path):
    with Receiver(plan=[400]) as hook:
        config = write_config(tmp_path / "alerts.toml", webhook(hook.url("/jobs")))
        add(db, config, "all", "--include-existing")
        assert deliver(db, config).returncode == 1
        assert len(hook.requests) == 1
        assert deliveries(db) == [(1, "hook", "pending", 1), (2, "hook", "pending", 1)]


def test_a_crash_between_sending_and_recording_sends_again_and_a_recorded_delivery_never(db, tmp_path):
    """At-least-once: the deliverer is killed (SIGKILL) after the receiver got the alert and before it
    answered; the delivery stays pending and the next run sends the same alert (same key) again."""
    procs: list[subprocess.Popen] = []

    def kill_the_sender(_):
        if len(hook.requests) == 1:
            os.kill(procs[0].pid, signal.SIGKILL)
            procs[0].wait(timeout=30)

    with Receiver(before_answer=kill_the_sender) as hook:
        config = write_config(tmp_path / "alerts.toml", webhook(hook.url("/jobs")))
        add(db, config, "all", "--include-existing")
        procs.append(subprocess.Popen([sys.executable, "-m", "crawler.cli", "watch", "deliver", "--db", str(db),
                                       "--config", str(config)], cwd=ROOT, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE))
        procs[0].communicate(timeout=120)
        assert procs[0].returncode == -signal.SIGKILL
        assert deliveries(db) == [(1, "hook", "pending", 0), (2, "hook", "pending", 0)]
        proc = deliver(db, config)
        assert (proc.returncode, proc.stdout) == (0, "alerts: new matches all 0 · delivered hook 2\n")
        assert posted(hook) == [[1, 2], [1, 2]]
        assert hook.requests[0].headers["Idempotency-Key"] == hook.requests[1].headers["Idempotency-Key"]
        assert deliveries(db) == [(1, "hook", "sent", 1), (2, "hook", "sent", 1)]
        assert deliver(db, config).returncode == 0
        assert len(hook.requests) == 2


# --------------------------------------------------------------------------- ntfy, e-mail, file, stdout


def test_an_ntfy_topic_gets_a_plain_text_post_with_a_readable_title(db, tmp_path):
    with Receiver() as topic:
        dest = f'[destinations.phone]\ntype = "ntfy"\nurl = "{topic.url("/jobcrawl-alerts")}"\ntoken = "${{NTFY_TEST_TOKEN}}"\n'
        config = write_config(tmp_path / "alerts.toml", dest, browse_url="http://127.0.0.1:8001")
        os.environ["NTFY_TEST_TOKEN"] = "tk_secret"
        try:
            add(db, config, "算子", "--include-existing", "--search", "吉利")
            assert deliver(db, config).returncode == 0
        finally:
            del os.environ["NTFY_TEST_TOKEN"]
    [request] = topic.requests
    title = str(email.header.make_header(email.header.decode_header(request.headers["Title"])))
    assert (request.path, title) == ("/jobcrawl-alerts", "jobcrawl: 1 new posting for 算子")
    assert request.headers["Authorization"] == "Bearer tk_secret"
    assert request.headers["Click"] == "http://127.0.0.1:8001/jobs/postings/1"
    assert request.body.decode("utf-8") == ("- AI算子开发工程师 · 吉利汽车 · 杭州 · 43K\n"
                                            "  http://127.0.0.1:8001/jobs/postings/1\n  搜索“吉利”")


def test_e_mail_through_a_local_smtp_server(db, tmp_path):
    with SmtpSink() as smtp:
        dest = (f'[destinations.mail]\ntype = "email"\nhost = "127.0.0.1"\nport = {smtp.port}\nsecurity = "none"\n'
                'sender = "jobcrawl <alerts@example.org>"\nto = ["me@example.org"]\n')
        config = write_config(tmp_path / "alerts.toml", dest)
        add(db, config, "all", "--include-existing")
        assert deliver(db, config).returncode == 0
        assert deliver(db, config).returncode == 0  # nothing sent twice
    [message] = smtp.messages
    assert smtp.envelopes == [("alerts@example.org", ["me@example.org"])]
    assert (message["Subject"], message["To"]) == ("jobcrawl: 2 new postings for all", "me@example.org")
    assert message["Message-ID"].endswith("@jobcrawl.alerts>")
    assert message.get_content().replace("\r\n", "\n") == ("jobcrawl: 2 new postings for all\n- AI算子开发工程师 · 吉利汽车 · 杭州 · 43K\n"
                                     "- 模型训练优化开发工程师 · 初速度 · 苏州 · 35K\n")
    assert deliveries(db) == [(1, "mail", "sent", 1), (2, "mail", "sent", 1)]


def test_file_and_stdout_destinations(db, tmp_path):
    config = write_config(tmp_path / "alerts.toml", '[destinations.log]\ntype = "file"\npath = "alerts.jsonl"\n')
    add(db, config, "all", "--include-existing", "--to", "log", "--to", "stdout")
    proc = deliver(db, config)
    assert proc.stdout.splitlines() == [
        "jobcrawl: 2 new postings for all", "- AI算子开发工程师 · 吉利汽车 · 杭州 · 43K",
        "- 模型训练优化开发工程师 · 初速度 · 苏州 · 35K", "alerts: new matches all 2 · delivered log 2, stdout 2"]
    [line] = (tmp_path / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
    assert [p["title"] for p in json.loads(line)["postings"]] == [TITLES[1], TITLES[2]]


# --------------------------------------------------------------------------- what a watch matches


def test_criteria_blocklist_and_fit_decide_what_is_delivered(db, tmp_path):
    profile = tmp_path / "profile.toml"
    profile.write_text((ROOT / "seeds" / "profile.toml").read_text(encoding="utf-8").replace(
        'companies = ["星云人才"', 'companies = ["初速度", "星云人才"'), encoding="utf-8")
    config = write_config(tmp_path / "alerts.toml", "", profile="profile.toml")
    for name, args in (("hz", ["--city", "杭州"]), ("pay", ["--min-salary", "40k"]), ("fit", ["--min-fit", "80"]),
                       ("cuda", ["--search", "CUDA"]), ("changed", ["--changed-since", "2026-11-30"])):
        add(db, config, name, "--include-existing", "--to", "stdout", *args)
    proc = deliver(db, config)
    # 初速度 (posting 2) is blocked by the profile: no watch delivers it, whatever it asks
    assert proc.stdout.splitlines()[-1] == "alerts: new matches hz 1, pay 1, fit 1, cuda 1, changed 0 · delivered stdout 4"
    assert rows(db, "SELECT DISTINCT posting_id FROM watch_deliveries") == [(1,)]
    assert rows(db, "SELECT posting_id, profile, rule, detail FROM posting_blocks") == [
        (2, "cuda-infra", "company:初速度", "company: 初速度")]
    assert rows(db, "SELECT posting_id, overall FROM evaluations WHERE scorer = 'fit:cuda-infra' ORDER BY 1") == [(1, 87), (2, 0)]
    assert json.loads(rows(db, "SELECT reasons FROM watch_matches WHERE posting_id = 1 AND watch_id = 3")[0][0]) == [
        "匹配度87 ≥ 80"]


def test_min_fit_needs_a_profile(db, tmp_path):
    config = write_config(tmp_path / "alerts.toml", "")
    proc = run_cli("watch", "add", "x", "--min-fit", "70", "--db", str(db), "--config", str(config))
    assert proc.returncode == 2 and "--min-fit needs a profile" in proc.stderr


def test_postings_already_there_are_the_baseline_and_an_ingest_delivers_the_new_ones(tmp_path, monkeypatch):
    """The hook at the end of every ingest: the watch was added when seed 000 was stored (its baseline);
    the ingest that stores seed 003 delivers it, and the next ingest delivers nothing."""
    inputs, db = tmp_path / "in", tmp_path / "jobs.db"
    inputs.mkdir()
    shutil.copy(SEED0, inputs)
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    config = write_config(tmp_path / "alerts.toml", '[destinations.log]\ntype = "file"\npath = "alerts.jsonl"\n')
    assert add(db, config, "all").stdout == "watch all added (#1) → log; 1 postings match already: the baseline (never delivered)\n"
    monkeypatch.setenv("JOBCRAWL_ALERTS_CONFIG", str(config))
    shutil.copy(SEED3, inputs)
    proc = run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    assert "alerts: new matches all 1 · delivered log 1" in proc.stdout.splitlines()
    again = run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    assert "alerts: new matches all 0 · delivered nothing" in again.stdout.splitlines()
    lines = (tmp_path / "alerts.jsonl").read_text(encoding="utf-8").splitlines()
    assert [[p["title"] for p in json.loads(line)["postings"]] for line in lines] == [[TITLES[2]]]
    assert rows(db, "SELECT posting_id, baseline, run_id FROM watch_matches ORDER BY posting_id") == [(1, 1, None), (2, 0, 2)]
    assert json.loads(rows(db, "SELECT stats FROM runs WHERE id = 2")[0][0])["jobcrawl/alerts/sent"] == 1


def test_only_the_canonical_member_of_a_duplicate_cluster_is_delivered(tmp_path):
    inputs, db = tmp_path / "in", tmp_path / "jobs.db"
    inputs.mkdir()
    shutil.copy(SEED0, inputs)
    seed0 = SEED0.read_text(encoding="utf-8")
    copy = "星云人才" + seed0[seed0.index("\n"):]  # a staffing agency's copy, in another city
    (inputs / "agency.txt").write_text(copy.replace("杭州 · 人工智能", "上海 · 人工智能"), encoding="utf-8")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    assert rows(db, "SELECT posting_id, reason FROM cluster_members ORDER BY 1") == [(1, "new"), (2, "cross_company_copy")]
    config = write_config(tmp_path / "alerts.toml", "")
    add(db, config, "all", "--include-existing")
    assert deliver(db, config).stdout.splitlines()[-1] == "alerts: new matches all 1 · delivered stdout 1"
    assert rows(db, "SELECT posting_id FROM watch_deliveries") == [(1,)]


def test_remove_cancels_pending_deliveries_and_keeps_the_history(db, tmp_path):
    config = write_config(tmp_path / "alerts.toml", webhook("http://127.0.0.1:9/nothing-listens", retries=0))
    add(db, config, "all", "--include-existing")
    assert deliver(db, config).returncode == 1
    proc = run_cli("watch", "remove", "all", "--db", str(db), check=True)
    assert proc.stdout == "watch all removed; 2 pending deliveries cancelled\n"
    assert [r[2] for r in deliveries(db)] == ["cancelled", "cancelled"]
    assert rows(db, "SELECT count(*) FROM watch_matches") == [(2,)]
    assert run_cli("watch", "list", "--db", str(db), check=True).stdout == "no watches (jobcrawl watch add NAME --search …)\n"
    add(db, config, "all")  # the name is free again


def test_a_destination_missing_from_the_config_keeps_its_deliveries_pending(db, tmp_path):
    config = write_config(tmp_path / "alerts.toml", '[destinations.log]\ntype = "file"\npath = "a.jsonl"\n')
    add(db, config, "all", "--include-existing")
    other = write_config(tmp_path / "other.toml", "")
    proc = deliver(db, other)
    assert proc.returncode == 1
    assert proc.stderr == "alerts: watch all: destination 'log' is not in the alerts config; 2 kept pending\n"
    assert deliver(db, config).stdout == "alerts: new matches all 0 · delivered log 2\n"


@pytest.mark.parametrize("body, message", [
    pytest.param('[destinations.h]\ntype = "webhook"\nurl = "ftp://x"\n', "destinations.h.webhook.url: String should match",
                 id="not-http"),
    pytest.param('[destinations.h]\ntype = "pager"\n', "destinations.h: Input tag 'pager' found using 'type' does not match",
                 id="unknown-type"),
    pytest.param('[destinations.m]\ntype = "email"\nhost = "x"\nsender = "a@b"\nto = ["c@d"]\npassword = "${NOT_SET_X}"\n',
                 "destinations.m.password: environment variable NOT_SET_X is not set", id="missing-secret"),
])
def test_config_errors_name_the_file_and_the_field(db, tmp_path, body, message):
    config = write_config(tmp_path / "alerts.toml", body)
    proc = run_cli("watch", "add", "x", "--db", str(db), "--config", str(config))
    assert proc.returncode == 2
    assert f"{config}: {message}" in proc.stderr


def test_watch_list(db, tmp_path):
    config = write_config(tmp_path / "alerts.toml", "")
    add(db, config, "cuda-hz", "--search", "CUDA 算子", "--city", "杭州", "--min-salary", "40k", "--exclude-duplicates")
    out = run_cli("watch", "list", "--db", str(db), check=True).stdout
    assert out.startswith("cuda-hz: search “CUDA 算子” · city 杭州 · min salary 40k · no duplicates → stdout · "
                          "delivered 0 postings (0 sent, 0 pending) · baseline 1 · since 20")


def test_after_a_run_fit_is_scored_only_for_new_and_changed_postings(tmp_path, monkeypatch):
    from crawler.alerts.delivery import deliver_new_matches

    inputs, db = tmp_path / "in", tmp_path / "jobs.db"
    inputs.mkdir()
    shutil.copy(SEED0, inputs / "a.txt")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    (tmp_path / "profile.toml").write_text((ROOT / "seeds" / "profile.toml").read_text(encoding="utf-8"), encoding="utf-8")
    config = write_config(tmp_path / "alerts.toml", "", profile="profile.toml")
    monkeypatch.setenv("JOBCRAWL_ALERTS_CONFIG", str(config))
    add(db, config, "all")

    def scored() -> int:
        return deliver_new_matches(db, config_path=config, out=open(os.devnull, "w")).fit["scored"]

    assert scored() == 0  # `watch add` scored the one posting
    shutil.copy(SEED3, inputs / "b.txt")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)  # its hook scored b.txt's posting
    assert scored() == 0
    (inputs / "a.txt").write_text(SEED0.read_text(encoding="utf-8").replace("\n43K\n", "\n30K\n"), encoding="utf-8")
    run_cli("watch", "remove", "all", "--db", str(db), check=True)  # no hook: the changed posting waits for the step
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    add(db, config, "again")
    assert rows(db, "SELECT posting_id, overall FROM evaluations WHERE scorer = 'fit:cuda-infra' ORDER BY 1") == [
        (1, 68), (2, 68)]  # 43K → 30K, a quarter under the floor: the salary part fell from 100 to 25 (87 → 68)
    profile = tmp_path / "profile.toml"
    profile.write_text(profile.read_text(encoding="utf-8").replace("min_monthly_salary = 40000", "min_monthly_salary = 30000"),
                       encoding="utf-8")
    assert scored() == 2  # another profile: every open posting


def test_with_a_profile_and_no_watch_a_run_still_scores_fit_and_applies_the_blocklist(tmp_path, monkeypatch):
    db = tmp_path / "jobs.db"
    (tmp_path / "profile.toml").write_text((ROOT / "seeds" / "profile.toml").read_text(encoding="utf-8").replace(
        'companies = ["星云人才"', 'companies = ["初速度", "星云人才"'), encoding="utf-8")
    monkeypatch.setenv("JOBCRAWL_ALERTS_CONFIG", str(write_config(tmp_path / "alerts.toml", "", profile="profile.toml")))
    proc = run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    assert not [line for line in proc.stdout.splitlines() if line.startswith("alerts:")]
    assert rows(db, "SELECT posting_id, rule FROM posting_blocks") == [(2, "company:初速度")]
    assert rows(db, "SELECT posting_id, overall FROM evaluations WHERE scorer = 'fit:cuda-infra' ORDER BY 1") == [(1, 87), (2, 0)]


def test_a_repost_that_becomes_canonical_is_new_unless_the_watch_excludes_duplicates(tmp_path, monkeypatch):
    """Seed 000 is delivered to both watches; a repost with one more bullet joins its cluster and becomes
    the canonical member (the most complete): watch x delivers it, watch y (--exclude-duplicates) does not."""
    inputs, db = tmp_path / "in", tmp_path / "jobs.db"
    inputs.mkdir()
    shutil.copy(SEED0, inputs / "a.txt")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", AS_OF, check=True)
    config = write_config(tmp_path / "alerts.toml", "")
    monkeypatch.setenv("JOBCRAWL_ALERTS_CONFIG", str(config))
    add(db, config, "x", "--include-existing")
    add(db, config, "y", "--include-existing", "--exclude-duplicates")
    assert deliver(db, config).stdout.splitlines()[-1] == "alerts: new matches x 1, y 1 · delivered stdout 2"
    text = SEED0.read_text(encoding="utf-8")
    (inputs / "b.txt").write_text(text.replace("熟练使用性能工具链", "有大规模集群训练经验者优先\n熟练使用性能工具链", 1),
                                  encoding="utf-8")
    proc = run_cli("ingest", str(inputs), "--db", str(db), "--as-of", "2026-11-30T12:00:00+08:00", check=True)
    assert rows(db, "SELECT canonical_posting_id FROM clusters") == [(2,)]
    assert "alerts: new matches x 1, y 0 · delivered stdout 1" in proc.stdout.splitlines()
    assert rows(db, "SELECT watch_id, posting_id FROM watch_deliveries ORDER BY 1, 2") == [(1, 1), (1, 2), (2, 1)]


def test_a_destination_the_config_lacks_is_a_usage_error_at_add(db, tmp_path):
    config = write_config(tmp_path / "alerts.toml", "")
    proc = run_cli("watch", "add", "x", "--to", "pager", "--db", str(db), "--config", str(config))
    assert proc.returncode == 2 and "destination 'pager' is not in the alerts config" in proc.stderr
    assert rows(db, "SELECT count(*) FROM watches") == [(0,)]
