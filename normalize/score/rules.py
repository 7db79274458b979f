"""The word rules of ``jobcrawl-v1``: :data:`RULES`, one row per rule (dimension, name, points, label, words,
group), and :func:`find_rules`, the first hit of each rule in a posting's lines."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import NamedTuple

import ahocorasick_rs

from ..text import find_matches

INSUFFICIENT = "信息不足"
"""The level of a dimension (or overall) whose evidence does not meet its minimum."""
SNIPPET_RADIUS = 8


class Rule(NamedTuple):
    dim: str
    name: str
    points: float
    label: str
    words: tuple[str, ...]
    group: str = ""  # rules of one group share a cap (scorer.CAPS) or a selection (sectors)
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


def _full_width(word: str) -> str:
    """``996`` → ``９９６``: the automaton also holds the full-width spelling of words with ASCII in them,
    so the text needs only casefolding."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)


def _build_matcher() -> tuple[ahocorasick_rs.AhoCorasick, list[str], list[tuple[int, ...]]]:
    """Every rule word (and its full-width form), with the rules each one belongs to."""
    by_word: dict[str, list[int]] = {}
    for i, rule in enumerate(RULES):
        for word in rule.words:
            folded = word.casefold()
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
    folded = "\n".join(text.replace("\n", " ") for _, text in lines).casefold()
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

