"""Datasette plugin of the jobs database: Chinese-aware search, readable cells, the posting page, limits.

- Facets of ``jobs`` and ``postings`` are counted from the in-memory :class:`browse.facets.FacetIndex`
  while it is current (the column and array facet classes are replaced by its subclasses); the
  skills facet counts technical skills.
- ``?_search=`` and ``?_skill=`` on ``jobs`` and ``postings`` are :mod:`browse.filters`.
- ``escape_fts`` is replaced by :func:`crawler.store.fts.fts_query` on every connection, so the search
  box and canned queries write the query the way the index was written: ``算子`` and ``CUDA`` both match.
- Cells: ``title`` as a link to the posting page, ``salary`` as ``30–50K ×14``, ``score`` with its
  level, ``posted_at`` as a date in the posting's zone (``posted_local``, when the row has it), ``source`` as a link to the posting's page at its source, ``skills``
  as links to the listing filtered by each skill, a posting's ``extra`` as the object it stores; in canned queries the postings' titles and ids
  link to their page, skills, cities and companies to the listing.
- Table pages: the column documentation under a "columns" disclosure; the default columns of
  ``postings`` (``?_columns=all`` for every one) and of the ``jobs`` listing (the other columns stay
  in its JSON and CSV); a searched listing's rows with the matched text highlighted; the rows'
  cells written in one pass (``_table.html``), :mod:`browse.columns`.
- The posting page (``row-jobs-postings.html``) gets its sections, insights, evaluations with
  evidence, skills, cluster and versions from :func:`browse.render.posting_page`, its job's
  application status (:func:`crawler.track.store.application`) and the form of the writable canned query
  ``track`` when writes are allowed (else why not: :class:`browse.access.Access`).
- Limits: arbitrary SQL under a short time limit, one at a time; only reads (:mod:`browse.limits`).
- A table page sorted by a column the table does not have (``?_sort=nope``) answers 400 with Datasette's
  message, not 500.

Everything shown is escaped: values go through ``markupsafe.escape`` here and Jinja autoescape
in the templates.
"""

from __future__ import annotations

import json
from functools import lru_cache

from datasette import hookimpl
from datasette.views.base import DatasetteError
from markupsafe import Markup, escape

from browse import columns, limits, queries
from browse.facets import replace_facet_classes
from browse.filters import (CHOSEN_FUNCTION, SEARCH_FUNCTION, SEARCH_PARAM, TABLES, chosen_function, listing_filters,
                            search_function)
from browse.metadata import DATABASE, STATIC_MOUNT
from browse.render import highlighted, listing_url, posting_page, safe_url, salary_label
from crawler.store import extra, fts
from crawler.store.rows import sql_raw_text
from crawler.track.store import STATUSES as APPLICATION_STATUSES, application

TRACK_QUERY = "track"
SKILLS_SHOWN = 8  # in a listing cell; the posting page lists them all
RENDERED = {"salary", "id", "posting_id", "title", "skills", "skill", "score", "posted_at", "source", "city", "company",
            "extra"}


@hookimpl(trylast=True)
def prepare_connection(conn, database, datasette):
    # trylast: runs after Datasette's own hook, which registers the stock escape_fts.
    conn.create_function("escape_fts", 1, fts.fts_query, deterministic=True)
    conn.create_function("raw_text", 2, sql_raw_text, deterministic=True)
    fts.register(conn)  # the index reads its text (snippets) through them
    db = datasette.get_database(database) if database == DATABASE else None
    if db is not None and hasattr(db, "loaded_facet_index"):
        conn.create_function(SEARCH_FUNCTION, 2, search_function(conn, db), deterministic=True)
        conn.create_function(CHOSEN_FUNCTION, 2, chosen_function(db), deterministic=True)


@hookimpl(hookwrapper=True)
def register_facet_classes():
    outcome = yield
    outcome.force_result([replace_facet_classes(classes) for classes in outcome.get_result()])


@hookimpl(trylast=True)
def filters_from_request(request, database, table, datasette):
    # trylast: its search box context replaces Datasette's (which finds no fts_table for these tables)
    return listing_filters(request, database, table, datasette) if database == DATABASE else None


# Datasette 0.65 raises these for a table page's ?_sort / ?_sort_desc with status 500.
BAD_SORT = ("Cannot sort table by ", "Cannot use _sort and _sort_desc at the same time")


@hookimpl(tryfirst=True)
def handle_exception(datasette, request, exception):
    # tryfirst: marks a bad sort as the bad request it is; Datasette's own hook then writes the page.
    if isinstance(exception, DatasetteError) and exception.status == 500 and exception.message.startswith(BAD_SORT):
        exception.status = 400


@hookimpl(trylast=True)
def permission_allowed(datasette, actor, action, resource):
    # trylast: called after Datasette's own rules (allow_sql), so the charts' queries stay allowed
    return limits.allows_sql(action)


@lru_cache(maxsize=8192)  # the taxonomy's few hundred skills, and what old rows hold
def _skill_link(skill: str) -> str:
    # escape() and f-strings: Markup.format costs a third of a listing page's rendering here
    return f'<a class="skill" href="{escape(listing_url(_skill=skill))}">{escape(skill)}</a>'


def _skill_links(value: str) -> Markup | None:
    try:
        skills = json.loads(value)
    except (TypeError, ValueError):
        return None
    if not isinstance(skills, list):
        return None
    names = [s for s in skills if isinstance(s, str)]
    links = ", ".join(map(_skill_link, names[:SKILLS_SHOWN]))
    more = f" … +{len(names) - SKILLS_SHOWN}" if len(names) > SKILLS_SHOWN else ""
    return Markup(f'<span class="skills">{links}{more}</span>')


def _posting_link(datasette, posting_id, text) -> Markup:
    return Markup('<a href="{}">{}</a>').format(datasette.urls.row(DATABASE, "postings", str(posting_id)), text)


def _listing_cell(row: dict, value, column: str, datasette) -> Markup | None:
    """A cell of the jobs listing or the postings table."""
    if column == "title" and isinstance(row.get("id"), int):
        return Markup('<a class="posting-link" href="{}">{}</a>').format(
            datasette.urls.row(DATABASE, "postings", str(row["id"])), value if value else "(no title)")
    if column == "score" and value is not None:
        level = row.get("score_level")
        return Markup('<span class="score">{}</span>{}').format(
            value, Markup(' <span class="level">{}</span>').format(level) if level else "")
    if column == "posted_at" and isinstance(value, str) and len(value) > 10:
        local = row.get("posted_local")
        if local and local != value:  # the date in the posting's zone (Asia/Shanghai for Chinese boards)
            return Markup('<span title="{} ({} UTC)">{}</span>').format(local, value[:19], local[:10])
        return Markup('<span title="{}">{}</span>').format(value, value[:10])
    if column == "source" and value:
        url = safe_url(row.get("url"))
        return Markup('<a class="source-url" href="{}" rel="noopener noreferrer nofollow">{}</a>').format(url, value) if url else None
    return None


def _query_cell(row: dict, value, column: str, datasette) -> Markup | None:
    """A cell of a canned (or arbitrary) query: postings link to their page, the rest to the listing."""
    posting_id = row.get("posting_id", row.get("id")) if "title" in row else None
    if column in ("title", "id", "posting_id") and isinstance(posting_id, int) and value not in (None, ""):
        if column == "title" or value == posting_id:
            return _posting_link(datasette, posting_id, value)
    if column == "skill" and isinstance(value, str) and value:
        return Markup(_skill_link(value))
    if column in ("city", "company") and isinstance(value, str) and value:
        return Markup('<a href="{}">{}</a>').format(listing_url(**{column: value}), value)
    return None


@hookimpl
def render_cell(row, value, column, table, database, datasette):
    if database != DATABASE:
        return None
    if column == "matched" and isinstance(value, str):
        return highlighted(value)
    if column not in RENDERED:
        return None  # most cells: return before anything costs (a listing page has 1,200)
    if column == "extra":
        return _extra_cell(datasette, value) if table == "postings" and isinstance(value, str) else None
    keys = row.keys()
    if column == "salary" and "salary_monthly_min" in keys:
        label = salary_label(dict(zip(keys, row)))
        return Markup('<span class="salary">{}</span>').format(label) if label else None
    if column == "skills" and table in TABLES:
        return _skill_links(value)
    if column == "id" and table == "jobs" and isinstance(value, int):  # a view: Datasette links no row
        return _posting_link(datasette, value, value)
    if table in TABLES:
        return _listing_cell(dict(zip(keys, row)), value, column, datasette)
    if table is None:
        return _query_cell(dict(zip(keys, row)), value, column, datasette)
    return None


async def _extra_cell(datasette, stored: str) -> str:
    """A posting's ``extra`` cell as the JSON object it stands for (crawler/store/extra.py), not its entry ids."""
    [value] = await datasette.get_database(DATABASE).execute_fn(lambda conn: extra.expand(conn, [stored]))
    return json.dumps(value, ensure_ascii=False)


def _column_docs(datasette, database, table) -> dict:
    """Table pages: the column documentation (shown under a "columns" disclosure by
    ``browse/templates/table.html``) instead of Datasette's list of it above the rows."""
    meta = datasette.table_metadata(database, table)
    if not meta.get("columns"):
        return {}
    return {"metadata": {**meta, "columns": {}}, "column_docs": meta["columns"]}


def _snippets(datasette, request, table):
    """Searched listings: ``search_snippets(rows)`` gives posting id → the highlighted matched text."""
    search = request.args.get(SEARCH_PARAM, "") if table in TABLES else ""
    if not search:
        return {}

    async def search_snippets(rows):
        ids = [row["id"] for row in rows if isinstance(row["id"], int)]
        found = await datasette.get_database(DATABASE).execute_fn(lambda conn: queries.snippets(conn, search, ids))
        return {pid: highlighted(text) for pid, text in found.items()}

    return {"search_snippets": search_snippets}


@hookimpl
def extra_template_vars(template, database, table, view_name, request, datasette):
    if database != DATABASE or request is None:
        return {}
    if view_name == "table":
        return {**_column_docs(datasette, database, table), **_snippets(datasette, request, table)}
    if view_name != "row" or table != "postings":
        return {}

    async def posting():
        try:
            posting_id = int(request.url_vars["pks"])
        except (KeyError, ValueError):
            return {}
        db = datasette.get_database(DATABASE)
        page, status = await db.execute_fn(
            lambda conn: (posting_page(conn, posting_id), application(conn, posting_id)))
        writable = TRACK_QUERY in (datasette.metadata("queries", database=DATABASE) or {})
        refused = getattr(getattr(datasette, "access", None), "refused", None)
        return {"posting": page, "application": status, "application_statuses": APPLICATION_STATUSES,
                "track_url": datasette.urls.query(DATABASE, TRACK_QUERY) if writable else None,
                "track_refused": refused or "Writes are off on this server."}

    return posting


@hookimpl
def prepare_jinja2_environment(env):
    columns.register(env)


@hookimpl
def asgi_wrapper(datasette):
    return lambda app: limits.wrap(columns.wrap(app, datasette), datasette)


@hookimpl
def extra_css_urls(database, table, view_name, datasette):
    return [datasette.urls.path(f"/{STATIC_MOUNT}/browse.css")]
