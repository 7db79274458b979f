"""bench/storage.py counts the rows an ingest writes per posting; on the two seed postings every count is known."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

# Rows the ingest of seeds/*.txt (2 postings, 2 files, 1 run) writes, per posting, beyond the empty database.
SEED_ROWS = {
    "posting_skills": 52, "velocity_weekly": 30.5, "sections": 3.5, "market_figures": 2, "evaluations": 2, "meta": 2.5,
    "raw_inputs": 1, "postings": 1, "app_market": 1, "dedupe_signatures": 1, "input_parses": 1,
    "postings_fts_data": 1, "postings_fts_idx": 1, "runs": 0.5, "evidence_entries": 21,
}


def test_the_seed_postings_rows_per_table_are_printed_exactly():
    out = subprocess.run([sys.executable, "bench/storage.py", "--only", "seeds"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("  rows per posting"))
    head, _, counts = line.partition(": ")
    printed = {name: float(n) for name, n in (part.rsplit(" ", 1) for part in counts.split(" · "))}
    assert printed == SEED_ROWS
    assert head == f"  rows per posting ({sum(SEED_ROWS.values()):g} in all)"
    assert "seeds: 2 postings · input 14,861 B" in out
