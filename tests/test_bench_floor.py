"""bench/floor.py times every stage of an ingest in a plain loop; its floor means something only if that loop
stores what `jobcrawl ingest` stores. Both run here on the same dumps and their databases are compared."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bench.gen import write_mixed_dumps
from bench.ingest import AS_OF
from conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

# What a posting is in the database, without when or by which run it was stored.
QUERIES = {
    "postings": "SELECT key, content_hash, salary_monthly_min, salary_monthly_max, posted_at FROM postings",
    "sections": "SELECT p.key, s.seq, s.key, s.text FROM section_texts s JOIN postings p ON p.id = s.posting_id",
    "skills": "SELECT p.key, s.skill, s.section, s.count FROM posting_skills s JOIN postings p ON p.id = s.posting_id",
    "evaluations": "SELECT p.key, e.scorer, e.overall, e.pay, e.growth, e.worklife, e.mission, e.evidence, e.signals"
                   " FROM evaluations e JOIN postings p ON p.id = e.posting_id",
    "clusters": "SELECT count(DISTINCT cluster_id), count(cluster_id) FROM dedupe_signatures",
    "search": "SELECT count(*) FROM postings_fts WHERE postings_fts MATCH 'CUDA'",
    "raw inputs": "SELECT locator, sha256 FROM raw_inputs",
}


def _contents(db: Path) -> dict[str, list[tuple]]:
    with sqlite3.connect(db) as conn:
        return {name: sorted(conn.execute(query).fetchall(), key=repr) for name, query in QUERIES.items()}


def test_the_floors_plain_loop_stores_what_the_ingest_stores(tmp_path):
    folder = tmp_path / "in"
    write_mixed_dumps(folder, 300, per_file=50)
    run_cli("ingest", str(folder), "--db", str(tmp_path / "jobs.db"), "--as-of", AS_OF, check=True)
    # In a process of its own: the floor installs Scrapy's reactor.
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
                    " from bench.floor import floor; print(floor(Path(sys.argv[2]), Path(sys.argv[3]))[0])",
                    str(ROOT), str(folder), str(tmp_path / "floor.db")], check=True, cwd=ROOT, capture_output=True)
    ingested, floor = _contents(tmp_path / "jobs.db"), _contents(tmp_path / "floor.db")
    assert len(ingested["postings"]) == 300
    assert len(ingested["evaluations"]) > 300 and len(ingested["skills"]) > 300 and ingested["search"][0][0] > 0
    for name in QUERIES:
        assert floor[name] == ingested[name], name
