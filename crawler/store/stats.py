"""SQL of the market statistics: the active postings' salaries and open postings read, the salary figures of
``market_figures`` and the time they were computed replaced (the view ``market_stats`` reads them and counts the open
postings as :data:`OPENINGS` does)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

SCOPES = ("category", "city+category")
"""The salary scopes by their code in ``market_figures`` (the view ``market_stats`` names them the same way)."""
FIGURE_COLS = ("scope", "key", "currency", "n", "p25", "median", "p75")
COMPUTED_AT = "market_computed_at"

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
    """Replace the statistics with ``rows`` (scope, key, currency, n, p25, median, p75), in their order, and the time
    they were computed, in one transaction: the rows of a salary scope are stored, the counts of open postings are
    not (``market_stats`` counts them when read). Returns the row count, counts included."""
    rows = list(rows)
    code = {scope: i for i, scope in enumerate(SCOPES)}
    values = [(code[r["scope"]], *(r[c] for c in FIGURE_COLS[1:])) for r in rows if r["scope"] in code]
    with conn:
        conn.execute("DELETE FROM market_figures")
        conn.executemany(f"INSERT INTO market_figures ({', '.join(FIGURE_COLS)})"
                         f" VALUES ({', '.join('?' * len(FIGURE_COLS))})", values)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (COMPUTED_AT, computed_at))
    return len(rows)
