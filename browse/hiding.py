"""What the ``jobs`` listing and the ``fit`` view hide by default (#29): blocked postings (a profile's blocklist,
``posting_blocks``), stale ones (closed, or not seen for :data:`STALE_DAYS` days before the newest
``last_seen``) and those of a job whose application was rejected or withdrawn (every member of its duplicate
cluster: the view ``applications``). ``?_blocked=1``, ``?_stale=1`` and ``?_rejected=1`` show them,
``?_stale_days=N`` moves the line.

:func:`hidden` decides it once per request (the alerts plugin's note and the listing's filter read the same);
:func:`clauses` are the conditions a page adds; :func:`hidden_mask` the same rows as a mask of the in-memory
facet index (browse/facets.py), so a listing that hides rows keeps its ids, count and facets in memory.
The SQL is in ``crawler.fit.store``, ``crawler.store.history`` and ``browse.queries``."""

from __future__ import annotations

import numpy as np

from browse.metadata import DATABASE
from browse import queries
from browse.queries import id_array
from crawler.fit import store as blocks
from crawler.store import history as store
HIDING = ("jobs", "fit")
STALE_DAYS = 30
MAX_STALE_DAYS = 3650
HIDDEN_KEY = "jobcrawl.hidden"  # request.scope: what this request's listing hides
HIDING_PARAMS = {"_blocked", "_stale", "_rejected", "_stale_days"}  # query string arguments that only move what is hidden


def _days(request) -> int:
    try:
        return max(0, min(MAX_STALE_DAYS, int(request.args.get("_stale_days", STALE_DAYS))))
    except ValueError:
        return STALE_DAYS


def _what_is_hidden(conn, days: int, show_blocked: bool, show_stale: bool, show_rejected: bool) -> dict:
    cutoff = store.stale_cutoff(conn, days)
    stale = store.count_stale(conn, cutoff) if cutoff and not show_stale else 0
    blocked = 0 if show_blocked else blocks.count(conn)
    rejected = 0 if show_rejected else queries.count_ended(conn)
    return {"cutoff": cutoff, "stale": stale, "blocked": blocked, "rejected": rejected}


async def hidden(request, datasette) -> dict:
    """What the listing of this request hides: ``cutoff``, ``stale``, ``blocked`` and ``rejected`` (rejected or
    withdrawn) counts, ``days`` and the three toggles (computed once per request, and kept by the current facet
    index for the file as it is)."""
    if HIDDEN_KEY not in request.scope:
        shows = tuple(request.args.get(arg) == "1" for arg in ("_blocked", "_stale", "_rejected"))
        days = _days(request)
        db = datasette.get_database(DATABASE)
        index = getattr(db, "facet_index", None)
        found = index.hiding.get((days, *shows)) if index is not None else None
        if found is None:
            found = await db.execute_fn(lambda conn: _what_is_hidden(conn, days, *shows))
            if index is not None:
                index.hiding.put((days, *shows), found)
        request.scope[HIDDEN_KEY] = {**found, "days": days,
                                     **dict(zip(("show_blocked", "show_stale", "show_rejected"), shows))}
    return request.scope[HIDDEN_KEY]


def clauses(what: dict) -> tuple[list[str], dict, list[str]]:
    """The where clauses, parameters and descriptions that hide what :func:`hidden` found."""
    where, params, described = [], {}, []
    if what["blocked"]:
        where.append(blocks.HIDE_BLOCKED)
        described.append("not blocked")
    if what["stale"]:
        where.append(store.HIDE_STALE)
        params["stale_cutoff"] = what["cutoff"]
        described.append(f"seen in the last {what['days']} days and open")
    if what["rejected"]:
        where.append(queries.HIDE_ENDED)
        described.append("not rejected or withdrawn")
    return where, params, described


def hidden_mask(conn, size: int, what: dict) -> np.ndarray:
    """``mask[id]``: posting ``id`` is hidden (ids below ``size``)."""
    mask = np.zeros(size, dtype=bool)
    for text in ((store.stale_ids(conn, what["cutoff"]) if what["stale"] else None),
                 (blocks.blocked_ids(conn) if what["blocked"] else None),
                 (queries.ended_ids(conn) if what["rejected"] else None)):
        if text:
            ids = id_array(text)
            mask[ids[(ids >= 0) & (ids < size)]] = True
    return mask
