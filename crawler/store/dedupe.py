"""SQL of the dedupe step: stored dedupe keys (``dedupe_signatures``), clusters and their members, and the
corpus's boilerplate shingles (``dedupe_common_shingles``).

A clustered posting's cluster is ``dedupe_signatures.cluster_id``. ``clusters`` and ``cluster_members`` have rows
only for clusters of two or more members: a posting alone in its cluster reads as :data:`ALONE` (the member row
it would have), and gets that row once another posting joins it (:func:`write_clusters`).

Imports neither the schema module nor the pydantic models: the dedupe step may run in a process of its own.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np

from normalize.dedupe import SIGNATURE_VERSION, CommonShingles, DedupeKey, choose_canonical, count_companies

from crawler.store.sections import stored_bullets

BATCH = 1000
KEY_COLUMNS = ("posting_id", "posting_version", "signature", "company", "title", "city", "fingerprint", "identity",
               "url", "has_jd", "completeness")
"""Columns of ``dedupe_signatures``, in the order of :func:`key_row`. ``posting_version``: the version of the posting
the key was made from; ``fingerprint`` and ``identity`` as 16-byte blobs; ``url`` NULL where it is the posting's."""
_INSERT_KEY = (f"INSERT INTO dedupe_signatures ({', '.join(KEY_COLUMNS)}) VALUES ("
               + ", ".join(f"nullif(?{i}, (SELECT url FROM postings WHERE id = ?1))" if c == "url" else f"?{i}"
                           for i, c in enumerate(KEY_COLUMNS, 1))
               + f") ON CONFLICT (posting_id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in KEY_COLUMNS[1:])}")
"""A key replaces the stored one and keeps its posting's cluster."""
ALONE = ("new", 1.0, None, 0, 0)
"""The member row's reason, similarity, matched posting, cross company and different city of a posting alone in its
cluster (the first member of every cluster has these)."""
_KEY_FIELDS = ("s.signature, s.company, s.title, s.city, s.fingerprint, s.identity, coalesce(s.url, p.url), s.has_jd,"
               " s.completeness")
_KEYS = "dedupe_signatures s JOIN postings p ON p.id = s.posting_id"
"""The stored keys with their postings (whose url a key's NULL url is)."""
_ORDER = "p.locator || char(31) || printf('%012d', p.position) || char(31) || p.key"
"""A posting's place in its input: the same from run to run, unlike its row id (worker processes deliver
postings in an order of their own)."""
_SEEN = "printf('%012d', coalesce(p.first_run_id, 0))"
"""When a posting was first seen, for choosing canonical members: the run that first saw it (first_seen is the
time a page was fetched, which differs with the order in which a run fetched its pages)."""


def _chunks(ids: list[int], size: int = BATCH) -> Iterator[list[int]]:
    for i in range(0, len(ids), size):
        yield ids[i : i + size]


def _marks(values: list) -> str:
    return ",".join("?" * len(values))


# --------------------------------------------------------------------------- meta


def meta_value(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def reset(conn: sqlite3.Connection, version: str) -> None:
    """Forget every key, cluster, member and the boilerplate; record the key ``version`` they will be made with."""
    for table in ("cluster_members", "clusters", "dedupe_signatures", "dedupe_common_shingles"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute("DELETE FROM meta WHERE key = 'common_shingles'")
    set_meta(conn, "signature_version", version)


# --------------------------------------------------------------------------- first run


def unstamped(conn: sqlite3.Connection) -> int:
    """Postings no run is recorded as having first seen (:func:`stamp_first_runs` gives them one)."""
    return conn.execute("SELECT count(*) FROM postings WHERE first_run_id IS NULL").fetchone()[0]


def stamp_first_runs(conn: sqlite3.Connection) -> int:
    """Give postings that no run is recorded as having first seen the latest ingest or crawl run (the one that
    stored them: the dedupe step runs at the end of each). Returns how many."""
    return conn.execute("UPDATE postings SET first_run_id = (SELECT max(id) FROM runs WHERE kind IN ('ingest', 'crawl'))"
                        " WHERE first_run_id IS NULL").rowcount


# --------------------------------------------------------------------------- keys


def key_row(posting_id: int, version: int, key: DedupeKey) -> tuple:
    """A posting's :class:`DedupeKey`, made from its ``version``, as a ``dedupe_signatures`` row."""
    return (posting_id, version, *key_values(key))


def key_values(key: DedupeKey) -> tuple:
    """The columns of a :func:`key_row` after ``posting_id`` and ``posting_version`` (what the store stage sends)."""
    return (key.signature or None, key.company, key.title, key.city, bytes.fromhex(key.fingerprint) or None,
            bytes.fromhex(key.identity) or None, key.url, int(key.has_jd), key.completeness)


def store_keys(conn: sqlite3.Connection, rows: Iterable[tuple]) -> None:
    """Insert or replace :func:`key_row` rows, made by this code (keys of ``SIGNATURE_VERSION``); a posting keeps
    its cluster.

    The first keys stored in a database no dedupe step has run on record that version, so that its first
    step keeps them (the item pipeline made them in the worker processes) instead of making them again."""
    conn.execute(_CLAIM_VERSION, (SIGNATURE_VERSION,))
    conn.executemany(_INSERT_KEY, rows)


_CLAIM_VERSION = ("INSERT INTO meta (key, value) SELECT 'signature_version', ?"
                  " WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'signature_version')"
                  " AND NOT EXISTS (SELECT 1 FROM dedupe_signatures)")


def ids_needing_keys(conn: sqlite3.Connection) -> tuple[list[int], list[int]]:
    """Postings without a stored key, in first-seen order, and postings whose key was made from another version."""
    missing = [r[0] for r in conn.execute(
        "SELECT id FROM postings WHERE id NOT IN (SELECT posting_id FROM dedupe_signatures) ORDER BY first_seen, id")]
    stale = [r[0] for r in conn.execute(
        "SELECT p.id FROM postings p JOIN dedupe_signatures s ON s.posting_id = p.id "
        "WHERE s.posting_version IS NOT p.version ORDER BY p.id")]
    return missing, stale


def postings(conn: sqlite3.Connection, ids: list[int]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(id, version, posting) for ``ids`` in the given order: the fields a dedupe key is made of (salary nested,
    sections by key)."""
    for part in _chunks(ids):
        q = _marks(part)
        rows = {r[0]: r for r in conn.execute(
            "SELECT id, version, company, title, city, description, first_seen, url, salary_raw,"
            f" salary_monthly_min, salary_monthly_max, salary_currency, salary_months FROM postings WHERE id IN ({q})",
            part)}
        sections = stored_bullets(conn, f"posting_id IN ({q})", part)
        for pid in part:
            if pid not in rows:
                continue
            _, version, company, title, city, description, first_seen, url, raw, low, high, currency, months = rows[pid]
            yield pid, version, {
                "key": str(pid), "company": company, "title": title, "city": city, "description": description,
                "first_seen": first_seen, "url": url, "sections": sections.get(pid, {}),
                "salary": {"raw": raw, "monthly_min": low, "monthly_max": high, "currency": currency, "months": months},
            }


def _key(row: tuple) -> DedupeKey:
    signature, company, title, city, fingerprint, identity, url, has_jd, completeness = row
    return DedupeKey(company or "", title or "", city or "", fingerprint.hex() if fingerprint else "",
                     identity.hex() if identity else "", url or "",
                     bool(has_jd), completeness or 0, signature or b"")


def unclustered(conn: sqlite3.Connection) -> list[int]:
    """Postings with a key and no cluster yet, by the run that first saw them, then their place in their input:
    the same order however the run's worker processes delivered them (first_seen is a fetch time, and ids follow
    the delivery)."""
    return [r[0] for r in conn.execute(
        "SELECT s.posting_id FROM dedupe_signatures s JOIN postings p ON p.id = s.posting_id"
        f" WHERE s.cluster_id IS NULL ORDER BY p.first_run_id, {_ORDER}")]


def corpus_order(conn: sqlite3.Connection) -> Iterator[int]:
    """The ids of the postings with a key by the run that first saw them, then their place in their input: the
    order in which equally complete members become a cluster's canonical one (:func:`write_clusters`'s)."""
    for row in conn.execute(f"SELECT s.posting_id FROM dedupe_signatures s JOIN postings p ON p.id = s.posting_id"
                            f" ORDER BY {_SEEN}, {_ORDER}"):
        yield row[0]


def keys(conn: sqlite3.Connection, ids: list[int]) -> list[tuple[int, DedupeKey]]:
    """(posting id, stored key) of ``ids``, in the given order."""
    q = _marks(ids)
    found = {r[0]: (r[0], _key(r[1:])) for r in conn.execute(
        f"SELECT s.posting_id, {_KEY_FIELDS} FROM {_KEYS} WHERE s.posting_id IN ({q})", ids)}
    return [found[i] for i in ids if i in found]


def clustered_count(conn: sqlite3.Connection) -> int:
    return conn.execute("SELECT count(cluster_id) FROM dedupe_signatures").fetchone()[0]


def clustered(conn: sqlite3.Connection) -> Iterator[tuple[int, DedupeKey, int]]:
    """Every clustered posting as ``(id, key, cluster id)``, streamed in id order."""
    for row in conn.execute(
            f"SELECT s.posting_id, s.cluster_id, {_KEY_FIELDS} FROM {_KEYS}"
            " WHERE s.cluster_id IS NOT NULL ORDER BY s.posting_id"):
        yield row[0], _key(row[2:]), row[1]


# --------------------------------------------------------------------------- members and clusters


def write_members(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Record the clusters of members (posting, cluster, reason, similarity, matched posting, cross company,
    different city): every posting's cluster; the ``cluster_members`` rows of those that joined another posting
    (a new one's row, :data:`ALONE`, is written once its cluster has another member: :func:`write_clusters`)."""
    conn.executemany("UPDATE dedupe_signatures SET cluster_id = ? WHERE posting_id = ?", ((r[1], r[0]) for r in rows))
    conn.executemany(_INSERT_MEMBER, [r for r in rows if r[2:] != ALONE])


_INSERT_MEMBER = ("INSERT OR REPLACE INTO cluster_members (posting_id, cluster_id, reason, similarity, matched_posting_id,"
                  " cross_company, different_city) VALUES (?,?,?,?,?,?,?)")


def move_members(conn: sqlite3.Connection, survivor: int, absorbed: Iterable[int]) -> None:
    """Move the members of the ``absorbed`` clusters into ``survivor``; their cluster rows go."""
    absorbed = list(absorbed)
    q = _marks(absorbed)
    conn.execute(f"UPDATE dedupe_signatures SET cluster_id = ? WHERE cluster_id IN ({q})", (survivor, *absorbed))
    conn.execute(f"UPDATE cluster_members SET cluster_id = ? WHERE cluster_id IN ({q})", (survivor, *absorbed))
    conn.execute(f"DELETE FROM clusters WHERE id IN ({q})", absorbed)


def clusters_of(conn: sqlite3.Connection, ids: list[int]) -> set[int]:
    """The clusters of the postings ``ids``."""
    out: set[int] = set()
    for part in _chunks(ids):
        out.update(r[0] for r in conn.execute(
            f"SELECT cluster_id FROM dedupe_signatures WHERE posting_id IN ({_marks(part)}) AND cluster_id IS NOT NULL",
            part))
    return out


def write_clusters(conn: sqlite3.Connection, cluster_ids: list[int]) -> None:
    """Give the members of ``cluster_ids`` without a ``cluster_members`` row theirs (:data:`ALONE`) where the cluster
    has two or more members, and recompute the ``clusters`` rows of those clusters from their members: canonical member
    (``choose_canonical`` on the stored completeness and the run that first saw it), size, companies (normalized names, counted by
    ``count_companies``: 华为 and 华为技术有限公司 are one, and so are 天力物业 and 天力物业发展), cities, reasons.

    Members are read as small tuples, one cluster at a time (the largest cluster bounds the memory)."""
    for part in _chunks(cluster_ids):
        q = _marks(part)
        conn.execute("INSERT OR IGNORE INTO cluster_members (posting_id, cluster_id, reason, similarity, matched_posting_id,"
                     " cross_company, different_city) SELECT posting_id, cluster_id, ?, ?, ?, ?, ? FROM dedupe_signatures"
                     f" WHERE cluster_id IN (SELECT cluster_id FROM dedupe_signatures WHERE cluster_id IN ({q})"
                     " GROUP BY cluster_id HAVING count(*) > 1)", (*ALONE, *part))
        members = conn.execute(
            "SELECT m.cluster_id, m.posting_id, m.reason, m.cross_company, coalesce(s.company, p.company), p.city,"
            f" p.first_seen, p.last_seen, s.completeness, {_ORDER}, {_SEEN} FROM cluster_members m"
            " JOIN postings p ON p.id = m.posting_id"
            " LEFT JOIN dedupe_signatures s ON s.posting_id = m.posting_id"
            f" WHERE m.cluster_id IN ({q}) ORDER BY m.cluster_id", part)
        found: set[int] = set()
        rows = []
        for cid, group in groupby(members, key=itemgetter(0)):
            found.add(cid)
            group = list(group)
            canonical = choose_canonical({"key": m[9], "completeness": m[8] or 0, "first_seen": m[10], "posting_id": m[1]}
                                         for m in group)
            rows.append((
                cid, canonical["posting_id"], len(group), count_companies(m[4] for m in group),
                len({m[5] for m in group if m[5]}), json.dumps(dict(sorted(Counter(m[2] for m in group).items()))),
                int(any(m[3] for m in group)), min(m[6] for m in group), max(m[7] for m in group),
            ))
        gone = [cid for cid in part if cid not in found]
        if gone:
            conn.execute(f"DELETE FROM clusters WHERE id IN ({_marks(gone)})", gone)
        conn.executemany("INSERT OR REPLACE INTO clusters (id, canonical_posting_id, size, companies, cities, reasons,"
                         " cross_company, first_seen, last_seen) VALUES (?,?,?,?,?,?,?,?,?)", rows)


def totals(conn: sqlite3.Connection) -> dict[str, int]:
    """Clusters (of any size) and duplicates (members that are not the first of their cluster) in the database."""
    return {"clusters": conn.execute("SELECT count(DISTINCT cluster_id) FROM dedupe_signatures").fetchone()[0],
            "duplicates": conn.execute("SELECT count(*) FROM cluster_members WHERE reason != 'new'").fetchone()[0]}


# --------------------------------------------------------------------------- boilerplate


def jd_companies(conn: sqlite3.Connection) -> int:
    """Companies with at least one posting with JD text."""
    return conn.execute("SELECT count(DISTINCT company) FROM dedupe_signatures WHERE has_jd AND company != ''"
                        ).fetchone()[0]


def load_common(conn: sqlite3.Connection) -> tuple[CommonShingles, int] | None:
    """The stored boilerplate and the number of companies with JD text when it was measured; None if never."""
    stored = meta_value(conn, "common_shingles")
    if stored is None:
        return None
    info = json.loads(stored)
    hashes = np.fromiter((r[0] for r in conn.execute("SELECT hash FROM dedupe_common_shingles")), dtype=np.uint32)
    return CommonShingles(hashes, info["sample_companies"]), info["companies"]


def store_common(conn: sqlite3.Connection, common: CommonShingles, companies: int) -> None:
    """Replace the stored boilerplate; ``companies``: companies with JD text in the whole database."""
    conn.execute("DELETE FROM dedupe_common_shingles")
    conn.executemany("INSERT INTO dedupe_common_shingles (hash) VALUES (?)", ((int(h),) for h in common.hashes))
    set_meta(conn, "common_shingles", json.dumps({"companies": companies, "sample_companies": common.companies}))


def jd_sample(conn: sqlite3.Connection, limit: int) -> list[int]:
    """Up to ``limit`` postings with JD text and a company: a fixed pseudo-random sample (by posting key, a hash)."""
    return [r[0] for r in conn.execute(
        "SELECT p.id FROM dedupe_signatures s JOIN postings p ON p.id = s.posting_id"
        " WHERE s.has_jd AND s.company != '' ORDER BY p.key LIMIT ?", (limit,))]


# --------------------------------------------------------------------------- reports


def largest_clusters(conn: sqlite3.Connection, top: int) -> list[tuple[int, int, int, int, str]]:
    """The ``top`` largest clusters of two or more members as (id, size, companies, cities, reasons JSON), largest
    first."""
    return conn.execute("SELECT id, size, companies, cities, reasons FROM clusters"
                        " ORDER BY size DESC, companies DESC, id LIMIT ?", (top,)).fetchall()


def wide_cluster_members(conn: sqlite3.Connection, companies: int = 2) -> dict[int, list[tuple[int, str, bytes, float]]]:
    """Cluster id → its members as (posting id, normalized company, JD signature, similarity), for the clusters
    spanning more than ``companies`` companies (as ``clusters.companies`` counts them)."""
    out: dict[int, list[tuple[int, str, bytes, float]]] = defaultdict(list)
    for cid, pid, company, signature, similarity in conn.execute(
            "SELECT m.cluster_id, m.posting_id, coalesce(s.company, ''), s.signature, m.similarity"
            " FROM clusters c JOIN cluster_members m ON m.cluster_id = c.id"
            " LEFT JOIN dedupe_signatures s ON s.posting_id = m.posting_id"
            " WHERE c.companies > ? ORDER BY m.cluster_id, m.posting_id", (companies,)):
        out[cid].append((pid, company, signature or b"", similarity))
    return dict(out)


def lowest_cross_company_similarity(conn: sqlite3.Connection, cluster_id: int) -> float | None:
    """The lowest similarity with which a member of ``cluster_id`` joined from another company; None if none did."""
    return conn.execute("SELECT min(similarity) FROM cluster_members WHERE cluster_id = ? AND cross_company",
                        (cluster_id,)).fetchone()[0]
