"""The market charts' data from memory: what their canned queries' SQL gives, counted from the
facet index while it is current (browse/facets.py, crawler/serve/app.py).

The charts of ``/-/dashboards/market`` ask ``/jobs.json?sql=<the chart's query>&city=…`` for their
rows. At 500,000 postings that SQL takes seconds for one city (the skills of 90,000 postings
counted; salary percentiles by window functions), longer than the pages' time limit. The facet
index already holds each posting's city, category and skills; :class:`Market` adds whether it is
open and its monthly pay, so the rows of ``salary_by_city``, ``salary_by_category`` and
``top_skills`` come from arrays in a few milliseconds: the same rows in the same order as their
SQL (tests/test_charts.py compares them). Anything else, or a file changed since the index was
loaded, goes to SQLite as before.
"""

from __future__ import annotations

import json
import math
import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np

from browse import queries

QUANTILES = (("p25", 0.25), ("median", 0.5), ("p75", 0.75))
DEFAULT_MIN_POSTINGS = 10  # as the canned queries' SQL: coalesce(nullif(:min_postings, ''), 10)
SKILLS_LIMIT = 50  # top_skills' own limit


@dataclass
class Market:
    """Per posting id: ``open`` (no closed_at), ``pay`` (the midpoint of its monthly range, NaN when
    the salary charts leave it out) and ``currency`` (a code into ``currencies``, -1 for none); per
    skill name: (kind, category, frontier)."""

    open: np.ndarray
    pay: np.ndarray
    currency: np.ndarray
    currencies: list[str]
    skills: dict[str, tuple]

    @classmethod
    def load(cls, conn: sqlite3.Connection, size: int) -> Market:
        from browse.queries import id_array

        open_ = np.zeros(size, dtype=bool)
        ids = id_array(queries.open_ids(conn))
        open_[ids[ids < size]] = True
        pay = np.full(size, np.nan)
        currency = np.full(size, -1, dtype=np.int32)
        currencies: list[str] = []
        for posting_id, code, monthly in queries.chart_pay(conn):
            if 0 <= posting_id < size:
                if code is not None and code not in currencies:
                    currencies.append(code)
                pay[posting_id] = monthly
                currency[posting_id] = -1 if code is None else currencies.index(code)
        return cls(open_, pay, currency, currencies, {name: rest for name, *rest in queries.skill_meta(conn)})


def _round(value: float, digits: int = 0) -> float:
    """SQLite's round() of a positive number: half away from zero."""
    scale = 10**digits
    return math.floor(value * scale + 0.5) / scale


def _min_postings(params: dict[str, str]) -> int | None:
    text = params.get("min_postings") or str(DEFAULT_MIN_POSTINGS)
    try:
        return int(text)
    except ValueError:
        return None


def _chosen(index, column: str, value: str) -> np.ndarray:
    """Whether each posting's ``column`` is ``value`` (all when ``value`` is empty)."""
    coded = index.columns[column]
    if not value:
        return np.ones(index.size, dtype=bool)
    if value not in coded.values:
        return np.zeros(index.size, dtype=bool)
    return coded.codes == coded.values.index(value)


def salary_rows(index, group: str, within: str, params: dict[str, str]) -> list[dict] | None:
    """The rows of ``browse.queries.PERCENTILES_SQL`` for ``group`` (city or category) within the
    ``within`` value of ``params``."""
    least = _min_postings(params)
    if least is None:
        return None
    market, groups = index.market, index.columns[group]
    ids = np.flatnonzero(~np.isnan(market.pay) & (groups.codes >= 0) & _chosen(index, within, params.get(within, "")))
    if not len(ids):
        return []
    group_of, currency_of, pay = groups.codes[ids], market.currency[ids], market.pay[ids]
    order = np.lexsort((pay, currency_of, group_of))
    group_of, currency_of, pay = group_of[order], currency_of[order], pay[order]
    starts = np.flatnonzero(np.r_[True, (np.diff(group_of) != 0) | (np.diff(currency_of) != 0), True])
    rows = []
    for start, stop in zip(starts[:-1], starts[1:]):
        values, n = pay[start:stop], stop - start
        if n < least:
            continue
        row = {group: groups.values[group_of[start]],
               "currency": market.currencies[currency_of[start]] if currency_of[start] >= 0 else None, "postings": int(n)}
        for name, p in QUANTILES:
            at = (n - 1) * p
            low = int(at)
            frac = at - low
            row[name] = _round(values[low] * (1 - frac) + (values[low + 1] * frac if low + 1 < n else 0.0))
        rows.append(row)
    rows.sort(key=lambda r: (-r["postings"], -r["median"], r[group]))
    return rows


def top_skill_rows(index, params: dict[str, str]) -> list[dict] | None:
    """The rows of the ``top_skills`` canned query."""
    least = _min_postings(params)
    if least is None:
        return None
    chosen = index.market.open & index.present & _chosen(index, "city", params.get("city", "")) \
        & _chosen(index, "category", params.get("category", ""))
    ids = np.flatnonzero(chosen)
    if len(ids) < least:
        return []
    wanted = params.get("kind") or "technical"
    tally = index.array.tally(ids)
    rows = []
    for code in np.flatnonzero(tally):
        skill = index.array.values[code]
        kind, category, frontier = index.market.skills.get(skill, (None, None, None))
        if wanted == "all" or kind == wanted:
            rows.append({"skill": skill, "kind": kind, "category": category, "postings": int(tally[code]),
                         "of_postings": len(ids), "share_pct": _round(100.0 * tally[code] / len(ids), 1),
                         "frontier": frontier})
    rows.sort(key=lambda r: (-r["postings"], r["skill"]))
    return rows[:SKILLS_LIMIT]


ANSWERS = {
    "salary_by_city": lambda index, params: salary_rows(index, "city", "category", params),
    "salary_by_category": lambda index, params: salary_rows(index, "category", "city", params),
    "top_skills": top_skill_rows,
}


def chart_rows(index, chart: dict[str, Any], params: dict[str, str]) -> list[dict] | None:
    """A chart's rows from memory (its ``query_from`` canned query, ``limit`` rows), or None when
    they have to come from SQL."""
    answer = ANSWERS.get(chart.get("query_from"))
    if answer is None or index is None or getattr(index, "market", None) is None:
        return None
    rows = answer(index, params)
    if rows is None:
        return None
    return rows[: chart["limit"]] if chart.get("limit") else rows


def response_body(database: str, sql: str, params: dict[str, str], rows: list[dict]) -> bytes:
    """The ``_shape=objects`` JSON Datasette would give for these rows (what the charts read)."""
    return json.dumps({"ok": True, "database": database, "query_name": None, "rows": rows, "truncated": False,
                       "columns": list(rows[0]) if rows else [], "query": {"sql": sql, "params": params},
                       "served_from": "memory"}, ensure_ascii=False).encode()
