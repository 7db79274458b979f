"""Evaluation evidence stored positionally (crawler/store/evidence.py): our scorer's dimensions as a JSON array in
one fixed order, anything else as the object it is; every reader gets back exactly what was written — the keys, their
order, values that are not lists — and ``json_each`` (prune, the view ``evaluation_evidence``) reads both forms."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
import sqlite_utils

from conftest import SEEDS, run_cli, sql
from crawler.store import evidence
from crawler.store.read import export_record
from crawler.store.schema import open_db
from normalize.evaluation import dumps
from test_migrations import migrated

A, B, C = ["year_end_bonus", "benefits", "年终奖", 3], ["paid_leave", "benefits", "带薪年假", 4], "insufficient"
FULL = {"pay": [A, C], "growth": [C], "worklife": [B], "mission": [C], "overall": [["weighted_mean", [], 0, None]],
        "market": [["company_open", "某公司", 3, None, None]]}

# (packed evidence, its stored form with the entries A, B, C, … written as their letters)
CASES = [
    pytest.param(FULL, '[["A","C"],["C"],["B"],["C"],["M"],["O"]]', id="ours-every-dimension"),
    pytest.param(FULL | {"market": []}, '[["A","C"],["C"],["B"],["C"],["M"]]', id="trailing-empty-left-out"),
    pytest.param(dict.fromkeys(evidence.ORDER, []) | {"pay": [A]}, '[["A"]]', id="only-the-first-filled"),
    pytest.param(dict.fromkeys(evidence.ORDER, []), "[]", id="every-dimension-empty"),
    pytest.param({k: v for k, v in FULL.items() if k != "market"}, '[["A","C"],["C"],["B"],["C"],["M"],null]',
                 id="last-absent-is-null"),
    pytest.param({"pay": [A], "worklife": [], "overall": [B]}, '[["A"],null,[],null,["B"],null]',
                 id="absent-between-and-empty-between"),
    pytest.param({"market": [B]}, '[null,null,null,null,null,["B"]]', id="only-the-last"),
    pytest.param({"pay": []}, "[[],null,null,null,null,null]", id="one-empty-dimension"),
    pytest.param({"overall": [], "market": []}, "[null,null,null,null]", id="only-trailing-empties"),
    pytest.param({}, "{}", id="none-the-apps-own"),
    pytest.param({"growth": [A], "pay": [B]}, '{"growth":["A"],"pay":["B"]}', id="other-order-kept"),
    pytest.param({"skills": [A], "salary": [B], "city": [C], "mode": [C], "overall": [B], "blocked": [A]},
                 '{"skills":["A"],"salary":["B"],"city":["C"],"mode":["C"],"overall":["B"],"blocked":["A"]}',
                 id="a-fits-dimensions-kept"),
    pytest.param({"pay": [A], "note": [B]}, '{"pay":["A"],"note":["B"]}', id="a-dimension-not-ours"),
    pytest.param({"pay": [], "note": "x"}, '{"pay":[],"note":"x"}', id="a-value-not-a-list"),
    pytest.param({"pay": None}, '{"pay":null}', id="null-value-kept-apart-from-absent"),
    pytest.param({"pay": {"a": 1}}, '{"pay":{"a":1}}', id="an-object-value"),
]
LETTERS = {dumps(e): letter for letter, e in (("A", A), ("B", B), ("C", C), ("M", FULL["overall"][0]),
                                                  ("O", FULL["market"][0]))}


@pytest.fixture
def conn(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    yield db.conn
    db.close()


def lettered(conn, stored: str) -> str:
    """``stored`` with each entry id written as the letter of its entry."""
    letter = {i: LETTERS[text] for i, text in conn.execute("SELECT id, entry FROM evidence_entries")}

    def swap(value):
        if isinstance(value, list):
            return [letter[v] if type(v) is int else swap(v) for v in value]
        return {k: swap(v) for k, v in value.items()} if isinstance(value, dict) else value

    return dumps(swap(json.loads(stored)))


@pytest.mark.parametrize("packed, stored", CASES)
def test_stored_so_and_read_back_exactly(conn, packed, stored):
    [(text,)] = evidence.intern_rows(conn, [(packed,)], 0)
    assert lettered(conn, text) == stored
    [back] = evidence.expand(conn, [text], [{}])
    assert json.dumps(back) == json.dumps(packed)  # keys, their order and every value as written


@pytest.mark.parametrize("packed, stored", CASES)
def test_the_view_and_prune_read_either_form(conn, packed, stored):
    conn.executemany("INSERT INTO postings (id, key) VALUES (?, ?)", [(1, "a"), (2, "b")])
    rows = [(1, 1, packed), (2, 1, {"pay": [A, B, C]})]  # 1: ours (scorer_stored)
    conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, evidence) VALUES (?, ?, ?)",
                     evidence.intern_rows(conn, rows, 2))
    listed: dict = {}
    for dim, entry in conn.execute("SELECT dimension, entry FROM evaluation_evidence WHERE posting_id = 1"):
        listed.setdefault(dim, []).append(json.loads(entry))
    assert listed == {d: items for d, items in packed.items() if isinstance(items, list) and items}
    conn.execute("DELETE FROM evaluations WHERE posting_id = 2")
    used = {dumps(e) for items in packed.values() if isinstance(items, list) for e in items}
    assert evidence.prune(conn) == 3 - len(used & {dumps(A), dumps(B), dumps(C)})
    assert {e for (e,) in conn.execute("SELECT entry FROM evidence_entries")} == used


def test_the_order_is_the_views(conn):
    """The view names a positional dimension by its place: its list of names is :data:`evidence.ORDER`."""
    conn.execute("INSERT INTO postings (id, key) VALUES (1, 'a')")
    conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, evidence) VALUES (1, 1, ?)",
                     evidence.intern_rows(conn, [(dict.fromkeys(evidence.ORDER, [A]),)], 0))
    assert [d for (d,) in conn.execute("SELECT dimension FROM evaluation_evidence")] == list(evidence.ORDER)


# --------------------------------------------------------------------------- migration 0052


def test_migration_0052_makes_stored_objects_positional_and_keeps_the_rest(tmp_path):
    """A database of 0051 (evidence objects of ids): ours become positional, every other text stays byte for byte."""
    path = tmp_path / "jobs.db"
    open_db(path).close()
    texts = {
        1: '{"pay":[1,2],"growth":[3],"worklife":[1,4],"mission":[3],"overall":[5],"market":[6,7]}',
        2: '{"pay":[1],"growth":[],"worklife":[],"mission":[],"overall":[5],"market":[]}',
        3: '{"pay":[1],"growth":[3],"worklife":[4],"mission":[3],"overall":[5]}',
        4: "{}",
        5: '{"skills":[8],"salary":[9],"city":[9],"mode":[9],"overall":[5]}',
        6: '{"pay": [1], "growth": [3]}',
        7: '{"pay":[],"note":"x"}',
        8: '[[1],[3]]',
        9: None,
    }
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO evidence_entries (id, hash, entry) VALUES (?, 0, ?)",
                         [(i, dumps([f"rule{i}", i])) for i in range(1, 10)])
        conn.executemany("INSERT INTO postings (id, key) VALUES (?, ?)", [(i, str(i)) for i in texts])
        conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, overall, evidence) VALUES (?, ?, 70, ?)",
                         [(i, "fit:me" if i == 5 else 1, t) for i, t in texts.items()])  # 1: ours
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0052_evaluations_evidence_positional'")
        before = evidence.expand(conn, [t for t in texts.values()], [{}] * len(texts))
        scores = conn.execute("SELECT id, score, score_level, score_by FROM postings ORDER BY id").fetchall()
    open_db(path).close()
    with sqlite3.connect(path) as conn:
        after = dict(conn.execute("SELECT posting_id, evidence FROM evaluations"))
        assert after == texts | {
            1: "[[1,2],[3],[1,4],[3],[5],[6,7]]", 2: "[[1],[],[],[],[5]]", 3: "[[1],[3],[4],[3],[5],null]",
            6: "[[1],[3],null,null,null,null]"}
        assert evidence.expand(conn, list(after.values()), [{}] * len(after)) == before
        assert conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id DESC LIMIT 1").fetchone() == (
            "0052_evaluations_evidence_positional",)
        # the score trigger the migration dropped is made again; no score was touched
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'evaluations_score_update'").fetchone() == (1,)
        assert conn.execute("SELECT id, score, score_level, score_by FROM postings ORDER BY id").fetchall() == scores


def test_an_old_database_reads_its_evidence_as_before(tmp_path):
    """The committed database of 6e4c4bc (evidence objects of inline entries): migrated, our evaluations' evidence
    is positional and the export reads every evaluation's evidence as the scorer gave it."""
    query = "SELECT posting_id, scorer, evidence FROM evaluations ORDER BY 1, 2"
    path, before, after = migrated("6e4c4bc", tmp_path, query)
    assert [(pid, scorer, type(json.loads(s)).__name__, len(json.loads(s))) for pid, scorer, s in after] == [
        (1, "jobcrawl-v1", "list", 6), (1, "source", "dict", 0), (2, "jobcrawl-v1", "list", 6), (2, "source", "dict", 0)]
    db = sqlite_utils.Database(path)
    try:
        for pid in (1, 2):
            rec = export_record(db, pid)
            old = {scorer: json.loads(s) for p, scorer, s in before if p == pid}
            assert list(rec["evaluation"]["evidence"]) == list(old["jobcrawl-v1"])
            assert rec["source_evaluation"]["evidence"] == old["source"] == {}
    finally:
        db.close()


# --------------------------------------------------------------------------- a scored database


@pytest.fixture(scope="module")
def fitted_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("fitted") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", "2026-11-29T12:00:00+08:00", check=True)
    run_cli("score", "--db", str(path), "--profile", str(SEEDS / "profile.toml"), check=True)
    return path


def test_a_scored_database_stores_ours_positionally_and_the_fit_view_reads_a_fits(fitted_db, tmp_path):
    stored = sql(fitted_db, "SELECT scorer, substr(evidence, 1, 1), count(*) FROM evaluations GROUP BY 1, 2 ORDER BY 1")
    assert stored == [("fit:cuda-infra", "{", 2), ("jobcrawl-v1", "[", 2), ("source", "{", 2)]
    assert sql(fitted_db, "SELECT id, fit, fit_skills, fit_salary, fit_city, fit_mode FROM fit ORDER BY id") == [
        (1, 87, 70, 100, 100, 100), (2, 68, 50, 63, 100, 100)]
    # prune keeps every entry named by either form, in one scan
    copy = tmp_path / "jobs.db"
    shutil.copy(fitted_db, copy)
    with sqlite3.connect(copy) as conn:
        assert evidence.prune(conn) == 0
        conn.execute("DELETE FROM evaluations WHERE scorer != 'jobcrawl-v1'")
        assert evidence.prune(conn) > 0
        named = {i for (s,) in conn.execute("SELECT evidence FROM evaluations") for items in json.loads(s) for i in items}
        assert {i for (i,) in conn.execute("SELECT id FROM evidence_entries")} == named
