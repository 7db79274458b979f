"""The shortcuts that spare repeated work give what the long way gives: clean_lines is clean_line line by line,
evidence packing compares values as JSON does, an unrendered score is the rendered one without its sentences,
and the app dump's plain-data blocks validate into the models they replaced."""

from __future__ import annotations

import json

import pytest

from crawler.pipelines import _chars, _strings
from normalize.evaluation import _same, pack_evidence
from normalize.models import RawEvaluation, RawPosting
from normalize.score import Market, score_posting
from normalize.text import clean_line, clean_lines, split_lines
from test_score_rules import INFO, seed


@pytest.mark.parametrize("text", [
    pytest.param("", id="empty"),
    pytest.param("  公司  \n标题\n\n Watch Jobs ", id="trimmed-ends-only"),
    pytest.param("a  b\nc", id="double-space"),
    pytest.param("a\tb\nc\u3000d", id="tab-and-ideographic-space"),
    pytest.param("\uf06c 计算机\n经验", id="private-use-character"),
    pytest.param("a\x00b\r\nc\u2028d\x1ce", id="control-and-unicode-line-breaks"),
    pytest.param("\u202etitle\u202c\n\u200bx\ufeff", id="bidi-override-and-zero-width-ends"),
    pytest.param("x\u00a0\u00a0y", id="no-break-spaces"),
])
def test_clean_lines_is_clean_line_of_every_line(text):
    assert list(clean_lines(text)) == [clean_line(line) for line in split_lines(text)]


VALUES = [0, 0.0, -0.0, 1, 1.0, True, False, 50, 50.0, None, "0", "信息不足", float("nan"), float("inf"), 2**70,
          [0], {"pay": 0.35}, {"pay": 0.35, "growth": 0.25}, {"growth": 0.25, "pay": 0.35}]


@pytest.mark.parametrize("a", VALUES, ids=repr)
def test_same_is_equality_as_json(a):
    assert [_same(a, b) for b in VALUES] == [json.dumps(a) == json.dumps(b) for b in VALUES]


@pytest.mark.parametrize("entry, stored", [
    pytest.param({"rule": "base", "points": 50.0}, "base", id="fixed-value-left-out"),
    pytest.param({"rule": "base", "points": 50}, ["base", 50], id="int-is-not-the-fixed-float"),
    pytest.param({"rule": "no_comparison", "text": "t", "points": 0}, ["no_comparison", "t"], id="fixed-zero"),
    pytest.param({"rule": "no_comparison", "text": "t", "points": -0.0}, ["no_comparison", "t", -0.0],
                 id="negative-zero-kept"),
    pytest.param({"rule": "no_comparison", "text": "t", "points": False}, ["no_comparison", "t", False],
                 id="false-is-not-zero"),
    pytest.param({"points": 1, "rule": "base"}, {"points": 1, "rule": "base"}, id="keys-out-of-order-kept-whole"),
])
def test_pack_evidence_leaves_out_only_values_equal_as_json(entry, stored):
    assert pack_evidence({"pay": [entry]}) == {"pay": [stored]}


@pytest.mark.parametrize("name", ["000", "003"])
def test_an_unrendered_score_is_the_rendered_one_without_its_sentences(name):
    facts = seed(name)
    rendered = score_posting(facts, Market(), INFO)
    bare = score_posting(facts, Market(), INFO, rendered=False)
    assert bare.model_dump() == {**rendered.model_dump(), "summary": None, "notes": [], "explanations": {},
                                 "signals": {}}


def test_a_raw_evaluation_given_as_data_is_the_model_built_field_by_field():
    data = {"overall_raw": ["72综合评分"], "summary": ["值得投"], "compact_raw": "薪资福利70",
            "dimensions": [{"name": "薪资福利", "score_raw": "70中等", "compact_raw": "70", "explanation": ["x"],
                            "signals": [{"key": "薪资信号", "value": "市场水准"}]}]}
    ev = RawEvaluation.model_validate(data)
    assert ev.dimensions[0].signals[0].key == "薪资信号"
    assert ev.model_dump() == data


def test_strings_are_every_string_once_keys_too():
    item = RawPosting(source="s", source_id="i", locator="l", fetched_at="f", as_of="a", title="t", tags=["x", "y"],
                      extra={"k": "v"}, position=3)
    assert sorted(_strings(item)) == sorted(["s", "i", "l", "f", "a", "t", "x", "y", "k", "v"])
    assert _chars(item) == 10
