"""normalize.score as a package: its public API is exactly what other packages import, its modules import each
other one way (the sentences never need the scorer), and the word rules table is well formed."""

from __future__ import annotations

import ast

import pytest

import normalize.score
from conftest import ROOT
from normalize.score import RULES
from package_api import imported_names

PACKAGE = ROOT / "normalize" / "score"


def test_the_package_names_exactly_the_names_other_packages_import():
    imported = imported_names("normalize.score")
    assert "score_posting" in imported and "salary_range" in imported  # the scan finds the importers
    assert sorted(imported ^ set(normalize.score.__all__)) == []
    assert all(hasattr(normalize.score, name) for name in normalize.score.__all__)


def _siblings(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    return {node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.level == 1}


@pytest.mark.parametrize("module, imports", [
    pytest.param("rules", set(), id="rules-alone"),
    pytest.param("facts", {"rules"}, id="facts"),
    pytest.param("market", set(), id="market-alone"),
    pytest.param("render", {"facts", "market", "rules"}, id="render-without-scorer"),
    pytest.param("scorer", {"facts", "market", "render", "rules"}, id="scorer"),
])
def test_modules_import_each_other_one_way(module, imports):
    assert _siblings(module) == imports


GROUPS = {
    "pay": {"benefit"},
    "growth": {"scope", "business", ""},
    "worklife": {"overtime-", "overtime+", "mode"},
    "mission": {"sector", "harm", "innovation"},
}


@pytest.mark.parametrize("dim", sorted(GROUPS))
def test_every_rule_of_a_dimension_is_in_a_group_the_scorer_reads(dim):
    assert {r.group for r in RULES if r.dim == dim} == GROUPS[dim]


def test_rule_names_are_unique_and_every_rule_has_words():
    assert len({r.name for r in RULES}) == len(RULES) == 60
    assert [r.name for r in RULES if not r.words or len(set(r.words)) != len(r.words)] == []


def test_only_scope_words_skip_the_candidates_sections():
    skipping = {r.name: r.skip_sections for r in RULES if r.skip_sections}
    assert set(skipping) == {r.name for r in RULES if r.group == "scope"}
    assert set(skipping.values()) == {frozenset({"requirements", "preferred"})}
