"""Salary parsing: named example tables (price-parser style) and an optional run over real strings."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from normalize.salary import parse_salary, parse_salary_compare, parse_salary_estimate

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FIELDS = ("status", "min", "max", "currency", "period", "months",
          "monthly_min", "monthly_max", "annual_min", "annual_max", "implausible", "estimated")


def parsed(low, high, currency, period, monthly, annual, months=12, implausible=False, estimated=False):
    """Expected fields of a parsed salary: ``monthly`` and ``annual`` are (min, max) pairs."""
    return {"status": "parsed", "min": low, "max": high, "currency": currency, "period": period, "months": months,
            "monthly_min": monthly[0], "monthly_max": monthly[1], "annual_min": annual[0], "annual_max": annual[1],
            "implausible": implausible, "estimated": estimated}


def nothing(status, months=12):
    """Expected fields of a salary without figures."""
    return {"status": status, "min": None, "max": None, "currency": None, "period": None, "months": months,
            "monthly_min": None, "monthly_max": None, "annual_min": None, "annual_max": None,
            "implausible": False, "estimated": False}


SALARIES = [
    # the two seeds
    pytest.param("43K", parsed(43000, 43000, "CNY", "month", (43000, 43000), (516000, 516000)), id="seed000-43K"),
    pytest.param("3.5万", parsed(35000, 35000, "CNY", "month", (35000, 35000), (420000, 420000)), id="seed003-3.5wan"),
    # Chinese month ranges
    pytest.param("35K-50K/月", parsed(35000, 50000, "CNY", "month", (35000, 50000), (420000, 600000)), id="K-range-per-month"),
    pytest.param("15-25k·13薪", parsed(15000, 25000, "CNY", "month", (15000, 25000), (195000, 325000), months=13), id="k-13-months"),
    pytest.param("10-15K·13薪", parsed(10000, 15000, "CNY", "month", (10000, 15000), (130000, 195000), months=13), id="boss-13-months"),
    pytest.param("薪资 30-50K·14薪", parsed(30000, 50000, "CNY", "month", (30000, 50000), (420000, 700000), months=14), id="label-and-14-months"),
    pytest.param("1.2-2万", parsed(12000, 20000, "CNY", "month", (12000, 20000), (144000, 240000)), id="wan-shared-unit"),
    pytest.param("8千-1.2万", parsed(8000, 12000, "CNY", "month", (8000, 12000), (96000, 144000)), id="qian-to-wan"),
    pytest.param("0.8-1.3万/月", parsed(8000, 13000, "CNY", "month", (8000, 13000), (96000, 156000)), id="51job-wan-month"),
    pytest.param("4.5-6千/月", parsed(4500, 6000, "CNY", "month", (4500, 6000), (54000, 72000)), id="51job-qian-month"),
    pytest.param("15k-30k", parsed(15000, 30000, "CNY", "month", (15000, 30000), (180000, 360000)), id="lagou-k-k"),
    pytest.param("3000-10000元/月", parsed(3000, 10000, "CNY", "month", (3000, 10000), (36000, 120000)), id="yuan-month"),
    pytest.param("￥15,000-20,000", parsed(15000, 20000, "CNY", "month", (15000, 20000), (180000, 240000)), id="yen-sign-thousands"),
    pytest.param("RMB 20k-30k", parsed(20000, 30000, "CNY", "month", (20000, 30000), (240000, 360000)), id="RMB-code"),
    pytest.param("20-50万", parsed(200000, 500000, "CNY", "month", (200000, 500000), (2400000, 6000000)), id="wan-no-period-is-month"),
    # separators and widths
    pytest.param("35K–50K", parsed(35000, 50000, "CNY", "month", (35000, 50000), (420000, 600000)), id="en-dash"),
    pytest.param("35K—50K", parsed(35000, 50000, "CNY", "month", (35000, 50000), (420000, 600000)), id="em-dash"),
    pytest.param("35K~50K", parsed(35000, 50000, "CNY", "month", (35000, 50000), (420000, 600000)), id="tilde"),
    pytest.param("1万至2万", parsed(10000, 20000, "CNY", "month", (10000, 20000), (120000, 240000)), id="zhi"),
    pytest.param("３０－５０Ｋ", parsed(30000, 50000, "CNY", "month", (30000, 50000), (360000, 600000)), id="full-width"),
    pytest.param("10～15K", parsed(10000, 15000, "CNY", "month", (10000, 15000), (120000, 180000)), id="full-width-tilde"),
    # years
    pytest.param("20-50万/年", parsed(200000, 500000, "CNY", "year", (16666.67, 41666.67), (200000, 500000)), id="wan-per-year"),
    pytest.param("年薪30万", parsed(300000, 300000, "CNY", "year", (25000, 25000), (300000, 300000)), id="nianxin"),
    pytest.param("年薪20-30万·13薪", parsed(200000, 300000, "CNY", "year", (16666.67, 25000), (200000, 300000), months=13), id="nianxin-13-months-annual-as-written"),
    # days, hours, weeks
    pytest.param("150-200元/天", parsed(150, 200, "CNY", "day", (3262.5, 4350), (39150, 52200)), id="yuan-per-day"),
    pytest.param("100-120/天", parsed(100, 120, "CNY", "day", (2175, 2610), (26100, 31320)), id="per-day-no-yuan"),
    pytest.param("1元/天", parsed(1, 1, "CNY", "day", (21.75, 21.75), (261, 261)), id="51job-1-yuan-day"),
    pytest.param("50元/时", parsed(50, 50, "CNY", "hour", (8700, 8700), (104400, 104400)), id="yuan-per-shi"),
    pytest.param("50元/小时", parsed(50, 50, "CNY", "hour", (8700, 8700), (104400, 104400)), id="yuan-per-xiaoshi"),
    pytest.param("100-120元/时", parsed(100, 120, "CNY", "hour", (17400, 20880), (208800, 250560)), id="hour-range"),
    pytest.param("200-300/周", parsed(200, 300, "CNY", "week", (866.67, 1300), (10400, 15600)), id="per-week"),
    # other currencies
    pytest.param("$120,000 - $150,000 a year", parsed(120000, 150000, "USD", "year", (10000, 12500), (120000, 150000)), id="usd-a-year"),
    pytest.param("$50/hour", parsed(50, 50, "USD", "hour", (8700, 8700), (104400, 104400)), id="usd-per-hour"),
    pytest.param("$45/hr", parsed(45, 45, "USD", "hour", (7830, 7830), (93960, 93960)), id="usd-per-hr"),
    pytest.param("USD 120000-150000", parsed(120000, 150000, "USD", "year", (10000, 12500), (120000, 150000)), id="usd-code-no-period-is-year"),
    pytest.param("120000USD", parsed(120000, 120000, "USD", "year", (10000, 10000), (120000, 120000)), id="usd-code-after"),
    pytest.param("€60k–80k", parsed(60000, 80000, "EUR", "year", (5000, 6666.67), (60000, 80000)), id="eur-k"),
    pytest.param("€60.000 - €80.000 per year", parsed(60000, 80000, "EUR", "year", (5000, 6666.67), (60000, 80000)), id="eur-dot-thousands"),
    pytest.param("£45,000 per annum", parsed(45000, 45000, "GBP", "year", (3750, 3750), (45000, 45000)), id="gbp-per-annum"),
    pytest.param("1,5万", parsed(15000, 15000, "CNY", "month", (15000, 15000), (180000, 180000)), id="decimal-comma-wan"),
    pytest.param("HK$30,000/month", parsed(30000, 30000, "HKD", "month", (30000, 30000), (360000, 360000)), id="hkd-month"),
    pytest.param("$1.2M", parsed(1200000, 1200000, "USD", "year", (100000, 100000), (1200000, 1200000)), id="usd-million"),
    # flags
    pytest.param("2.5千-4.5万/月", parsed(2500, 45000, "CNY", "month", (2500, 45000), (30000, 540000), implausible=True), id="implausible-ratio-18"),
    pytest.param("1万-10万", parsed(10000, 100000, "CNY", "month", (10000, 100000), (120000, 1200000)), id="ratio-10-is-plausible"),
    pytest.param("0-1万", parsed(0, 10000, "CNY", "month", (0, 10000), (0, 120000), implausible=True), id="zero-lower-bound"),
    pytest.param("AI估算：2-3万/月", parsed(20000, 30000, "CNY", "month", (20000, 30000), (240000, 360000), estimated=True), id="estimated"),
    # no figures
    pytest.param("面议", nothing("negotiable"), id="mianyi"),
    pytest.param("薪资面议", nothing("negotiable"), id="xinzi-mianyi"),
    pytest.param("面议·13薪", nothing("negotiable", months=13), id="mianyi-13-months"),
    pytest.param("未披露", nothing("undisclosed"), id="undisclosed"),
    pytest.param("", nothing("missing"), id="empty"),
    pytest.param("   ", nothing("missing"), id="blank"),
    pytest.param(None, nothing("missing"), id="none"),
    # unparseable by rule
    pytest.param("competitive", nothing("unparseable"), id="no-number"),
    pytest.param("1-2", nothing("unparseable"), id="small-bare-numbers-ambiguous"),
    pytest.param("$50", nothing("unparseable"), id="small-usd-no-period"),
    pytest.param("50-30K", nothing("unparseable"), id="min-above-max"),
    pytest.param("2万-1.5万", nothing("unparseable"), id="min-above-max-units"),
    pytest.param("经验3年", nothing("unparseable"), id="not-a-salary"),
    pytest.param("前3个月8千", nothing("unparseable"), id="two-numbers-not-a-range"),
    pytest.param("10-15K·6薪", nothing("unparseable"), id="months-out-of-range"),
    pytest.param("5000/月 年终奖", parsed(5000, 5000, "CNY", "month", (5000, 5000), (60000, 60000)), id="trailing-words"),
]


@pytest.mark.parametrize("text, expected", SALARIES)
def test_parse_salary(text, expected):
    salary = parse_salary(text)
    assert salary.model_dump(include=set(FIELDS)) == expected
    assert salary.raw == text


HOSTILE = [
    pytest.param("x" * 100_000, id="100KB"),
    pytest.param("1" * 100_000, id="100KB-digits"),
    pytest.param("10-15K" + " " * 300, id="over-length-limit"),
    pytest.param("<script>alert(1)</script>", id="script-tag"),
    pytest.param("'; DROP TABLE postings; --", id="sql-drop"),
    pytest.param("SELECT * FROM salary WHERE 1=1", id="sql-select"),
    pytest.param("\x00\x01\x02\x1b[31m", id="control-characters"),
    pytest.param("\ufffd\ufffd", id="replacement-characters"),
    pytest.param("1e308-1e309万", id="huge-exponent"),
    pytest.param("9" * 40 + "元/月", id="forty-digits"),
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_unparseable(text):
    salary = parse_salary(text)
    assert salary.model_dump(include=set(FIELDS)) == nothing("unparseable")
    assert salary.raw == text


def test_control_characters_around_a_salary_are_ignored():
    salary = parse_salary("\x00\x01 10-15K\x07\u200b")
    assert (salary.status, salary.min, salary.max, salary.period) == ("parsed", 10000, 15000, "month")


def test_number_input_is_read_as_text():
    salary = parse_salary(15000)
    assert (salary.raw, salary.status, salary.min, salary.period) == ("15000", "parsed", 15000, "month")


def test_default_currency_applies_without_symbol_or_chinese_words():
    assert parse_salary("43K", default_currency="USD").model_dump(include={"currency", "period"}) == {
        "currency": "USD", "period": "year"}
    assert parse_salary("150元/天", default_currency="USD").currency == "CNY"


SALARYISH = st.text(alphabet="0123456789.,'-~ kKmMwW万千百元薪·/月年天时周$€£¥USDRMB", max_size=60)


@settings(max_examples=examples(500), deadline=None)
@given(st.one_of(st.text(max_size=80), SALARYISH))
def test_never_raises_and_parsed_results_are_complete(text):
    salary = parse_salary(text)
    assert salary.status in {"parsed", "negotiable", "undisclosed", "unparseable", "missing"}
    if salary.status == "parsed":
        assert salary.min <= salary.max
        assert None not in (salary.monthly_min, salary.monthly_max, salary.annual_min, salary.annual_max)
        assert salary.implausible == (salary.min <= 0 or salary.max / salary.min > 10)
    else:
        assert salary.min is salary.max is salary.monthly_min is None


KNOWN_MISSES = [
    pytest.param("$120,000 - $150,000 a year + 10% bonus", (120000, 150000, "year"),
                 id="bonus-percentage-is-a-third-number"),
    pytest.param("10-15K/月 + 年终奖2个月", (10000, 15000, "month"), id="bonus-months-is-a-third-number"),
]


@pytest.mark.xfail(strict=True, reason="more than two numbers are refused: the parser cannot tell which two are the range")
@pytest.mark.parametrize("text, expected", KNOWN_MISSES)
def test_known_misses(text, expected):
    salary = parse_salary(text)
    assert (salary.min, salary.max, salary.period) == expected


@pytest.mark.xfail(strict=True, reason="`up to`/`以上` bounds are read as a single figure (min == max)")
@pytest.mark.parametrize("text, expected", [
    pytest.param("up to $150k", (None, 150000), id="up-to"),
    pytest.param("15k以上", (15000, None), id="yishang"),
])
def test_open_bounds_known_misses(text, expected):
    salary = parse_salary(text)
    assert (salary.min, salary.max) == expected


def estimate(label, low=None, high=None, estimated=False, implausible=False):
    """Expected fields of a salary signal; figures, when given, are CNY per month."""
    figures = low is not None
    return {"label": label, "min": low, "max": high, "currency": "CNY" if figures else None,
            "period": "month" if figures else None, "estimated": estimated, "implausible": implausible}


ESTIMATES = [
    pytest.param("市场水准 (35K-50K/月)", estimate("市场水准", 35000, 50000), id="seed000-market-level"),
    pytest.param("未披露（AI估算：2.5千–4.5万/月）", estimate("未披露", 2500, 45000, estimated=True, implausible=True),
                 id="seed003-ai-estimate"),
    pytest.param("高于市场 40-60K (estimated)", estimate("高于市场", 40000, 60000, estimated=True), id="english-estimated"),
    pytest.param("高于市场 40-60K", estimate("高于市场", 40000, 60000), id="no-brackets"),
    pytest.param("市场水准", estimate("市场水准"), id="label-only"),
    pytest.param("未披露（预估：面议）", estimate("未披露", estimated=True), id="estimate-without-figures"),
    pytest.param(None, estimate(None), id="none"),
]


@pytest.mark.parametrize("text, expected", ESTIMATES)
def test_parse_salary_estimate(text, expected):
    estimate = parse_salary_estimate(text)
    assert estimate.model_dump(exclude={"raw"}) == expected
    assert estimate.raw == text


COMPARISONS = [
    pytest.param("比人工智能中位数低", ("below", "人工智能"), id="seed000-below"),
    pytest.param("比算法优化工程师中位数高", ("above", "算法优化工程师"), id="seed003-above"),
    pytest.param("比人工智能中位数略高", ("above", "人工智能"), id="slightly-above"),
    pytest.param("与人工智能中位数持平", ("equal", "人工智能"), id="chiping"),
    pytest.param("和人工智能中位数相当", ("equal", "人工智能"), id="xiangdang"),
    pytest.param("比人工智能中位数接近", ("equal", "人工智能"), id="jiejin"),
    pytest.param("低于人工智能中位数", ("below", "人工智能"), id="diyu"),
    pytest.param("高于人工智能的中位数", ("above", "人工智能"), id="gaoyu-de"),
    pytest.param("薪资不错", (None, None), id="no-comparison"),
    pytest.param("", (None, None), id="empty"),
    pytest.param(None, (None, None), id="none"),
    pytest.param("比" * 100_000, (None, None), id="100KB"),
]


@pytest.mark.parametrize("text, expected", COMPARISONS)
def test_parse_salary_compare(text, expected):
    assert parse_salary_compare(text) == expected


@pytest.mark.shared_data
def test_real_salary_strings():
    """Every real string parses to a sane monthly range or is reported without figures; prints the shares."""
    path = SHARED_DATA / "zh" / "salary_strings_dev.tsv"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = [(row["salary_string"], int(row["count"])) for row in csv.DictReader(handle, delimiter="\t")]
    assert len(rows) == 680
    insane, with_number, parsed_rows, parsed_weight, total_weight = [], 0, 0, 0, 0
    for text, count in rows:
        salary = parse_salary(text)
        has_number = any(ch.isdigit() for ch in text)
        with_number += has_number
        total_weight += count if has_number else 0
        if salary.status == "parsed":
            if not (500 <= salary.monthly_min <= salary.monthly_max <= 1_000_000 and salary.min <= salary.max):
                insane.append((text, salary.monthly_min, salary.monthly_max))
                continue
            parsed_rows += 1
            parsed_weight += count
        else:
            assert salary.status in {"unparseable", "negotiable", "undisclosed"}, text
    print(f"\nsalary_strings_dev.tsv: {parsed_rows}/{with_number} distinct strings with a number parsed "
          f"({parsed_rows / with_number:.1%}); weighted by count {parsed_weight}/{total_weight} "
          f"({parsed_weight / total_weight:.1%})")
    assert insane == []
    assert parsed_rows / with_number >= 0.98


# --------------------------------------------------------------------------- pay stated in free text (#27.4)

from normalize.salary import salary_from_text  # noqa: E402

# Shapes of real public ATS postings: Lever's additionalPlain, Greenhouse job content (GitLab's pay-range block,
# fixtures/web/ats/greenhouse_gitlab_jobs.json, as text), Ashby descriptions, Chinese JDs with a 薪资待遇 line.
FROM_TEXT = [
    pytest.param([("description", "Compensation: The salary range for this role is $60,000 - $97,000/year, plus bonus.")],
                 ("$60,000 - $97,000/year", 60000.0, 97000.0, "USD", "year", 5000.0, 8083.33), id="lever-range-per-year"),
    pytest.param([("description", "The hourly pay rate for this position is $34.62/hour.")],
                 ("$34.62/hour", 34.62, 34.62, "USD", "hour", 6023.88, 6023.88), id="greenhouse-hourly"),
    pytest.param([("description", "Pay Range: $75k-$105k depending on experience")],
                 ("$75k-$105k", 75000.0, 105000.0, "USD", "year", 6250.0, 8750.0), id="k-range"),
    pytest.param([("description", "United States Salary Range\n$108,400\n—\n$129,600 USD\nHow GitLab Supports Full-Time Employees")],
                 ("$108,400 — $129,600 USD", 108400.0, 129600.0, "USD", "year", 9033.33, 10800.0), id="gitlab-pay-range-block"),
    pytest.param([("compensation", "£45,000 to £55,000 per annum"), ("description", "Base salary $1 - $2 per hour")],
                 ("£45,000 to £55,000 per annum", 45000.0, 55000.0, "GBP", "year", 3750.0, 4583.33), id="compensation-section-first"),
    pytest.param([("compensation", "€50.000 – €60.000 per year, 30 days of holiday")],
                 ("€50.000 – €60.000 per year", 50000.0, 60000.0, "EUR", "year", 4166.67, 5000.0), id="euro-decimal-point-thousands"),
    pytest.param([("description", "岗位职责：负责推理引擎开发\n薪资待遇：15-25K·13薪，五险一金")],
                 ("15-25K·13薪", 15000.0, 25000.0, "CNY", "month", 15000.0, 25000.0), id="chinese-line"),
    # a single yearly amount without a period, labelled as pay (#27.4)
    pytest.param([("description", "Salary: $150,000")],
                 ("$150,000", 150000.0, 150000.0, "USD", "year", 12500.0, 12500.0), id="one-amount-without-period"),
    pytest.param([("description", "The base salary for this role is $185,000, plus equity and benefits.")],
                 ("$185,000", 185000.0, 185000.0, "USD", "year", 15416.67, 15416.67), id="one-amount-base-salary-sentence"),
    pytest.param([("description", "Base salary $150,000 plus $20,000 bonus")],
                 ("$150,000", 150000.0, 150000.0, "USD", "year", 12500.0, 12500.0), id="one-amount-before-a-bonus"),
    pytest.param([("compensation", "Pay\n$140,000 USD\nThe offer may vary with location.")],
                 ("$140,000 USD", 140000.0, 140000.0, "USD", "year", 11666.67, 11666.67), id="one-amount-opens-compensation-line"),
    pytest.param([("description", "Pay: £65,000")],
                 ("£65,000", 65000.0, 65000.0, "GBP", "year", 5416.67, 5416.67), id="one-amount-gbp-pay-label"),
    pytest.param([("description", "Salary: €72.000 gross")],
                 ("€72.000", 72000.0, 72000.0, "EUR", "year", 6000.0, 6000.0), id="one-amount-euro"),
    pytest.param([("compensation", "年薪30-50万，另有股票")],
                 ("年薪30-50万", 300000.0, 500000.0, "CNY", "year", 25000.0, 41666.67), id="chinese-yearly"),
]

NOT_PAY = [
    pytest.param([("description", "401(k) Matching: We match 100% of the first 10% of pre-tax 401(k) contributions you make, "
                                   "up to a maximum of $10,000 per year.")], id="lever-401k"),
    pytest.param([("description", "Date Stipend: All Hinge employees receive a $100 monthly stipend for epic dates")],
                 id="lever-stipend"),
    pytest.param([("description", "We raised $20,000,000 in our Series B to grow the team.")], id="funding"),
    pytest.param([("description", "Our customers process $5,000 - $10,000 per day through the platform.")], id="no-pay-word"),
    pytest.param([("description", "Salary: $9,500")], id="one-amount-too-small-for-a-year"),
    pytest.param([("description", "Salary: 150,000 RMB")], id="one-amount-not-usd-eur-gbp"),
    pytest.param([("description", "Our team grew to $150,000 in monthly revenue")], id="one-amount-without-pay-label"),
    pytest.param([("description", "Applicants from all backgrounds. $140,000 USD")], id="one-amount-unlabelled-in-description"),
    pytest.param([("description", "Salary: $150,000 sign-on bonus")], id="one-amount-named-as-bonus-after-it"),
    pytest.param([("description", "Compensation: $20,000 relocation budget")], id="one-amount-relocation-budget"),
    pytest.param([("compensation", "Equity grant worth $50,000 at hire")], id="one-amount-equity-in-compensation"),
    pytest.param([("compensation", "Annual bonus of $5,000 - $10,000 per year")], id="bonus"),
    pytest.param([("compensation", "Relocation: up to $5,000 - $8,000 once")], id="relocation"),
    pytest.param([("description", "薪资：3-50K")], id="implausible-range"),
    pytest.param([("description", "提供餐补500-800元/月")], id="allowance"),
    pytest.param([("compensation", ""), ("description", None)], id="nothing"),
]


@pytest.mark.parametrize("blocks, expected", FROM_TEXT)
def test_salary_from_text(blocks, expected):
    got = salary_from_text(blocks)
    assert (got.raw, got.min, got.max, got.currency, got.period, got.monthly_min, got.monthly_max) == expected
    assert (got.source, got.status) == ("text", "parsed")


@pytest.mark.parametrize("blocks", NOT_PAY)
def test_salary_from_text_ignores_other_money(blocks):
    assert salary_from_text(blocks) is None


def test_a_posting_without_salary_field_gets_its_pay_from_the_text():
    from normalize.models import RawPosting, RawSection
    from normalize.posting import normalize_posting

    raw = RawPosting(source="lever", source_id="1", locator="https://jobs.lever.co/x/1", fetched_at="2026-12-01T00:00:00+00:00",
                     as_of="2026-12-01T00:00:00+00:00", company="Acme", title="Engineer",
                     sections=[RawSection(heading="What you'll do", lines=["Build GPU kernels"]),
                               RawSection(heading="Pay range", lines=["$60,000 - $97,000/year"])])
    posting = normalize_posting(raw)
    assert posting.sections == {"responsibilities": ["Build GPU kernels"], "compensation": ["$60,000 - $97,000/year"]}
    assert (posting.salary.source, posting.salary.raw, posting.salary.monthly_max) == ("text", "$60,000 - $97,000/year", 8083.33)
    stated = normalize_posting(raw.model_copy(update={"salary": "$70,000 a year"}))
    assert (stated.salary.source, stated.salary.raw) == ("field", "$70,000 a year")
    assert normalize_posting(raw.model_copy(update={"sections": raw.sections[:1]})).salary.source is None
