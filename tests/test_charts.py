"""The market charts' rows from memory (browse/charts.py) against their SQL, and the charts' requests
answered from memory while the facet index is current (from SQLite otherwise)."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import urllib.parse
from pathlib import Path

import pytest

from browse.charts import chart_rows
from crawler.serve.app import make_datasette
from test_browse import build_browse_db, get

FILTERS = [
    pytest.param({"min_postings": "1"}, id="everything"),
    pytest.param({}, id="default-minimum-10"),
    pytest.param({"city": "北京", "min_postings": "3"}, id="one-city"),
    pytest.param({"category": "人工智能", "min_postings": "2"}, id="one-category"),
    pytest.param({"city": "上海", "category": "自动驾驶", "min_postings": "1"}, id="city-and-category"),
    pytest.param({"city": "北京", "kind": "all", "min_postings": "1"}, id="every-kind"),
    pytest.param({"kind": "soft", "min_postings": "1"}, id="soft-skills"),
    pytest.param({"city": "不存在", "min_postings": "1"}, id="a-city-nobody-has"),
    pytest.param({"min_postings": "x"}, id="not-a-number-goes-to-sql"),
]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    """3,000 postings (bench/browse.py): cities and categories with enough salaries, every kind of skill."""
    from bench.browse import generate

    db = tmp_path_factory.mktemp("charts") / "jobs.db"
    generate(db, 3000)
    return db


@pytest.fixture(scope="module", params=["generated", "browse"])
def ds(request, tmp_path_factory):
    db = request.getfixturevalue("generated") if request.param == "generated" else build_browse_db(
        tmp_path_factory.mktemp("charts-browse"))
    return make_datasette(db)


def _sql_rows(ds, chart: dict, params: dict[str, str]) -> list[dict]:
    names = set(re.findall(r"(?<!:):(\w+)", chart["query"]))
    results = asyncio.run(ds.get_database("jobs").execute(chart["query"], {n: params.get(n, "") for n in names}))
    return [dict(zip(results.columns, row)) for row in results.rows]


@pytest.mark.parametrize("chart_name", ["salary-by-city", "salary-by-category", "top-skills"])
@pytest.mark.parametrize("params", FILTERS)
def test_chart_rows_from_memory_equal_their_sql(ds, chart_name, params):
    chart = ds.plugin_config("datasette-dashboards")["market"]["charts"][chart_name]
    index = ds.get_database("jobs").facet_index
    memory = chart_rows(index, chart, params)
    if params.get("min_postings") == "x":
        assert memory is None  # SQLite's cast of 'x' decides
        return
    assert memory == _sql_rows(ds, chart, params)


def test_the_generated_charts_have_rows(generated):
    ds = make_datasette(generated)
    charts = ds.plugin_config("datasette-dashboards")["market"]["charts"]
    index = ds.get_database("jobs").facet_index
    assert [len(chart_rows(index, charts[name], {"city": "北京"})) for name in ("salary-by-category", "top-skills")] == [10, 25]


def test_a_chart_request_is_answered_from_memory_while_the_index_is_current(tmp_path, sqlite_runs):
    db = build_browse_db(tmp_path)
    ds = make_datasette(db)
    chart = ds.plugin_config("datasette-dashboards")["market"]["charts"]["top-skills"]
    path = "/jobs.json?" + urllib.parse.urlencode({"sql": chart["query"], "city": "苏州", "min_postings": "1", "_shape": "objects"})
    data = get(ds, path).json()
    assert data["served_from"] == "memory" and data["rows"][0] == {
        "skill": "C", "kind": "technical", "category": "language", "postings": 2, "of_postings": 2, "share_pct": 100.0,
        "frontier": 0}
    assert sqlite_runs == []
    with sqlite3.connect(db) as conn:  # another process commits: the index is not current any more
        conn.execute("UPDATE postings SET closed_at = '2026-12-01T00:00:00+00:00' WHERE id = 5")
    data = get(ds, path).json()
    assert "served_from" not in data and data["rows"][0]["of_postings"] == 1
    assert sqlite_runs and sqlite_runs[-1].startswith("select * from (with open as")
