"""Salary text → :class:`normalize.models.Salary`: Chinese board forms (``15-25k·13薪``, ``8千-1.2万``,
``150-200元/天``, ``20-50万/年``) and English ones (``$120,000 - $150,000 a year``, ``€60k–80k``).

Rules (the contract the tests pin down):

- Amounts are in currency units: ``k``/``千`` × 1,000, ``万``/``w`` × 10,000, ``百万`` × 1,000,000, and
  ``m``/``million`` × 1,000,000 for currencies other than CNY.
  In a range written with one unit (``15-25k``, ``1.2-2万``) the unit applies to both bounds.
- Currency: the symbol or code written (``$`` → USD, ``€`` → EUR, ``£`` → GBP, ``¥``/``元``/``RMB`` → CNY,
  ``C$``/``A$``/``HK$`` … and ISO codes as written); price-parser finds the symbol. A bare ``$`` is the dollar of
  the posting's country (:data:`DOLLARS`, :func:`dollar_of`; USD when the country has none or is not known). Without one, Chinese amount words (元 万 千 薪)
  mean CNY, anything else ``default_currency``.
- Period: written (``/月``, ``/年``, ``万/年``, ``年薪``, ``元/天``, ``/时``, ``a year``, ``per annum``, ``/hour`` …).
  Unwritten: CNY with a unit (k/万/千) or amounts ≥ 1,000 → month (what Chinese boards mean);
  other currencies with amounts ≥ 1,000 → year (US/EU postings quote yearly pay). Smaller amounts with no
  period are ambiguous (day rate? thousands?) and reported ``unparseable``.
- Monthly base pay: month × 1; year ÷ 12; week × 52 ÷ 12; day × 21.75 (the statutory average of working
  days per month in China, 劳社部发〔2008〕3号); hour × 174 (8 h × 21.75). Annual = monthly × months
  (``·13薪`` → 13, default 12), except a yearly figure, which is the annual figure as written.
  Derived figures are rounded to cents.
- ``implausible`` when max/min > 10 (or min is 0): figures kept as written, only flagged.
- Anything else — more than two amounts, a lower bound above the upper one, an unknown currency
  symbol, text over 200 characters — is ``unparseable`` with the raw text kept. Never raises.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from urllib.parse import urlsplit

import pycountry

from price_parser import Price
from price_parser.parser import extract_currency_symbol

from .fields import parse_location
from .models import Salary, SalaryEstimate, SalaryParts
from .text import clean_line, fold

__all__ = ["parse_salary", "salary_from_parts", "parse_salary_estimate", "parse_salary_compare", "salary_from_text",
           "dollar_of", "DOLLARS", "MAX_SALARY_TEXT", "DAYS_PER_MONTH"]

MAX_SALARY_TEXT = 200
"""Longer text is not a salary field: reported unparseable without being searched."""

DAYS_PER_MONTH = Decimal("21.75")
"""Statutory average working days per month in China (劳社部发〔2008〕3号)."""
HOURS_PER_DAY = Decimal(8)
_MAX_AMOUNT = Decimal(10) ** 12

_TO_MONTHLY: dict[str, Decimal] = {
    "hour": HOURS_PER_DAY * DAYS_PER_MONTH,  # 174
    "day": DAYS_PER_MONTH,
    "week": Decimal(52) / Decimal(12),
    "month": Decimal(1),
    "year": Decimal(1) / Decimal(12),
}

_UNIT_FACTOR = {"k": 1000, "千": 1000, "thousand": 1000, "w": 10_000, "万": 10_000,
                "m": 1_000_000, "mn": 1_000_000, "million": 1_000_000, "百万": 1_000_000}

# Dash-like separators and range words, all rewritten to "-" before matching.
_RANGE_SEP = re.compile(r"[\u2010-\u2015\u2212\ufe58\ufe63~\u301c]|至|到|(?<![a-z])to(?![a-z])")
# 1.234,56 (decimal comma) | 120,000 / 60 000 / 1'000.5 | 1.5 / 1,5
_NUMBER = r"\d{1,3}(?:[.' ]\d{3})+,\d{1,2}|\d{1,3}(?:[,' ]\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?"
_AMOUNT = re.compile(
    rf"(?<![\d.,])(?P<num>{_NUMBER})(?![\d]|[.,]\d)(?:\s?(?P<unit>百万|万|千|thousand|million|mn|k|w|m)(?![a-z]))?"
)
_MILLION = {"m", "mn", "million"}
_MONTHS = re.compile(r"[·・•.*x×,，/]?\s*(?P<n>\d{1,2})\s*薪")
_DOLLAR_PREFIXES = "US|CA|C|A|AU|NZ|HK|S"
"""What may stand before a ``$`` to name its dollar (``US$``, ``C$``, ``HK$`` …)."""
_BETWEEN_OK = re.compile(rf"(?:[a-z]{{3}}|元)?-(?:[a-z]{{3}}|{_DOLLAR_PREFIXES.lower()})?")
"""What may stand between two amounts of a range, symbols left out: a code, ``-``, the next amount's code or the letters
of its dollar (``A$90,000 to A$110,000``)."""
_CNY_WORDS = re.compile(r"元|万|千|薪|人民币|rmb|cny")

_PERIODS: dict[str, re.Pattern[str]] = {
    period: re.compile(pattern)
    for period, pattern in {
        "hour": r"/\s*(?:小时|时|hour|hr|h)(?![a-z])|每小时|时薪|(?<![a-z])(?:per\s+hour|an?\s+hour|hourly)",
        "day": r"/\s*(?:天|日|day|d)(?![a-z])|每天|每日|日薪|(?<![a-z])(?:per\s+day|a\s+day|daily)",
        "week": r"/\s*(?:周|星期|week|wk)(?![a-z])|每周|周薪|(?<![a-z])(?:per\s+week|a\s+week|weekly)",
        "month": r"/\s*(?:月|month|mo|mth)(?![a-z])|每月|月薪|(?<![a-z])(?:per\s+month|a\s+month|monthly)",
        "year": r"/\s*(?:年|year|yr|annum)(?![a-z])|每年|年薪"
                r"|(?<![a-z])(?:per\s+(?:year|annum)|a\s+year|annually|annual|yearly|p\.\s?a\.?)(?![a-z])",
    }.items()
}
_ESTIMATED = re.compile(r"估算|估计|预估|(?<![a-z])est(?:imated?|\.)")
_NEGOTIABLE = re.compile(r"面议|面谈|面洽|negotiable|(?<![a-z])doe(?![a-z])|depending on experience")
_UNDISCLOSED = re.compile(r"未披露|保密|不公开|undisclosed|not disclosed|confidential")

# Currency symbols price-parser reports → ISO 4217. ``¥`` is CNY here: Chinese boards write it for yuan,
# Japanese postings write 円 or JPY. Three-letter codes price-parser reports are taken as they are.
_SYMBOLS = {
    "$": "USD", "us$": "USD", "€": "EUR", "£": "GBP", "¥": "CNY", "￥": "CNY", "rmb": "CNY", "元": "CNY",
    "hk$": "HKD", "s$": "SGD", "nt$": "TWD", "a$": "AUD", "au$": "AUD", "c$": "CAD", "ca$": "CAD",
    "nz$": "NZD", "r$": "BRL", "₹": "INR", "₩": "KRW", "円": "JPY", "zł": "PLN",
}


DOLLARS = {"US": "USD", "CA": "CAD", "AU": "AUD", "NZ": "NZD", "SG": "SGD", "HK": "HKD"}
"""What a bare ``$`` stands for in a posting located in each country (ISO 3166 alpha-2 → ISO 4217). Elsewhere, and
when the country is not known, ``$`` is USD."""

Dollar = str | Callable[[], str]
"""What a bare ``$`` stands for: a currency code, or a function that finds it (called only when one is met)."""


@functools.cache
def _subdivisions() -> dict[str, set[str]]:
    """A state or province of a :data:`DOLLARS` country, by code (``ON``, ``NSW``) and name (``ontario``) → the
    countries that have one so called."""
    index: dict[str, set[str]] = {}
    for country in DOLLARS:
        for sub in pycountry.subdivisions.get(country_code=country) or ():
            for key in (sub.code.split("-", 1)[1].casefold(), sub.name.casefold()):
                index.setdefault(key, set()).add(country)
    return index


def dollar_of(location: str | None, url: str | None = None, *, parsed: dict | None = None) -> str:
    """The currency a bare ``$`` stands for in a posting at ``location`` (as written) found at ``url``:
    :data:`DOLLARS` of its country — the country its location names (``Toronto, Ontario, Canada``), else the one
    country whose state or province it names (``Toronto, ON``; ``WA``, a state of two, names none), else a country
    code ending it (``Wellington, NZ``), else the country of the URL's host, a board's country subdomain or domain
    (``ca.indeed.com``, ``www.seek.com.au``) — else USD. ``parsed``: the location already parsed."""
    loc = parsed if parsed is not None else parse_location(location)
    country = loc["country"]
    for part in ([] if country else [p for p in (loc["region"], loc["unparsed"]) if p]):
        places = _subdivisions().get(part.casefold(), set())
        country = next(iter(places)) if len(places) == 1 else None
        if country:
            break
    if not country:
        country = next((p.upper() for p in (loc["region"], loc["unparsed"]) if p and p.upper() in DOLLARS), None)
    if not country and url:
        try:
            labels = (urlsplit(url).hostname or "").split(".")
        except ValueError:  # not a URL (``A://[``)
            labels = [""]
        country = next((label.upper() for label in (labels[0], labels[-1]) if label.upper() in DOLLARS), None)
    return DOLLARS.get(country or "", "USD")


def _prepare(text: str) -> str:
    """Folded (format characters dropped, NFKC: full-width digits, ``Ｋ``, ``～``; casefolded), controls removed,
    spaces collapsed, ranges as ``-``."""
    return _RANGE_SEP.sub("-", clean_line(fold(text)))


def _currency(text: str, folded: str, default: str, dollar: Dollar) -> str | None:
    """ISO code of the currency written in ``text`` (a bare ``$``: ``dollar``); None for a symbol we cannot name."""
    symbol = (extract_currency_symbol(unicodedata.normalize("NFKC", text), None) or "").strip()  # Price's currency
    if not symbol:
        return "CNY" if _CNY_WORDS.search(folded) else default
    if symbol == "$":
        return dollar() if callable(dollar) else dollar
    return _SYMBOLS.get(symbol.casefold()) or (symbol if re.fullmatch(r"[A-Z]{3}", symbol) else None)


def _number(token: str, cny: bool) -> Decimal | None:
    """One amount as written, None past 12 digits (not money). Chinese text never uses ``.`` for
    thousands (``1,5`` is a decimal comma, ``15,000`` a thousands one); elsewhere price-parser decides."""
    if cny:
        if re.fullmatch(r"\d+,\d{1,2}", token):
            token = token.replace(",", ".")
        try:
            number = Decimal(re.sub(r"[,' ]", "", token))
        except InvalidOperation:
            return None
    else:
        number = Price.fromstring(token).amount
    return number if number is not None and number < _MAX_AMOUNT else None


def _period(folded: str) -> str | None | bool:
    """The period written in the text, None when none is, False when several disagree."""
    found = {period for period, pattern in _PERIODS.items() if pattern.search(folded)}
    if len(found) > 1:
        return False
    return found.pop() if found else None


def _money(value: Decimal) -> float:
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def parse_salary(text: str | None, *, default_currency: str = "CNY", dollar: Dollar = "USD") -> Salary:
    """Parse a salary as written into a :class:`Salary`; never raises (see the module rules). ``dollar``: what a bare
    ``$`` stands for (:func:`dollar_of` the posting).

    A number instead of text (a JSON export's ``15000``) is read as its decimal string. A text without ``$`` is
    parsed once a process (a board repeats the same few salary texts): each call gets a copy of its own."""
    if text is not None and not isinstance(text, str):
        text = str(text)
    if text is None or not text.strip():
        return Salary(raw=text, status="missing")
    if len(text) > MAX_SALARY_TEXT:
        return Salary(raw=text, status="unparseable")
    if "$" in unicodedata.normalize("NFKC", text):  # what a bare $ is depends on the posting (``dollar``)
        return _parse(text, default_currency, dollar)
    return _parse_shared(text, default_currency).model_copy()


@functools.lru_cache(maxsize=4096)
def _parse_shared(text: str, default_currency: str) -> Salary:
    """:func:`_parse` of a text without ``$`` (``dollar`` is never read). Callers copy it: a Salary is mutable."""
    return _parse(text, default_currency, "USD")


def _parse(text: str, default_currency: str, dollar: Dollar) -> Salary:
    """:func:`parse_salary` of a non-blank text of at most :data:`MAX_SALARY_TEXT` characters."""
    unparseable = Salary(raw=text, status="unparseable")
    folded = _prepare(text)
    estimated = bool(_ESTIMATED.search(folded))

    months = 12
    months_match = _MONTHS.search(folded)
    if months_match:
        months = int(months_match["n"])
        if not 12 <= months <= 24:
            return unparseable
        folded = folded[: months_match.start()] + " " + folded[months_match.end():]

    amounts = list(_AMOUNT.finditer(folded))
    if not amounts:
        for status, pattern in (("negotiable", _NEGOTIABLE), ("undisclosed", _UNDISCLOSED)):
            if pattern.search(folded):
                return Salary(raw=text, status=status, months=months, estimated=estimated)
        return unparseable
    if len(amounts) > 2:
        return unparseable
    if len(amounts) == 2:
        between = re.sub(r"[^\w-]", "", folded[amounts[0].end(): amounts[1].start()])
        if not _BETWEEN_OK.fullmatch(between):
            return unparseable

    currency = _currency(text, folded, default_currency, dollar)
    if currency is None:
        return unparseable
    cny = currency == "CNY"
    units = [m["unit"] for m in amounts]
    if cny and _MILLION.intersection(units):  # Chinese text writes 百万; a Latin m here is not money
        return unparseable
    shared_unit = units[-1] or units[0]
    values: list[Decimal] = []
    for match, unit in zip(amounts, units):
        number = _number(match["num"], cny)
        if number is None:
            return unparseable
        values.append(number * _UNIT_FACTOR.get(unit or shared_unit or "", 1))
    low, high = values[0], values[-1]
    if low > high:
        return unparseable

    period = _period(folded)
    if period is False:
        return unparseable
    return _figures(text, low, high, currency, period, months, estimated, per_unit=bool(shared_unit))


def _figures(raw: str, low: Decimal, high: Decimal, currency: str, period: str | None, months: int, estimated: bool,
             *, per_unit: bool = False) -> Salary:
    """A parsed :class:`Salary` from its figures. Without a period, a CNY figure with a unit (``k``, ``万``) or of
    1,000 and more is monthly, another currency's of 1,000 and more yearly; a smaller one is unparseable."""
    if period is None:
        if currency == "CNY" and (per_unit or low >= 1000):
            period = "month"
        elif currency != "CNY" and low >= 1000:
            period = "year"
        else:
            return Salary(raw=raw, status="unparseable")
    factor = _TO_MONTHLY[period]
    monthly = [v * factor for v in (low, high)]
    annual = [low, high] if period == "year" else [m * months for m in monthly]
    return Salary(
        raw=raw,
        status="parsed",
        min=_money(low),
        max=_money(high),
        currency=currency,
        period=period,
        months=months,
        monthly_min=_money(monthly[0]),
        monthly_max=_money(monthly[1]),
        annual_min=_money(annual[0]),
        annual_max=_money(annual[1]),
        estimated=estimated,
        implausible=low <= 0 or high / low > 10,
    )


def salary_from_parts(raw: str | None, parts: SalaryParts, *, default_currency: str = "CNY") -> Salary:
    """The :class:`Salary` of figures an API gave as numbers (``parts``), with ``raw`` the text written from them:
    the same rules as :func:`parse_salary`, without reading the figures back from the text."""
    figures = [Decimal(repr(v)) for v in (parts.min, parts.max) if v is not None]
    if not figures or max(figures) >= _MAX_AMOUNT:
        return Salary(raw=raw, status="unparseable")
    return _figures(raw or "", min(figures), max(figures), parts.currency or default_currency, parts.period, 12,
                    parts.estimated)


_LABEL_SPLIT = re.compile(r"^(?P<label>[^(]*?)\s*\((?P<inner>.*)\)\s*$")
_AMOUNT_START = re.compile(r"[\d$€£¥]")


def parse_salary_estimate(text: str | None) -> SalaryEstimate:
    """The app's salary signal: a label, then a range in brackets (``市场水准 (35K-50K/月)``,
    ``未披露（AI估算：2.5千–4.5万/月）``). ``estimated`` when the text says 估算/估计/预估/estimated."""
    if text is None or not text.strip() or len(text) > MAX_SALARY_TEXT:
        return SalaryEstimate(raw=text)
    cleaned = clean_line(unicodedata.normalize("NFKC", text))
    split = _LABEL_SPLIT.match(cleaned)
    if split and not _AMOUNT_START.search(split["label"]):
        label, inner = split["label"], split["inner"]
    else:
        start = _AMOUNT_START.search(cleaned)
        label, inner = (cleaned[: start.start()], cleaned[start.start():]) if start else (cleaned, "")
    salary = parse_salary(inner) if inner else Salary(status="missing")
    parsed = salary.status == "parsed"
    return SalaryEstimate(
        raw=text,
        label=label.strip(" :") or None,
        min=salary.min,
        max=salary.max,
        currency=salary.currency if parsed else None,
        period=salary.period if parsed else None,
        estimated=bool(_ESTIMATED.search(_prepare(cleaned))),
        implausible=salary.implausible,
    )


_DIRECTIONS = {"低": "below", "高": "above", "持平": "equal", "相当": "equal", "接近": "equal", "一致": "equal",
               "等于": "equal"}
_COMPARE = (
    # 比人工智能中位数低 / 比人工智能的中位数略高
    re.compile(r"比(?P<scope>.+?)(?:的)?中位数(?:水平)?(?:略|偏|稍)?(?P<dir>低|高|持平|相当|接近)"),
    # 低于人工智能中位数 / 与人工智能中位数持平
    re.compile(r"(?:略|偏|稍)?(?P<dir>低|高|等)于(?P<scope>.+?)(?:的)?中位数"),
    re.compile(r"[与和跟](?P<scope>.+?)(?:的)?中位数(?:水平)?(?:基本)?(?P<dir>持平|相当|接近|一致)"),
)


def parse_salary_compare(text: str | None) -> tuple[str | None, str | None]:
    """``比人工智能中位数低`` → ``("below", "人工智能")``; 高 → above; 持平/相当/接近 → equal; else ``(None, None)``."""
    if not text or len(text) > MAX_SALARY_TEXT:
        return None, None
    cleaned = clean_line(unicodedata.normalize("NFKC", text))
    for pattern in _COMPARE:
        match = pattern.search(cleaned)
        if match:
            direction = match["dir"]
            return _DIRECTIONS["等于" if direction == "等" else direction], match["scope"].strip() or None
    return None, None


# --------------------------------------------------------------------------- pay stated in free text

_CODES = "|".join(["EUR", "GBP", *DOLLARS.values()])
_SYMBOL = rf"(?:(?:{_DOLLAR_PREFIXES})?\$|€|£|(?:{_CODES})\s?)"
_FIGURE = r"\d{1,3}(?:[,.]\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?"
_UNIT = r"(?:\s?[kK](?![a-zA-Z]))?"
_PERIOD = (r"(?:\s*(?:/\s*|per\s+|an?\s+|each\s+)(?:hour|hr|year|yr|annum|month|mo|week|day)(?![a-zA-Z])"
           r"|\s+(?:annually|hourly|yearly|monthly))?")
_TEXT_PAY = (
    # $60,000 - $97,000/year · $34.62/hour · $75k-$105k · €50.000 to 60.000 per year · $108,400 — $129,600 USD
    re.compile(rf"{_SYMBOL}\s?(?:{_FIGURE}){_UNIT}(?:\s*(?:-|–|—|to)\s*{_SYMBOL}?\s?(?:{_FIGURE}){_UNIT})?"
               rf"(?:\s*(?:{_CODES})(?![a-zA-Z]))?{_PERIOD}", re.I),
    # 15-25K·13薪 · 月薪8000-12000元 · 年薪30-50万 · 200-300元/天
    re.compile(r"(?:年薪|月薪|日薪|时薪)?\s*\d+(?:\.\d+)?\s*[kK千万wW]?\s*(?:-|~|～|至|到|—|–)\s*\d+(?:\.\d+)?\s*"
               r"(?:[kK千万wW]\s*元?|元)(?:\s*/\s*(?:月|年|天|日|时|小时))?(?:\s*[·*x×]?\s*\d{2}\s*薪)?"),
    re.compile(r"(?:年薪|月薪)\s*\d+(?:\.\d+)?\s*(?:[kK千万wW]\s*元?|元)(?:\s*[·*x×]?\s*\d{2}\s*薪)?"),
)
_PAY_WORDS = re.compile(r"salary|(?<![a-z])pay|compensation|wage|(?<![a-z])base(?![a-z])|(?<![a-z])rate|range|earn|"
                        r"(?<![a-z])ote(?![a-z])|薪|工资|待遇|收入", re.I)
_NOT_PAY = re.compile(r"stipend|401\s?\(?k|bonus|reimburs|allowance|(?<![a-z])match|relocation|budget|revenue|fund|"
                      r"raised|valuation|per diem|补贴|补助|奖金|报销|融资|营收|估值", re.I)
_PAY_LABEL = re.compile(r"(?:salary|(?<![a-z])pay|compensation|wage)(?:\s+(?:range|rate))?"
                        r"(?:\s+for\s+(?:this|the)\s+(?:role|position|job))?\s*(?:is|of)?\s*[:：]?\s*$"
                        r"|^\s*$", re.I)
"""What may stand right before a single amount on its line: a pay label (``Salary:``, ``Base salary``, ``Pay:``,
``The base salary for this role is``) or nothing (the amount opens its line)."""
_CLAUSE_END = re.compile(r"[.;:\n]|,\s|[$€£\d]")
"""Where the words that name a single amount (``$20,000 relocation budget``) end: the clause, or the next amount."""
_MIN_SINGLE_YEARLY = 10_000
_SINGLE_CURRENCIES = ("EUR", "GBP", *DOLLARS.values())
_CONTEXT = 80
"""Characters before an amount that say what it is (within its line)."""
_AFTER = 10
"""Characters after an amount that may still name it (``$100 monthly stipend``) but not the next clause
(``$60,000 - $97,000/year, plus bonus``)."""


def salary_from_text(blocks: Iterable[tuple[str, str]], *, dollar: Dollar = "USD") -> Salary | None:
    """The pay a posting states in its text, for a posting without a salary field: ``blocks`` are (section key,
    text), read in order — give the ``compensation`` section first, then the description. ``dollar``: what a bare
    ``$`` stands for (:func:`dollar_of` the posting).

    An amount with a currency (``$``, ``C$`` …, ``€``, ``£``, the codes of EUR, GBP and the :data:`DOLLARS`; or
    Chinese ``K``/``千``/``万``/``元``) counts when
    it is a range or states its period, parses (:func:`parse_salary`) and is plausible. Outside the
    compensation section its line must also name pay (salary, pay, compensation, wage, base, rate, range,
    薪, 工资, 待遇 … in the 80 characters before it). Never when the words before it on its line (or just after
    it) speak of a stipend, a 401(k), a bonus, an allowance, a budget or funding. A single amount without a
    period (``Salary: $150,000``) counts only as yearly pay labelled as such (:func:`_single_pay`). The result has
    ``source = text`` and the amount, spaces collapsed, as ``raw``.
    """
    for key, text in blocks:
        if not text:
            continue
        for pattern in _TEXT_PAY:
            for match in pattern.finditer(text):
                salary = _text_salary(key, text, match, dollar)
                if salary is not None:
                    return salary
    return None


def _text_salary(key: str, text: str, match: re.Match[str], dollar: Dollar) -> Salary | None:
    start = match.start() + len(match.group()) - len(match.group().lstrip())
    before = text[max(0, start - _CONTEXT) : start].split("\n")
    after = text[match.end() : match.end() + _AFTER].split("\n")[0]
    if _NOT_PAY.search(before[-1] + match.group() + after):
        return None
    # outside the compensation section the amount's line, or the line before (a heading), must name pay
    if key != "compensation" and not _PAY_WORDS.search("\n".join(before[-2:]) + match.group()):
        return None
    salary = parse_salary(re.sub(r"\s+", " ", match.group()).strip(), dollar=dollar)
    if salary.status != "parsed" or salary.implausible:
        return None
    if (salary.min == salary.max and not _period(_prepare(match.group()))
            and not _single_pay(key, before[-1], _CLAUSE_END.split(text[match.end():], 1)[0], salary)):
        return None
    salary.source = "text"
    return salary


def _single_pay(key: str, before: str, clause: str, salary: Salary) -> bool:
    """A single amount without a period is pay only when labelled as pay — right after a pay label on its line,
    or opening a line of the compensation section — with no other money named in the rest of its ``clause``,
    and plausible as yearly pay (EUR, GBP or a dollar of :data:`DOLLARS`, 10,000 or more)."""
    labelled = bool(_PAY_LABEL.search(before)) and (key == "compensation" or before.strip() != "")
    return (labelled and not _NOT_PAY.search(clause) and salary.period == "year" and salary.currency in _SINGLE_CURRENCIES
            and salary.min >= _MIN_SINGLE_YEARLY)
