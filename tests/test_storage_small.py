"""What the database stores: 4 KB pages for a new database, and rows for duplicate clusters of two or more members
only (a posting alone in its cluster reads as its own cluster, in export and on its page)."""

from __future__ import annotations

import gzip
import sqlite3

import pytest

from conftest import AS_OF, FIXTURES, SEEDS, export_records, run_cli

EVIDENCE = ("cluster_id", "duplicate_of", "dedupe_reason", "dedupe_similarity", "dedupe_matched", "cross_company",
            "different_city")


def rows(db, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_an_empty_database_has_4_kb_pages_and_stays_under_half_a_megabyte(tmp_path):
    from crawler.files import read_taxonomy
    from crawler.store import skills
    from crawler.store.schema import open_db

    db = open_db(tmp_path / "empty.db")
    skills.prepare(db, read_taxonomy(None))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert db.execute("PRAGMA page_size").fetchone()[0] == 4096
    db.close()
    assert (tmp_path / "empty.db").stat().st_size <= 500_000


@pytest.fixture(scope="module")
def seeds_and_reposts(tmp_path_factory):
    db = tmp_path_factory.mktemp("small") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(db), "--as-of", AS_OF, check=True)
    run_cli("ingest", str(FIXTURES / "reposts" / "*.txt"), "--db", str(db), "--as-of", "2026-12-01T09:00:00+08:00",
            check=True)
    return db


@pytest.mark.slow
@pytest.mark.parametrize("sql,expected", [
    pytest.param("SELECT id, canonical_posting_id, size FROM clusters", [(1, 1, 5)], id="clusters"),
    pytest.param("SELECT posting_id, cluster_id, reason FROM cluster_members ORDER BY posting_id",
                 [(1, 1, "new"), (3, 1, "cross_company_copy"), (4, 1, "near_duplicate"), (5, 1, "same_content"),
                  (6, 1, "near_duplicate")], id="members"),
    pytest.param("SELECT posting_id, cluster_id FROM dedupe_signatures ORDER BY posting_id",
                 [(1, 1), (2, 2), (3, 1), (4, 1), (5, 1), (6, 1), (7, 3)], id="every-posting-has-its-cluster"),
])
def test_only_clusters_of_two_or_more_have_rows(seeds_and_reposts, sql, expected):
    assert rows(seeds_and_reposts, sql) == expected


@pytest.mark.slow
def test_a_posting_alone_reads_as_its_own_cluster(seeds_and_reposts):
    by_id = {r["id"]: tuple(r[k] for k in EVIDENCE) for r in export_records(seeds_and_reposts)}
    assert by_id[2] == (2, None, "new", 1.0, None, False, False)
    assert by_id[7] == (3, None, "new", 1.0, None, False, False)
    assert by_id[1] == (1, None, "new", 1.0, None, False, False)
    run = run_cli("dedupe", "--db", str(seeds_and_reposts), check=True)
    assert run.stdout == "dedupe: 0 clustered · 0 joined a cluster · 0 clusters merged · 3 clusters, 4 duplicates in all\n"


@pytest.mark.slow
def test_a_posting_alone_gets_its_member_row_when_another_joins_it(tmp_path):
    seed = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "000.txt").write_text(seed, encoding="utf-8")
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True)
    assert rows(db, "SELECT count(*) FROM cluster_members") == [(0,)]
    (folder / "repost.txt").write_text(seed.replace("发布于 大约 4 小时前", "发布于 2 天前"), encoding="utf-8")
    run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, check=True)
    assert rows(db, "SELECT posting_id, cluster_id, reason, similarity, matched_posting_id FROM cluster_members"
                    " ORDER BY posting_id") == [(1, 1, "new", 1.0, None), (2, 1, "same_content", 1.0, 1)]
    assert rows(db, "SELECT id, canonical_posting_id, size FROM clusters") == [(1, 1, 2)]


def test_the_migration_keeps_each_posting_in_its_cluster_without_rows_for_one_alone(tmp_path):
    from crawler.store.schema import open_db

    path = tmp_path / "old.db"
    path.write_bytes(gzip.decompress((FIXTURES / "migrations" / "db-6e4c4bc.db.gz").read_bytes()))
    assert rows(path, "SELECT posting_id, cluster_id, reason FROM cluster_members ORDER BY 1") == [
        (1, 1, "new"), (2, 2, "new")]
    open_db(path).close()
    assert rows(path, "SELECT count(*) FROM cluster_members") == rows(path, "SELECT count(*) FROM clusters") == [(0,)]
    assert rows(path, "SELECT posting_id, cluster_id FROM dedupe_signatures ORDER BY 1") == [(1, 1), (2, 2)]
    by_id = {r["id"]: tuple(r[k] for k in EVIDENCE) for r in export_records(path)}
    assert by_id == {1: (1, None, "new", 1.0, None, False, False), 2: (2, None, "new", 1.0, None, False, False)}
