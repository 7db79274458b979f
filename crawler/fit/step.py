"""The fit step: a profile's fit of the open postings (scorer ``fit:<profile>``, :mod:`normalize.fit`)
and the postings its blocklist hides (``posting_blocks``, from the fit's ``blocked`` signals).

Incremental as every scoring is (crawler/score/step.py): each fit stores the digest of its inputs (the
posting, the profile, the taxonomy facts of its skills, the fit rules' version), and only postings whose
digest changed are scored again; ``jobcrawl score --profile`` scores every open posting.
"""

from __future__ import annotations

import sqlite_utils

from crawler.fit import store as blocks
from normalize.fit import FitProfile

from crawler.score.step import score_profile


def score_fit_and_blocks(db: sqlite_utils.Database, profile: FitProfile, *, now: str | None = None,
                         incremental: bool = False) -> dict:
    """Score ``profile``'s fit (with ``incremental``, only the postings whose fit inputs changed; else every open
    one), then replace its blocked postings. Returns counts: ``scorer``, ``scored``, ``unchanged`` and ``blocked``."""
    counts = score_profile(db, profile, now=now, force=not incremental)
    counts["blocked"] = blocks.refresh(db.conn, profile.name)
    return counts
