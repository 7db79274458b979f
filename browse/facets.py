"""Facets of the postings listings counted from an in-memory index of the immutable database.

Datasette counts each facet with a query of its own over the page's rows (``select city, count(*)
from (<the page's SQL>) group by city``; the skills array facet with ``json_each`` over every row
and a ``distinct`` over all its columns): six queries that each evaluate the page's filter or search
again and read every matching posting. At 500,000 postings a search that matches 120,000 of them
took seconds, and the skills facet ran out of time.

For the served file, while it is unchanged (crawler/serve/app.py), :class:`FacetIndex` holds the facet
columns of every posting once, as integer codes (one per posting and column; for ``skills``, the
codes of each posting's skills, and a bitset per frequent skill). A page's ids come from :func:`browse.filters.own_ids` when only
``_search``, ``_skill``, the hiding and equalities on these columns select its rows, else from one query (``select group_concat(id) from
(<the page's SQL>)``, under ``facet_time_limit_ms``), and every facet is counted from the arrays.
The counts, their order (count descending, then value), truncation and toggle links are
Datasette's; the skills facet links to the ``_skill`` filter (:mod:`browse.filters`), which an index
answers, instead of ``skills__arraycontains``, which reads every posting's JSON.

The skills facet counts the technical skills (:data:`FACET_KIND`; the ``kind`` of ``skills``, from
the taxonomy's ``[kinds]``) and any skill the page is filtered by: soft skills (沟通能力, 团队合作) are
in most postings and would fill it. Without a current index it is one query over ``posting_skills``
(:func:`browse.queries.skill_facet_sql`) that counts the same.

Other tables and columns, a file changed since the index was loaded and the rows of a page whose
SQL has no ``id`` get Datasette's own facet queries.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from dataclasses import dataclass
from typing import Any, Iterable
from urllib.parse import parse_qsl, urlencode

import numpy as np
from datasette.database import QueryInterrupted
from datasette.facets import ArrayFacet, ColumnFacet
from datasette.utils import path_with_removed_args, sqlite_timelimit

from browse import queries
from browse.charts import Market
from browse.filters import SKILL_PARAM, TABLES, own_ids
from browse.queries import SHOWN_NULLS, id_array
from browse.lru import Lru

COLUMNS = ("city", "company", "category", "work_mode", "score_level")  # of postings, as both listings show them
JOBS_COLUMNS = ("application_status",)  # the jobs view's own: the application status of each posting's job
ARRAY = "skills"
FACET_KIND = "technical"  # the kind of skill the skills facet counts
_IDS_KEY = "jobcrawl.facet_ids"


def _order(value: Any) -> tuple:
    """SQLite's order of values: numbers before text before blobs."""
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, value) if isinstance(value, str) else (2, 0, value)


@dataclass
class Coded:
    """One column: ``values[codes[id]]`` is the value of posting ``id`` (-1: null or no posting)."""

    values: list[Any]
    codes: np.ndarray

    def equal(self, value: Any) -> np.ndarray:
        """``mask[id]``: posting ``id``'s value is ``value`` (SQLite's ``=`` on text, as Python's ``==``)."""
        code = next((i for i, v in enumerate(self.values) if type(v) is type(value) and v == value), None)
        return self.codes == code if code is not None else np.zeros(len(self.codes), dtype=bool)

    def with_null_as(self, value: Any, present: np.ndarray) -> Coded:
        """This column with ``value`` in place of the nulls of the postings ``present``."""
        values = list(self.values)
        code = next((i for i, v in enumerate(values) if type(v) is type(value) and v == value), None)
        if code is None:
            code = len(values)
            values.append(value)
        codes = self.codes.copy()
        codes[(codes < 0) & present] = code
        return Coded(values, codes)


class CodedArray:
    """An array column: ``items[starts[id]:starts[id + 1]]`` are the codes of posting ``id``'s
    distinct values. A value that many postings hold also has a bitset over the ids (a row of
    ``bits``), the others the list of their ids, so a page of many postings is counted in time that
    does not grow with it."""

    GATHER_LIMIT = 500_000  # up to this many items a page's values are counted one by one

    def __init__(self, values: list[Any], holders: list[np.ndarray], size: int, faceted: list[bool] | None = None):
        """``holders[code]``: the ids (unique, below ``size``) of the postings holding ``values[code]``;
        ``faceted[code]``: whether a facet counts the value (all by default)."""
        self.values = values
        self.faceted = np.ones(len(values), dtype=bool) if faceted is None else np.array(faceted, dtype=bool)
        self.code = {value: code for code, value in enumerate(values)}
        owners = np.concatenate(holders) if holders else np.zeros(0, dtype=np.int64)
        codes = np.repeat(np.arange(len(holders), dtype=np.int32), [len(h) for h in holders])
        self.items = codes[np.argsort(owners, kind="stable")]
        self.starts = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(np.bincount(owners, minlength=size), out=self.starts[1:])
        words = (size + 63) // 64
        self.dense, rows, self.sparse = [], [], {}
        for code, ids in enumerate(holders):
            if len(ids) * 32 >= size:  # a bitset is smaller than the list of ids
                mask = np.zeros(words * 64, dtype=bool)
                mask[ids] = True
                rows.append(np.packbits(mask, bitorder="little").view(np.uint64))
                self.dense.append(code)
            else:
                self.sparse[code] = ids
        self.bits = np.array(rows, dtype=np.uint64).reshape(len(rows), words)

    def holders(self, value: Any) -> np.ndarray:
        """The ids of the postings holding ``value``."""
        code = self.code.get(value)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        if code in self.sparse:
            return self.sparse[code]
        bits = np.unpackbits(self.bits[self.dense.index(code)].view(np.uint8), bitorder="little")
        return np.flatnonzero(bits)

    def tally(self, ids: np.ndarray) -> np.ndarray:
        """How many of the postings ``ids`` hold each value (by code)."""
        lo = self.starts[ids]
        lengths = self.starts[ids + 1] - lo
        total = int(lengths.sum())
        if total <= self.GATHER_LIMIT:
            at = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
            return np.bincount(self.items[at], minlength=len(self.values))
        mask = np.zeros(self.bits.shape[1] * 64, dtype=bool)
        mask[ids] = True
        packed = np.packbits(mask, bitorder="little").view(np.uint64)
        tally = np.zeros(len(self.values), dtype=np.int64)
        both = np.empty(self.bits.shape[1], dtype=np.uint64)
        for code, row in zip(self.dense, self.bits):
            tally[code] = _popcount(np.bitwise_and(row, packed, out=both))
        for code, owners in self.sparse.items():
            tally[code] = np.count_nonzero(mask[owners])
        return tally


_BYTE_BITS = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popcount(words: np.ndarray) -> int:
    """Set bits in ``words`` (uint64)."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return int(np.bitwise_count(words).sum())
    return int(_BYTE_BITS[words.view(np.uint8)].sum())


class FacetIndex:
    """The facet columns of every posting of a database, in memory (a few bytes a posting and value).

    The file does not change while it is served: ``facets`` keeps counted facets (page SQL and
    parameters, column, size → rows), ``searches`` the ids a search matched, for the pages that
    narrow it, and ``search_masks`` the same as bytes by id (:func:`browse.filters.search_function`)."""

    def __init__(self, columns: dict[str, Coded], array: CodedArray, present: np.ndarray, seconds: float = 0.0,
                 market: Market | None = None):
        """``present[id]``: whether posting ``id`` exists; ``market``: what the charts count besides
        (:mod:`browse.charts`)."""
        self.columns, self.array, self.present, self.seconds, self.market = columns, array, present, seconds, market
        self.size, self.postings = len(present), int(present.sum())
        self.facets, self.searches, self.search_masks = Lru(2000), Lru(16), Lru(16)
        self.hidden = Lru(4)  # (stale cutoff, blocked, rejected) → mask of the rows a listing hides (browse/hiding.py)
        self.hiding = Lru(16)  # (days, show blocked, show stale, show rejected) → what a listing hides (browse/hiding.py hidden)
        self.chosen = Lru(16)  # token → a page's rows as bytes by id (browse/filters.py chosen_function)
        self._shown = {(table, column): columns[column].with_null_as(value, present)
                       for (table, column), value in SHOWN_NULLS.items() if column in columns}

    @classmethod
    def load(cls, conn: sqlite3.Connection) -> FacetIndex:
        """Read the ``postings`` columns of :data:`COLUMNS`, the application status of :data:`JOBS_COLUMNS` and the
        skills of every posting, each as one query grouped by value in SQLite (through the postings indexes of
        crawler/store/schema.sql; the status from the view ``applications``, a row per member of a tracked job). A
        posting's skills are read from ``posting_skills``, which holds the skills of its ``skills`` column
        (one tagging writes both), as the ``_skill`` filter does."""
        start = time.perf_counter()
        size, every = queries.postings_size(conn)
        present = np.zeros(size, dtype=bool)
        present[id_array(every)] = True
        columns = {}
        readers = {**{c: lambda c=c: queries.ids_by_value(conn, c) for c in COLUMNS},
                   "application_status": lambda: queries.ids_by_application_status(conn)}
        for column, read in readers.items():
            codes = np.full(size, -1, dtype=np.int32)
            values = []
            for value, ids in read():
                found = id_array(ids)
                codes[found[(found >= 0) & (found < size)]] = len(values)
                values.append(value)
            columns[column] = Coded(values, codes)
        values, holders, faceted = [], [], []
        for value, kind, ids in queries.ids_by_skill(conn):
            found = np.unique(id_array(ids))  # once per posting, whatever the sections it was found in
            values.append(value)
            holders.append(found[(found >= 0) & (found < size)])
            faceted.append(kind == FACET_KIND)
        array = CodedArray(values, holders, size, faceted)
        market = Market.load(conn, size)
        return cls(columns, array, present, time.perf_counter() - start, market)

    def ids(self, conn: sqlite3.Connection, sql: str, params: Any) -> np.ndarray:
        """The ids of the rows ``sql`` selects (it must have an ``id`` column)."""
        ids = id_array(queries.page_ids(conn, sql, params))
        return ids[(ids >= 0) & (ids < self.size)]

    def columns_of(self, table: str) -> tuple[str, ...]:
        """The columns of ``table`` (one of browse.filters.TABLES) the index holds."""
        return COLUMNS + JOBS_COLUMNS if table == "jobs" else COLUMNS

    def holders(self, skill: str) -> np.ndarray:
        """The ids of the postings with ``skill``."""
        return self.array.holders(skill)

    def column(self, table: str, column: str) -> Coded:
        """A column of :data:`COLUMNS` as ``table`` shows it (:data:`SHOWN_NULLS`)."""
        return self._shown.get((table, column)) or self.columns[column]

    def counts(self, column: str, ids: np.ndarray, limit: int, also: Iterable[Any] = (),
               table: str = "postings") -> list[tuple[Any, int]]:
        """``(value, count)`` of ``column`` (as ``table`` shows it) over the postings ``ids``: the first
        ``limit`` by count descending, then value (Datasette's facet order). For :data:`ARRAY`, the
        values a facet counts (:data:`FACET_KIND`) and those of ``also``."""
        if column == ARRAY:
            tally, values = self.array.tally(ids), self.array.values
            shown = self.array.faceted.copy()
            shown[[self.array.code[v] for v in also if v in self.array.code]] = True
            tally[~shown] = 0
        else:
            coded = self.column(table, column)
            codes, values = coded.codes[ids], coded.values
            tally = np.bincount(codes[codes >= 0], minlength=len(values))
        found = np.flatnonzero(tally)
        # The facet shows the largest counts: sort only those that can make the cut.
        if len(found) > limit:
            cut = np.partition(tally[found], len(found) - limit)[len(found) - limit]
            found = found[tally[found] >= cut]
        ranked = sorted(((values[i], int(tally[i])) for i in found), key=lambda vc: (-vc[1], _order(vc[0])))
        return ranked[:limit]


class _IndexedFacet:
    """Mixin of the indexed facet classes: which configs the index answers, the page's ids (read
    once per page and shared by both facet classes), and Datasette's queries for the others."""

    _only: list | None = None

    def get_configs(self):
        return self._only if self._only is not None else super().get_configs()

    def _index(self) -> FacetIndex | None:
        db = self.ds.get_database(self.database)
        return getattr(db, "facet_index", None) if self.table in TABLES else None

    @staticmethod
    def _column(config) -> str:
        return config["config"].get("column") or config["config"]["simple"]

    def _page_key(self) -> tuple:
        return self.sql, json.dumps(self.params, sort_keys=True, default=str)

    async def _page_ids(self, index: FacetIndex) -> np.ndarray:
        """The ids of the page's rows: from the index and the search index when only ``_search`` and
        ``_skill`` select them, else one query."""
        memo = self.request.scope.setdefault(_IDS_KEY, {})
        key = self._page_key()
        if key not in memo:
            memo[key] = await own_ids(self.ds, self.database, self.request)
        if memo[key] is None:
            # the limit Datasette gives a facet query
            limit = min(self.ds.setting("facet_time_limit_ms") or math.inf, self.ds.setting("sql_time_limit_ms"))

            def read(conn):
                with sqlite_timelimit(conn, limit):
                    return index.ids(conn, self.sql, self.params)

            try:
                memo[key] = await self.ds.get_database(self.database).execute_fn(read)
            except sqlite3.OperationalError as error:
                memo[key] = error
        if isinstance(memo[key], sqlite3.OperationalError):
            if "interrupted" in str(memo[key]):
                raise QueryInterrupted(memo[key], self.sql, self.params)
            raise memo[key]
        return memo[key]

    def _result(self, column: str, source: str, rows: list[tuple[Any, int]], size: int, param: str,
                also: str | None = None, labels: dict | None = None) -> dict:
        """A facet as Datasette shows it; ``param`` filters by a value (``also``: an equivalent
        filter that marks a value selected too)."""
        pairs = self.get_querystring_pairs()
        # what path_with_added_args and absolute_url give, with the query string parsed once (a
        # table page with its default columns has ~20 arguments)
        page = self.ds.absolute_url(self.request, self.ds.urls.path(self.request.path))
        kept = urlencode(parse_qsl(self.request.query_string))
        values = []
        for value, count in rows[:size]:
            names = [n for n in (param, also) if n and (n, str(value)) in pairs]
            if names:
                toggle = self.ds.absolute_url(self.request, self.ds.urls.path(
                    path_with_removed_args(self.request, {n: str(value) for n in names})))
            else:
                toggle = page + "?" + "&".join(q for q in (kept, urlencode([(param, value)])) if q)
            values.append({
                "value": value, "label": (labels or {}).get((column, value), value), "count": count,
                "toggle_url": toggle, "selected": bool(names),
            })
        remove = {"_facet" if self.type == "column" else f"_facet_{self.type}": column}
        return {"name": column, "type": self.type, "hideable": source != "metadata",
                "toggle_url": self.ds.urls.path(path_with_removed_args(self.request, remove)),
                "results": values, "truncated": len(rows) > size}

    async def _datasettes(self, config) -> tuple[list, list]:
        """Datasette's own facet query for one config: its results and timed-out columns."""
        self._only = [config]
        try:
            return await super().facet_results()
        finally:
            self._only = None

    def _selected(self) -> list[str]:
        """Values the page is filtered by that a facet shows whatever their kind (none by default)."""
        return []

    async def _unindexed(self, column: str, limit: int) -> list[tuple[Any, int]] | None:
        """Counts without a current index (None: Datasette's own facet query)."""
        return None

    async def _counts(self, index: FacetIndex | None, column: str, limit: int) -> list[tuple[Any, int]] | None:
        """``(value, count)`` rows of ``column`` over the page, from the index when it is current;
        None for Datasette's own query. Raises QueryInterrupted when the page's ids ran out of time."""
        if index is None:
            return await self._unindexed(column, limit)
        key = (*self._page_key(), column, limit)
        rows = index.facets.get(key)
        if rows is None:
            try:
                rows = index.counts(column, await self._page_ids(index), limit, also=self._selected(), table=self.table)
            except sqlite3.OperationalError:  # e.g. a page whose SQL has no id column
                return None
            index.facets.put(key, rows)
        return rows

    async def facet_results(self):
        configs = self.get_configs()
        if self.table not in TABLES or not any(self._indexed(self._column(c)) for c in configs):
            return await super().facet_results()
        index = self._index()
        size = self.get_facet_size()
        results, timed_out = [], []
        for config in configs:  # one result per config, in order, as Datasette gives them
            column = self._column(config)
            if self._indexed(column):
                try:
                    rows = await self._counts(index, column, size + 1)
                except QueryInterrupted:
                    timed_out.append(column)
                    continue
                if rows is not None:
                    results.append(await self._facet(column, config["source"], rows, size))
                    continue
            theirs, late = await self._datasettes(config)
            results.extend(theirs)
            timed_out.extend(late)
        return results, timed_out


class IndexedColumnFacet(_IndexedFacet, ColumnFacet):
    """Datasette's column facet, counted from the :class:`FacetIndex` for :data:`COLUMNS` (and on ``jobs``
    :data:`JOBS_COLUMNS`)."""

    def _indexed(self, column: str) -> bool:
        return column in COLUMNS or self.table == "jobs" and column in JOBS_COLUMNS

    async def _facet(self, column, source, rows, size):
        labels = await self.ds.expand_foreign_keys(self.database, self.table, column, [v for v, _ in rows[:size]])
        param = f"{column}__exact" if column.startswith("_") else column
        return self._result(column, source, rows, size, param, labels=labels)


class IndexedArrayFacet(_IndexedFacet, ArrayFacet):
    """Datasette's array facet, counted from the :class:`FacetIndex` for :data:`ARRAY`; its values
    link to the ``_skill`` filter."""

    @staticmethod
    def _indexed(column: str) -> bool:
        return column == ARRAY

    async def _facet(self, column, source, rows, size):
        return self._result(column, source, rows, size, SKILL_PARAM, also=f"{column}__arraycontains")

    def _selected(self) -> list[str]:
        return [v for name in (SKILL_PARAM, f"{ARRAY}__arraycontains") for v in self.request.args.getlist(name) if v]

    async def _unindexed(self, column: str, limit: int) -> list[tuple[Any, int]] | None:
        selected = self._selected()
        params = {**(self.params or {}), **{f"jobcrawl_skill{i}": v for i, v in enumerate(selected)}}
        sql = queries.skill_facet_sql(self.sql, FACET_KIND, [f":jobcrawl_skill{i}" for i in range(len(selected))], limit)
        limit_ms = min(self.ds.setting("facet_time_limit_ms") or math.inf, self.ds.setting("sql_time_limit_ms"))
        try:
            results = await self.ds.execute(self.database, sql, params, custom_time_limit=limit_ms)
        except sqlite3.OperationalError:  # e.g. a page whose SQL has no id column
            return None
        return [(value, count) for value, count in results.rows]


def replace_facet_classes(classes: list[type]) -> list[type]:
    """Datasette's facet classes with the column and array facets replaced by the indexed ones."""
    swap = {ColumnFacet: IndexedColumnFacet, ArrayFacet: IndexedArrayFacet}
    return [swap.get(c, c) for c in classes]
