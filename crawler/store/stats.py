"""SQL of the market statistics: the active postings' salaries and open postings read, ``market_stats`` replaced."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

STATS_COLS = ("scope", "key", "currency", "n", "p25", "median", "p75", "computed_at")

SALARIES = """
SELECT category, city, salary_currency, (salary_monthly_min + coalesce(salary_monthly_max, salary_monthly_min)) / 2.0
FROM postings
WHERE closed_at IS NULL AND salary_status = 'parsed' AND salary_monthly_min IS NOT NULL
  AND NOT coalesce(salary_implausible, 0) AND NOT coalesce(salary_estimated, 0) AND category IS NOT NULL
"""
OPENINGS = """
SELECT company, city, category, count(*) FROM postings WHERE closed_at IS NULL GROUP BY company, city, category
"""


def salaries(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """(category, city, currency, monthly midpoint) of every active posting with a parsed, plausible,
    employer-stated salary and a category."""
    return conn.execute(SALARIES)


def openings(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """(company, city, category, active postings) of every group of them."""
    return conn.execute(OPENINGS)


def replace_market_stats(conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], *, computed_at: str) -> int:
    """Replace ``market_stats`` with ``rows`` (scope, key, currency, n, p25, median, p75) in one transaction;
    returns the row count."""
    values = [tuple(r[c] for c in STATS_COLS[:-1]) + (computed_at,) for r in rows]
    with conn:
        conn.execute("DELETE FROM market_stats")
        conn.executemany(f"INSERT INTO market_stats ({', '.join(STATS_COLS)}) VALUES ({', '.join('?' * len(STATS_COLS))})",
                         values)
    return len(values)
