"""Dedupe step: cluster reposts and cross-site copies, incrementally, keeping every record.

Identity levels (see ``normalize.dedupe``):
(a) the same source record (source + source id, or its canonical URL) is the same posting and was
    already updated in place by the writer;
(b) an exact content fingerprint (company, title, city, requirement and responsibility bullets)
    joins the fingerprint's cluster;
(c) a near-duplicate — MinHash/LSH candidates verified at estimated Jaccard ≥ 0.5 over character
    5-shingles of the bullets, with agreeing titles — joins the best match's cluster, flagged
    ``cross_company`` (another company: a staffing agency copy, never silently merged) or
    ``different_city`` (another opening of the same job).

Incremental: signatures are stored in ``dedupe_signatures``; a run rebuilds the LSH index from
them (seconds, no raw text) and adds only postings that have none or whose content changed. A
changed posting keeps its cluster (it is the same source record) and gets a fresh signature.
``rebuild=True`` recomputes everything from the stored postings.

Canonical member of a cluster: the most complete (non-empty company, title, city, text plus the
number of requirement and responsibility bullets), then the earliest first seen, then the
smallest id.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from itertools import groupby, islice
from operator import itemgetter
from typing import Iterator

import sqlite_utils

from normalize.dedupe import SIGNATURE_VERSION, Assignment, Clusterer, Record, choose_canonical, record_from_posting

BATCH = 1000
FLUSH_ROWS = 5000


def _meta_value(db: sqlite_utils.Database, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def _records(db: sqlite_utils.Database, ids: list[int]) -> Iterator[tuple[int, str, Record]]:
    """(posting id, content hash, dedupe record) for ``ids``, with their sections, in the given order."""
    conn = db.conn
    for i in range(0, len(ids), BATCH):
        part = ids[i : i + BATCH]
        q = ",".join("?" * len(part))
        rows = {r[0]: r for r in conn.execute(
            f"SELECT id, content_hash, company, title, city, description, first_seen FROM postings WHERE id IN ({q})", part)}
        sections: dict[int, dict[str, list[str]]] = defaultdict(dict)
        for pid, key, text in conn.execute(
                f"SELECT posting_id, key, text FROM sections WHERE posting_id IN ({q}) ORDER BY posting_id, seq", part):
            sections[pid].setdefault(key, []).append(text)
        for pid in part:
            _, chash, company, title, city, description, first_seen = rows[pid]
            record = record_from_posting({"key": str(pid), "company": company, "title": title, "city": city,
                                          "description": description, "sections": sections.get(pid, {}),
                                          "first_seen": first_seen})
            yield pid, chash, record


def _assigned(clusterer: Clusterer, records: Iterator[tuple[int, str, Record]]) -> Iterator[tuple[int, str, Record, Assignment]]:
    """``records`` with the assignment ``clusterer.add`` gives each, added ``BATCH`` at a time (``add_many``)."""
    while batch := list(islice(records, BATCH)):
        yield from ((*item, a) for item, a in zip(batch, clusterer.add_many(item[2] for item in batch)))


def dedupe(db: sqlite_utils.Database, *, rebuild: bool = False) -> dict[str, int]:
    """Cluster every posting not clustered yet (all of them with ``rebuild``). Returns counts:
    added, joined (b or c), new clusters, merged clusters, refreshed signatures, clusters, duplicates."""
    conn = db.conn
    if rebuild or _meta_value(db, "signature_version") != SIGNATURE_VERSION:
        with conn:
            for table in ("cluster_members", "clusters", "dedupe_signatures"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('signature_version', ?)", (SIGNATURE_VERSION,))

    new_ids = [r[0] for r in conn.execute(
        "SELECT id FROM postings WHERE id NOT IN (SELECT posting_id FROM dedupe_signatures) ORDER BY first_seen, id")]
    stale_ids = [r[0] for r in conn.execute(
        "SELECT p.id FROM postings p JOIN dedupe_signatures s ON s.posting_id = p.id "
        "WHERE s.content_hash IS NOT p.content_hash ORDER BY p.id")]
    counts: Counter[str] = Counter()
    if not new_ids and not stale_ids:  # nothing to cluster: no index to load (seconds and ~1.3 KB a posting)
        return _totals(conn, counts)
    with conn:
        touched = _cluster(db, new_ids, stale_ids, counts)
        # The clusterer is gone by now: its index (about 1.3 KB a posting) is not held while clusters are written.
        _write_clusters(db, sorted(touched))
    return _totals(conn, counts)


def _cluster(db: sqlite_utils.Database, new_ids: list[int], stale_ids: list[int], counts: Counter[str]) -> set[int]:
    """Cluster ``new_ids`` and refresh the signatures of ``stale_ids`` (inside the caller's transaction); counts
    into ``counts``; returns the clusters whose rows must be recomputed."""
    conn = db.conn
    capacity = conn.execute("SELECT count(*) FROM dedupe_signatures").fetchone()[0] + len(new_ids)
    stored = conn.execute(  # streamed: the clusterer keeps what it needs of each row
        "SELECT s.posting_id, s.signature, s.company, s.title, s.city, s.fingerprint, m.cluster_id "
        "FROM dedupe_signatures s JOIN cluster_members m USING (posting_id) ORDER BY s.posting_id"
    )
    clusterer = Clusterer.from_signatures(
        ((str(pid), sig, {"company": c, "title": t, "city": ci, "fingerprint": fp, "cluster_id": cid})
         for pid, sig, c, t, ci, fp, cid in stored),
        capacity=capacity,
    )
    touched: set[int] = set()
    sig_rows: list[tuple] = []
    member_rows: list[tuple] = []

    def flush() -> None:
        """Write the buffered rows (the step is one transaction; buffers only bound the memory)."""
        conn.executemany("INSERT OR REPLACE INTO dedupe_signatures (posting_id, content_hash, signature, company, title,"
                         " city, fingerprint) VALUES (?,?,?,?,?,?,?)", sig_rows)
        conn.executemany("INSERT OR REPLACE INTO cluster_members (posting_id, cluster_id, reason, similarity,"
                         " matched_posting_id, cross_company, different_city) VALUES (?,?,?,?,?,?,?)", member_rows)
        sig_rows.clear()
        member_rows.clear()

    for pid, chash, record, a in _assigned(clusterer, _records(db, new_ids)):
        meta = clusterer.meta(a.key)
        sig_rows.append((pid, chash, clusterer.signature_bytes(a.key), meta["company"], meta["title"],
                         meta["city"], meta["fingerprint"]))
        member_rows.append((pid, a.cluster_id, a.reason, round(a.similarity, 4),
                            int(a.matched_key) if a.matched_key else None, int(a.cross_company),
                            int(a.different_city)))
        counts["added"] += 1
        counts["joined" if a.reason != "new" else "new_clusters"] += 1
        touched.add(a.cluster_id)
        if a.merged:  # rows written so far move to the surviving cluster
            flush()
            q = ",".join("?" * len(a.merged))
            conn.execute(f"UPDATE cluster_members SET cluster_id = ? WHERE cluster_id IN ({q})", (a.cluster_id, *a.merged))
            conn.execute(f"DELETE FROM clusters WHERE id IN ({q})", a.merged)
            touched.difference_update(a.merged)
            counts["merged_clusters"] += len(a.merged)
        if len(sig_rows) >= FLUSH_ROWS:
            flush()
    if stale_ids:
        # Same source record with new content: keep its cluster, refresh what later matches compare with.
        refresh = Clusterer()
        for pid, chash, record, _ in _assigned(refresh, _records(db, stale_ids)):
            meta = refresh.meta(record.key)
            sig_rows.append((pid, chash, refresh.signature_bytes(record.key), meta["company"], meta["title"],
                             meta["city"], meta["fingerprint"]))
            counts["refreshed"] += 1
        for i in range(0, len(stale_ids), BATCH):
            part = stale_ids[i : i + BATCH]
            touched.update(r[0] for r in conn.execute(
                f"SELECT cluster_id FROM cluster_members WHERE posting_id IN ({','.join('?' * len(part))})", part))
    flush()
    return touched


def _totals(conn, counts: Counter[str]) -> dict[str, int]:
    """``counts`` with the database's totals: clusters and duplicates."""
    counts["clusters"] = conn.execute("SELECT count(*) FROM clusters").fetchone()[0]
    counts["duplicates"] = conn.execute("SELECT count(*) FROM cluster_members WHERE reason != 'new'").fetchone()[0]
    return dict(counts)


def dedupe_at(path: str, *, rebuild: bool = False) -> dict[str, int]:
    """:func:`dedupe` on the database file at ``path``, which a run has opened (migrated) already (for a fresh
    process, see ``crawler.runner.after_run``)."""
    from crawler.db import connect

    database = connect(path)
    try:
        return dedupe(database, rebuild=rebuild)
    finally:
        database.close()


def _write_clusters(db: sqlite_utils.Database, cluster_ids: list[int]) -> None:
    """Recompute the ``clusters`` rows of ``cluster_ids`` from their members.

    Members are read as small tuples, ordered by cluster, one cluster at a time (the largest cluster bounds
    the memory, not the batch): choose_canonical needs only whether a posting has text, not the text."""
    conn = db.conn
    for i in range(0, len(cluster_ids), BATCH):
        part = cluster_ids[i : i + BATCH]
        q = ",".join("?" * len(part))
        members = conn.execute(
            "SELECT m.cluster_id, m.posting_id, m.reason, m.cross_company, p.company, p.title, p.city,"
            " p.first_seen, p.last_seen, p.locator || char(31) || printf('%012d', p.position) || char(31) || p.key,"
            " (SELECT count(*) FROM sections s WHERE s.posting_id = p.id AND s.key IN ('requirements', 'responsibilities')),"
            " coalesce(p.description, '') != '' OR EXISTS (SELECT 1 FROM sections s WHERE s.posting_id = p.id)"
            " FROM cluster_members m JOIN postings p ON p.id = m.posting_id"
            f" WHERE m.cluster_id IN ({q}) ORDER BY m.cluster_id", part,
        )
        found: set[int] = set()
        rows = []
        for cid, group in groupby(members, key=itemgetter(0)):
            found.add(cid)
            group = list(group)
            # choose_canonical reads completeness from these fields; the bullet texts themselves are not needed.
            # Ties go to the first in input order (locator, position), not the smallest id: ids follow the
            # order in which worker processes delivered their postings, which differs from run to run.
            canonical = choose_canonical(
                {"key": key, "company": company, "title": title, "city": city,
                 "text": "…" if has_text else None, "requirements": [""] * bullets,
                 "first_seen": first_seen, "posting_id": pid}
                for _, pid, _, _, company, title, city, first_seen, _, key, bullets, has_text in group
            )
            rows.append((
                cid, canonical["posting_id"], len(group),
                len({m[4] for m in group}), len({m[6] for m in group if m[6]}),
                json.dumps(dict(sorted(Counter(m[2] for m in group).items()))),
                int(any(m[3] for m in group)),
                min(m[7] for m in group), max(m[8] for m in group),
            ))
        gone = [cid for cid in part if cid not in found]
        if gone:
            conn.execute(f"DELETE FROM clusters WHERE id IN ({','.join('?' * len(gone))})", gone)
        conn.executemany("INSERT OR REPLACE INTO clusters (id, canonical_posting_id, size, companies, cities, reasons,"
                         " cross_company, first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?)", rows)
