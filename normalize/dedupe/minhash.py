"""MinHash signatures of JD text: character shingles of the JD lines, their 32-bit hashes, datasketch's affine32
MinHash vectorized (bit-identical to datasketch's, without importing it); the stored form, which keeps the low 16
bits of each value (b-bit MinHash: 256 bytes), and the Jaccard estimate on those bits."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .names import _bullet_lines

SHINGLE_K = 5
"""Characters per shingle."""

NUM_PERM = 128
"""MinHash permutations (datasketch ``affine32`` scheme): estimate standard error ≤ 0.045."""

SEED = 1
"""datasketch permutation seed. Changing it, :data:`SHINGLE_K` or the folding invalidates stored signatures."""

BITS = 16
"""Low bits of each permutation's minimum a stored signature keeps (b-bit MinHash): two different minima agree in
them with probability :data:`COLLISION`."""
COLLISION = 2.0 ** -BITS

SIGNATURE_VERSION = f"minhash-affine32-p{NUM_PERM}-s{SEED}-k{SHINGLE_K}-b{BITS}-jd-v2"
"""Stored with keys: a store whose version differs must recompute them."""


def _permutations() -> tuple[np.ndarray, np.ndarray]:
    """The (a, b) parameters of datasketch's affine32 permutations for ``NUM_PERM`` and ``SEED``, drawn the way
    ``MinHash._init_permutations`` draws them (odd a), without importing datasketch (whose import loads scipy)."""
    gen = np.random.RandomState(SEED)
    a = gen.randint(0, 1 << 31, NUM_PERM, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, NUM_PERM, dtype=np.uint32)
    return a, b


_PERM_A, _PERM_B = _permutations()
_EMPTY = np.uint32(0xFFFFFFFF)
_ROLL = np.uint64(0x100000001B3)  # FNV-1a 64-bit prime: multiplier of the rolling shingle hash


def shingles(text: str, k: int = SHINGLE_K) -> set[str]:
    """Character k-shingles of the JD text, line by line: each line folded, its bullet marker, spaces and
    punctuation removed; a line shorter than k is one shingle. No shingle spans two lines, so reordered
    bullets and renumbering leave the set unchanged."""
    out: set[str] = set()
    for line in _bullet_lines([text]):
        out.update(line[i : i + k] for i in range(max(1, len(line) - k + 1)))
    return out


def _runs(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of a sorted 1-d array: its distinct values, and the index where the run of each starts."""
    first = np.empty(len(values), dtype=bool)
    first[:1] = True
    np.not_equal(values[1:], values[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    return values[starts], starts


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-d array, by a sort (NumPy ≥ 2.3 hashes integers instead, slower here)."""
    return _runs(np.sort(values))[0]


def shingle_hashes(text: str, k: int = SHINGLE_K) -> np.ndarray:
    """The distinct 32-bit hashes of :func:`shingles` (a rolling polynomial hash of the code points, mixed and
    folded to 32 bits), computed vectorized over the whole text. Same set of shingles → same array."""
    return _distinct(_record_hashes([_bullet_lines([text])], k)[0])


_MASK64 = (1 << 64) - 1


def _record_hashes(line_lists: Sequence[Sequence[str]], k: int = SHINGLE_K) -> tuple[np.ndarray, np.ndarray]:
    """The 32-bit shingle hashes of many records' content lines (may repeat) and the record index of each,
    in record order: a rolling polynomial hash of the code points of every k-window of a line (of the whole
    line when it is shorter), mixed and folded to 32 bits; one numpy pass over all the records' lines."""
    long_lines: list[str] = []
    long_owner: list[int] = []
    short: list[int] = []
    short_owner: list[int] = []
    roll = int(_ROLL)
    for i, lines in enumerate(line_lists):
        for line in lines:
            if len(line) >= k:
                long_lines.append(line)
                long_owner.append(i)
            else:  # one window: the whole line
                h = 0
                for ch in line:
                    h = (h * roll + ord(ch)) & _MASK64
                short.append(h)
                short_owner.append(i)
    hashes = [np.asarray(short, dtype=np.uint64)]
    owners = [np.asarray(short_owner, dtype=np.int64)]
    if long_lines:
        codes = np.frombuffer("\0".join(long_lines).encode("utf-32-le"), dtype=np.uint32)
        h = _rolling_codes(codes, k)
        breaks = np.concatenate([[0], np.cumsum(codes == 0)])
        inside = breaks[k:] == breaks[:-k]  # windows that do not cross a line break
        hashes.append(h[inside])
        owners.append(np.asarray(long_owner, dtype=np.int64)[breaks[: len(h)][inside]])
    h = np.concatenate(hashes)
    owner = np.concatenate(owners)
    if short and long_lines:
        order = np.argsort(owner, kind="stable")
        h, owner = h[order], owner[order]
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(32)
    return h.astype(np.uint32), owner


def _rolling_codes(codes: np.ndarray, k: int) -> np.ndarray:
    """Polynomial hash (mod 2⁶⁴) of every window of k code points."""
    codes = codes.astype(np.uint64)
    n = len(codes) - k + 1
    h = np.zeros(n, dtype=np.uint64)
    for j in range(k):
        h = h * _ROLL + codes[j : j + n]
    return h


def signature(text: str) -> np.ndarray:
    """MinHash signature (``NUM_PERM`` uint32 values) of the text's :func:`shingle_hashes`; an empty text gives
    the empty signature (all ``2³² − 1``)."""
    hashes = shingle_hashes(text)
    return _minhashes(hashes, np.zeros(len(hashes), dtype=np.int64), 1)[0]


_BLOCK = 8192
"""Hashes per step of :func:`_minhashes` (a NUM_PERM × 8192 uint32 block: 4 MB)."""


def _fmix32(hashes: np.ndarray) -> np.ndarray:
    """MurmurHash3's fmix32 of each 32-bit shingle hash (a new array): what the permutations are applied to."""
    h = hashes.astype(np.uint32)
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def _minhashes(hashes: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """MinHash signatures (n × ``NUM_PERM``) of many records' hashes at once; ``owner`` (sorted) gives each hash's
    record; a record without hashes gets the empty signature (all ``2³² − 1``).

    datasketch's affine32 MinHash (MurmurHash3 fmix32 pre-mix, then a·h + b mod 2³² per permutation, its own
    permutation parameters), vectorized; bit-identical to datasketch's.
    """
    out = np.full((n, NUM_PERM), _EMPTY, dtype=np.uint32)
    h = _fmix32(hashes)
    block = np.empty((NUM_PERM, min(_BLOCK, len(h))), dtype=np.uint32)  # permutation-major: contiguous minima
    for s in range(0, len(h), _BLOCK):
        part, who = h[s : s + _BLOCK], owner[s : s + _BLOCK]
        b = block[:, : len(part)]
        np.multiply(_PERM_A[:, None], part, out=b)
        np.add(b, _PERM_B[:, None], out=b)
        starts = np.flatnonzero(np.r_[True, who[1:] != who[:-1]])
        rec = who[starts]
        out[rec] = np.minimum(out[rec], np.minimum.reduceat(b, starts, axis=1).T)
    return out


_SIGNATURE_CHARS = 1 << 18
"""Content characters whose shingles :func:`_sliced_hashes` hashes in one numpy pass: its temporary arrays take
about 60 bytes a character (16 MB), however many records it is given."""


def _sliced_hashes(contents: Sequence[Sequence[str]]) -> Iterator[tuple[int, int, np.ndarray, np.ndarray]]:
    """:func:`_record_hashes` of many records' content lines a slice of records at a time (about
    ``_SIGNATURE_CHARS`` characters each): ``(start, stop, hashes, owner)``, ``owner`` counted from ``start``."""
    start, chars = 0, 0
    for i, lines in enumerate(contents):
        chars += sum(map(len, lines))
        if chars >= _SIGNATURE_CHARS or i == len(contents) - 1:
            yield start, i + 1, *_record_hashes(contents[start : i + 1])
            start, chars = i + 1, 0


def _signatures(contents: Sequence[Sequence[str]]) -> np.ndarray:
    """MinHash signatures (len(contents) × ``NUM_PERM``) of many records' content lines, hashed a slice at a
    time (:func:`_sliced_hashes`): a record's signature does not depend on the others in its slice."""
    out = np.empty((len(contents), NUM_PERM), dtype=np.uint32)
    for start, stop, hashes, owner in _sliced_hashes(contents):
        out[start:stop] = _minhashes(hashes, owner, stop - start)
    return out


STORED_BYTES = NUM_PERM * BITS // 8
"""Size of a stored signature: ``NUM_PERM`` little-endian uint16, no header (256 bytes)."""

_EMPTY_LOW = np.uint16(0xFFFF)
"""A value of the empty signature, as stored."""


def signature_to_bytes(sig: np.ndarray) -> bytes:
    """The stored form of a signature: the low :data:`BITS` bits of each value, little-endian uint16
    (:data:`STORED_BYTES`); a signature already in that form is stored as it is."""
    return low_bits(sig).astype("<u2").tobytes()


def low_bits(sig: np.ndarray) -> np.ndarray:
    """The values of a signature (or of rows of them) as stored: their low :data:`BITS` bits, uint16."""
    return (np.asarray(sig) & np.uint16(0xFFFF)).astype(np.uint16)


def signature_from_bytes(data: bytes) -> np.ndarray:
    """Inverse of :func:`signature_to_bytes` (``NUM_PERM`` uint16); raises ValueError for bytes of another size."""
    if len(data) != STORED_BYTES:
        raise ValueError(f"stored signature made with other parameters ({len(data)} bytes, not {STORED_BYTES})")
    return np.frombuffer(data, dtype="<u2").astype(np.uint16)


def signatures_from_bytes(blobs: Sequence[bytes]) -> np.ndarray:
    """:func:`signature_from_bytes` of many stored signatures at once (len(blobs) × ``NUM_PERM``); ``b""``
    gives the empty signature."""
    out = np.empty((len(blobs), NUM_PERM), dtype=np.uint16)
    _decode_into(out, list(blobs))
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Jaccard similarity estimated from two signatures: the share of equal values, compared on their stored bits;
    0 if either is empty. Two different minima agree in their low :data:`BITS` bits with probability
    :data:`COLLISION`, so the share overstates J by ``COLLISION × (1 − J)`` on average (Li & König's estimator
    removes it: ``(share − COLLISION) / (1 − COLLISION)``); it is left in, under 2 × 10⁻⁵, far below the
    estimate's standard error and the 4 decimals a similarity is stored with, so that thresholds and stored
    similarities are those of the full 32-bit values."""
    a, b = low_bits(a), low_bits(b)
    if _is_empty(a) or _is_empty(b):
        return 0.0
    return float(np.count_nonzero(a == b)) / len(a)


def _is_empty(sig: np.ndarray) -> bool:
    return bool((sig == _EMPTY_LOW).all())


def _decode_into(out: np.ndarray, blobs: list[bytes]) -> None:
    """Stored signatures into ``out`` (len(blobs) × NUM_PERM, uint16), ``b""`` as the empty signature; all checked
    like :func:`signature_from_bytes`, decoded in one numpy pass."""
    if not blobs:
        return
    empty = bytes(_EMPTY_LOW.astype("<u2").tobytes()) * NUM_PERM
    blobs = [b or empty for b in blobs]
    if any(len(b) != STORED_BYTES for b in blobs):
        signature_from_bytes(next(b for b in blobs if len(b) != STORED_BYTES))  # raises
    out[:] = np.frombuffer(b"".join(blobs), dtype="<u2").reshape(len(blobs), NUM_PERM)
