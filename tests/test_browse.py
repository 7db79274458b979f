"""Browsing in Datasette: search index, cell labels, metadata, every page and canned query, escaping.

The database is built through the real CLI (``jobcrawl ingest``) from the two seeds plus four
inputs made from them: a staffing agency's copy of seed 000 (another company and city, a salary
range: a duplicate cluster), a backend posting (other skills, another city and category), a
posting whose title, company and a bullet carry ``<script>`` payloads, and an empty file
(quarantined). Pages are read with Datasette's own test client on the instance ``jobcrawl serve``
builds (``crawler.serve.app.make_datasette``).
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from browse.metadata import build_metadata
from browse.render import listing_url, safe_url, salary_label
from conftest import AS_OF, SEEDS, run_cli
from crawler.store.fts import fts_query
from crawler.serve.store import schema
from crawler.serve.app import make_datasette, prepare

SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
SEED3 = (SEEDS / "003_5eabc84b6ca487f0.txt").read_text(encoding="utf-8")
HOSTILE_TITLE = "<script>window.__jobcrawl_pwned=1;alert('title')</script>模型工程师"
HOSTILE_COMPANY = '恶意<img src=x onerror="window.__jobcrawl_pwned=2">公司'
HOSTILE_BULLET = "<script>window.__jobcrawl_pwned=3;alert('bullet')</script>良好的团队协作能力"
BACKEND_BULLETS = {
    "about": ["负责交易系统后端服务的设计与开发", "参与高并发分布式系统的架构演进"],
    "requirements": ["本科及以上学历，3年以上Java或Go开发经验", "熟悉MySQL、Redis、Kafka等常用中间件",
                     "熟悉Kubernetes与Docker，有微服务落地经验"],
    "responsibilities": ["负责核心业务模块的开发与维护", "保障线上服务的稳定性与性能"],
}


def _replace_block(text: str, start: str, end: str, lines: list[str]) -> str:
    i = text.index(start + "\n") + len(start) + 1
    j = text.index("\n" + end + "\n", i) + 1
    return text[:i] + "\n".join(lines) + "\n" + text[j:]


def browse_inputs(folder: Path) -> Path:
    """Write the test inputs (see the module docstring) into ``folder``; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for seed in SEEDS.glob("*.txt"):
        shutil.copy(seed, folder / seed.name)
    agency = "星云人才" + SEED0[SEED0.index("\n"):]
    agency = agency.replace("杭州 · 人工智能 · 约 190 个在招", "上海 · 人工智能 · 约 320 个在招").replace("\n43K\n", "\n30-50K·14薪\n")
    (folder / "agency_copy.txt").write_text(agency, encoding="utf-8")
    backend = "地平线" + SEED3[SEED3.index("\n"):]
    backend = backend.replace("模型训练优化开发工程师\n模型训练优化开发工程师", "后端开发工程师\n后端开发工程师")
    backend = backend.replace("算法优化工程师", "后端开发").replace("\n3.5万\n", "\n20-30K\n")
    backend = backend.replace("苏州 · 后端开发 · 10 个在招", "北京 · 后端开发 · 120 个在招")
    backend = backend.replace("发布于 2 小时前", "发布于 10 天前")
    backend = _replace_block(backend, "后端开发", "值不值得投", ["Java", "Go", "MySQL", "Kafka"])
    backend = _replace_block(backend, "关于这个职位", "最低要求", BACKEND_BULLETS["about"])
    backend = _replace_block(backend, "最低要求", "工作职责", BACKEND_BULLETS["requirements"])
    backend = _replace_block(backend, "工作职责", "AI 洞察", BACKEND_BULLETS["responsibilities"])
    (folder / "backend.txt").write_text(backend, encoding="utf-8")
    hostile = HOSTILE_COMPANY + SEED3[SEED3.index("\n"):]
    hostile = hostile.replace("模型训练优化开发工程师\n模型训练优化开发工程师", f"{HOSTILE_TITLE}\n{HOSTILE_TITLE}")
    hostile = hostile.replace("良好的团队协作能力", HOSTILE_BULLET)
    (folder / "hostile.txt").write_text(hostile, encoding="utf-8")
    (folder / "empty.txt").write_bytes(b"")
    return folder


def build_browse_db(workdir: Path) -> Path:
    """Ingest :func:`browse_inputs` through the real CLI; give posting 1 a source URL and the
    hostile posting a ``javascript:`` one (text dumps carry no URL). Returns the database path."""
    db = workdir / "jobs.db"
    proc = run_cli("ingest", str(browse_inputs(workdir / "in")), "--db", str(db), "--as-of", AS_OF)
    assert proc.returncode == 1, proc.stderr  # the empty file is quarantined
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE postings SET url = 'https://careers.example.com/jobs/6' WHERE title = 'AI算子开发工程师' AND company = '吉利汽车'")
        conn.execute("UPDATE postings SET url = 'javascript:alert(document.domain)' WHERE company = ?", (HOSTILE_COMPANY,))
    conn.close()
    assert prepare(db, immutable=True)  # the log checkpointed into the file: nobody else has it open
    return db


@pytest.fixture(scope="module")
def browse_db(tmp_path_factory) -> Path:
    return build_browse_db(tmp_path_factory.mktemp("browse"))


@pytest.fixture(scope="module")
def ds(browse_db):
    return make_datasette(browse_db)


def get(ds, path: str):
    return asyncio.run(ds.client.get(path))


def rows(ds, path: str) -> list[dict]:
    base, _, query = path.partition("?")
    response = get(ds, f"{base}.json?_shape=array" + (f"&{query}" if query else ""))
    assert response.status_code == 200, response.text[:500]
    return response.json()


def ids(ds, path: str) -> list[int]:
    return [r["id"] for r in rows(ds, path)]


# --------------------------------------------------------------------------- labels and links


def _pay(high, low=None, months=12, currency="CNY", status="parsed", estimated=0, raw=None):
    return {"salary": high, "salary_monthly_min": low, "salary_months": months, "salary_currency": currency,
            "salary_status": status, "salary_estimated": estimated, "salary_raw": raw}


@pytest.mark.parametrize("row, label", [
    pytest.param(_pay(50000.0, 30000.0, 14), "30–50K ×14", id="range-14-months"),
    pytest.param(_pay(43000.0, 43000.0), "43K", id="single-figure"),
    pytest.param(_pay(4500.0, 2500.0), "2.5–4.5K", id="decimal-thousands"),
    pytest.param(_pay(12500.0, 10000.0, currency="USD"), "$10–12.5K", id="usd-monthly"),
    pytest.param(_pay(9000.0, 8000.0, currency="EUR"), "€8–9K", id="euro"),
    pytest.param(_pay(30000.0, 20000.0, currency="TWD"), "TWD 20–30K", id="unknown-currency-code"),
    pytest.param(_pay(150000.0, 120000.0), "120–150K", id="six-figures"),
    pytest.param(_pay(45000.0, 2500.0, estimated=1), "2.5–45K (est.)", id="estimate"),
    pytest.param(_pay(None, None, status="negotiable", raw="面议"), "面议", id="negotiable"),
    pytest.param(_pay(None, None, status="undisclosed", raw="未披露"), "未披露", id="undisclosed"),
    pytest.param(_pay(None, None, status="unparseable", raw="薪资优厚"), "薪资优厚", id="unparseable-kept-raw"),
    pytest.param(_pay(None, None, status="missing"), None, id="missing"),
    pytest.param(_pay(None, 20000.0, 13), "20K ×13", id="minimum-only"),
])
def test_salary_label(row, label):
    assert salary_label(row) == label


@pytest.mark.parametrize("url, shown", [
    pytest.param("https://careers.example.com/jobs/6", "https://careers.example.com/jobs/6", id="https"),
    pytest.param(" http://example.com/a?b=1 ", "http://example.com/a?b=1", id="http-trimmed"),
    pytest.param("javascript:alert(1)", None, id="javascript"),
    pytest.param("JavaScript:alert(1)", None, id="javascript-mixed-case"),
    pytest.param("data:text/html,<script>alert(1)</script>", None, id="data"),
    pytest.param("//evil.example.com", None, id="scheme-relative"),
    pytest.param("https://", None, id="no-host"),
    pytest.param("http://[::1", None, id="malformed"),
    pytest.param(None, None, id="none"),
])
def test_safe_url(url, shown):
    assert safe_url(url) == shown


def test_listing_url_quotes_values():
    assert listing_url(_skill="C++") == "/jobs/jobs?_skill=C%2B%2B"
    assert listing_url(city="北京", work_mode="远程办公") == "/jobs/jobs?city=%E5%8C%97%E4%BA%AC&work_mode=%E8%BF%9C%E7%A8%8B%E5%8A%9E%E5%85%AC"


# --------------------------------------------------------------------------- metadata


def test_every_table_and_column_is_described(browse_db):
    with sqlite3.connect(browse_db) as conn:
        found = schema(conn)
    meta = build_metadata(found)
    tables = meta["databases"]["jobs"]["tables"]
    assert sorted(found) == sorted(tables)
    missing = {t: [c for c in cols if c not in tables[t].get("columns", {})] for t, cols in found.items()}
    assert {t: cols for t, cols in missing.items() if cols} == {}
    assert all(tables[t].get("title") and tables[t].get("description") for t in found)


def test_column_descriptions_come_from_the_model(browse_db):
    from normalize.models import Posting, Salary

    with sqlite3.connect(browse_db) as conn:
        columns = build_metadata(schema(conn))["databases"]["jobs"]["tables"]
    assert columns["postings"]["columns"]["work_mode"] == Posting.model_fields["work_mode"].description
    assert columns["postings"]["columns"]["salary_months"] == Salary.model_fields["months"].description
    assert columns["jobs"]["columns"]["salary_months"] == Salary.model_fields["months"].description
    assert columns["jobs"]["columns"]["salary"].startswith("Upper monthly base pay")


def test_every_canned_query_has_title_description_and_its_params():
    queries = build_metadata()["databases"]["jobs"]["queries"]
    assert sorted(queries) == ["best_postings", "company_activity", "duplicate_clusters", "hiring_faster",
                               "market_stats", "my_applications", "new_postings", "pay_over_time", "quarantine_review",
                               "run_history", "salary_by_category", "salary_by_city", "search", "skills_with",
                               "source_health", "top_skills", "track", "watch_feed", "watch_matches",
                               "weekly_openings"]
    for name, q in queries.items():
        assert q["title"] and q["description"] and q["hide_sql"] is True, name
        sql = re.sub(r"'[^']*'", "''", q["sql"])  # not the :00 of a string
        assert sorted(q["params"]) == sorted(set(re.findall(r"(?<!:):(\w+)", sql))), name


def test_charts_run_the_canned_queries():
    meta = build_metadata()
    queries = meta["databases"]["jobs"]["queries"]
    charts = meta["plugins"]["datasette-dashboards"]["market"]["charts"]
    assert charts["salary-by-city"]["query"] == f"select * from ({queries['salary_by_city']['sql']}) limit 10"
    assert charts["top-skills"]["query"] == f"select * from ({queries['top_skills']['sql']}) limit 25"
    filters = meta["plugins"]["datasette-dashboards"]["market"]["filters"]
    assert filters["min_postings"] == {"name": "Minimum sample", "type": "number", "min": 1, "default": 10}


def test_plugin_configuration_is_the_metadatas_and_handed_out_as_a_copy(ds):
    dashboards = ds.plugin_config("datasette-dashboards")
    assert dashboards == build_metadata()["plugins"]["datasette-dashboards"]
    dashboards["market"]["title"] = "changed"
    assert ds.plugin_config("datasette-dashboards")["market"]["title"] == "Job market"
    assert ds.plugin_config("datasette-render-markdown", database="jobs", table="postings") is None


# --------------------------------------------------------------------------- pages


def test_every_table_and_view_page_renders(ds, browse_db):
    with sqlite3.connect(browse_db) as conn:
        names = sorted(schema(conn))
    assert {"jobs", "postings", "sections", "evaluations", "clusters", "quarantine", "runs"} <= set(names)
    for name in names:
        response = get(ds, f"/jobs/{name}")
        assert response.status_code == 200, (name, response.text[:300])
    for path in ("/", "/jobs", "/-/dashboards", "/-/dashboards/market?min_postings=10", "/jobcrawl-static/browse.css"):
        assert get(ds, path).status_code == 200, path


def test_listing_sorts_by_score_and_has_the_default_facets(ds):
    data = get(ds, "/jobs/jobs.json?_shape=objects").json()
    assert data["human_description_en"] == "sorted by score descending"
    # our jobcrawl-v1 scores (ingest scores every posting); ties in pk order, descending
    # 4 has no sector word: its mission is 信息不足 and does not pull its overall down (65, not 62)
    assert [(r["id"], r["score"]) for r in data["rows"]] == [(5, 75), (2, 75), (3, 74), (1, 72), (4, 65)]
    facets = {name: [(f["value"], f["count"]) for f in v["results"]] for name, v in data["facet_results"].items()}
    assert sorted(facets) == ["application_status", "category", "city", "company", "score_level", "skills", "work_mode"]
    assert facets["city"] == [("苏州", 2), ("上海", 1), ("北京", 1), ("杭州", 1)]
    assert facets["category"] == [("人工智能", 2), ("算法优化工程师", 2), ("后端开发", 1)]
    assert facets["work_mode"] == [("仅现场办公", 5)]
    assert facets["score_level"] == [("中等", 5)]
    assert facets["skills"][:3] == [("C", 4), ("C++", 4), ("CUDA", 4)]
    assert data["facet_results"]["skills"]["type"] == "array"
    assert ("Kafka", 1) in facets["skills"] or data["facet_results"]["skills"]["truncated"]


def test_postings_table_sorts_by_score_with_the_same_facets(ds):
    data = get(ds, "/jobs/postings.json?_shape=objects").json()
    assert data["human_description_en"] == "sorted by score descending"
    assert [r["id"] for r in data["rows"]] == [5, 2, 3, 1, 4]
    assert sorted(data["facet_results"]) == ["category", "city", "company", "score_level", "skills", "work_mode"]


def _header(page: str) -> list[str]:
    return re.findall(r'<th [^>]*data-column="(\w+)"', page)


def test_postings_page_shows_its_default_columns_and_all_on_request(ds, browse_db):
    default = build_metadata()["databases"]["jobs"]["tables"]["postings"]["default_columns"]
    with sqlite3.connect(browse_db) as conn:
        every = schema(conn)["postings"]
    assert len(default) == 18 and set(default) < set(every)
    page = get(ds, "/jobs/postings?city=苏州").text
    assert _header(page) == ["id", *default]
    assert '<p class="column-choice">19 of 78 columns' in page
    assert 'href="/jobs/postings?city=%E8%8B%8F%E5%B7%9E&amp;_columns=all">all columns</a>' in page
    # the page's links carry the columns as if the visitor had picked them
    assert "city=%E8%8B%8F%E5%B7%9E&amp;_col=title&amp;_col=company&amp;" in page
    everything = get(ds, "/jobs/postings?city=苏州&_columns=all").text
    assert _header(everything) == every
    assert '<p class="column-choice">All 78 columns' in everything
    assert 'href="/jobs/postings?city=%E8%8B%8F%E5%B7%9E">the default columns</a>' in everything
    assert _header(get(ds, "/jobs/postings?_col=title&_col=score").text) == ["id", "title", "score"]
    assert _header(get(ds, "/jobs/postings?_nocol=url&_nocol=source").text) == ["id", *default[:-2]]
    # the JSON and CSV of the table keep every column; other tables have no default columns
    assert get(ds, "/jobs/postings.json?_size=1").json()["columns"] == every
    assert get(ds, "/jobs/postings.csv?_size=1").text.split("\r\n")[0] == ",".join(every)
    assert len(_header(get(ds, "/jobs/jobs?_columns=all").text)) == 31  # 0026: posted_local, posted_source, salary_source; application_status, ghost, likely_employer


def test_default_columns_are_added_once_and_only_where_none_are_picked():
    from browse.columns import with_default_columns

    assert with_default_columns(b"", ["title", "a b"]) == b"_col=title&_col=a%20b"
    assert with_default_columns(b"city=%E5%8C%97", ["title"]) == b"city=%E5%8C%97&_col=title"
    assert with_default_columns(b"_nocol=url", ["title", "url"]) == b"_nocol=url&_col=title&_col=url"
    for picked in (b"_col=score", b"city=x&_columns=all"):
        assert with_default_columns(picked, ["title"]) == picked


def test_table_cells_are_written_as_datasettes_template_writes_them(ds, browse_db):
    """browse/columns.py cells_html against the cell of Datasette's own _table.html, on every column
    of every posting (the hostile one too)."""
    import datasette
    from datasette.views.table import display_columns_and_rows

    from browse.columns import cells_html

    theirs = (Path(datasette.__file__).parent / "templates" / "_table.html").read_text(encoding="utf-8")
    cell = re.search(r"\{% for cell in row %\}\s*(<td .*?</td>)\s*\{% endfor %\}", theirs).group(1)
    template = ds.jinja_env.from_string("{% for cell in row %}" + cell + "{% endfor %}")

    async def both():
        results = await ds.get_database("jobs").execute("select * from postings order by id")
        _, display_rows = await display_columns_and_rows(ds, "jobs", "postings", results.description, results.rows,
                                                         link_column=True, truncate_cells=2048)
        return [(await template.render_async(row=row), str(cells_html(row))) for row in display_rows]

    pairs = asyncio.run(both())
    assert len(pairs) == 5 and all(expected == got for expected, got in pairs)
    assert any("&lt;script&gt;window.__jobcrawl_pwned=1" in got for _, got in pairs)


def test_skill_facet_filter(ds):
    assert ids(ds, "/jobs/jobs?skills__arraycontains=Kafka") == [4]
    assert ids(ds, "/jobs/jobs?skills__arraycontains=CUDA&city=上海") == [3]


def test_skill_filter_reads_posting_skills(ds):
    assert ids(ds, "/jobs/jobs?_skill=Kafka") == [4]
    assert ids(ds, "/jobs/jobs?_skill=CUDA&city=上海") == [3]
    both = "/jobs/postings?{0}=CUDA&{0}=Python"
    assert sorted(ids(ds, both.format("_skill"))) == sorted(ids(ds, both.format("skills__arraycontains"))) != []
    data = get(ds, "/jobs/jobs.json?_skill=Kafka&_shape=objects").json()
    assert data["human_description_en"] == 'where skill is "Kafka" sorted by score descending'
    skills = {f["value"]: f for f in data["facet_results"]["skills"]["results"]}
    assert skills["Kafka"]["selected"] and skills["Kafka"]["count"] == 1
    assert "_skill" not in skills["Kafka"]["toggle_url"]
    assert not skills["Java"]["selected"]
    assert skills["Java"]["toggle_url"] == "http://localhost/jobs/jobs.json?_skill=Kafka&_shape=objects&_skill=Java"
    # the filter Datasette's own array facet links to marks a value selected too
    data = get(ds, "/jobs/jobs.json?skills__arraycontains=Kafka&_shape=objects").json()
    kafka = next(f for f in data["facet_results"]["skills"]["results"] if f["value"] == "Kafka")
    assert kafka["selected"] and "Kafka" not in kafka["toggle_url"]


FACET_PAGES = ["/jobs/jobs", "/jobs/jobs?city=苏州", "/jobs/jobs?_search=算子", "/jobs/postings?_search=CUDA&_facet=seniority",
               "/jobs/jobs?_skill=CUDA&_facet_size=2", "/jobs/postings?work_mode=仅现场办公&_facet_array=tags",
               "/jobs/jobs?_search=nothing-matches", "/jobs/postings?_facet=city&city=北京"]


def _facets(ds, path: str) -> dict:
    base, _, query = path.partition("?")
    data = get(ds, f"{base}.json?_shape=objects&{query}").json()
    return {name: {**facet, "results": [{k: v for k, v in r.items() if name != "skills" or k != "toggle_url"} for r in facet["results"]]}
            for name, facet in data["facet_results"].items()}


@pytest.mark.parametrize("path", FACET_PAGES)
def test_indexed_facets_equal_datasettes_own(ds, browse_db, path):
    """The served instance counts facets from its FacetIndex; one without the index (as while the
    file changes) runs Datasette's facet queries, and one query over posting_skills for the skills.
    Same facets, values, counts, order, truncation and links (the skills values link to _skill
    instead of skills__arraycontains)."""
    assert ds.get_database("jobs").facet_index is not None
    assert _facets(ds, path) == _facets(make_datasette(browse_db, indexed=False), path)


def test_facet_index_counts(browse_db):
    from browse.facets import FacetIndex

    with sqlite3.connect(browse_db) as conn:
        index = FacetIndex.load(conn)
        every = index.ids(conn, "select id from postings", {})
        assert sorted(every.tolist()) == [1, 2, 3, 4, 5]
        assert index.ids(conn, "select id from postings where city = :c", {"c": "苏州"}).tolist() == [2, 5]
    assert index.counts("city", every, 2) == [("苏州", 2), ("上海", 1)]
    assert index.counts("city", every[:0], 5) == []
    assert index.counts("skills", every, 3) == [("C", 4), ("C++", 4), ("CUDA", 4)]
    with sqlite3.connect(browse_db) as conn:
        skills = json.loads(conn.execute("SELECT skills FROM postings WHERE id = 4").fetchone()[0])
        kinds = dict(conn.execute("SELECT name, kind FROM skills"))
    assert "back end" in skills and kinds["back end"] == "domain"
    assert index.counts("skills", np.array([4]), 50) == sorted((s, 1) for s in skills if kinds[s] == "technical")
    # a skill of another kind is counted when the page is filtered by it
    assert ("back end", 1) in index.counts("skills", np.array([4]), 50, also=["back end"])


@pytest.mark.parametrize("gather_limit", [0, 10**9], ids=["bitsets", "one-by-one"])
@pytest.mark.parametrize("popcount", ["numpy", "bytes"])
def test_array_tally_counts_each_posting_once(monkeypatch, gather_limit, popcount):
    from browse.facets import CodedArray

    holders = [np.arange(0, 1000, 2), np.array([5]), np.array([7, 900]), np.array([], dtype=np.int64)]
    array = CodedArray(["even", "five", "pair", "none"], holders, 1000)
    assert array.dense == [0] and sorted(array.sparse) == [1, 2, 3]
    monkeypatch.setattr(CodedArray, "GATHER_LIMIT", gather_limit)
    if popcount == "bytes":
        monkeypatch.delattr(np, "bitwise_count", raising=False)
    for ids in (np.arange(1000), np.array([5, 6, 7, 8]), np.array([], dtype=np.int64), np.arange(0, 1000, 3)):
        chosen = set(ids.tolist())
        assert array.tally(ids).tolist() == [len(chosen & set(h.tolist())) for h in holders]


def test_facets_whose_rows_ran_out_of_time_are_named(browse_db, monkeypatch):
    from browse.facets import FacetIndex

    def interrupted(self, conn, sql, params):
        raise sqlite3.OperationalError("interrupted")

    monkeypatch.setattr(FacetIndex, "ids", interrupted)
    ds = make_datasette(browse_db)
    page = get(ds, "/jobs/jobs?_facet=seniority&work_mode__not=远程办公").text  # not an equality: the ids need a query
    assert "These facets timed out: city, company, category, work_mode, score_level, application_status, skills" in page
    data = get(ds, "/jobs/jobs.json?_shape=objects&_facet=seniority&work_mode__not=远程办公").json()
    assert list(data["facet_results"]) == ["seniority"]  # not indexed: Datasette's own query
    assert list(get(ds, "/jobs/jobs.json?_shape=objects&_search=CUDA").json()["facet_results"]) == [
        "city", "company", "category", "work_mode", "score_level", "application_status", "skills"]  # search only: no query


@pytest.mark.parametrize("ratio, form", [(25, "+id in ("), (1, "id in (")], ids=["many-matches-scan", "few-matches-seek"])
def test_search_and_skill_filters_scan_or_seek(browse_db, monkeypatch, ratio, form):
    import browse.filters

    monkeypatch.setattr(browse.filters, "SCAN_RATIO", ratio)
    for ds, written in ((make_datasette(browse_db), form), (make_datasette(browse_db, indexed=False), "id in (")):
        for path, found in (("_search=kafka", [4]), ("_skill=Kafka", [4]), ("_search=CUDA&_skill=C%2B%2B", [1, 2, 3, 5])):
            # a facet of Datasette's own runs the clauses too: not the page's query alone
            data = get(ds, f"/jobs/jobs.json?_shape=objects&_facet=seniority&{path}").json()
            assert sorted(r["id"] for r in data["rows"]) == found
            sql = data["query"]["sql"]
            assert sql.count(written) == path.count("=") and (written == "+id in (" or "+id" not in sql), sql


SEARCHED = "jobcrawl_search(:search, id)"


@pytest.mark.parametrize("path, form", [
    pytest.param("_search=kafka", SEARCHED, id="search-alone-checked-in-memory"),
    pytest.param("_skill=Kafka&_sort_desc=score", "+id in (", id="skill-alone-in-score-order"),
    pytest.param("_search=kafka&city=北京", SEARCHED, id="and-an-equality-on-an-indexed-column"),
    pytest.param("_search=kafka&salary__gte=10000", "id in (", id="and-another-filter-the-count-runs"),
    pytest.param("_search=kafka&_sort=title", "id in (", id="sorted-by-another-column"),
    pytest.param("_search=kafka&_facet=seniority", "id in (", id="a-facet-of-datasettes-own"),
    pytest.param("_search=kafka&_stream=on", "id in (", id="every-row"),
])
def test_a_page_whose_query_runs_alone_in_score_order_scans_from_fewer_matches(browse_db, monkeypatch, path, form):
    """One match of five postings: seeking for SCAN_RATIO 1, scanning for PAGE_SCAN_RATIO 25 when
    the page's query is the only one with the clause and reads in score order (a search: checked
    against its matches in memory)."""
    import browse.filters

    monkeypatch.setattr(browse.filters, "SCAN_RATIO", 1)
    monkeypatch.setattr(browse.filters, "PAGE_SCAN_RATIO", 25)
    data = get(make_datasette(browse_db), f"/jobs/jobs.json?_shape=objects&{path}").json()
    assert [r["id"] for r in data["rows"]] == [4]
    sql = data["query"]["sql"]
    assert sql.count(form) == 1 and (form != "id in (" or ("+id" not in sql and "jobcrawl_search" not in sql)), sql


@pytest.mark.parametrize("path", ["_search=CUDA", "_search=算子&_size=2", "_search=工程师&_skill=C%2B%2B", "_search=吉利&_sort_desc=score",
                                  "_search=nothing-matches"])
def test_search_pages_checked_in_memory_list_what_the_search_index_matches(browse_db, path):
    """Every page of a search read alone (following _next), against an unindexed instance (the
    subquery, no memory): the same postings in the same score order (ties in score fall as the
    query plan reads them, with either form)."""
    memory, plain = make_datasette(browse_db), make_datasette(browse_db, indexed=False)

    def pages(ds):
        rows, sqls, url = [], [], f"/jobs/jobs.json?_shape=objects&{path}"
        while url:
            data = get(ds, url).json()
            rows += [(r["score"], r["id"]) for r in data["rows"]]
            sqls.append(data["query"]["sql"])
            url = data["next_url"] and data["next_url"].removeprefix("http://localhost")
        return rows, sqls, data["filtered_table_rows_count"]

    (ours, sqls, count), (theirs, _, expected) = pages(memory), pages(plain)
    assert [s for s, _ in ours] == [s for s, _ in theirs] == sorted((s for s, _ in ours), reverse=True)
    assert sorted(ours) == sorted(theirs) and len(set(ours)) == len(ours) == count == expected
    assert (ours != []) == ("nothing" not in path)
    # no match: seeking, nothing to read; the next pages (_next) count their facets with a query
    assert [SEARCHED in sql for sql in sqls] == ([bool(ours), False] if "_size=2" in path else [bool(ours)])


def test_the_search_function_reads_the_index_when_it_holds_no_matches(ds):
    sql = "select id from postings where jobcrawl_search(:q, id) order by id"
    for query, found in (("kafka", [4]), ("CUDA", [1, 2, 3, 5]), ("算子 Java", [])):
        data = get(make_datasette(ds.get_database("jobs").path), f"/jobs.json?_shape=array&sql={sql}&q={query}").json()
        assert [r["id"] for r in data] == found


@pytest.mark.parametrize("path, queried", [
    pytest.param("/jobs/jobs?_search=CUDA", False, id="search"),
    pytest.param("/jobs/postings?_skill=CUDA&_search=算子", False, id="skill-and-search"),
    pytest.param("/jobs/jobs?_skill=Kafka", False, id="skill"),
    pytest.param("/jobs/jobs?_search=nothing-matches", False, id="search-matching-nothing"),
    pytest.param("/jobs/jobs?_search=CUDA&city=苏州", False, id="search-and-city"),
    pytest.param("/jobs/jobs?city=苏州", False, id="city"),
    pytest.param("/jobs/postings?city__exact=苏州&work_mode=仅现场办公", False, id="exact-city-and-work-mode"),
    pytest.param("/jobs/jobs?city=火星", False, id="a-city-no-posting-has"),
    pytest.param("/jobs/jobs?city=苏州&city=上海", False, id="two-cities-none-has-both"),
    pytest.param("/jobs/postings", False, id="nothing"),
    pytest.param("/jobs/jobs?city__not=苏州", True, id="not-an-equality"),
    pytest.param("/jobs/jobs?seniority=普通员工", True, id="a-column-the-index-does-not-hold"),
    pytest.param("/jobs/jobs?_skill=CUDA&salary__gte=10000", True, id="skill-and-a-range"),
])
def test_the_count_of_a_page_selected_in_memory_comes_from_the_indexes(browse_db, sqlite_runs, path, queried):
    """Search, skills and equalities on the index's columns: no count query; any other filter: Datasette's."""
    base, _, query = path.partition("?")
    json_path = f"{base}.json?_shape=objects&{query}"
    expected = get(make_datasette(browse_db, indexed=False), json_path).json()["filtered_table_rows_count"]
    sqlite_runs.clear()
    assert get(make_datasette(browse_db), json_path).json()["filtered_table_rows_count"] == expected
    assert len([sql for sql in sqlite_runs if sql.startswith("select count(*)")]) == int(queried)


@pytest.mark.parametrize("path, index", [
    pytest.param("/jobs/jobs?_search=CUDA", "COVERING INDEX idx_postings_id", id="search"),
    pytest.param("/jobs/postings?_skill=CUDA", "COVERING INDEX idx_posting_skills_skill_posting_id", id="skill"),
])
def test_counts_read_narrow_indexes(ds, browse_db, sqlite_runs, path, index):
    get(make_datasette(browse_db, indexed=False), path)
    count = next(sql for sql in sqlite_runs if sql.startswith("select count(*)"))
    with sqlite3.connect(browse_db) as conn:
        conn.create_function("escape_fts", 1, fts_query)
        plan = " | ".join(r[3] for r in conn.execute(f"EXPLAIN QUERY PLAN {count}", {"search": "CUDA", "skill0": "CUDA"}))
    assert index in plan


@pytest.mark.parametrize("search, found", [
    pytest.param("算子", [1, 2, 3, 5], id="two-character-chinese"),
    pytest.param("CUDA", [1, 2, 3, 5], id="english-word"),
    pytest.param("cuda", [1, 2, 3, 5], id="english-lower-case"),
    pytest.param("算子 CUDA", [1, 2, 3, 5], id="both"),
    pytest.param("kafka", [4], id="backend-skill"),
    pytest.param("交", [4], id="one-character"),
    pytest.param("吉利", [1, 3], id="company-and-the-copy-naming-it"),
    pytest.param('"AI算子"', [1, 3], id="phrase"),
    pytest.param("工程师 Java", [4], id="chinese-and-english"),
    pytest.param("算子 Java", [], id="nothing-has-both"),
    pytest.param("pwned", [5], id="hostile-text-is-text"),
])
def test_search_box(ds, search, found):
    for table in ("jobs", "postings"):
        assert sorted(ids(ds, f"/jobs/{table}?_search={search}")) == found, table


def test_search_results_page_shows_the_postings(ds):
    page = get(ds, "/jobs/jobs?_search=算子").text
    assert "4 rows where search matches" in page
    assert "吉利汽车" in page and "地平线" not in page


# --------------------------------------------------------------------------- canned queries

PAY = ("salary", "salary_monthly_min", "salary_months")


def pick(rows: list[dict], *keys: str) -> list[tuple]:
    return [tuple(r[k] for k in keys) for r in rows]


@pytest.mark.parametrize("path, keys, expected", [
    pytest.param("best_postings", ("id", "score", *PAY), [
        (2, 75, 35000.0, 35000.0, 12), (5, 75, 35000.0, 35000.0, 12), (3, 74, 50000.0, 30000.0, 14),
        (1, 72, 43000.0, 43000.0, 12), (4, 65, 30000.0, 20000.0, 12)], id="best-all"),
    pytest.param("best_postings?city=苏州", ("id", "city"), [(2, "苏州"), (5, "苏州")], id="best-city"),
    pytest.param("best_postings?skill=cuda&min_monthly=40000", ("id", "company", "salary"),
                 [(3, "星云人才", 50000.0), (1, "吉利汽车", 43000.0)], id="best-skill-alias-and-pay"),
    pytest.param("best_postings?skill=卡夫卡", ("id",), [], id="best-unknown-skill"),
    pytest.param("best_postings?skill=Kafka&work_mode=仅现场办公", ("id", "title"), [(4, "后端开发工程师")], id="best-skill-work-mode"),
    pytest.param("best_postings?work_mode=远程办公", ("id",), [], id="best-remote-none"),
    # five postings: min_postings=1 lets groups this small through (the default 10 leaves them all out)
    pytest.param("salary_by_city?min_postings=1", ("city", "currency", "postings", "p25", "median", "p75"), [
        ("苏州", "CNY", 2, 35000.0, 35000.0, 35000.0), ("杭州", "CNY", 1, 43000.0, 43000.0, 43000.0),
        ("上海", "CNY", 1, 40000.0, 40000.0, 40000.0), ("北京", "CNY", 1, 25000.0, 25000.0, 25000.0)], id="salary-city"),
    pytest.param("salary_by_city?category=人工智能&min_postings=1", ("city", "postings", "median"),
                 [("杭州", 1, 43000.0), ("上海", 1, 40000.0)], id="salary-city-in-category"),
    # 人工智能: midpoints 40000 (30–50K) and 43000: p25 = 40000 + 0.25 × 3000, median 41500, p75 42250.
    pytest.param("salary_by_category?min_postings=1", ("category", "currency", "postings", "p25", "median", "p75"), [
        ("人工智能", "CNY", 2, 40750.0, 41500.0, 42250.0), ("算法优化工程师", "CNY", 2, 35000.0, 35000.0, 35000.0),
        ("后端开发", "CNY", 1, 25000.0, 25000.0, 25000.0)], id="salary-category"),
    pytest.param("salary_by_category?city=苏州&min_postings=2", ("category", "postings", "median"),
                 [("算法优化工程师", 2, 35000.0)], id="salary-category-in-city"),
    pytest.param("salary_by_category?city=苏州&min_postings=3", ("category",), [], id="salary-below-the-minimum-sample"),
    pytest.param("salary_by_city", ("city",), [], id="salary-default-minimum-10"),
    pytest.param("top_skills?city=北京&min_postings=1", ("skill", "category", "postings", "of_postings", "share_pct"), [
        ("Docker", "infra", 1, 1, 100.0), ("Go", "language", 1, 1, 100.0), ("Java", "language", 1, 1, 100.0),
        ("Kafka", "data", 1, 1, 100.0), ("Kubernetes", "infra", 1, 1, 100.0), ("MySQL", "data", 1, 1, 100.0),
        ("Redis", "data", 1, 1, 100.0), ("distributed systems", "infra", 1, 1, 100.0),
        ("high concurrency", "infra", 1, 1, 100.0), ("microservices", "infra", 1, 1, 100.0), ("middleware", "infra", 1, 1, 100.0)],
        id="technical-skills-in-city"),
    pytest.param("top_skills?city=北京&min_postings=1&kind=domain", ("skill", "kind", "postings"),
                 [("back end", "domain", 1)], id="domain-skills-in-city"),
    pytest.param("top_skills?city=北京", ("skill",), [], id="top-skills-default-minimum-10"),
    pytest.param("skills_with?skill=kafka&min_postings=1", ("skill", "kind", "postings", "of_postings", "pct_of_postings"), [
        ("Docker", "technical", 1, 1, 100.0), ("Go", "technical", 1, 1, 100.0), ("Java", "technical", 1, 1, 100.0),
        ("Kubernetes", "technical", 1, 1, 100.0), ("MySQL", "technical", 1, 1, 100.0), ("Redis", "technical", 1, 1, 100.0),
        ("back end", "domain", 1, 1, 100.0), ("distributed systems", "technical", 1, 1, 100.0),
        ("high concurrency", "technical", 1, 1, 100.0), ("microservices", "technical", 1, 1, 100.0),
        ("middleware", "technical", 1, 1, 100.0)], id="co-occurring"),
    pytest.param("skills_with?skill=kafka", ("skill",), [], id="co-occurring-default-minimum-10"),
    pytest.param("search?q=算子 杭州", ("id", "title", "company", "city"), [(1, "AI算子开发工程师", "吉利汽车", "杭州")],
                 id="search-city-and-word"),
    pytest.param("search?q=kafka", ("id", "matched"), [(4, "Java Go MySQL \ue001Kafka\ue002\n负责交易系统后端服务的设计与开发\n参与高并发分布式系…")],
                 id="search-snippet"),
    pytest.param("search?q=", ("id",), [], id="search-nothing"),
    # posted times in the source's zone (Chinese postings: Asia/Shanghai), judged by their post time
    pytest.param("new_postings", ("id", "posted", "new_by", "posted_source"), [
        (2, "2026-11-29T10:00:00+08:00", "posted", "as_of"), (5, "2026-11-29T10:00:00+08:00", "posted", "as_of"),
        (1, "2026-11-29T08:00:00+08:00", "posted", "as_of"), (3, "2026-11-29T08:00:00+08:00", "posted", "as_of")],
        id="new-7-days"),
    pytest.param("new_postings?days=11", ("id",), [(2,), (5,), (1,), (3,), (4,)], id="new-11-days"),
    pytest.param("duplicate_clusters", ("cluster", "size", "companies", "cities", "cross_company", "posting_id", "title",
                                        "company", "members"),
                 [(1, 2, 2, 2, 1, 1, "AI算子开发工程师", "吉利汽车", "1, 3")], id="clusters"),
    pytest.param("company_activity?company=汽车", ("company", "postings", "open", "cities", "categories", "open_jobs_stated", "mean_score"),
                 [("吉利汽车", 1, 1, 1, "人工智能", 1900, 72.0)], id="company"),
    pytest.param("quarantine_review", ("reason", "detail", "source", "locator", "position", "run_id", "text_start"),
                 [("empty", "empty file (0 bytes)", "textdump", "empty.txt", -1, 1, None)], id="quarantine"),
    pytest.param("quarantine_review?reason=binary", ("reason",), [], id="quarantine-other-reason"),
    # five postings: every group is below the minimum sample, so counts but no quartiles (样本不足)
    pytest.param("market_stats?scope=category", ("scope", "key", "n", "median"), [
        ("category", "人工智能", 2, None), ("category", "算法优化工程师", 2, None), ("category", "后端开发", 1, None)],
        id="market-stats-too-small"),
    pytest.param("run_history", ("id", "kind", "status", "files", "found", "new", "updated", "unchanged", "quarantined"),
                 [(1, "ingest", "partial", 6, 5, 5, 0, 0, 1)], id="runs"),
])
def test_canned_query(ds, path, keys, expected):
    assert get(ds, "/jobs/" + path).status_code == 200
    assert pick(rows(ds, "/jobs/" + path), *keys) == expected


def test_top_skills_shares(ds):
    top = rows(ds, "/jobs/top_skills?min_postings=5")
    assert len(top) == 50 and {r["kind"] for r in top} == {"technical"} and {r["of_postings"] for r in top} == {5}
    assert pick(top[:3], "skill", "postings", "share_pct") == [("C", 4, 80.0), ("C++", 4, 80.0), ("CUDA", 4, 80.0)]
    assert ("operator development", 4, 80.0, 1) in pick(top, "skill", "postings", "share_pct", "frontier")


def test_company_activity_lists_every_company(ds):
    assert pick(rows(ds, "/jobs/company_activity"), "company", "postings") == [
        ("初速度", 1), ("吉利汽车", 1), ("地平线", 1), (HOSTILE_COMPANY, 1), ("星云人才", 1)]


def test_canned_query_pages_show_readable_salaries(ds):
    page = get(ds, "/jobs/best_postings").text
    assert '<span class="salary">30–50K ×14</span>' in page
    assert '<span class="salary">43K</span>' in page


# --------------------------------------------------------------------------- the posting page


def _text(page: str) -> str:
    """The page's text as a reader sees it: tags dropped, entities decoded, whitespace collapsed."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_posting_page_reads_as_a_posting(ds):
    page = get(ds, "/jobs/postings/1").text
    text = _text(page)
    assert "<title>AI算子开发工程师 · 吉利汽车</title>" in page
    assert "Salary 43K · 比人工智能中位数低" in text
    assert "Score 72 中等 (ours, jobcrawl-v1)" in text
    for heading in ("关于这个职位 · About", "最低要求 · Requirements", "工作职责 · Responsibilities", "优先资格 · Preferred",
                    "优点 · Pros", "面试指南 · Interview", "The app&#39;s evaluation: 72"):
        assert f">{heading}</h" in page, heading
    assert "<li>本职位隶属于吉利汽车集团，专注于智能驾驶或智能座舱领域的大模型计算性能优化</li>" in page
    assert page.count('<section class="jd-section') == 4
    assert "<li>薪资信号: 市场水准 (35K-50K/月)</li>" in page
    assert "<strong>薪资福利</strong> 70 中等" in page
    assert '<a href="/jobs/jobs?_skill=CUDA">CUDA</a>' in page
    assert '<a class="skill-page" href="/jobs/skills/CUDA"' in page
    assert '<a class="source-url" href="https://careers.example.com/jobs/6" rel="noopener noreferrer nofollow">' in page
    assert 'Duplicate cluster <a href="/jobs/clusters/1">#1</a>' in page
    assert '<a href="/jobs/postings/3">AI算子开发工程师</a> · 星云人才 · 上海' in page
    assert "All columns of this row" in page


def test_posting_page_of_the_agency_copy_names_the_original(ds):
    page = get(ds, "/jobs/postings/3").text
    assert 'a duplicate of <a href="/jobs/postings/1">posting 1</a>' in page
    assert "Salary 30–50K ×14 as written: 30-50K·14薪" in _text(page)


LISTING = ["title", "company", "city", "salary", "score", "posted_at", "source"]


def _row(page: str, posting_id: int) -> str:
    return re.search(rf'<tr><td class="col-title type-str"><a class="posting-link" href="/jobs/postings/{posting_id}">.*?</tr>',
                     page).group()


@pytest.mark.parametrize("row, shown", [
    pytest.param({"posted_at": "2026-11-28T20:00:00+00:00", "posted_local": "2026-11-29T04:00:00+08:00"},
                 '<span title="2026-11-29T04:00:00+08:00 (2026-11-28T20:00:00 UTC)">2026-11-29</span>',
                 id="the-date-in-shanghai-not-utc"),
    pytest.param({"posted_at": "2026-11-28T20:00:00+00:00", "posted_local": "2026-11-28T15:00:00-05:00"},
                 '<span title="2026-11-28T15:00:00-05:00 (2026-11-28T20:00:00 UTC)">2026-11-28</span>',
                 id="new-york"),
    pytest.param({"posted_at": "2026-11-28T20:00:00+00:00", "posted_local": "2026-11-28T20:00:00+00:00"},
                 '<span title="2026-11-28T20:00:00+00:00">2026-11-28</span>', id="utc-source"),
    pytest.param({"posted_at": "2026-11-28T20:00:00+00:00"},
                 '<span title="2026-11-28T20:00:00+00:00">2026-11-28</span>', id="no-local-column-on-the-page"),
])
def test_the_post_date_is_shown_in_the_postings_zone(row, shown):
    from browse.plugins.jobcrawl_browse import _listing_cell

    assert str(_listing_cell(row, row["posted_at"], "posted_at", None)) == shown


def test_listing_is_compact_and_each_title_opens_its_posting(ds):
    page = get(ds, "/jobs/jobs").text
    assert _header(page) == LISTING
    assert '<p class="column-choice">7 of 31 columns' in page and 'href="/jobs/jobs?_columns=all">all columns</a>' in page
    assert _row(page, 4) == (
        '<tr><td class="col-title type-str"><a class="posting-link" href="/jobs/postings/4">后端开发工程师</a></td>'
        '<td class="col-company type-str">地平线</td><td class="col-city type-str">北京</td>'
        '<td class="col-salary type-float"><span class="salary">20–30K</span></td>'
        '<td class="col-score type-int"><span class="score">65</span> <span class="level">中等</span></td>'  # #27's rules (62 before)
        '<td class="col-posted_at type-str"><span title="2026-11-19T12:00:00+08:00 (2026-11-19T04:00:00 UTC)">'
        '2026-11-19</span></td><td class="col-source type-str">textdump</td></tr>')
    assert ('<td class="col-source type-str"><a class="source-url" href="https://careers.example.com/jobs/6" '
            'rel="noopener noreferrer nofollow">textdump</a></td>') in _row(page, 1)
    assert '<td class="col-source type-str">textdump</td>' in _row(page, 5)  # a javascript: URL is not linked
    # the full row is one click away, and the JSON keeps every column
    every = get(ds, "/jobs/jobs?_columns=all").text
    assert _header(every)[:9] == ["id", *LISTING[:5], "score_level", "posted_at", "source"]
    assert '<a href="/jobs/postings/4">4</a>' in every
    assert len(get(ds, "/jobs/jobs.json?_size=1").json()["columns"]) == 31


def test_a_searched_listing_shows_the_matched_text(ds):
    page = get(ds, "/jobs/jobs?_search=kafka").text
    assert '<th class="col-matched" scope="col">matched</th>' in page
    assert _row(page, 4).endswith('<td class="col-source type-str">textdump</td><td class="col-matched"><span class="matched">'
                                  'Java Go MySQL <mark>Kafka</mark> · 负责交易系统后端服务的设计与开发 · 参与高并发分布式系…</span></td></tr>')
    hostile = get(ds, "/jobs/postings?_search=pwned").text
    assert ('<td class="col-matched"><span class="matched">&lt;script&gt;window.__jobcrawl_<mark>pwned</mark>=1;'
            'alert(&#39;title&#39;)&lt;/script&gt;模型工程师</span></td>') in hostile
    assert "<script>window" not in hostile
    assert 'class="col-matched"' not in get(ds, "/jobs/jobs").text


def test_canned_query_rows_link_to_their_posting(ds):
    page = get(ds, "/jobs/duplicate_clusters").text
    assert '<td class="col-title"><a href="/jobs/postings/1">AI算子开发工程师</a></td>' in page
    assert '<td class="col-posting_id"><a href="/jobs/postings/1">1</a></td>' in page
    assert '<td class="col-city"><a href="/jobs/jobs?city=%E6%9D%AD%E5%B7%9E">杭州</a></td>' in page
    found = get(ds, "/jobs/search?q=kafka").text
    assert '<td class="col-title"><a href="/jobs/postings/4">后端开发工程师</a></td>' in found
    assert "<mark>Kafka</mark>" in found
    skills = get(ds, "/jobs/top_skills?min_postings=1").text
    assert '<td class="col-skill"><a class="skill" href="/jobs/jobs?_skill=CUDA">CUDA</a></td>' in skills
    assert '<td class="col-id">1</td>' in get(ds, "/jobs/quarantine_review").text  # no title: not a posting


def test_canned_queries_hide_their_sql(ds):
    page = get(ds, "/jobs/best_postings").text
    assert '<span class="show-hide-sql">(<a href="/jobs/best_postings?_show_sql=1">show</a>)</span>' in page
    assert "<title>Best postings · jobs</title>" in page
    assert "<textarea" not in page and "with wanted as" not in page
    assert "with wanted as" in get(ds, "/jobs/best_postings?_show_sql=1").text


def test_the_skills_facet_counts_technical_skills(ds, browse_db):
    with sqlite3.connect(browse_db) as conn:
        kinds = dict(conn.execute("SELECT name, kind FROM skills"))
        soft = [r[0] for r in conn.execute("SELECT DISTINCT skill FROM posting_skills JOIN skills ON name = skill"
                                           " WHERE kind = 'soft'")]
    assert "teamwork" in soft
    for instance in (ds, make_datasette(browse_db, indexed=False)):
        data = get(instance, "/jobs/jobs.json?_shape=objects&_facet_size=100").json()
        shown = [f["value"] for f in data["facet_results"]["skills"]["results"]]
        assert shown and {kinds[s] for s in shown} == {"technical"}
        data = get(instance, "/jobs/jobs.json?_shape=objects&_facet_size=100&_skill=teamwork").json()
        assert {"value": "teamwork", "count": 2, "selected": True} == {
            k: v for k, v in next(f for f in data["facet_results"]["skills"]["results"] if f["value"] == "teamwork").items()
            if k in ("value", "count", "selected")}


def test_postings_table_links_skills(ds):
    page = get(ds, "/jobs/postings").text
    assert '<a class="skill" href="/jobs/jobs?_skill=Kafka">Kafka</a>' in page
    assert " … +16</span>" in page  # posting 2 has 24 skills, 8 shown
    assert '<a class="posting-link" href="/jobs/postings/4">后端开发工程师</a>' in page


def test_column_documentation_is_under_a_columns_disclosure(ds):
    page = get(ds, "/jobs/postings").text
    docs = page.index('<details class="column-docs">\n  <summary>columns</summary>')
    assert "<dt>salary_monthly_max</dt>" in page[docs:] and page.count('<dl class="column-descriptions">') == 1
    assert docs < page.index('<table class="rows-and-columns">')


HOSTILE_PAGES = ["/jobs/postings/5", "/jobs/jobs", "/jobs/postings", "/jobs/postings?_columns=all", "/jobs/jobs?_search=pwned", "/jobs/best_postings",
                 "/jobs/company_activity", "/jobs/sections?posting_id=5", "/jobs/postings?_facet=company"]


@pytest.mark.parametrize("path", HOSTILE_PAGES)
def test_hostile_text_is_escaped(ds, path):
    page = get(ds, path).text
    assert "pwned" in page
    assert "<script>window.__jobcrawl_pwned" not in page
    assert "<img src=x" not in page
    assert "javascript:alert(document.domain)\"" not in page and "href=\"javascript:" not in page
    assert "&lt;script&gt;window.__jobcrawl_pwned=1" in page or "&lt;img src=x onerror" in page


def test_hostile_posting_shows_its_payloads_as_text(ds):
    page = get(ds, "/jobs/postings/5").text
    assert "<h1 class=\"posting-title\">&lt;script&gt;window.__jobcrawl_pwned=1;alert(&#39;title&#39;)&lt;/script&gt;模型工程师</h1>" in page
    assert "<li>&lt;script&gt;window.__jobcrawl_pwned=3;alert(&#39;bullet&#39;)&lt;/script&gt;良好的团队协作能力</li>" in page
    assert "javascript:alert(document.domain)" in _text(page)  # shown, not linked
    assert 'class="source-url"' not in page


# --------------------------------------------------------------------------- score columns


@pytest.mark.parametrize("steps", [pytest.param([
    ("", (72, "中等", "jobcrawl-v1")),  # ingest scored it: ours (72, the same as the app's here)
    ("UPDATE evaluations SET overall = 85 WHERE posting_id = 1 AND scorer = 'jobcrawl-v1'",
     (85, "较高", "jobcrawl-v1")),
    ("UPDATE evaluations SET overall = 59 WHERE posting_id = 1 AND scorer = 'jobcrawl-v1'",
     (59, "较低", "jobcrawl-v1")),
    ("INSERT INTO evaluations (posting_id, scorer_stored, overall, overall_level_given) VALUES (1, 'fit:me', 99, '较高')",
     (59, "较低", "jobcrawl-v1")),
    ("DELETE FROM evaluations WHERE posting_id = 1 AND scorer = 'jobcrawl-v1'", (72, "中等", "source")),
    ("DELETE FROM evaluations WHERE posting_id = 1 AND scorer = 'source'", (None, None, None)),
], id="ours-then-the-apps-then-none")])
def test_score_follows_our_evaluation_then_the_apps(tmp_path, steps):
    conn = sqlite3.connect(build_browse_db(tmp_path))
    for sql, expected in steps:
        with conn:
            if sql:
                conn.execute(sql)
        assert conn.execute("SELECT score, score_level, score_by FROM postings WHERE id = 1").fetchone() == expected, sql


def test_reingest_keeps_the_score(tmp_path):
    """An updated posting's source evaluation is deleted and written again by the writer; ours stays."""
    db = build_browse_db(tmp_path)
    changed = (tmp_path / "in" / "000_7c4373297891d5ca.txt")
    changed.write_text(SEED0.replace("72综合评分\n综合评分 72", "74综合评分\n综合评分 74"), encoding="utf-8")
    run_cli("ingest", str(tmp_path / "in"), "--db", str(db), "--as-of", AS_OF)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT score, score_by, version FROM postings WHERE id = 1").fetchone() == (72, "jobcrawl-v1", 2)
        assert conn.execute("SELECT overall FROM evaluations WHERE posting_id = 1 AND scorer = 'source'").fetchone() == (74,)


# --------------------------------------------------------------------------- canned query SQL


@pytest.mark.parametrize("monthly, quartiles", [
    pytest.param([10, 20, 30, 40, 50], (20000.0, 30000.0, 40000.0), id="five-exact-ranks"),
    pytest.param([10, 20, 30, 40], (17500.0, 25000.0, 32500.0), id="four-interpolated"),
    pytest.param([40, 10], (17500.0, 25000.0, 32500.0), id="two-unsorted"),
    pytest.param([33], (33000.0, 33000.0, 33000.0), id="one"),
    pytest.param([10, 10, 10, 90], (10000.0, 10000.0, 30000.0), id="ties"),
])
def test_salary_percentiles_interpolate_linearly(tmp_path, monthly, quartiles):
    """The canned percentiles equal statistics.quantiles(method='inclusive') (numpy's default)."""
    import statistics

    from crawler.store.schema import open_db

    db = open_db(tmp_path / "pay.db")
    db["postings"].insert_all(
        [{"id": i, "key": f"k{i}", "city": "深圳", "category": "芯片", "salary_status": "parsed", "salary_currency": "CNY",
          "salary_monthly_min": k * 1000 - 2000, "salary_monthly_max": k * 1000 + 2000, "salary_estimated": 0,
          "salary_implausible": 0} for i, k in enumerate(monthly, 1)]
        + [{"id": 99, "key": "est", "city": "深圳", "category": "芯片", "salary_status": "parsed", "salary_currency": "CNY",
            "salary_monthly_min": 1, "salary_monthly_max": 1, "salary_estimated": 1, "salary_implausible": 0}])
    sql = build_metadata()["databases"]["jobs"]["queries"]["salary_by_city"]["sql"]
    row = db.execute(sql, {"category": "", "min_postings": "1"}).fetchone()
    assert row == ("深圳", "CNY", len(monthly), *quartiles)
    if len(monthly) > 1:
        assert tuple(statistics.quantiles([k * 1000 for k in monthly], n=4, method="inclusive")) == quartiles


# --------------------------------------------------------------------------- after scoring


@pytest.fixture(scope="module")
def scored_ds(tmp_path_factory):
    """The browse database after ``jobcrawl score`` (our evaluations, market statistics)."""
    db = build_browse_db(tmp_path_factory.mktemp("scored"))
    run_cli("score", "--db", str(db), check=True)
    assert prepare(db, immutable=True)
    return make_datasette(db), db


def test_our_scores_drive_the_listing_once_scored(scored_ds):
    ds, db = scored_ds
    with sqlite3.connect(db) as conn:
        ours = dict(conn.execute("SELECT posting_id, overall FROM evaluations WHERE scorer = 'jobcrawl-v1'"))
    assert sorted(ours) == [1, 2, 3, 4, 5]
    listing = rows(ds, "/jobs/jobs")
    assert {r["score_by"] for r in listing} == {"jobcrawl-v1"}
    assert [(r["id"], r["score"]) for r in listing] == sorted(ours.items(), key=lambda kv: (-kv[1], -kv[0]))


def test_market_stats_query(scored_ds):
    ds, _ = scored_ds
    assert pick(rows(ds, "/jobs/market_stats?scope=category"), "key", "currency", "n", "median") == [
        ("人工智能", "CNY", 2, None), ("算法优化工程师", "CNY", 2, None), ("后端开发", "CNY", 1, None)]
    assert pick(rows(ds, "/jobs/market_stats?key=苏州"), "scope", "key", "n") == [
        ("city+category", "苏州 · 算法优化工程师", 2), ("city+category_open", "苏州 · 算法优化工程师", 2)]


def test_lru_evicts_the_least_recently_used_by_weight():
    from browse.lru import Lru

    cache = Lru(5, weight=len)
    cache.put("a", "xx")
    cache.put("b", "xx")
    assert cache.get("a") == "xx"  # now the most recent
    cache.put("c", "xx")  # 6 > 5: "b" goes
    assert (cache.get("b"), cache.get("a"), cache.get("c"), len(cache)) == (None, "xx", "xx", 2)
    cache.put("a", "x")  # replacing an entry replaces its weight
    cache.put("d", "xx")
    assert sorted(k for k in "abcd" if cache.get(k)) == ["a", "c", "d"]


def test_the_posting_page_shows_its_times_in_the_postings_zone(ds):
    """Seen (first – last) in the posting's zone, as the listing dates it; the UTC values stay in the database."""
    page = get(ds, "/jobs/postings/4").text
    seen = re.search(r"<dt>Seen</dt><dd>(.*?)</dd>", page).group(1)
    assert seen == "2026-11-29T12:00:00+08:00 – 2026-11-29T12:00:00+08:00"  # 04:00 UTC, a posting in 北京
