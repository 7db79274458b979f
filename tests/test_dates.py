"""Post-time parsing: named example tables resolved against one fixed anchor."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from normalize.dates import PostedTime, parse_as_of, parse_posted, parse_published

AS_OF = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)  # 16:00 in Shanghai

POSTED = [
    # the seeds
    pytest.param("发布于 大约 4 小时前", "2026-11-29T04:00:00+00:00", True, "hour", id="seed000-about-4-hours"),
    pytest.param("发布于 2 小时前", "2026-11-29T06:00:00+00:00", False, "hour", id="seed003-2-hours"),
    # relative, Chinese
    pytest.param("刚刚", "2026-11-29T08:00:00+00:00", False, "minute", id="just-now"),
    pytest.param("5 分钟前", "2026-11-29T07:55:00+00:00", False, "minute", id="minutes"),
    pytest.param("5分钟前", "2026-11-29T07:55:00+00:00", False, "minute", id="minutes-no-space"),
    pytest.param("约 3 小时前", "2026-11-29T05:00:00+00:00", True, "hour", id="yue-hours"),
    pytest.param("~3 小时前", "2026-11-29T05:00:00+00:00", True, "hour", id="tilde-hours"),
    pytest.param("半小时前", "2026-11-29T07:30:00+00:00", False, "hour", id="half-hour"),
    pytest.param("3 天前", "2026-11-26T08:00:00+00:00", False, "day", id="days"),
    pytest.param("两天前", "2026-11-27T08:00:00+00:00", False, "day", id="liang-days"),
    pytest.param("90天前更新", "2026-08-31T08:00:00+00:00", False, "day", id="days-updated"),
    pytest.param("2 周前", "2026-11-15T08:00:00+00:00", False, "week", id="weeks"),
    pytest.param("1 个月前", "2026-10-30T08:00:00+00:00", False, "month", id="month-is-30-days"),
    pytest.param("1 年前", "2025-11-29T08:00:00+00:00", False, "year", id="year-is-365-days"),
    # day names: midnight in Shanghai
    pytest.param("今天", "2026-11-28T16:00:00+00:00", False, "day", id="today"),
    pytest.param("昨天", "2026-11-27T16:00:00+00:00", False, "day", id="yesterday-zh"),
    pytest.param("前天", "2026-11-26T16:00:00+00:00", False, "day", id="day-before-yesterday"),
    pytest.param("今天发布", "2026-11-28T16:00:00+00:00", False, "day", id="today-published"),
    # relative, English
    pytest.param("3 days ago", "2026-11-26T08:00:00+00:00", False, "day", id="days-ago"),
    pytest.param("about 2 hours ago", "2026-11-29T06:00:00+00:00", True, "hour", id="about-hours-ago"),
    pytest.param("an hour ago", "2026-11-29T07:00:00+00:00", False, "hour", id="an-hour-ago"),
    pytest.param("30+ days ago", "2026-10-30T08:00:00+00:00", True, "day", id="plus-days-ago"),
    pytest.param("Posted 3 days ago", "2026-11-26T08:00:00+00:00", False, "day", id="posted-days-ago"),
    pytest.param("yesterday", "2026-11-27T16:00:00+00:00", False, "day", id="yesterday"),
    pytest.param("just now", "2026-11-29T08:00:00+00:00", False, "minute", id="just-now-en"),
    # absolute dates: Chinese forms at midnight in Shanghai, the ISO date at midnight UTC
    pytest.param("2026-11-20", "2026-11-20T00:00:00+00:00", False, "date", id="iso-date-utc"),
    pytest.param("2026/11/20", "2026-11-19T16:00:00+00:00", False, "date", id="slash-date"),
    pytest.param("2026年11月20日", "2026-11-19T16:00:00+00:00", False, "date", id="nian-yue-ri"),
    pytest.param("11月20日", "2026-11-19T16:00:00+00:00", False, "date", id="yue-ri-this-year"),
    pytest.param("12月20日", "2025-12-19T16:00:00+00:00", False, "date", id="yue-ri-future-is-last-year"),
    pytest.param("11月29日", "2026-11-28T16:00:00+00:00", False, "date", id="yue-ri-as-of-day"),
    pytest.param("09-03发布", "2026-09-02T16:00:00+00:00", False, "date", id="51job-mm-dd"),
    pytest.param("5月13日更新", "2026-05-12T16:00:00+00:00", False, "date", id="updated-yue-ri"),
    pytest.param("发布于 2026-11-20", "2026-11-20T00:00:00+00:00", False, "date", id="prefixed-iso-date"),
    # ISO datetimes and epochs
    pytest.param("2024-03-01T10:00:00Z", "2024-03-01T10:00:00+00:00", False, "date", id="iso-z"),
    pytest.param("2024-03-01T10:00:00+08:00", "2024-03-01T02:00:00+00:00", False, "date", id="iso-offset"),
    pytest.param("2024-03-01T10:00:00.123-05:00", "2024-03-01T15:00:00+00:00", False, "date", id="iso-fraction-negative-offset"),
    pytest.param("2024-03-01T10:00:00", "2024-03-01T10:00:00+00:00", False, "date", id="iso-naive-is-utc"),
    pytest.param("2024-03-01 10:00", "2024-03-01T10:00:00+00:00", False, "date", id="iso-space"),
    pytest.param("2026-09-18 12:55:59 UTC", "2026-09-18T12:55:59+00:00", False, "date", id="iso-utc-suffix-recruitee"),
    pytest.param(1709287200000, "2024-03-01T10:00:00+00:00", False, "date", id="lever-epoch-ms-int"),
    pytest.param("1709287200000", "2024-03-01T10:00:00+00:00", False, "date", id="epoch-ms-string"),
    pytest.param("1709287200", "2024-03-01T10:00:00+00:00", False, "date", id="epoch-seconds"),
    # nothing to resolve
    pytest.param("2026-02-30", None, False, None, id="impossible-date"),
    pytest.param("13-45发布", None, False, None, id="impossible-mm-dd"),
    pytest.param("普通员工", None, False, None, id="not-a-time"),
    pytest.param("<script>alert(1)</script>", None, False, None, id="script"),
    pytest.param("'; DROP TABLE postings; --", None, False, None, id="sql"),
    pytest.param("\x00\x1b[2J", None, False, None, id="control-characters"),
    pytest.param("x" * 100_000, None, False, None, id="100KB"),
    pytest.param("12345", None, False, None, id="short-number"),
    pytest.param("", None, False, None, id="empty"),
    pytest.param(None, None, False, None, id="none"),
]


@pytest.mark.parametrize("text, at, approx, unit", POSTED)
def test_parse_posted(text, at, approx, unit):
    posted = parse_posted(text, AS_OF)
    raw = str(text) if isinstance(text, int) else text
    assert posted == PostedTime(raw=raw, at=at, approx=approx, unit=unit)


def test_anchor_in_another_zone_gives_the_same_instant():
    shanghai_anchor = AS_OF.astimezone(timezone(timedelta(hours=8)))
    assert parse_posted("发布于 大约 4 小时前", shanghai_anchor).at == "2026-11-29T04:00:00+00:00"


def test_day_names_follow_the_chosen_zone():
    # 2026-11-29 08:00 UTC is still 2026-11-29 in UTC: today's midnight is 00:00 UTC there
    assert parse_posted("今天", AS_OF, tz=UTC).at == "2026-11-29T00:00:00+00:00"
    # 20:00 UTC is already the next day in Shanghai
    assert parse_posted("今天", datetime(2026, 11, 29, 20, 0, tzinfo=UTC)).at == "2026-11-29T16:00:00+00:00"


def test_naive_anchor_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        parse_posted("刚刚", datetime(2026, 11, 29, 8, 0))


@settings(max_examples=examples(300), deadline=None)
@given(st.one_of(st.text(max_size=60), st.integers()))
def test_never_raises(text):
    posted = parse_posted(text, AS_OF)
    assert (posted.at is None) == (posted.unit is None)
    if posted.at is not None:
        assert datetime.fromisoformat(posted.at).utcoffset() == timedelta(0)


PUBLISHED = [
    pytest.param("新岗位 · 今天发布", PostedTime(raw="新岗位 · 今天发布", at="2026-11-28T16:00:00+00:00", unit="day",
                                               is_new=True, label="今天发布"), id="seeds-new-today"),
    pytest.param("今天发布", PostedTime(raw="今天发布", at="2026-11-28T16:00:00+00:00", unit="day",
                                     is_new=False, label="今天发布"), id="not-new"),
    pytest.param("新岗位 · 3天前发布", PostedTime(raw="新岗位 · 3天前发布", at="2026-11-26T08:00:00+00:00", unit="day",
                                              is_new=True, label="3天前发布"), id="new-days-ago"),
    pytest.param("新岗位", PostedTime(raw="新岗位", is_new=True), id="new-only"),
    pytest.param("新岗位 · 很久以前", PostedTime(raw="新岗位 · 很久以前", is_new=True, label="很久以前"), id="unknown-label"),
    pytest.param("", PostedTime(raw=""), id="empty"),
    pytest.param(None, PostedTime(raw=None), id="none"),
]


@pytest.mark.parametrize("text, expected", PUBLISHED)
def test_parse_published(text, expected):
    assert parse_published(text, AS_OF) == expected


def test_parse_published_without_anchor_keeps_label_only():
    assert parse_published("新岗位 · 今天发布") == PostedTime(raw="新岗位 · 今天发布", is_new=True, label="今天发布")


PLUS_8 = timezone(timedelta(hours=8))
AS_OF_VALUES = [
    pytest.param("2026-11-29", datetime(2026, 11, 28, 16, 0, tzinfo=UTC), id="date-is-local-midnight"),
    pytest.param("2026-11-29T12:00:00", datetime(2026, 11, 29, 4, 0, tzinfo=UTC), id="naive-datetime-is-local"),
    pytest.param("2026-11-29T12:00:00Z", datetime(2026, 11, 29, 12, 0, tzinfo=UTC), id="utc"),
    pytest.param("2026-11-29T12:00:00-05:00", datetime(2026, 11, 29, 17, 0, tzinfo=UTC), id="offset"),
    pytest.param(" 2026-11-29T12:00 ", datetime(2026, 11, 29, 4, 0, tzinfo=UTC), id="spaces-no-seconds"),
    pytest.param(None, AS_OF, id="none-is-default"),
    pytest.param("", AS_OF, id="blank-is-default"),
]


@pytest.mark.parametrize("value, expected", AS_OF_VALUES)
def test_parse_as_of(value, expected):
    result = parse_as_of(value, AS_OF, tz=PLUS_8)
    assert result == expected
    assert result.tzinfo is UTC


def test_parse_as_of_naive_default_is_local():
    assert parse_as_of(None, datetime(2026, 11, 29, 12, 0), tz=PLUS_8) == datetime(2026, 11, 29, 4, 0, tzinfo=UTC)


def test_parse_as_of_uses_the_machine_zone_by_default(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        assert parse_as_of("2026-11-29T12:00:00", AS_OF) == datetime(2026, 11, 29, 4, 0, tzinfo=UTC)
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("value", ["yesterday", "29/11/2026", "2026-13-01", "now"])
def test_parse_as_of_refuses_other_text(value):
    with pytest.raises(ValueError, match="--as-of"):
        parse_as_of(value, AS_OF)


# --------------------------------------------------------------------------- what a post time rests on (#27.5)

from normalize.dates import local_time, posted_source, source_zone  # noqa: E402

ANCHOR = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)


@pytest.mark.parametrize("text, as_of_source, expected", [
    pytest.param("2026-11-20", "file_mtime", "source", id="iso-date-is-stated"),
    pytest.param("09-03发布", "file_mtime", "source", id="date-without-year-is-stated"),
    pytest.param("1764561600000", "fetched", "source", id="epoch"),
    pytest.param("发布于 大约 4 小时前", "file_mtime", "file_mtime", id="relative-to-mtime"),
    pytest.param("今天", "as_of", "as_of", id="day-name-to-given-anchor"),
    pytest.param("3 days ago", "fetched", "fetched", id="relative-to-fetch"),
    pytest.param("不知道", "as_of", None, id="not-a-time"),
])
def test_posted_source(text, as_of_source, expected):
    assert posted_source(parse_posted(text, ANCHOR), as_of_source) == expected
    assert posted_source(None, as_of_source) is None


@pytest.mark.parametrize("tz, texts, expected", [
    pytest.param(None, ("CUDA算子开发工程师", "示例智能", "上海"), "Asia/Shanghai", id="chinese-posting"),
    pytest.param(None, ("Senior Engineer", "GitLab", "Remote, US"), "UTC", id="english-posting"),
    pytest.param(None, (None, None, None), "UTC", id="nothing-known"),
    pytest.param("Europe/Berlin", ("CUDA算子开发工程师",), "Europe/Berlin", id="given-zone-wins"),
])
def test_source_zone(tz, texts, expected):
    assert source_zone(tz, *texts) == expected


@pytest.mark.parametrize("at, tz, expected", [
    pytest.param("2026-11-29T04:00:00+00:00", "Asia/Shanghai", "2026-11-29T12:00:00+08:00", id="shanghai"),
    pytest.param("2026-11-29T04:00:00+00:00", "Europe/Berlin", "2026-11-29T05:00:00+01:00", id="berlin-winter"),
    pytest.param("2026-07-01T04:00:00+00:00", "Europe/Berlin", "2026-07-01T06:00:00+02:00", id="berlin-summer"),
    pytest.param("2026-11-29T04:00:00+00:00", "UTC", "2026-11-29T04:00:00+00:00", id="utc"),
    pytest.param(None, "UTC", None, id="none"),
    pytest.param("garbage", "UTC", None, id="no-iso-time"),
    pytest.param(20261129, "UTC", None, id="a-number"),
])
def test_local_time(at, tz, expected):
    assert local_time(at, tz) == expected


def test_normalized_posting_says_what_its_post_time_rests_on():
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting

    raw = RawPosting(source="textdump", source_id="a.txt#0", locator="a.txt", fetched_at="2026-12-01T04:00:00+00:00",
                     as_of="2026-12-01T04:00:00+00:00", company="吉利汽车", title="AI算子开发工程师", posted="发布于 4 小时前")
    got = [(p.posted_at, p.posted_approx, p.posted_source, p.tz, p.posted_local) for p in (
        normalize_posting(raw, as_of_source="file_mtime"), normalize_posting(raw, as_of_source="as_of"),
        normalize_posting(raw.model_copy(update={"posted": "2026-11-20"}), as_of_source="file_mtime", tz="Europe/Berlin"),
        normalize_posting(raw.model_copy(update={"posted": None})))]
    assert got == [
        ("2026-12-01T00:00:00+00:00", True, "file_mtime", "Asia/Shanghai", "2026-12-01T08:00:00+08:00"),
        ("2026-12-01T00:00:00+00:00", False, "as_of", "Asia/Shanghai", "2026-12-01T08:00:00+08:00"),
        ("2026-11-20T00:00:00+00:00", False, "source", "Europe/Berlin", "2026-11-20T01:00:00+01:00"),
        (None, False, None, "Asia/Shanghai", None),
    ]


@pytest.mark.parametrize("posted, posted_at, problems", [
    pytest.param("2026-12-03", "2026-12-03T00:00:00+00:00", [], id="within-the-leeway"),
    pytest.param("2026-12-04", None, ["post time out of range: '2026-12-04'"], id="after-the-leeway"),
    pytest.param("9999-12-31", None, ["post time out of range: '9999-12-31'"], id="placeholder"),
    pytest.param("1990-01-01", "1990-01-01T00:00:00+00:00", [], id="earliest"),
    pytest.param("1970-01-01", None, ["post time out of range: '1970-01-01'"], id="epoch-zero"),
    pytest.param("0001-01-01", None, ["post time out of range: '0001-01-01'"], id="year-one"),
])
def test_a_post_time_out_of_range_is_kept_as_written_only(posted, posted_at, problems):
    from normalize.models import RawPosting
    from normalize.posting import normalize_posting

    raw = RawPosting(source="textdump", source_id="a.txt#0", locator="a.txt", fetched_at="2026-12-01T04:00:00+00:00",
                     as_of="2026-12-01T04:00:00+00:00", company="吉利汽车", title="AI算子开发工程师", posted=posted)
    p = normalize_posting(raw, as_of_source="as_of", tz="UTC")
    assert (p.posted_raw, p.posted_at, p.posted_source, p.problems) == (
        posted, posted_at, "source" if posted_at else None, problems)
