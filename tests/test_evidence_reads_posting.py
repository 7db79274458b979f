"""Evidence entries leave out the values their posting stores (normalize/evaluation.py FROM_POSTING: the company
of ``company_open``) and read them back from the posting: the export, the posting page and the view
``evaluation_evidence`` read what they read before; migration 0057 rewrites the entries of older databases."""

from __future__ import annotations

import json
import sqlite3

import pytest
import sqlite_utils

from browse.render import posting_page
from conftest import AS_OF, SEEDS, run_cli, sql
from crawler.store import evidence
from crawler.store.read import export_record
from crawler.store.schema import open_db
from normalize.evaluation import FROM_POSTING, dumps, from_posting, pack_evidence, unpack_evidence
from normalize.score import score_inputs
from normalize.score.facts import PostingFacts

MIGRATION = "0057_evidence_reads_the_posting"
COMPANY = "多点生活（中国）网络科技有限公司"


def company_open(company, corpus=2, in_category=1, source=None) -> dict:
    return {"rule": "company_open", "company": company, "corpus_open": corpus, "corpus_open_in_category": in_category,
            "source_open": source}


# the entry's company, the posting's, the entry as stored
CASES = [
    pytest.param(COMPANY, COMPANY, ["company_open/company", 2, 1, None], id="equal-left-out"),
    pytest.param(COMPANY, "多点生活", ["company_open", COMPANY, 2, 1, None], id="differs-kept"),
    pytest.param('a "quoted" \\ name', 'a "quoted" \\ name', ["company_open/company", 2, 1, None], id="quotes"),
    pytest.param("🍜 面馆\u2028\t\n", "🍜 面馆\u2028\t\n", ["company_open/company", 2, 1, None], id="emoji-controls"),
    pytest.param("", "", ["company_open/company", 2, 1, None], id="empty"),
    pytest.param("", None, ["company_open", "", 2, 1, None], id="empty-not-null"),
    pytest.param(None, None, ["company_open/company", 2, 1, None], id="null"),
    pytest.param(1, "1", ["company_open", 1, 2, 1, None], id="number-not-text"),
]


@pytest.mark.parametrize("company, posting_company, stored", CASES)
def test_packed_without_the_posting_value_and_read_back_exactly(company, posting_company, stored):
    entry = company_open(company)
    posting = {"company": posting_company}
    packed = pack_evidence({"market": [entry]}, posting)
    assert packed == {"market": [stored]}
    back = unpack_evidence({"market": [from_posting(json.loads(dumps(stored)), posting)]})
    assert json.dumps(back, ensure_ascii=False) == json.dumps({"market": [entry]}, ensure_ascii=False)
    assert from_posting(stored, posting) == pack_evidence({"market": [entry]})["market"][0]  # the form before


@pytest.mark.parametrize("entry, stored", [
    pytest.param({"rule": "company_open", "company": COMPANY}, {"rule": "company_open", "company": COMPANY},
                 id="not-the-shape"),
    pytest.param(company_open(COMPANY), ["company_open", COMPANY, 2, 1, None], id="no-posting-given"),
])
def test_an_entry_not_of_the_shape_or_without_a_posting_stays(entry, stored):
    assert pack_evidence({"market": [entry]}) == pack_evidence({"market": [entry]}, {}) == {"market": [stored]}


def test_every_rule_read_from_the_posting_is_new_and_stands_for_a_shape_whose_first_value_it_leaves_out():
    from normalize.evaluation import SHAPES

    assert FROM_POSTING == {"company_open/company": ("company_open", "company"),
                            "no_comparison/salary_raw": ("no_comparison", "salary_raw"),
                            "salary_percentile/salary_raw": ("salary_percentile", "salary_raw")}
    assert [(stored in SHAPES, SHAPES[rule][0][0]) for stored, (rule, _) in FROM_POSTING.items()] == [
        (False, "company"), (False, "text"), (False, "text")]


PERCENTILE = {"rule": "salary_percentile", "text": "8k-10k", "monthly": 9000.0, "scope": "city+category",
              "key": "深圳 · 数据分析", "currency": "CNY", "n": 122, "p25": 12500.0, "median": 17500.0, "p75": 22500.0,
              "percentile": 8.196721, "points": 2.87}


# an entry, the posting's fields, the entry as stored
SALARY = [
    pytest.param(PERCENTILE, {"salary_raw": "8k-10k"}, ["salary_percentile/salary_raw", 9000.0, "city+category",
                 "深圳 · 数据分析", "CNY", 122, 12500.0, 17500.0, 22500.0, 8.196721, 2.87], id="percentile-left-out"),
    pytest.param(PERCENTILE, {"salary_raw": "8-10K"}, ["salary_percentile", "8k-10k", 9000.0, "city+category",
                 "深圳 · 数据分析", "CNY", 122, 12500.0, 17500.0, 22500.0, 8.196721, 2.87], id="percentile-kept"),
    pytest.param({"rule": "no_comparison", "text": "面议", "points": 0}, {"salary_raw": "面议"},
                 ["no_comparison/salary_raw"], id="no-comparison-left-out"),
    pytest.param({"rule": "no_comparison", "text": "面议", "points": 1}, {"salary_raw": "面议"},
                 ["no_comparison/salary_raw", 1], id="no-comparison-points-kept"),
    pytest.param({"rule": "no_comparison", "text": "未明确", "points": 0}, {"salary_raw": None},
                 ["no_comparison", "未明确"], id="no-comparison-kept"),
]


@pytest.mark.parametrize("entry, posting, stored", SALARY)
def test_the_salary_as_written_is_read_from_the_posting(entry, posting, stored):
    assert pack_evidence({"pay": [entry]}, posting) == {"pay": [stored]}
    back = unpack_evidence({"pay": [from_posting(stored, posting)]})
    assert json.dumps(back, ensure_ascii=False) == json.dumps({"pay": [entry]}, ensure_ascii=False)


# --------------------------------------------------------------------------- stored


@pytest.fixture
def conn(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    yield db.conn
    db.close()


def store(conn: sqlite3.Connection, companies: dict[int, object], evaluations: dict[int, dict]) -> None:
    """Postings of ``companies`` and our evaluations of them, packed against their posting as the scorer's are."""
    conn.executemany("INSERT INTO postings (id, key, company) VALUES (?, ?, ?)",
                     [(pid, f"k{pid}", c) for pid, c in companies.items()])
    rows = [(pid, 1, pack_evidence(ev, {"company": companies[pid]})) for pid, ev in evaluations.items()]
    conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, overall, evidence) VALUES (?, ?, 70, ?)",
                     evidence.intern_rows(conn, rows, 2))


def view(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT posting_id, dimension, position, entry FROM evaluation_evidence"
                        " ORDER BY 1, 2, 3").fetchall()


INSUFFICIENT = {"rule": "insufficient", "text": "信息不足", "points": 0}
ODD = {1: COMPANY, 2: 'a "quoted" \\ name', 3: "🍜 面馆\u2028\t\n\x01", 4: "", 5: None, 6: COMPANY}


def test_postings_with_equal_counts_share_one_entry_and_the_view_lists_theirs(conn):
    evaluations = {pid: {"pay": [INSUFFICIENT], "market": [company_open(c)]} for pid, c in ODD.items()}
    evaluations[6] = {"market": [company_open("另一家")]}  # the entry names another company than the posting: kept
    store(conn, ODD, evaluations)
    assert sorted(e for (e,) in conn.execute("SELECT entry FROM evidence_entries")) == [
        '"insufficient"', '["company_open","另一家",2,1,null]', '["company_open/company",2,1,null]']
    assert view(conn) == [
        row for pid, ev in sorted(evaluations.items()) for dim in ("market", "pay") for i, e in enumerate(ev.get(dim, []))
        for row in [(pid, dim, i, dumps(pack_evidence({dim: [e]})[dim][0]))]]
    read = evidence.expand(conn, [s for (s,) in conn.execute("SELECT evidence FROM evaluations ORDER BY posting_id")],
                           [{"company": ODD[pid]} for pid in sorted(ODD)])
    assert read == [pack_evidence(evaluations[pid]) for pid in sorted(ODD)]


@pytest.mark.parametrize("text", ['a "quoted" \\ name', "🍜 面馆\u2028\t\n\x01", "", None])
def test_the_view_reads_every_rules_value_from_the_posting(conn, text):
    entries = [company_open(text), dict(PERCENTILE, text=text), {"rule": "no_comparison", "text": text, "points": 0}]
    conn.execute("INSERT INTO postings (id, key, company, salary_raw) VALUES (1, 'k', ?, ?)", (text, text))
    rows = [(1, 1, pack_evidence({"pay": entries}, {"company": text, "salary_raw": text}))]
    assert sorted(e[0] for e in rows[0][2]["pay"]) == sorted(FROM_POSTING)
    conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, evidence) VALUES (?, ?, ?)",
                     evidence.intern_rows(conn, rows, 2))
    assert view(conn) == [(1, "pay", i, dumps(e)) for i, e in enumerate(pack_evidence({"pay": entries})["pay"])]


def test_a_shared_entry_is_pruned_only_when_no_evaluation_names_it(conn):
    store(conn, {1: "甲", 2: "乙"}, {1: {"market": [company_open("甲")]}, 2: {"market": [company_open("乙")]}})
    assert conn.execute("SELECT count(*) FROM evidence_entries").fetchone() == (1,)
    conn.execute("DELETE FROM evaluations WHERE posting_id = 1")
    assert evidence.prune(conn) == 0
    conn.execute("DELETE FROM evaluations WHERE posting_id = 2")
    assert evidence.prune(conn) == 1


# --------------------------------------------------------------------------- migration 0057


def test_the_migration_merges_the_entries_that_become_equal(tmp_path):
    """A database as 0055 left it (entries with the company and the salary written out), migrated: one entry for
    the counts every company shares and one for the salaries without peers, the entry of a company other than its
    posting's kept, the view reading what it read."""
    path = tmp_path / "jobs.db"
    open_db(path).close()
    postings = {1: ("甲", "8k-10k"), 2: ("甲", "8k-10k"), 3: ("乙", "9k"), 4: ("丙", None)}
    old = {1: ["company_open", "甲", 2, 1, None], 2: ["company_open", "乙", 2, 1, None],
           3: ["company_open", "丙", 5, None, 4], 4: ["company_open", "别家", 2, 1, None], 5: "base",
           6: ["no_comparison", "8k-10k"], 7: ["no_comparison", "9k"], 8: ["no_comparison", "未明确"]}
    named = {1: "[[5,6],null,null,null,null,[1]]", 2: "[[5,6],null,null,null,null,[1]]",
             3: "[[5,7],null,null,null,null,[2]]", 4: "[[5,8],null,null,null,null,[4,3]]"}
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = ?", (MIGRATION,))
        conn.executemany("INSERT INTO evidence_entries (id, hash, entry) VALUES (?, 0, ?)",
                         [(i, dumps(e)) for i, e in old.items()])
        conn.executemany("INSERT INTO postings (id, key, company, salary_raw) VALUES (?, ?, ?, ?)",
                         [(pid, f"k{pid}", *values) for pid, values in postings.items()])
        conn.executemany("INSERT INTO evaluations (posting_id, scorer_stored, overall, evidence) VALUES (?, 1, 70, ?)",
                         list(named.items()))
        conn.execute("INSERT INTO evaluations (posting_id, scorer_stored, evidence) VALUES (1, 2, '{\"market\":[1]}')")
        before = view(conn)
    open_db(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT id, entry FROM evidence_entries ORDER BY id").fetchall() == [
            (4, '["company_open","别家",2,1,null]'), (5, '"base"'), (8, '["no_comparison","未明确"]'),
            (9, '["company_open/company",2,1,null]'), (10, '["company_open/company",5,null,4]'),
            (11, '["no_comparison/salary_raw"]')]
        assert conn.execute("SELECT posting_id, scorer, evidence FROM evaluations ORDER BY 1, 2").fetchall() == [
            (1, "jobcrawl-v1", "[[5,11],null,null,null,null,[9]]"), (1, "source", '{"market":[9]}'),
            (2, "jobcrawl-v1", "[[5,11],null,null,null,null,[9]]"), (3, "jobcrawl-v1", "[[5,11],null,null,null,null,[9]]"),
            (4, "jobcrawl-v1", "[[5,8],null,null,null,null,[4,10]]")]
        assert view(conn) == before


def rewound(path) -> None:
    """The database as 0055 left it: every entry with its posting's values written out, migration 0057 to come."""
    db = sqlite_utils.Database(path)
    conn = db.conn
    rows = conn.execute("SELECT e.posting_id, e.scorer, e.evidence, p.company, p.salary_raw FROM evaluations e"
                        " JOIN postings p ON p.id = e.posting_id").fetchall()
    packed = evidence.expand(conn, [r[2] for r in rows], [{"company": r[3], "salary_raw": r[4]} for r in rows])
    written = evidence.intern_rows(conn, [(pid, scorer, ev if s else None)
                                          for (pid, scorer, s, *_), ev in zip(rows, packed)], 2)
    conn.executemany("UPDATE evaluations SET evidence = ? WHERE posting_id = ? AND scorer = ?",
                     [(s, pid, scorer) for pid, scorer, s in written])
    evidence.prune(conn)
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = ?", (MIGRATION,))
    conn.commit()
    db.close()


def reads(path) -> tuple:
    """What users read of every posting: the export, the posting page, the view and the fit view."""
    export = run_cli("export", "--db", str(path), check=True).stdout
    with sqlite3.connect(path) as conn:
        pages = json.dumps([posting_page(conn, pid) for (pid,) in conn.execute("SELECT id FROM postings ORDER BY id")],
                           ensure_ascii=False, default=str)
        listed = conn.execute("SELECT * FROM evaluation_evidence ORDER BY 1, 2, 3, 4").fetchall()
        fit = conn.execute("SELECT * FROM fit ORDER BY 1, 5").fetchall()
    return export, pages, listed, fit


def test_a_seeded_database_written_before_reads_the_same_migrated(tmp_path):
    path = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    run_cli("score", "--db", str(path), "--profile", str(SEEDS / "profile.toml"), check=True)
    new = reads(path)
    stored = sql(path, "SELECT entry FROM evidence_entries WHERE entry LIKE '[\"company_open%' ORDER BY entry")
    assert stored == [('["company_open/company",1,1,1900]',), ('["company_open/company",1,1,73]',)]
    rewound(path)
    assert sql(path, "SELECT entry FROM evidence_entries WHERE entry LIKE '[\"company_open%' ORDER BY entry") == [
        ('["company_open","初速度",1,1,73]',), ('["company_open","吉利汽车",1,1,1900]',)]
    assert reads(path) == new  # the old form reads as before
    open_db(path).close()
    assert sql(path, "SELECT entry FROM evidence_entries WHERE entry LIKE '[\"company_open%' ORDER BY entry") == stored
    assert reads(path) == new
    assert '"company":"吉利汽车","corpus_open":1' in new[0].replace(" ", "")


def test_a_changed_company_is_scored_again(tmp_path):
    """The company is an input of the score (its digest): the scoring step after a change stores the entry anew, and
    the export names the new company with its own counts."""
    facts = PostingFacts(company="吉利汽车")
    assert score_inputs(facts, None, {}) != score_inputs(PostingFacts(company="吉利"), None, {})
    path = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    digest = sql(path, "SELECT inputs_digest FROM evaluations WHERE posting_id = 1 AND scorer = 'jobcrawl-v1'")
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE postings SET company = '初速度' WHERE id = 1")
    run_cli("score", "--db", str(path), check=True)
    assert sql(path, "SELECT inputs_digest FROM evaluations WHERE posting_id = 1 AND scorer = 'jobcrawl-v1'") != digest
    db = sqlite_utils.Database(path)
    market = [e for e in export_record(db, 1)["evaluation"]["evidence"]["market"] if e["rule"] == "company_open"]
    db.close()
    assert market == [company_open("初速度", 2, 1, 1900)]
