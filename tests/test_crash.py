"""A SIGKILL in the middle of an ingest leaves a consistent database; the next run completes it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from bench.gen import write_dumps
from conftest import AS_OF, ROOT, export_records, indexed_postings, run_cli, signal_ids_as_keys

pytestmark = pytest.mark.slow

N = 2000  # 14 MB of dumps: what the re-run reads is still over the size from which worker processes read
# (crawler/procs.py)


def _count(db) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        n = conn.execute("SELECT count(*) FROM postings").fetchone()[0]
        conn.close()
        return n
    except sqlite3.OperationalError:
        return 0


def test_sigkill_mid_ingest_then_rerun_completes(tmp_path):
    write_dumps(tmp_path / "in", N, per_file=100)
    db = tmp_path / "jobs.db"
    args = ["ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF, "--batch-size", "50"]
    proc = subprocess.Popen([sys.executable, "-m", "crawler.cli", *args], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and (not db.exists() or _count(db) < 300):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL

    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    committed = conn.execute("SELECT count(*) FROM postings").fetchone()[0]
    assert 300 <= committed < N, "the kill must land in the middle of the ingest"
    assert committed % 50 == 0, "only whole batches are committed"
    # Whatever was committed is whole: every posting has its sections, FTS row, evaluation and raw input.
    assert indexed_postings(conn) == committed
    assert conn.execute("SELECT count(*) FROM postings WHERE id NOT IN (SELECT posting_id FROM sections)").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM postings WHERE id NOT IN (SELECT posting_id FROM evaluations)").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM postings WHERE raw_input_id NOT IN (SELECT id FROM raw_inputs)").fetchone()[0] == 0
    assert conn.execute("SELECT status FROM runs").fetchall() == [("running",)]
    conn.close()

    again = run_cli(*args)
    assert again.returncode == 0, again.stderr
    assert f"new {N - committed} · updated 0 · unchanged {committed} · quarantined 0" in again.stdout
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT status FROM runs ORDER BY id").fetchall() == [("interrupted",), ("ok",)]
    stats = json.loads(conn.execute("SELECT stats FROM runs WHERE id = 2").fetchone()[0])
    assert stats["jobcrawl/workers"] == 2  # large enough an ingest for worker processes (crawler/run/runner.py)
    assert conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0] == N // 100

    clean = tmp_path / "clean.db"
    run_cli(*args[:3], str(clean), *args[4:], check=True)

    def by_key(path):
        """Records by posting key, ids as keys: ids follow the order in which worker processes delivered postings."""
        records = signal_ids_as_keys(export_records(path))
        key_of = {r["id"]: r["key"] for r in records}
        cluster_of = {r["cluster_id"]: key_of[r["id"]] for r in records if r.get("duplicate_of") is None}
        return {r["key"]: {**{k: v for k, v in r.items() if k != "id"}, "cluster_id": cluster_of.get(r["cluster_id"]),
                           "duplicate_of": key_of.get(r["duplicate_of"]),
                           "dedupe_matched": key_of.get(r.get("dedupe_matched"))} for r in records}

    killed, whole = by_key(db), by_key(clean)
    assert killed.keys() == whole.keys()
    differing = {key: {f: (killed[key].get(f), whole[key].get(f)) for f in killed[key].keys() | whole[key].keys()
                       if killed[key].get(f) != whole[key].get(f)} for key in killed if killed[key] != whole[key]}
    assert differing == {}  # posting key → field → (after the kill and the re-run, in one clean run)
