"""Duplicate postings: the same posting seen again, reposted, or copied to another site, kept as clusters.

:func:`posting_signature` gives a posting's :class:`DedupeKey` (no corpus needed); :class:`Clusterer` clusters
keys incrementally (:meth:`Clusterer.add_keys`; :meth:`Clusterer.from_stored` rebuilds from stored keys, no raw
text). A member joins a cluster for a reason stored as a word: ``same_url`` (:func:`canonical_url`),
``same_content`` (:func:`fingerprint`), ``near_duplicate`` (MinHash/LSH over 5-shingles of the JD lines,
boilerplate (:class:`CommonShingles`) left out, titles agreeing, estimated Jaccard ≥ :data:`THRESHOLD`),
``cross_company_copy`` (the same under another company, ≥ :data:`CROSS_COMPANY_THRESHOLD`) or
``same_identity`` (:func:`identity`, when one of the two has no JD text). Only JD text counts as content
(requirement, responsibility and preferred bullets; at least ``MIN_JD_CHARS``); a posting without
company matches by URL only. No chaining: a candidate joins only through the cluster's canonical member or a
majority of its members with JD text; clusters are never merged. Each member records its similarity and the
member it matched.

Modules: :mod:`.names` (canonical URL, company, title and city names, when names agree, JD lines),
:mod:`.minhash` (shingles, signatures, their bytes), :mod:`.keys` (a posting's :class:`DedupeKey`),
:mod:`.boilerplate` (:class:`CommonShingles`), :mod:`.lsh` (band keys and table), :mod:`.tables` (the clusterer's
numpy tables), :mod:`.cluster` (:class:`Clusterer`, the canonical member). This module names the public API.
"""

from .boilerplate import CommonShingles, common_shingles
from .cluster import CROSS_COMPANY_THRESHOLD, REASONS, THRESHOLD, Assignment, Clusterer, choose_canonical
from .keys import (
    DedupeKey, Record, completeness, fingerprint, identity, jd_text, keys_of, posting_signature, posting_signatures,
    record_from_posting, salary_identity,
)
from .minhash import (
    NUM_PERM, SEED, SIGNATURE_VERSION, jaccard, low_bits, shingle_hashes, shingles, signature, signature_from_bytes,
    signature_to_bytes, signatures_from_bytes,
)
from .names import canonical_url, count_companies, names_agree, normalize_city, normalize_company, normalize_title

__all__ = [
    "CROSS_COMPANY_THRESHOLD", "NUM_PERM", "REASONS", "SEED", "SIGNATURE_VERSION", "THRESHOLD",
    "Assignment", "Clusterer", "CommonShingles", "DedupeKey", "Record",
    "canonical_url", "choose_canonical", "common_shingles", "completeness", "count_companies", "fingerprint",
    "identity", "jaccard", "jd_text", "keys_of", "low_bits", "names_agree", "normalize_city", "normalize_company",
    "normalize_title", "posting_signature", "posting_signatures", "record_from_posting", "salary_identity",
    "shingle_hashes", "shingles", "signature", "signature_from_bytes", "signature_to_bytes", "signatures_from_bytes",
]
