"""Evaluation evidence stored once: entries in ``evidence_entries``, evaluations referring to them by id, and read
back exactly as packed (crawler/store/evidence.py)."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from conftest import sql
from crawler.store import entries, evidence
from crawler.store.schema import open_db
from normalize.evaluation import dumps, pack_evidence
from test_migrations import made_by

BONUS = ["year_end_bonus", "benefits", "年终奖", 3]
LEAVE = ["paid_leave", "benefits", "带薪年假", 4]
MEAN = ["weighted_mean", ["worklife"], 0.2, None]


@pytest.fixture
def conn(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    yield db.conn
    db.close()


def test_an_entry_named_by_many_evaluations_is_stored_once(conn):
    rows = [(1, {"pay": [BONUS, "insufficient"], "worklife": [LEAVE], "overall": [MEAN]}),
            (2, {"pay": [BONUS], "worklife": ["base", LEAVE], "overall": [MEAN]}),
            (3, None)]
    stored = evidence.intern_rows(conn, rows, 1)
    ids = {text: i for text, i in conn.execute("SELECT entry, id FROM evidence_entries")}
    assert sorted(ids) == sorted(dumps(e) for e in (BONUS, "insufficient", LEAVE, MEAN, "base"))
    id_of = {name: ids[dumps(e)] for name, e in (("bonus", BONUS), ("leave", LEAVE), ("mean", MEAN),
                                                  ("insufficient", "insufficient"), ("base", "base"))}
    # positional: pay, growth, worklife, mission, overall, market (crawler/store/evidence.py: ORDER), null = absent
    assert [(pid, json.loads(s) if s else s) for pid, s in stored] == [
        (1, [[id_of["bonus"], id_of["insufficient"]], None, [id_of["leave"]], None, [id_of["mean"]], None]),
        (2, [[id_of["bonus"]], None, [id_of["base"], id_of["leave"]], None, [id_of["mean"]], None]),
        (3, None)]
    assert evidence.expand(conn, [s for _, s in stored], [{}] * 3) == [rows[0][1], rows[1][1], {}]


def test_entries_stored_before_are_found_again_and_json_text_is_taken_too(conn):
    first = evidence.intern_rows(conn, [("a", {"pay": [BONUS]})], 1)
    again = evidence.intern_rows(conn, [("b", json.dumps({"pay": [BONUS, LEAVE]}, ensure_ascii=False))], 1)
    assert conn.execute("SELECT count(*) FROM evidence_entries").fetchone() == (2,)
    assert json.loads(again[0][1])[0][0] == json.loads(first[0][1])[0][0]
    assert evidence.expand(conn, [again[0][1]], [{}]) == [{"pay": [BONUS, LEAVE]}]


def test_entries_whose_hashes_collide_stay_apart(conn, monkeypatch):
    monkeypatch.setattr(entries, "entry_hash", lambda text: 7)
    stored = evidence.intern_rows(conn, [(1, {"pay": [BONUS, LEAVE]}), (2, {"pay": [LEAVE]})], 1)
    assert conn.execute("SELECT count(*), count(DISTINCT hash) FROM evidence_entries").fetchone() == (2, 1)
    assert evidence.expand(conn, [s for _, s in stored], [{}] * 2) == [{"pay": [BONUS, LEAVE]}, {"pay": [LEAVE]}]


@pytest.mark.parametrize("a, b", [
    (["months", "13薪", 13, 1], ["months", "13薪", 13.0, 1]),   # an int is not its float
    (["months", "13薪", 13, 1], ["months", "13薪", 13, True]),  # nor a boolean
    (["cap", "g", 0.0, 1], ["cap", "g", -0.0, 1]),             # 0.0 is not -0.0
    (["stack", ["CUDA"], 2], ["stack", ["CUDA "], 2]),
    ({"": {"k": 1}}, {"": {"k": "1"}}),
])
def test_entries_equal_in_python_but_not_as_json_stay_apart(conn, a, b):
    stored = evidence.intern_rows(conn, [(1, {"pay": [a, b, a]}), (2, {"pay": [b]})], 1)
    assert conn.execute("SELECT count(*) FROM evidence_entries").fetchone() == (2,)
    assert evidence.expand(conn, [s for _, s in stored], [{}] * 2) == [{"pay": [a, b, a]}, {"pay": [b]}]
    assert [type(v) for v in evidence.expand(conn, [stored[1][1]], [{}])[0]["pay"][0]] == [type(v) for v in b]


@pytest.mark.parametrize("stored, packed", [
    pytest.param(None, {}, id="none"),
    pytest.param('{"pay":[["year_end_bonus","benefits","年终奖",3]]}', {"pay": [BONUS]}, id="inline-entry-kept"),
    pytest.param('{"pay":[],"note":"x"}', {"pay": [], "note": "x"}, id="not-a-list-kept"),
])
def test_evidence_not_made_of_ids_reads_as_it_is(conn, stored, packed):
    assert evidence.expand(conn, [stored], [{}]) == [packed]


def test_prune_deletes_only_the_entries_no_evaluation_names(conn):
    rows = [(1, 1, {"pay": [BONUS, "insufficient"]}), (2, 1, {"pay": [LEAVE]})]  # 1: ours (scorer_stored)
    conn.executemany("INSERT INTO postings (id, key) VALUES (?, ?)", [(1, "a"), (2, "b")])
    conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, evidence) VALUES (?, ?, ?)",
                     evidence.intern_rows(conn, rows, 2))
    conn.execute("UPDATE evaluations SET evidence = NULL WHERE posting_id = 2")
    assert evidence.prune(conn) == 1
    assert sorted(e for (e,) in conn.execute("SELECT entry FROM evidence_entries")) == sorted(
        [dumps(BONUS), dumps("insufficient")])
    assert evidence.prune(conn) == 0


def test_a_scored_database_lists_each_evaluations_evidence_in_order(seeded_db):
    """The view evaluation_evidence gives the entries of each evaluation, as the export reads them."""
    stored = sql(seeded_db, "SELECT posting_id, scorer, evidence FROM evaluations ORDER BY 1, 2")
    conn = sqlite3.connect(seeded_db)
    company = dict(sql(seeded_db, "SELECT id, company FROM postings"))
    expanded = evidence.expand(conn, [s for _, _, s in stored], [{"company": company[pid]} for pid, *_ in stored])
    listed = {}
    for pid, scorer, dim, _, entry in sql(seeded_db, "SELECT * FROM evaluation_evidence ORDER BY 1, 2, 3, 4"):
        listed.setdefault((pid, scorer), {}).setdefault(dim, []).append(json.loads(entry))
    assert [(pid, scorer, bool(ev)) for (pid, scorer, _), ev in zip(stored, expanded)] == [
        (1, "jobcrawl-v1", True), (1, "source", False), (2, "jobcrawl-v1", True), (2, "source", False)]
    assert {(pid, scorer): {d: v for d, v in ev.items() if v} for (pid, scorer, _), ev in zip(stored, expanded)
            if ev} == listed
    assert sql(seeded_db, "SELECT count(*) FROM evidence_entries") == sql(
        seeded_db, "SELECT count(DISTINCT entry) FROM evaluation_evidence")


def test_an_old_database_keeps_its_evidence_entry_for_entry(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    before = sql(path, "SELECT posting_id, scorer, evidence FROM evaluations ORDER BY 1, 2")
    open_db(path).close()
    after = sql(path, "SELECT posting_id, scorer, evidence FROM evaluations ORDER BY 1, 2")
    assert [r[:2] for r in after] == [r[:2] for r in before] and len(before) == 4
    company = dict(sql(path, "SELECT id, company FROM postings"))
    postings = [{"company": company[pid]} for pid, _, _ in after]
    assert evidence.expand(sqlite3.connect(path), [s for _, _, s in after], postings) == [
        pack_evidence(json.loads(s)) for _, _, s in before]
    assert [json.loads(s) if scorer == "source" else len(json.loads(s)) for _, scorer, s in after] == [6, {}, 6, {}]
    assert all(type(i) is int for _, scorer, s in after if scorer != "source" for items in json.loads(s) for i in items)
    copy = tmp_path / "again.db"
    shutil.copy(path, copy)
    open_db(copy).close()
    assert sql(copy, "SELECT posting_id, scorer, evidence FROM evaluations ORDER BY 1, 2") == after
