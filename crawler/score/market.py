"""Market statistics over the corpus, recomputed on every scoring run and stored in ``market_stats``.

Scopes (``scope`` column → ``key``):

- ``category`` → the category (``人工智能``); ``city+category`` → ``杭州 · 人工智能``: monthly salaries
  of the active postings (``closed_at IS NULL``) with a parsed, plausible, employer-stated salary
  (not an estimate), per currency. ``n`` counts them; ``p25``/``median``/``p75`` are filled only where
  ``n ≥ MIN_SAMPLE`` (20) — below that the row says how small the sample is and nothing more.
  A posting's monthly salary is the midpoint of its monthly min and max (base pay).
- ``company_open`` → company; ``company+category_open`` → ``company · category``;
  ``city+category_open`` → ``city · category``: ``n`` = active postings in the corpus.

The scorer (:mod:`normalize.score`) reads the same figures through :class:`normalize.score.Market`. The SQL is
:mod:`crawler.store.stats`'s.
"""

from __future__ import annotations

import sqlite_utils

from crawler.store import stats as store
from normalize.clock import now_iso as utcnow
from normalize.score import MIN_SAMPLE, Market


def compute_market(db: sqlite_utils.Database, *, min_sample: int = MIN_SAMPLE) -> Market:
    """The corpus's market statistics (active postings only); reads, never writes."""
    return Market.build(store.salaries(db.conn), store.openings(db.conn), min_sample=min_sample)


def recompute(db: sqlite_utils.Database, *, now: str | None = None, min_sample: int = MIN_SAMPLE) -> tuple[Market, int]:
    """Compute and store the market statistics; returns the market and the number of rows stored."""
    market = compute_market(db, min_sample=min_sample)
    return market, store.replace_market_stats(db.conn, market.rows(), computed_at=now or utcnow())
