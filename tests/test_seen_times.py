"""A posting's first_seen and last_seen stored once: generated columns that read ``as_of`` where the stored time
(first_seen_stored, last_seen_stored) is NULL, as the writer leaves it wherever the time is the posting's as_of."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import run_cli, sql
from crawler.store.history import HIDE_STALE
from test_migrations import migrated

T1, T2, T3 = "2026-03-01T00:00:00+00:00", "2026-03-08T00:00:00+00:00", "2026-03-15T00:00:00+00:00"
HEADER = "职位名称,公司名称,薪资,工作地点,职位描述,职位链接\n"
TIMES = "SELECT title, as_of, first_seen, last_seen, first_seen_stored, last_seen_stored FROM postings ORDER BY id"


def _csv(path, rows: list[tuple[str, str]]):
    path.write_text(HEADER + "".join(f"{title},示例公司,20-30K,杭州,{jd},https://jobs.example.com/{title}\n"
                                     for title, jd in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """The database after each of three ingests: A and B at T1; A unchanged and B changed at T2; A again at T3."""
    tmp = tmp_path_factory.mktemp("seen")
    db = tmp / "jobs.db"
    out = []
    for at, rows in ((T1, [("A", "负责推理服务"), ("B", "负责训练框架")]),
                     (T2, [("A", "负责推理服务"), ("B", "负责训练框架与算子优化")]),
                     (T3, [("A", "负责推理服务")])):
        run_cli("ingest", str(_csv(tmp / f"{at[:10]}.csv", rows)), "--db", str(db), "--as-of", at, check=True)
        out.append(sql(db, TIMES))
    return db, out


@pytest.mark.slow
@pytest.mark.parametrize("step, expected", [
    pytest.param(0, [("A", T1, T1, T1, None, None), ("B", T1, T1, T1, None, None)], id="seen-once-stores-no-time"),
    pytest.param(1, [("A", T1, T1, T2, None, T2), ("B", T2, T1, T2, T1, None)], id="unchanged-and-new-version"),
    pytest.param(2, [("A", T1, T1, T3, None, T3), ("B", T2, T1, T2, T1, None)], id="seen-again-later"),
])
def test_times_are_stored_only_where_they_differ_from_as_of(history, step, expected):
    assert history[1][step] == expected


@pytest.mark.slow
def test_the_stale_filter_and_the_first_seen_sort_read_their_indexes(history):
    db, _ = history
    with sqlite3.connect(db) as conn:
        stale = " ".join(r[3] for r in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM postings WHERE {HIDE_STALE}", {"stale_cutoff": T2}))
        newest = " ".join(r[3] for r in conn.execute("EXPLAIN QUERY PLAN SELECT id FROM postings ORDER BY first_seen"))
        assert [r[0] for r in conn.execute(f"SELECT title FROM postings WHERE {HIDE_STALE}",
                                           {"stale_cutoff": T3})] == ["A"]
    assert "idx_postings_last_seen_closed_at" in stale
    assert "idx_postings_first_seen" in newest


@pytest.mark.parametrize("version", ["6e4c4bc", "042b469"])
def test_the_migration_keeps_every_time_and_stores_those_equal_to_as_of_once(version, tmp_path):
    path, before, after = migrated(version, tmp_path, "SELECT id, as_of, first_seen, last_seen FROM postings ORDER BY id")
    assert before and after == before
    stored = sql(path, "SELECT count(*) FROM postings WHERE first_seen_stored IS NOT NULL OR last_seen_stored IS NOT NULL"
                       " OR first_seen != as_of OR last_seen != as_of")
    assert stored == [(0,)]
