"""Boilerplate: the shingles of JD text that many companies share, left out when two JDs are compared."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .keys import MIN_JD_CHARS, _field, _jd_lines
from .minhash import BITS, NUM_PERM, _PERM_A, _PERM_B, _distinct, _fmix32, _runs, _sliced_hashes, low_bits
from .names import normalize_company

COMMON_SHARE = 0.01
COMMON_MIN_COMPANIES = 10
"""A shingle is boilerplate when the JD text of more than ``max(COMMON_MIN_COMPANIES, COMMON_SHARE × companies)``
companies holds it (document frequency counted over companies, so a family of reposts counts once)."""
COMMON_MAX = 20_000
"""Boilerplate shingles kept at most (the most frequent): at the cap a quarter of the values a position may take are
flagged (:attr:`CommonShingles.chance`)."""


class CommonShingles:
    """Boilerplate shingles (their 32-bit hashes, as :func:`shingle_hashes` gives them), and for each signature
    position the low bits of the value each takes under that position's permutation, so that :meth:`contains`
    tells whether a stored signature value is (the stored bits of) the minimum of a boilerplate shingle.

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
        # A bit per (position, stored value): 128 × 2¹⁶ bits (1 MB), set for each boilerplate shingle's value.
        flagged = np.zeros(NUM_PERM << BITS, dtype=bool)
        if len(self.hashes):
            permuted = low_bits(_PERM_A[:, None] * _fmix32(self.hashes)[None, :] + _PERM_B[:, None])  # uint32 wraps
            flagged[((np.arange(NUM_PERM, dtype=np.int64)[:, None] << BITS) + permuted).ravel()] = True
        self.chance = float(flagged.mean())
        """Share of the stored values a position flags: how often a value that is no boilerplate shingle's is
        flagged, its low bits agreeing with one's by chance (about ``1 − exp(−len(self) / 2¹⁶)``)."""
        self._bits = np.packbits(flagged, bitorder="little")

    def __len__(self) -> int:
        return len(self.hashes)

    def contains(self, values: np.ndarray) -> np.ndarray:
        """For stored signature values (shape ``(…, NUM_PERM)``, position last; 32-bit values are taken at their
        stored bits), whether each is a boilerplate shingle's value at its position."""
        if not len(self.hashes):
            return np.zeros(np.shape(values), dtype=bool)
        flat = (np.arange(NUM_PERM, dtype=np.int64) << BITS) + low_bits(values)
        return ((self._bits[flat >> 3] >> (flat & 7).astype(np.uint8)) & 1).astype(bool)


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
