"""Dedupe through the real CLI: seeds ingested twice plus repost families give the expected clusters."""

from __future__ import annotations

import gzip
import json
import sqlite3

import pytest

from crawler.procs import Corpus

from conftest import AS_OF, FIXTURES, SEEDS, export_records, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def family_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("dedupe") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    again = run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    assert "dedupe and scoring: skipped, no posting changed since they last ran" in again.stdout
    proc = run_cli("ingest", str(FIXTURES / "reposts" / "*.txt"), "--db", str(db), "--as-of", "2026-12-01T09:00:00+08:00",
                   check=True)
    assert "dedupe: 5 clustered · 4 joined a cluster · 0 clusters merged · 3 clusters, 4 duplicates in all" in proc.stdout
    return db


MEMBERSHIP = ("(SELECT s.posting_id, s.cluster_id, coalesce(m.reason, 'new') AS reason,"
              " coalesce(m.similarity, 1.0) AS similarity, m.matched_posting_id, coalesce(m.cross_company, 0) AS"
              " cross_company, coalesce(m.different_city, 0) AS different_city FROM dedupe_signatures s"
              " LEFT JOIN cluster_members m USING (posting_id) WHERE s.cluster_id IS NOT NULL)")
"""Every clustered posting's member row: stored for clusters of two or more, read as a new member's for one alone."""


def members(db) -> dict[str, tuple]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT p.locator, m.cluster_id, m.reason, m.cross_company, m.different_city, q.locator, m.similarity"
        f" FROM {MEMBERSHIP} m JOIN postings p ON p.id = m.posting_id"
        " LEFT JOIN postings q ON q.id = m.matched_posting_id"
    ).fetchall()
    return {r[0]: r[1:] for r in rows}


def test_repost_families(family_db):
    m = members(family_db)
    seed0 = "000_7c4373297891d5ca.txt"
    cluster = m[seed0][0]
    assert m[seed0][:5] == (cluster, "new", 0, 0, None)
    assert m["repost_new_time_and_salary.txt"][:5] == (cluster, "same_content", 0, 0, seed0)
    assert m["reworded.txt"][:5] == (cluster, "near_duplicate", 0, 0, seed0)
    assert 0.5 <= m["reworded.txt"][5] < 1.0
    assert m["other_city.txt"][:5] == (cluster, "near_duplicate", 0, 1, seed0)       # another opening
    assert m["agency_copy.txt"][:5] == (cluster, "cross_company_copy", 1, 0, seed0)   # staffing agency copy
    assert m["003_5eabc84b6ca487f0.txt"][1] == "new" and m["003_5eabc84b6ca487f0.txt"][0] != cluster
    other_role = m["same_company_other_role.txt"]
    assert other_role[1] == "new" and other_role[0] not in (cluster, m["003_5eabc84b6ca487f0.txt"][0])


def test_cluster_rows_and_export(family_db):
    conn = sqlite3.connect(family_db)
    canonical, size, companies, cities, reasons, cross = conn.execute(
        "SELECT canonical_posting_id, size, companies, cities, reasons, cross_company FROM clusters WHERE size > 1"
    ).fetchone()
    assert (canonical, size, companies, cities, reasons, cross) == (
        1, 5, 2, 2, '{"cross_company_copy": 1, "near_duplicate": 2, "new": 1, "same_content": 1}', 1)
    by_locator = {r["locator"]: r for r in export_records(family_db)}
    assert by_locator["000_7c4373297891d5ca.txt"]["duplicate_of"] is None
    assert by_locator["agency_copy.txt"]["duplicate_of"] == 1
    evidence = ("cluster_id", "duplicate_of", "dedupe_reason", "dedupe_similarity", "dedupe_matched", "cross_company",
                "different_city")
    assert {loc: tuple(r[k] for k in evidence) for loc, r in by_locator.items()} == {
        "000_7c4373297891d5ca.txt": (1, None, "new", 1.0, None, False, False),
        "003_5eabc84b6ca487f0.txt": (2, None, "new", 1.0, None, False, False),
        "agency_copy.txt": (1, 1, "cross_company_copy", 1.0, 1, True, False),
        "other_city.txt": (1, 1, "near_duplicate", 1.0, 1, False, True),
        "repost_new_time_and_salary.txt": (1, 1, "same_content", 1.0, 1, False, False),
        "reworded.txt": (1, 1, "near_duplicate", by_locator["reworded.txt"]["dedupe_similarity"], 1, False, False),
        "same_company_other_role.txt": (3, None, "new", 1.0, None, False, False),
    }
    assert 0.5 <= by_locator["reworded.txt"]["dedupe_similarity"] < 1.0
    assert by_locator["agency_copy.txt"]["cluster_id"] == by_locator["000_7c4373297891d5ca.txt"]["cluster_id"]
    assert by_locator["003_5eabc84b6ca487f0.txt"]["duplicate_of"] is None
    assert len(by_locator) == 7  # nothing is thrown away


def test_rebuild_gives_the_same_clusters(family_db, tmp_path):
    import shutil

    copy = tmp_path / "copy.db"
    shutil.copy(family_db, copy)
    for suffix in ("-wal", "-shm"):
        if (family_db.parent / (family_db.name + suffix)).exists():
            shutil.copy(family_db.parent / (family_db.name + suffix), tmp_path / ("copy.db" + suffix))
    before = {k: v[1:5] for k, v in members(copy).items()}
    proc = run_cli("dedupe", "--db", str(copy), "--rebuild", check=True)
    assert "7 clustered · 4 joined a cluster" in proc.stdout
    assert {k: v[1:5] for k, v in members(copy).items()} == before


def test_a_changed_posting_keeps_its_cluster_and_gets_a_fresh_signature(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    seed = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
    (folder / "000.txt").write_text(seed, encoding="utf-8")
    (folder / "repost.txt").write_text(seed.replace("发布于 大约 4 小时前", "发布于 2 天前"), encoding="utf-8")
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True)
    conn = sqlite3.connect(db)
    before = conn.execute(f"SELECT posting_id, cluster_id, reason FROM {MEMBERSHIP} ORDER BY posting_id").fetchall()
    assert before == [(1, 1, "new"), (2, 1, "same_content")]
    (folder / "000.txt").write_text(seed.replace("针对主流大模型，完成全链路性能分析、瓶颈定位与优化落地",
                                                 "针对主流大模型完成全链路性能分析与瓶颈定位"), encoding="utf-8")
    proc = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True)
    assert "updated 1 · unchanged 1" in proc.stdout
    assert conn.execute(f"SELECT posting_id, cluster_id, reason FROM {MEMBERSHIP} ORDER BY posting_id").fetchall() == before
    stale = conn.execute("SELECT count(*) FROM dedupe_signatures s JOIN postings p ON p.id = s.posting_id"
                         " WHERE s.posting_version IS NOT p.version").fetchone()[0]
    assert stale == 0


OLD_DB = FIXTURES / "dedupe" / "old_v1.db.gz"


def old_database(tmp_path):
    """A database made by the code before issue #27 (fixtures/dedupe/README.md): the seeds, the repost
    families and fixtures/dedupe/list_cards.csv (11 BOSS list cards of 10 companies, the same benefit tags),
    ingested and scored."""
    path = tmp_path / "old.db"
    path.write_bytes(gzip.decompress(OLD_DB.read_bytes()))
    return path


def clusters(db) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT size, companies, cities, reasons, cross_company FROM clusters"
                            " ORDER BY size DESC, id LIMIT 3").fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("args", [pytest.param((), id="dedupe"), pytest.param(("--rebuild",), id="dedupe-rebuild")])
def test_an_old_database_moves_to_the_new_rules(tmp_path, args):
    db = old_database(tmp_path)
    # The old rules glued the list cards (benefit tags read as content) into one cluster of ten companies.
    assert clusters(db)[0] == (11, 10, 1, '{"b": 1, "c": 9, "new": 1}', 1)
    proc = run_cli("ingest", str(FIXTURES / "dedupe" / "list_cards.csv"), "--db", str(db), check=True)  # migrates, no change
    assert "dedupe: 18 clustered · 5 joined a cluster · 0 clusters merged · 13 clusters, 5 duplicates in all" in proc.stdout
    assert clusters(db) == [
        (5, 2, 2, '{"cross_company_copy": 1, "near_duplicate": 2, "new": 1, "same_content": 1}', 1),  # the seed family
        (2, 1, 1, '{"new": 1, "same_identity": 1}', 0),  # the one card listed twice
    ]  # a cluster of one member has no row
    again = run_cli("dedupe", "--db", str(db), *args, check=True)
    assert again.stdout == ("dedupe: 18 clustered · 5 joined a cluster · 0 clusters merged · 13 clusters, 5 duplicates in all\n"
                            if args else "dedupe: 0 clustered · 0 joined a cluster · 0 clusters merged · 13 clusters, "
                                         "5 duplicates in all\n")
    assert clusters(db)[:2] == [(5, 2, 2, '{"cross_company_copy": 1, "near_duplicate": 2, "new": 1, "same_content": 1}', 1),
                                (2, 1, 1, '{"new": 1, "same_identity": 1}', 0)]


def test_the_first_dedupe_step_keeps_the_keys_the_workers_made(tmp_path):
    """A fresh database: the store stage made every posting's key in the workers, and the run's dedupe step uses
    them (it made 0 keys) with the same clusters as a rebuild that makes every key again."""
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(SEEDS), str(FIXTURES / "reposts" / "*.txt"), "--db", str(db), "--as-of", AS_OF, check=True)
    conn = sqlite3.connect(db)
    stats = json.loads(conn.execute("SELECT stats FROM runs ORDER BY id DESC LIMIT 1").fetchone()[0])
    assert (stats.get("jobcrawl/dedupe/keys", 0), stats["jobcrawl/dedupe/added"]) == (0, 7)
    before = conn.execute("SELECT posting_id, signature FROM dedupe_signatures ORDER BY posting_id").fetchall()
    kept = members(db)
    assert len(kept) == 7
    run_cli("dedupe", "--db", str(db), "--rebuild", check=True)
    assert members(db) == kept
    assert conn.execute("SELECT posting_id, signature FROM dedupe_signatures ORDER BY posting_id").fetchall() == before


# --------------------------------------------------------------------------- the dedupe planned beside the scoring

RESET = ("DELETE FROM cluster_members", "DELETE FROM clusters", "UPDATE dedupe_signatures SET cluster_id = NULL",
         "DELETE FROM dedupe_common_shingles",
         "DELETE FROM meta WHERE key = 'common_shingles'", "DELETE FROM evaluations WHERE scorer = 'jobcrawl-v1'")
MEMBERS = ("SELECT posting_id, cluster_id, reason, similarity, matched_posting_id, cross_company, different_city"
           f" FROM {MEMBERSHIP} ORDER BY posting_id")
CLUSTERS = "SELECT id, canonical_posting_id, size, companies, cities, reasons, cross_company FROM clusters ORDER BY id"


@pytest.fixture(scope="module")
def steps_db(tmp_path_factory):
    """Seeds, repost families and list cards ingested: dedupe and scoring made by a run (in its own process)."""
    db = tmp_path_factory.mktemp("steps") / "jobs.db"
    for inputs in (str(SEEDS), str(FIXTURES / "reposts" / "*.txt"), str(FIXTURES / "dedupe" / "list_cards.csv")):
        run_cli("ingest", inputs, "--db", str(db), "--as-of", AS_OF, check=True)
    return db


def reset_copy(db, tmp_path, *extra_sql: str):
    """A copy of ``db`` with its clusters and our scores gone (keys kept): what the corpus steps see after a run."""
    copy = tmp_path / "copy.db"
    copy.write_bytes(db.read_bytes())
    with sqlite3.connect(copy) as conn:
        for sql in RESET + extra_sql:
            conn.execute(sql)
    return copy


def rows(db, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_a_planned_dedupe_writes_what_the_dedupe_step_writes(steps_db, tmp_path):
    from crawler.store.schema import open_db
    from crawler.dedupe.step import apply, plan

    expected = (rows(steps_db, MEMBERS), rows(steps_db, CLUSTERS))
    assert len(expected[0]) == 18 and len(expected[1]) == 2  # clusters of two or more members have a row
    database = open_db(str(reset_copy(steps_db, tmp_path)))
    try:
        before = database.conn.total_changes
        planned = plan(database.conn)
        assert database.conn.total_changes == before  # planned from reads alone
        assert (planned.pending[0], planned.counts["added"], planned.counts["joined"]) == (18, 18, 5)
        with database.conn:
            counts = apply(database.conn, planned)
        assert (counts["clusters"], counts["duplicates"]) == (13, 5)
        with database.conn:  # applied again, it finds no posting left to cluster: nothing written
            assert apply(database.conn, planned) is None
    finally:
        database.close()
    assert (rows(tmp_path / "copy.db", MEMBERS), rows(tmp_path / "copy.db", CLUSTERS)) == expected


CARDS = """职位名称,职位地址,薪资,学历经验要求,公司名称,公司信息,公司福利,详情页链接
AI算子开发工程师,杭州·滨江区,45K,3-5年本科,吉利汽车,汽车制造已上市10000人以上,五险一金，带薪年假，定期体检,https://www.zhipin.com/job_detail/ex90card.html
AI算子开发工程师,杭州·余杭区,45K,3-5年本科,吉利汽车,汽车制造已上市10000人以上,五险一金，带薪年假，定期体检,https://www.zhipin.com/job_detail/ex91card.html
"""
"""Two list cards with the identity (company, title, city, salary) of fixtures/reposts/repost_new_time_and_salary.txt."""


def test_a_planned_dedupe_moves_list_cards_into_the_cluster_of_their_posting(tmp_path):
    """The seeds, two list cards, then a repost of seed 000 with the cards' salary: the repost joins seed 000's
    cluster and takes in the cards' cluster. Planned from reads, then applied, it writes what the step wrote."""
    from crawler.store.schema import open_db
    from crawler.dedupe.step import apply, plan

    cards = tmp_path / "cards.csv"
    cards.write_text(CARDS, encoding="utf-8")
    db = tmp_path / "jobs.db"
    for inputs in (str(SEEDS), str(cards), str(FIXTURES / "reposts" / "repost_new_time_and_salary.txt")):
        proc = run_cli("ingest", inputs, "--db", str(db), "--as-of", AS_OF, check=True)
    assert "dedupe: 1 clustered · 1 joined a cluster · 1 clusters merged" in proc.stdout
    expected = (rows(db, MEMBERS), rows(db, CLUSTERS))
    database = open_db(str(reset_copy(db, tmp_path)))
    try:
        planned = plan(database.conn)
        assert [op for op, *_ in planned.ops].count("move") == 1
        assert (planned.counts["added"], planned.counts["joined"], planned.counts["merged_clusters"]) == (5, 2, 1)
        with database.conn:
            counts = apply(database.conn, planned)
        assert (counts["clusters"], counts["duplicates"]) == (2, 2)  # the moved cards keep their reasons
    finally:
        database.close()
    assert (rows(tmp_path / "copy.db", MEMBERS), rows(tmp_path / "copy.db", CLUSTERS)) == expected
    size, reasons = rows(db, "SELECT size, reasons FROM clusters WHERE size > 1")[0]
    assert (size, reasons) == (4, '{"new": 2, "same_content": 1, "same_identity": 1}')


@pytest.mark.parametrize("reason,sql", [
    ("a key missing", "DELETE FROM dedupe_signatures WHERE posting_id = 3"),
    ("a key of older content", "UPDATE dedupe_signatures SET posting_version = 0 WHERE posting_id = 3"),
    ("other rules", "UPDATE meta SET value = 'v0' WHERE key = 'signature_version'"),
    ("a posting no run saw first", "UPDATE postings SET first_run_id = NULL WHERE id = 3"),
])
def test_a_dedupe_that_must_write_first_is_not_planned(steps_db, tmp_path, reason, sql):
    from crawler.store.schema import open_db
    from crawler.dedupe.step import plan

    database = open_db(str(reset_copy(steps_db, tmp_path, sql)))
    try:
        assert plan(database.conn) is None, reason
    finally:
        database.close()


SCORING_BESIDE = [pytest.param(Corpus(dedupe_apart=True), id="scored-in-this-process"),
                  pytest.param(Corpus(dedupe_apart=True, scoring=2, niceness=10), id="scored-by-two-yielding-workers")]
"""The processes of the corpus steps (crawler/procs.py): the dedupe planned apart; this process or two workers score."""


@pytest.mark.parametrize("processes", SCORING_BESIDE)
def test_after_a_run_dedupe_is_planned_in_a_process_while_this_one_scores(steps_db, tmp_path, processes):
    from crawler.store.schema import open_db
    from crawler.run.steps import after_run
    from test_runner import Recorder

    database = open_db(str(reset_copy(steps_db, tmp_path)))
    recorder = Recorder()
    try:
        steps = after_run(database, processes=processes, progress=recorder)
    finally:
        database.close()
    assert [e[:2] for e in recorder.events] == [("start", "dedupe"), ("start", "scoring"), ("finish", "dedupe"),
                                               ("finish", "scoring")]
    assert (steps["dedupe"]["added"], steps["dedupe"]["clusters"], steps["score"]["scored"]) == (18, 13, 18)
    copy = tmp_path / "copy.db"
    assert (rows(copy, MEMBERS), rows(copy, CLUSTERS)) == (rows(steps_db, MEMBERS), rows(steps_db, CLUSTERS))
    scores = "SELECT posting_id, overall, pay, growth, worklife, mission, evidence FROM evaluations WHERE scorer = 'jobcrawl-v1'"
    assert rows(copy, scores + " ORDER BY posting_id") == rows(steps_db, scores + " ORDER BY posting_id")


@pytest.mark.parametrize("trigger,step,clustered", [
    pytest.param("CREATE TRIGGER refuse BEFORE UPDATE OF cluster_id ON dedupe_signatures"
                 " BEGIN SELECT RAISE(ABORT, 'refused'); END",
                 "dedupe", 0, id="dedupe-fails-no-score-stored"),
    pytest.param("CREATE TRIGGER refuse BEFORE INSERT ON evaluations WHEN NEW.scorer = 'jobcrawl-v1'"
                 " BEGIN SELECT RAISE(ABORT, 'refused'); END", "score", 18, id="scoring-fails-dedupe-kept"),
])
@pytest.mark.parametrize("processes", SCORING_BESIDE)
def test_side_by_side_steps_fail_as_the_steps_one_after_the_other(steps_db, tmp_path, trigger, step, clustered,
                                                                  processes):
    """As when dedupe runs first: a failed dedupe stores no score, a failed scoring keeps the dedupe."""
    from crawler.store.schema import open_db
    from crawler.run.steps import StepFailed, after_run

    database = open_db(str(reset_copy(steps_db, tmp_path, trigger)))
    try:
        with pytest.raises(StepFailed) as failed:
            after_run(database, processes=processes)
    finally:
        database.close()
    assert str(failed.value) == f"the {step} step failed: sqlite3.IntegrityError: refused"
    assert failed.value.steps.get("dedupe", {}).get("added") == (18 if step == "score" else None)
    copy = tmp_path / "copy.db"
    assert rows(copy, "SELECT count(cluster_id) FROM dedupe_signatures") == [(clustered,)]
    assert rows(copy, "SELECT count(*) FROM evaluations WHERE scorer = 'jobcrawl-v1'") == [(0,)]
