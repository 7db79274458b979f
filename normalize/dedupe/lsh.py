"""LSH over MinHash signatures: each signature's band keys, and the band table that finds the rows sharing one."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .tables import _grown

BANDS, ROWS = 42, 3
"""LSH banding: 42 bands of 3 rows (126 of the 128 values). A pair becomes a candidate with probability
1 − (1 − J³)⁴² (0.996 at the clusterer's ``THRESHOLD`` 0.5); candidates are verified on the full signature."""

BUCKET_CAP = 64
"""Rows an LSH bucket contributes to one query at most (its most recent): bounds the work per new record."""


class _Run:
    """One sorted run of the band table: band keys and row ids in buffers that may be longer than ``n``."""

    __slots__ = ("keys", "rows", "n")

    def __init__(self, capacity: int) -> None:
        # np.empty: the pages past ``n`` are never written until a merge fills them, so they are not resident.
        self.keys = np.empty(capacity, dtype=np.uint32)
        self.rows = np.empty(capacity, dtype=np.int32)
        self.n = 0


class _BandIndex:
    """LSH band table as sorted numpy runs (log-structured merge) plus a dict for recent rows.

    About 8 bytes per (row, band). With :meth:`reserve` every run's buffer is sized for the whole table, so a merge moves the newer run's
    entries into the older run's buffer in place: no merge holds two copies of the table.
    """

    _FLUSH = 2048  # rows kept in the dict before they become a sorted run
    _STEP = 1 << 16  # entries moved at a time by an in-place merge

    def __init__(self) -> None:
        self._runs: list[_Run] = []  # oldest first
        self._recent: dict[int, int | list[int]] = {}  # a bare row until a second row shares the key
        self._recent_rows: list[int] = []
        self._recent_keys: list[np.ndarray] = []
        self._capacity = 0
        self._seen = np.empty(0, dtype=np.int32)  # scratch for query: a slot per row added
        self.generation = 0
        """Changes whenever the runs do: :meth:`run_hits` computed before then are stale (merges reuse buffers)."""

    def reserve(self, entries: int) -> None:
        """Size run buffers for ``entries`` (row, band) pairs in all, so that merges happen in place."""
        self._capacity = max(self._capacity, entries)

    def bulk_load(self, chunks: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
        """Add many rows at once, given as chunks of ``(rows, keys)`` (``keys``: rows × bands), as one run with
        the rows in order among equal keys."""
        run = None
        for rows, keys in chunks:
            if not len(rows):
                continue
            self._room_for(int(rows.max()) + 1)
            part = self._sorted_run(np.repeat(rows, keys.shape[1]), keys.ravel(),
                                     self._capacity if run is None else 0)
            if run is None:
                run = part
            else:
                self._merge(run, part)
        if run is not None:
            self._runs.append(run)
            self.generation += 1

    @staticmethod
    def _sorted_run(rows: np.ndarray, keys: np.ndarray, capacity: int) -> _Run:
        order = np.argsort(keys, kind="stable")
        run = _Run(max(capacity, len(keys)))
        run.n = len(keys)
        run.keys[: run.n] = keys[order]
        run.rows[: run.n] = rows[order]
        return run

    def _push_run(self, rows: np.ndarray, keys: np.ndarray) -> None:
        self._runs.append(self._sorted_run(rows, keys, self._capacity))
        while len(self._runs) >= 2 and self._runs[-2].n <= 2 * self._runs[-1].n:
            newer = self._runs.pop()
            self._merge(self._runs[-1], newer)
        self.generation += 1

    def _merge(self, older: _Run, newer: _Run) -> None:
        """Stable merge of ``newer`` into ``older`` (the older run's rows first among equal keys)."""
        n1, n2 = older.n, newer.n
        n = n1 + n2
        if len(older.keys) < n:  # no room (no reserve): a bigger buffer, the only merge that copies
            size = max(2 * n, self._capacity)
            older.keys, older.rows = _grown(older.keys[:n1], size), _grown(older.rows[:n1], size)
        keys, rows, k2 = older.keys, older.rows, newer.keys[:n2]
        # An older entry moves right by the number of newer keys below it. Moved from the end, a step at a time,
        # no entry is overwritten before it has moved: its slot is at or after its place, and past every
        # entry still to move.
        taken = np.zeros(n, dtype=bool)
        for stop in range(n1, 0, -self._STEP):
            start = max(0, stop - self._STEP)
            step_keys, step_rows = keys[start:stop].copy(), rows[start:stop].copy()
            slots = np.searchsorted(k2, step_keys, "left")
            slots += np.arange(start, stop)
            keys[slots], rows[slots] = step_keys, step_rows
            taken[slots] = True
        free = ~taken  # the newer entries' slots, in order
        keys[:n][free], rows[:n][free] = k2, newer.rows[:n2]
        older.n = n

    def run_hits(self, keys: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each row of ``keys`` (records × bands), the rows of the sorted runs sharing one of its band keys:
        per run ``(rows, offsets)``, record ``i``'s rows being ``rows[offsets[i]:offsets[i + 1]]``, repeated once
        per shared key (:meth:`query` makes them unique). A huge bucket (a family of reposts) gives each run's
        most recent rows only (see Clusterer._near)."""
        records, bands = keys.shape
        flat = keys.ravel()
        out = []
        for run in self._runs:
            run_keys, run_rows = run.keys[: run.n], run.rows[: run.n]
            lo = np.searchsorted(run_keys, flat, "left")
            found = lo < len(run_keys)
            found[found] = run_keys[lo[found]] == flat[found]
            hit = np.flatnonzero(found)
            if not len(hit):
                continue
            hi = np.searchsorted(run_keys, flat[hit], "right")
            lo = np.maximum(lo[hit], hi - BUCKET_CAP)
            lengths = hi - lo
            # The ranges lo[s]:hi[s] one after another (in record order): position j of range s is lo[s] + j.
            ends = np.cumsum(lengths)
            at = np.arange(ends[-1])
            at += np.repeat(lo - ends + lengths, lengths)
            offsets = np.r_[0, ends][np.searchsorted(hit, np.arange(records + 1) * bands)]
            out.append((run_rows[at], offsets))
        return out

    @staticmethod
    def record_hits(run_hits: list[tuple[np.ndarray, np.ndarray]], i: int) -> list[np.ndarray]:
        """Record ``i``'s part of :meth:`run_hits`: its rows of each run."""
        return [rows[offsets[i] : offsets[i + 1]] for rows, offsets in run_hits]

    def query(self, keys: np.ndarray, run_hits: list[np.ndarray] | None = None) -> np.ndarray:
        """Rows sharing at least one band key (unique, in no order); ``run_hits``: this record's
        :meth:`record_hits`, when computed since the runs last changed."""
        parts = self.record_hits(self.run_hits(keys[None, :]), 0) if run_hits is None else list(run_hits)
        extra: list[int] = []
        for hit in map(self._recent.get, keys.tolist()):
            if hit is None:
                continue
            if isinstance(hit, int):
                extra.append(hit)
            else:
                extra.extend(hit[-BUCKET_CAP:])
        if extra:
            parts.append(np.asarray(extra, dtype=np.int32))
        found = np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
        # Unique without sorting: every occurrence of a row writes its position into the row's slot of _seen; the
        # slot ends holding one of them (NumPy does not say which), and only that occurrence is kept.
        positions = np.arange(len(found), dtype=np.int32)
        self._seen[found] = positions
        return found[self._seen[found] == positions]

    def _room_for(self, rows: int) -> None:
        if rows > len(self._seen):
            self._seen = np.empty(max(rows, 2 * len(self._seen)), dtype=np.int32)

    def add(self, row: int, keys: np.ndarray) -> None:
        self._room_for(row + 1)
        recent, listed = self._recent, keys.tolist()
        fresh = dict.fromkeys(listed, row)
        if len(fresh) == len(listed) and not any(map(recent.__contains__, listed)):
            recent.update(fresh)  # the common case: no key seen yet
        else:
            for k in listed:
                hit = recent.get(k)
                if hit is None:
                    recent[k] = row
                elif isinstance(hit, int):
                    recent[k] = [hit, row]
                else:
                    hit.append(row)
        self._recent_rows.append(row)
        self._recent_keys.append(keys)
        if len(self._recent_rows) >= self._FLUSH:
            self._push_run(
                np.repeat(np.asarray(self._recent_rows, dtype=np.int64), len(keys)),
                np.concatenate(self._recent_keys),
            )
            self._recent, self._recent_rows, self._recent_keys = {}, [], []


_BAND_MUL = np.uint64(0x9E3779B97F4A7C15)


def _band_keys(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """32-bit key per (signature, band): the band's stored (16-bit) values and the band number mixed together in
    64 bits, the high half kept. Two different bands share a key with probability 2⁻³²: at most an extra candidate, checked
    on its full signature like any other. 32 bits instead of 64 save 17 MB of index per 100k postings."""
    sigs = np.ascontiguousarray(sigs[:, : bands * rows], dtype=np.uint32).reshape(len(sigs), bands, rows)
    h = np.zeros((len(sigs), bands), dtype=np.uint64) + np.arange(1, bands + 1, dtype=np.uint64)
    for j in range(rows):
        h = (h ^ sigs[:, :, j].astype(np.uint64)) * _BAND_MUL
        h ^= h >> np.uint64(29)
    return (h >> np.uint64(32)).astype(np.uint32)
