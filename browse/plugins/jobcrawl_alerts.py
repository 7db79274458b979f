"""Datasette plugin of issue #29: what a job seeker hides, and what changed.

- The ``jobs`` listing and the ``fit`` view hide blocked postings (a profile's blocklist,
  ``posting_blocks``) and stale ones (closed, or not seen for :data:`STALE_DAYS` days before the newest
  ``last_seen``) by default; ``?_blocked=1`` and ``?_stale=1`` show them, ``?_stale_days=N`` moves the
  line. A note above the rows says what is hidden and links the toggle (``_jobcrawl_hidden.html``).
  Nothing is filtered when nothing would be hidden.
- The posting page shows the posting's history (:mod:`normalize.history`: a field-level diff of its
  versions, closing and reopening) and the blocklist rule that hides it (``_posting_history.html``).
- The ``fit`` view's ids link to the posting page.

The SQL is in ``crawler.db.blocks`` and ``crawler.db.history``.
"""

from __future__ import annotations

from datasette import hookimpl
from datasette.filters import FilterArguments
from datasette.utils import path_with_added_args, path_with_removed_args
from markupsafe import Markup

from browse.metadata import DATABASE
from crawler.db import blocks
from crawler.db import history as store

HIDING = ("jobs", "fit")
STALE_DAYS = 30
MAX_STALE_DAYS = 3650
HIDDEN_KEY = "jobcrawl.hidden"  # request.scope: what this request's listing hides (browse/filters.py reads it)


def _days(request) -> int:
    try:
        return max(0, min(MAX_STALE_DAYS, int(request.args.get("_stale_days", STALE_DAYS))))
    except ValueError:
        return STALE_DAYS


def _what_is_hidden(conn, days: int, show_blocked: bool, show_stale: bool) -> dict:
    cutoff = store.stale_cutoff(conn, days)
    stale = store.count_stale(conn, cutoff) if cutoff and not show_stale else 0
    blocked = 0 if show_blocked else blocks.count(conn)
    return {"cutoff": cutoff, "stale": stale, "blocked": blocked}


async def hidden(request, datasette) -> dict:
    """What the listing of this request hides (computed once per request)."""
    if HIDDEN_KEY not in request.scope:
        show_blocked, show_stale = request.args.get("_blocked") == "1", request.args.get("_stale") == "1"
        days = _days(request)
        found = await datasette.get_database(DATABASE).execute_fn(
            lambda conn: _what_is_hidden(conn, days, show_blocked, show_stale))
        request.scope[HIDDEN_KEY] = {**found, "days": days, "show_blocked": show_blocked, "show_stale": show_stale}
    return request.scope[HIDDEN_KEY]


@hookimpl
def filters_from_request(request, database, table, datasette):
    if database != DATABASE or table not in HIDING:
        return None

    async def inner():
        what = await hidden(request, datasette)
        clauses, params, described = [], {}, []
        if what["blocked"]:
            clauses.append(blocks.HIDE_BLOCKED)
            described.append("not blocked")
        if what["stale"]:
            clauses.append(store.HIDE_STALE)
            params["stale_cutoff"] = what["cutoff"]
            described.append(f"seen in the last {what['days']} days and open")
        return FilterArguments(clauses, params, described)

    return inner


@hookimpl
def render_cell(value, column, table, database, datasette):
    if database == DATABASE and table == "fit" and column == "id" and isinstance(value, int):
        return Markup('<a href="{}">{}</a>').format(datasette.urls.row(DATABASE, "postings", str(value)), value)
    return None


def _posting_extras(conn, posting_id: int) -> dict:
    import sqlite_utils

    from normalize.history import history

    db = sqlite_utils.Database(conn, recursive_triggers=False)
    versions, events = store.versions(db, posting_id)
    steps = history(versions, events) if versions else []
    return {"posting_history": steps if len(steps) > 1 else [],
            "posting_blocked": [dict(zip(("profile", "rule", "detail"), r)) for r in blocks.rules_of(conn, posting_id)]}


@hookimpl
def extra_template_vars(template, database, table, view_name, request, datasette):
    if database != DATABASE or request is None:
        return {}
    if view_name == "row" and table == "postings":
        async def posting():
            try:
                posting_id = int(request.url_vars["pks"])
            except (KeyError, ValueError):
                return {}
            return await datasette.get_database(DATABASE).execute_fn(lambda conn: _posting_extras(conn, posting_id))

        return posting
    if view_name == "table" and table in HIDING:
        async def note():
            what = await hidden(request, datasette)
            toggles = {"_blocked": "1", "_stale": "1"}
            return {"jobcrawl_hidden": {
                **what,
                "show_url": path_with_added_args(request, toggles),
                "hide_url": path_with_removed_args(request, {"_blocked": "1", "_stale": "1"}),
            }}

        return note
    return {}
