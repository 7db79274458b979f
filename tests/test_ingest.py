"""End-to-end ingest of the seeds through the real Scrapy engine into a real SQLite file."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import AS_OF, FIXTURES, SEEDS, export_records, indexed_postings, run_cli
from crawler.store import fts
from crawler.store.rows import raw_text

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seed_records(seeded_db):
    return {r["locator"].split("_")[0]: r for r in export_records(seeded_db)}


@pytest.mark.parametrize("seed", ["000", "003"])
def test_seed_matches_golden_record(seed_records, seed):
    expected = json.loads((FIXTURES / "golden" / f"seed_{seed}.json").read_text(encoding="utf-8"))
    assert seed_records[seed] == expected


def test_seed_000_fields(seed_records):
    r = seed_records["000"]
    assert (r["company"], r["title"], r["city"], r["category"]) == ("吉利汽车", "AI算子开发工程师", "杭州", "人工智能")
    assert (r["seniority"], r["employment_type"], r["work_mode"]) == ("普通员工/个人贡献者", "全职员工", "仅现场办公")
    assert (r["source"], r["source_id"], r["position"]) == ("textdump", "000_7c4373297891d5ca.txt#0", 0)
    assert r["posted_raw"] == "发布于 大约 4 小时前"
    assert r["posted_at"] == "2026-11-29T00:00:00+00:00" and r["posted_approx"] is True  # as-of 04:00Z − 4 h
    assert (r["is_new"], r["published_label"]) == (True, "今天发布")
    assert len(r["tags"]) == 8 and r["tags"][0] == "Cuda"
    s = r["salary"]
    assert (s["raw"], s["min"], s["max"], s["currency"], s["period"], s["months"]) == ("43K", 43000, 43000, "CNY", "month", 12)
    assert (s["monthly_min"], s["annual_max"]) == (43000, 516000)
    assert (s["vs_median"], s["compare_scope"]) == ("below", "人工智能")
    assert (s["signal"]["min"], s["signal"]["max"], s["signal"]["implausible"]) == (35000, 50000, False)
    ca, mk = r["company_activity"], r["market"]
    assert (ca["label"], ca["open_jobs"], ca["open_jobs_approx"], ca["open_in_category"]) == ("这家公司招聘很活跃", 1900, True, 19)
    assert (mk["label"], mk["city"], mk["category"], mk["open_jobs"], mk["open_jobs_approx"]) == ("选择面较广", "杭州", "人工智能", 190, True)
    assert {k: len(v) for k, v in r["sections"].items()} == {"about": 2, "requirements": 8, "responsibilities": 4, "preferred": 2}
    assert {k: len(v) for k, v in r["insights"].items()} == {"pros": 6, "cons": 1, "role": 9, "strategy": 8, "interview": 8}
    ev = r["source_evaluation"]
    assert (ev["overall"], ev["pay"], ev["growth"], ev["worklife"], ev["mission"]) == (72, 70, 90, 50, 75)
    assert ev["levels"] == {"pay": "中等", "growth": "较高", "worklife": "较低", "mission": "中等"}
    assert ev["summary"] == "车企AI核心技术岗，技术前沿、薪资尚可，成长性强但WLB可能受限。"
    assert [s["key"] for s in ev["signals"]["growth"]] == ["技术前沿", "技术栈", "成长机会", "业务类型"]
    assert ev["signals"]["growth"][3]["value"] == "ambiguous"
    assert ev["problems"] == []


def test_seed_003_fields(seed_records):
    r = seed_records["003"]
    assert (r["company"], r["title"], r["city"], r["category"]) == ("初速度", "模型训练优化开发工程师", "苏州", "算法优化工程师")
    assert r["posted_raw"] == "发布于 2 小时前" and r["posted_approx"] is False
    assert r["posted_at"] == "2026-11-29T02:00:00+00:00"
    assert len(r["tags"]) == 7
    s = r["salary"]
    assert (s["raw"], s["min"], s["max"], s["period"], s["vs_median"]) == ("3.5万", 35000, 35000, "month", "above")
    sig = s["signal"]
    assert (sig["label"], sig["min"], sig["max"], sig["estimated"], sig["implausible"]) == ("未披露", 2500, 45000, True, True)
    assert (r["company_activity"]["open_jobs"], r["company_activity"]["open_jobs_approx"]) == (73, False)
    assert (r["market"]["city"], r["market"]["open_jobs"]) == ("苏州", 10)
    assert {k: len(v) for k, v in r["sections"].items()} == {"about": 2, "requirements": 6, "responsibilities": 4}
    ev = r["source_evaluation"]
    assert (ev["overall"], ev["pay"], ev["growth"], ev["worklife"], ev["mission"]) == (78, 85, 90, 50, 80)
    assert [s["key"] for s in ev["signals"]["growth"]] == ["技术前沿", "技术栈", "业务类型"]  # no 成长机会 here


def test_fts_finds_short_and_long_terms(seeded_db):
    from crawler.store.read import search
    from crawler.store.schema import open_db

    db = open_db(seeded_db)
    assert [r["company"] for r in search(db, "算子")] == ["吉利汽车", "初速度"]  # 2 characters
    assert [r["company"] for r in search(db, "量化")] == ["吉利汽车"]
    assert [r["company"] for r in search(db, "算子融合")] == ["吉利汽车"]
    assert [r["company"] for r in search(db, "CUDA")] == ["吉利汽车", "初速度"]
    assert [r["company"] for r in search(db, "DETR 苏州")] == ["初速度"]  # the city is indexed too
    assert [r["company"] for r in search(db, "DETR NPU")] == ["初速度"]
    assert [r["company"] for r in search(db, "Attention")] == ["吉利汽车"]  # a part of FlashAttention
    assert [r["company"] for r in search(db, "Go")] == []  # whole words only for short Latin terms
    assert [r["company"] for r in search(db, "c++")] == ["吉利汽车", "初速度"]
    db.close()


def test_database_is_wal_and_migrated(seeded_db):
    conn = sqlite3.connect(seeded_db)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    names = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    assert names[0] == "0001_initial"
    raw = conn.execute("SELECT locator, status, postings, encoding FROM raw_inputs ORDER BY locator").fetchall()
    assert raw == [("000_7c4373297891d5ca.txt", "parsed", 1, "utf-8"), ("003_5eabc84b6ca487f0.txt", "parsed", 1, "utf-8")]
    assert raw_text(*conn.execute("SELECT text, text_zstd FROM raw_inputs WHERE locator LIKE '000%'").fetchone()) == (
        SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
    conn.close()


def _dump(db) -> list[str]:
    """Every row of the data tables (not the runs log), for comparing whole databases."""
    conn = sqlite3.connect(db)
    fts.register(conn)
    out = []
    for table in ("raw_inputs", "postings", "sections", "evaluations", "posting_skills", "posting_versions", "quarantine"):
        cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if r[1] not in ("run_id", "fetched_at")]
        out += [f"{table} {row}" for row in conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY 1, 2")]
    out += [f"fts {row}" for row in conn.execute("SELECT rowid, title, company, body FROM postings_fts ORDER BY rowid")]
    conn.close()
    return out


def test_second_ingest_changes_nothing(db_path):
    first = run_cli("ingest", str(SEEDS), "--db", str(db_path), "--as-of", AS_OF)
    assert first.returncode == 0, first.stderr
    before = _dump(db_path)
    second = run_cli("ingest", str(SEEDS), "--db", str(db_path), "--as-of", AS_OF)
    assert second.returncode == 0, second.stderr
    assert "new 0 · updated 0 · unchanged 2 · quarantined 0" in second.stdout
    assert _dump(db_path) == before
    runs = sqlite3.connect(db_path).execute("SELECT kind, status, files, found, new, unchanged FROM runs").fetchall()
    assert runs == [("ingest", "ok", 2, 2, 2, 0), ("ingest", "ok", 2, 2, 0, 2)]


def test_changed_posting_updates_row_and_keeps_old_version(tmp_path, db_path):
    dump = tmp_path / "in" / "000.txt"
    dump.parent.mkdir()
    text = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
    dump.write_text(text, encoding="utf-8")
    run_cli("ingest", str(dump.parent), "--db", str(db_path), "--as-of", AS_OF, check=True)
    dump.write_text(text.replace("43K\n", "45K\n"), encoding="utf-8")
    proc = run_cli("ingest", str(dump.parent), "--db", str(db_path), "--as-of", "2026-11-30T12:00:00+08:00", check=True)
    assert "new 0 · updated 1 · unchanged 0" in proc.stdout
    [rec] = export_records(db_path)
    assert (rec["salary"]["raw"], rec["salary"]["min"], rec["version"]) == ("45K", 45000, 2)
    assert (rec["first_seen"], rec["last_seen"]) == ("2026-11-29T04:00:00+00:00", "2026-11-30T04:00:00+00:00")
    conn = sqlite3.connect(db_path)
    version, superseded, snapshot = conn.execute("SELECT version, superseded_at, snapshot FROM posting_versions").fetchone()
    assert (version, superseded) == (1, "2026-11-30T04:00:00+00:00")
    old = json.loads(snapshot)
    assert (old["salary"]["raw"], old["salary"]["min"], len(old["sections"]["requirements"])) == ("43K", 43000, 8)
    assert conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0] == 2  # both versions of the file kept
    assert conn.execute("SELECT count(*) FROM sections").fetchone()[0] == 4  # children replaced, not duplicated (a row a section)
    assert indexed_postings(conn) == 1  # indexed once, not twice


def test_usage_errors_exit_2(tmp_path, db_path):
    missing = run_cli("ingest", str(tmp_path / "nope"), "--db", str(db_path))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    bad_as_of = run_cli("ingest", str(SEEDS), "--db", str(db_path), "--as-of", "yesterday")
    assert bad_as_of.returncode == 2 and "--as-of" in bad_as_of.stderr
    nothing = run_cli("ingest", str(tmp_path / "*.txt"), "--db", str(db_path))
    assert nothing.returncode == 2 and "matches no file" in nothing.stderr
    no_db = run_cli("export", "--db", str(tmp_path / "none.db"))
    assert no_db.returncode == 2


def test_every_command_has_help_with_an_example():
    top = run_cli("--help", check=True).stdout
    commands = [line.split()[0] for line in top.split("Commands:")[1].splitlines() if line.strip()]
    assert {"ingest", "export"} <= set(commands)
    for command in commands:
        text = run_cli(command, "--help", check=True).stdout
        assert "Example:" in text and f"jobcrawl {command}" in text, command
