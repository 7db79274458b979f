"""``velocity_weekly``: computed from the jobs (:mod:`normalize.market`), stored when what it is computed from
changed (its basis, in ``meta``)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from itertools import chain

from crawler.market import store
from normalize.market import Kinds, every_week, velocity, week_of


def compute(conn: sqlite3.Connection) -> list[dict]:
    """The rows of ``velocity_weekly`` from the database as it is. The jobs are read as a stream and counted per key
    and kind of job (:class:`~normalize.market.Kinds`); their skills (one row per job and skill: millions at 100,000
    postings) are counted by the database, per skill and kind."""
    kinds, kind_of = Kinds(), {}
    counted: Counter[tuple[str, str, int]] = Counter()
    for posting_id, opened, closed, company, city, category in store.jobs(conn):
        kind = kind_of[posting_id] = kinds.of(opened, closed)
        for scope, key in (("company", company), ("city", city), ("category", category)):
            if key is not None:
                counted[scope, key, kind] += 1
    skills = (("skill", skill, kind, n) for skill, kind, n in store.skill_kinds(conn, kind_of))
    return velocity(kinds.timelines, chain(((*k, n) for k, n in counted.items()), skills))


def refresh(conn: sqlite3.Connection, *, force: bool = False) -> int | None:
    """Recompute and store ``velocity_weekly`` unless nothing it reads changed since (``force``: anyway); returns
    the rows stored, None when it was current."""
    now = store.basis(conn)
    if not force and store.stored_basis(conn) == now:
        return None
    return store.replace_velocity(conn, compute(conn), now)


def weeks(conn: sqlite3.Connection, scope: str, key: str | None = None, *, since: str | None = None,
          top: int | None = None, writable: bool = True) -> list[dict]:
    """What ``jobcrawl stats velocity`` prints: the rows of ``scope`` (one ``key``) with every week between filled
    in (:func:`normalize.market.every_week`, through the week of the database's newest last_seen), from the week
    ``since`` on, of the ``top`` keys by jobs opened in those weeks (all keys when None). Read as the database is
    now: the table is stored again first when stale, or computed without storing when ``writable`` is false."""
    if writable:
        refresh(conn)
    if writable or store.stored_basis(conn) == store.basis(conn):
        rows = store.velocity(conn, scope, key)
    else:
        rows = [r for r in compute(conn) if r["scope"] == scope and (key is None or r["key"] == key)]
    newest = store.newest_seen(conn)
    rows = [r for r in every_week(rows, newest and week_of(newest)) if since is None or r["week"] >= since]
    if top is not None:
        opened: dict[str, int] = {}
        for r in rows:
            opened[r["key"]] = opened.get(r["key"], 0) + r["opened"]
        chosen = set(sorted(opened, key=lambda k: (-opened[k], k))[:top])
        rows = [r for r in rows if r["key"] in chosen]
    return rows
