"""The column presets as a data file (crawler/ingest/table/presets.yaml): every preset loads, validated, and binds
the columns it bound when the presets were Python literals; a file that is not a preset list is refused by name.
And the streaming form of decode_bytes the table reader decodes with (normalize.text.LineDecoder)."""

from __future__ import annotations

import tomllib

import pytest
from pydantic import ValidationError

from conftest import ROOT
import crawler.ingest.table as table
from crawler.ingest.table import TableReport, parse_table
from crawler.ingest.table.columns import bind, sniff_preset
from crawler.ingest.table.presets import DERIVATIONS, PRESETS, PRESETS_YAML, load_presets
from normalize.text import DecodeError, LineDecoder, decode_bytes

T0 = "2026-11-29T04:00:00+00:00"


def _header(preset: str, kind: str) -> list[str]:
    """``first``: every column name the preset knows (so the first alternative of each field is bound);
    ``last``: the last alternative of each field alone."""
    p = PRESETS[preset]
    if kind == "first":
        names = [part for alts in p.columns.values() for alt in alts for part in alt.split("+")]
        names += [c for d in p.derived for c in d.columns]
    else:
        names = [part for alts in p.columns.values() for part in alts[-1].split("+")]
    return list(dict.fromkeys(names))


def test_every_preset_loads_in_its_order():
    assert list(PRESETS) == ["jobspy", "zh-board", "boss-list", "boss-jd", "lagou-jd", "lagou-api", "51job-list",
                             "jobcrawl", "generic"]
    assert load_presets() == PRESETS
    assert [p.loses_ties for p in PRESETS.values()].count(True) == 1 and PRESETS["jobcrawl"].loses_ties


@pytest.mark.parametrize("preset, kind, matched, sniffed, derived, fields", [
    pytest.param("jobspy", "first", 19, ("jobspy", 19), "jobspy_salary(4) remote_flag(1)",
                 "source_id=id url=job_url title=title company=company location=location posted=date_posted "
                 "employment_type=job_type seniority=job_level category=job_function description=description "
                 "company_info=company_industry tags=skills experience=experience_range work_mode=work_from_home_type",
                 id="jobspy-first"),
    pytest.param("zh-board", "first", 15, ("zh-board", 15), "",
                 "title=职位名称 company=公司名称 salary=薪资 location=工作地点 description=职位描述 experience=经验要求 education=学历要求 "
                 "benefits=福利 posted=发布时间 company_info=公司信息 category=职位类别 tags=标签 employment_type=工作性质 url=职位链接 "
                 "source_id=职位id",
                 id="zh-board-first"),
    pytest.param("zh-board", "last", 15, ("zh-board", 15), "",
                 "title=招聘职位 company=招聘单位 salary=待遇 location=职位地址 description=职位要求 experience=经验学历要求 education=最低学历 "
                 "benefits=职位亮点 posted=发布 company_info=公司描述 category=行业类别 tags=关键词 employment_type=工作类型 url=url "
                 "source_id=岗位编号",
                 id="zh-board-last"),
    pytest.param("boss-list", "first", 8, ("boss-list", 8), "",
                 "title=职位名称 location=职位地址 salary=薪资 experience=学历经验要求 company=公司名称 company_info=公司信息 benefits=公司福利 "
                 "url=详情页链接",
                 id="boss-list-first"),
    pytest.param("boss-jd", "first", 9, ("boss-jd", 9), "",
                 "company=公司 experience=经验学历 title=职位 salary=工资 location=位置 company_info=公司描述 tags=职位描述（大概） "
                 "benefits=福利（大概） description=职位描述",
                 id="boss-jd-first"),
    pytest.param("lagou-jd", "first", 9, ("lagou-jd", 9), "",
                 "company=公司 company_info=规模 title=职位 salary=工资 location=位置 experience=经验要求 education=学历要求 "
                 "benefits=职位诱惑 description=职位描述",
                 id="lagou-jd-first"),
    pytest.param("lagou-api", "first", 17, ("lagou-api", 17), "",
                 "source_id=positionId title=positionName salary=salary tags=positionLables experience=workYear "
                 "education=education benefits=positionAdvantage employment_type=jobNature location=city+district "
                 "company=companyFullName company_info=industryField+financeStage+companySize category=secondType "
                 "posted=createTime description=jobDescription",
                 id="lagou-api-first"),
    pytest.param("lagou-api", "last", 16, ("lagou-api", 16), "",
                 "source_id=positionId title=positionName salary=salary tags=positionLables experience=workYear "
                 "education=education benefits=positionAdvantage employment_type=jobNature location=city "
                 "company=companyShortName company_info=industryField+financeStage+companySize category=secondType "
                 "posted=formatCreateTime description=jobDescription",
                 id="lagou-api-last"),
    pytest.param("51job-list", "first", 5, ("51job-list", 5), "51job_labels(2)",
                 "title=职位 company=公司 location=地址 salary=薪酬",
                 id="51job-list-first"),
    pytest.param("jobcrawl", "first", 71, ("jobcrawl", 71), "jobcrawl_sections(6) jobcrawl_salary(4) recomputed(44)",
                 "source_id=source_id url=url title=title company=company location=city+district category=category "
                 "seniority=seniority employment_type=employment_type work_mode=work_mode experience=experience "
                 "education=education company_info=company_info salary=salary_raw posted=posted_at "
                 "valid_through=valid_through tags=tags",
                 id="jobcrawl-first"),
    pytest.param("jobcrawl", "last", 16, ("jobcrawl", 16), "",
                 "source_id=source_id url=url title=title company=company location=city category=category "
                 "seniority=seniority employment_type=employment_type work_mode=work_mode experience=experience "
                 "education=education company_info=company_info salary=salary_raw posted=posted_at "
                 "valid_through=valid_through tags=tags",
                 id="jobcrawl-last"),
    pytest.param("generic", "first", 20, ("generic", 20), "remote_flag(2)",
                 "title=title company=company url=url location=location salary=salary posted=posted "
                 "description=description tags=tags seniority=seniority employment_type=employment_type "
                 "work_mode=work_mode category=category experience=experience education=education benefits=benefits "
                 "company_info=company_info valid_through=valid_through source_id=source_id",
                 id="generic-first"),
    pytest.param("generic", "last", 18, ("generic", 18), "",
                 "title=role company=hiring_organization url=posting_url location=place salary=wage posted=date "
                 "description=body tags=labels seniority=seniority_level employment_type=type work_mode=remote_type "
                 "category=job_function experience=experience_level education=degree benefits=perks "
                 "company_info=company_industry valid_through=expires_at source_id=posting_id",
                 id="generic-last"),
])
def test_a_preset_binds_the_columns_it_did(preset, kind, matched, sniffed, derived, fields):
    p = PRESETS[preset]
    header = _header(preset, kind)
    binding = bind(header, p.columns, p.derived, p.name)
    assert " ".join(f"{name}={'+'.join(columns)}" for name, columns in binding.fields.items()) == fields
    assert binding.matched == matched
    found, explained = sniff_preset(header)
    assert (found.name, explained) == sniffed
    if kind == "first":
        names = {fn: name for name, fn in DERIVATIONS.items()}
        assert " ".join(f"{names[d.fn]}({len(d.columns)})" for d in p.derived) == derived


GOOD = 'one:\n  about: "x"\n  columns:\n    title: ["t"]\n'


@pytest.mark.parametrize("text, message", [
    pytest.param(GOOD.replace("title", "headline"), "unknown field 'headline'", id="unknown-field"),
    pytest.param(GOOD + "  derived:\n    - fn: guess\n      columns: [a]\n", "unknown function 'guess'",
                 id="unknown-fn"),
    pytest.param(GOOD + "  derived:\n    - fn: remote_flag\n      columns: []\n", "at least 1 item", id="no-columns"),
    pytest.param(GOOD.replace('["t"]', '["t+ "]'), "title: a blank column name", id="blank-column"),
    pytest.param(GOOD + "  loses_tie: true\n", "Extra inputs are not permitted", id="misspelt-key"),
    pytest.param(GOOD.replace('  about: "x"\n', ""), "about\n  Field required", id="no-about"),
])
def test_a_bad_preset_file_is_refused_naming_the_problem(tmp_path, text, message):
    path = tmp_path / "presets.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        load_presets(path)
    assert message in str(caught.value)


def test_the_preset_file_is_package_data():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["crawler"]
    assert [g for g in globs if PRESETS_YAML in (ROOT / "crawler").glob(g)] == ["ingest/table/*.yaml"]


@pytest.mark.parametrize("head, encoding, bom, by_line", [
    pytest.param("职位,公司\n工程师,甲\n".encode() + "工程师".encode()[:4], "utf-8", 0, True, id="utf8-cut-after-the-line"),
    pytest.param(b"\xef\xbb\xbf" + "职位,公司\n".encode(), "utf-8-sig", 3, True, id="utf8-bom"),
    pytest.param("职位名称,公司名称\n工程师,某公司\n".encode("gb18030"), "gb18030", 0, True, id="gbk"),
    pytest.param("title,company\nIngénieur,Société\n".encode("cp1252"), "cp1252", 0, False, id="windows-1252"),
])
def test_the_line_decoder_judges_a_head_as_decode_bytes_does(head, encoding, bom, by_line):
    decoder = LineDecoder.for_head(head)
    assert (decoder.encoding, decoder.bom, decoder.by_line, decoder.lossy) == (encoding, bom, by_line, False)


def test_a_mixed_input_is_decoded_line_by_line_naming_its_bad_lines():
    sample = "职位名称,公司名称\n工程师,甲\n".encode() + "乙,丙\n".encode("gbk")
    with pytest.raises(DecodeError) as caught:
        decode_bytes(sample)
    assert caught.value.reason == "mixed_encoding"
    decoder = LineDecoder.for_mixed(sample)
    assert (decoder.encoding, decoder.lossy) == ("utf-8", True)
    assert [decoder.line(line) for line in sample.splitlines(keepends=True)] == [
        ("职位名称,公司名称\n", False), ("工程师,甲\n", False), ("\ufffd\ufffd,\ufffd\ufffd\n", True)]


def test_a_binary_input_is_not_read_line_by_line():
    with pytest.raises(DecodeError) as caught:
        LineDecoder.for_mixed(bytes(range(32)) * 4)
    assert (caught.value.reason, str(caught.value)) == ("binary", "binary file (116 control characters in the first 128 bytes)")


@pytest.mark.xfail(strict=True, reason="a table file larger than the single-input size is judged on its head cut after "
                                       "a \\n byte, inside a UTF-16 character: the file is refused as bad_encoding")
def test_a_large_utf16_table_is_a_known_miss(monkeypatch):
    monkeypatch.setattr(table, "SINGLE_INPUT_BYTES", 100)
    report = TableReport(locator="t.csv", format="csv")
    data = ("职位名称,公司名称\n" + "工程师,甲\n" * 50).encode("utf-16")
    items = list(parse_table(data, locator="t.csv", fetched_at=T0, as_of=T0, fmt="csv", report=report))
    assert (report.error, report.postings, len(items)) == (None, 50, 51)
