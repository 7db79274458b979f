"""Market statistics over the corpus, recomputed on every scoring run and stored in ``market_stats``.

Scopes (``scope`` column → ``key``):

- ``category`` → the category (``人工智能``); ``city+category`` → ``杭州 · 人工智能``: monthly salaries
  of the active postings (``closed_at IS NULL``) with a parsed, plausible, employer-stated salary
  (not an estimate), per currency. ``n`` counts them; ``p25``/``median``/``p75`` are filled only where
  ``n ≥ MIN_SAMPLE`` (5) — below that the row says how small the sample is and nothing more.
  A posting's monthly salary is the midpoint of its monthly min and max (base pay).
- ``company_open`` → company; ``company+category_open`` → ``company · category``;
  ``city+category_open`` → ``city · category``: ``n`` = active postings in the corpus.

The scorer (:mod:`normalize.score`) reads the same figures through :class:`normalize.score.Market`.
"""

from __future__ import annotations

import sqlite_utils

from normalize.clock import now_iso as utcnow
from normalize.score import MIN_SAMPLE, Market

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


def compute_market(db: sqlite_utils.Database, *, min_sample: int = MIN_SAMPLE) -> Market:
    """The corpus's market statistics (active postings only); reads, never writes."""
    conn = db.conn
    return Market.build(conn.execute(SALARIES), conn.execute(OPENINGS), min_sample=min_sample)


def store_market(db: sqlite_utils.Database, market: Market, *, computed_at: str) -> int:
    """Replace ``market_stats`` with ``market``'s rows in one transaction; returns the row count."""
    rows = [tuple(r[c] for c in STATS_COLS[:-1]) + (computed_at,) for r in market.rows()]
    with db.conn:
        db.execute("DELETE FROM market_stats")
        db.conn.executemany(
            f"INSERT INTO market_stats ({', '.join(STATS_COLS)}) VALUES ({', '.join('?' * len(STATS_COLS))})", rows
        )
    return len(rows)


def recompute(db: sqlite_utils.Database, *, now: str | None = None, min_sample: int = MIN_SAMPLE) -> tuple[Market, int]:
    """Compute and store the market statistics; returns the market and the number of rows stored."""
    market = compute_market(db, min_sample=min_sample)
    return market, store_market(db, market, computed_at=now or utcnow())
