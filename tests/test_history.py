"""Readable history (normalize/history.py): field-level diffs of versions, closing and reopening. Pure."""

from __future__ import annotations

import pytest

from normalize.history import Change, Version, diff_records, format_history, history, pay_label

BASE = {"title": "CUDA算子开发工程师", "company": "吉利汽车", "city": "杭州", "tags": ["CUDA", "C++"],
        "salary": {"monthly_min": 40000.0, "monthly_max": 60000.0, "currency": "CNY", "months": 12, "status": "parsed"},
        "sections": {"requirements": ["熟悉CUDA编程", "3年以上经验"], "about": ["负责算子开发"]},
        "skills": ["CUDA", "C++"], "description": None}


@pytest.mark.parametrize("salary, label", [
    pytest.param({"monthly_min": 40000.0, "monthly_max": 60000.0, "currency": "CNY"}, "40–60K", id="range"),
    pytest.param({"monthly_min": 43000.0, "monthly_max": 43000.0, "currency": "CNY"}, "43K", id="one-value"),
    pytest.param({"monthly_min": 30000.0, "monthly_max": 50000.0, "currency": "CNY", "months": 14}, "30–50K ×14",
                 id="months"),
    pytest.param({"monthly_min": 10000.0, "monthly_max": 12500.0, "currency": "USD"}, "$10–12.5K", id="usd"),
    pytest.param({"status": "negotiable", "raw": "面议"}, "面议", id="negotiable"),
    pytest.param({"status": "unparsed", "raw": "很高"}, "很高", id="as-written"),
    pytest.param({}, None, id="none"),
])
def test_pay_label(salary, label):
    assert pay_label(salary) == label


@pytest.mark.parametrize("change, lines", [
    pytest.param({"salary": {**BASE["salary"], "monthly_min": 45000.0, "monthly_max": 65000.0}},
                 ["薪资 salary: 40–60K → 45–65K"], id="salary"),
    pytest.param({"sections": {"requirements": ["熟悉CUDA编程", "熟悉Triton"], "about": ["负责算子开发"]}},
                 ["要求 requirements − 3年以上经验", "要求 requirements + 熟悉Triton"], id="bullet-replaced"),
    pytest.param({"sections": {**BASE["sections"], "preferred": ["有开源贡献"]}}, ["加分 preferred + 有开源贡献"],
                 id="new-section"),
    pytest.param({"city": "上海", "tags": ["CUDA"]}, ["城市 city: 杭州 → 上海", "标签 tags − C++"], id="city-and-tag"),
    pytest.param({"skills": ["CUDA", "C++", "Triton"]}, ["技能 skills + Triton"], id="skill-gained"),
    pytest.param({"description": "新的职位描述"}, ["描述 description: 0 字符 → 6 字符"], id="description"),
    pytest.param({}, [], id="nothing-compared-changed"),
])
def test_diff_records(change, lines):
    assert [c.text() for c in diff_records(BASE, {**BASE, **change})] == lines


def test_history_orders_versions_and_events_and_formats_them():
    v1 = Version(1, "2026-11-20T02:00:00+00:00", BASE)
    v2 = Version(2, "2026-11-25T02:00:00+00:00",
                 {**BASE, "salary": {**BASE["salary"], "monthly_min": 45000.0, "monthly_max": 65000.0}})
    v3 = Version(3, "2026-11-28T02:00:00+00:00", {**v2.record, "title": "资深CUDA算子开发工程师", "tags": ["CUDA"]})
    events = [("2026-11-26T00:00:00+00:00", "closed"), ("2026-11-28T02:00:00+00:00", "reopened")]
    steps = history([v3, v1, v2], events)
    assert [(s.at[:10], s.event, s.version) for s in steps] == [
        ("2026-11-20", "first_seen", 1), ("2026-11-25", "changed", 2), ("2026-11-26", "closed", None),
        ("2026-11-28", "changed", 3), ("2026-11-28", "reopened", None)]
    assert steps[1].changes == [Change("salary", "薪资 salary", "changed", "40–60K", "45–65K")]
    assert format_history(steps) == [
        "2026-11-20 02:00 v1: 首次出现 first seen",
        "2026-11-25 02:00 v2: 薪资 salary: 40–60K → 45–65K",
        "2026-11-26 00:00: 已关闭 closed",
        "2026-11-28 02:00 v3: 2 changes",
        "    职位 title: CUDA算子开发工程师 → 资深CUDA算子开发工程师",
        "    标签 tags − C++",
        "2026-11-28 02:00: 重新开放 reopened",
    ]


def test_a_version_that_changed_outside_the_compared_fields_says_so():
    steps = history([Version(1, "2026-11-20", BASE), Version(2, "2026-11-21", {**BASE, "insights": {"pros": ["x"]}})])
    assert format_history(steps)[1] == "2026-11-21 v2: 内容有变化，但不在比较的字段内 (changed outside the compared fields)"
