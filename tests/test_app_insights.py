"""The fields only the app's dumps fill (salary signal, company activity, market, AI-insight lists) live in
``app_market``: one row a posting that states any of them, read back by the export, the scoring facts and the
watches as they were. Values a row would repeat are stored once: ``source_id`` where it is the url,
``input_sha256`` where it is its raw input's, a dedupe key's url where it is the posting's (its fingerprint and
identity as 16-byte blobs)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from test_migrations import made_by
from test_pipelines import raw_posting, seed_items
from crawler.alerts.store import unseen_rows
from crawler.score.store import FACT_COLUMNS, read_range
from crawler.store.read import export_record, iter_export
from crawler.store import dedupe
from crawler.store.rows import APP_COLS, Batch, input_row, posting_row
from crawler.store.schema import open_db
from crawler.store.writer import Writer
from normalize.dedupe import posting_signatures
from normalize.posting import normalize_posting

SIGNAL = ("市场水准 (35K-50K/月)", "市场水准", 35000.0, 50000.0, "CNY", "month", 0, 0)
COMPANY = ("这家公司招聘很活跃", "约 1900 个在招 · 其中人工智能 19 个", None, "人工智能", 1900, 1, 19)
MARKET = ("选择面较广", "杭州 · 人工智能 · 约 190 个在招", "杭州", "人工智能", 190, 1, None)
NO_SIGNAL = (None,) * 8
NO_COUNTS = (None, None, None, None, None, 0, None)
LISTS = ({"pros": 6, "cons": 1, "role": 9, "strategy": 8, "interview": 8},)
"""The seed's AI-insight lists: items per list (:func:`app_rows` reads the JSON so)."""
CASES = [
    pytest.param({}, SIGNAL + COMPANY + MARKET + LISTS, id="the-seed"),
    pytest.param({"market": []}, SIGNAL + COMPANY + NO_COUNTS + LISTS, id="no-market-lines"),
    pytest.param({"evaluation": None, "market": []}, NO_SIGNAL + COMPANY + NO_COUNTS + LISTS, id="company-lines-only"),
    pytest.param({"evaluation": None, "company_activity": [], "market": []}, NO_SIGNAL + NO_COUNTS + NO_COUNTS + LISTS,
                 id="insight-lists-only"),
    pytest.param({"evaluation": None, "company_activity": [], "market": [], "insights": []}, None, id="none-of-them"),
]
APP_FIELDS = ("company_activity", "market")


def posting(changes: dict):
    return normalize_posting(raw_posting(**changes))


def store(db, *postings) -> None:
    Writer(db).write(Batch(postings=[posting_row(p) for p in postings]))


def app_rows(path) -> list[tuple]:
    with sqlite3.connect(path) as conn:
        return [_lists_counted(row) for row in conn.execute("SELECT * FROM app_market ORDER BY posting_id")]


def _lists_counted(row: tuple) -> tuple:
    """A row whose last column is the insights JSON, with items per list in its place."""
    return *row[:-1], {key: len(items) for key, items in json.loads(row[-1]).items()}


@pytest.mark.parametrize("changes, stored", CASES)
def test_a_posting_stores_a_row_only_when_it_states_any_of_them(tmp_path, changes, stored):
    p = posting(changes)
    db = open_db(tmp_path / "jobs.db")
    store(db, p)
    assert app_rows(tmp_path / "jobs.db") == ([] if stored is None else [(1, *stored)])
    record = export_record(db, 1)
    no_signal = dict.fromkeys(("raw", "label", "min", "max", "currency", "period", "estimated", "implausible"))
    assert record["salary"]["signal"] == (p.salary.signal.model_dump() if p.salary.signal else no_signal)
    assert {f: record[f] for f in APP_FIELDS} == {f: getattr(p, f).model_dump() for f in APP_FIELDS}


def test_postings_keep_none_of_the_app_columns(tmp_path):
    db = open_db(tmp_path / "jobs.db")
    columns = {row[1] for row in db.conn.execute("PRAGMA table_info(postings)")}
    assert [c for c in APP_COLS if c in columns] == []
    assert [row[1] for row in db.conn.execute("PRAGMA table_info(app_market)")] == ["posting_id", *APP_COLS]


@pytest.mark.parametrize("changes, stored", CASES[1:])
def test_a_new_version_replaces_its_row(tmp_path, changes, stored):
    db = open_db(tmp_path / "jobs.db")
    store(db, posting({}))
    store(db, posting(changes))
    assert app_rows(tmp_path / "jobs.db") == ([] if stored is None else [(1, *stored)])
    assert db.conn.execute("SELECT version FROM postings").fetchall() == [(2,)]
    store(db, posting({}))
    assert app_rows(tmp_path / "jobs.db") == [(1, *SIGNAL, *COMPANY, *MARKET, *LISTS)]


@pytest.mark.parametrize("changes, stored", CASES)
def test_scoring_and_watches_read_the_values(tmp_path, changes, stored):
    db = open_db(tmp_path / "jobs.db")
    store(db, posting(changes))
    values = dict(zip(APP_COLS, stored or NO_SIGNAL + NO_COUNTS + NO_COUNTS))
    rows, _ = read_range(db.conn, 1, 1)
    facts = dict(zip(FACT_COLUMNS.values(), rows[0][1:]))
    assert {c: facts[c] for c in facts if c in values} == {c: values[c] for c in facts if c in values}
    watched = next(unseen_rows(db, 0, profile=None))
    assert {c: watched[c] for c in watched if c in values} == {c: values[c] for c in watched if c in values}
    assert sorted(c for c in watched if c in values) == [
        "salary_signal_currency", "salary_signal_implausible", "salary_signal_max", "salary_signal_min",
        "salary_signal_period", "salary_signal_raw"]


def test_the_migration_moves_the_values_of_an_old_database(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    with sqlite3.connect(path) as conn:
        before = [_lists_counted(row) for row in
                  conn.execute(f"SELECT id, {', '.join(APP_COLS)} FROM postings ORDER BY id")]
    db = open_db(path)
    assert app_rows(path) == before
    assert [(r["id"], r["company_activity"]["open_jobs"], r["market"]["open_jobs"], r["salary"]["signal"]["max"])
            for r in iter_export(db)] == [(1, 1900, 190, 50000.0), (2, 73, 10, 45000.0)]


def test_migration_0063_moves_the_insight_lists_into_app_market(tmp_path):
    """At 0062 the lists were a postings column: a posting with lists gets them in its app_market row, made for it
    where it had none; a posting without lists reads none."""
    import sqlite_utils

    from crawler.store.migrations import migrations

    path = tmp_path / "jobs.db"
    db = sqlite_utils.Database(path)
    migrations.apply(db, stop_before="0063_insights_in_app_market")
    lists = '{"pros":["- 团队强"],"cons":["- 加班"]}'
    db.conn.executemany("INSERT INTO postings (id, key, insights) VALUES (?, ?, ?)",
                        [(1, "a", lists), (2, "b", lists), (3, "c", "{}"), (4, "d", None), (5, "e", "{}")])
    db.conn.executemany("INSERT INTO app_market (posting_id, market_label, company_activity_open_jobs_approx,"
                        " market_open_jobs_approx) VALUES (?, '选择面较广', 0, 1)", [(1,), (3,)])
    db.conn.commit()
    db.close()
    db = open_db(path)
    assert db.conn.execute("SELECT posting_id, market_label, company_activity_open_jobs_approx,"
                           " market_open_jobs_approx, insights FROM app_market ORDER BY posting_id").fetchall() == [
        (1, "选择面较广", 0, 1, lists), (2, None, 0, 0, lists), (3, "选择面较广", 0, 1, "{}")]
    exported = [(r["id"], r["insights"], r["market"]["label"], r["market"]["open_jobs_approx"])
                for r in iter_export(db)]
    assert exported == [
        (1, {"pros": ["- 团队强"], "cons": ["- 加班"]}, "选择面较广", True),
        (2, {"pros": ["- 团队强"], "cons": ["- 加班"]}, None, False),
        (3, {}, "选择面较广", True), (4, {}, None, False), (5, {}, None, False)]
    assert "insights" not in {row[1] for row in db.conn.execute("PRAGMA table_info(postings)")}


URL = "https://www.zhipin.com/job_detail/86188f0694867fdb1nJy3d-5FlRY.html"


@pytest.mark.parametrize("source_id, url, stored", [
    pytest.param(URL, URL, None, id="its-id-is-its-url"),
    pytest.param("000.txt#0", URL, "000.txt#0", id="an-id-of-its-own"),
    pytest.param("000.txt#0", None, "000.txt#0", id="no-url"),
])
def test_a_source_id_that_is_the_url_is_stored_once(tmp_path, source_id, url, stored):
    db = open_db(tmp_path / "jobs.db")
    p = posting({"source_id": source_id, "url": url})
    Writer(db).write(Batch(postings=[posting_row(p, dedupe.key_values(posting_signatures([p])[0]))]))
    assert db.conn.execute("SELECT source_id, url FROM postings").fetchall() == [(stored, url)]
    assert (export_record(db, 1)["source_id"], export_record(db, 1)["url"]) == (source_id, url)
    # the dedupe key's url: NULL where it is the posting's, read back as it
    assert db.conn.execute("SELECT url, length(fingerprint), length(identity) FROM dedupe_signatures").fetchall() == [
        (None if url else "", 16, 16)]
    [(_, key)] = dedupe.keys(db.conn, [1])
    assert (key.url, key.fingerprint, key.identity) == (url or "", *(getattr(posting_signatures([p])[0], f)
                                                                       for f in ("fingerprint", "identity")))


FIRST_SHA, OTHER_SHA = seed_items()[0].sha256, "ab" * 32


def seen_in(locator: str, sha: str):
    """The seed's raw input and posting as read from ``locator`` with content hash ``sha``."""
    raw_input, raw = seed_items()
    return (raw_input.model_copy(update={"locator": locator, "sha256": sha}),
            normalize_posting(raw.model_copy(update={"locator": locator, "input_sha256": sha})))


@pytest.mark.parametrize("seen, stored", [
    pytest.param([("000.txt", FIRST_SHA, True)], (None, 1), id="parsed-from-a-stored-input"),
    pytest.param([("000.txt", FIRST_SHA, False)], (FIRST_SHA, None), id="its-input-not-stored"),
    pytest.param([("000.txt", FIRST_SHA, True), ("other.txt", OTHER_SHA, True)], (FIRST_SHA, 2),
                 id="seen-unchanged-in-another-input"),
    pytest.param([("000.txt", FIRST_SHA, True), ("other.txt", OTHER_SHA, True), ("000.txt", FIRST_SHA, True)],
                 (None, 1), id="and-again-in-its-first"),
])
def test_an_input_hash_is_stored_only_where_its_raw_input_has_another(tmp_path, seen, stored):
    """(input_sha256, raw_input_id) as stored; the export gives the hash of the input it was parsed from."""
    db = open_db(tmp_path / "jobs.db")
    for locator, sha, with_input in seen:
        raw_input, p = seen_in(locator, sha)
        Writer(db).write(Batch(inputs=[input_row(raw_input)] if with_input else [], postings=[posting_row(p)]))
    assert db.conn.execute("SELECT input_sha256, raw_input_id FROM postings").fetchall() == [stored]
    assert export_record(db, 1)["input_sha256"] == FIRST_SHA


def test_the_migration_stores_each_value_once_and_reads_them_as_before(tmp_path):
    path = made_by("6e4c4bc", tmp_path)
    with sqlite3.connect(path) as conn:
        before = conn.execute("SELECT p.id, p.source_id, p.input_sha256, s.fingerprint, s.identity, s.url FROM postings p"
                              " JOIN dedupe_signatures s ON s.posting_id = p.id ORDER BY p.id").fetchall()
    db = open_db(path)
    assert len(before) == 2
    assert [(r["id"], r["source_id"], r["input_sha256"]) for r in iter_export(db)] == [row[:3] for row in before]
    assert [(pid, key.fingerprint, key.identity, key.url) for pid, key in dedupe.keys(db.conn, [1, 2])] == [
        (pid, fingerprint, identity, url) for pid, _, _, fingerprint, identity, url in before]
    assert db.conn.execute("SELECT count(input_sha256), count(s.url), sum(s.posting_version = p.version),"
                           " sum(length(s.fingerprint) = 16) FROM postings p JOIN dedupe_signatures s"
                           " ON s.posting_id = p.id").fetchone() == (0, 2, 2, 2)
