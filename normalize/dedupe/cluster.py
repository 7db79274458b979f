"""The clusterer: incremental clustering of postings by their dedupe keys, and the canonical member of a cluster."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple

import numpy as np

from .boilerplate import CommonShingles
from .keys import DedupeKey, _field, completeness, keys_of
from .lsh import BANDS, ROWS, _band_keys, _BandIndex
from .minhash import NUM_PERM, _decode_into
from .names import names_agree
from .tables import _Chains, _digest, _DigestMap, _grown, _with_slot

THRESHOLD = 0.5
"""Minimum estimated Jaccard of the JD shingles, boilerplate left out, for a ``near_duplicate`` (titles must
agree too: a shared company template can come close to it)."""
CROSS_COMPANY_THRESHOLD = 0.8
"""Minimum for a ``cross_company_copy`` (companies disagree): the JD texts must be near-identical, so a
cluster spans several companies only for a copied JD, never for two jobs that share a template."""
MIN_INFORMATIVE = 24
"""Signature values (of 128) whose shingle is not boilerplate that a comparison needs. With fewer, the two JDs
are mostly boilerplate: similar only when the whole texts are :data:`NEAR_IDENTICAL`."""
NEAR_IDENTICAL = 0.9
"""Estimated Jaccard of the whole JD texts, boilerplate included, at which two mostly-boilerplate JDs are the same."""
MAJORITY_CAP = 64
"""Members with JD text checked for the majority rule at most; a larger cluster is joined through its
canonical member only."""

REASONS = ("new", "same_url", "same_content", "same_identity", "near_duplicate", "cross_company_copy")
"""Why a member is in its cluster (see :mod:`normalize.dedupe`); ``new``: the first of its cluster."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """Where :meth:`Clusterer.add_keys` put a record and why."""

    key: str
    cluster_id: int
    reason: Literal["new", "same_url", "same_content", "same_identity", "near_duplicate", "cross_company_copy"]
    similarity: float
    """The estimated Jaccard (boilerplate left out) with ``matched_key`` for a near-duplicate; else 1.0."""
    matched_key: str | None = None
    """The member it matched (``None`` for ``new``): the canonical member, or for the majority rule the most
    similar member."""
    cross_company: bool = False
    """It matched a posting of a company that does not agree (staffing agency copy)."""
    different_city: bool = False
    """It matched a posting in another city: another opening of the same job."""
    absorbed: tuple[int, ...] = ()
    """Clusters of list cards (no member with JD text) whose identity this record, with JD text, has: their
    members moved into ``cluster_id`` (they are the cards of this posting); the storage layer moves them."""


def canonical_rank(completeness: int, first_seen: str | None, key: str | int) -> tuple:
    """Sort key of the canonical member of a cluster, best first: most complete, then earliest ``first_seen``
    (missing counts as latest), then smallest key (keys of digits in numeric order; an int key is a number). The
    dedupe step gives as key the posting's place in the corpus order (the run that first saw it, then its place
    in its input), not its row id: ids follow the order in which worker processes delivered the postings, which
    differs from run to run."""
    if isinstance(key, str):
        key = f"{int(key):020d}" if key.isdigit() else key
    return -completeness, first_seen is None, first_seen or "", key


def choose_canonical(members: Iterable[Any]) -> Any:
    """The canonical member of a cluster by :func:`canonical_rank` (``completeness`` read from each member
    unless it has one). Raises ValueError on an empty cluster."""
    def rank(r: Any) -> tuple:
        given = _field(r, "completeness")
        return canonical_rank(completeness(r) if given is None else given, _field(r, "first_seen"), str(_field(r, "key")))

    best = min(members, key=rank, default=None)
    if best is None:
        raise ValueError("empty cluster")
    return best


_COMPANY, _TITLE, _CITY = range(3)  # columns of Clusterer._fields


class _Match(NamedTuple):
    row: int
    similarity: float
    same_company: bool
    same_city: bool
    cluster: int

    def order(self) -> tuple:
        """Larger is better: same company, same city, most similar, then the oldest cluster."""
        return self.same_company, self.same_city, self.similarity, -self.cluster


_DECODE_CHUNK = 16384
"""Stored signatures :meth:`Clusterer.from_stored` decodes at a time."""


@dataclass
class Clusterer:
    """Incremental clustering of postings by their :class:`DedupeKey` (see :mod:`normalize.dedupe`).

    ``add_keys`` assigns each record to an existing cluster or a new one; cluster ids are integers starting
    at ``first_cluster_id``. Near-duplicates are compared with ``common`` (the corpus's boilerplate) left out.
    A record matching several clusters joins the best (same company, then same city, then most similar,
    then oldest); clusters are never merged.
    """

    threshold: float = THRESHOLD
    cross_company_threshold: float = CROSS_COMPANY_THRESHOLD
    common: CommonShingles | None = None
    bands: int = BANDS
    rows: int = ROWS
    first_cluster_id: int = 1
    _keys: list[str] = field(default_factory=list, init=False, repr=False)
    # Per row, what its canonical rank is made of (:meth:`_rank`): first_seen (one string per run) and the order.
    _seen: list[str | None] = field(default_factory=list, init=False, repr=False)
    _order: list[str | int] = field(default_factory=list, init=False, repr=False)
    # Per row, numpy arrays sized like _sigs: the signature, the cluster, the interned company, title and city
    # (columns _COMPANY, _TITLE, _CITY of ids into _names; 0 is ""), whether it is compared by content, and its
    # completeness.
    _sigs: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _clusters: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _fields: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _matchable: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _boiler: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]  # value is boilerplate, packed bits
    _completeness: np.ndarray = field(default=None, init=False, repr=False)  # type: ignore[assignment]
    _names: list[str] = field(default_factory=lambda: [""], init=False, repr=False)
    _name_ids: dict[str, int] = field(default_factory=lambda: {"": 0}, init=False, repr=False)
    _name_flags: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), init=False, repr=False)  # scratch
    _row_of: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    # URL, fingerprint and identity (with JD text, without) → first row, keyed by the text's 64-bit digest
    # (:func:`_digest`).
    _by_url: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    _by_fp: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    _by_identity_jd: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    _by_identity_no_jd: _DigestMap = field(default_factory=_DigestMap, init=False, repr=False)
    # Per cluster id: its rows, its rows compared by content, its canonical row (-1: no such cluster).
    _members: _Chains = field(default_factory=_Chains, init=False, repr=False)
    _jd_members: _Chains = field(default_factory=_Chains, init=False, repr=False)
    _canonical: np.ndarray = field(default_factory=lambda: np.full(0, -1, dtype=np.int32), init=False, repr=False)
    _index: _BandIndex = field(default_factory=_BandIndex, init=False, repr=False)
    _next_cluster: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.bands * self.rows > NUM_PERM:
            raise ValueError(f"bands × rows must be ≤ {NUM_PERM}")
        self._sigs = np.empty((0, NUM_PERM), dtype=np.uint16)
        self._clusters = np.empty(0, dtype=np.int64)
        self._fields = np.empty((0, 3), dtype=np.int32)
        self._matchable = np.empty(0, dtype=bool)
        self._boiler = np.empty((0, NUM_PERM // 8), dtype=np.uint8)
        self._completeness = np.empty(0, dtype=np.int32)
        self.reserve(1024)
        self._next_cluster = self.first_cluster_id

    def __len__(self) -> int:
        return len(self._keys)

    # ---- inspection

    def cluster_of(self, key: str) -> int:
        """Cluster id of an added record (KeyError if unknown)."""
        return int(self._clusters[self._row_of[key]])

    def members(self, cluster_id: int) -> list[str]:
        """Keys of a cluster's members, in the order they were added."""
        return [self._keys[r] for r in self._members.rows(cluster_id)]

    def clusters(self) -> dict[int, list[str]]:
        """Every cluster id → member keys."""
        return {cid: self.members(cid) for cid in self._members.ids()}

    def canonical(self, cluster_id: int) -> str:
        """Key of a cluster's canonical member (:func:`canonical_rank`), which new members are matched with."""
        row = self._canonical_of(cluster_id)
        if row < 0:
            raise KeyError(cluster_id)
        return self._keys[row]

    def _canonical_of(self, cluster_id: int) -> int:
        """The canonical row of a cluster, -1 for none."""
        return int(self._canonical[cluster_id]) if 0 <= cluster_id < len(self._canonical) else -1

    def _rank(self, row: int) -> tuple:
        return canonical_rank(int(self._completeness[row]), self._seen[row], self._order[row])

    def _name_id(self, name: str) -> int:
        found = self._name_ids.get(name)
        if found is None:
            found = self._name_ids[name] = len(self._names)
            self._names.append(name)
        return found

    # ---- building

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` records in all: the per-row arrays are not grown (a copy) and the band
        index merges its runs in place."""
        if rows > len(self._sigs):
            self._sigs, self._clusters, self._fields, self._matchable, self._boiler, self._completeness = (
                _grown(a, rows) for a in (self._sigs, self._clusters, self._fields, self._matchable, self._boiler,
                                          self._completeness))
        self._members.reserve(rows)
        self._jd_members.reserve(rows)
        for digests in (self._by_url, self._by_fp, self._by_identity_jd, self._by_identity_no_jd):
            digests.reserve(rows)
        self._index.reserve(rows * self.bands)

    def _append(self, key: str, dk: DedupeKey, seen: tuple[str | None, str], cluster_id: int) -> int:
        """Register a record (``seen``: its first_seen and order) in every index and its cluster; the caller stores
        its signature at the returned row."""
        if key in self._row_of:
            raise ValueError(f"record {key!r} already added")
        row = len(self._keys)
        if row == len(self._sigs):
            self.reserve(2 * row)
        self._keys.append(key)
        first_seen, order = seen
        self._seen.append(None if first_seen is None else sys.intern(first_seen))  # one string per run
        self._order.append(order)
        self._completeness[row] = dk.completeness
        self._fields[row] = (self._name_id(dk.company), self._name_id(dk.title), self._name_id(dk.city))
        self._clusters[row] = cluster_id
        self._matchable[row] = dk.matchable and bool(dk.signature)
        self._row_of[key] = row
        self._members.append(cluster_id, row)
        if self._matchable[row]:
            self._jd_members.append(cluster_id, row)
        best = self._canonical_of(cluster_id)
        if best < 0 or self._rank(row) < self._rank(best):
            self._set_canonical(cluster_id, row)
        if dk.url:
            self._by_url.setdefault(_digest(dk.url), row)
        if dk.company and dk.has_jd and dk.fingerprint:
            self._by_fp.setdefault(_digest(dk.fingerprint), row)
        if dk.identity:
            (self._by_identity_jd if dk.has_jd else self._by_identity_no_jd).setdefault(_digest(dk.identity), row)
        self._next_cluster = max(self._next_cluster, cluster_id + 1)
        return row

    def _set_canonical(self, cluster_id: int, row: int) -> None:
        self._canonical = _with_slot(self._canonical, cluster_id, -1)
        self._canonical[cluster_id] = row

    def add(self, record: Any) -> Assignment:
        """Match a record (``Record``, dict or object with its fields) against all earlier ones and add it."""
        return self.add_many([record])[0]

    def add_many(self, records: Iterable[Any]) -> list[Assignment]:
        """:meth:`add` each record in turn; their keys are computed together (:func:`keys_of`)."""
        records = list(records)
        return self.add_keys((str(_field(r, "key")), k, _field(r, "first_seen")) for r, k in zip(records, keys_of(records)))

    _PREFETCH = 128  # records whose sorted-run lookups are done in one numpy pass (bounds its temporary arrays)

    def add_keys(self, items: Iterable[tuple]) -> list[Assignment]:
        """Match each ``(key, dedupe key, first_seen)`` or ``(key, dedupe key, first_seen, order)`` against
        everything added before it and add it, in order; ``order`` (default: the key) breaks the canonical
        member's ties (:func:`canonical_rank`)."""
        items = [(*item, item[0]) if len(item) == 3 else tuple(item) for item in items]
        sigs = np.empty((len(items), NUM_PERM), dtype=np.uint16)
        _decode_into(sigs, [item[1].signature for item in items])
        boiler = self._boilerplate(sigs)
        band_keys = _band_keys(sigs, self.bands, self.rows)
        index = self._index
        out: list[Assignment] = []
        hits: list[tuple[np.ndarray, np.ndarray]] = []
        first, generation = 0, -1
        for i, (key, dk, first_seen, order) in enumerate(items):
            if index.generation != generation or i - first >= self._PREFETCH:
                first, generation = i, index.generation
                hits = index.run_hits(band_keys[i : i + self._PREFETCH])
            out.append(self._add(key, dk, (first_seen, order), sigs[i], boiler[i], band_keys[i],
                                 index.record_hits(hits, i - first)))
        return out

    def _boilerplate(self, sigs: np.ndarray) -> np.ndarray:
        """Per signature value, whether it is a boilerplate shingle's (all False without ``common``): a comparison
        leaves out the positions whose smaller value is, and that value is one of the two compared."""
        if self.common is None or not len(self.common):
            return np.zeros(sigs.shape, dtype=bool)
        return self.common.contains(sigs)

    def _add(self, key: str, dk: DedupeKey, seen: tuple[str | None, str], sig: np.ndarray, boiler: np.ndarray,
             band_keys: np.ndarray, run_hits: list[np.ndarray]) -> Assignment:
        if key in self._row_of:
            raise ValueError(f"record {key!r} already added")
        matchable = dk.matchable and bool(dk.signature)
        match: tuple[int, float, str] | None = None
        if dk.url and (row := self._by_url.get(_digest(dk.url))) is not None:
            match = row, 1.0, "same_url"
        elif dk.company:
            if dk.has_jd and dk.fingerprint and (row := self._by_fp.get(_digest(dk.fingerprint))) is not None:
                match = row, 1.0, "same_content"
            elif matchable and (near := self._near(sig, boiler, dk, band_keys, run_hits)) is not None:
                match = near.row, near.similarity, "near_duplicate" if near.same_company else "cross_company_copy"
            elif dk.identity and (row := self._identity_match(dk)) is not None:
                match = row, 1.0, "same_identity"
        if match is None:
            result = Assignment(key, self._next_cluster, "new", 1.0)
        else:
            row, similarity, reason = match
            company, _, city = (self._names[i] for i in self._fields[row].tolist())
            result = Assignment(key, int(self._clusters[row]), reason, similarity, self._keys[row],  # type: ignore[arg-type]
                                not names_agree(dk.company, company), bool(dk.city and city and dk.city != city))
        if dk.has_jd and dk.identity and (cards := self._card_cluster(dk.identity, result.cluster_id)) is not None:
            self._absorb(result.cluster_id, cards)
            result = replace(result, absorbed=(cards,))
        row = self._append(key, dk, seen, result.cluster_id)
        self._sigs[row] = sig
        self._boiler[row] = np.packbits(boiler)
        if self._matchable[row]:
            self._index.add(row, band_keys)
        return result

    def _identity_match(self, dk: DedupeKey) -> int | None:
        """The member this record joins by identity: for a record with JD text, a list card (a record without);
        for a list card, a record with JD text, else another card."""
        identity = _digest(dk.identity)
        if dk.has_jd:
            return self._by_identity_no_jd.get(identity)
        found = self._by_identity_jd.get(identity)
        return self._by_identity_no_jd.get(identity) if found is None else found

    def _card_cluster(self, identity_key: str, cluster_id: int) -> int | None:
        """The cluster of list cards with this identity, when it has no member with JD text and is not ``cluster_id``."""
        row = self._by_identity_no_jd.get(_digest(identity_key))
        if row is None:
            return None
        cid = int(self._clusters[row])
        return None if cid == cluster_id or self._jd_members.count(cid) else cid

    def _absorb(self, survivor: int, absorbed: int) -> None:
        """Move the members of cluster ``absorbed`` (list cards) into ``survivor``."""
        self._clusters[self._members.rows(absorbed)] = survivor
        self._members.move(absorbed, survivor)
        self._jd_members.move(absorbed, survivor)  # none: a cluster of list cards
        best, kept = self._canonical_of(absorbed), self._canonical_of(survivor)
        self._canonical[absorbed] = -1
        if kept < 0 or self._rank(best) < self._rank(kept):
            self._set_canonical(survivor, best)

    # ---- matching

    def _agreeing(self, agree: Callable[[str, str], bool], name: str, ids: np.ndarray) -> np.ndarray:
        """Per id in ``ids`` (interned names), whether ``agree(name, that name)``; called once per distinct id."""
        others = set(ids.tolist())
        agreeing = [other for other in others if agree(name, self._names[other])]
        if len(agreeing) == len(others):
            return np.ones(len(ids), dtype=bool)
        if len(agreeing) <= 1:
            return ids == (agreeing[0] if agreeing else -1)
        flags = self._name_flags
        if len(flags) < len(self._names):
            flags = self._name_flags = np.zeros(2 * len(self._names), dtype=bool)
        flags[agreeing] = True
        out = flags[ids]
        flags[agreeing] = False
        return out

    def similarity(self, sig: np.ndarray, rows: np.ndarray, boiler: np.ndarray | None = None) -> np.ndarray:
        """Estimated Jaccard of ``sig`` with the signatures of ``rows``, boilerplate (``common``) left out: the
        share of equal values among the positions whose smaller value is not a boilerplate shingle's. Where
        fewer than :data:`MIN_INFORMATIVE` positions are left (less the share a position loses to values flagged
        by chance, :attr:`CommonShingles.chance`), the whole texts' estimate when it reaches
        :data:`NEAR_IDENTICAL`, else 0. ``boiler``: which of ``sig``'s values are boilerplate (looked up when
        not given). Values are compared on their stored bits (:func:`~.minhash.jaccard`); of two that differ, the
        smaller stored value stands for the minimum of both (their high bits, which would tell, are not kept)."""
        other = self._sigs[rows]
        equal = other == sig
        whole = np.count_nonzero(equal, axis=1) / NUM_PERM
        if self.common is None or not len(self.common):
            return whole
        if boiler is None:
            boiler = self._boilerplate(sig[None, :])[0]
        # the smaller of two values is one of them, and equal values are one shingle: its flag is known
        informative = ~np.where(other <= sig, np.unpackbits(self._boiler[rows], axis=1, count=NUM_PERM).view(bool), boiler)
        n = np.count_nonzero(informative, axis=1)
        hits = np.count_nonzero(equal & informative, axis=1)
        return np.where(n >= MIN_INFORMATIVE * (1 - self.common.chance), hits / np.maximum(n, 1),
                        np.where(whole >= NEAR_IDENTICAL, whole, 0.0))

    def _verified(self, sig: np.ndarray, boiler: np.ndarray, dk: DedupeKey, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """For ``rows``: (matches, similarity, same company, same city); a match has an agreeing title and a
        similarity of at least the threshold (the cross-company one when the companies disagree). Similarity and
        company are worked out only where the titles agree: elsewhere they read 0 and False (no match)."""
        fields = self._fields[rows]
        ok = self._agreeing(names_agree, dk.title, fields[:, _TITLE])
        city = self._name_ids.get(dk.city, -1) if dk.city else 0
        same_city = (fields[:, _CITY] == 0) | (fields[:, _CITY] == city) if city else np.ones(len(rows), dtype=bool)
        if ok.all():
            titled = rows
        else:
            titled = rows[ok]
            fields = fields[ok]
        sims_t = self.similarity(sig, titled, boiler) if len(titled) else np.zeros(0)
        company_t = self._agreeing(names_agree, dk.company, fields[:, _COMPANY])
        match_t = sims_t >= np.where(company_t, self.threshold, self.cross_company_threshold)
        if titled is rows:
            return match_t, sims_t, company_t, same_city
        sims, same_company = np.zeros(len(rows)), np.zeros(len(rows), dtype=bool)
        sims[ok], same_company[ok] = sims_t, company_t
        ok[ok] = match_t
        return ok, sims, same_company, same_city

    def _near(self, sig: np.ndarray, boiler: np.ndarray, dk: DedupeKey, band_keys: np.ndarray,
              run_hits: list[np.ndarray]) -> _Match | None:
        """The best cluster this record is a near-duplicate in, through its canonical member or a majority of
        its members with JD text; ``None`` when there is none.

        LSH candidates that match the record themselves only say which clusters to check. In a large family of
        reposts every member is a candidate of every new one: each band bucket gives at most its
        ``BUCKET_CAP`` most recent rows, and one candidate is enough to point at its cluster.
        """
        cand = self._index.query(band_keys, run_hits)
        if not len(cand):
            return None
        ok = self._verified(sig, boiler, dk, cand)[0]
        best = None
        for cid in sorted(set(self._clusters[cand[ok]].tolist())):
            found = self._cluster_match(sig, boiler, dk, cid)
            if found is not None and (best is None or found.order() > best.order()):
                best = found
        return best

    def _cluster_match(self, sig: np.ndarray, boiler: np.ndarray, dk: DedupeKey, cid: int) -> _Match | None:
        """The record's match in cluster ``cid``: its canonical member when that matches, else the most similar
        member when a majority of the members with JD text (at most :data:`MAJORITY_CAP`) match."""
        canonical = self._canonical_of(cid)
        if self._matchable[canonical]:
            ok, sims, same_company, same_city = self._verified(sig, boiler, dk, np.array([canonical]))
            if ok[0]:
                return _Match(canonical, float(sims[0]), bool(same_company[0]), bool(same_city[0]), cid)
        if not 0 < self._jd_members.count(cid) <= MAJORITY_CAP:
            return None
        rows = np.asarray(self._jd_members.rows(cid), dtype=np.int64)
        ok, sims, same_company, same_city = self._verified(sig, boiler, dk, rows)
        if 2 * np.count_nonzero(ok) <= len(rows):
            return None
        best = max(np.flatnonzero(ok).tolist(), key=lambda i: (same_company[i], same_city[i], sims[i], -rows[i]))
        return _Match(int(rows[best]), float(sims[best]), bool(same_company[best]), bool(same_city[best]), cid)

    # ---- stored keys

    @classmethod
    def from_stored(cls, items: Iterable[tuple], capacity: int = 0, **options: Any) -> Clusterer:
        """Rebuild a clusterer from stored ``(key, dedupe key, cluster id, first_seen)`` (or with a fifth element,
        the order: see :meth:`add_keys`) without raw text.

        Records keep their stored clusters; later :meth:`add_keys` calls match against them. ``capacity``: the
        records expected in all, stored and to come (:meth:`reserve`). ``items`` are read a chunk at a time,
        so the stored signatures are held once, decoded.
        """
        self = cls(**options)
        self.reserve(capacity)
        blobs: list[bytes] = []
        for key, dk, cluster_id, first_seen, *order in items:
            self._append(key, dk, (first_seen, order[0] if order else key), int(cluster_id))
            blobs.append(dk.signature)
            if len(blobs) == _DECODE_CHUNK:
                self._put_signatures(blobs)
        self._put_signatures(blobs)
        self._index.bulk_load(self._live_band_keys(start, min(start + _DECODE_CHUNK, len(self)))
                              for start in range(0, len(self), _DECODE_CHUNK))
        return self

    def _live_band_keys(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``start:stop`` compared by content, and their band keys."""
        live = np.flatnonzero(self._matchable[start:stop]) + start
        return live.astype(np.int64), _band_keys(self._sigs[live], self.bands, self.rows)

    def _put_signatures(self, blobs: list[bytes]) -> None:
        """Decode the signatures of the last ``len(blobs)`` records appended (and which values are boilerplate),
        and empty ``blobs``."""
        stop = len(self)  # _append made room
        start = stop - len(blobs)
        _decode_into(self._sigs[start:stop], blobs)
        self._boiler[start:stop] = np.packbits(self._boilerplate(self._sigs[start:stop]), axis=1)
        blobs.clear()
