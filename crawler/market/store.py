"""Every SQL statement of the market over time: the jobs and their keys read for ``velocity_weekly``, the table
replaced and read, what it was computed from, and the monthly pay quartiles (:data:`PAY_SQL`, also the
``pay_over_time`` canned query's: browse/metadata.py fills it in)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from normalize.market import MIN_CELL, TOO_FEW, VELOCITY_FIELDS

BASIS_KEY = "velocity_basis"

JOBS_SQL = """SELECT t.posting_id, t.opened_at, t.closed_at, p.company, p.city, p.category
FROM job_timeline t JOIN postings p ON p.id = t.posting_id"""

BASIS_SQL = """SELECT json_array((SELECT max(id) FROM posting_versions), (SELECT count(*) FROM postings),
    (SELECT max(first_seen) FROM postings), (SELECT count(*) FROM posting_events), (SELECT max(id) FROM posting_events),
    (SELECT count(*) FROM clusters), (SELECT total(canonical_posting_id) FROM clusters), (SELECT total(size) FROM clusters),
    (SELECT count(*) FROM posting_skills))"""

WANTED_SKILL = """select name from skills
  where name = :skill collate nocase
     or exists (select 1 from json_each(skills.aliases) where value = :skill collate nocase)"""

def quartile_ctes(groups: str, where: str = "") -> str:
    """The CTEs ``ranked``, ``q`` and ``part`` over a CTE ``pay`` (columns ``groups`` and ``monthly``): per group,
    ``n`` and the two values each quartile (``p25``, ``median``, ``p75``: ``name``) interpolates linearly between,
    weighted, so that a quartile is the sum of its ``weighted``; ``where``: more conditions (``and …``)."""
    return f"""ranked as (
  select {groups}, monthly,
         row_number() over (partition by {groups} order by monthly) - 1 as i,
         count(*) over (partition by {groups}) as n
  from pay
),
q(name, p) as (values ('p25', 0.25), ('median', 0.5), ('p75', 0.75)),
part as (
  select {groups}, n, q.name, monthly
         * (case when i = cast((n - 1) * q.p as int) then 1 - ((n - 1) * q.p - cast((n - 1) * q.p as int))
                 else (n - 1) * q.p - cast((n - 1) * q.p as int) end) as weighted
  from ranked join q
  where i in (cast((n - 1) * q.p as int), cast((n - 1) * q.p as int) + 1){where}
)"""


PAY_SQL = f"""with wanted as (
  {WANTED_SKILL}
),
pay as (
  select strftime('%Y-%m', t.opened_at, '+8 hours') as month, p.salary_currency as currency,
         (p.salary_monthly_min + p.salary_monthly_max) / 2.0 as monthly
  from job_timeline t join postings p on p.id = t.posting_id
  where p.salary_status = 'parsed' and p.salary_monthly_min is not null and p.salary_monthly_max is not null
    and not coalesce(p.salary_estimated, 0) and not coalesce(p.salary_implausible, 0)
    and (:city = '' or p.city = :city) and (:category = '' or p.category = :category)
    and (:skill = '' or p.id in (select posting_id from posting_skills where skill in (select name from wanted)))
),
{quartile_ctes("month, currency")}
select month, currency, n as jobs,
       case when n >= {MIN_CELL} then round(sum(case when name = 'p25' then weighted end)) end as p25,
       case when n >= {MIN_CELL} then round(sum(case when name = 'median' then weighted end)) end as median,
       case when n >= {MIN_CELL} then round(sum(case when name = 'p75' then weighted end)) end as p75,
       case when n < {MIN_CELL} then '{TOO_FEW}' end as note
from part
group by month, currency
order by month, currency"""
"""Monthly pay quartiles of the jobs (``job_timeline``: copies of one job once) first seen each month (China time),
per currency, optionally of one skill (name or alias, any case), city and/or category (``''``: any). The pay of a job
is the midpoint of its canonical posting's monthly range, stated (not estimated), parsed and plausible; the quartiles
interpolate linearly (as the salary charts'), rounded to whole units; a cell of fewer than ``MIN_CELL`` jobs has no
figure, its note is ``TOO_FEW``."""


def jobs(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """``(posting_id, opened_at, closed_at, company, city, category)`` of every job (its canonical posting)."""
    return conn.execute(JOBS_SQL)


def skill_kinds(conn: sqlite3.Connection, kind_of: Mapping[int, int]) -> sqlite3.Cursor:
    """``(skill, kind, jobs)``: how many of the jobs ``kind_of`` (posting id → its kind) of each kind have each
    skill."""
    return conn.execute(
        "WITH k AS (SELECT CAST(key AS INTEGER) AS posting_id, value AS kind FROM json_each(?))"
        " SELECT ps.skill, k.kind, count(DISTINCT ps.posting_id) FROM k JOIN posting_skills ps"
        " ON ps.posting_id = k.posting_id GROUP BY ps.skill, k.kind", (json.dumps(kind_of),))


def basis(conn: sqlite3.Connection) -> str:
    """What ``velocity_weekly`` is computed from, in a few figures: changed postings (their superseded versions),
    postings, closings, clusters, skills."""
    return conn.execute(BASIS_SQL).fetchone()[0]


def stored_basis(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (BASIS_KEY,)).fetchone()
    return row and row[0]


def replace_velocity(conn: sqlite3.Connection, rows: Iterable[Mapping[str, Any]], basis_now: str) -> int:
    """Replace ``velocity_weekly`` with ``rows`` and record ``basis_now``, in one transaction; returns the row count."""
    values = [tuple(r[f] for f in VELOCITY_FIELDS) for r in rows]
    with conn:
        conn.execute("DELETE FROM velocity_weekly")
        conn.executemany(f"INSERT INTO velocity_weekly ({', '.join(VELOCITY_FIELDS)}) VALUES "
                         f"({', '.join('?' * len(VELOCITY_FIELDS))})", values)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (BASIS_KEY, basis_now))
    return len(values)


def _dicts(cur: sqlite3.Cursor) -> list[dict[str, Any]]:
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def velocity(conn: sqlite3.Connection, scope: str, key: str | None = None) -> list[dict]:
    """The stored rows of ``scope`` (of one ``key``), by key and week."""
    return _dicts(conn.execute(
        f"SELECT {', '.join(VELOCITY_FIELDS)} FROM velocity_weekly WHERE scope = :scope"
        " AND (:key IS NULL OR key = :key) ORDER BY key, week", {"scope": scope, "key": key}))


def keys(conn: sqlite3.Connection, scope: str) -> list[str]:
    """Every key of ``scope`` in ``velocity_weekly``."""
    return [k for (k,) in conn.execute("SELECT DISTINCT key FROM velocity_weekly WHERE scope = ?", (scope,))]


def newest_seen(conn: sqlite3.Connection) -> str | None:
    """The newest last_seen of the database: its "now"."""
    return conn.execute("SELECT max(last_seen) FROM postings").fetchone()[0]


def skill_name(conn: sqlite3.Connection, text: str) -> str | None:
    """The taxonomy's name of a skill given by name or alias, any case; None when it has none."""
    row = conn.execute(WANTED_SKILL + " order by name = :skill desc limit 1", {"skill": text}).fetchone()
    return row and row[0]


def skill_names(conn: sqlite3.Connection) -> list[str]:
    return [n for (n,) in conn.execute("SELECT name FROM skills")]


def pay(conn: sqlite3.Connection, skill: str = "", city: str = "", category: str = "") -> list[dict]:
    """The rows of :data:`PAY_SQL` (month, currency, jobs, p25, median, p75, note)."""
    return _dicts(conn.execute(PAY_SQL, {"skill": skill, "city": city, "category": category}))
