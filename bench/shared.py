"""The files of ../shared/data/zh, each ingested into a database of its own with the real ``jobcrawl ingest``
(read in place: they have no licence to be copied). Shared by bench/dedupe_accuracy.py and bench/score.py.

A database is made again when the code or the file is newer than it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_ZH = ROOT.parent / "shared" / "data" / "zh"
OPTIONS = {"zhilian51job_jd_text_program_362.txt": ["--format", "lines"]}
"""Ingest options per file; the CSV files pick their preset from their header."""
SKIP = {"salary_strings_dev.tsv"}  # salary strings, not postings
AS_OF = "2026-12-01T12:00:00+08:00"


def shared_files() -> list[Path]:
    """The posting files of ../shared/data/zh; none when the folder is absent."""
    if not SHARED_ZH.is_dir():
        return []
    return sorted(p for p in SHARED_ZH.iterdir() if p.is_file() and p.name not in SKIP and p.suffix != ".md")


def _newest_code() -> float:
    return max(p.stat().st_mtime for folder in ("crawler", "normalize") for p in (ROOT / folder).rglob("*.py"))


def ingested(workdir: Path) -> dict[str, Path]:
    """File name → its database under ``workdir`` (made or brought up to date here)."""
    workdir.mkdir(parents=True, exist_ok=True)
    out = {}
    for path in shared_files():
        db = workdir / (path.stem + ".db")
        if not db.exists() or db.stat().st_mtime < max(_newest_code(), path.stat().st_mtime):
            for stale in workdir.glob(path.stem + ".db*"):
                stale.unlink()
            subprocess.run([sys.executable, "-m", "crawler.cli", "ingest", str(path), "--db", str(db), "--as-of", AS_OF,
                            *OPTIONS.get(path.name, [])], cwd=ROOT, capture_output=True, check=False)
        out[path.name] = db
    return out


def cluster_report(db: Path, top: int = 5) -> dict:
    """The clusters of one database: ``clustered`` postings, ``clusters``, ``duplicates``, the ``top`` largest
    (id, size, companies, cities, reasons) and, per cluster spanning more than two companies, ``wide``: its
    size, the lowest similarity with which a member joined from another company (``cross_company``, as the
    clusterer measured it), and the lowest estimated Jaccard of the JD texts of two members of different
    companies (``pairs``: :func:`normalize.dedupe.jaccard` of their stored signatures)."""
    import itertools
    import sqlite3

    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from crawler.store import dedupe as store
    from normalize.dedupe import jaccard, signature_from_bytes

    conn = sqlite3.connect(db)
    try:
        out = {"clustered": store.clustered_count(conn), **store.totals(conn),
               "largest": store.largest_clusters(conn, top), "wide": {}}
        for cid, members in store.wide_cluster_members(conn).items():
            pairs = [jaccard(signature_from_bytes(a[2]), signature_from_bytes(b[2]))
                     for a, b in itertools.combinations(members, 2) if a[1] != b[1]]
            out["wide"][cid] = {"size": len(members), "cross_company": store.lowest_cross_company_similarity(conn, cid),
                                "pairs": min(pairs)}
        return out
    finally:
        conn.close()
