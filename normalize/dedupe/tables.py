"""The clusterer's per-row and per-cluster tables in numpy arrays: a few bytes an entry instead of Python objects."""

from __future__ import annotations

import hashlib

import numpy as np


def _grown(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with room for ``rows`` rows, its rows kept (a copy)."""
    grown = np.empty((rows, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


def _with_slot(array: np.ndarray, index: int, fill: int) -> np.ndarray:
    """A per-cluster-id array that has slot ``index``: ``array`` itself, or a copy at least twice as long whose new
    slots hold ``fill``."""
    if index < len(array):
        return array
    grown = np.full(max(2 * len(array), index + 1, 1024), fill, dtype=array.dtype)
    grown[: len(array)] = array
    return grown


def _digest(text: str) -> int:
    """A 64-bit digest of ``text``: the clusterer's lookup key for URLs, fingerprints and identities (a collision
    among 10 million of them has a chance of about 3 in a million)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


class _DigestMap:
    """64-bit digest → the first row given for it: open addressing in numpy arrays, 12 bytes a slot at most two
    thirds full, instead of a dict of Python ints (about 100 bytes an entry). Slots never written stay unpaged."""

    def __init__(self) -> None:
        self._digests = np.zeros(0, dtype=np.uint64)
        self._rows = np.zeros(0, dtype=np.int32)  # row + 1; 0: the slot is free
        self._n = 0

    def reserve(self, entries: int) -> None:
        """Make room for ``entries`` digests in all (no rehash until then)."""
        if 3 * entries > 2 * len(self._rows):
            old = [(int(d), int(r)) for d, r in zip(self._digests[self._rows > 0], self._rows[self._rows > 0])]
            size = 1024
            while 2 * size < 3 * entries:
                size *= 2
            self._digests, self._rows = np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.int32)
            for digest, row in old:
                slot = self._slot(digest)
                self._rows[slot], self._digests[slot] = row, digest

    def _slot(self, digest: int) -> int:
        """The slot holding ``digest``, or the free slot where it goes (linear probing)."""
        mask = len(self._rows) - 1
        slot = digest & mask
        rows, digests = self._rows, self._digests
        while rows[slot] and int(digests[slot]) != digest:
            slot = (slot + 1) & mask
        return slot

    def get(self, digest: int) -> int | None:
        if not self._n:
            return None
        row = int(self._rows[self._slot(digest)])
        return row - 1 if row else None

    def setdefault(self, digest: int, row: int) -> None:
        self.reserve(self._n + 1)
        slot = self._slot(digest)
        if not self._rows[slot]:
            self._rows[slot], self._digests[slot] = row + 1, digest
            self._n += 1


class _Chains:
    """Per cluster id, its rows in the order they joined, as linked lists in numpy arrays: a few bytes a row and a
    cluster instead of a Python list per cluster."""

    def __init__(self) -> None:
        self.next = np.empty(0, dtype=np.int32)  # per row: the next row of its cluster, -1 after the last
        self.head = np.empty(0, dtype=np.int32)  # per cluster id: first and last row (when size > 0)
        self.tail = np.empty(0, dtype=np.int32)
        self.size = np.zeros(0, dtype=np.int32)

    def reserve(self, rows: int) -> None:
        if rows > len(self.next):
            self.next = _grown(self.next, rows)

    def _room_for(self, cluster_id: int) -> None:
        self.head, self.tail, self.size = (_with_slot(a, cluster_id, fill)
                                           for a, fill in ((self.head, -1), (self.tail, -1), (self.size, 0)))

    def count(self, cluster_id: int) -> int:
        return int(self.size[cluster_id]) if 0 <= cluster_id < len(self.size) else 0

    def append(self, cluster_id: int, row: int) -> None:
        self._room_for(cluster_id)
        self.next[row] = -1
        if self.size[cluster_id]:
            self.next[self.tail[cluster_id]] = row
        else:
            self.head[cluster_id] = row
        self.tail[cluster_id] = row
        self.size[cluster_id] += 1

    def rows(self, cluster_id: int) -> list[int]:
        out, row = [], int(self.head[cluster_id]) if self.count(cluster_id) else -1
        nxt = self.next
        while row >= 0:
            out.append(row)
            row = int(nxt[row])
        return out

    def move(self, source: int, target: int) -> None:
        """The rows of ``source`` join the end of ``target``'s; ``source`` is left empty."""
        if not self.count(source):
            return
        self._room_for(target)
        if self.size[target]:
            self.next[self.tail[target]] = self.head[source]
        else:
            self.head[target] = self.head[source]
        self.tail[target] = self.tail[source]
        self.size[target] += self.size[source]
        self.size[source] = 0

    def ids(self) -> list[int]:
        """Cluster ids with rows, in ascending order."""
        return np.flatnonzero(self.size).tolist()
