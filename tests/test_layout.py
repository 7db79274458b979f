"""The layout the run path promises (#24): all SQL in crawler/db/ (browse/ keeps its read-only queries in
browse/queries.py); one pipeline chain; no process tricks; normalize/ pure (no Scrapy, SQLite or crawler)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SQL = re.compile(r"""["'](?:(?:SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|WITH)\s"""  # a statement in capitals
                 r"""|(?i:select\b[^"']*\bfrom\b|insert\s+(?:or\s+\w+\s+)?into\b|update\s+\w+\s+set\b|delete\s+from\b"""
                 r"""|(?:create|drop)\s+(?:temp\s+)?(?:table|index|view|trigger|virtual)\b|alter\s+table\b|pragma\s+\w"""
                 r"""|with\s+\w+\s+as\s*\())""")
SQL_HOMES = ("crawler/db/", "browse/queries.py")


def _sources():
    for folder in ("crawler", "browse", "normalize"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")


@pytest.mark.parametrize("line, found", [
    pytest.param('rows = conn.execute("SELECT id FROM postings")', True, id="upper"),
    pytest.param("conn.execute('pragma data_version')", True, id="lower-pragma"),
    pytest.param('f"with found as (select 1)"', True, id="f-string-cte"),
    pytest.param('"select id from postings where "', True, id="lower-select"),
    pytest.param('"""The ``PRAGMA data_version`` of a file"""', False, id="docstring-prose"),
    pytest.param('click.echo("select a source")', False, id="prose-word"),
    pytest.param('"update the file"', False, id="prose-update"),
])
def test_the_sql_pattern(line, found):
    assert bool(SQL.search(line)) is found


def test_the_pattern_finds_the_sql_of_crawler_db():
    """The scan below is not vacuous: it finds the statements where they belong."""
    found = sum(1 for name, text in _sources() if name.startswith(SQL_HOMES) for line in text.splitlines()
                if SQL.search(line))
    assert found > 100


def test_sql_lives_in_crawler_db():
    outside = [f"{name}:{n}: {line.strip()}" for name, text in _sources() if not name.startswith(SQL_HOMES)
               for n, line in enumerate(text.splitlines(), 1) if SQL.search(line)]
    assert outside == []


def test_no_second_pipeline_list_and_no_process_tricks():
    text = "\n".join(t for _, t in _sources())
    assert [w for w in ("JOBCRAWL_STAGE_PIPELINES", "OffloadPipeline", "prctl", "mallopt") if w in text] == []


IMPURE = ("scrapy", "sqlite3", "_sqlite3", "sqlite_utils", "twisted", "crawler")
_IMPORT_EACH = """
import importlib, json, sys
forbidden = json.loads(sys.argv[1])
found = {}
for name in sys.argv[2:]:
    before = set(sys.modules)
    importlib.import_module(name)
    new = sorted(m for m in set(sys.modules) - before if any(m == f or m.startswith(f + ".") for f in forbidden))
    if new:
        found[name] = new
print(json.dumps(found))
"""


def loaded(root: Path, modules: list[str], forbidden) -> dict[str, list[str]]:
    """``modules`` imported in turn in one fresh interpreter (cwd ``root``): module → the ``forbidden`` modules (or
    their submodules) its import loaded first."""
    out = subprocess.run([sys.executable, "-c", _IMPORT_EACH, json.dumps(list(forbidden)), *modules], cwd=root,
                         capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def impure_imports(root: Path) -> dict[str, list[str]]:
    """Each module of ``root/normalize`` → the top-level impure packages its import loaded first."""
    modules = sorted(f"normalize.{p.stem}" for p in (root / "normalize").glob("*.py") if p.stem != "__init__")
    assert len(modules) > 10
    return {name: sorted({m.partition(".")[0] for m in found})
            for name, found in loaded(root, modules, IMPURE).items()}


@pytest.mark.slow
def test_normalize_imports_no_scrapy_sqlite_or_crawler():
    assert impure_imports(ROOT) == {}


@pytest.mark.slow
def test_the_skills_pipeline_does_not_load_the_storage_package():
    assert loaded(ROOT, ["crawler.pipelines.skills"], ["crawler.db"]) == {}


@pytest.mark.slow
@pytest.mark.parametrize("line, found", [
    pytest.param("import sqlite3", ["_sqlite3", "sqlite3"], id="sqlite3"),
    pytest.param("import sqlite_utils", ["_sqlite3", "sqlite3", "sqlite_utils"], id="sqlite_utils"),
    pytest.param("from crawler import inputs", ["crawler"], id="crawler"),
    pytest.param("import scrapy", ["scrapy", "twisted"], id="scrapy"),
])
def test_the_purity_check_finds_an_impure_import(tmp_path, line, found):
    """The check above is not vacuous: a copy of normalize/ with one impure import is caught, by module."""
    shutil.copytree(ROOT / "normalize", tmp_path / "normalize", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "crawler", tmp_path / "crawler", ignore=shutil.ignore_patterns("__pycache__"))
    dates = tmp_path / "normalize" / "dates.py"
    dates.write_text(dates.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    assert impure_imports(tmp_path) == {"normalize.dates": found}
