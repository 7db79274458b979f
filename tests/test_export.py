"""`jobcrawl export`: the format from --out, flat CSV/TSV columns, the BOM, the filters, --columns, and the round
trip CSV → `jobcrawl ingest` → the same postings. Units on crawler/export.py and crawler/store/read.py (a real,
migrated SQLite file), then the real CLI."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import AS_OF, export_records, run_cli
from crawler.store import fts
from crawler.store.read import export_filter, iter_export
from crawler.store.codes import TZ_CODES, coded
from crawler.store.rows import scorer_stored
from crawler.store.schema import open_db
from crawler.export import FLAT_COLUMNS, ExportError, as_cell, choose_format, flat_row, write_file, write_records

# --------------------------------------------------------------------------- format


@pytest.mark.parametrize(("out", "requested", "expected"), [
    pytest.param("postings.csv", None, "csv", id="csv-suffix"),
    pytest.param("postings.TSV", None, "tsv", id="tsv-suffix-any-case"),
    pytest.param("postings.jsonl", None, "jsonl", id="jsonl-suffix"),
    pytest.param("postings.ndjson", None, "jsonl", id="ndjson-suffix"),
    pytest.param("postings.json", None, "json", id="json-suffix"),
    pytest.param("-", None, "jsonl", id="stdout-default"),
    pytest.param("-", "csv", "csv", id="stdout-format"),
    pytest.param("postings.csv", "csv", "csv", id="agreeing"),
    pytest.param("postings.txt", "tsv", "tsv", id="unknown-suffix-with-format"),
    pytest.param("postings", "json", "json", id="no-suffix-with-format"),
])
def test_format_from_the_suffix_or_format(out, requested, expected):
    assert choose_format(out, requested) == expected


@pytest.mark.parametrize(("out", "requested", "message"), [
    pytest.param("postings.csv", "jsonl", "--format jsonl does not match --out postings.csv (a .csv file is csv)",
                 id="mismatch"),
    pytest.param("postings.json", "jsonl", "--format jsonl does not match --out postings.json (a .json file is json)",
                 id="json-is-not-jsonl"),
    pytest.param("postings.txt", None, "cannot tell the format of --out postings.txt from its suffix", id="unknown"),
    pytest.param("postings.parquet", None, "Parquet is not built in", id="parquet-suffix"),
    pytest.param("-", "parquet", "Parquet is not built in", id="parquet-format"),
])
def test_format_usage_errors(out, requested, message):
    with pytest.raises(ExportError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        choose_format(out, requested)


# --------------------------------------------------------------------------- flat rows

RECORD = {
    "id": 7, "source": "textdump", "source_id": "a.txt#0", "url": None, "title": "AI算子开发工程师",
    "company": "吉利汽车", "city": "杭州", "district": None, "category": "人工智能", "seniority": None,
    "employment_type": "全职员工", "work_mode": "仅现场办公", "remote": False, "experience": "3-5年",
    "education": "本科", "company_info": {"raw": "汽车 · 10000人以上", "industry": "汽车"},
    "posted_raw": "发布于 大约 4 小时前", "posted_at": "2026-11-29T00:00:00+00:00", "valid_through": None,
    "posted_local": "2026-11-29T08:00:00+08:00", "posted_source": "as_of", "tz": "Asia/Shanghai",
    "first_seen": "2026-11-29T04:00:00+00:00", "last_seen": "2026-11-30T04:00:00+00:00", "closed_at": None,
    "first_seen_local": "2026-11-29T12:00:00+08:00", "last_seen_local": "2026-11-30T12:00:00+08:00",
    "closed_at_local": None,
    "salary": {"raw": "30-50K·14薪", "min": 30000.0, "max": 50000.0, "currency": "CNY", "period": "month",
               "months": 14, "monthly_min": 30000.0, "monthly_max": 50000.0, "annual_min": 420000.0, "source": "field"},
    "skills": ["CUDA", "C++"], "tags": ["Cuda", "大模型"],
    "sections": {"about": ["做算子"], "requirements": ["本科", "熟悉CUDA, C++"], "团队氛围": ["扁平", "开放"],
                 "benefits": ["五险一金"]},
    "section_headings": {"about": "关于这个职位", "requirements": "最低要求", "团队氛围": "【团队氛围】"},
    "evaluation": {"scorer": "jobcrawl-v1", "overall": 80, "overall_level": "较高", "pay": 81, "growth": 97,
                   "worklife": 50, "mission": 78, "completeness": 1.0,
                   "levels": {"pay": "较高", "growth": "较高", "worklife": "较低", "mission": "中等"},
                   "summary": "成长空间大。"},
    "source_evaluation": {"scorer": "source", "overall": 72, "overall_level": "中等"},
    "cluster_id": 3, "duplicate_of": 1, "dedupe_reason": "near_duplicate", "dedupe_similarity": 0.84375,
    "dedupe_matched": 1, "cross_company": False, "different_city": False,
}


def test_flat_row_has_every_column_in_order_with_plain_values():
    row = flat_row(RECORD)
    assert list(row) == list(FLAT_COLUMNS)
    assert {k: v for k, v in row.items() if v not in (None, "")} == {
        "id": 7, "source": "textdump", "source_id": "a.txt#0", "title": "AI算子开发工程师", "company": "吉利汽车",
        "city": "杭州", "category": "人工智能", "employment_type": "全职员工", "work_mode": "仅现场办公",
        "remote": "false", "experience": "3-5年", "education": "本科", "company_info": "汽车 · 10000人以上",
        "salary_raw": "30-50K·14薪", "salary_min": 30000, "salary_max": 50000, "salary_currency": "CNY",
        "salary_period": "month", "salary_months": 14, "salary_monthly_min": 30000, "salary_monthly_max": 50000,
        "salary_source": "field", "posted_raw": "发布于 大约 4 小时前", "posted_at": "2026-11-29T00:00:00+00:00",
        "posted_local": "2026-11-29T08:00:00+08:00", "posted_source": "as_of",
        "first_seen": "2026-11-29T04:00:00+00:00", "first_seen_local": "2026-11-29T12:00:00+08:00",
        "last_seen": "2026-11-30T04:00:00+00:00", "last_seen_local": "2026-11-30T12:00:00+08:00", "tz": "Asia/Shanghai",
        "score": 80, "score_level": "较高", "score_by": "jobcrawl-v1", "completeness": 1,
        "score_pay": 81, "score_pay_level": "较高", "score_growth": 97, "score_growth_level": "较高",
        "score_worklife": 50, "score_worklife_level": "较低", "score_mission": 78, "score_mission_level": "中等",
        "score_summary": "成长空间大。", "source_score": 72,
        "cluster_id": 3, "duplicate_of": 1, "dedupe_reason": "near_duplicate", "dedupe_similarity": 0.84375,
        "dedupe_matched": 1, "cross_company": "false", "different_city": "false",
        "skills": "CUDA; C++", "tags": "Cuda; 大模型",
        "about": "做算子", "requirements": "本科\n熟悉CUDA, C++", "benefits": "五险一金",
        "other_sections": "团队氛围\n扁平\n开放",
    }


SCORE_COLUMNS = ("score", "score_level", "score_by", "completeness", "score_pay", "score_pay_level", "score_growth",
                 "score_growth_level", "score_worklife", "score_worklife_level", "score_mission", "score_mission_level",
                 "source_score")
KNOWN = {"scorer": "jobcrawl-v1", "overall": 59, "overall_level": "较低", "pay": 40, "growth": 70, "worklife": 60,
         "mission": 65, "completeness": 1.0, "levels": {"pay": "较低", "growth": "中等", "worklife": "中等", "mission": "中等"}}
INSUFFICIENT = {"scorer": "jobcrawl-v1", "overall": None, "overall_level": "信息不足", "pay": 70, "growth": None,
                "worklife": None, "mission": None, "completeness": 0.35,
                "levels": {"pay": "中等", "growth": "信息不足", "worklife": "信息不足", "mission": "信息不足"}}
TWO_KNOWN = {"scorer": "jobcrawl-v1", "overall": 85, "overall_level": "较高", "pay": None, "growth": 90,
             "worklife": 79, "mission": None, "completeness": 0.45,
             "levels": {"pay": "信息不足", "growth": "较高", "worklife": "中等", "mission": "信息不足"}}


@pytest.mark.parametrize(("evaluation", "source", "expected"), [
    pytest.param(KNOWN, {"scorer": "source", "overall": 90},
                 (59, "较低", "jobcrawl-v1", 1, 40, "较低", 70, "中等", 60, "中等", 65, "中等", 90), id="ours-all-known"),
    pytest.param(INSUFFICIENT, {"scorer": "source", "overall": 72},
                 (None, "信息不足", "jobcrawl-v1", 0.35, 70, "中等", None, "信息不足", None, "信息不足", None, "信息不足", 72),
                 id="ours-insufficient-never-the-apps"),
    pytest.param(TWO_KNOWN, None,
                 (85, "较高", "jobcrawl-v1", 0.45, None, "信息不足", 90, "较高", 79, "中等", None, "信息不足", None),
                 id="two-known-dimensions-give-an-overall"),
    pytest.param(None, {"scorer": "source", "overall": 60},
                 (None, None, None, None, None, None, None, None, None, None, None, None, 60), id="the-apps-only"),
    pytest.param(None, None, (None,) * 13, id="unscored"),
])
def test_flat_score_is_ours_and_the_apps_stays_in_its_own_column(evaluation, source, expected):
    row = flat_row({"evaluation": evaluation, "source_evaluation": source})
    assert tuple(row[c] for c in SCORE_COLUMNS) == expected


DEDUPE_COLUMNS = ("cluster_id", "duplicate_of", "dedupe_reason", "dedupe_similarity", "dedupe_matched", "cross_company",
                  "different_city")


@pytest.mark.parametrize(("evidence", "expected"), [
    pytest.param({"cluster_id": 2, "duplicate_of": None, "dedupe_reason": "new", "dedupe_similarity": 1.0,
                  "dedupe_matched": None, "cross_company": False, "different_city": False},
                 (2, None, "new", 1, None, "false", "false"), id="canonical-member"),
    pytest.param({"cluster_id": 2, "duplicate_of": 5, "dedupe_reason": "same_url", "dedupe_similarity": 1.0,
                  "dedupe_matched": 5, "cross_company": False, "different_city": False},
                 (2, 5, "same_url", 1, 5, "false", "false"), id="same-url"),
    pytest.param({"cluster_id": 2, "duplicate_of": 5, "dedupe_reason": "cross_company_copy",
                  "dedupe_similarity": 0.96875, "dedupe_matched": 6, "cross_company": True, "different_city": True},
                 (2, 5, "cross_company_copy", 0.96875, 6, "true", "true"), id="cross-company-copy"),
    pytest.param({"cluster_id": None, "duplicate_of": None, "dedupe_reason": None, "dedupe_similarity": None,
                  "dedupe_matched": None, "cross_company": None, "different_city": None},
                 (None,) * 7, id="dedupe-not-run"),
])
def test_flat_dedupe_evidence(evidence, expected):
    assert tuple(flat_row(evidence)[c] for c in DEDUPE_COLUMNS) == expected


# --------------------------------------------------------------------------- writing


def _written(fmt: str, records: list[dict], **kwargs) -> str:
    stream = io.StringIO(newline="")
    assert write_records(stream, iter(records), fmt, **kwargs) == len(records)
    return stream.getvalue()


def test_csv_starts_with_a_bom_and_quotes_multiline_cells():
    text = _written("csv", [RECORD], columns=["title", "requirements", "skills"], bom=True)
    assert text == '\ufefftitle,requirements,skills\r\nAI算子开发工程师,"本科\n熟悉CUDA, C++",CUDA; C++\r\n'
    assert list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))[0]["requirements"] == "本科\n熟悉CUDA, C++"


@pytest.mark.parametrize("value, cell", [
    pytest.param('=HYPERLINK("http://x.example","点我")', '\'=HYPERLINK("http://x.example","点我")', id="formula"),
    pytest.param("+86 10 1234", "'+86 10 1234", id="plus"),
    pytest.param("-1+1", "'-1+1", id="minus"),
    pytest.param("@SUM(A1)", "'@SUM(A1)", id="at"),
    pytest.param("\t=1", "'\t=1", id="tab"),
    pytest.param("CUDA 算子 = 性能", "CUDA 算子 = 性能", id="inside-is-text"),
    pytest.param(-5, -5, id="a-number-stays-a-number"),
    pytest.param(None, None, id="none"),
])
def test_text_that_would_start_a_formula_is_marked_as_text(value, cell):
    assert as_cell(value) == cell


def test_a_title_that_is_a_formula_is_text_in_the_csv_and_itself_again_when_ingested():
    from crawler.ingest.table import TableOptions, parse_table
    from normalize.models import RawPosting

    formula = '=HYPERLINK("http://x.example","点我")'
    text = _written("csv", [{**RECORD, "title": formula, "company": "@公司"}], bom=True)
    assert text.splitlines()[1].split(",")[4:6] == ['"\'=HYPERLINK(""http://x.example""', '""点我"")"']
    [posting] = [i for i in parse_table(text.encode("utf-8"), locator="p.csv", fetched_at=AS_OF, as_of=AS_OF, fmt="csv",
                                        options=TableOptions()) if isinstance(i, RawPosting)]
    assert (posting.title, posting.company) == (formula, "@公司")


def test_tsv_is_tab_separated_without_a_bom_when_asked():
    text = _written("tsv", [RECORD], columns=["title", "city"], bom=False)
    assert text == "title\tcity\r\nAI算子开发工程师\t杭州\r\n"


@pytest.mark.parametrize(("fmt", "records", "expected"), [
    pytest.param("jsonl", [{"a": 1, "b": "北京"}, {"a": 2}], '{"a": 1, "b": "北京"}\n{"a": 2}\n', id="jsonl"),
    pytest.param("json", [{"a": 1}, {"a": 2}], '[\n{"a": 1},\n{"a": 2}\n]\n', id="json-array"),
    pytest.param("json", [], "[]\n", id="json-empty"),
    pytest.param("jsonl", [], "", id="jsonl-empty"),
])
def test_json_formats(fmt, records, expected):
    text = _written(fmt, records)
    assert text == expected
    if fmt == "json":
        assert json.loads(text) == records


def test_json_columns_pick_record_keys_in_order():
    assert _written("jsonl", [{"a": 1, "b": 2, "c": 3}], columns=["c", "a"]) == '{"c": 3, "a": 1}\n'


def test_a_failed_export_leaves_the_previous_file_and_no_part_file(tmp_path):
    out = tmp_path / "postings.csv"
    out.write_text("the last good export", encoding="utf-8")

    def broken(stream):
        stream.write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_file(str(out), broken)
    assert out.read_text(encoding="utf-8") == "the last good export"
    assert [p.name for p in tmp_path.iterdir()] == ["postings.csv"]
    assert write_file(str(out), lambda stream: stream.write("new")) == 3
    assert out.read_text(encoding="utf-8") == "new"


# --------------------------------------------------------------------------- filters (a real database)

POSTINGS = [
    # id, key, source, title, company, posted_at, first_seen, closed_at, score
    (1, "k1", "textdump", "CUDA算子开发工程师", "吉利汽车", "2026-11-29T00:00:00+00:00", "2026-11-29T04:00:00+00:00", None, 85),
    (2, "k2", "greenhouse", "Inference Engineer", "Acme", "2026-10-01T00:00:00+00:00", "2026-11-01T00:00:00+00:00", None, 60),
    (3, "k3", "greenhouse", "后端开发工程师", "地平线", None, "2026-11-15T00:00:00+00:00", "2026-11-20T00:00:00+00:00", 79),
    (4, "k4", "lever", "Platform Engineer (CUDA)", "Beta", None, "2026-09-01T00:00:00+00:00", None, None),
]


def _new_db(tmp_path_factory, name: str, fill) -> Path:
    """A migrated database file filled by ``fill(connection)`` in one transaction."""
    path = tmp_path_factory.mktemp(name) / "jobs.db"
    db = open_db(path)
    with db.conn:
        fill(db.conn)
    db.close()
    return path


@pytest.fixture(scope="module")
def filter_db(tmp_path_factory) -> Path:
    def fill(conn):
        conn.executemany("INSERT INTO postings (id, key, source, title, company, posted_at, first_seen_stored, closed_at, score)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", POSTINGS)
        fts.insert_rows(conn, [(p[0], p[3], p[4], None, None, "") for p in POSTINGS])

    return _new_db(tmp_path_factory, "filters", fill)


@pytest.mark.parametrize(("filters", "ids"), [
    pytest.param({}, [1, 2, 3, 4], id="none"),
    pytest.param({"open_only": True}, [1, 2, 4], id="open"),
    pytest.param({"since": "2026-11-01T00:00:00+00:00"}, [1, 3], id="since-posted-else-first-seen"),
    pytest.param({"min_score": 79}, [1, 3], id="min-score-inclusive"),
    pytest.param({"min_score": 0}, [1, 2, 3], id="min-score-drops-unscored"),
    pytest.param({"search": "CUDA"}, [1, 4], id="search-latin"),
    pytest.param({"search": "算子"}, [1], id="search-two-chinese-characters"),
    pytest.param({"search": "engineer cuda"}, [4], id="search-every-term"),
    pytest.param({"search": "   "}, [1, 2, 3, 4], id="search-blank"),
    pytest.param({"sources": ["greenhouse", "lever"]}, [2, 3, 4], id="sources"),
    pytest.param({"open_only": True, "sources": ["greenhouse"], "min_score": 50}, [2], id="combined"),
])
def test_export_filters(filter_db, filters, ids):
    where, params = export_filter(**filters)
    db = open_db(filter_db)
    try:
        assert [r["id"] for r in iter_export(db, where=where, params=params)] == ids
    finally:
        db.close()


# --------------------------------------------------------------------------- evidence and local times (a real database)

EVIDENCE_POSTINGS = [
    # id, key, title, company, city, tz, first_seen, last_seen, closed_at
    (1, "e1", "CUDA算子开发工程师", "吉利汽车", "杭州", "Asia/Shanghai", "2026-11-29T04:00:00+00:00",
     "2026-11-30T20:30:00+00:00", None),
    (2, "e2", "CUDA算子开发工程师（急招）", "吉利汽车", "杭州", None, "2026-11-29T05:00:00+00:00",
     "2026-11-30T05:00:00+00:00", "2026-11-30T16:00:00+00:00"),
    (3, "e3", "CUDA算子开发工程师", "某人力资源", "上海", "America/New_York", "2026-07-01T12:00:00+00:00",
     "2026-12-01T12:00:00+00:00", None),
    (4, "e4", "Inference Engineer", "Acme", None, None, "2026-11-01T00:00:00+00:00", "2026-11-02T00:00:00+00:00", None),
]
EVALUATIONS = [
    # posting_id, scorer, overall, overall_level, completeness, (pay, level), (growth, level), (worklife, level),
    # (mission, level)
    (1, "jobcrawl-v1", 80, "较高", 1.0, (81, "较高"), (97, "较高"), (50, "较低"), (78, "中等")),
    (1, "source", 72, "中等", None, (85, "较高"), (90, "较高"), (50, "较低"), (75, "中等")),
    (2, "jobcrawl-v1", None, "信息不足", 0.35, (70, "中等"), (None, "信息不足"), (None, "信息不足"), (None, "信息不足")),
    (2, "source", 72, "中等", None, (85, "较高"), (90, "较高"), (50, "较低"), (75, "中等")),
    (3, "jobcrawl-v1", 62, "中等", 0.55, (60, "中等"), (65, "中等"), (None, "信息不足"), (None, "信息不足")),
]
MEMBERS = [  # posting_id, cluster_id, reason, similarity, matched_posting_id, cross_company, different_city
    (1, 1, "new", 1.0, None, 0, 0),
    (2, 1, "near_duplicate", 0.84375, 1, 0, 0),
    (3, 1, "cross_company_copy", 0.96875, 1, 1, 1),
]


@pytest.fixture(scope="module")
def evidence_db(tmp_path_factory) -> Path:
    def fill(conn):
        conn.executemany("INSERT INTO postings (id, key, source, title, company, city, tz_stored, first_seen_stored,"
                         " last_seen_stored, closed_at) VALUES (?, ?, 'tabular', ?, ?, ?, ?, ?, ?, ?)",
                         [(*p[:5], coded(p[5], TZ_CODES), *p[6:]) for p in EVIDENCE_POSTINGS])
        conn.executemany(
            "INSERT INTO evaluations (posting_id, scorer_stored, overall, overall_level_given, completeness, pay, pay_level_given,"
            " growth, growth_level_given, worklife, worklife_level_given, mission, mission_level_given) VALUES (?, ?, ?, ?,"
            " ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(e[0], scorer_stored(e[1]), *e[2:5], *(v for dim in e[5:] for v in dim)) for e in EVALUATIONS])
        conn.execute("INSERT INTO clusters (id, canonical_posting_id, size, companies, cities, cross_company)"
                     " VALUES (1, 1, 3, 2, 2, 1)")
        conn.executemany("INSERT INTO cluster_members (posting_id, cluster_id, reason, similarity, matched_posting_id,"
                         " cross_company, different_city) VALUES (?, ?, ?, ?, ?, ?, ?)", MEMBERS)
        conn.executemany("INSERT INTO dedupe_signatures (posting_id, cluster_id) VALUES (?, ?)", [m[:2] for m in MEMBERS])

    return _new_db(tmp_path_factory, "evidence", fill)


def _flat_rows(path: Path) -> dict[int, dict]:
    db = open_db(path)
    try:
        return {r["id"]: r for r in map(flat_row, iter_export(db))}
    finally:
        db.close()


@pytest.mark.parametrize(("posting_id", "expected"), [
    pytest.param(1, {"tz": "Asia/Shanghai", "first_seen": "2026-11-29T04:00:00+00:00",
                     "first_seen_local": "2026-11-29T12:00:00+08:00", "last_seen_local": "2026-12-01T04:30:00+08:00",
                     "closed_at": None, "closed_at_local": None}, id="shanghai-crosses-midnight"),
    pytest.param(2, {"tz": None, "first_seen": "2026-11-29T05:00:00+00:00",
                     "first_seen_local": "2026-11-29T13:00:00+08:00", "last_seen_local": "2026-11-30T13:00:00+08:00",
                     "closed_at": "2026-11-30T16:00:00+00:00", "closed_at_local": "2026-12-01T00:00:00+08:00"},
                 id="old-row-without-tz-chinese-is-shanghai"),
    pytest.param(3, {"tz": "America/New_York", "first_seen": "2026-07-01T12:00:00+00:00",
                     "first_seen_local": "2026-07-01T08:00:00-04:00", "last_seen_local": "2026-12-01T07:00:00-05:00",
                     "closed_at": None, "closed_at_local": None}, id="tz-setting-with-daylight-saving"),
    pytest.param(4, {"tz": None, "first_seen": "2026-11-01T00:00:00+00:00",
                     "first_seen_local": "2026-11-01T00:00:00+00:00", "last_seen_local": "2026-11-02T00:00:00+00:00",
                     "closed_at": None, "closed_at_local": None}, id="old-row-without-tz-latin-is-utc"),
])
def test_times_in_the_postings_zone_beside_utc(evidence_db, posting_id, expected):
    row = _flat_rows(evidence_db)[posting_id]
    assert {k: row[k] for k in expected} == expected


@pytest.mark.parametrize(("posting_id", "expected"), [
    pytest.param(1, {"score": 80, "score_level": "较高", "completeness": 1, "score_worklife": 50,
                     "score_worklife_level": "较低", "source_score": 72, "cluster_id": 1, "duplicate_of": None,
                     "dedupe_reason": "new", "dedupe_similarity": 1, "dedupe_matched": None,
                     "cross_company": "false", "different_city": "false"}, id="canonical-scored"),
    pytest.param(2, {"score": None, "score_level": "信息不足", "completeness": 0.35, "score_worklife": None,
                     "score_worklife_level": "信息不足", "source_score": 72, "cluster_id": 1, "duplicate_of": 1,
                     "dedupe_reason": "near_duplicate", "dedupe_similarity": 0.84375, "dedupe_matched": 1,
                     "cross_company": "false", "different_city": "false"}, id="insufficient-duplicate"),
    pytest.param(3, {"score": 62, "score_level": "中等", "completeness": 0.55, "score_worklife": None,
                     "score_worklife_level": "信息不足", "source_score": None, "cluster_id": 1, "duplicate_of": 1,
                     "dedupe_reason": "cross_company_copy", "dedupe_similarity": 0.96875, "dedupe_matched": 1,
                     "cross_company": "true", "different_city": "true"}, id="cross-company-copy"),
    pytest.param(4, {"score": None, "score_level": None, "completeness": None, "score_worklife": None,
                     "score_worklife_level": None, "source_score": None, "cluster_id": None, "duplicate_of": None,
                     "dedupe_reason": None, "dedupe_similarity": None, "dedupe_matched": None,
                     "cross_company": None, "different_city": None}, id="not-scored-not-clustered"),
])
def test_score_and_dedupe_evidence_of_a_real_database(evidence_db, posting_id, expected):
    row = _flat_rows(evidence_db)[posting_id]
    assert {k: row[k] for k in expected} == expected


def test_the_listing_falls_back_to_the_apps_score_the_export_does_not(evidence_db):
    conn = sqlite3.connect(evidence_db)
    try:
        assert conn.execute("SELECT score, score_by FROM postings WHERE id = 2").fetchone() == (72, "source")
    finally:
        conn.close()
    row = _flat_rows(evidence_db)[2]
    assert (row["score"], row["score_level"], row["score_by"], row["source_score"]) == (None, "信息不足", "jobcrawl-v1", 72)


def test_evidence_columns_through_the_cli(evidence_db, tmp_path):
    from click.testing import CliRunner

    from crawler.cli import main

    out = tmp_path / "evidence.csv"
    columns = "id,score,score_level,source_score,dedupe_reason,dedupe_similarity,cross_company,first_seen_local"
    result = CliRunner().invoke(main, ["export", "--db", str(evidence_db), "--out", str(out), "--columns", columns])
    assert (result.exit_code, result.output) == (0, f"exported 4 postings to {out} (csv)\n")
    assert out.read_bytes().decode("utf-8") == "\ufeff" + (
        "id,score,score_level,source_score,dedupe_reason,dedupe_similarity,cross_company,first_seen_local\n"
        "1,80,较高,72,new,1,false,2026-11-29T12:00:00+08:00\n"
        "2,,信息不足,72,near_duplicate,0.84375,false,2026-11-29T13:00:00+08:00\n"
        "3,62,中等,,cross_company_copy,0.96875,true,2026-07-01T08:00:00-04:00\n"
        "4,,,,,,,2026-11-01T00:00:00+00:00\n").replace("\n", "\r\n")


# --------------------------------------------------------------------------- the command


@pytest.mark.slow
def test_export_csv_opens_in_a_spreadsheet(seeded_db, tmp_path):
    out = tmp_path / "postings.csv"
    proc = run_cli("export", "--db", str(seeded_db), "--out", str(out), check=True)
    assert proc.stderr == f"exported 2 postings to {out} (csv)\n"
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbfid,source,source_id,url,title,company,city,")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    assert [(r["company"], r["salary_monthly_min"], r["salary_currency"], r["score_by"]) for r in rows] == [
        ("吉利汽车", "43000", "CNY", "jobcrawl-v1"), ("初速度", "35000", "CNY", "jobcrawl-v1")]
    assert rows[1]["requirements"].split("\n")[3] == "熟悉CNN/Transformers/DETR等主流模型原理"
    assert rows[0]["skills"].startswith("CUDA; FlashAttention; PyTorch; LLM; ")


@pytest.mark.slow
@pytest.mark.parametrize(("args", "out", "message"), [
    pytest.param(["--format", "csv"], "x.jsonl", "--format csv does not match --out", id="format-mismatch"),
    pytest.param([], "x.txt", "cannot tell the format of --out", id="unknown-suffix"),
    pytest.param(["--columns", "title,compnay"], "x.csv", "no column 'compnay' (did you mean company?); columns: id,",
                 id="unknown-column"),
    pytest.param(["--bom"], "x.jsonl", "--bom applies to csv and tsv, not jsonl", id="bom-on-json"),
    pytest.param(["--since", "last week"], "x.csv", "'last week' is not an ISO date", id="bad-since"),
    pytest.param(["--format", "parquet"], "-", "Parquet is not built in", id="parquet"),
])
def test_export_usage_errors_exit_2(seeded_db, tmp_path, args, out, message):
    target = out if out == "-" else str(tmp_path / out)
    proc = run_cli("export", "--db", str(seeded_db), "--out", target, *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_seen_time_edited_by_hand_is_exported_as_stored(seeded_db, tmp_path):
    """A stored time that is no ISO time (written by hand into the database) is exported as it is, with no local
    time, instead of ending the export with a traceback."""
    db = tmp_path / "edited.db"
    with sqlite3.connect(seeded_db) as source, sqlite3.connect(db) as copy:
        source.backup(copy)
        copy.execute("UPDATE postings SET last_seen_stored = 'yesterday' WHERE id = 1")
    proc = run_cli("export", "--db", str(db), "--out", "-", "--format", "jsonl")
    assert proc.returncode == 0, proc.stderr
    first = json.loads(proc.stdout.splitlines()[0])
    assert (first["id"], first["last_seen"], first["last_seen_local"]) == (1, "yesterday", None)
    assert first["first_seen_local"] == "2026-11-29T12:00:00+08:00"


@pytest.mark.slow
def test_export_filters_and_columns_through_the_cli(seeded_db, tmp_path):
    out = tmp_path / "best.tsv"
    run_cli("export", "--db", str(seeded_db), "--out", str(out), "--no-bom", "--open", "--min-score", "73",
            "--search", "训练", "--columns", "title,company,score", check=True)
    assert out.read_bytes().decode("utf-8") == "title\tcompany\tscore\r\n模型训练优化开发工程师\t初速度\t75\r\n"
    none = run_cli("export", "--db", str(seeded_db), "--format", "json", "--source", "lever", check=True)
    assert (none.stdout, none.returncode) == ("[]\n", 0)


@pytest.mark.slow
def test_the_seeds_evidence_as_the_readme_shows_it(seeded_db, tmp_path):
    out = tmp_path / "evidence.tsv"
    run_cli("export", "--db", str(seeded_db), "--out", str(out), "--columns", "title,score,score_level,completeness,"
            "score_pay_level,source_score,dedupe_reason,posted_local,first_seen_local", check=True)
    assert out.read_bytes().decode("utf-8-sig").splitlines() == [
        "title\tscore\tscore_level\tcompleteness\tscore_pay_level\tsource_score\tdedupe_reason\tposted_local\t"
        "first_seen_local",
        "AI算子开发工程师\t72\t中等\t1\t中等\t72\tnew\t2026-11-29T08:00:00+08:00\t2026-11-29T12:00:00+08:00",
        "模型训练优化开发工程师\t75\t中等\t1\t较高\t78\tnew\t2026-11-29T10:00:00+08:00\t2026-11-29T12:00:00+08:00",
    ]


ROUND_TRIP_FIELDS = ("title", "company", "city", "district", "category", "seniority", "employment_type", "work_mode",
                     "experience", "education", "url", "posted_at", "valid_through", "tags", "sections")
SALARY_FIELDS = ("raw", "min", "max", "currency", "period", "months", "monthly_min", "monthly_max")


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["csv", "tsv"])
def test_round_trip_export_then_ingest_gives_the_same_postings(seeded_db, tmp_path, suffix):
    out = tmp_path / f"postings.{suffix}"
    run_cli("export", "--db", str(seeded_db), "--out", str(out), check=True)
    again = tmp_path / "again.db"
    proc = run_cli("ingest", str(out), "--db", str(again), "--as-of", AS_OF, check=True)
    assert f"postings.{suffix}: csv, utf-8-sig, delimiter {'comma' if suffix == 'csv' else 'tab'} · preset jobcrawl " \
           "(sniffed), 71 of 71 columns mapped" in proc.stdout
    before, after = export_records(seeded_db), export_records(again)
    assert len(after) == len(before) == 2
    for old, new in zip(before, after):
        assert {f: new[f] for f in ROUND_TRIP_FIELDS} == {f: old[f] for f in ROUND_TRIP_FIELDS}
        assert {f: new["salary"][f] for f in SALARY_FIELDS} == {f: old["salary"][f] for f in SALARY_FIELDS}
        assert sorted(new["skills"]) == sorted(old["skills"])
        assert new["extra"] == {}  # every column of the export is understood
    conn = sqlite3.connect(again)
    assert conn.execute("SELECT count(*) FROM quarantine").fetchone() == (0,)
    conn.close()


def test_the_jobcrawl_preset_reads_the_columns_of_an_export():
    from crawler.ingest.table import TableOptions, TableReport, parse_table
    from normalize.models import RawPosting

    no_raw_salary = {**RECORD, "id": 8, "source_id": "a.txt#1", "salary": {"min": 20000.0, "max": 30000.0,
                                                                             "currency": "USD", "period": "year"}}
    data = _written("csv", [RECORD, no_raw_salary], bom=True).encode("utf-8")
    report = TableReport(locator="p.csv", format="csv")
    items = list(parse_table(data, locator="p.csv", fetched_at=AS_OF, as_of=AS_OF, fmt="csv", options=TableOptions(),
                             report=report))
    first, second = [item for item in items if isinstance(item, RawPosting)]
    assert (report.preset, report.sniffed, report.matched, report.columns) == ("jobcrawl", True, 71, 71)
    assert first.description == "关于这个职位\n做算子\n任职要求\n本科\n熟悉CUDA, C++\n福利待遇\n五险一金\n【团队氛围】\n扁平\n开放"
    assert (first.source_id, first.title, first.company, first.location, first.salary, first.posted, first.tags,
            first.extra) == ("a.txt#0", "AI算子开发工程师", "吉利汽车", "杭州", "30-50K·14薪", "2026-11-29T00:00:00+00:00",
                             ["Cuda", "大模型"], {})
    assert second.salary == "USD 20000-30000/year"


@pytest.mark.parametrize("header, preset", [
    pytest.param(list(FLAT_COLUMNS), "jobcrawl", id="an-export"),
    pytest.param(["title", "company", "city", "salary_raw", "requirements"], "jobcrawl", id="some-export-columns"),
    pytest.param(["title", "company", "city"], "generic", id="a-plain-file-is-generic"),
    pytest.param(["title", "company", "url", "tags"], "generic", id="ties-go-to-the-other-preset"),
])
def test_sniffing_picks_the_jobcrawl_preset_only_for_an_export(header, preset):
    from crawler.ingest.table import sniff_preset

    assert sniff_preset(header)[0].name == preset


def test_a_search_that_only_leaves_terms_out_is_refused(seeded_db):
    proc = run_cli("export", "--db", str(seeded_db), "--search", "-Java")
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1] == (
        "Error: Invalid value for --search: '-Java' only leaves terms out; name one to find too (e.g. 'CUDA -Java')")
    kept = run_cli("export", "--db", str(seeded_db), "--search", "算子 -初速度", check=True)  # both say 算子
    assert [json.loads(line)["title"] for line in kept.stdout.splitlines()] == ["AI算子开发工程师"]


@pytest.mark.parametrize("search", [pytest.param("*", id="star"), pytest.param("( )", id="brackets"),
                                    pytest.param("", id="empty-a-shell-variable-not-set")])
def test_a_search_with_no_word_is_refused_not_every_posting_exported(seeded_db, search):
    """`--search '*'` or `--search "$UNSET"` exported every posting (and `watch add` made a watch of them all)."""
    problem = f"Error: Invalid value for --search: {search!r} holds no word to search for (letters, digits or Chinese characters)"
    proc = run_cli("export", "--db", str(seeded_db), "--search", search)
    assert (proc.returncode, proc.stdout, proc.stderr.splitlines()[-1]) == (2, "", problem)
    watch = run_cli("watch", "add", "all", "--db", str(seeded_db), "--search", search)
    assert (watch.returncode, watch.stderr.splitlines()[-1]) == (2, problem)
