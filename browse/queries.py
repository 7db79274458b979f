"""Every read-only query of ``browse/`` (the plugin, its filters, facets and pages), run through
Datasette's own API (``Database.execute`` / ``execute_fn``) on the served file. The full-text index
is known only to :mod:`crawler.store.fts`, whose SQL these queries embed."""

from __future__ import annotations

import sqlite3
from typing import Any

import numpy as np

from crawler.market.store import quartile_ctes
from crawler.store import fts
from normalize.models import HIDDEN_COMPANY


def id_array(text: str | None) -> np.ndarray:
    """``group_concat`` of integers as an array."""
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)

# --------------------------------------------------------------------------- search and skills (browse/filters.py)

SHOWN_NULLS = {("jobs", "company"): HIDDEN_COMPANY}
"""What a view shows for a null of a ``postings`` column: the jobs view's ``coalesce(company, '（企业未公开）')``
(crawler/store/schema.py), which no index of ``postings`` answers."""


def shown_subquery(column: str, shown_null: bool, param: str) -> str:
    """The ids of the postings whose ``column`` a view shows as ``:param``, through the column's index:
    ``shown_null`` when the value is what the view shows for a null (:data:`SHOWN_NULLS`)."""
    return f"select id from postings where [{column}] = :{param}" + (f" or [{column}] is null" if shown_null else "")


SEARCH_IDS = f"SELECT group_concat(rowid) FROM ({fts.MATCH_SQL})"
"""Every posting id ``:search`` finds, as one comma-separated text."""
SEARCH_SUBQUERY = fts.MATCH_SQL
SKILL_SUBQUERY = "select posting_id from posting_skills where skill = :{param}"


def count_sql(table: str, clauses: list[str]) -> str:
    """The count query Datasette's table page runs for these where clauses (views/table.py: count_sql)."""
    return f"select count(*) from {table} " + (f"where {' and '.join(clauses)} " if clauses else "")


def search_matches(conn: sqlite3.Connection, search: str) -> str | None:
    return conn.execute(SEARCH_IDS, {"search": search}).fetchone()[0]


# --------------------------------------------------------------------------- facets (browse/facets.py)


def postings_size(conn: sqlite3.Connection) -> tuple[int, str | None]:
    """One more than the largest posting id, and every posting id (comma-separated)."""
    return (conn.execute("SELECT coalesce(max(id), 0) + 1 FROM postings").fetchone()[0],
            conn.execute("SELECT group_concat(id) FROM postings").fetchone()[0])


def ids_by_value(conn: sqlite3.Connection, column: str):
    """``(value, comma-separated ids)`` of the postings per value of ``column`` (not null)."""
    return conn.execute(f"SELECT [{column}], group_concat(id) FROM postings WHERE [{column}] IS NOT NULL GROUP BY [{column}]")


def ids_by_skill(conn: sqlite3.Connection):
    """``(skill, kind, comma-separated ids)`` of the postings per skill found (an id once per section)."""
    return conn.execute("SELECT ps.skill, s.kind, group_concat(ps.posting_id) FROM posting_skills ps"
                        " LEFT JOIN skills s ON s.name = ps.skill GROUP BY ps.skill")


def ids_by_application_status(conn: sqlite3.Connection):
    """``(status, comma-separated ids)`` of the postings per application status: every member of a tracked job (the
    view ``applications``; the jobs view's ``application_status``)."""
    return conn.execute("SELECT status, group_concat(posting_id) FROM applications GROUP BY status")


def open_ids(conn: sqlite3.Connection) -> str | None:
    """The ids of the postings not closed, comma-separated."""
    return conn.execute("SELECT group_concat(id) FROM postings WHERE closed_at IS NULL").fetchone()[0]


def chart_pay(conn: sqlite3.Connection):
    """``(id, currency, monthly)`` of every posting the salary charts count (PERCENTILES_SQL's ``pay``)."""
    return conn.execute(
        "SELECT id, salary_currency, (salary_monthly_min + salary_monthly_max) / 2.0 FROM postings"
        " WHERE salary_status = 'parsed' AND salary_monthly_min IS NOT NULL AND salary_monthly_max IS NOT NULL"
        " AND NOT salary_estimated AND NOT salary_implausible")


def skill_meta(conn: sqlite3.Connection):
    """``(name, kind, category, frontier)`` of every skill of the taxonomy."""
    return conn.execute("SELECT name, kind, category, frontier FROM skills")


def page_ids(conn: sqlite3.Connection, sql: str, params: Any) -> str | None:
    """The ids of the rows a page's SQL selects (it has an ``id`` column), comma-separated."""
    return conn.execute(f"SELECT group_concat(id) FROM ({sql})", params or {}).fetchone()[0]


def skill_facet_sql(page_sql: str, kind: str, also: list[str], limit: int) -> str:
    """The skills facet of a page, from ``posting_skills``: ``(value, count)`` of the skills of one
    ``kind`` and those named by the parameters ``also`` (``:name``), most postings first."""
    wanted = f"s.kind = '{kind}'" + (f" or ps.skill in ({', '.join(also)})" if also else "")
    return (f"select ps.skill as value, count(distinct ps.posting_id) as count from posting_skills ps"
            f" left join skills s on s.name = ps.skill"
            f" where ps.posting_id in (select id from ({page_sql})) and ({wanted})"
            f" group by ps.skill order by count desc, value limit {int(limit)}")


# --------------------------------------------------------------------------- ended applications (browse/hiding.py)

ENDED = ("rejected", "withdrawn")
"""The application statuses the listings hide by default."""
_ENDED_IN = ", ".join(f"'{status}'" for status in ENDED)
HIDE_ENDED = f"id not in (select posting_id from applications where status in ({_ENDED_IN}))"
"""Condition on ``postings`` (or a view with its ``id``): the posting's job is not rejected or withdrawn. The view
``applications`` is read once (a few rows: the members of the tracked jobs), not per posting."""


def ended_ids(conn: sqlite3.Connection) -> str | None:
    """The ids of the postings whose job is rejected or withdrawn, comma-separated (the rows HIDE_ENDED leaves out)."""
    return conn.execute(f"SELECT group_concat(posting_id) FROM applications WHERE status IN ({_ENDED_IN})").fetchone()[0]


def count_ended(conn: sqlite3.Connection) -> int:
    """Postings whose job is rejected or withdrawn."""
    return conn.execute(f"SELECT count(*) FROM applications WHERE status IN ({_ENDED_IN})").fetchone()[0]


# --------------------------------------------------------------------------- the posting page (browse/render.py)


def cluster_members(conn: sqlite3.Connection, cluster_id: int) -> list[tuple]:
    """``(id, title, company, city, reason, similarity)`` of a cluster's members, by id; a hidden employer as
    （企业未公开）."""
    return conn.execute(
        "SELECT p.id, p.title, coalesce(p.company, ?), p.city, m.reason, m.similarity FROM cluster_members m"
        " JOIN postings p ON p.id = m.posting_id WHERE m.cluster_id = ? ORDER BY p.id",
        (HIDDEN_COMPANY, cluster_id)).fetchall()


def version_count(conn: sqlite3.Connection, posting_id: int) -> int:
    return conn.execute("SELECT count(*) FROM posting_versions WHERE posting_id = ?", (posting_id,)).fetchone()[0]


def listing_score(conn: sqlite3.Connection, posting_id: int) -> tuple | None:
    """``(score, score_level, score_by)`` the listing sorts a posting by."""
    return conn.execute("SELECT score, score_level, score_by FROM postings WHERE id = ?", (posting_id,)).fetchone()


def snippets_sql(count: int) -> str:
    """``(id, snippet)`` (:func:`crawler.store.fts.snippet_sql`) of the postings of ``count`` ids that an
    FTS5 expression matches: parameters the expression, then the ids."""
    return (f"SELECT rowid, {fts.snippet_sql()} FROM {fts.TABLE} WHERE {fts.TABLE} MATCH ?"
            f" AND rowid IN ({', '.join('?' * count)})")


def snippets(conn: sqlite3.Connection, search: str, ids: list[int]) -> dict[int, str]:
    """Posting id → the snippet of its text that ``search`` matched, for the postings ``ids``."""
    if not ids:
        return {}
    return dict(conn.execute(snippets_sql(len(ids)), [fts.fts_query(search), *ids]))


# --------------------------------------------------------------------------- canned queries (browse/metadata.py)

# Monthly base pay (midpoint of each posting's range) per group and currency: 25th percentile,
# median, 75th percentile with linear interpolation between the two nearest ranks (as numpy's
# default), from window functions: SQLite has no percentile function. Groups of fewer than
# :min_postings postings (default 10) are left out: a median of three salaries ranks nothing.
PERCENTILES_SQL = """with pay as (
  select {group} as grp, salary_currency as currency, (salary_monthly_min + salary_monthly_max) / 2.0 as monthly
  from postings
  where salary_status = 'parsed' and salary_monthly_min is not null and salary_monthly_max is not null
    and not salary_estimated and not salary_implausible and {group} is not null
    and (:{within} = '' or {within} = :{within})
),
""" + quartile_ctes("grp, currency", "\n    and n >= cast(coalesce(nullif(:min_postings, ''), 10) as integer)").replace(
    "{", "{{").replace("}", "}}") + """
select grp as {group}, currency, n as postings,
       round(sum(case when name = 'p25' then weighted end)) as p25,
       round(sum(case when name = 'median' then weighted end)) as median,
       round(sum(case when name = 'p75' then weighted end)) as p75
from part
group by grp, currency
order by postings desc, median desc, {group}"""


SEARCH_SQL = f"""with found as (
  select rowid as id, {fts.snippet_sql()} as matched from {fts.TABLE}
  where {fts.TABLE} match escape_fts(:q) order by rowid desc limit 100
)
select p.id, p.title, p.company, p.city, found.matched, p.score, p.score_level, p.posted_at, p.first_seen
from found join postings p on p.id = found.id
order by p.id desc"""
"""The ``search`` canned query: the 100 postings stored last that ``:q`` finds, with the matched
text (rendered highlighted by the plugin). FTS5 reads its matches in rowid order and stops at the
100th, so the snippets are made for those alone; ordering by relevance (bm25) would rank every match
first, which costs a large search a large part of a second at 500,000 postings."""


def limited(sql: str, limit: int) -> str:
    """The first ``limit`` rows of a query (a chart of a canned query's rankings)."""
    return f"select * from ({sql}) limit {int(limit)}"
