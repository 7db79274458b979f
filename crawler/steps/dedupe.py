"""Dedupe step: cluster reposts, cross-site copies and list cards of one job, incrementally, keeping every record.

The rules are :mod:`normalize.dedupe`'s (reasons ``same_url``, ``same_content``, ``near_duplicate``,
``cross_company_copy``, ``same_identity``; no chaining). The SQL is :mod:`crawler.db.dedupe`'s. The step is the
first to meet each new posting after its run: it records the run that first saw it (``first_run_id``). A run:

1. keys: every posting's :class:`~normalize.dedupe.DedupeKey` is stored in ``dedupe_signatures`` (by the
   item pipeline, or here for postings that lack one or whose content changed since);
2. boilerplate: the shingles of JD text found under more than a small share of companies, measured on up to
   ``DF_SAMPLE`` postings with JD text, stored, and measured again when the companies with JD text have grown
   by a quarter since (or with ``rebuild``);
3. clusters: the clusterer is rebuilt from the stored keys of the clustered postings (no raw text) and the
   unclustered ones are added in first-seen order. A changed posting keeps its cluster (it is the same source
   record) with its fresh key.

``rebuild=True``, or keys of another ``SIGNATURE_VERSION`` (rules changed), recomputes everything: that is how
clusters made by older rules move to the current ones.
"""

from __future__ import annotations

from collections import Counter

import sqlite_utils

from crawler.db import dedupe as store
from normalize.dedupe import SIGNATURE_VERSION, Clusterer, CommonShingles, common_shingles, posting_signatures, \
    record_from_posting

BATCH = 1000
FLUSH_ROWS = 5000
DF_SAMPLE = 5000
"""Postings with JD text the boilerplate is measured on at most (a fixed sample by posting key)."""
DF_GROWTH = 1.25
"""The boilerplate is measured again once the companies with JD text number this many times as many as then."""


def dedupe(db: sqlite_utils.Database, *, rebuild: bool = False) -> dict[str, int]:
    """Cluster every posting not clustered yet (all of them with ``rebuild``), in one transaction. Returns
    counts: keys (computed here), added, joined, new_clusters, merged_clusters (clusters of list cards moved
    into the cluster of their posting), refreshed (changed postings), boilerplate (shingles, when measured),
    clusters, duplicates."""
    conn = db.conn
    counts: Counter[str] = Counter()
    with conn:
        store.stamp_first_runs(conn)
        if rebuild or store.meta_value(conn, "signature_version") != SIGNATURE_VERSION:
            store.reset(conn, SIGNATURE_VERSION)
        refreshed = _refresh_keys(conn, counts)
        pending = store.unclustered(conn)
        if pending or refreshed:  # else no index to load (seconds and ~1.3 KB a posting)
            common = _boilerplate(conn, counts, measure=rebuild)
            touched = _cluster(conn, pending, common, counts)
            touched |= store.clusters_of(conn, refreshed)
            store.write_clusters(conn, sorted(touched))
    return {**counts, **store.totals(conn)}


def dedupe_at(path: str, *, rebuild: bool = False) -> dict[str, int]:
    """:func:`dedupe` on the database file at ``path``, which a run has opened (migrated) already (for a fresh
    process, see ``crawler.runner.after_run``)."""
    from crawler.db import connect

    database = connect(path)
    try:
        return dedupe(database, rebuild=rebuild)
    finally:
        database.close()


def _refresh_keys(conn, counts: Counter[str]) -> list[int]:
    """Compute and store the keys of postings without one or with one of other content; returns those of them
    already clustered (their clusters' rows must be recomputed)."""
    missing, stale = store.ids_needing_keys(conn)
    for part in store._chunks(missing + stale):
        rows = list(store.postings(conn, part))
        keys = posting_signatures(posting for _, _, posting in rows)
        store.store_keys(conn, (store.key_row(pid, chash, key) for (pid, chash, _), key in zip(rows, keys)))
        counts["keys"] += len(rows)
    counts["refreshed"] = len(stale)
    return stale


def _boilerplate(conn, counts: Counter[str], *, measure: bool) -> CommonShingles:
    """The stored boilerplate, measured again first when there is none or the corpus has grown (see the module)."""
    companies = store.jd_companies(conn)
    stored = None if measure else store.load_common(conn)
    if stored is not None and companies < DF_GROWTH * stored[1]:
        return stored[0]
    sample = store.jd_sample(conn, DF_SAMPLE)
    common = common_shingles(record_from_posting(posting) for _, _, posting in store.postings(conn, sample))
    store.store_common(conn, common, companies)
    counts["boilerplate"] = len(common)
    return common


def _cluster(conn, pending: list[int], common: CommonShingles, counts: Counter[str]) -> set[int]:
    """Add ``pending`` to the clusters of the stored ones; counts into ``counts``; returns the clusters whose rows
    must be recomputed."""
    clusterer = Clusterer.from_stored(store.clustered(conn), capacity=store.clustered_count(conn) + len(pending),
                                      common=common)
    touched: set[int] = set()
    rows: list[tuple] = []
    for part in store._chunks(pending, BATCH):
        items = store.keys(conn, part)
        for (pid, *_), a in zip(items, clusterer.add_keys((str(pid), *rest) for pid, *rest in items)):
            rows.append((pid, a.cluster_id, a.reason, round(a.similarity, 4),
                         int(a.matched_key) if a.matched_key else None, int(a.cross_company), int(a.different_city)))
            counts["added"] += 1
            counts["joined" if a.reason != "new" else "new_clusters"] += 1
            touched.add(a.cluster_id)
            if a.absorbed:  # rows written so far move to the surviving cluster
                store.write_members(conn, rows)
                rows.clear()
                store.move_members(conn, a.cluster_id, a.absorbed)
                touched.difference_update(a.absorbed)
                counts["merged_clusters"] += len(a.absorbed)
        if len(rows) >= FLUSH_ROWS:
            store.write_members(conn, rows)
            rows.clear()
    store.write_members(conn, rows)
    return touched
