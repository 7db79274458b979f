"""What the commands print with --json: JSON that reads back exactly, with nothing a terminal or a line splitter
acts on left raw inside its strings (crawler.cli.say_json)."""

from __future__ import annotations

import json
import unicodedata

import click
import pytest
from click.testing import CliRunner

from crawler.cli import say_json
from normalize.shown import ESCAPED_CATEGORIES


@click.command()
@click.argument("value")
@click.option("--indent", type=int, default=None)
def show(value: str, indent: int | None) -> None:
    say_json(json.loads(value), indent=indent)


CASES = [
    pytest.param({"title": "CUDA 算子工程师"}, None, '{"title": "CUDA 算子工程师"}', id="nothing-to-escape"),
    pytest.param({"title": "a\u2028b\u2029c"}, None, '{"title": "a\\u2028b\\u2029c"}', id="line-separators"),
    pytest.param({"title": "x\u202ey\u2066z"}, None, '{"title": "x\\u202ey\\u2066z"}', id="bidi-controls"),
    pytest.param({"title": "\u009b31m\u0085"}, None, '{"title": "\\u009b31m\\u0085"}', id="c1-controls"),
    pytest.param({"title": "a\u200bb\ufeff"}, None, '{"title": "a\\u200bb\\ufeff"}', id="zero-width-and-bom"),
    pytest.param({"t": "\U000e0041"}, None, '{"t": "\\udb40\\udc41"}', id="tag-character-as-a-surrogate-pair"),
    pytest.param({"t": "a\nb\x1b"}, None, '{"t": "a\\nb\\u001b"}', id="c0-as-json-escapes-them"),
    pytest.param({"steps": [{"v": "x\u2028y"}]}, 1, '{\n "steps": [\n  {\n   "v": "x\\u2028y"\n  }\n ]\n}',
                 id="indented-keeps-its-line-breaks"),
]


@pytest.mark.parametrize(("value", "indent", "printed"), CASES)
def test_json_output_is_escaped_and_reads_back(value, indent, printed):
    args = [json.dumps(value)] + ([] if indent is None else ["--indent", str(indent)])
    result = CliRunner().invoke(show, args)
    assert result.exit_code == 0, result.output
    assert result.output == printed + "\n"
    assert json.loads(result.output) == value
    raw = [ch for ch in result.output if ch != "\n" and unicodedata.category(ch) in ESCAPED_CATEGORIES]
    assert raw == []
