"""Hidden employers (#27.3): a posting without company is kept (company null, problem ``company hidden``),
matched for dedupe by URL only, shown as （企业未公开）; a posting with neither title nor description is
quarantined."""

from __future__ import annotations

import sqlite3

import pytest
from scrapy.utils.test import get_crawler

from conftest import export_records, problem_lines, run_cli
from crawler.pipelines import ValidatePipeline
from normalize.models import Quarantined, RawPosting, RawSection

BASE = {"source": "tabular", "source_id": "x.csv#2", "locator": "x.csv", "position": 2, "fetched_at": "2026-12-01T00:00:00+00:00",
        "as_of": "2026-12-01T00:00:00+00:00"}

VALIDATE = [
    pytest.param({"company": "示例智能", "title": "CUDA工程师"}, None, id="company-and-title"),
    pytest.param({"company": "", "title": "CUDA工程师"}, None, id="company-hidden-kept"),
    pytest.param({"company": None, "title": "CUDA工程师"}, None, id="company-missing-kept"),
    pytest.param({"company": "示例智能", "description": "负责推理算子开发"}, None, id="no-title-with-description-kept"),
    pytest.param({"sections": [RawSection(heading="职位描述", lines=["负责推理算子开发"])]}, None,
                 id="no-title-no-company-with-sections-kept"),
    pytest.param({"company": "示例智能", "description": " \n "}, "posting has neither title nor description",
                 id="neither-title-nor-description"),
    pytest.param({"company": "示例智能", "title": "x" * 201}, "title is 201 characters long (limit 200): not a title",
                 id="title-too-long"),
    pytest.param({"company": "y" * 201, "title": "CUDA工程师"}, "company is 201 characters long (limit 200): not a company",
                 id="company-too-long"),
]


@pytest.mark.parametrize("fields,detail", VALIDATE)
def test_validate(fields, detail):
    crawler = get_crawler(settings_dict={"JOBCRAWL_MAX_TITLE_CHARS": 200})
    crawler.stats.open_spider()
    stage = ValidatePipeline.from_crawler(crawler)
    item = RawPosting(**BASE, **fields)
    out = stage.process_item(item)
    if detail is None:
        assert out is item
    else:
        assert isinstance(out, Quarantined) and (out.reason, out.detail) == ("invalid", detail)
    assert crawler.stats.get_value("jobcrawl/field/company/missing", 0) == (0 if fields.get("company") else 1)


CSV = """职位名称,公司名称,工作地点,薪资,职位描述,链接
CUDA算子开发工程师,示例智能,上海,30-50K,负责推理引擎算子开发与性能优化，熟悉CUDA编程与GPU体系结构,https://www.liepin.com/job/1.shtml
CUDA算子开发工程师,,上海,30-50K,负责推理引擎算子开发与性能优化，熟悉CUDA编程与GPU体系结构,https://www.liepin.com/job/2.shtml
大模型推理工程师,,北京,40-60K,负责大模型推理服务的部署与优化,https://www.liepin.com/job/3.shtml
,示例芯片,杭州,20-30K,,https://www.liepin.com/job/4.shtml
"""


@pytest.mark.slow
def test_hidden_employers_are_stored_and_shown(tmp_path):
    from browse.render import posting_page

    src, again = tmp_path / "liepin.csv", tmp_path / "liepin_again.csv"
    src.write_text(CSV, encoding="utf-8")
    db = tmp_path / "jobs.db"
    proc = run_cli("ingest", str(src), "--db", str(db))
    assert proc.returncode == 1  # the row with neither title nor description
    assert problem_lines(proc.stderr) == ["quarantined: liepin.csv#5: row 5: no title"]
    assert "postings found 4 · new 3 · updated 0 · unchanged 0 · quarantined 1" in proc.stdout
    records = {r["source_id"][-7:]: r for r in export_records(db)}
    assert {k: (r["company"], r["problems"]) for k, r in records.items()} == {
        "1.shtml": ("示例智能", []), "2.shtml": (None, ["company hidden"]), "3.shtml": (None, ["company hidden"])}
    # the same JD under a named and a hidden employer: not clustered (a hidden employer matches by URL only)
    assert {r["cluster_id"] for r in records.values()} == {1, 2, 3}
    # the same hidden posting exported again: the same source record (its URL), updated in place, its cluster kept
    again.write_text(CSV.replace("CUDA算子开发工程师,,上海", "CUDA算子开发工程师（急招）,,上海"), encoding="utf-8")
    run_cli("ingest", str(again), "--db", str(db))
    conn = sqlite3.connect(db)
    # A posting alone in its cluster has no cluster_members row (its reason is 'new').
    rows = conn.execute("SELECT p.locator, p.version, s.cluster_id, coalesce(m.reason, 'new') FROM postings p"
                        " JOIN dedupe_signatures s ON s.posting_id = p.id LEFT JOIN cluster_members m"
                        " ON m.posting_id = p.id WHERE p.url LIKE '%/2.shtml'").fetchall()
    assert rows == [("liepin_again.csv", 2, records["2.shtml"]["cluster_id"], "new")]
    page = posting_page(conn, records["2.shtml"]["id"])
    assert page["company"] == "（企业未公开）"
    assert conn.execute("SELECT company FROM jobs WHERE id = ?", (records["2.shtml"]["id"],)).fetchone() == ("（企业未公开）",)
