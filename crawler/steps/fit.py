"""The fit step: a profile's fit of every open posting (scorer ``fit:<profile>``, :mod:`normalize.fit`)
and the postings its blocklist hides (``posting_blocks``, from the fit's ``blocked`` signals)."""

from __future__ import annotations

import sqlite_utils

from crawler.db import blocks
from normalize.fit import FitProfile

from .score import score_profile


def score_fit_and_blocks(db: sqlite_utils.Database, profile: FitProfile, *, now: str | None = None) -> dict:
    """Score ``profile``'s fit (only changed evaluations are written), then replace its blocked postings.
    Returns counts: ``scorer``, ``scored`` and ``blocked``."""
    counts = score_profile(db, profile, now=now)
    counts["blocked"] = blocks.refresh(db.conn, profile.name)
    return counts
