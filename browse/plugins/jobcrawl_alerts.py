"""Datasette plugin of issue #29: what a job seeker hides, and what changed.

- The ``jobs`` listing and the ``fit`` view hide blocked and stale postings by default (browse/hiding.py;
  the ``fit`` view's clauses come from here, the listing's from its own filter, browse/filters.py). A note
  above the rows says what is hidden and links the toggle (``_jobcrawl_hidden.html``). Nothing is filtered
  when nothing would be hidden.
- The posting page shows the posting's history (:mod:`normalize.history`: a field-level diff of its
  versions, closing and reopening) and the blocklist rule that hides it (``_posting_history.html``).
- The ``fit`` view's ids link to the posting page.

The SQL is in ``crawler.fit.store`` and ``crawler.store.history``.
"""

from __future__ import annotations

from datasette import hookimpl
from datasette.filters import FilterArguments
from datasette.utils import path_with_added_args, path_with_removed_args
from markupsafe import Markup

from browse.filters import TABLES
from browse.hiding import HIDING, clauses, hidden
from browse.metadata import DATABASE
from crawler.fit import store as blocks
from crawler.store import history as store
@hookimpl
def filters_from_request(request, database, table, datasette):
    # the jobs listing's own filter (browse/filters.py) adds the same clauses to its own, and keeps its ids in memory
    if database != DATABASE or table not in HIDING or table in TABLES:
        return None

    async def inner():
        return FilterArguments(*clauses(await hidden(request, datasette)))

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
            toggles = {"_blocked": "1", "_stale": "1", **({"_rejected": "1"} if what.get("rejected") else {})}
            return {"jobcrawl_hidden": {
                **what,
                "show_url": path_with_added_args(request, toggles),
                "hide_url": path_with_removed_args(request, {"_blocked": "1", "_stale": "1", "_rejected": "1"}),
            }}

        return note
    return {}
