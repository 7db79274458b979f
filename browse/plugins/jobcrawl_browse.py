"""Datasette plugin of the jobs database: Chinese-aware search, readable cells, the posting page.

- Facets of ``jobs`` and ``postings`` are counted from the in-memory :class:`browse.facets.FacetIndex`
  of an immutable file (the column and array facet classes are replaced by its subclasses).
- ``?_search=`` and ``?_skill=`` on ``jobs`` and ``postings`` are :mod:`browse.filters`.
- ``escape_fts`` is replaced by :func:`crawler.db.fts.fts_query` on every connection, so the search
  box of ``jobs`` and ``postings`` (``postings_seg``) segments the query the way the index was
  segmented: ``算子`` and ``CUDA`` both match.
- Cells: ``salary`` as ``30–50K ×14``, the listing's ``id`` as a link to the posting page,
  ``skills`` as links to the listing filtered by each skill.
- Table pages: the default columns of ``postings`` (``?_columns=all`` for every one) and the rows'
  cells written in one pass (``_table.html``), :mod:`browse.columns`.
- The posting page (``row-jobs-postings.html``) gets its sections, insights, evaluations with
  evidence, skills, cluster and versions from :func:`browse.render.posting_page`.

Everything shown is escaped: values go through ``markupsafe.escape`` here and Jinja autoescape
in the templates.
"""

from __future__ import annotations

import json
from functools import lru_cache

from datasette import hookimpl
from markupsafe import Markup, escape

from browse import columns
from browse.facets import replace_facet_classes
from browse.filters import SEARCH_FUNCTION, listing_filters, search_function
from browse.metadata import DATABASE, STATIC_MOUNT
from browse.render import listing_url, posting_page, salary_label
from crawler.db.fts import fts_query

LISTINGS = {"jobs", "postings"}
SKILLS_SHOWN = 8  # in a listing cell; the posting page lists them all
RENDERED = {"salary", "id", "skills"}  # the columns render_cell shows in its own way


@hookimpl(trylast=True)
def prepare_connection(conn, database, datasette):
    # trylast: runs after Datasette's own hook, which registers the stock escape_fts.
    conn.create_function("escape_fts", 1, fts_query, deterministic=True)
    index = getattr(datasette.get_database(database), "facet_index", None) if database == DATABASE else None
    if index is not None:
        conn.create_function(SEARCH_FUNCTION, 2, search_function(conn, index), deterministic=True)


@hookimpl(hookwrapper=True)
def register_facet_classes():
    outcome = yield
    outcome.force_result([replace_facet_classes(classes) for classes in outcome.get_result()])


@hookimpl(trylast=True)
def filters_from_request(request, database, table, datasette):
    # trylast: its search box context replaces Datasette's (which finds no fts_table for these tables)
    return listing_filters(request, database, table, datasette) if database == DATABASE else None


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


@hookimpl
def render_cell(row, value, column, table, database, datasette):
    if database != DATABASE or column not in RENDERED:
        return None  # most cells: return before anything costs (a listing page has 1,200)
    keys = row.keys()
    if column == "salary" and "salary_monthly_min" in keys:
        label = salary_label(dict(zip(keys, row)))
        return Markup('<span class="salary">{}</span>').format(label) if label else None
    if table == "jobs" and column == "id" and isinstance(value, int):
        return Markup('<a href="{}">{}</a>').format(datasette.urls.row(DATABASE, "postings", str(value)), value)
    if table in LISTINGS and column == "skills":
        return _skill_links(value)
    return None


@hookimpl
def extra_template_vars(template, database, table, view_name, request, datasette):
    if view_name != "row" or database != DATABASE or table != "postings" or request is None:
        return {}

    async def posting():
        try:
            posting_id = int(request.url_vars["pks"])
        except (KeyError, ValueError):
            return {}
        db = datasette.get_database(DATABASE)
        return {"posting": await db.execute_fn(lambda conn: posting_page(conn, posting_id))}

    return posting


@hookimpl
def prepare_jinja2_environment(env):
    columns.register(env)


@hookimpl
def asgi_wrapper(datasette):
    return lambda app: columns.wrap(app, datasette)


@hookimpl
def extra_css_urls(database, table, view_name, datasette):
    return [datasette.urls.path(f"/{STATIC_MOUNT}/browse.css")]
