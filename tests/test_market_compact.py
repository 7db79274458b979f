"""Market statistics stored small: the scoring step stores one row per salary group in ``market_figures`` (the scope as
a code, no index) and the time once (``meta``); the view ``market_stats`` gives every reader today's columns, the
counts of open postings counted when read, equal to the statistics the scorer reads (:meth:`normalize.score.Market.rows`)
and to a direct computation over the postings."""

from __future__ import annotations

import gzip
import shutil
import sqlite3
import statistics
from collections import Counter

import pytest

from conftest import FIXTURES
from crawler.score.market import compute_market, recompute
from crawler.store.schema import open_db

NOW = "2026-12-01T00:00:00+00:00"
CLOSED = "2026-11-30T00:00:00+00:00"

# (company, city, category, currency, monthly salary, estimated): 20 salaries in 杭州 · 数据分析 (10,000 … 29,000,
# alternating between two companies), one more in 上海 · 数据分析, one in USD, postings without a salary, a company
# or a category, an estimated salary (counted as an opening, not as a salary).
HANGZHOU = [("数澜" if i % 2 == 0 else "蚂蚁", "杭州", "数据分析", "CNY", 10000.0 + 1000 * i, 0) for i in range(20)]
CORPUS = HANGZHOU + [
    ("蚂蚁", "上海", "数据分析", "CNY", 30000.0, 0),
    ("蚂蚁", "上海", "后端开发", "USD", 5000.0, 0),
    ("", "北京", "后端开发", "CNY", None, 0),
    ("无类", "北京", None, "CNY", 20000.0, 0),
    ("数澜", "杭州", "数据分析", "CNY", 50000.0, 1),
]
ESTIMATED = len(CORPUS)  # posting id of the estimated salary

STORED_SQL = "SELECT scope, key, currency, n, p25, median, p75 FROM market_figures ORDER BY rowid"
VIEW_SQL = "SELECT scope, key, currency, n, p25, median, p75, computed_at FROM market_stats"

ALL_OPEN = [
    ("category", "后端开发", "USD", 1, None, None, None),
    ("category", "数据分析", "CNY", 21, 15000.0, 20000.0, 25000.0),
    ("city+category", "上海 · 后端开发", "USD", 1, None, None, None),
    ("city+category", "上海 · 数据分析", "CNY", 1, None, None, None),
    ("city+category", "杭州 · 数据分析", "CNY", 20, 14750.0, 19500.0, 24250.0),
]
ALL_OPEN_COUNTS = [
    ("company_open", "数澜", 11), ("company_open", "无类", 1), ("company_open", "蚂蚁", 12),
    ("company+category_open", "数澜 · 数据分析", 11), ("company+category_open", "蚂蚁 · 后端开发", 1),
    ("company+category_open", "蚂蚁 · 数据分析", 11),
    ("city+category_open", "上海 · 后端开发", 1), ("city+category_open", "上海 · 数据分析", 1),
    ("city+category_open", "北京 · 后端开发", 1), ("city+category_open", "杭州 · 数据分析", 21),
]


def build(path, closed=()) -> sqlite3.Connection:
    """A database of CORPUS (posting ids from 1, in order), the postings of ``closed`` closed."""
    open_db(path).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            "INSERT INTO postings (id, key, company, city, category, salary_currency, salary_status, salary_monthly_min,"
            " salary_monthly_max, salary_estimated, closed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(i, f"k{i}", company, city, category, currency, "parsed" if monthly else "missing", monthly, monthly,
              estimated, CLOSED if i in closed else None)
             for i, (company, city, category, currency, monthly, estimated) in enumerate(CORPUS, 1)])
    return conn


def direct(closed=()) -> tuple[list[tuple], list[tuple]]:
    """The salary groups and the counts computed from CORPUS in plain Python: quartiles (inclusive method, 2 places)
    from 20 salaries up."""
    groups: dict[tuple, list[float]] = {}
    counts: Counter = Counter()
    for i, (company, city, category, currency, monthly, estimated) in enumerate(CORPUS, 1):
        if i in closed:
            continue
        if monthly is not None and category and not estimated:
            groups.setdefault(("category", category, currency), []).append(monthly)
            groups.setdefault(("city+category", f"{city} · {category}", currency), []).append(monthly)
        if company:
            counts["company_open", company] += 1
            if category:
                counts["company+category_open", f"{company} · {category}"] += 1
        if city and category:
            counts["city+category_open", f"{city} · {category}"] += 1
    salary = []
    for (scope, key, currency), values in sorted(groups.items()):
        q = [None] * 3
        if len(values) >= 20:
            q = [round(v, 2) for v in statistics.quantiles(values, n=4, method="inclusive")]
        salary.append((scope, key, currency, len(values), *q))
    return salary, sorted((scope, key, n) for (scope, key), n in counts.items())


def view_rows(conn) -> tuple[list[tuple], list[tuple], set]:
    """The view's salary rows, its count rows (scope, key, n) and its computed_at values."""
    got = conn.execute(VIEW_SQL).fetchall()
    salary = sorted(r[:7] for r in got if r[2] is not None)
    counts = sorted((r[0], r[1], r[3]) for r in got if r[2] is None)
    assert all(r[4:7] == (None, None, None) for r in got if r[2] is None)
    return salary, counts, {r[7] for r in got}


@pytest.fixture(scope="module")
def market_db(tmp_path_factory):
    """CORPUS with its market statistics computed once."""
    path = tmp_path_factory.mktemp("market") / "jobs.db"
    build(path).close()
    db = open_db(path)
    recompute(db, now=NOW)
    db.close()
    return path


# What the step stores for CORPUS, in its order: the salary groups by scope and key (no count: the view counts).
STORED = [
    (0, "后端开发", "USD", 1, None, None, None), (0, "数据分析", "CNY", 21, 15000.0, 20000.0, 25000.0),
    (1, "上海 · 后端开发", "USD", 1, None, None, None), (1, "上海 · 数据分析", "CNY", 1, None, None, None),
    (1, "杭州 · 数据分析", "CNY", 20, 14750.0, 19500.0, 24250.0),
]


def test_one_row_per_salary_group_is_stored_with_its_scope_as_a_code_and_the_time_once(market_db):
    conn = sqlite3.connect(market_db)
    assert conn.execute(STORED_SQL).fetchall() == STORED
    assert conn.execute("SELECT value FROM meta WHERE key = 'market_computed_at'").fetchall() == [(NOW,)]
    assert conn.execute("SELECT type, name FROM sqlite_master WHERE tbl_name IN ('market_figures', 'market_stats')"
                        " ORDER BY name").fetchall() == [("table", "market_figures"), ("view", "market_stats")]
    conn.close()


def test_the_view_gives_what_a_direct_computation_over_the_postings_gives(market_db):
    conn = sqlite3.connect(market_db)
    salary, counts, stamps = view_rows(conn)
    conn.close()
    assert (salary, counts) == direct()
    assert (salary, counts, stamps) == (ALL_OPEN, sorted(ALL_OPEN_COUNTS), {NOW})


def test_the_view_has_the_rows_of_the_statistics_the_scorer_reads(market_db):
    db = open_db(market_db)
    market = compute_market(db)
    got = db.execute(VIEW_SQL).fetchall()
    db.close()
    assert got == [tuple(r.values()) + (NOW,) for r in market.rows()]  # in the scorer's order too
    assert len(got) == 15


def test_the_counts_are_those_of_the_postings_when_read(market_db, tmp_path):
    """Closing a posting changes the counts at once; the salary groups stay those of the last scoring run until the
    next one."""
    path = tmp_path / "jobs.db"
    shutil.copy(market_db, path)
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE postings SET closed_at = ? WHERE id = 1", (CLOSED,))
        conn.execute("UPDATE postings SET company = '新公司' WHERE id = 3")
    salary, counts, stamps = view_rows(conn)
    assert (salary, stamps) == (ALL_OPEN, {NOW})
    assert counts == sorted([
        ("company_open", "数澜", 9), ("company_open", "新公司", 1), ("company_open", "无类", 1), ("company_open", "蚂蚁", 12),
        ("company+category_open", "数澜 · 数据分析", 9), ("company+category_open", "新公司 · 数据分析", 1),
        ("company+category_open", "蚂蚁 · 后端开发", 1), ("company+category_open", "蚂蚁 · 数据分析", 11),
        ("city+category_open", "上海 · 后端开发", 1), ("city+category_open", "上海 · 数据分析", 1),
        ("city+category_open", "北京 · 后端开发", 1), ("city+category_open", "杭州 · 数据分析", 20)])
    conn.close()


def test_recomputing_is_idempotent(market_db, tmp_path):
    path = tmp_path / "jobs.db"
    shutil.copy(market_db, path)
    conn = sqlite3.connect(path)
    before = conn.execute(STORED_SQL).fetchall(), conn.execute(VIEW_SQL).fetchall()
    db = open_db(path)
    assert recompute(db, now=NOW)[1] == 15
    assert recompute(db, now=NOW)[1] == 15
    db.close()
    assert (conn.execute(STORED_SQL).fetchall(), conn.execute(VIEW_SQL).fetchall()) == before
    conn.close()


@pytest.mark.parametrize("closed, salary, counts", [
    pytest.param({1}, [
        ("category", "后端开发", "USD", 1, None, None, None),
        ("category", "数据分析", "CNY", 20, 15750.0, 20500.0, 25250.0),
        ("city+category", "上海 · 后端开发", "USD", 1, None, None, None),
        ("city+category", "上海 · 数据分析", "CNY", 1, None, None, None),
        ("city+category", "杭州 · 数据分析", "CNY", 19, None, None, None)],
        {("company_open", "数澜"): 10, ("company+category_open", "数澜 · 数据分析"): 10,
         ("city+category_open", "杭州 · 数据分析"): 20}, id="city-group-below-20"),
    pytest.param({1, 2}, [
        ("category", "后端开发", "USD", 1, None, None, None),
        ("category", "数据分析", "CNY", 19, None, None, None),
        ("city+category", "上海 · 后端开发", "USD", 1, None, None, None),
        ("city+category", "上海 · 数据分析", "CNY", 1, None, None, None),
        ("city+category", "杭州 · 数据分析", "CNY", 18, None, None, None)],
        {("company_open", "数澜"): 10, ("company_open", "蚂蚁"): 11, ("company+category_open", "数澜 · 数据分析"): 10,
         ("company+category_open", "蚂蚁 · 数据分析"): 10, ("city+category_open", "杭州 · 数据分析"): 19},
        id="both-groups-below-20"),
    pytest.param({22, 24}, [
        ("category", "数据分析", "CNY", 21, 15000.0, 20000.0, 25000.0),
        ("city+category", "上海 · 数据分析", "CNY", 1, None, None, None),
        ("city+category", "杭州 · 数据分析", "CNY", 20, 14750.0, 19500.0, 24250.0)],
        {("company_open", "蚂蚁"): 11, ("company_open", "无类"): None, ("company+category_open", "蚂蚁 · 后端开发"): None,
         ("city+category_open", "上海 · 后端开发"): None}, id="keys-gone"),
    pytest.param({ESTIMATED}, ALL_OPEN,
                 {("company_open", "数澜"): 10, ("company+category_open", "数澜 · 数据分析"): 10,
                  ("city+category_open", "杭州 · 数据分析"): 20}, id="estimate-closed-counts-only"),
])
def test_closing_postings_after_a_recompute(market_db, tmp_path, closed, salary, counts):
    """Closing postings and recomputing: groups that fall below 20 salaries lose their quartiles, keys without an
    open posting lose their row; ``counts`` are the count rows that change (None: gone)."""
    path = tmp_path / "jobs.db"
    shutil.copy(market_db, path)
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany("UPDATE postings SET closed_at = ? WHERE id = ?", [(CLOSED, i) for i in closed])
    db = open_db(path)
    recompute(db, now="2026-12-02T00:00:00+00:00")
    db.close()
    expected = {(scope, key): n for scope, key, n in ALL_OPEN_COUNTS} | counts
    assert view_rows(conn) == (salary, sorted((s, k, n) for (s, k), n in expected.items() if n is not None),
                               {"2026-12-02T00:00:00+00:00"})
    assert view_rows(conn)[:2] == direct(closed)
    conn.close()


def test_no_statistics_before_the_first_computation(tmp_path):
    conn = build(tmp_path / "jobs.db")
    assert conn.execute(VIEW_SQL).fetchall() == []
    conn.close()


def test_an_old_database_keeps_its_statistics_through_the_migration(tmp_path):
    """A database of an earlier version (the seeds scored, ten rows in the market_stats table) shows the same rows
    in the view right after it is opened, before any scoring run."""
    path = tmp_path / "old.db"
    path.write_bytes(gzip.decompress((FIXTURES / "migrations" / "db-6e4c4bc.db.gz").read_bytes()))
    conn = sqlite3.connect(path)
    before = sorted(conn.execute(VIEW_SQL).fetchall())
    conn.close()
    open_db(path).close()
    conn = sqlite3.connect(path)
    assert sorted(conn.execute(VIEW_SQL).fetchall()) == before
    assert len(before) == 10 and {r[7] for r in before} == {"2026-12-06T08:06:12+00:00"}
    assert conn.execute(STORED_SQL).fetchall() == [  # the counts are no longer stored: the view counts them
        (0, "人工智能", "CNY", 1, None, None, None), (0, "算法优化工程师", "CNY", 1, None, None, None),
        (1, "杭州 · 人工智能", "CNY", 1, None, None, None), (1, "苏州 · 算法优化工程师", "CNY", 1, None, None, None)]
    conn.close()
