"""Boilerplate: the shingles of JD text that many companies share, left out when two JDs are compared."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .keys import MIN_JD_CHARS, _field, _jd_lines
from .minhash import NUM_PERM, _PERM_A, _PERM_B, _distinct, _fmix32, _runs, _sliced_hashes
from .names import normalize_company

COMMON_SHARE = 0.01
COMMON_MIN_COMPANIES = 10
"""A shingle is boilerplate when the JD text of more than ``max(COMMON_MIN_COMPANIES, COMMON_SHARE × companies)``
companies holds it (document frequency counted over companies, so a family of reposts counts once)."""
COMMON_MAX = 20_000
"""Boilerplate shingles kept at most (the most frequent): bounds the lookup table (128 × 8 bytes each)."""


class CommonShingles:
    """Boilerplate shingles (their 32-bit hashes, as :func:`shingle_hashes` gives them), and for each signature
    position the value each takes under that position's permutation, so that :meth:`contains` tells whether a
    signature value is the minimum of a boilerplate shingle.

    A comparison then counts only the positions whose smaller value (the minimum over both postings' shingles)
    is not boilerplate: each such position matches with probability J(A − C, B − C), the Jaccard of the two
    shingle sets with the boilerplate C left out (the minimum over A ∪ B, given that it is outside C, is
    uniform over (A ∪ B) − C).
    """

    def __init__(self, hashes: Iterable[int] | np.ndarray = (), companies: int = 0) -> None:
        self.hashes = _distinct(np.asarray(list(hashes) if not isinstance(hashes, np.ndarray) else hashes,
                                           dtype=np.uint32))
        self.companies = companies
        """Companies whose JD text the document frequency was counted over."""
        permuted = _PERM_A[:, None] * _fmix32(self.hashes)[None, :] + _PERM_B[:, None]  # uint32, wraps
        slots = np.arange(NUM_PERM, dtype=np.uint64)[:, None] << np.uint64(32)
        self._keys = np.sort((slots | permuted.astype(np.uint64)).ravel())
        # A bit per (position, high bits of the value), at most 16 MB and about 1 in 32 set: most values are ruled
        # out by one lookup, and only the others are searched among the sorted keys. Built from the sorted keys:
        # the bits of one byte are neighbours, OR-ed together segment by segment.
        bits = max(3, min(20, (32 * len(self.hashes)).bit_length()))
        self._shift = np.uint64(32 - bits)
        self._row = 1 << (bits - 3)  # bytes per position
        flat = (self._keys >> np.uint64(32)) * np.uint64(1 << bits) + ((self._keys & np.uint64(0xFFFFFFFF)) >> self._shift)
        byte, starts = _runs(flat >> np.uint64(3))  # flat is sorted
        self._bits = np.zeros(NUM_PERM * self._row, dtype=np.uint8)
        if len(flat):
            self._bits[byte] = np.bitwise_or.reduceat(np.uint8(1) << (flat & np.uint64(7)).astype(np.uint8), starts)

    def __len__(self) -> int:
        return len(self.hashes)

    def contains(self, values: np.ndarray) -> np.ndarray:
        """For signature values (shape ``(…, NUM_PERM)``, position last), whether each is a boilerplate
        shingle's value at its position."""
        out = np.zeros(values.shape, dtype=bool)
        if not len(self._keys):
            return out
        high = values.astype(np.uint64) >> self._shift
        at = np.arange(NUM_PERM, dtype=np.uint64) * np.uint64(self._row) + (high >> np.uint64(3))
        where = np.nonzero((self._bits[at] >> (high & np.uint64(7)).astype(np.uint8)) & 1)
        keys = (where[-1].astype(np.uint64) << np.uint64(32)) | values[where].astype(np.uint64)
        found = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        out[where] = self._keys[found] == keys
        return out


def common_shingles(records: Iterable[Any], *, share: float = COMMON_SHARE, minimum: int = COMMON_MIN_COMPANIES,
                    cap: int = COMMON_MAX) -> CommonShingles:
    """The boilerplate of a corpus: the shingles of JD text found under more than
    ``max(minimum, share × companies)`` companies (normalized names). Records without company or JD text
    are not counted; the ``cap`` most frequent are kept."""
    groups: dict[str, int] = {}
    contents: list[list[str]] = []
    owners: list[int] = []
    for record in records:
        company = normalize_company(_field(record, "company"))
        lines = _jd_lines(record)
        if company and sum(map(len, lines)) >= MIN_JD_CHARS:
            contents.append(lines)
            owners.append(groups.setdefault(company, len(groups)))
    if not contents:
        return CommonShingles()
    company_of = np.asarray(owners, dtype=np.uint64)
    pairs = [_distinct((company_of[owner + start] << np.uint64(32)) | hashes.astype(np.uint64))
             for start, _, hashes, owner in _sliced_hashes(contents)]  # (company << 32 | shingle), once per company
    shingle = np.sort((_distinct(np.concatenate(pairs)) & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    values, starts = _runs(shingle)
    counts = np.diff(starts, append=len(shingle))
    common = np.flatnonzero(counts > max(minimum, share * len(groups)))
    common = common[np.argsort(-counts[common], kind="stable")[:cap]]
    return CommonShingles(values[common], len(groups))
