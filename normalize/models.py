"""The one documented schema: raw items every spider emits and the normalized posting.

Every field carries a ``description``; the same text feeds the SQLite column documentation and
Datasette's column descriptions (see ``crawler.store.schema.column_descriptions``).

Conventions
- Raw items hold strings as written by the source, never interpreted.
- Normalized fields keep their raw twin (``salary_raw`` beside ``salary_min``, ``posted_raw`` beside
  ``posted_at``) so parsers can be improved and re-run without crawling again.
- Times are ISO 8601 strings in UTC (``2026-11-29T04:00:00+00:00``).
- Money is in the currency's unit (CNY yuan, USD dollars), not thousands.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from .skills import SkillHit, hit_evidence

SECTION_KEYS = ("about", "requirements", "responsibilities", "preferred", "compensation", "benefits")
"""Canonical section keys, in display order. Unknown headings are kept under their own text."""

INSIGHT_KEYS = ("pros", "cons", "role", "strategy", "interview")
"""Canonical keys of the app's AI-insight lists."""

DIMENSIONS = ("pay", "growth", "worklife", "mission")
"""The four evaluation dimensions: 薪资福利, 成长发展, 工作生活, 使命价值."""

DIMENSION_LABELS = {"pay": "薪资福利", "growth": "成长发展", "worklife": "工作生活", "mission": "使命价值"}

HIDDEN_COMPANY = "（企业未公开）"
"""What a posting without company (the employer is hidden) shows in its place; the stored company stays null."""

Period = Literal["hour", "day", "week", "month", "year"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


# --------------------------------------------------------------------------- raw items


class RawInput(_Model):
    """One input exactly as received (a file or an HTTP body), stored before anything parses it."""

    source: str = Field(description="Spider that read the input, e.g. `textdump`, `greenhouse`.")
    locator: str = Field(description="Where the input came from: path relative to the ingest root, or URL.")
    sha256: str = Field(description="SHA-256 of the input bytes.")
    size: int = Field(description="Size of the input in bytes.")
    encoding: str | None = Field(None, description="Encoding the text was decoded with; null when undecodable.")
    text: str | None = Field(None, description="The input decoded as text, verbatim.")
    body: bytes | None = Field(None, description="The input bytes, kept only when they could not be decoded.")
    fetched_at: str = Field(description="When the input was read (UTC).")
    as_of: str = Field(description="Anchor for relative times in this input (file mtime or --as-of), UTC.")
    error: str | None = Field(None, description="Why the input as a whole could not be parsed, if it could not.")
    status: Literal["parsed", "partial", "quarantined"] = Field(
        "parsed", description="parsed; partial (some postings quarantined); quarantined (nothing usable)."
    )
    postings: int = Field(0, description="Postings parsed from the input.")
    reader: dict | None = Field(None, description="How to parse the input again without fetching it (`jobcrawl reparse`): "
                                                  "a web page's page class and its arguments, a table's reading options; "
                                                  "null for text dumps.")


class RawSection(_Model):
    """A block of a job description under one heading, lines as written."""

    heading: str = Field(description="Heading as written (`最低要求`, `Requirements`); empty for text before any heading.")
    lines: list[str] = Field(default_factory=list, description="Lines or bullets under the heading, as written.")


class RawSignal(_Model):
    key: str = Field(description="Signal label as written, e.g. `薪资信号`.")
    value: str = Field(description="Signal value as written, e.g. `市场水准 (35K-50K/月)`.")


class RawDimension(_Model):
    """One evaluation dimension block as the source wrote it."""

    name: str = Field(description="Dimension label as written, e.g. `薪资福利`.")
    score_raw: str | None = Field(None, description="Score line as written, e.g. `70中等`.")
    compact_raw: str | None = Field(None, description="Score from the compact summary line, e.g. `70`.")
    explanation: list[str] = Field(default_factory=list, description="Explanation lines.")
    signals: list[RawSignal] = Field(default_factory=list, description="Signals in source order.")


class RawEvaluation(_Model):
    """The source's own evaluation block (值不值得投 … 职位点评), unparsed numbers kept as text."""

    overall_raw: list[str] = Field(default_factory=list, description="Every line stating the overall score (`72综合评分`, `综合评分 72`).")
    summary: list[str] = Field(default_factory=list, description="Summary lines after the overall score.")
    compact_raw: str | None = Field(None, description="The compact dimension line(s), e.g. `薪资福利70成长发展90…`.")
    dimensions: list[RawDimension] = Field(default_factory=list, description="Dimension blocks in source order.")


class SalaryParts(_Model):
    """A salary as an API states it, in numbers (Lever ``salaryRange``, Greenhouse ``pay_input_ranges``,
    JSON-LD ``baseSalary``): stored as they are, beside the text written from them."""

    currency: str | None = Field(None, description="ISO 4217 code as given.")
    min: float | None = Field(None, description="Lower bound per period, in currency units.")
    max: float | None = Field(None, description="Upper bound per period, in currency units.")
    period: Period | None = Field(None, description="Pay period, when the API gives one.")
    estimated: bool = Field(False, description="The source marks the range as an estimate.")


class RawPosting(_Model):
    """What every spider emits: one posting, strings as the source wrote them."""

    source: str = Field(description="Spider name: `textdump`, `tabular`, `jsonld`, `greenhouse`, `lever`, `ashby`.")
    source_id: str = Field(description="Identifier of the record within its source (e.g. `path#index`, ATS job id).")
    locator: str = Field(description="Input the posting came from: path relative to the ingest root, or URL.")
    position: int = Field(0, description="Where in its input: page index for dumps and web pages (0-based), row or line number for tables.")
    input_sha256: str | None = Field(None, description="SHA-256 of the raw input this posting was parsed from.")
    url: str | None = Field(None, description="Canonical URL of the posting, if it has one.")
    fetched_at: str = Field(description="When the input was read (UTC).")
    as_of: str = Field(description="Anchor for relative times (UTC).")
    complete_listing: bool = Field(False, description="True when the source listing was complete (absent postings may be closed).")

    company: str | None = Field(None, description="Company as written.")
    title: str | None = Field(None, description="Job title as written.")
    location: str | None = Field(None, description="Location as written (`杭州`, `北京·海淀区`, `Remote, US`).")
    posted: str | None = Field(None, description="Post time as written (`发布于 大约 4 小时前`, ISO date).")
    published: str | None = Field(None, description="Publication label as written (`新岗位 · 今天发布`).")
    valid_through: str | None = Field(None, description="Closing date as written, if the source gives one.")
    seniority: str | None = Field(None, description="Seniority as written (`普通员工/个人贡献者`).")
    employment_type: str | None = Field(None, description="Employment type as written (`全职员工`, `FULL_TIME`).")
    work_mode: str | None = Field(None, description="Work mode as written (`仅现场办公`, `Remote`).")
    category: str | None = Field(None, description="Job category as written (`人工智能`).")
    experience: str | None = Field(None, description="Experience requirement as written (`1-3年`).")
    education: str | None = Field(None, description="Education requirement as written (`本科`).")
    company_info: str | None = Field(None, description="Company facts as written (`互联网A轮1000-9999人`).")
    tags: list[str] = Field(default_factory=list, description="Tags as written, in source order.")
    salary: str | None = Field(None, description="Salary as written (`43K`, `15-25k·13薪`, `$120,000 a year`).")
    salary_parts: SalaryParts | None = Field(None, description="The salary in numbers, when an API gives them (`salary` is then the text written from them).")
    salary_compare: str | None = Field(None, description="Salary comparison as written (`比人工智能中位数低`).")
    company_activity: list[str] = Field(default_factory=list, description="Company activity lines (`这家公司招聘很活跃`, `约 1900 个在招 · …`).")
    market: list[str] = Field(default_factory=list, description="Market lines (`选择面较广`, `杭州 · 人工智能 · 约 190 个在招`).")
    description: str | None = Field(None, description="Free job-description text (HTML already turned to text), when not given as sections.")
    sections: list[RawSection] = Field(default_factory=list, description="JD blocks under their headings, in source order.")
    insights: list[RawSection] = Field(default_factory=list, description="The app's AI-insight lists under their headings.")
    evaluation: RawEvaluation | None = Field(None, description="The source's own evaluation, if it has one.")
    extra: dict[str, str] = Field(default_factory=dict, description="Source fields with no column of their own, as written.")
    raw_hash: str | None = Field(None, exclude=True, description="Set by the file reader: :func:`normalize.posting.raw_item_hash` of the item under its parser (not dumped).")


class SeenPostings(_Model):
    """Postings of one input read again exactly as they were stored (each one's :attr:`RawPosting.raw_hash` is the
    stored one's): not parsed again, only seen at ``seen_at`` in that input."""

    source: str = Field(description="Their source.")
    locator: str = Field(description="Input they were read from.")
    input_sha256: str | None = Field(None, description="SHA-256 of that input.")
    seen_at: str = Field(description="When they were seen (the input's as_of, UTC).")
    complete_listing: bool = Field(False, description="Read in a complete listing of their source.")
    postings: list[tuple[str, str]] = Field(default_factory=list, description="(key, raw_hash) of each posting.")


class Quarantined(_Model):
    """An input or a part of one that could not become a posting; stored with its reason."""

    source: str = Field(description="Spider that read the input.")
    locator: str = Field(description="Input path or URL.")
    position: int | None = Field(None, description="Posting index within the input, when one part failed.")
    input_sha256: str | None = Field(None, description="SHA-256 of the raw input.")
    reason: str = Field(description="Short reason code, e.g. `empty`, `binary`, `truncated`, `no_posting`.")
    detail: str = Field(description="One clear line for humans naming the problem.")
    text: str | None = Field(None, description="The offending text (the posting chunk or the decoded file).")
    fetched_at: str = Field(description="When the input was read (UTC).")


# --------------------------------------------------------------------------- normalized


class SalaryEstimate(_Model):
    """A salary range the source presents as a signal or estimate (`未披露（AI估算：2.5千–4.5万/月）`)."""

    raw: str | None = Field(None, description="Signal text as written.")
    label: str | None = Field(None, description="Qualitative label before the range (`市场水准`, `未披露`).")
    min: float | None = Field(None, description="Lower bound per period, in currency units.")
    max: float | None = Field(None, description="Upper bound per period, in currency units.")
    currency: str | None = Field(None, description="ISO 4217 currency code.")
    period: Period | None = Field(None, description="Pay period of min/max.")
    estimated: bool = Field(False, description="The source says the range is an estimate (估算, estimated).")
    implausible: bool = Field(False, description="max/min > 10: kept as written but not trusted.")


class Salary(_Model):
    """Pay as written and normalized. Monthly figures are base pay per month; annual = monthly × months."""

    raw: str | None = Field(None, description="Salary text as written.")
    source: Literal["field", "text"] | None = Field(
        None, description="Where the salary was read: field (the source's salary field) or text (found in the "
                          "description or its compensation section, when the source has no salary field); null when missing.")
    status: Literal["parsed", "negotiable", "undisclosed", "unparseable", "missing"] = Field(
        "missing", description="parsed; negotiable (面议); undisclosed (未披露); unparseable (kept raw); missing."
    )
    min: float | None = Field(None, description="Lower bound per period, in currency units (43K → 43000).")
    max: float | None = Field(None, description="Upper bound per period; equals min for a single figure.")
    currency: str | None = Field(None, description="ISO 4217 code; CNY unless the text says otherwise.")
    period: Period | None = Field(None, description="Period of min/max: hour, day, week, month or year.")
    months: int = Field(12, description="Months of pay per year (`·13薪` → 13; default 12).")
    monthly_min: float | None = Field(None, description="Lower base pay per month (day × 21.75, hour × 174, year ÷ 12).")
    monthly_max: float | None = Field(None, description="Upper base pay per month.")
    annual_min: float | None = Field(None, description="Lower pay per year (monthly_min × months, or the yearly figure).")
    annual_max: float | None = Field(None, description="Upper pay per year.")
    estimated: bool = Field(False, description="The figure is an estimate, not the employer's statement.")
    implausible: bool = Field(False, description="max/min > 10: kept but flagged, never silently changed.")
    compare_raw: str | None = Field(None, description="Comparison as written (`比人工智能中位数低`).")
    vs_median: Literal["below", "above", "equal"] | None = Field(None, description="Salary versus the median the source compares with.")
    compare_scope: str | None = Field(None, description="What the median is over (`人工智能`).")
    signal: SalaryEstimate | None = Field(None, description="The source's salary signal/estimate, parsed.")


class Activity(_Model):
    """Counts of open postings the source states (`约 1900 个在招 · 其中人工智能 19 个`)."""

    label: str | None = Field(None, description="Qualitative label as written (`这家公司招聘很活跃`, `选择面较广`).")
    raw: str | None = Field(None, description="Count line as written.")
    city: str | None = Field(None, description="City the count is for (market lines).")
    category: str | None = Field(None, description="Category the count is for.")
    open_jobs: int | None = Field(None, description="Open postings (1900).")
    open_jobs_approx: bool = Field(False, description="The count is approximate (`约`).")
    open_in_category: int | None = Field(None, description="Open postings in the posting's category (company lines).")


class CompanyInfo(_Model):
    """Company facts run together in listing exports (`互联网A轮1000-9999人`)."""

    raw: str | None = Field(None, description="Company line as written.")
    industry: str | None = Field(None, description="Industry (`互联网`).")
    funding_stage: str | None = Field(None, description="Funding stage (`A轮`, `已上市`, `不需要融资`).")
    size_min: int | None = Field(None, description="Lower bound of the head count (`1000-9999人` → 1000).")
    size_max: int | None = Field(None, description="Upper bound of the head count; null when open-ended.")


# Skill evidence is the tagger's own record (a named tuple, cheap to build for the ~50 hits of a
# posting): skill, category, section, count, first_offset, matched (text as written); its snippet rendered when read.
SkillEvidence = SkillHit


class Signal(_Model):
    key: str = Field(description="Signal key (薪资信号, 技术前沿, 技术栈, 成长机会, 业务类型, 工作模式, 办公地点, 加班情况, 行业发展, 社会影响, 创新程度).")
    value: str = Field(description="Signal value.")


class Evaluation(_Model):
    """An evaluation of one posting by one scorer (`source` = the app's own, `jobcrawl-vN` = ours)."""

    scorer: str = Field(description="Who scored: `source`, `jobcrawl-v1`, `fit:<profile>`.")
    overall: int | None = Field(None, description="综合评分, 0–100.")
    pay: int | None = Field(None, description="薪资福利 score, 0–100.")
    growth: int | None = Field(None, description="成长发展 score, 0–100.")
    worklife: int | None = Field(None, description="工作生活 score, 0–100.")
    mission: int | None = Field(None, description="使命价值 score, 0–100.")
    levels: dict[str, str] = Field(default_factory=dict, description="Level per dimension and of the overall (key `overall`): 较低 (<60), 中等 (60–79), 较高 (≥80), or 信息不足 when the evidence is too little (the score is then null).")
    completeness: float | None = Field(None, description="Share of the overall's weight whose dimension is known (0–1); null for the app's own evaluation.")
    summary: str | None = Field(None, description="One-line verdict.")
    notes: list[str] = Field(default_factory=list, description="Further summary lines.")
    explanations: dict[str, str] = Field(default_factory=dict, description="Explanation sentence per dimension.")
    signals: dict[str, list[Signal]] = Field(default_factory=dict, description="Signals per dimension, in order.")
    evidence: dict[str, list[dict]] = Field(default_factory=dict, description="Per dimension: which rule fired on which text.")
    problems: list[str] = Field(default_factory=list, description="Inconsistencies found while reading the source (doubled values that disagree).")


class Posting(_Model):
    """A normalized posting: one row of `postings`, with its sections, insights and evaluation."""

    id: int | None = Field(None, description="Row id in this database.")
    key: str = Field(description="Stable identity: hash of source and source_id.")
    source: str = Field(description="Spider that produced the posting.")
    source_id: str = Field(description="Identifier within the source (`path#index`, ATS job id).")
    locator: str = Field(description="Input path (relative to the ingest root) or URL.")
    position: int = Field(0, description="Where in its input: page index (0-based) for dumps and web pages, row or line number for tables.")
    url: str | None = Field(None, description="URL of the posting.")
    company: str | None = Field(None, description="Company name.")
    title: str | None = Field(None, description="Job title.")
    city: str | None = Field(None, description="City (`杭州`).")
    district: str | None = Field(None, description="District within the city, when given.")
    location_raw: str | None = Field(None, description="Location as written.")
    category: str | None = Field(None, description="Job category (`人工智能`).")
    seniority: str | None = Field(None, description="Seniority as the source names it.")
    employment_type: str | None = Field(None, description="Employment type (`全职员工`, `FULL_TIME`).")
    work_mode: str | None = Field(None, description="Work mode: 仅现场办公 (on-site), 混合办公 (hybrid), 远程办公 (remote), as written.")
    remote: bool | None = Field(None, description="True when the posting allows remote work; null when unknown.")
    experience: str | None = Field(None, description="Experience requirement as written (`1-3年`).")
    experience_min_years: float | None = Field(None, description="Minimum years of experience (`1-3年` → 1; 应届 → 0).")
    experience_max_years: float | None = Field(None, description="Maximum years of experience, when bounded.")
    education: str | None = Field(None, description="Minimum education (`本科`, `硕士`).")
    company_info: CompanyInfo = Field(default_factory=CompanyInfo, description="Industry, funding stage and size of the company.")
    posted_raw: str | None = Field(None, description="Post time as written (`发布于 大约 4 小时前`).")
    posted_at: str | None = Field(None, description="Post time resolved against as_of (UTC).")
    posted_approx: bool = Field(False, description="The post time is approximate (`大约`, or relative to a file's modification time).")
    posted_source: Literal["source", "as_of", "fetched", "file_mtime"] | None = Field(
        None, description="What posted_at rests on: source (a date or time the posting states); a relative time "
                          "(`3 天前`, `今天`) counted back from as_of given to the ingest (as_of), from when the page "
                          "was fetched (fetched) or from the file's modification time (file_mtime, approximate); "
                          "null when the post time is unknown.")
    tz: str | None = Field(None, description="Time zone of the source (IANA name; Asia/Shanghai for Chinese boards): "
                                             "its dates are read and its times shown in it. Stored times are UTC.")
    posted_local: str | None = Field(None, description="posted_at in the source's time zone (ISO 8601 with its offset).")
    is_new: bool | None = Field(None, description="The source marks the posting new (`新岗位`).")
    published_label: str | None = Field(None, description="Publication label (`今天发布`).")
    valid_through: str | None = Field(None, description="Closing date given by the source (UTC).")
    tags: list[str] = Field(default_factory=list, description="Tags as written, in source order.")
    skills: list[str] = Field(default_factory=list, description="Canonical skills found in the tags and JD sections, by first appearance.")
    skill_evidence: list[SkillEvidence] = Field(default_factory=list, description="Evidence for each skill per section: skill, category, section, count, first_offset, matched (text as written), snippet.")
    salary: Salary = Field(default_factory=Salary, description="Salary, normalized with its raw text.")
    company_activity: Activity = Field(default_factory=Activity, description="Company hiring activity as the source states it.")
    market: Activity = Field(default_factory=Activity, description="Market for this city and category as the source states it.")
    description: str | None = Field(None, description="Free JD text when the source gives no sections.")
    sections: dict[str, list[str]] = Field(default_factory=dict, description="JD bullets by canonical key (about, requirements, responsibilities, preferred, compensation, benefits) or unknown heading.")
    section_headings: dict[str, str] = Field(default_factory=dict, description="Heading as written for each section key.")
    insights: dict[str, list[str]] = Field(default_factory=dict, description="The app's AI-insight lists: pros, cons, role, strategy, interview.")
    source_evaluation: Evaluation | None = Field(None, description="The source's own evaluation, parsed.")
    extra: dict[str, str] = Field(default_factory=dict, description="Source fields with no column of their own.")
    problems: list[str] = Field(default_factory=list, description="Data-quality problems found while normalizing.")
    content_hash: str = Field(description="SHA-256 of what the normalized posting says (not when or where it was read); a change means a new version.")
    input_sha256: str | None = Field(None, description="SHA-256 of the raw input the posting came from.")
    as_of: str = Field(description="Anchor used for relative times (UTC).")
    first_seen: str = Field(description="First time this posting was seen (UTC).")
    last_seen: str = Field(description="Last time this posting was seen (UTC).")
    closed_at: str | None = Field(None, description="When the posting disappeared from a complete listing of its source.")
    complete_listing: bool = Field(False, description="Seen in a complete listing of its source.")
    raw_hash: str | None = Field(None, exclude=True, description="Its raw item's :attr:`RawPosting.raw_hash` (stored in postings.raw_hash, not a model column).")

    @field_serializer("skill_evidence")
    def _evidence_as_records(self, value: list[SkillEvidence]) -> list[dict]:
        return hit_evidence(value, self.sections, self.tags)
