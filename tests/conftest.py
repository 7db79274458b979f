"""Shared fixtures: paths, a CLI runner that starts the real `jobcrawl` in a subprocess, fresh databases."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
FIXTURES = ROOT / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"
AS_OF = "2026-11-29T12:00:00+08:00"


def run_cli(*args: str, cwd: Path | None = None, check: bool = False, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `jobcrawl ARGS` in a fresh Python process (a Twisted reactor cannot restart in-process)."""
    env = dict(os.environ, PYTHONUTF8="1")
    proc = subprocess.run([sys.executable, "-m", "crawler.cli", *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"jobcrawl {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def export_records(db: Path) -> list[dict]:
    proc = run_cli("export", "--db", str(db), check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a fresh database file."""
    return tmp_path / "jobs.db"


@pytest.fixture(scope="session")
def seeded_db(tmp_path_factory) -> Path:
    """A database with both seeds ingested at AS_OF (read-only use)."""
    path = tmp_path_factory.mktemp("seeded") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    return path


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "shared_data" in item.keywords and not SHARED_DATA.exists():
            item.add_marker(pytest.mark.skip(reason=f"{SHARED_DATA} is absent"))
