"""normalize.dedupe as a package: its public API covers what other packages import, the one slicing of records
that signatures and boilerplate share, and the one agreement rule of company names and titles."""

from __future__ import annotations

import numpy as np
import pytest

import normalize.dedupe
from normalize.dedupe import Record, common_shingles, names_agree
from normalize.dedupe import minhash
from package_api import imported_names


def test_the_package_names_every_name_other_packages_import():
    imported = imported_names("normalize.dedupe")
    assert "Clusterer" in imported and "canonical_url" in imported  # the scan finds the importers
    assert sorted(imported - set(normalize.dedupe.__all__)) == []
    assert all(hasattr(normalize.dedupe, name) for name in normalize.dedupe.__all__)


LINES = [["熟悉C++与CUDA编程", "负责推理引擎算子开发"], [], ["短"], ["参与性能分析与调优" * 20], ["五险一金", "带薪年假"]]


@pytest.mark.parametrize("chars, slices", [
    pytest.param(1, [(0, 1), (1, 3), (3, 4), (4, 5)], id="a-slice-per-record-with-content"),
    pytest.param(30, [(0, 4), (4, 5)], id="about-30-characters"),
    pytest.param(1 << 18, [(0, 5)], id="one-slice"),
])
def test_sliced_hashes_cover_every_record_once(monkeypatch, chars, slices):
    monkeypatch.setattr(minhash, "_SIGNATURE_CHARS", chars)
    parts = list(minhash._sliced_hashes(LINES))
    assert [(start, stop) for start, stop, _, _ in parts] == slices
    hashes, owner = minhash._record_hashes(LINES)
    np.testing.assert_array_equal(np.concatenate([h for _, _, h, _ in parts]), hashes)
    np.testing.assert_array_equal(np.concatenate([o + start for start, _, _, o in parts]), owner)


def test_common_shingles_do_not_depend_on_the_slices(monkeypatch):
    generic = ["缴纳五险一金，带薪年假，节日福利", "弹性工作时间，免费午餐与下午茶"]
    records = [Record(key=str(i), company=f"公司{i % 15}", requirements=[*generic, f"熟悉第{i}种编程语言与相关框架"])
               for i in range(40)]
    whole = common_shingles(records)
    monkeypatch.setattr(minhash, "_SIGNATURE_CHARS", 100)  # a slice every few records
    sliced = common_shingles(records)
    assert (len(whole), whole.companies) == (len(sliced), sliced.companies) == (26, 15)
    np.testing.assert_array_equal(sliced.hashes, whole.hashes)


@pytest.mark.parametrize("a, b, expected", [
    pytest.param("吉利", "吉利汽车", True, id="company-contained"),
    pytest.param("java开发工程师", "高级java开发工程师", True, id="title-contained"),
    pytest.param("字节跳动", "吉利", False, id="other-company"),
    pytest.param("前端开发工程师", "后端开发工程师", False, id="title-differs-inside"),
    pytest.param("", "吉利", True, id="unknown"),
    pytest.param("a", "abc", False, id="one-character-is-not-contained"),
])
def test_names_agree_is_one_rule_for_companies_and_titles(a, b, expected):
    assert (names_agree(a, b), names_agree(b, a)) == (expected, expected)
