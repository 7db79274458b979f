"""History and "changed since" on a real database: versions from re-ingests, closing and reopening kept by
the postings_closed and postings_reopened triggers, `jobcrawl history URL|ID`, `jobcrawl export --changed-since`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import SEEDS, export_records, run_cli
from crawler.store.closing import close_missing
from crawler.store.schema import open_db

pytestmark = pytest.mark.slow

SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
OLD_BULLET = "熟悉大模型全链路调优逻辑，可独立完成模型编译、显存优化、通信优化、调度优化、推理解码优化等端到端性能调优工作"
NEW_BULLET = "熟悉Triton与TVM，有大模型推理框架（vLLM、TensorRT-LLM）的开发经验"
URL = "https://careers.example.com/jobs/6"


@pytest.fixture(scope="module")
def changed_db(tmp_path_factory) -> Path:
    """Seed 000 and 003 ingested on 11-29; seed 000 again on 11-30 with a new salary and a bullet replaced;
    its listing read without it on 12-01 (closed); everything ingested again on 12-02 (reopened)."""
    tmp = tmp_path_factory.mktemp("history")
    inputs, db = tmp / "in", tmp / "jobs.db"
    inputs.mkdir()
    (inputs / "a.txt").write_text(SEED0, encoding="utf-8")
    (inputs / "b.txt").write_text((SEEDS / "003_5eabc84b6ca487f0.txt").read_text(encoding="utf-8"), encoding="utf-8")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", "2026-11-29T12:00:00+08:00", check=True)
    (inputs / "a.txt").write_text(SEED0.replace("\n43K\n", "\n45-65K\n").replace(OLD_BULLET, NEW_BULLET), encoding="utf-8")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", "2026-11-30T12:00:00+08:00", check=True)
    database = open_db(db)
    key = database.execute("SELECT key FROM postings WHERE id = 1").fetchone()[0]
    close_missing(database, {"textdump:test": [key]}, at="2026-11-30T06:00:00+00:00")
    close_missing(database, {"textdump:test": []}, at="2026-12-01T00:00:00+00:00")
    with database.conn:
        database.execute("UPDATE postings SET url = ? WHERE id = 2", (URL,))  # text dumps carry none
    database.close()
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", "2026-12-02T12:00:00+08:00", check=True)
    return db


def test_closing_and_reopening_are_events(changed_db):
    with sqlite3.connect(changed_db) as conn:
        assert conn.execute("SELECT posting_id, event, at FROM posting_events ORDER BY id").fetchall() == [
            (1, "closed", "2026-12-01T00:00:00+00:00"), (1, "reopened", "2026-12-02T04:00:00+00:00")]


EXPECTED = [
    "#1 AI算子开发工程师 · 吉利汽车 · 杭州 — 2 versions",
    "2026-11-29 04:00 v1: 首次出现 first seen",
    "2026-11-30 04:00 v2: 10 changes",
    "    薪资 salary: 43K → 45–65K",
    f"    要求 requirements − {OLD_BULLET}",
    f"    要求 requirements + {NEW_BULLET}",
    "    技能 skills − AI compiler",
    "    技能 skills − inference optimization",
    "    技能 skills + Triton",
    "    技能 skills + TVM",
    "    技能 skills + LLM inference",
    "    技能 skills + vLLM",
    "    技能 skills + TensorRT-LLM",
    "2026-12-01 00:00: 已关闭 closed",
    "2026-12-02 04:00: 重新开放 reopened",
]


def test_history_command(changed_db):
    assert run_cli("history", "1", "--db", str(changed_db), check=True).stdout.splitlines() == EXPECTED


@pytest.mark.parametrize("ref", [pytest.param(URL, id="url"), pytest.param(URL + "/", id="url-with-slash")])
def test_history_by_url(changed_db, ref):
    assert run_cli("history", ref, "--db", str(changed_db), check=True).stdout.splitlines() == [
        "#2 模型训练优化开发工程师 · 初速度 · 苏州 — 1 version", "2026-11-29 04:00 v1: 首次出现 first seen"]


def test_history_as_json_and_of_an_unknown_posting(changed_db):
    steps = json.loads(run_cli("history", "1", "--json", "--db", str(changed_db), check=True).stdout)["steps"]
    assert steps[1]["changes"][0] == {"field": "salary", "label": "薪资 salary", "kind": "changed", "before": "43K",
                                      "after": "45–65K"}
    proc = run_cli("history", "https://nowhere.example/1", "--db", str(changed_db))
    assert proc.returncode == 2 and "no posting with id or URL 'https://nowhere.example/1'" in proc.stderr


@pytest.mark.parametrize("since, ids", [
    pytest.param("2026-11-29T04:00:00+00:00", [1, 2], id="both-first-seen"),
    pytest.param("2026-11-30", [1], id="the-new-version"),
    pytest.param("2026-12-01T08:00:00+08:00", [1], id="the-closing-local-time"),
    pytest.param("2026-12-02T04:00:01+00:00", [], id="nothing-after-the-reopening"),
])
def test_export_changed_since(changed_db, tmp_path, since, ids):
    out = tmp_path / "changed.jsonl"
    run_cli("export", "--db", str(changed_db), "--changed-since", since, "--out", str(out), check=True)
    assert [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()] == ids


def test_export_without_the_filter_has_every_posting(changed_db):
    assert [r["id"] for r in export_records(changed_db)] == [1, 2]


def test_a_bad_changed_since_is_a_usage_error(changed_db):
    proc = run_cli("export", "--db", str(changed_db), "--changed-since", "last week")
    assert proc.returncode == 2 and "--changed-since 'last week' is not an ISO date" in proc.stderr
