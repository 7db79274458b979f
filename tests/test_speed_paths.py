"""The per-posting shortcuts give what the long way gives: a posting's row read from its attributes is the flattening
of its model_dump, the JSON encoders made once write what json.dumps writes, the string walk of the validate stage
finds every string, and a salary text or URL parsed once a process is parsed as it was, each caller getting its
own copy."""

from __future__ import annotations

import json

import pytest

from crawler.pipelines import _strings
from crawler.store.schema import CHILD_FIELDS, JSON_COLUMNS, MODEL_COLUMNS, flatten_posting
from normalize.dedupe import canonical_url
from normalize.evaluation import dumps
from normalize.models import RawSection, SalaryEstimate
from normalize.posting import normalize_posting
from normalize.salary import _parse, parse_salary
from test_pipelines import raw_posting


def _dumped_row(data: dict, columns: list) -> dict:
    """The reference: each column's value found along its path in ``model_dump`` output, JSON for lists and dicts,
    booleans as 0/1."""
    row = {}
    for column, path, _, _ in columns:
        value = data
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if column in JSON_COLUMNS:
            value = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bool):
            value = int(value)
        row[column] = value
    return row


@pytest.mark.parametrize("changes, after", [
    pytest.param({}, {}, id="seed-posting"),
    pytest.param({"salary": "15-25K·13薪", "tags": ["CUDA", "双休"], "extra": {"福利": "五险一金"}}, {}, id="salary-tags-extra"),
    pytest.param({"salary": None, "company": None, "description": None}, {}, id="nothing-optional"),
    pytest.param({"experience": "3-5年", "education": "本科"}, {}, id="years-as-floats"),
    pytest.param({}, {"signal": SalaryEstimate(raw="市场水准 (35K-50K/月)", min=35000.0, max=50000.0)},
                 id="nested-salary-signal"),
    pytest.param({}, {"remote": True, "posted_approx": False}, id="booleans-as-integers"),
])
def test_flatten_posting_reads_what_model_dump_says(changes, after):
    posting = normalize_posting(raw_posting(**changes), as_of_source="as_of")
    for name, value in after.items():
        setattr(posting.salary if name == "signal" else posting, name, value)
    expected = _dumped_row(posting.model_dump(exclude=CHILD_FIELDS), MODEL_COLUMNS)
    got = flatten_posting(posting)
    assert list(got) == list(expected)
    assert [(type(v), v) for v in got.values()] == [(type(v), v) for v in expected.values()]


@pytest.mark.parametrize("value", [
    pytest.param({"pay": [["base", 55.0], "insufficient"]}, id="evidence"),
    pytest.param(["计算机", "C++", 'quote " and \\ slash'], id="non-ascii-and-escapes"),
    pytest.param({"a": None, "b": True, "c": -0.0, "d": 2**70}, id="scalars"),
    pytest.param([], id="empty"),
])
def test_compact_dumps_is_json_dumps(value):
    assert dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("value, strings", [
    pytest.param(["a", None, 1, 2.5, True, ["b", ("c", "d")]], ["a", "b", "c", "d"], id="nested-lists-and-tuples"),
    pytest.param([{"k": "v", "n": ["w"]}], ["k", "n", "v", "w"], id="dict-keys-and-values"),
    pytest.param([RawSection(heading="职责", lines=["x", "y"])], ["x", "y", "职责"], id="model-in-a-list"),
    pytest.param("alone", ["alone"], id="a-bare-string"),
    pytest.param([[None, 3], {}, (1.5, False)], [], id="no-string"),
])
def test_strings_finds_every_string(value, strings):
    assert sorted(_strings(value)) == strings


@pytest.mark.parametrize("text, dollar, currency, monthly_max", [
    pytest.param("15-25K·13薪", "USD", "CNY", 25000.0, id="board-text"),
    pytest.param("$120,000 - $150,000 a year", "USD", "USD", 12500.0, id="dollar-usd"),
    pytest.param("$120,000 - $150,000 a year", "CAD", "CAD", 12500.0, id="same-text-other-dollar"),
    pytest.param("＄120,000 - ＄150,000 a year", "AUD", "AUD", 12500.0, id="full-width-dollar"),
    pytest.param("面议", "USD", None, None, id="negotiable"),
])
def test_parse_salary_once_gives_each_caller_its_own_copy(text, dollar, currency, monthly_max):
    first = parse_salary(text, dollar=dollar)
    first.source, first.compare_raw = "field", "changed by its caller"
    again = parse_salary(text, dollar=dollar)
    assert again is not first
    assert (again.currency, again.monthly_max, again.source, again.compare_raw) == (currency, monthly_max, None, None)
    assert again.model_dump() == _parse(text, "CNY", dollar).model_dump()


@pytest.mark.parametrize("url, canonical", [
    pytest.param("HTTP://Example.com:80/jobs/1/?utm_source=x&b=2&a=1#top", "https://example.com/jobs/1?a=1&b=2",
                 id="tracking-port-order-fragment"),
    pytest.param("mailto:hr@example.com", "", id="not-a-page"),
    pytest.param("example.com/jobs", "https://example.com/jobs", id="no-scheme"),
])
def test_canonical_url_is_the_same_every_time(url, canonical):
    assert [canonical_url(url) for _ in range(3)] == [canonical] * 3
