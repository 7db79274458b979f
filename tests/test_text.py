"""normalize.text helpers, table-driven."""

from __future__ import annotations

import pytest

from normalize.text import clean_line, replace_lone_surrogates

LONE_SURROGATES = [
    pytest.param("CUDA", ("CUDA", 0), id="ascii"),
    pytest.param("熟悉CUDA", ("熟悉CUDA", 0), id="cjk"),
    pytest.param("表情\U0001F600", ("表情\U0001F600", 0), id="a-pair-decoded-is-one-character"),
    pytest.param("a\ud800b\udfffc", ("a\ufffdb\ufffdc", 2), id="high-and-low"),
    pytest.param(["x", "y\ud83d"], (["x", "y\ufffd"], 1), id="list"),
    pytest.param(("\udc00",), (("\ufffd",), 1), id="tuple"),
    pytest.param({"k\ud800": ["\ud800", 3, None]}, ({"k\ufffd": ["\ufffd", 3, None]}, 2), id="dict-keys-and-values"),
    pytest.param(42, (42, 0), id="not-text"),
]


@pytest.mark.parametrize("value, expected", LONE_SURROGATES)
def test_replace_lone_surrogates(value, expected):
    assert replace_lone_surrogates(value) == expected


def test_replace_lone_surrogates_returns_the_same_object_when_clean():
    value = {"a": ["熟悉", "CUDA"]}
    assert replace_lone_surrogates(value)[0] is value


CLEAN_LINES = [
    pytest.param("  CUDA  工程师 ", "CUDA 工程师", id="spaces-collapsed-and-trimmed"),
    pytest.param("恶意\x07公司", "恶意公司", id="control-character"),
    pytest.param("\u202eRTL工程师", "RTL工程师", id="bidi-override"),
    pytest.param("a\u2066b\u2069c\u202a", "abc", id="bidi-isolates-and-embedding"),
    pytest.param("مهندس\u200fGPU", "مهندس\u200fGPU", id="right-to-left-mark-kept"),
    pytest.param("Cuda\u3000工程师", "Cuda 工程师", id="ideographic-space"),
    pytest.param("ＣＵＤＡ", "ＣＵＤＡ", id="width-kept"),
]


@pytest.mark.parametrize("line, expected", CLEAN_LINES)
def test_clean_line(line, expected):
    assert clean_line(line) == expected
