"""`jobcrawl export`: the format from --out, flat CSV/TSV columns, the BOM, the filters, --columns, and the round
trip CSV → `jobcrawl ingest` → the same postings. Units on crawler/export.py and crawler/db/read.py (a real,
migrated SQLite file), then the real CLI."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import AS_OF, export_records, run_cli
from crawler.db import fts
from crawler.db.read import export_filter, iter_export
from crawler.db.schema import open_db
from crawler.export import FLAT_COLUMNS, ExportError, choose_format, flat_row, write_file, write_records

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
    "first_seen": "2026-11-29T04:00:00+00:00", "last_seen": "2026-11-30T04:00:00+00:00", "closed_at": None,
    "salary": {"raw": "30-50K·14薪", "min": 30000.0, "max": 50000.0, "currency": "CNY", "period": "month",
               "months": 14, "monthly_min": 30000.0, "monthly_max": 50000.0, "annual_min": 420000.0},
    "skills": ["CUDA", "C++"], "tags": ["Cuda", "大模型"],
    "sections": {"about": ["做算子"], "requirements": ["本科", "熟悉CUDA, C++"], "团队氛围": ["扁平", "开放"],
                 "benefits": ["五险一金"]},
    "section_headings": {"about": "关于这个职位", "requirements": "最低要求", "团队氛围": "【团队氛围】"},
    "evaluation": {"scorer": "jobcrawl-v1", "overall": 80, "pay": 81, "growth": 97, "worklife": 50, "mission": 78,
                   "summary": "成长空间大。"},
    "source_evaluation": {"scorer": "source", "overall": 72},
    "cluster_id": 3, "duplicate_of": 1,
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
        "posted_raw": "发布于 大约 4 小时前", "posted_at": "2026-11-29T00:00:00+00:00",
        "first_seen": "2026-11-29T04:00:00+00:00", "last_seen": "2026-11-30T04:00:00+00:00",
        "score": 80, "score_level": "较高", "score_by": "jobcrawl-v1", "score_pay": 81, "score_growth": 97,
        "score_worklife": 50, "score_mission": 78, "score_summary": "成长空间大。", "source_score": 72,
        "cluster_id": 3, "duplicate_of": 1, "skills": "CUDA; C++", "tags": "Cuda; 大模型",
        "about": "做算子", "requirements": "本科\n熟悉CUDA, C++", "benefits": "五险一金",
        "other_sections": "团队氛围\n扁平\n开放",
    }


@pytest.mark.parametrize(("evaluation", "source", "expected"), [
    pytest.param({"scorer": "jobcrawl-v1", "overall": 59}, {"overall": 90}, (59, "较低", "jobcrawl-v1", 90), id="ours"),
    pytest.param(None, {"scorer": "source", "overall": 60}, (60, "中等", "source", 60), id="the-apps-without-ours"),
    pytest.param({"scorer": "jobcrawl-v1", "overall": 79}, None, (79, "中等", "jobcrawl-v1", None), id="79-is-medium"),
    pytest.param(None, None, (None, None, None, None), id="unscored"),
])
def test_flat_score_is_ours_else_the_apps(evaluation, source, expected):
    row = flat_row({"evaluation": evaluation, "source_evaluation": source})
    assert (row["score"], row["score_level"], row["score_by"], row["source_score"]) == expected


# --------------------------------------------------------------------------- writing


def _written(fmt: str, records: list[dict], **kwargs) -> str:
    stream = io.StringIO(newline="")
    assert write_records(stream, iter(records), fmt, **kwargs) == len(records)
    return stream.getvalue()


def test_csv_starts_with_a_bom_and_quotes_multiline_cells():
    text = _written("csv", [RECORD], columns=["title", "requirements", "skills"], bom=True)
    assert text == '\ufefftitle,requirements,skills\r\nAI算子开发工程师,"本科\n熟悉CUDA, C++",CUDA; C++\r\n'
    assert list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))[0]["requirements"] == "本科\n熟悉CUDA, C++"


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


@pytest.fixture(scope="module")
def filter_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("filters") / "jobs.db"
    db = open_db(path)
    with db.conn:
        db.conn.executemany("INSERT INTO postings (id, key, source, title, company, posted_at, first_seen, closed_at, score)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", POSTINGS)
        fts.insert_rows(db.conn, [(p[0], p[3], p[4], None, None, "") for p in POSTINGS])
    db.close()
    return path


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


@pytest.mark.slow
def test_export_filters_and_columns_through_the_cli(seeded_db, tmp_path):
    out = tmp_path / "best.tsv"
    run_cli("export", "--db", str(seeded_db), "--out", str(out), "--no-bom", "--open", "--min-score", "73",
            "--search", "训练", "--columns", "title,company,score", check=True)
    assert out.read_bytes().decode("utf-8") == "title\tcompany\tscore\r\n模型训练优化开发工程师\t初速度\t75\r\n"
    none = run_cli("export", "--db", str(seeded_db), "--format", "json", "--source", "lever", check=True)
    assert (none.stdout, none.returncode) == ("[]\n", 0)


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
           "(sniffed), 49 of 49 columns mapped" in proc.stdout
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
    from crawler.pages.tabular import TableOptions, TableReport, parse_table
    from normalize.models import RawPosting

    no_raw_salary = {**RECORD, "id": 8, "source_id": "a.txt#1", "salary": {"min": 20000.0, "max": 30000.0,
                                                                             "currency": "USD", "period": "year"}}
    data = _written("csv", [RECORD, no_raw_salary], bom=True).encode("utf-8")
    report = TableReport(locator="p.csv", format="csv")
    items = list(parse_table(data, locator="p.csv", fetched_at=AS_OF, as_of=AS_OF, fmt="csv", options=TableOptions(),
                             report=report))
    first, second = [item for item in items if isinstance(item, RawPosting)]
    assert (report.preset, report.sniffed, report.matched, report.columns) == ("jobcrawl", True, 49, 49)
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
    from crawler.pages.tabular import sniff_preset

    assert sniff_preset(header)[0].name == preset
