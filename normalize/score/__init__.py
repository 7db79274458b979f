"""Scorer ``jobcrawl-v1``: pure and deterministic. :func:`score_posting` scores a posting's facts
(:class:`PostingFacts`) against the corpus' market statistics (:class:`Market`) and its skills' taxonomy facts
(:class:`SkillInfo`); :func:`render_evaluation` makes an evaluation's sentences again from its stored scores and
evidence; :func:`score_inputs` digests everything a score depends on (equal digests, equal evaluations).

Modules: :mod:`.rules` (the word rules :data:`RULES` and :func:`find_rules`), :mod:`.facts` (a posting's and a
skill's facts, pay range, work mode, money), :mod:`.market` (peer groups and open postings), :mod:`.scorer`
(the dimensions' evidence and scores), :mod:`.render` (the sentences). This module names the public API.
"""

from .facts import MODE_LABELS, PayRange, PostingFacts, SkillInfo, format_money, round_half_up, salary_range, work_mode_kind
from .market import MIN_SAMPLE, Market
from .render import FACT_RULES, render_evaluation
from .rules import INSUFFICIENT, RULES, find_rules
from .scorer import SCORER, WEIGHTS, overall_score, score_inputs, score_posting

__all__ = [
    "FACT_RULES", "INSUFFICIENT", "MIN_SAMPLE", "MODE_LABELS", "RULES", "SCORER", "WEIGHTS",
    "Market", "PayRange", "PostingFacts", "SkillInfo",
    "find_rules", "format_money", "overall_score", "render_evaluation", "round_half_up", "salary_range",
    "score_inputs", "score_posting", "work_mode_kind",
]
