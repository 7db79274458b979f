"""Watch rules (normalize/watch.py): what a watch asks for and whether a posting matches. Pure, table-driven."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from normalize.watch import WatchSpec, candidate, match, parse_min_salary

ROW = {  # an open, canonical posting in 北京 paying 40–60K a month, fit 75, changed 2026-11-29
    "id": 7, "city": "北京", "salary_status": "parsed", "salary_raw": "40-60K", "salary_monthly_min": 40000.0,
    "salary_monthly_max": 60000.0, "salary_currency": "CNY", "salary_implausible": 0, "salary_signal_raw": None,
    "salary_signal_min": None, "salary_signal_max": None, "salary_signal_currency": None, "salary_signal_period": None,
    "salary_signal_implausible": 0, "fit": 75, "blocked": None, "changed_at": "2026-11-29T04:00:00+00:00",
    "canonical": 1, "cluster_seen": 0,
}
SPEC = dict(name="cuda-bj", search="CUDA 算子", cities=["北京"], min_salary="40k", min_fit=70)


@pytest.mark.parametrize("spec, row, found, reasons", [
    pytest.param(SPEC, {}, True, ["搜索“CUDA 算子”", "城市北京", "月薪上限6万 ≥ 4万", "匹配度75 ≥ 70"], id="all-criteria"),
    pytest.param(dict(name="any"), {}, True, [], id="no-criteria-matches-everything"),
    pytest.param(SPEC, {}, False, None, id="search-does-not-find-it"),
    pytest.param(SPEC, {"city": "上海"}, True, None, id="other-city"),
    pytest.param({**SPEC, "cities": ["上海", "北京"]}, {}, True,
                 ["搜索“CUDA 算子”", "城市北京", "月薪上限6万 ≥ 4万", "匹配度75 ≥ 70"], id="one-of-the-cities"),
    pytest.param(SPEC, {"salary_monthly_max": 39000.0, "salary_monthly_min": 30000.0}, True, None, id="pay-below-floor"),
    pytest.param(SPEC, {"salary_monthly_min": 20000.0}, True, ["搜索“CUDA 算子”", "城市北京", "月薪上限6万 ≥ 4万",
                                                               "匹配度75 ≥ 70"], id="upper-end-reaches-floor"),
    pytest.param(SPEC, {"salary_status": "missing", "salary_monthly_min": None, "salary_monthly_max": None}, True, None,
                 id="unknown-pay-does-not-match"),
    pytest.param(SPEC, {"salary_currency": "USD"}, True, None, id="other-currency"),
    pytest.param(SPEC, {"salary_status": "missing", "salary_monthly_min": None, "salary_monthly_max": None,
                        "salary_signal_min": 45000.0, "salary_signal_max": 55000.0, "salary_signal_currency": "CNY",
                        "salary_signal_period": "month", "salary_signal_raw": "45-55K"}, True,
                 ["搜索“CUDA 算子”", "城市北京", "月薪上限5.5万 ≥ 4万", "匹配度75 ≥ 70"], id="source-estimate-counts"),
    pytest.param(SPEC, {"fit": 69}, True, None, id="fit-below"),
    pytest.param(SPEC, {"fit": None}, True, None, id="no-fit"),
    pytest.param(SPEC, {"blocked": "keyword:外包"}, True, None, id="blocked"),
    pytest.param(SPEC, {"canonical": 0}, True, None, id="not-canonical"),
    pytest.param(SPEC, {"cluster_seen": 1}, True, ["搜索“CUDA 算子”", "城市北京", "月薪上限6万 ≥ 4万", "匹配度75 ≥ 70"],
                 id="repost-delivered-without-exclude-duplicates"),
    pytest.param({**SPEC, "exclude_duplicates": True}, {"cluster_seen": 1}, True, None, id="repost-excluded"),
    pytest.param({"name": "x", "changed_since": "2026-11-29T12:00:00+08:00"}, {}, True, ["2026-11-29起新增或变化"],
                 id="changed-at-the-time"),
    pytest.param({"name": "x", "changed_since": "2026-11-30T00:00:00+00:00"}, {}, True, None, id="not-changed-since"),
])
def test_match(spec, row, found, reasons):
    assert match(WatchSpec(**spec), candidate({**ROW, **row}, found=found)) == reasons


@pytest.mark.parametrize("text, expected", [
    pytest.param("40k", (40000.0, "CNY"), id="k"),
    pytest.param("4万", (40000.0, "CNY"), id="wan"),
    pytest.param("35000", (35000.0, "CNY"), id="plain"),
    pytest.param("$120,000/year", (10000.0, "USD"), id="usd-yearly-to-monthly"),
])
def test_parse_min_salary(text, expected):
    assert parse_min_salary(text) == expected


@pytest.mark.parametrize("spec, message", [
    pytest.param(dict(name="a b"), "String should match pattern", id="name-with-space"),
    pytest.param(dict(name="x", min_salary="lots"), "'lots' is not an amount of money", id="bad-floor"),
    pytest.param(dict(name="x", min_fit=101), "less than or equal to 100", id="fit-over-100"),
    pytest.param(dict(name="x", changed_since="yesterday"), "'yesterday' is not an ISO date", id="bad-time"),
    pytest.param(dict(name="x", cities=["北京", " "]), "a city must be named", id="empty-city"),
])
def test_spec_errors(spec, message):
    with pytest.raises(ValidationError, match=message):
        WatchSpec(**spec)


def test_cities_are_kept_without_the_spaces_around_them():
    assert WatchSpec(name="x", cities=[" 北京 ", "上海"]).cities == ["北京", "上海"]


def test_changed_since_is_stored_as_utc():
    assert WatchSpec(name="x", changed_since="2026-11-25T08:00:00+08:00").changed_since == "2026-11-25T00:00:00+00:00"
