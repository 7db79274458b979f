"""Per-source health (#25 point 5): the ``source_health`` view over real ``runs`` rows, and ``jobcrawl sources --health``."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from crawler.store.health import source_health
from crawler.store.runs import start_run, write_run_end
from crawler.store.schema import open_db


def add_run(db, source: str, started: str, status: str, *, found: int = 0, requests: int = 1, errors: int = 0,
            stats: dict | None = None, kind: str = "crawl") -> int:
    run_id = start_run(db, kind, {"source": source}, source=source, mark_stale=False, started=started)
    write_run_end(db, run_id, {"found": found, "new": found, "requests": requests, "errors": errors}, status=status,
                  stats=stats or {}, responses={k: n for k, n in (("200", requests - errors), ("500", errors)) if n})
    return run_id


HISTORIES = [
    pytest.param([("2026-12-01", "ok", 3, {})], "ok", "2026-12-01", id="ok"),
    pytest.param([("2026-12-01", "ok", 3, {}), ("2026-12-02", "failed", 0, {}), ("2026-12-03", "partial", 0, {})],
                 "failing since 2026-12-02", "2026-12-01", id="failing-since-first-run-after-success"),
    pytest.param([("2026-12-01", "failed", 0, {}), ("2026-12-02", "interrupted", 0, {})],
                 "failing since 2026-12-01", None, id="never-succeeded"),
    pytest.param([("2026-12-01", "failed", 0, {}), ("2026-12-02", "partial", 2, {})], "ok", "2026-12-02",
                 id="partial-with-postings-is-a-success"),
    pytest.param([("2026-12-01", "ok", 3, {}), ("2026-12-02", "ok", 0, {"robotstxt/forbidden": 4})],
                 "robots-blocked", "2026-12-02", id="robots-blocked"),
    pytest.param([("2026-12-01", "ok", 3, {}), ("2026-12-02", "ok", 0, {})], "empty", "2026-12-02", id="empty"),
]


@pytest.mark.parametrize(("history", "state", "last_success"), HISTORIES)
def test_source_health_state(tmp_path, history, state, last_success):
    db = open_db(tmp_path / "jobs.db")
    for started, status, found, stats in history:
        last = add_run(db, "acme", started, status, found=found, stats=stats)
    add_run(db, None, "2026-12-04", "ok", kind="ingest")  # not a crawl: not a source
    got = source_health(db)
    db.close()
    assert [(r["source"], r["state"], r["last_success"], r["last_run"]) for r in got] == [
        ("acme", state, last_success, last)]


@pytest.mark.slow
def test_sources_health_command(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    add_run(db, "good", "2026-12-01T00:00:00+00:00", "ok", found=5, requests=6)
    add_run(db, "bad", "2026-12-01T00:00:00+00:00", "ok", found=5, requests=2)
    add_run(db, "bad", "2026-12-02T00:00:00+00:00", "partial", requests=3, errors=3)
    db.close()
    proc = run_cli("sources", "--health", "--db", str(tmp_path / "jobs.db"))
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split(" · ")[0] for line in lines] == [
        "bad: failing since 2026-12-02T00:00:00+00:00", "good: ok"]
    assert lines[0].split(" · ", 1)[1] == (
        "last run 3 2026-12-02T00:00:00+00:00 (partial) · last success 2026-12-01T00:00:00+00:00 · requests 3 · "
        "responses 500×3 · postings found 0 · new 0 · updated 0 · closed 0 · errors 3 · HTTP cache 0 bytes in 0 entries")
    as_json = run_cli("sources", "--health", "--json", "--db", str(tmp_path / "jobs.db"))
    assert [json.loads(line)["responses"] for line in as_json.stdout.splitlines()] == [{"500": 3}, {"200": 6}]
