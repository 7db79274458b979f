"""What a table page renders: its default columns, and its rows' cells in one pass.

A ``postings`` row has ~70 columns: at 20 rows a page has 1,400 cells, and Datasette's rendering
of them (a ``render_cell`` hook call per cell, then Jinja) cost about half of a searched page at
500,000 postings. ``default_columns`` in a table's metadata lists the columns its HTML page shows
when the query string picks none itself (``_col``) and does not ask for all of them
(``_columns=all``): :func:`wrap` adds them to the query string as ``_col`` arguments, so the page,
its links and its export links carry them as if the visitor had picked them, and ``_nocol`` hides
some of them. The table's JSON and CSV (``/jobs/postings.json``) keep every column.

:func:`cells_html` writes a row's ``<td>`` cells as Datasette's ``_table.html`` does, without a
Jinja expression per cell (``browse/templates/_table.html``).

A view (the ``jobs`` listing) has no ``_col`` of its own to spare: its ``listing_columns`` are the
columns its HTML page shows, while its query keeps every column (:func:`shown_columns`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, quote

from datasette.utils import to_css_class
from markupsafe import Markup, escape

ALL_PARAM, ALL_VALUE = "_columns", "all"


def default_columns(datasette) -> dict[str, list[str]]:
    """Path of a table page → the columns it shows by default, for every table whose metadata has
    ``default_columns``."""
    out = {}
    for database, db_meta in (datasette.metadata("databases") or {}).items():
        for table, meta in (db_meta.get("tables") or {}).items():
            if meta.get("default_columns"):
                out[datasette.urls.table(database, table)] = list(meta["default_columns"])
    return out


def with_default_columns(query_string: bytes, columns: list[str]) -> bytes:
    """``query_string`` with ``_col`` for each of ``columns``, unless it has a ``_col`` or
    ``_columns=all`` already."""
    pairs = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
    if any(key == "_col" or (key, value) == (ALL_PARAM, ALL_VALUE) for key, value in pairs):
        return query_string
    added = "&".join(f"_col={quote(c, safe='')}" for c in columns).encode()
    return query_string + b"&" + added if query_string else added


def wrap(app, datasette):
    """ASGI middleware: a GET of a table page with ``default_columns`` gets them (:func:`with_default_columns`)."""
    pages: dict[str, list[str]] | None = None

    async def wrapped(scope, receive, send):
        nonlocal pages
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD"):
            if pages is None:
                pages = default_columns(datasette)
            columns = pages.get(scope["path"])
            if columns:
                scope = dict(scope, query_string=with_default_columns(scope.get("query_string", b""), columns))
        await app(scope, receive, send)

    return wrapped


def cells_html(row, shown: list[str] | None = None) -> Markup:
    """A row of ``display_rows`` as the ``<td>`` cells Datasette's ``_table.html`` writes (the same
    classes, values escaped unless they are Markup); only the columns ``shown`` when given."""
    return Markup("".join(
        f'<td class="col-{escape(to_css_class(cell["column"]))} type-{escape(cell["value_type"])}">{escape(cell["value"])}</td>'
        for cell in row if shown is None or cell["column"] in shown
    ))


def shown_columns(metadata: dict, request) -> list[str] | None:
    """The columns a view's HTML page shows (its metadata's ``listing_columns``, unless
    ``?_columns=all`` or ``?_col=``), the others staying in its query for the cells that use them
    (the salary label, the title's link); None for all."""
    wanted = metadata.get("listing_columns")
    args = request.args
    if not wanted or args.get(ALL_PARAM) == ALL_VALUE or "_col" in args:
        return None
    return list(wanted)


def register(env: Any) -> None:
    """The Jinja filters and functions ``browse/templates/_table.html`` uses."""
    env.filters["jobcrawl_cells"] = cells_html
    env.globals["jobcrawl_shown_columns"] = shown_columns
