"""Dedupe step: cluster reposts, cross-site copies and list cards of one job, incrementally, keeping every record.

The rules are :mod:`normalize.dedupe`'s (reasons ``same_url``, ``same_content``, ``near_duplicate``,
``cross_company_copy``, ``same_identity``; no chaining). The SQL is :mod:`crawler.store.dedupe`'s. The step is the
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
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from crawler.store import dedupe as store
from normalize.dedupe import REASONS, SIGNATURE_VERSION, Clusterer, CommonShingles, common_shingles, \
    posting_signatures, record_from_posting

if TYPE_CHECKING:
    import sqlite_utils

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
        if pending or refreshed:  # else no index to load (seconds, memory in proportion to the corpus)
            writes = _Writes(conn)
            common = _boilerplate(conn, counts, writes, measure=rebuild)
            touched = _cluster(conn, pending, common, counts, writes)
            touched |= store.clusters_of(conn, refreshed)
            store.write_clusters(conn, sorted(touched))
    return {**counts, **store.totals(conn)}


def dedupe_at(path: str, *, rebuild: bool = False) -> dict[str, int]:
    """:func:`dedupe` on the database file at ``path``, which a run has opened (migrated) already (for a fresh
    process, see ``crawler.run.steps.after_run``)."""
    return _on_file(path, lambda db: dedupe(db, rebuild=rebuild))


def _on_file(path: str, work):
    """``work(database)`` on a connection of its own to the file at ``path``, closed after."""
    from crawler.store import connect

    database = connect(path)
    try:
        return work(database)
    finally:
        database.close()


@dataclass(frozen=True)
class Plan:
    """The writes of a dedupe step, worked out from reads alone by :func:`plan`; :func:`apply` makes them."""

    pending: tuple[int, int]
    """The unclustered postings it was made for: how many, and the largest id (checked by :func:`apply`)."""
    ops: list[tuple]
    """``("common", boilerplate, companies)``, ``("packed_members", rows)``, ``("move", survivor, absorbed)``:
    calls of :class:`_Writes`, in order."""
    touched: list[int]
    """The clusters whose rows are recomputed."""
    counts: dict[str, int]


def plannable(conn) -> bool:
    """Whether the step's work can be planned from reads (:func:`plan`): every posting has its key, made from its
    current content under the current rules (the item pipeline makes them), and the run that first saw it."""
    if store.meta_value(conn, "signature_version") != SIGNATURE_VERSION or store.unstamped(conn):
        return False
    missing, stale = store.ids_needing_keys(conn)
    return not missing and not stale


def plan(conn) -> Plan | None:
    """What :func:`dedupe` would write, worked out without writing, so that another step can hold the write lock
    meanwhile; None when the step is not :func:`plannable` (it must make keys first: :func:`dedupe` does it)."""
    if not plannable(conn):
        return None
    counts: Counter[str] = Counter(refreshed=0)
    pending = store.unclustered(conn)
    writes = _Recorded()
    touched: set[int] = set()
    if pending:
        common = _boilerplate(conn, counts, writes, measure=False)
        touched = _cluster(conn, pending, common, counts, writes)
    return Plan((len(pending), max(pending, default=0)), writes.ops, sorted(touched), dict(counts))


def plan_at(path: str) -> Plan | None:
    """:func:`plan` on a read-only connection to the database file at ``path`` (in a fresh process, see
    ``crawler.run.steps.after_run``: it imports neither sqlite_utils nor the models)."""
    from crawler.store import connect_readonly

    conn = connect_readonly(path)
    try:
        return plan(conn)
    finally:
        conn.close()


def apply(conn, planned: Plan) -> dict[str, int] | None:
    """Make ``planned``'s writes in the caller's transaction on ``conn``; returns the counts :func:`dedupe` returns,
    or None, writing nothing, when the unclustered postings are no longer those it was planned for."""
    pending = store.unclustered(conn)
    if (len(pending), max(pending, default=0)) != planned.pending:
        return None
    store.stamp_first_runs(conn)
    writes = _Writes(conn)
    for op, *args in planned.ops:
        getattr(writes, op)(*args)
    store.write_clusters(conn, planned.touched)
    return {**planned.counts, **store.totals(conn)}


class _Writes:
    """The step's writes, made on ``conn`` as they come."""

    def __init__(self, conn):
        self.conn = conn

    def common(self, common: CommonShingles, companies: int) -> None:
        store.store_common(self.conn, common, companies)

    def members(self, rows: list[tuple]) -> None:
        store.write_members(self.conn, rows)

    def packed_members(self, packed: np.ndarray) -> None:
        self.members(_member_rows(packed))

    def move(self, survivor: int, absorbed) -> None:
        store.move_members(self.conn, survivor, absorbed)


class _Recorded(_Writes):
    """The step's writes kept in order (:attr:`Plan.ops`)."""

    def __init__(self):
        super().__init__(None)
        self.ops: list[tuple] = []

    def common(self, common: CommonShingles, companies: int) -> None:
        self.ops.append(("common", common, companies))

    def members(self, rows: list[tuple]) -> None:
        if rows:  # packed: 27 bytes a row instead of a tuple's ~150 (the plan of 100k postings stays small)
            self.ops.append(("packed_members", np.array(
                [(pid, cid, REASONS.index(reason), sim, -1 if matched is None else matched, cross, city)
                 for pid, cid, reason, sim, matched, cross, city in rows], dtype=_MEMBER)))

    def move(self, survivor: int, absorbed) -> None:
        self.ops.append(("move", survivor, tuple(absorbed)))


_MEMBER = np.dtype([("posting", "i8"), ("cluster", "i8"), ("reason", "u1"), ("similarity", "f8"), ("matched", "i8"),
                    ("cross_company", "u1"), ("different_city", "u1")])


def _member_rows(packed: np.ndarray) -> list[tuple]:
    """The ``cluster_members`` rows packed by :meth:`_Recorded.members`, as they were handed to it."""
    return [(pid, cid, REASONS[reason], sim, None if matched < 0 else matched, cross, city)
            for pid, cid, reason, sim, matched, cross, city in packed.tolist()]


def _refresh_keys(conn, counts: Counter[str]) -> list[int]:
    """Compute and store the keys of postings without one or with one of other content; returns those of them
    already clustered (their clusters' rows must be recomputed)."""
    missing, stale = store.ids_needing_keys(conn)
    for part in store._chunks(missing + stale):
        rows = list(store.postings(conn, part))
        keys = posting_signatures(posting for _, _, posting in rows)
        store.store_keys(conn, (store.key_row(pid, version, key) for (pid, version, _), key in zip(rows, keys)))
        counts["keys"] += len(rows)
    counts["refreshed"] = len(stale)
    return stale


def _boilerplate(conn, counts: Counter[str], writes: _Writes, *, measure: bool) -> CommonShingles:
    """The stored boilerplate, measured again first when there is none or the corpus has grown (see the module)."""
    companies = store.jd_companies(conn)
    stored = None if measure else store.load_common(conn)
    if stored is not None and companies < DF_GROWTH * stored[1]:
        return stored[0]
    sample = store.jd_sample(conn, DF_SAMPLE)
    common = common_shingles(record_from_posting(posting) for _, _, posting in store.postings(conn, sample))
    writes.common(common, companies)
    counts["boilerplate"] = len(common)
    return common


def _cluster(conn, pending: list[int], common: CommonShingles, counts: Counter[str], writes: _Writes) -> set[int]:
    """Add ``pending`` to the clusters of the stored ones; counts into ``counts``; returns the clusters whose rows
    must be recomputed."""
    ids = np.fromiter(store.corpus_order(conn), dtype=np.int64)
    place = np.empty(int(ids.max(initial=0)) + 1, dtype=np.int32)
    place[ids] = np.arange(len(ids), dtype=np.int32)
    # A posting's place in the corpus order is its canonical rank's tie-break: it comes after the run that first
    # saw it, so that first_seen (None) adds nothing. An int a posting instead of its place's text: megabytes.
    stored = ((str(pid), key, cluster_id, None, int(place[pid])) for pid, key, cluster_id in store.clustered(conn))
    clusterer = Clusterer.from_stored(stored, capacity=store.clustered_count(conn) + len(pending), common=common)
    touched: set[int] = set()
    rows: list[tuple] = []
    for part in store._chunks(pending, BATCH):
        items = store.keys(conn, part)
        for (pid, _), a in zip(items, clusterer.add_keys((str(pid), key, None, int(place[pid])) for pid, key in items)):
            rows.append((pid, a.cluster_id, a.reason, round(a.similarity, 4),
                         int(a.matched_key) if a.matched_key else None, int(a.cross_company), int(a.different_city)))
            counts["added"] += 1
            counts["joined" if a.reason != "new" else "new_clusters"] += 1
            touched.add(a.cluster_id)
            if a.absorbed:  # rows written so far move to the surviving cluster
                writes.members(rows)
                rows.clear()
                writes.move(a.cluster_id, a.absorbed)
                touched.difference_update(a.absorbed)
                counts["merged_clusters"] += len(a.absorbed)
        if len(rows) >= FLUSH_ROWS:
            writes.members(rows)
            rows.clear()
    writes.members(rows)
    return touched
