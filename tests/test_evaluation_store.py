"""Evaluations stored compact (normalize/evaluation.py): the stored form of each kind of evidence entry and of
signals, read back exactly as written; migration 0029 converts a database of the last version without loss."""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest
import sqlite_utils
from hypothesis import given
from hypothesis import strategies as st

from conftest import FIXTURES
from crawler.store.read import export_record
from crawler.store.schema import open_db
from normalize.evaluation import dumps, pack_evidence, pack_signals, unpack_evidence, unpack_signals
from normalize.models import DIMENSIONS

WORD = {"rule": "paid_leave", "matched": "带薪年假", "section": "benefits", "snippet": "带薪年假", "points": 4}


@pytest.mark.parametrize("entry,stored", [
    pytest.param({"rule": "base", "points": 50.0}, "base", id="base-neutral"),
    pytest.param({"rule": "base", "points": 55.0}, ["base", 55.0], id="base-of-pay"),
    pytest.param({"rule": "insufficient", "text": "信息不足", "points": 0}, "insufficient", id="insufficient"),
    pytest.param({"rule": "insufficient", "text": "信息不足", "points": 0.0}, ["insufficient", "信息不足", 0.0],
                 id="fixed-values-kept-when-a-float"),
    pytest.param({"rule": "unknown", "text": "未明确", "points": 0}, "unknown", id="unknown"),
    pytest.param({"rule": "no_peers", "reason": "类别未知", "points": 0}, ["no_peers", "类别未知"], id="no-peers"),
    pytest.param({"rule": "months", "text": "13薪", "months": 13, "points": 3.0}, ["months", "13薪", 13, 3.0],
                 id="months"),
    pytest.param({"rule": "weighted_mean", "weights": {"pay": 0.35, "growth": 0.25, "worklife": 0.2, "mission": 0.2},
                  "known": ["pay", "growth"], "completeness": 0.6, "value": 70.5},
                 ["weighted_mean", ["pay", "growth"], 0.6, 70.5], id="weighted-mean"),
    pytest.param({"rule": "weighted_mean", "weights": {"pay": 1.0}, "known": [], "completeness": 0.0, "value": None},
                 ["weighted_mean", {"pay": 1.0}, [], 0.0, None], id="weighted-mean-other-weights"),
    pytest.param({"rule": "weighted_mean", "weights": {"growth": 0.25, "pay": 0.35, "worklife": 0.2, "mission": 0.2},
                  "known": [], "completeness": 0.0, "value": None},
                 ["weighted_mean", {"growth": 0.25, "pay": 0.35, "worklife": 0.2, "mission": 0.2}, [], 0.0, None],
                 id="weighted-mean-weights-in-another-order"),
    pytest.param({"rule": "weighted_mean", "weights": {"pay": 0.35, "growth": 0.25, "worklife": 0.2, "mission": 0.2,
                                                     "market": 0.0}, "known": [], "completeness": 0.0, "value": None},
                 ["weighted_mean", {"pay": 0.35, "growth": 0.25, "worklife": 0.2, "mission": 0.2, "market": 0.0}, [], 0.0,
                  None], id="weighted-mean-one-more-weight"),
    pytest.param({"rule": "weighted_mean", "weights": {"pay": 0.35, "growth": 0.25, "worklife": 0.2, "mission": True},
                  "known": [], "completeness": 0.0, "value": None},
                 ["weighted_mean", {"pay": 0.35, "growth": 0.25, "worklife": 0.2, "mission": True}, [], 0.0, None],
                 id="weighted-mean-a-weight-true-is-not-the-number"),
    pytest.param({"rule": "no_comparison", "text": "面议", "points": -0.0}, ["no_comparison", "面议", -0.0],
                 id="minus-zero-is-not-the-fixed-zero"),
    pytest.param({"rule": "company_open", "company": "吉利汽车", "corpus_open": 1, "corpus_open_in_category": None,
                  "source_open": 1900}, ["company_open", "吉利汽车", 1, None, 1900], id="company-open"),
    pytest.param(WORD, ["paid_leave", "benefits", "带薪年假", 4], id="word-whole-snippet"),
    pytest.param({"rule": "pressure", "matched": "抗压", "section": "requirements", "snippet": "，工作抗压性强，富有",
                  "points": -6}, ["pressure", "requirements", "，工作抗压性强，富有", 3, 2, -6], id="word-in-snippet"),
    pytest.param({"rule": "odd", "matched": "x", "section": "about", "snippet": "abc", "points": 1},
                 {"rule": "odd", "matched": "x", "section": "about", "snippet": "abc", "points": 1},
                 id="word-not-in-snippet-kept"),
    pytest.param({"rule": "months", "text": "13薪", "points": 3.0}, {"rule": "months", "text": "13薪", "points": 3.0},
                 id="other-keys-kept"),
    pytest.param({"rule": "skills", "listed": 3, "core": 1}, {"rule": "skills", "listed": 3, "core": 1}, id="fit-kept"),
    pytest.param("free text", {"": "free text"}, id="string-wrapped"),
    pytest.param(["a", 1], {"": ["a", 1]}, id="list-wrapped"),
    pytest.param({"": 1}, {"": {"": 1}}, id="empty-key-dict-wrapped"),
])
def test_an_evidence_entry_is_stored_so_and_read_back_as_it_was(entry, stored):
    packed = json.loads(dumps(pack_evidence({"pay": [entry]})))
    assert packed == {"pay": [stored]}
    assert json.dumps(unpack_evidence(packed)) == json.dumps({"pay": [entry]})


def test_signals_are_stored_as_pairs_and_read_back_in_dimension_order():
    signals = {"worklife": [{"key": "工作模式", "value": "未明确"}], "fit": [], "blocked": [{"key": "k", "value": "v"}],
               "pay": [{"key": "薪资信号", "value": "未明确"}, {"key": "薪资信号", "value": "again"}]}
    stored = json.loads(dumps(pack_signals(signals)))
    assert stored == {"worklife": [["工作模式", "未明确"]], "blocked": [["k", "v"]],
                      "pay": [["薪资信号", "未明确"], ["薪资信号", "again"]]}
    assert list(unpack_signals(stored, DIMENSIONS).items()) == [
        ("pay", signals["pay"]), ("worklife", signals["worklife"]), ("blocked", signals["blocked"])]


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)
ENTRY = JSON | st.fixed_dictionaries({"rule": st.sampled_from(["base", "insufficient", "months", "paid_leave"])},
                                     optional={"text": st.text(max_size=4), "points": st.integers() | st.floats(
                                         allow_nan=False), "months": st.integers(), "matched": st.text(max_size=2),
                                         "section": st.text(max_size=3), "snippet": st.text(max_size=6)})


@given(st.dictionaries(st.text(max_size=6), st.lists(ENTRY, max_size=4) | JSON, max_size=3))
def test_any_evidence_reads_back_as_written(evidence):
    assert json.dumps(unpack_evidence(json.loads(dumps(pack_evidence(evidence))))) == json.dumps(evidence)


def test_migration_0029_keeps_every_evaluation_as_it_was(tmp_path):
    path = tmp_path / "old.db"
    path.write_bytes(gzip.decompress((FIXTURES / "migrations/db-6e4c4bc.db.gz").read_bytes()))
    conn = sqlite3.connect(path)
    evidence = {(pid, scorer): json.loads(text) for pid, scorer, text in
                conn.execute("SELECT posting_id, scorer, evidence FROM evaluations")}
    signals: dict = {}
    for pid, scorer, dim, key, value in conn.execute(
            "SELECT posting_id, scorer, dimension, key, value FROM signals ORDER BY posting_id, scorer, dimension, position"):
        signals.setdefault((pid, scorer), {}).setdefault(dim, []).append({"key": key, "value": value})
    conn.close()
    assert len(evidence) == 4 and sum(len(v) for s in signals.values() for v in s.values()) > 30
    open_db(path).close()
    db = sqlite_utils.Database(path)
    for pid in (1, 2):
        rec = export_record(db, pid)
        for scorer, ev in (("jobcrawl-v1", rec["evaluation"]), ("source", rec["source_evaluation"])):
            assert json.dumps(ev["evidence"]) == json.dumps(evidence[pid, scorer])
            assert ev["signals"] == {d: signals[pid, scorer][d] for d in DIMENSIONS if d in signals[pid, scorer]}
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'signals'").fetchone() == (0,)
    db.close()
