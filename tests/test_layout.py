"""The layout the run path promises (#24): all SQL in crawler/db/ (browse/ keeps its read-only queries in
browse/queries.py); one pipeline chain; no process tricks."""

from __future__ import annotations

import re

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
