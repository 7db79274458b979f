"""Datasette metadata for the jobcrawl database: ``metadata.yaml`` plus generated parts.

``metadata.yaml`` holds what is written by hand (titles, descriptions, facets, sort, canned queries,
charts). :func:`build_metadata` adds each column's description from the pydantic field
descriptions and crawler/store/columns.yaml (``crawler.store.schema.column_descriptions``, so they are written
once), keeps the
``default_columns`` and ``listing_columns`` of a table page (:mod:`browse.columns`) the table has,
writes the SQL of the salary percentile queries (``percentiles: {group, within}``) and of the search
(``search_sql``) from :mod:`browse.queries` and of the pay quartiles (``pay_sql``) from :mod:`crawler.market.store`,
fills chart queries from the canned queries they name (``query_from``, ``limit``: kept, :mod:`browse.charts` answers
from memory; ``fixed``: parameters given a value), and keeps only tables that exist.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from browse.queries import PERCENTILES_SQL, SEARCH_SQL, limited
from crawler.market.store import PAY_SQL
from crawler.store.schema import column_descriptions

DATABASE = "jobs"
STATIC_MOUNT = "jobcrawl-static"  # browse/static is served at /jobcrawl-static/
HERE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def _hand_written() -> dict[str, Any]:
    return yaml.safe_load((HERE / "metadata.yaml").read_text(encoding="utf-8"))


def column_docs() -> dict[str, dict[str, str]]:
    """Table or view → column → description."""
    return column_descriptions()


def build_metadata(schema: dict[str, list[str]] | None = None, views: Iterable[str] = ("jobs",), *,
                   allow_sql: bool = True, writes: bool = True) -> dict[str, Any]:
    """The metadata dict for ``Datasette(metadata=...)``.

    ``schema``: table or view name → its columns, as the database has them (default: the tables the
    YAML describes, with no column list). Tables the database lacks are left out; a view's column
    is described as the postings column of the same name unless the view has a description of its own.
    ``allow_sql=False`` denies arbitrary SQL to everyone (Datasette's ``allow_sql: false``);
    ``writes=False`` leaves out the writable canned queries (``write: true``).
    """
    meta = copy.deepcopy(_hand_written())
    if not allow_sql:
        meta["allow_sql"] = False
    db_meta = meta["databases"][DATABASE]
    described = db_meta["tables"]
    docs = column_docs()
    if schema is None:
        schema = {table: list(docs.get(table, {})) for table in described}
    for table in list(described):
        if table not in schema:
            del described[table]
    for table, columns in schema.items():
        own = {**described.get(table, {}).get("columns", {}), **docs.get(table, {})}
        fallback = docs["postings"] if table in views else {}
        described.setdefault(table, {})["columns"] = {
            c: own.get(c) or fallback.get(c) for c in columns if own.get(c) or fallback.get(c)
        }
        for key in ("default_columns", "listing_columns"):  # of the columns the table has (?_col= of another is an error)
            if key in described[table]:
                described[table][key] = [c for c in described[table][key] if c in columns]
    queries = db_meta.get("queries", {})
    if not writes:
        for name in [name for name, query in queries.items() if query.get("write")]:
            del queries[name]
    for query in queries.values():
        spec = query.pop("percentiles", None)
        if spec:
            query["sql"] = PERCENTILES_SQL.format(**spec)
        if query.pop("search_sql", False):
            query["sql"] = SEARCH_SQL
        if query.pop("pay_sql", False):
            query["sql"] = PAY_SQL
    for dashboard in meta.get("plugins", {}).get("datasette-dashboards", {}).values():
        for chart in dashboard.get("charts", {}).values():
            source, limit = chart.get("query_from"), chart.get("limit")  # kept: browse/charts.py reads them
            if source:
                sql = fixed(queries[source]["sql"], chart.pop("fixed", {}))
                chart["query"] = limited(sql, limit) if limit else sql
    return meta


def fixed(sql: str, values: dict[str, str]) -> str:
    """``sql`` with each ``:name`` of ``values`` written as that value, an SQL string (a chart's own scope)."""
    for name, value in values.items():
        sql = re.sub(rf"(?<!:):{name}\b", "'" + value.replace("'", "''") + "'", sql)
    return sql
