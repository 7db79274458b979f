"""The fit step: a profile's fit of the open postings (scorer ``fit:<profile>``, :mod:`normalize.fit`)
and the postings its blocklist hides (``posting_blocks``, from the fit's ``blocked`` signals).

Incremental after a run: a posting's fit depends only on the posting, the profile, the taxonomy and
the fit rules, so when none of the last three changed since the last step (their digest in ``meta``)
only the open postings without a fit or with a new version are scored. ``jobcrawl score --profile``
scores every open posting.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sqlite_utils

import normalize.blocklist
import normalize.fit
from crawler.db import blocks
from crawler.db import fit as state
from normalize.fit import FitProfile

from .score import ACTIVE, score_profile


def profile_digest(db: sqlite_utils.Database, profile: FitProfile) -> str:
    """A digest of what a fit depends on besides the posting: profile, taxonomy version, fit rules' code."""
    p = profile
    parts = [repr((p.name, p.have, sorted(p.covers), p.want, p.cities, p.min_monthly_salary, p.currency,
                   sorted(p.work_modes), [r.label for r in p.blocklist.rules])), state.taxonomy_version(db.conn)]
    parts += [Path(m.__file__).read_text(encoding="utf-8") for m in (normalize.fit, normalize.blocklist)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:24]


def score_fit_and_blocks(db: sqlite_utils.Database, profile: FitProfile, *, now: str | None = None,
                         incremental: bool = False) -> dict:
    """Score ``profile``'s fit (only changed evaluations are written; with ``incremental``, only the
    postings that may have changed), then replace its blocked postings. Returns counts: ``scorer``,
    ``scored`` and ``blocked``."""
    digest, mark = profile_digest(db, profile), state.versions_mark(db.conn)
    last = state.last_state(db.conn, profile.name) if incremental else None
    where = state.stale_where(profile.scorer, last["versions"]) if last and last["digest"] == digest else ACTIVE
    counts = score_profile(db, profile, now=now, where=where)
    counts["blocked"] = blocks.refresh(db.conn, profile.name)
    state.save_state(db.conn, profile.name, digest, mark)
    return counts
