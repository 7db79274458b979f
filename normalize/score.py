"""Scorer ``jobcrawl-v1``: a posting's facts, market statistics and skill facts → an :class:`Evaluation`.

Pure and deterministic. :func:`score_posting` takes :class:`PostingFacts`, a :class:`Market` and
:class:`SkillInfo` by skill name; it returns four dimension scores 0–100 (pay, growth, work-life, mission)
and the overall (:func:`overall_score`), each with a level, and per dimension an explanation, the app's
signals and one evidence entry per rule that fired. A dimension below its evidence minimum has no score and
the level :data:`INSUFFICIENT`. Word rules (:data:`RULES`) read only the posting's own words
(:meth:`PostingFacts.lines`), each at most once. :func:`score_inputs` digests everything a score depends on.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import math
import re
import statistics
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import ahocorasick_rs
from pydantic import TypeAdapter

from .models import DIMENSION_LABELS, DIMENSIONS, HIDDEN_COMPANY, Evaluation, Signal
from .posting import level_for
from .text import find_matches

__all__ = [
    "SCORER", "SCORER_VERSION", "WEIGHTS", "MIN_SAMPLE", "INSUFFICIENT", "FRONTIER_CATEGORIES", "SkillInfo",
    "SalaryGroup", "Market", "PostingFacts", "PayRange", "score_posting", "score_inputs", "overall_score",
    "round_half_up", "work_mode_kind", "format_money", "salary_range",
]

SCORER = "jobcrawl-v1"
SCORER_VERSION = "3"
"""Version of these rules: part of every score's inputs, so a new version scores every posting again."""
INSUFFICIENT = "信息不足"
"""The level of a dimension (or overall) whose evidence does not meet its minimum."""
SAMPLE_TOO_SMALL = "样本不足"
WEIGHTS = {"pay": 0.35, "growth": 0.25, "worklife": 0.20, "mission": 0.20}
"""Weights of the overall score; they reproduce the app's overall from its dimensions on both seeds."""
MIN_SAMPLE = 20
"""Fewest salaries a peer group needs before its quartiles are stated or a percentile is taken."""
FRONTIER_CATEGORIES = {"gpu": "GPU/加速器", "compiler": "AI编译", "model": "模型", "technique": "AI算法"}
"""Skill categories that count as frontier directions for growth (taxonomy category → label)."""

PAY_BASE, PAY_SLOPE, NEUTRAL = 55.0, 0.35, 50.0
COMPARE_PERCENTILE = {"below": 25.0, "equal": 50.0, "above": 75.0}
MONTHS_POINTS = ((16, 8.0), (15, 6.0), (14, 5.0), (13, 3.0))
CAPS = {"benefit": 10.0, "frontier_skill": 20.0, "frontier_category": 12.0, "scope": 15.0, "sector": 24.0,
        "innovation": 12.0}
SNIPPET_RADIUS = 8
STACK_SIZE = 9


def round_half_up(x: float) -> int:
    return math.floor(x + 0.5 + 1e-9)


def _clamp(x: float) -> int:
    return max(0, min(100, round_half_up(x)))


def overall_score(scores: Mapping[str, int | None], weights: Mapping[str, float] = WEIGHTS) -> int | None:
    """Weighted mean of the known dimension scores (weights divided by the weight known), rounded half up;
    None when fewer than two are known."""
    known = {d: w for d, w in weights.items() if scores.get(d) is not None}
    if len(known) < 2:
        return None
    return round_half_up(sum(w * scores[d] for d, w in known.items()) / sum(known.values()))


def completeness(scores: Mapping[str, int | None], weights: Mapping[str, float] = WEIGHTS) -> float:
    """The share of the overall's weight whose dimension is known (0–1)."""
    return round(sum(w for d, w in weights.items() if scores.get(d) is not None) / sum(weights.values()), 2)


# --------------------------------------------------------------------------- inputs


class SkillInfo(NamedTuple):
    """What the scorer needs to know about a skill of the taxonomy."""

    category: str
    parent: str | None
    frontier: bool


@dataclass(frozen=True, slots=True)
class SalaryGroup:
    """Monthly salaries of one peer group (scope + key + currency), sorted, with their quartiles."""

    scope: str
    key: str
    currency: str
    values: tuple[float, ...]
    quartiles: tuple[float, float, float] | None  # (p25, median, p75); None for fewer than 2 values
    digest: str = field(init=False)  # of the values: what a score that places a salary in the group depends on

    def __post_init__(self) -> None:
        object.__setattr__(self, "digest", hashlib.sha256(array("d", self.values).tobytes()).hexdigest()[:32])

    @classmethod
    def of(cls, scope: str, key: str, currency: str, values: Iterable[float]) -> SalaryGroup:
        """Quartiles by the inclusive method (linear interpolation between order statistics)."""
        ordered = tuple(sorted(values))
        q = None
        if len(ordered) >= 2:
            p25, p50, p75 = statistics.quantiles(ordered, n=4, method="inclusive")
            q = (round(p25, 2), round(p50, 2), round(p75, 2))
        return cls(scope, key, currency, ordered, q)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def label(self) -> str:
        """How the app names the peers: ``人工智能``, ``杭州人工智能``."""
        return self.key.replace(" · ", "")

    def percentile(self, value: float) -> float:
        """Mid-rank percentile of ``value`` in the group: 100 × (below + ½ equal) / n."""
        lo = bisect.bisect_left(self.values, value)
        hi = bisect.bisect_right(self.values, value)
        return 100.0 * (lo + 0.5 * (hi - lo)) / self.n


@dataclass
class Market:
    """Market statistics of the corpus: salary peer groups and counts of open postings."""

    salary: dict[tuple[str, str, str], SalaryGroup] = field(default_factory=dict)
    company_open: dict[str, int] = field(default_factory=dict)
    company_category_open: dict[tuple[str, str], int] = field(default_factory=dict)
    city_category_open: dict[tuple[str, str], int] = field(default_factory=dict)
    min_sample: int = MIN_SAMPLE

    @classmethod
    def build(cls, salaries: Iterable[tuple[str | None, str | None, str | None, float]],
              openings: Iterable[tuple[str | None, str | None, str | None, int]] = (),
              *, min_sample: int = MIN_SAMPLE) -> Market:
        """From (category, city, currency, monthly) salaries and (company, city, category, count) openings."""
        groups: dict[tuple[str, str, str], list[float]] = {}
        for category, city, currency, monthly in salaries:
            if not category or not currency or monthly is None:
                continue
            groups.setdefault(("category", category, currency), []).append(monthly)
            if city:
                groups.setdefault(("city+category", peer_key(city, category), currency), []).append(monthly)
        market = cls(min_sample=min_sample)
        for (scope, key, currency), values in sorted(groups.items()):
            market.salary[(scope, key, currency)] = SalaryGroup.of(scope, key, currency, values)
        for company, city, category, count in openings:
            if company:
                market.company_open[company] = market.company_open.get(company, 0) + count
                if category:
                    k = (company, category)
                    market.company_category_open[k] = market.company_category_open.get(k, 0) + count
            if city and category:
                k = (city, category)
                market.city_category_open[k] = market.city_category_open.get(k, 0) + count
        return market

    def rows(self) -> list[dict[str, Any]]:
        """One row per statistic: (scope, key, currency, n, p25, median, p75); quartiles only where n ≥ min_sample."""
        out = []
        for (scope, key, currency), group in self.salary.items():
            q = group.quartiles if group.n >= self.min_sample else None
            out.append({"scope": scope, "key": key, "currency": currency, "n": group.n,
                        "p25": q[0] if q else None, "median": q[1] if q else None, "p75": q[2] if q else None})
        for scope, counts in (("company_open", self.company_open),
                              ("company+category_open", self.company_category_open),
                              ("city+category_open", self.city_category_open)):
            for key, n in sorted(counts.items()):
                out.append({"scope": scope, "key": key if isinstance(key, str) else peer_key(*key), "currency": None,
                            "n": n, "p25": None, "median": None, "p75": None})
        return out

    def peers(self, city: str | None, category: str | None, currency: str | None) -> tuple[SalaryGroup | None, list[dict]]:
        """The peer group a salary is placed in, and the evidence of groups passed over as too small."""
        tried: list[dict] = []
        if not category or not currency:
            return None, [{"rule": "no_peers", "reason": "类别未知" if not category else "币种未知", "points": 0}]
        for scope, key in (("city+category", peer_key(city, category) if city else None), ("category", category)):
            if key is None:
                continue
            group = self.salary.get((scope, key, currency))
            n = group.n if group else 0
            if n >= self.min_sample:
                return group, tried
            tried.append({"rule": "peers_too_small", "scope": scope, "key": key, "currency": currency, "n": n,
                          "min": self.min_sample, "text": "样本不足", "points": 0})
        return None, tried


def peer_key(city: str, category: str) -> str:
    return f"{city} · {category}"


@dataclass(frozen=True, slots=True)
class PostingFacts:
    """What the scorer reads of a posting (the normalized posting's fields, flattened)."""

    title: str | None = None
    company: str | None = None
    city: str | None = None
    district: str | None = None
    category: str | None = None
    seniority: str | None = None
    work_mode: str | None = None
    experience_min_years: float | None = None
    industry: str | None = None
    tags: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    sections: Mapping[str, Sequence[str]] = field(default_factory=dict)
    description: str | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    salary_status: str = "missing"
    salary_raw: str | None = None
    monthly_min: float | None = None
    monthly_max: float | None = None
    currency: str | None = None
    months: int = 12
    salary_estimated: bool = False
    salary_implausible: bool = False
    compare_raw: str | None = None
    vs_median: str | None = None
    compare_scope: str | None = None
    signal_raw: str | None = None
    signal_min: float | None = None
    signal_max: float | None = None
    signal_currency: str | None = None
    signal_period: str | None = None
    signal_estimated: bool = False
    signal_implausible: bool = False
    company_open_jobs: int | None = None
    market_open_jobs: int | None = None

    @classmethod
    def from_record(cls, rec: Mapping[str, Any]) -> PostingFacts:
        """From a :class:`normalize.models.Posting` dump or an export record (nested salary etc.)."""
        sal = rec.get("salary") or {}
        sig = sal.get("signal") or {}
        return cls(
            title=rec.get("title"), company=rec.get("company"), city=rec.get("city"), district=rec.get("district"),
            category=rec.get("category"), seniority=rec.get("seniority"), work_mode=rec.get("work_mode"),
            experience_min_years=rec.get("experience_min_years"),
            industry=(rec.get("company_info") or {}).get("industry"),
            tags=tuple(rec.get("tags") or ()), skills=tuple(rec.get("skills") or ()),
            sections=rec.get("sections") or {}, description=rec.get("description"), extra=rec.get("extra") or {},
            salary_status=sal.get("status") or "missing", salary_raw=sal.get("raw"),
            monthly_min=sal.get("monthly_min"), monthly_max=sal.get("monthly_max"), currency=sal.get("currency"),
            months=sal.get("months") or 12, salary_estimated=bool(sal.get("estimated")),
            salary_implausible=bool(sal.get("implausible")), compare_raw=sal.get("compare_raw"),
            vs_median=sal.get("vs_median"), compare_scope=sal.get("compare_scope"),
            signal_raw=sig.get("raw"), signal_min=sig.get("min"), signal_max=sig.get("max"),
            signal_currency=sig.get("currency"), signal_period=sig.get("period"),
            signal_estimated=bool(sig.get("estimated")), signal_implausible=bool(sig.get("implausible")),
            company_open_jobs=(rec.get("company_activity") or {}).get("open_jobs"),
            market_open_jobs=(rec.get("market") or {}).get("open_jobs"),
        )

    def lines(self) -> list[tuple[str, str]]:
        """The posting's own words as (section, line): title, category, tags, sections, description, industry, extra."""
        out: list[tuple[str, str]] = []
        if self.title:
            out.append(("title", self.title))
        if self.category:
            out.append(("category", self.category))
        out.extend(("tags", t) for t in self.tags)
        for key, bullets in self.sections.items():
            out.extend((key, b) for b in bullets)
        if self.description and not self.sections:
            out.extend(("description", line) for line in self.description.split("\n") if line.strip())
        if self.industry:
            out.append(("industry", self.industry))
        out.extend((f"extra:{k}", v) for k, v in self.extra.items() if isinstance(v, str) and v)
        return out


# --------------------------------------------------------------------------- word rules


class Rule(NamedTuple):
    dim: str
    name: str
    points: float
    label: str
    words: tuple[str, ...]
    group: str = ""  # rules of one group share a cap (CAPS) or a selection (sectors)
    skip_sections: frozenset[str] = frozenset()  # sections where the words do not count


# Scope words under 最低要求/优先资格 describe the candidate's past (主导过…), not this role.
CANDIDATE_SECTIONS = frozenset({"requirements", "preferred"})


def _r(dim: str, name: str, points: float, label: str, words: str, group: str = "") -> Rule:
    skip = CANDIDATE_SECTIONS if group == "scope" else frozenset()
    return Rule(dim, name, points, label, tuple(words.split()), group, skip)


RULES: tuple[Rule, ...] = (
    # pay: benefits
    _r("pay", "year_end_bonus", 3, "年终奖", "年终奖 年终奖金 年底双薪 年终分红", "benefit"),
    _r("pay", "equity", 4, "股票/期权", "股票 期权 股权激励 股权 rsu", "benefit"),
    _r("pay", "performance_bonus", 2, "绩效奖金", "绩效奖金 项目奖金 季度奖 奖金", "benefit"),
    _r("pay", "supplementary_insurance", 2, "补充医疗/商业保险", "补充医疗 商业保险 补充保险 补充公积金 企业年金", "benefit"),
    _r("pay", "signing_bonus", 2, "签字费", "签字费 签约奖", "benefit"),
    _r("pay", "social_insurance", 1, "五险一金", "五险一金 六险一金 五险二金 六险二金 社保 五险", "benefit"),
    _r("pay", "full_housing_fund", 1, "足额公积金", "全额公积金 足额公积金 高公积金", "benefit"),
    _r("pay", "allowances", 1, "补贴", "餐补 房补 住房补贴 交通补贴 交通补助 通讯补贴 餐饮补贴 免费班车 包吃 包住 免费三餐",
       "benefit"),
    _r("pay", "raises", 1, "定期调薪", "定期调薪 调薪 涨薪", "benefit"),
    # growth: scope of the role
    _r("growth", "lead", 3, "主导", "主导 牵头 带领 带团队 管理团队", "scope"),
    _r("growth", "foresight", 3, "前瞻", "前瞻 预研 技术预研", "scope"),
    _r("growth", "architecture", 3, "架构", "架构 架构设计 架构师", "scope"),
    _r("growth", "zero_to_one", 3, "从0到1", "从0到1 从零到一 0到1 从无到有", "scope"),
    _r("growth", "core", 3, "核心", "核心", "scope"),
    _r("growth", "expert", 3, "技术专家", "技术专家 专家", "scope"),
    _r("growth", "hard_problems", 3, "攻坚", "攻坚 攻关 技术难题 极致", "scope"),
    _r("growth", "ownership", 3, "独立负责", "独立负责 独立完成 端到端 全链路 owner", "scope"),
    _r("growth", "learning", 3, "培训/晋升", "导师 培训 晋升 技术分享 成长空间 mentor", "scope"),
    _r("growth", "routine", -5, "重复性工作", "重复性 简单重复"),
    _r("growth", "to_b", 0, "ToB", "企业客户 b端 tob 政企 行业客户 saas", "business"),
    _r("growth", "to_c", 0, "ToC", "c端 toc 消费者 亿级用户", "business"),
    # work-life
    _r("worklife", "w996", -20, "996", "996 9106 007", "overtime-"),
    _r("worklife", "big_small_week", -15, "大小周", "大小周 单双休", "overtime-"),
    _r("worklife", "single_rest", -10, "单休", "单休 六天工作制 做六休一", "overtime-"),
    _r("worklife", "overtime", -8, "加班", "加班 经常加班 弹性加班", "overtime-"),
    _r("worklife", "shifts", -8, "倒班/夜班", "倒班 夜班 轮班 值班 on-call oncall", "overtime-"),
    _r("worklife", "pressure", -6, "抗压/高强度", "抗压 抗压能力 承受压力 高强度 高压 快节奏 节奏快", "overtime-"),
    _r("worklife", "travel", -4, "出差", "出差 经常出差 驻场", "overtime-"),
    _r("worklife", "occasional_overtime", -4, "偶尔加班", "偶尔加班 少量加班", "overtime-"),
    _r("worklife", "overtime_pay", -3, "加班补贴", "加班补助 加班补贴 加班费 加班工资", "overtime-"),
    _r("worklife", "early_finish", 12, "965/准点下班", "965 955 朝九晚五 准点下班 按时下班", "overtime+"),
    _r("worklife", "no_overtime", 10, "不加班", "不加班 无加班 拒绝加班 很少加班 极少加班 从不加班 零加班 无需加班 不用加班",
       "overtime+"),
    _r("worklife", "no_996", 10, "拒绝996", "抵制996 拒绝996 不996 非996 告别996 无996", "overtime+"),
    _r("worklife", "weekends", 8, "双休", "双休 周末双休 五天工作制 5天工作制 做五休二", "overtime+"),
    _r("worklife", "flexible", 8, "弹性工作", "弹性工作 弹性工时 弹性上班 弹性打卡 弹性时间 不打卡 灵活办公 弹性工作制",
       "overtime+"),
    _r("worklife", "wlb", 5, "工作生活平衡", "工作生活平衡 work-life wlb", "overtime+"),
    _r("worklife", "paid_leave", 4, "带薪年假", "带薪年假 年假 带薪休假 带薪病假", "overtime+"),
    _r("worklife", "remote_text", 0, "远程", "远程办公 居家办公 远程工作 remote", "mode"),
    _r("worklife", "hybrid_text", 0, "混合办公", "混合办公 hybrid", "mode"),
    # mission: sectors (the strongest counts in full, each further one +3) and innovation
    _r("mission", "autonomous_driving", 15, "智能驾驶", "自动驾驶 智能驾驶 无人驾驶 辅助驾驶 智驾 车端 adas 高阶智驾", "sector"),
    _r("mission", "healthcare", 15, "医疗健康", "医疗 医药 医学 生物医药 药物研发 制药 医院 健康管理", "sector"),
    _r("mission", "new_energy", 15, "新能源", "新能源 储能 光伏 风电 碳中和 清洁能源 氢能 动力电池", "sector"),
    _r("mission", "chips", 15, "芯片/国产替代", "芯片 半导体 国产替代 国产化 自主可控 信创 集成电路 国产算力", "sector"),
    _r("mission", "public_good", 15, "公益", "公益 非营利 慈善", "sector"),
    _r("mission", "education", 12, "教育", "教育 教学 在线教育", "sector"),
    _r("mission", "research", 12, "科研", "科研 科学计算 研究院 实验室 基础研究 ai4s", "sector"),
    _r("mission", "robotics", 12, "机器人/具身智能", "机器人 具身智能 人形机器人", "sector"),
    _r("mission", "environment", 12, "环保", "环保 节能减排 环境保护 减排", "sector"),
    _r("mission", "ai", 8, "人工智能", "人工智能 大模型 生成式 aigc 深度学习 机器学习", "sector"),
    _r("mission", "smart_vehicle", 8, "智能汽车", "智能座舱 智能汽车 汽车智能化 车联网 座舱", "sector"),
    _r("mission", "agriculture", 6, "农业", "农业 种植 园艺 乡村振兴", "sector"),
    _r("mission", "gambling", -20, "博彩", "博彩 赌场 棋牌", "harm"),
    _r("mission", "debt_collection", -15, "催收", "催收 贷后", "harm"),
    _r("mission", "payday_loans", -8, "网贷", "网贷 小额贷款 现金贷", "harm"),
    _r("mission", "telesales", -5, "电销", "电销 电话销售", "harm"),
    _r("mission", "first_of_kind", 6, "首创", "首创 行业首创 开创 开拓性 全球首", "innovation"),
    _r("mission", "leading", 4, "行业领先", "行业领先 业界领先 国际领先 世界领先 领先", "innovation"),
    _r("mission", "innovative", 4, "创新", "创新 突破", "innovation"),
    _r("mission", "cutting_edge", 4, "前沿", "前沿 下一代 新一代 前瞻", "innovation"),
    _r("mission", "zero_to_one_m", 4, "从0到1", "从0到1 从零到一 从无到有", "innovation"),
)
RULE_BY_NAME = {r.name: r for r in RULES}
RULE_ORDER = {r.name: i for i, r in enumerate(RULES)}
GROWTH_SECTORS = {"autonomous_driving", "chips", "new_energy", "robotics", "ai", "smart_vehicle"}
POSITIVE_SECTORS = {"autonomous_driving", "healthcare", "new_energy", "public_good", "education", "research",
                    "environment"}
# Numbers that are rules only on their own: not inside a longer number, an ID or an amount.
_NUMERIC_LEFT = frozenset("0123456789.第号０１２３４５６７８９．")
_NUMERIC_RIGHT = frozenset("0123456789.号万千元k%０１２３４５６７８９．ｋ％")
_DIGITS = frozenset("0123456789０１２３４５６７８９")
_LATIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789ａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ０１２３４５６７８９")


def _fold(text: str) -> str:
    return text.casefold()


def _full_width(word: str) -> str:
    """``996`` → ``９９６``: the automaton also holds the full-width spelling of words with ASCII in them,
    so the text needs only casefolding."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)


def _build_matcher() -> tuple[ahocorasick_rs.AhoCorasick, list[str], list[tuple[int, ...]]]:
    """Every rule word (and its full-width form), with the rules each one belongs to."""
    by_word: dict[str, list[int]] = {}
    for i, rule in enumerate(RULES):
        for word in rule.words:
            folded = _fold(word)
            for variant in {folded, _full_width(folded)}:
                by_word.setdefault(variant, []).append(i)
    words = sorted(by_word)
    matcher = ahocorasick_rs.AhoCorasick(words, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
    return matcher, words, [tuple(by_word[w]) for w in words]


_MATCHER, _WORDS, _WORD_RULES = _build_matcher()


class Hit(NamedTuple):
    rule: Rule
    section: str
    matched: str  # as written when folding kept the line's length, else folded
    snippet: str  # about 2 × SNIPPET_RADIUS characters around the hit
    clause: str  # scope rules only: the clause of the line the hit is in (between punctuation)


_CLAUSE_SPLIT = re.compile("[，,；;。！!？?、]")


def _boundary_ok(text: str, start: int, end: int, word: str) -> bool:
    """A word starting (ending) with a digit must not continue a number (``第996号``, ``9965``); one
    starting (ending) with a Latin letter must not continue a Latin word (``toc`` in ``protocol``)."""
    before = text[start - 1] if start > 0 else "\n"
    after = text[end] if end < len(text) else "\n"
    first, last = word[0], word[-1]
    if first in _DIGITS:
        if before in _NUMERIC_LEFT or text[max(0, start - 2):start] == "编号":
            return False
    elif first in _LATIN and before in _LATIN:
        return False
    if last in _DIGITS:
        return after not in _NUMERIC_RIGHT
    return not (last in _LATIN and after in _LATIN)


def _clause(line: str, s: int, e: int, width: int = 24) -> str:
    """The clause (between punctuation) around line[s:e], at most ``width`` characters around the hit."""
    a = max(0, s - width)
    m = None
    for m in _CLAUSE_SPLIT.finditer(line, a, s):
        pass
    a = m.end() if m else a
    m = _CLAUSE_SPLIT.search(line, e, a + width)
    return line[a:m.start() if m else a + width].strip()


def find_rules(lines: Sequence[tuple[str, str]]) -> dict[str, Hit]:
    """First hit of every word rule in the lines, by rule name.

    Words match leftmost-longest (ahocorasick-rs) on the casefolded text; a match whose boundary
    fails (``996`` in ``第996号``, ``toc`` in ``protocol``) is dropped with the span it covers — no
    shorter word of the lexicon would stand there on its own.
    """
    folded = _fold("\n".join(text.replace("\n", " ") for _, text in lines))
    pieces = folded.split("\n")  # casefold may change lengths (ß → ss), never line breaks
    starts, pos = [], 0
    for piece in pieces:
        starts.append(pos)
        pos += len(piece) + 1
    hits: dict[str, Hit] = {}
    try:
        matches = _MATCHER.find_matches_as_indexes(folded)
    except UnicodeEncodeError:  # lone surrogates, which no word holds
        matches = find_matches(_MATCHER, folded)
    for k, start, end in matches:
        new = [RULES[i] for i in _WORD_RULES[k] if RULES[i].name not in hits]
        if not new or not _boundary_ok(folded, start, end, _WORDS[k]):
            continue
        line_no = bisect.bisect_right(starts, start) - 1
        section, written = lines[line_no]
        line = written if len(written) == len(pieces[line_no]) else pieces[line_no]
        s, e = start - starts[line_no], end - starts[line_no]
        for rule in new:
            if section not in rule.skip_sections:
                hits[rule.name] = Hit(rule, section, line[s:e], line[max(0, s - SNIPPET_RADIUS): e + SNIPPET_RADIUS],
                                      _clause(line, s, e) if rule.group == "scope" else "")
    return hits


# --------------------------------------------------------------------------- helpers


def format_money(value: float, currency: str | None = "CNY") -> str:
    """43000 → ``4.3万``, 8000 → ``8千`` (CNY); other currencies ``USD 10,000``."""
    if currency not in (None, "CNY"):
        return f"{currency} {value:,.0f}"
    if value >= 10_000:
        return f"{value / 10_000:.2f}".rstrip("0").rstrip(".") + "万"
    if value >= 1_000:
        return f"{value / 1_000:.1f}".rstrip("0").rstrip(".") + "千"
    return f"{value:.0f}元"


_REMOTE = re.compile(r"远程|居家|remote|telecommute|wfh", re.I)
_HYBRID = re.compile(r"混合|hybrid", re.I)
_ONSITE = re.compile(r"现场|坐班|驻场|on-?site|in-?office|in office", re.I)
_SENIOR = re.compile(r"资深|高级|专家|架构师|负责人|主管|总监|首席|leader|lead\b|senior|staff|principal|head of|\bsr\.?\b", re.I)
_JUNIOR = re.compile(r"实习|助理|初级|应届|校招|管培|intern|junior|assistant|trainee|graduate", re.I)


def work_mode_kind(work_mode: str | None, hits: Mapping[str, Hit] = {}) -> str | None:
    """remote, hybrid or onsite from the work-mode field (else from the JD words); None when unknown."""
    if work_mode:
        if _HYBRID.search(work_mode):
            return "hybrid"
        if _REMOTE.search(work_mode):
            return "remote"
        if _ONSITE.search(work_mode):
            return "onsite"
    if "hybrid_text" in hits:
        return "hybrid"
    if "remote_text" in hits:
        return "remote"
    return None


MODE_POINTS = {"remote": 15.0, "hybrid": 8.0, "onsite": 0.0}
MODE_LABELS = {"remote": "远程办公", "hybrid": "混合办公", "onsite": "仅现场办公"}


def _pts(x: float) -> float:
    return round(x, 2)


def _word_evidence(hit: Hit, points: float) -> dict[str, Any]:
    return {"rule": hit.rule.name, "matched": hit.matched, "section": hit.section, "snippet": hit.snippet,
            "points": _pts(points)}


def _capped(hits: Mapping[str, Hit], dim: str, group: str, evidence: list[dict]) -> list[Hit]:
    """Evidence for the hits of one rule group with its cap; returns the group's hits in rule order."""
    fired = [h for name, h in hits.items() if h.rule.dim == dim and h.rule.group == group]
    fired.sort(key=lambda h: RULE_ORDER[h.rule.name])
    total = 0.0
    for h in fired:
        evidence.append(_word_evidence(h, h.rule.points))
        total += h.rule.points
    cap = CAPS.get(group)
    if cap is not None and total > cap:
        evidence.append({"rule": "cap", "group": group, "cap": cap, "points": _pts(cap - total)})
    return fired


def _labels(names: Iterable[str]) -> str:
    return "、".join(dict.fromkeys(RULE_BY_NAME[n].label for n in names))


class _Dim(NamedTuple):
    score: int | None  # None: the evidence does not meet the dimension's minimum (信息不足)
    evidence: list[dict]


def _finish(evidence: list[dict], known: bool = True) -> _Dim:
    if not known:
        evidence.append({"rule": "insufficient", "text": INSUFFICIENT, "points": 0})
        return _Dim(None, evidence)
    return _Dim(_clamp(sum(e.get("points", 0) for e in evidence)), evidence)


_SIGNALS = TypeAdapter(dict[str, list[Signal]])
"""Validates every dimension's signals in one call (cheaper than a ``Signal(...)`` call per signal)."""


# --------------------------------------------------------------------------- dimensions: evidence and score


class PayRange(NamedTuple):
    low: float
    high: float
    currency: str
    text: str | None


def salary_range(f: PostingFacts) -> tuple[PayRange | None, list[dict]]:
    """The monthly range a posting is judged by, and evidence of what was passed over.

    The posting's own parsed, plausible salary; else a plausible monthly salary signal of the source
    (flagged in the evidence); else None.
    """
    why: list[dict] = []
    if f.salary_status == "parsed" and f.monthly_min is not None and f.currency and not f.salary_implausible:
        high = f.monthly_max if f.monthly_max is not None else f.monthly_min
        return PayRange(f.monthly_min, high, f.currency, f.salary_raw), why
    if f.salary_status == "parsed" and f.salary_implausible:
        why.append({"rule": "salary_implausible", "text": f.salary_raw, "points": 0})
    if f.signal_min is not None and not f.signal_implausible and f.signal_period == "month" and f.signal_currency:
        why.append({"rule": "source_salary_signal", "text": f.signal_raw, "estimated": f.signal_estimated, "points": 0})
        high = f.signal_max if f.signal_max is not None else f.signal_min
        return PayRange(f.signal_min, high, f.signal_currency, f.signal_raw), why
    return None, why


def _monthly(f: PostingFacts) -> tuple[float | None, str | None, str | None, list[dict]]:
    """The monthly figure placed among peers (midpoint of the range): (value, currency, text, evidence)."""
    pay, why = salary_range(f)
    if pay is None:
        return None, None, None, why
    return (pay.low + pay.high) / 2, pay.currency, pay.text, why


def _pay(f: PostingFacts, market: Market, hits: Mapping[str, Hit]) -> tuple[_Dim, SalaryGroup | None, float | None]:
    value, currency, text, evidence = _monthly(f)
    group = None
    if value is not None:
        group, tried = market.peers(f.city, f.category, currency)
        evidence.extend(tried)
    if value is not None and group is not None:
        p25, median, p75 = group.quartiles
        evidence.append({"rule": "base", "points": PAY_BASE})
        p = group.percentile(value)
        evidence.append({"rule": "salary_percentile", "text": text, "monthly": _pts(value), "scope": group.scope,
                         "key": group.key, "currency": group.currency, "n": group.n, "p25": p25, "median": median,
                         "p75": p75, "percentile": round(p, 1), "points": _pts(PAY_SLOPE * p)})
    elif f.vs_median in COMPARE_PERCENTILE:
        p = COMPARE_PERCENTILE[f.vs_median]
        evidence.append({"rule": "base", "points": PAY_BASE})
        evidence.append({"rule": "source_compare", "text": f.compare_raw, "vs_median": f.vs_median,
                         "assumed_percentile": p, "points": _pts(PAY_SLOPE * p)})
    else:
        evidence.append({"rule": "salary_unknown" if value is None else "no_comparison", "text": text or "未明确",
                         "points": 0})
    for months, points in MONTHS_POINTS:
        if f.months >= months:
            evidence.append({"rule": "months", "text": f"{f.months}薪", "months": f.months, "points": points})
            break
    _capped(hits, "pay", "benefit", evidence)
    known = group is not None and value is not None or f.vs_median in COMPARE_PERCENTILE
    return _finish(evidence, known), group, value


def compare_text(value: float, median: float, key: str) -> str:
    """``比人工智能中位数低`` / ``与人工智能中位数持平`` (the app's wording) from a value and its peers' median."""
    if value == median:
        return f"与{key}中位数持平"
    return f"比{key}中位数{'低' if value < median else '高'}"


def _seniority(f: PostingFacts) -> tuple[float, str] | None:
    for text in (f.seniority, f.title):
        if not text:
            continue
        if m := _JUNIOR.search(text):
            return -5.0, m.group()
        if m := _SENIOR.search(text):
            return 5.0, m.group()
    if f.experience_min_years is not None and f.experience_min_years >= 5:
        return 5.0, f"{f.experience_min_years:g}年以上经验"
    return None


class _SkillFacts(NamedTuple):
    frontier: list[str]  # frontier skills, in posting order
    categories: list[str]  # frontier categories present, in order of first skill
    stack: list[str]  # technical skills (not soft, not domain), in posting order


def _skill_facts(f: PostingFacts, info: Mapping[str, SkillInfo]) -> _SkillFacts:
    frontier, categories, stack = [], [], []
    for s in f.skills:
        si = info.get(s)
        if si is None:
            continue
        if si.frontier:
            frontier.append(s)
        if si.category in FRONTIER_CATEGORIES and si.category not in categories:
            categories.append(si.category)
        if si.category not in ("soft", "domain"):
            stack.append(s)
    return _SkillFacts(frontier, categories, stack)


def _growth(f: PostingFacts, sk: _SkillFacts, hits: Mapping[str, Hit]) -> _Dim:
    """Growth's evidence, with three facts its sentences name at 0 points: the technical stack (``stack``), the
    clauses its scope words stand in (``scope_clauses``) and the business type (``business``)."""
    evidence: list[dict] = [{"rule": "base", "points": NEUTRAL}]
    frontier, cats = sk.frontier, sk.categories
    if frontier:
        evidence.append({"rule": "frontier_skill", "skills": frontier[:8], "count": len(frontier),
                         "points": _pts(min(5.0 * len(frontier), CAPS["frontier_skill"]))})
    if cats:
        evidence.append({"rule": "frontier_category", "categories": cats,
                         "points": _pts(min(3.0 * len(cats), CAPS["frontier_category"]))})
    scope = _capped(hits, "growth", "scope", evidence)
    if "routine" in hits:
        evidence.append(_word_evidence(hits["routine"], hits["routine"].rule.points))
    level = _seniority(f)
    if level:
        evidence.append({"rule": "seniority", "text": level[1], "points": level[0]})
    if sk.stack:
        evidence.append({"rule": "stack", "skills": sk.stack[:STACK_SIZE], "points": 0})
    if scope:
        evidence.append({"rule": "scope_clauses", "clauses": list(dict.fromkeys(h.clause for h in scope[:3])),
                         "points": 0})
    business = [n for n in ("to_b", "to_c") if n in hits]
    if business:
        evidence.append({"rule": "business", "kinds": business, "points": 0})
    return _finish(evidence, _has_jd(f) or bool(frontier))


NOT_JD = frozenset({"benefits", "compensation"})


def _has_jd(f: PostingFacts) -> bool:
    """The posting has JD text: a section other than benefits and pay, or a description."""
    return bool(f.description and f.description.strip()) or any(k not in NOT_JD and v for k, v in f.sections.items())


def _worklife(f: PostingFacts, hits: Mapping[str, Hit]) -> _Dim:
    evidence: list[dict] = [{"rule": "base", "points": NEUTRAL}]
    mode = work_mode_kind(f.work_mode, hits)
    if mode:
        source = f.work_mode or hits["hybrid_text" if mode == "hybrid" else "remote_text"].matched
        evidence.append({"rule": "work_mode", "mode": mode, "text": source, "points": MODE_POINTS[mode]})
    bad = _capped(hits, "worklife", "overtime-", evidence)
    good = _capped(hits, "worklife", "overtime+", evidence)
    if not mode and not bad and not good:
        evidence.append({"rule": "unknown", "text": "未明确", "points": 0})
    return _finish(evidence, bool(mode or bad or good))


def _mission(sk: _SkillFacts, hits: Mapping[str, Hit]) -> _Dim:
    evidence: list[dict] = [{"rule": "base", "points": NEUTRAL}]
    sectors = sorted((h for h in hits.values() if h.rule.dim == "mission" and h.rule.group == "sector"),
                     key=lambda h: (-h.rule.points, RULE_ORDER[h.rule.name]))
    total = 0.0
    for i, h in enumerate(sectors):
        points = h.rule.points if i == 0 else 3.0
        evidence.append(_word_evidence(h, points))
        total += points
    if total > CAPS["sector"]:
        evidence.append({"rule": "cap", "group": "sector", "cap": CAPS["sector"], "points": _pts(CAPS["sector"] - total)})
    harm = _capped(hits, "mission", "harm", evidence)
    innovation = _capped(hits, "mission", "innovation", evidence)
    if sk.frontier:
        evidence.append({"rule": "new_tech", "skills": sk.frontier[:5], "points": 3.0})
    return _finish(evidence, bool(sectors or harm or innovation or sk.frontier))


def _market(f: PostingFacts, market: Market, group: SalaryGroup | None, value: float | None) -> list[dict]:
    """Evidence of the derived texts the app shows (比X中位数低, 约 N 个在招), from the corpus."""
    evidence = []
    if group is not None and value is not None:
        median = group.quartiles[1]
        evidence.append({"rule": "salary_compare", "text": compare_text(value, median, group.label),
                         "scope": group.scope, "n": group.n, "median": median, "source": f.compare_raw})
    if f.company:
        evidence.append({"rule": "company_open", "company": f.company, "corpus_open": market.company_open.get(f.company, 0),
                         "corpus_open_in_category": market.company_category_open.get((f.company, f.category), 0)
                         if f.category else None, "source_open": f.company_open_jobs})
    if f.city and f.category:
        evidence.append({"rule": "city_category_open", "key": peer_key(f.city, f.category),
                         "corpus_open": market.city_category_open.get((f.city, f.category), 0),
                         "source_open": f.market_open_jobs})
    return evidence


# --------------------------------------------------------------------------- dimensions: sentences


FACT_RULES = frozenset({"stack", "scope_clauses", "business"})
"""Evidence entries of 0 points that keep a fact only the sentences name (the growth signals show them)."""


class Prose(NamedTuple):
    """An evaluation's sentences: what :func:`render_evaluation` gives."""

    summary: str
    notes: list[str]
    explanations: dict[str, str]
    signals: dict[str, list[tuple[str, str]]]  # (key, value) by dimension


def _words(evidence: Sequence[dict], dim: str, group: str) -> list[dict]:
    """The word-rule entries of one rule group, in evidence order."""
    return [e for e in evidence if e["rule"] in RULE_BY_NAME and RULE_BY_NAME[e["rule"]].dim == dim
            and RULE_BY_NAME[e["rule"]].group == group]


def _sentence(parts: Sequence[str], score: int | None) -> str:
    text = "，".join(p for p in parts if p) + "。"
    return f"{INSUFFICIENT}：{text}" if score is None else text


def _pay_prose(evidence: Sequence[dict], f: PostingFacts) -> tuple[list[tuple[str, str]], list[str]]:
    by = {e["rule"]: e for e in evidence}
    value, currency, _, _ = _monthly(f)
    parts: list[str] = []
    if e := by.get("salary_percentile"):
        value, currency, p, median = e["monthly"], e["currency"], e["percentile"], e["median"]
        label = e["key"].replace(" · ", "")
        level = "高于市场" if p >= 75 else "低于市场" if p < 25 else "市场水准"
        signal = (f"{level} ({format_money(value, currency)}/月，{label}第{p:.0f}百分位，"
                  f"中位数{format_money(median, currency)}，{e['n']}个样本)")
        parts.append(f"月薪{format_money(value, currency)}，{compare_text(value, median, label)}"
                     f"（{label}同类{e['n']}个岗位的第{p:.0f}百分位）")
    elif e := by.get("source_compare"):
        signal = f"{e['text']}（来源说明；库内同类样本不足）"
        money = f"月薪{format_money(value, currency)}，" if value is not None else ""
        parts.append(f"{money}{e['text']}（来源说明，库内同类样本不足）")
    elif "salary_unknown" in by or value is None:
        signal = "未明确"
        parts.append("薪资未明确")
    else:
        small = [e for e in evidence if e["rule"] == "peers_too_small"]
        groups = "、".join(f"{e['key'].replace(' · ', '')}{e['n']}个" for e in small)
        why = f"{SAMPLE_TOO_SMALL}（{groups}，少于{small[0]['min']}个）" if groups else "类别未知，无同类可比"
        signal = f"{format_money(value, currency)}/月（{why}）"
        parts.append(f"月薪{format_money(value, currency)}，{why}，无法判断高低")
    if e := by.get("months"):
        parts.append(e["text"])
    benefits = [e["rule"] for e in _words(evidence, "pay", "benefit")]
    parts.append(f"提及{_labels(benefits)}等福利" if benefits else "JD未明确提及具体福利项目")
    return [("薪资信号", signal)], parts


def _growth_prose(evidence: Sequence[dict], score: int | None) -> tuple[list[tuple[str, str]], list[str]]:
    by = {e["rule"]: e for e in evidence}
    frontier = by.get("frontier_skill")
    stack = by["stack"]["skills"] if "stack" in by else []
    count = frontier["count"] if frontier else 0
    tech = "前沿/新兴技术" if count >= 2 else "涉及新兴技术" if count else "成熟/主流技术" if stack else "未明确"
    signals = [("技术前沿", tech), ("技术栈", "、".join(stack) if stack else "未明确")]
    if "scope_clauses" in by:
        signals.append(("成长机会", "、".join(by["scope_clauses"]["clauses"])))
    business = by["business"]["kinds"] if "business" in by else []
    signals.append(("业务类型", "ToB/ToC" if len(business) == 2 else RULE_BY_NAME[business[0]].label if business else "ambiguous"))

    scope = [e["rule"] for e in _words(evidence, "growth", "scope")]
    parts = []
    if frontier:
        parts.append(f"涉及{'、'.join(frontier['skills'][:3])}等{count}项前沿技术")
    if e := by.get("frontier_category"):
        parts.append(f"覆盖{'、'.join(FRONTIER_CATEGORIES[c] for c in e['categories'])}方向")
    if scope:
        parts.append(f"职责含{_labels(scope)}等范围信号")
    if e := by.get("seniority"):
        parts.append(f"岗位级别：{e['text']}")
    if "routine" in by:
        parts.append("工作内容重复性较高")
    if not parts:
        parts.append("JD未体现前沿技术或职责范围信号，成长空间无法判断")
    tail = "" if score is None else "技能成长空间大" if score >= 80 else "有一定成长空间" if score >= 60 else ""
    if tail:
        parts.append(tail)
    return signals, parts


def _worklife_prose(evidence: Sequence[dict], f: PostingFacts) -> tuple[list[tuple[str, str]], list[str]]:
    by = {e["rule"]: e for e in evidence}
    mode = by["work_mode"]["mode"] if "work_mode" in by else None
    bad = [e["rule"] for e in _words(evidence, "worklife", "overtime-")]
    good = [e["rule"] for e in _words(evidence, "worklife", "overtime+")]
    place = " · ".join(p for p in (f.city, f.district) if p) or "未明确"
    overtime = "；".join(p for p in (f"有加班迹象（{_labels(bad)}）" if bad else "",
                                     f"作息友好（{_labels(good)}）" if good else "") if p) or "未提及（无法判断）"
    signals = [("工作模式", f.work_mode or (MODE_LABELS[mode] if mode else "未明确")), ("办公地点", place),
               ("加班情况", overtime)]
    parts = []
    if mode:
        parts.append(f"工作模式为{f.work_mode or MODE_LABELS[mode]}")
    if bad:
        parts.append(f"JD提及{_labels(bad)}，工作强度可能较高")
    if good:
        parts.append(f"提及{_labels(good)}")
    if not bad and not good:
        parts.append("JD未提及工作时间、加班或弹性工时等WLB信息，无法判断工作节奏")
    return signals, parts


def _mission_prose(evidence: Sequence[dict]) -> tuple[list[tuple[str, str]], list[str]]:
    sectors = _words(evidence, "mission", "sector")
    harm = [e["rule"] for e in _words(evidence, "mission", "harm")]
    innovation = [e["rule"] for e in _words(evidence, "mission", "innovation")]
    frontier = any(e["rule"] == "new_tech" for e in evidence)
    names = {e["rule"] for e in sectors}
    industry = "高速增长赛道" if names & GROWTH_SECTORS else "稳定发展行业" if sectors else "未明确"
    impact = "存在争议" if harm else "正向社会影响力较高" if names & POSITIVE_SECTORS else "中性/一般"
    novelty = ("开拓性创新（行业首创）" if "first_of_kind" in innovation else
               "积极采用新技术" if innovation or frontier else "未明确")
    signals = [("行业发展", industry), ("社会影响", impact), ("创新程度", novelty)]
    parts = []
    if sectors:
        parts.append(f"岗位属于{'、'.join(dict.fromkeys(e['matched'] for e in sectors))}方向" + ("，处于高速增长赛道" if names & GROWTH_SECTORS else ""))
    if harm:
        parts.append(f"涉及{_labels(harm)}，社会评价存在争议")
    if innovation:
        parts.append(f"JD提及{_labels(innovation)}")
    if frontier:
        parts.append("积极采用新技术")
    if not parts:
        parts.append("JD未体现行业方向或创新信号，使命价值无法判断")
    return signals, parts


STRONG = {"pay": "薪资有竞争力", "growth": "成长空间大", "worklife": "工作生活较平衡", "mission": "使命价值高"}
WEAK = {"pay": "薪资偏低", "growth": "成长信号有限", "worklife": "工作生活信号有限", "mission": "使命信号有限"}
NEGATIVE = {"worklife": ("overtime-", "WLB可能受限"), "mission": ("harm", "使命存在争议"), "growth": ("", "成长空间有限")}


def _weak(dim: str, evidence: Sequence[dict]) -> str:
    """The weak word of a known dimension below 60: stronger when a negative rule fired."""
    group, text = NEGATIVE.get(dim, ("", ""))
    fired = any(e.get("points", 0) < 0 and e["rule"] in RULE_BY_NAME and RULE_BY_NAME[e["rule"]].group == group
                for e in evidence) if text else False
    return text if fired else WEAK[dim]


def _summary(f: PostingFacts, scores: Mapping[str, int | None], evidence: Mapping[str, Sequence[dict]]) -> str:
    """``AI算子开发工程师（吉利汽车）：智能驾驶方向技术岗，成长空间大，但工作生活信号有限。``"""
    subject = (f.title or "职位") + (f"（{f.company}）" if f.company else HIDDEN_COMPANY)
    sectors = _words(evidence.get("mission") or [], "mission", "sector")
    tech = any(e["rule"] == "stack" for e in evidence.get("growth") or [])
    head = (f"{sectors[0]['matched']}方向" if sectors else (f"{f.category}" if f.category else "")) + ("技术岗" if tech else "岗位")
    known = {d: scores[d] for d in DIMENSIONS if scores[d] is not None}
    strong = [STRONG[d] for d, v in known.items() if v >= 80]
    weak = [_weak(d, evidence.get(d) or []) for d, v in known.items() if v < 60]
    unknown = [DIMENSION_LABELS[d] for d in DIMENSIONS if d not in known]
    if known and not strong and not weak:
        strong = ["各项中等"]
    text = head + ("，" + "、".join(strong) if strong else "")
    if weak:
        text += ("，但" if strong else "，") + "、".join(weak)
    if unknown:
        text += f"；{'、'.join(unknown)}{INSUFFICIENT}"
    return f"{subject}：{text}。"


def _notes(f: PostingFacts, evidence: Sequence[dict]) -> list[str]:
    """The derived texts of the market evidence that the posting itself lacks."""
    notes = []
    for e in evidence:
        if e["rule"] == "salary_compare" and not e["source"]:
            notes.append(f"薪资：{e['text']}（库内{e['n']}个样本）")
        elif e["rule"] == "company_open" and e["source_open"] is None and e["corpus_open"]:
            m = e["corpus_open_in_category"]
            notes.append(f"公司情况：库内 {e['corpus_open']} 个在招" + (f" · 其中{f.category} {m} 个" if m else ""))
        elif e["rule"] == "city_category_open" and e["source_open"] is None and e["corpus_open"]:
            notes.append(f"市场机会：{e['key']} · 库内 {e['corpus_open']} 个在招")
    return notes


def render_evaluation(scores: Mapping[str, int | None], evidence: Mapping[str, Sequence[dict]],
                      facts: PostingFacts) -> Prose:
    """The sentences of a ``jobcrawl-v1`` evaluation from its dimension scores, its evidence (as
    :func:`normalize.evaluation.unpack_evidence` reads it back) and the posting's facts (title, company, city,
    district, category, work mode, salary): what :func:`score_posting` gives and what a stored row, which keeps
    only scores and evidence, reads back as."""
    signals, explanations = {}, {}
    for dim in DIMENSIONS:
        ev = evidence.get(dim) or []
        if dim == "pay":
            signals[dim], parts = _pay_prose(ev, facts)
        elif dim == "growth":
            signals[dim], parts = _growth_prose(ev, scores[dim])
        elif dim == "worklife":
            signals[dim], parts = _worklife_prose(ev, facts)
        else:
            signals[dim], parts = _mission_prose(ev)
        explanations[dim] = _sentence(parts, scores[dim])
    return Prose(_summary(facts, scores, evidence), _notes(facts, evidence.get("market") or []), explanations, signals)


def score_posting(facts: PostingFacts, market: Market, taxonomy_info: Mapping[str, SkillInfo]) -> Evaluation:
    """Score one posting (scorer ``jobcrawl-v1``); see the module docstring."""
    hits = find_rules(facts.lines())
    sk = _skill_facts(facts, taxonomy_info)
    pay, group, value = _pay(facts, market, hits)
    dims = {"pay": pay, "growth": _growth(facts, sk, hits), "worklife": _worklife(facts, hits),
            "mission": _mission(sk, hits)}
    scores = {d: dims[d].score for d in DIMENSIONS}
    evidence = {d: dims[d].evidence for d in DIMENSIONS}
    overall, share = overall_score(scores), completeness(scores)
    known = {d: w for d, w in WEIGHTS.items() if scores[d] is not None}
    evidence["overall"] = [{"rule": "weighted_mean", "weights": WEIGHTS, "known": sorted(known, key=DIMENSIONS.index),
                            "completeness": share,
                            "value": _pts(sum(w * scores[d] for d, w in known.items()) / sum(known.values()))
                            if len(known) >= 2 else None}]
    evidence["market"] = _market(facts, market, group, value)
    levels = {d: level_for(scores[d]) or INSUFFICIENT for d in DIMENSIONS}
    levels["overall"] = level_for(overall) or INSUFFICIENT
    prose = render_evaluation(scores, evidence, facts)
    # model_construct: every field is given and built here, already valid
    return Evaluation.model_construct(
        scorer=SCORER,
        overall=overall,
        **scores,
        levels=levels,
        completeness=share,
        summary=prose.summary,
        notes=prose.notes,
        explanations=prose.explanations,
        signals=_SIGNALS.validate_python({d: [{"key": k, "value": v} for k, v in pairs]
                                          for d, pairs in prose.signals.items()}),
        evidence=evidence,
        problems=[],
    )


# --------------------------------------------------------------------------- what a score depends on


def _market_inputs(f: PostingFacts, market: Market) -> list:
    """The market figures the rules read for this posting: its peer groups, its company's and city + category's open postings."""
    pay, _ = salary_range(f)
    figures: list = []
    if pay is not None:
        group, tried = market.peers(f.city, f.category, pay.currency)
        figures.append([[t.get("scope"), t.get("key"), t.get("n")] for t in tried])
        if group is not None:
            figures.append([group.scope, group.key, group.currency, group.n, group.digest])
    if f.company:
        figures.append([market.company_open.get(f.company, 0),
                        market.company_category_open.get((f.company, f.category), 0) if f.category else None])
    if f.city and f.category:
        figures.append(market.city_category_open.get((f.city, f.category), 0))
    return figures


def score_inputs(facts: PostingFacts, market: Market | None, taxonomy_info: Mapping[str, SkillInfo],
                 version: str = f"{SCORER}/{SCORER_VERSION}", extra: Any = None) -> str:
    """A digest (32 hex characters) of everything an evaluation of ``facts`` depends on: the facts, the taxonomy
    facts of its skills, the market figures it reads (``market``: None for a scorer that reads none), the
    scorer's ``version`` and ``extra`` (e.g. a profile). Equal digests, equal evaluations. The rules read
    no clock; a rule that reads a posting's age must add it (in whole weeks) to the inputs."""
    parts = [version, [getattr(facts, name) for name in _FACT_FIELDS],
             [[s, taxonomy_info.get(s)] for s in facts.skills],
             _market_inputs(facts, market) if market is not None else None, extra]
    text = json.dumps(parts, ensure_ascii=False, default=_plain, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


_FACT_FIELDS = tuple(PostingFacts.__dataclass_fields__)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"{type(value).__name__} in score inputs")
