"""The listings' own filters: ``?_search=`` (the full-text index, crawler/store/fts.py) and ``?_skill=``.

Both select postings through a subquery of ids (``postings_fts`` rowids, ``posting_skills``), and
how SQLite runs it decides the page's cost. Written ``id in (subquery)``, SQLite seeks every match
in ``postings``: cheap for the count (the narrow ``postings(id)`` index), but the listing's page
(``order by score desc limit 50``) then reads and sorts every matching row, and a ``postings`` row is
wide: 0.6 s for the 155,000 matches of ``CUDA`` among 500,000 postings. Written ``+id in
(subquery)``, the subquery is a set the rows are checked against: the page walks the score index
and stops after 50 matches (a few ms), the count checks every posting (about 0.1 s at 500,000).
:func:`listing_filters` writes the first for a few matches and the second for many (more than one
posting in :data:`SCAN_RATIO`), the break-even measured at 500,000 postings.

When nothing else selects the rows (:func:`own_ids`), the count is known and the facets are counted
from the indexes: the page's query is the only one with the clause, and when it reads in score
order the walk along the score index wins from about 500 matches (:data:`PAGE_SCAN_RATIO`): it wins for
many matches and loses to seeking for a handful (``bench/browse.py``; figures in bench/README.md). The search
is then checked against its matches held in memory (:func:`search_function`), not collected again.

Datasette's own search (``fts_table`` in the metadata) always writes the first, so the metadata of
``jobs`` and ``postings`` names no ``fts_table``; this module's filter shows the search box and
reads ``_search`` as Datasette does (``escape_fts``, which the plugin replaces by
:func:`crawler.store.fts.fts_query`).

When a page is filtered by nothing but these two, the listing's hiding and equalities on the
index's columns (``?city=上海``), :func:`own_ids` gives its ids from the search index and the
in-memory :class:`browse.facets.FacetIndex`, so its count and facets need no query of their own, and
its query checks ``jobcrawl_chosen(:jobcrawl_chosen, id)`` (:func:`chosen_function`) so that SQLite
reads the rows it shows and no other: the hiding clauses (``last_seen``, ``closed_at``) and a search
are otherwise checked on the row of every candidate met along the score index.
"""

from __future__ import annotations

import hashlib

import numpy as np
from datasette.database import QueryInterrupted
from datasette.filters import FilterArguments, Filters
from datasette.utils import escape_sqlite, sqlite3, sqlite_timelimit
from datasette.views.base import ureg

from browse import queries
from browse.queries import SHOWN_NULLS, id_array
from browse.hiding import HIDDEN_KEY, HIDING, HIDING_PARAMS, clauses as hiding_clauses, hidden, hidden_mask
from browse.lru import Lru

TABLES = ("jobs", "postings")  # the listing view and its table: the same rows, the same ids
SEARCH_PARAM, SKILL_PARAM = "_search", "_skill"
SCAN_RATIO = 25  # more matches than postings / SCAN_RATIO: check every posting instead of seeking the matches
PAGE_SCAN_RATIO = 1000  # the same when the page's query is the only one and reads in score order
SCORE = "score"  # the listings' sort (metadata sort_desc), along idx_postings_score
# Query string arguments that do not select rows (Datasette's table page); any other one does.
PRESENTATION = {"_facet", "_facet_array", "_facet_date", "_facet_size", "_size", "_sort", "_sort_desc", "_col", "_nocol",
                "_labels", "_label", "_shape", "_json", "_nl", "_trace", "_nofacet", "_nocount", "_nosuggest",
                "_timelimit", "_extra", "_stream", "_dl", "_context", "_header", "_searchmode", "_columns"}
_OWN_IDS = "jobcrawl.own_ids"
_CHOSEN = "jobcrawl.chosen"  # request.scope: the token of the page's rows in memory (chosen_function)
CHOSEN_FUNCTION, CHOSEN_PARAM = "jobcrawl_chosen", "jobcrawl_chosen"
OWN_ARGS = PRESENTATION | HIDING_PARAMS | {SEARCH_PARAM, SKILL_PARAM}  # what own_ids reads besides column equalities

SEARCH_FUNCTION = "jobcrawl_search"  # (search, id): the page of a search read alone (search_function)
# Arguments that make Datasette run the page's clauses in another query than the page's: a facet
# of its own (the metadata's facets are counted from the indexes), every row of the result.
SHARED = ("_facet", "_facet_array", "_facet_date", "_stream")


async def search_ids(datasette, database: str, request, index) -> np.ndarray:
    """The posting ids ``?_search=`` matches; ``index`` (a FacetIndex) keeps them for the next pages
    of the same search (narrowed by a facet, the next page)."""
    search = request.args.get(SEARCH_PARAM, "")
    ids = index.searches.get(search)
    if ids is None:
        limit = datasette.setting("sql_time_limit_ms")

        def read(conn):
            with sqlite_timelimit(conn, limit):
                return queries.search_matches(conn, search)

        try:
            ids = id_array(await datasette.get_database(database).execute_fn(read))
        except sqlite3.OperationalError as error:
            if "interrupted" in str(error):
                raise QueryInterrupted(error, queries.SEARCH_IDS, {"search": search}) from error
            raise
        index.searches.put(search, ids)
    return ids


def search_function(conn: sqlite3.Connection, database):
    """``jobcrawl_search(search, id)`` on ``conn``: 1 when posting ``id`` matches ``search``, else 0,
    from the matches the served ``database``'s facet index holds in memory, or those read on
    ``conn`` when it holds none (the SQL of a page run again in the SQL editor).

    Read along the score index and checked against matches in memory, a search's page does not have
    SQLite collect every match again as ``+id in (subquery)`` does. A page's SQL uses it only while the index is
    of the file as it is (:func:`listing_filters`)."""
    own = Lru(4)  # search → matches as bytes by id, without an index

    def matches(search, posting_id):
        index = database.loaded_facet_index
        masks = own if index is None else index.search_masks
        found = masks.get(search)
        if found is None:
            ids = None if index is None else index.searches.get(search)
            if ids is None:
                ids = id_array(queries.search_matches(conn, search))
            if index is not None:
                size = index.size
            else:
                size = int(ids.max()) + 1 if len(ids) else 0
            mask = np.zeros(size, dtype=bool)
            mask[ids[(ids >= 0) & (ids < size)]] = True
            found = mask.tobytes()
            masks.put(search, found)
        return 1 if isinstance(posting_id, int) and 0 <= posting_id < len(found) and found[posting_id] else 0

    return matches


def _index(datasette, database: str):
    return getattr(datasette.get_database(database), "facet_index", None)


def _in(column: str, subquery: str, matches: int, index, ratio: int) -> str:
    """``column in (subquery)``, written for checking every posting when the matches are many (more
    than one posting in ``ratio``)."""
    scan = index is not None and matches * ratio > index.postings
    return f"{'+' if scan else ''}{column} in ({subquery})"


def _datasettes_filters(request, datasette, database: str, table: str) -> tuple[list[str], dict]:
    """The where clauses and parameters of the page's column filters, as Datasette's table page
    writes them before the plugins' (views/table.py)."""
    pairs = [(key, value) for key in request.args if not (key.startswith("_") and "__" not in key)
             for value in request.args.getlist(key)]
    units = datasette.table_metadata(database, table).get("units", {})
    return Filters(sorted(pairs), units, ureg).build_where_clauses(table)


def _seeks(request, table: str, index, params: dict) -> list[str]:
    """For each equality on a column that the view computes (:data:`browse.queries.SHOWN_NULLS`: no index answers
    Datasette's clause) and that selects few postings (one in :data:`PAGE_SCAN_RATIO` or fewer), a clause that
    seeks them through the column's index: the page would otherwise walk the whole score index to find them
    (``jobcrawl_chosen`` on every entry: 0.35 s at 500,000 postings). Adds its parameters to ``params``."""
    seeks = []
    for i, (column, value) in enumerate(equalities(request, index.columns_of(table)) or []):
        shown = SHOWN_NULLS.get((table, column))
        if shown is None or index.column(table, column).equal(value).sum() * PAGE_SCAN_RATIO > index.postings:
            continue
        params[f"jobcrawl_{column}{i}"] = value
        seeks.append(f"id in ({queries.shown_subquery(column, value == shown, f'jobcrawl_{column}{i}')})")
    return seeks


def _in_score_order(request) -> bool:
    return request.args.get("_sort", SCORE) == SCORE and request.args.get("_sort_desc", SCORE) == SCORE


async def listing_filters(request, database: str, table: str, datasette) -> FilterArguments | None:
    """``?_search=`` and ``?_skill=`` (repeatable: every skill) on ``jobs`` and ``postings``, and on
    ``jobs`` the clauses that hide blocked and stale postings (browse/hiding.py). Without
    a current FacetIndex (the file changed since it was loaded) the matches are not counted: always the
    seeking form.

    When nothing else selects the page's rows, their count is known (:func:`own_ids`): it is kept as
    the result of the count query Datasette runs next (``ServedDatabase.remember_value``), which is
    then not run, and unless Datasette runs a facet of its own or streams every row, the clauses are
    written for the page's query alone (:data:`PAGE_SCAN_RATIO`, :func:`search_function`). Its
    clauses then start with ``jobcrawl_chosen`` (:func:`chosen_function`), and an equality on a column the
    view computes seeks its few postings (:func:`_seeks`)."""
    if table not in TABLES:
        return None
    index = _index(datasette, database)
    selects, params, described = [], {}, []  # (subquery, matches)
    hiding, hide_params, hide_described = hiding_clauses(await hidden(request, datasette)) if table in HIDING else ([], {}, [])
    search = request.args.get(SEARCH_PARAM, "")
    if search:
        matches = len(await search_ids(datasette, database, request, index)) if index is not None else 0
        selects.append((queries.SEARCH_SUBQUERY, matches))
        params["search"] = search
        described.append(f'search matches "{search}"')
    for i, skill in enumerate(s for s in request.args.getlist(SKILL_PARAM) if s):
        matches = len(index.holders(skill)) if index is not None else 0
        selects.append((queries.SKILL_SUBQUERY.format(param=f"skill{i}"), matches))
        params[f"skill{i}"] = skill
        described.append(f'skill is "{skill}"')
    db = datasette.get_database(database)
    ids = await own_ids(datasette, database, request) if hasattr(db, "remember_value") else None
    alone = ids is not None and _in_score_order(request) and not any(arg in request.args for arg in SHARED)
    ratio = PAGE_SCAN_RATIO if alone else SCAN_RATIO
    clauses = [_in("id", subquery, matches, index, ratio) for subquery, matches in selects]
    if alone and search and clauses[0].startswith("+"):  # the page reads along the score index
        clauses[0] = f"{SEARCH_FUNCTION}(:search, id)"
    clauses += hiding
    params.update(hide_params)
    described += hide_described
    if ids is not None:
        theirs, their_params = _datasettes_filters(request, datasette, database, table)
        if theirs or clauses:  # the page's query reads its own rows alone, and checks the other clauses on them alone
            clauses.insert(0, f"{CHOSEN_FUNCTION}(:{CHOSEN_PARAM}, id)")
            params[CHOSEN_PARAM] = request.scope[_CHOSEN]
        if index is not None:  # (own_ids may have found a facet index loaded since this request read none)
            clauses += _seeks(request, table, index, params)
        # Datasette's count query of this page (views/table.py: count_sql)
        db.remember_value(queries.count_sql(escape_sqlite(table), theirs + clauses), {**their_params, **params}, len(ids))
    return FilterArguments(clauses, params, described, {"supports_search": True, "search": search})


async def own_ids(datasette, database: str, request) -> np.ndarray | None:
    """The ids of the page's rows when nothing but ``_search``, ``_skill``, the listing's hiding
    (browse/hiding.py: the hidden rows as a mask, kept by the FacetIndex) and equality filters on the
    index's columns (``?city=上海``, ``?work_mode__exact=远程办公``: :func:`equalities`) select them, and
    the database has a current FacetIndex; None otherwise. Computed once per request."""
    if _OWN_IDS not in request.scope:
        request.scope[_OWN_IDS] = await _own_ids(datasette, database, request)
    return request.scope[_OWN_IDS]


def equalities(request, columns) -> list[tuple[str, str]] | None:
    """``(column, value)`` of every ``?column=value`` and ``?column__exact=value`` on ``columns`` (read
    as Datasette's Filters read them: ``"column" = :p``); None when an argument selects rows any other way."""
    found = []
    for key in request.args:
        if key in OWN_ARGS:
            continue
        column, _, lookup = key.rpartition("__") if "__" in key else (key, "", "exact")
        if lookup != "exact" or column not in columns:
            return None
        found += [(column, value) for value in request.args.getlist(key)]
    return found


async def _own_ids(datasette, database: str, request) -> np.ndarray | None:
    index = _index(datasette, database)
    table = request.url_vars.get("table")
    equal = equalities(request, index.columns_of(table)) if index is not None and table in TABLES else None
    if equal is None:
        return None
    chosen = index.present.copy()
    for column, value in equal:
        chosen &= index.column(table, column).equal(value)
    if table in HIDING:
        what = await hidden(request, datasette)
        if what["stale"] or what["blocked"] or what["rejected"]:
            key = (what["cutoff"] if what["stale"] else None, bool(what["blocked"]), bool(what["rejected"]))
            mask = index.hidden.get(key)
            if mask is None:
                mask = await datasette.get_database(database).execute_fn(
                    lambda conn: hidden_mask(conn, index.size, what))
                index.hidden.put(key, mask)
            chosen &= ~mask
    search = request.args.get(SEARCH_PARAM, "")
    if search:
        found = np.zeros_like(chosen)
        ids = await search_ids(datasette, database, request, index)
        found[ids[(ids >= 0) & (ids < len(found))]] = True
        chosen &= found
    skills = [s for s in request.args.getlist(SKILL_PARAM) if s]
    for skill in skills:
        found = np.zeros_like(chosen)
        found[index.holders(skill)] = True
        chosen &= found
    selection = repr((table, sorted(equal), request.scope.get(HIDDEN_KEY) if table in HIDING else None, search, skills))
    token = hashlib.blake2b(selection.encode(), digest_size=8).hexdigest()
    if index.chosen.get(token) is None:
        index.chosen.put(token, chosen.tobytes())
    request.scope[_CHOSEN] = token
    return np.flatnonzero(chosen)


def chosen_function(database):
    """``jobcrawl_chosen(token, id)``: 0 when posting ``id`` is not among the page's rows that
    :func:`own_ids` found (kept as ``token`` by the served ``database``'s facet index), else 1; 1 for
    any ``id`` when the index holds no such token (the SQL run again elsewhere: the page's other
    clauses decide alone).

    The page's rows are known in memory, but its query finds them again: along the score index, or
    the index of a column filter, reading each candidate's row to check the hiding clauses (in the
    file order of the scores: a random read each, from disk when the file is not in the page cache).
    SQLite checks a term that the index holds (``id``) before it reads the row, so with this term the
    page reads its own rows alone. Added by :func:`listing_filters` whenever :func:`own_ids` is known."""
    last: list = [None, None, None]  # index, token, the page's rows as bytes by id

    def chosen(token, posting_id):
        index = database.loaded_facet_index
        if index is not last[0] or token != last[1]:
            last[:] = index, token, (None if index is None else index.chosen.get(token))
        found = last[2]
        if found is None:
            return 1
        return 1 if isinstance(posting_id, int) and 0 <= posting_id < len(found) and found[posting_id] else 0

    return chosen
