"""Datasette metadata for the jobcrawl database: ``metadata.yaml`` plus generated parts.

``metadata.yaml`` holds what is written by hand (titles, descriptions, facets, sort, canned queries,
charts). :func:`build_metadata` adds each column's description from the pydantic field
descriptions (``crawler.db.schema.column_descriptions``, so they are written once), keeps the
``default_columns`` of a table page (:mod:`browse.columns`) the table has, writes the SQL
of the salary percentile queries (``percentiles: {group, within}``), fills chart queries from the
canned queries they name (``query_from``), and keeps only tables that exist.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

import yaml

from crawler.db.schema import BROWSE_COLUMN_DOCS, column_descriptions

DATABASE = "jobs"
STATIC_MOUNT = "jobcrawl-static"  # browse/static is served at /jobcrawl-static/
HERE = Path(__file__).resolve().parent


# Monthly base pay (midpoint of each posting's range) per group and currency: 25th percentile,
# median, 75th percentile with linear interpolation between the two nearest ranks (as numpy's
# default), from window functions: SQLite has no percentile function.
PERCENTILES_SQL = """with pay as (
  select {group} as grp, salary_currency as currency, (salary_monthly_min + salary_monthly_max) / 2.0 as monthly
  from postings
  where salary_status = 'parsed' and salary_monthly_min is not null and salary_monthly_max is not null
    and not salary_estimated and not salary_implausible and {group} is not null
    and (:{within} = '' or {within} = :{within})
),
ranked as (
  select grp, currency, monthly,
         row_number() over (partition by grp, currency order by monthly) - 1 as i,
         count(*) over (partition by grp, currency) as n
  from pay
),
q(name, p) as (values ('p25', 0.25), ('median', 0.5), ('p75', 0.75)),
part as (
  select grp, currency, n, q.name, monthly
         * (case when i = cast((n - 1) * q.p as int) then 1 - ((n - 1) * q.p - cast((n - 1) * q.p as int))
                 else (n - 1) * q.p - cast((n - 1) * q.p as int) end) as weighted
  from ranked join q
  where i in (cast((n - 1) * q.p as int), cast((n - 1) * q.p as int) + 1)
)
select grp as {group}, currency, n as postings,
       round(sum(case when name = 'p25' then weighted end)) as p25,
       round(sum(case when name = 'median' then weighted end)) as median,
       round(sum(case when name = 'p75' then weighted end)) as p75
from part
group by grp, currency
order by postings desc, median desc, {group}"""


@lru_cache(maxsize=1)
def _hand_written() -> dict[str, Any]:
    return yaml.safe_load((HERE / "metadata.yaml").read_text(encoding="utf-8"))


def column_docs() -> dict[str, dict[str, str]]:
    """Table → column → description: the model's fields plus the columns the browse migration adds."""
    docs = {table: dict(columns) for table, columns in column_descriptions().items()}
    for table, columns in BROWSE_COLUMN_DOCS.items():
        docs.setdefault(table, {}).update(columns)
    return docs


def build_metadata(schema: dict[str, list[str]] | None = None, views: Iterable[str] = ("jobs",)) -> dict[str, Any]:
    """The metadata dict for ``Datasette(metadata=...)``.

    ``schema``: table or view name → its columns, as the database has them (default: the tables the
    YAML describes, with no column list). Tables the database lacks are left out; a view's column
    is described as the postings column of the same name unless the view has a description of its own.
    """
    meta = copy.deepcopy(_hand_written())
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
        if "default_columns" in described[table]:  # of the columns the table has (?_col= of another is an error)
            described[table]["default_columns"] = [c for c in described[table]["default_columns"] if c in columns]
    queries = db_meta.get("queries", {})
    for query in queries.values():
        spec = query.pop("percentiles", None)
        if spec:
            query["sql"] = PERCENTILES_SQL.format(**spec)
    for dashboard in meta.get("plugins", {}).get("datasette-dashboards", {}).values():
        for chart in dashboard.get("charts", {}).values():
            source = chart.pop("query_from", None)
            limit = chart.pop("limit", None)
            if source:
                sql = queries[source]["sql"]
                chart["query"] = f"select * from ({sql}) limit {int(limit)}" if limit else sql
    return meta
