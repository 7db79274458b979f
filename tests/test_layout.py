"""The layout the run path promises (#24): all SQL in crawler/store/ (browse/ keeps its read-only queries in
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
SQL_HOME = re.compile(r"crawler/store/|crawler/\w+/store\.py$|browse/queries\.py$")


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


def test_the_pattern_finds_the_sql_of_the_store_modules():
    """The scan below is not vacuous: it finds the statements where they belong."""
    found = sum(1 for name, text in _sources() if SQL_HOME.match(name) for line in text.splitlines()
                if SQL.search(line))
    assert found > 100


def test_sql_lives_in_the_store_modules():
    outside = [f"{name}:{n}: {line.strip()}" for name, text in _sources() if not SQL_HOME.match(name)
               for n, line in enumerate(text.splitlines(), 1) if SQL.search(line)]
    assert outside == []


def test_no_second_pipeline_list_and_no_process_tricks():
    text = "\n".join(t for _, t in _sources())
    assert [w for w in ("JOBCRAWL_STAGE_PIPELINES", "OffloadPipeline", "prctl") if w in text] == []
    # how a helper process starts is crawler/procs.py's alone, its allocator setting included
    assert [name for name, text in _sources() if "mallopt" in text] == ["crawler/procs.py"]


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
    """Each module of ``root/normalize`` (packages in it included) → the top-level impure packages its import
    loaded first."""
    modules = sorted(".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
                     for p in (root / "normalize").rglob("*.py") if p.parent != root / "normalize" or p.stem != "__init__")
    assert len(modules) > 10
    return {name: sorted({m.partition(".")[0] for m in found})
            for name, found in loaded(root, modules, IMPURE).items()}


@pytest.mark.slow
def test_normalize_imports_no_scrapy_sqlite_or_crawler():
    assert impure_imports(ROOT) == {}


@pytest.mark.slow
@pytest.mark.parametrize("line, found", [
    pytest.param("import sqlite3", ["_sqlite3", "sqlite3"], id="sqlite3"),
    pytest.param("import sqlite_utils", ["_sqlite3", "sqlite3", "sqlite_utils"], id="sqlite_utils"),
    pytest.param("from crawler import report", ["crawler"], id="crawler"),
    pytest.param("import scrapy", ["scrapy", "twisted"], id="scrapy"),
])
def test_the_purity_check_finds_an_impure_import(tmp_path, line, found):
    """The check above is not vacuous: a copy of normalize/ with one impure import is caught, by module."""
    shutil.copytree(ROOT / "normalize", tmp_path / "normalize", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "crawler", tmp_path / "crawler", ignore=shutil.ignore_patterns("__pycache__"))
    dates = tmp_path / "normalize" / "dates.py"
    dates.write_text(dates.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    assert impure_imports(tmp_path) == {"normalize.dates": found}


def folder_imports(root: Path) -> dict[str, set[str]]:
    """Each part of ``root/crawler`` (a folder or a top-level module) → the other parts its modules import, at the
    top or inside a function."""
    import ast

    parts = {p.name.removesuffix(".py") for p in (root / "crawler").iterdir()
             if p.is_dir() and (p / "__init__.py").exists() or p.suffix == ".py" and p.name != "__init__.py"}
    edges: dict[str, set[str]] = {}
    for path in (root / "crawler").rglob("*.py"):
        here = path.relative_to(root / "crawler").parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                dotted = name.split(".")
                if dotted[0] == "crawler" and len(dotted) > 1 and dotted[1] in parts and dotted[1] != here:
                    edges.setdefault(here, set()).add(dotted[1])
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of ``edges`` with more than one member (each sorted)."""
    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in edges.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    reached = {node: reach(node) for node in set(edges) | {n for targets in edges.values() for n in targets}}
    found = {tuple(sorted(n for n in reached if n == node or node in reached[n] and n in reached[node]))
             for node in reached}
    return sorted(list(c) for c in found if len(c) > 1)


def test_the_circle_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"c"}}) == []


def test_the_folders_of_crawler_stack_without_a_circle():
    """Issue #39: no folder (or top-level module) of crawler/ imports one that imports it back, even indirectly."""
    edges = folder_imports(ROOT)
    assert {"store", "ingest", "web", "run", "distributed"} <= set(edges)
    assert circles(edges) == []
