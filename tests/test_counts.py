"""Count parsing and the app's company-activity and market blocks: named example tables."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from normalize.counts import parse_company_activity, parse_count, parse_market
from normalize.models import Activity

COUNTS = [
    pytest.param("约 1900 个在招", (1900, True), id="seed000-yue"),
    pytest.param("73 个在招", (73, False), id="seed003-exact"),
    pytest.param("大约 190 个在招", (190, True), id="dayue"),
    pytest.param("1.2万", (12000, False), id="wan"),
    pytest.param("2千+", (2000, True), id="qian-plus"),
    pytest.param("招2人", (2, False), id="51job-zhao-ren"),
    pytest.param("10+", (10, True), id="plus-is-lower-bound"),
    pytest.param("100多人", (100, True), id="duo"),
    pytest.param("1,234 jobs", (1234, False), id="thousands-comma"),
    pytest.param("about 1,200 jobs", (1200, True), id="about"),
    pytest.param("１９００", (1900, False), id="full-width"),
    pytest.param("招若干人", (None, False), id="ruogan"),
    pytest.param("1.5", (None, False), id="not-whole"),
    pytest.param("<script>", (None, False), id="script"),
    pytest.param("9" * 100_000, (None, False), id="100KB"),
    pytest.param("约 99999999999999999999 个在招", (None, False), id="beyond-any-count"),
    pytest.param("10001万", (None, False), id="beyond-any-count-by-its-unit"),
    pytest.param("1000万", (10_000_000, False), id="ten-million"),
    pytest.param("2.5千", (2500, False), id="decimal-whole-by-its-unit"),
    pytest.param("约 0.5万+", (5000, True), id="decimal-wan-approx"),
    pytest.param("1.25k jobs", (1250, False), id="decimal-k"),
    pytest.param("1.2345千", (None, False), id="decimal-not-whole-by-its-unit"),
    pytest.param("", (None, False), id="empty"),
    pytest.param(None, (None, False), id="none"),
]


@pytest.mark.parametrize("text, expected", COUNTS)
def test_parse_count(text, expected):
    assert parse_count(text) == expected


COMPANY = [
    pytest.param(["这家公司招聘很活跃", "约 1900 个在招 · 其中人工智能 19 个"],
                 Activity(label="这家公司招聘很活跃", raw="约 1900 个在招 · 其中人工智能 19 个", category="人工智能",
                          open_jobs=1900, open_jobs_approx=True, open_in_category=19), id="seed000"),
    pytest.param(["这家公司招聘很活跃", "73 个在招 · 其中算法优化工程师 2 个"],
                 Activity(label="这家公司招聘很活跃", raw="73 个在招 · 其中算法优化工程师 2 个", category="算法优化工程师",
                          open_jobs=73, open_in_category=2), id="seed003"),
    pytest.param(["约 1900 个在招 · 其中人工智能 19 个"],
                 Activity(raw="约 1900 个在招 · 其中人工智能 19 个", category="人工智能", open_jobs=1900,
                          open_jobs_approx=True, open_in_category=19), id="no-label"),
    pytest.param(["这家公司招聘很活跃"], Activity(label="这家公司招聘很活跃"), id="no-count-line"),
    pytest.param(["这家公司招聘很活跃", "约 1900 个在招"],
                 Activity(label="这家公司招聘很活跃", raw="约 1900 个在招", open_jobs=1900, open_jobs_approx=True),
                 id="no-category"),
    pytest.param(["这家公司招聘很活跃", "其中人工智能 19 个"],
                 Activity(label="这家公司招聘很活跃", raw="其中人工智能 19 个", category="人工智能", open_in_category=19),
                 id="no-total"),
    pytest.param(["", "这家公司招聘很活跃", "约 1900 个在招 · 其中人工智能 19 个", "市场机会", "5 个在招"],
                 Activity(label="这家公司招聘很活跃", raw="约 1900 个在招 · 其中人工智能 19 个", category="人工智能",
                          open_jobs=1900, open_jobs_approx=True, open_in_category=19), id="extra-lines"),
    pytest.param(["\x00\x07", "约 10 个在招", "这家公司招聘很活跃", "不是标签"],
                 Activity(label="这家公司招聘很活跃", raw="约 10 个在招", open_jobs=10,
                          open_jobs_approx=True),
                 id="a-line-of-control-characters-is-no-label"),
    pytest.param([], Activity(), id="empty"),
    pytest.param(None, Activity(), id="none"),
    pytest.param(["x" * 100_000, "<script>"], Activity(label="<script>"), id="hostile"),
]


@pytest.mark.parametrize("lines, expected", COMPANY)
def test_parse_company_activity(lines, expected):
    assert parse_company_activity(lines) == expected


MARKET = [
    pytest.param(["选择面较广", "杭州 · 人工智能 · 约 190 个在招"],
                 Activity(label="选择面较广", raw="杭州 · 人工智能 · 约 190 个在招", city="杭州", category="人工智能",
                          open_jobs=190, open_jobs_approx=True), id="seed000"),
    pytest.param(["选择不多", "苏州 · 算法优化工程师 · 10 个在招"],
                 Activity(label="选择不多", raw="苏州 · 算法优化工程师 · 10 个在招", city="苏州", category="算法优化工程师",
                          open_jobs=10), id="seed003"),
    pytest.param(["选择不多", "苏州 · 算法优化工程师"],
                 Activity(label="选择不多", raw="苏州 · 算法优化工程师", city="苏州", category="算法优化工程师"),
                 id="missing-count"),
    pytest.param(["选择不多", "苏州 · 3D视觉 · １０ 个在招", "后面的行"],
                 Activity(label="选择不多", raw="苏州 · 3D视觉 · １０ 个在招", city="苏州", category="3D视觉", open_jobs=10),
                 id="digit-in-category-full-width-count-extra-line"),
    pytest.param(["选择面较广"], Activity(label="选择面较广"), id="label-only"),
    pytest.param([], Activity(), id="empty"),
    pytest.param(None, Activity(), id="none"),
]


@pytest.mark.parametrize("lines, expected", MARKET)
def test_parse_market(lines, expected):
    assert parse_market(lines) == expected


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.text(max_size=40), max_size=4))
def test_blocks_never_raise(lines):
    for parse in (parse_company_activity, parse_market):
        activity = parse(lines)
        assert activity.raw is None or activity.raw in lines
