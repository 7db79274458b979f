"""Time (#27.5) through the real CLI: what a post time rests on, the source's zone, and "new" postings — by their
post time, or without one only when a run after the first of their source saw them first."""

from __future__ import annotations

import os
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT, SEEDS, run_cli

pytestmark = pytest.mark.slow

NEW_POSTINGS = yaml.safe_load((ROOT / "browse" / "metadata.yaml").read_text(encoding="utf-8"))[
    "databases"]["jobs"]["queries"]["new_postings"]["sql"]
MTIME = datetime(2026, 11, 30, 4, 0, tzinfo=timezone.utc).timestamp()


def new_postings(db: Path, days: str = "") -> list[tuple]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [(r["title"], r["new_by"]) for r in conn.execute(NEW_POSTINGS, {"days": days})]
    finally:
        conn.close()


def copy(src: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dest)
    os.utime(dest, (MTIME, MTIME))
    return dest


def test_a_first_import_is_not_new_postings_a_later_run_is(tmp_path):
    db = tmp_path / "jobs.db"
    first = copy(FIXTURES / "tabular" / "boss_list.csv", tmp_path / "a" / "boss_list.csv")
    run_cli("ingest", str(first), "--db", str(db))
    assert new_postings(db) == []  # no post times, all first seen by the first run of their source
    later = tmp_path / "b" / "boss_list.csv"
    later.parent.mkdir()
    later.write_text(first.read_text(encoding="utf-8") + "推理框架工程师,北京·海淀区,35-55K,3-5年本科,示例推理,人工智能A轮"
                     "100-499人,五险一金,https://www.zhipin.com/job_detail/9f9f9f9f.html\n", encoding="utf-8")
    run_cli("ingest", str(later), "--db", str(db))
    assert new_postings(db) == [("推理框架工程师", "first_seen")]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT first_run_id, count(*) FROM postings GROUP BY 1 ORDER BY 1").fetchall() == [(1, 4), (2, 1)]


def test_post_time_relative_to_the_file_mtime_is_marked(tmp_path):
    db = tmp_path / "jobs.db"
    dump = copy(SEEDS / "000_7c4373297891d5ca.txt", tmp_path / "in" / "000.txt")
    run_cli("ingest", str(dump), "--db", str(db), check=True)
    berlin = copy(SEEDS / "003_5eabc84b6ca487f0.txt", tmp_path / "in2" / "003.txt")
    run_cli("ingest", str(berlin), "--db", str(db), "--tz", "Europe/Berlin", "--as-of", "2026-12-01T12:00:00+01:00",
            check=True)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT posted_raw, posted_at, posted_approx, posted_source, tz, posted_local FROM postings"
                        " ORDER BY id").fetchall()
    assert rows == [
        ("发布于 大约 4 小时前", "2026-11-30T00:00:00+00:00", 1, "file_mtime", "Asia/Shanghai", "2026-11-30T08:00:00+08:00"),
        ("发布于 2 小时前", "2026-12-01T09:00:00+00:00", 0, "as_of", "Europe/Berlin", "2026-12-01T10:00:00+01:00"),
    ]
    assert new_postings(db) == [("模型训练优化开发工程师", "posted"), ("AI算子开发工程师", "posted")]
    assert [r[0] for r in conn.execute("SELECT posted_local FROM jobs ORDER BY id")] == [rows[0][5], rows[1][5]]


def test_an_unknown_time_zone_is_a_usage_error(tmp_path):
    proc = run_cli("ingest", str(SEEDS), "--db", str(tmp_path / "jobs.db"), "--tz", "Mars/Olympus")
    assert proc.returncode == 2
    assert "'Mars/Olympus' is not a time zone name" in proc.stderr
