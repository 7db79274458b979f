"""Bad input never stops a run: each problem is one clear line, kept in quarantine with its reason."""

from __future__ import annotations

import resource
import sqlite3

import pytest

from crawler.store.rows import raw_text
from conftest import AS_OF, SEEDS, export_records, run_cli

pytestmark = pytest.mark.slow

SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")
SEED3 = (SEEDS / "003_5eabc84b6ca487f0.txt").read_text(encoding="utf-8")


def renamed(text: str, company: str) -> str:
    return company + text[text.index("\n"):]


HOSTILE_TITLE = "<script>alert('x')</script>工程师'; DROP TABLE postings; --"


def bad_files() -> dict[str, bytes]:
    unknown = SEED0.replace("最低要求\n", "项目亮点\n团队负责车端大模型推理加速\n成员来自国内外一线AI芯片公司\n最低要求\n")
    hostile = renamed(SEED3, "恶意\x07公司").replace("模型训练优化开发工程师\n模型训练优化开发工程师", f"{HOSTILE_TITLE}\n{HOSTILE_TITLE}")
    hostile = hostile.replace("良好的团队协作能力", "良好的团队协作能力" + "长" * 100_000)
    return {
        "ok/seed0.txt": SEED0.encode("utf-8"),
        "ok/gb18030.txt": renamed(SEED3, "国标公司").encode("gb18030"),
        "ok/utf16.txt": renamed(SEED0, "十六位公司").encode("utf-16"),
        "ok/bom_crlf.txt": b"\xef\xbb\xbf" + renamed(SEED3, "换行公司").replace("\n", "\r\n").encode("utf-8"),
        "ok/two_pages.txt": (renamed(SEED0, "甲公司") + "\n" + renamed(SEED3, "乙公司")).encode("utf-8"),
        "ok/unknown_heading.txt": renamed(unknown, "未知标题公司").encode("utf-8"),
        "ok/hostile.txt": hostile.encode("utf-8"),
        "bad/empty.txt": b"",
        "bad/binary.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8,
        "bad/truncated.txt": renamed(SEED0, "截断公司")[: SEED0.index("工作职责") + 40].encode("utf-8"),
        "bad/prose.txt": "这是一段备忘录。\nNothing here looks like a posting.\n".encode("utf-8"),
        "bad/mixed.txt": renamed(SEED0, "混合编码公司").encode("utf-8")[:4000] + "任职要求：熟悉算法".encode("gbk"),
        "bad/long_title.txt": renamed(SEED0, "长标题公司").replace("AI算子开发工程师", "标" * 100_000, 1).encode("utf-8"),
        "bad/partial.txt": (renamed(SEED0, "半好公司") + "\n" + SEED3[:2000]).encode("utf-8"),
    }


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    for name, data in bad_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    db = root / "jobs.db"
    proc = run_cli("ingest", str(root), "--db", str(db), "--as-of", AS_OF)
    return proc, db




def test_run_goes_on_and_exits_1(bad_run):
    proc, _ = bad_run
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "files read 14 · postings found 12 · new 9 · updated 0 · unchanged 0 · quarantined 7" in proc.stdout


def test_one_clear_line_per_problem(bad_run):
    proc, _ = bad_run
    assert sorted(line for line in proc.stderr.splitlines() if line.startswith("quarantined")) == [
        "quarantined: bad/binary.txt: binary file (NUL bytes; UTF-16 without a byte-order mark is not accepted)",
        "quarantined: bad/empty.txt: empty file (0 bytes)",
        "quarantined: bad/long_title.txt#0: title is 100000 characters long (limit 200): not a title",
        "quarantined: bad/mixed.txt: mixed encoding: valid UTF-8 text plus bytes that are not UTF-8 (first at byte 3998)",
        "quarantined: bad/partial.txt#1: truncated posting: no 'Watch Jobs' footer (text ends in block 职位点评 after 90 lines)",
        "quarantined: bad/prose.txt: no posting found: none of the app's headings (职位详情, 值不值得投, 职位点评 …) occur",
        "quarantined: bad/truncated.txt#0: truncated posting: no 'Watch Jobs' footer (text ends in block 职位详情 after 45 lines)",
    ]


def test_quarantine_rows_keep_reason_and_raw_text(bad_run):
    _, db = bad_run
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT locator, position, reason FROM quarantine ORDER BY locator").fetchall()
    assert rows == [
        ("bad/binary.txt", -1, "binary"),
        ("bad/empty.txt", -1, "empty"),
        ("bad/long_title.txt", 0, "invalid"),
        ("bad/mixed.txt", -1, "mixed_encoding"),
        ("bad/partial.txt", 1, "truncated"),
        ("bad/prose.txt", -1, "no_posting"),
        ("bad/truncated.txt", 0, "truncated"),
    ]
    files = bad_files()
    # Every input is stored: decodable ones as text, verbatim; the others byte for byte.
    codec = {"utf-8": "utf-8", "utf-8-sig": "utf-8-sig", "utf-16-le": "utf-16", "gb18030": "gb18030"}
    for locator, text, text_zstd, body, encoding in conn.execute(
            "SELECT locator, text, text_zstd, body, encoding FROM raw_inputs"):
        text = raw_text(text, text_zstd)  # a long text is stored compressed (crawler/store/rows.py: pack_text)
        if encoding is None:
            assert bytes(body) == files[locator], locator
        else:
            assert body is None and text == files[locator].decode(codec[encoding]), locator
    assert conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0] == 14
    partial = conn.execute("SELECT status, postings, error FROM raw_inputs WHERE locator = 'bad/partial.txt'").fetchone()
    assert partial == ("partial", 1, "truncated")
    # the whole page as written, stored once: in its raw input, which the quarantine row points at
    text, in_input, r_text, r_zlib = conn.execute(
        "SELECT q.text, q.text_in_input, r.text, r.text_zstd FROM quarantine q JOIN raw_inputs r ON r.id = q.raw_input_id"
        " WHERE q.locator = 'bad/truncated.txt'").fetchone()
    assert (text, in_input, raw_text(r_text, r_zlib)) == (None, 1, files["bad/truncated.txt"].decode("utf-8"))


def test_good_files_in_every_encoding_are_ingested(bad_run):
    _, db = bad_run
    by_company = {r["company"]: r for r in export_records(db)}
    assert sorted(by_company) == sorted(["吉利汽车", "国标公司", "十六位公司", "换行公司", "甲公司", "乙公司", "未知标题公司", "恶意公司", "半好公司"])
    for company in ("国标公司", "换行公司", "乙公司"):
        assert by_company[company]["salary"]["min"] == 35000 and len(by_company[company]["sections"]["requirements"]) == 6
    assert by_company["十六位公司"]["source_evaluation"]["overall"] == 72
    encodings = dict(sqlite3.connect(db).execute("SELECT locator, encoding FROM raw_inputs WHERE locator LIKE 'ok/%'"))
    assert encodings == {"ok/seed0.txt": "utf-8", "ok/gb18030.txt": "gb18030", "ok/utf16.txt": "utf-16-le",
                         "ok/bom_crlf.txt": "utf-8-sig", "ok/two_pages.txt": "utf-8", "ok/unknown_heading.txt": "utf-8",
                         "ok/hostile.txt": "utf-8"}


def test_unknown_heading_is_kept_under_its_own_name(bad_run):
    _, db = bad_run
    rec = next(r for r in export_records(db) if r["company"] == "未知标题公司")
    assert list(rec["sections"]) == ["about", "项目亮点", "requirements", "responsibilities", "preferred"]
    assert rec["sections"]["项目亮点"] == ["团队负责车端大模型推理加速", "成员来自国内外一线AI芯片公司"]


def test_hostile_strings_are_stored_as_text(bad_run):
    _, db = bad_run
    rec = next(r for r in export_records(db) if r["company"] == "恶意公司")  # the BEL control character removed
    assert rec["title"] == HOSTILE_TITLE
    assert rec["sections"]["requirements"][4] == "良好的团队协作能力" + "长" * 100_000
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM postings").fetchone()[0] == 9  # the DROP TABLE stayed a string
    assert conn.execute("SELECT rowid FROM postings_fts WHERE postings_fts MATCH '\"DROP TABLE\"'").fetchall() == [(rec["id"],)]


def test_rerun_of_bad_inputs_changes_nothing(bad_run):
    proc, db = bad_run
    conn = sqlite3.connect(db)
    before = conn.execute("SELECT count(*) FROM quarantine").fetchone()[0], conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0]
    again = run_cli("ingest", str(db.parent), "--db", str(db), "--as-of", AS_OF)
    assert again.returncode == 1
    assert "new 0 · updated 0 · unchanged 9 · quarantined 7" in again.stdout
    after = conn.execute("SELECT count(*) FROM quarantine").fetchone()[0], conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0]
    assert after == before == (7, 14)


def test_fifty_megabyte_dump(tmp_path):
    """A 50 MB export of 7,000 postings ingests completely; the child's peak RSS is printed."""
    from bench.gen import postings

    pages = postings(7000, seed=11)
    big = tmp_path / "big.txt"
    big.write_text("\nWatch Jobs\n".join(pages) + "\nWatch Jobs\n", encoding="utf-8")
    size = big.stat().st_size
    assert size > 50 * 10**6
    proc = run_cli("ingest", str(big), "--db", str(tmp_path / "jobs.db"), "--as-of", AS_OF)
    assert proc.returncode == 0, proc.stderr
    assert "files read 1 · postings found 7000 · new 7000" in proc.stdout
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"50 MB file: {size / 1e6:.1f} MB, peak child RSS {peak:.0f} MB")


def test_lone_surrogates_in_json_are_repaired_not_lost(tmp_path):
    """JSON may escape half of a UTF-16 pair (\\ud800): such a posting is stored with U+FFFD and named once."""
    rows = [
        r'{"job_title": "LLM\ud800推理工程师", "company_name": "示例\udfff模型", "city": "杭州", "tags": ["CUDA\ud800", "C++"],'
        r' "description": "岗位职责：负责\ud800推理优化。任职要求：熟悉CUDA\ud800与PyTorch。"}',
        r'{"job_title": "编译器工程师", "company_name": "示例编译", "city": "北京", "description": "任职要求：熟悉C++"}',
    ]
    text = "\n".join(rows) + "\n"
    (tmp_path / "p.jsonl").write_text(text, encoding="utf-8")
    db = tmp_path / "jobs.db"
    proc = run_cli("ingest", str(tmp_path / "p.jsonl"), "--db", str(db), "--as-of", AS_OF)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "ERROR" not in proc.stderr
    assert "files read 1 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 0" in proc.stdout
    assert [line for line in proc.stderr.splitlines() if line.startswith("repaired")] == [
        "repaired: p.jsonl#1: 5 lone UTF-16 surrogates (a broken escape such as \\ud800) replaced by U+FFFD",
    ]
    rec = next(r for r in export_records(db) if r["company"] == "示例\ufffd模型")
    assert rec["title"] == "LLM\ufffd推理工程师"
    assert rec["tags"] == ["CUDA\ufffd", "C++"]
    assert rec["sections"]["requirements"] == ["熟悉CUDA\ufffd与PyTorch。"]
    assert rec["skills"] == ["CUDA", "C++", "inference optimization", "PyTorch"]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT text FROM raw_inputs").fetchone()[0] == text  # the escapes as written


def _all_stored(tmp_path, text: str, n: int) -> sqlite3.Connection:
    """Ingest ``text`` as a CSV file: exit 0, its ``n`` rows all new, nothing quarantined; the database."""
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    db = tmp_path / "jobs.db"
    proc = run_cli("ingest", str(tmp_path / "t.csv"), "--db", str(db), "--as-of", AS_OF)
    assert proc.returncode == 0, proc.stderr
    assert "ERROR" not in proc.stderr and "Traceback" not in proc.stderr
    assert f"files read 1 · postings found {n} · new {n} · updated 0 · unchanged 0 · quarantined 0" in proc.stdout
    return sqlite3.connect(db)


def test_links_that_are_no_web_page_are_kept_and_identify_nothing(tmp_path):
    """A `javascript:` link made the store stage raise for its whole batch: every posting after it was lost, its raw
    input too, and the run exited 0. Such links, `mailto:` and URLs with a port that is no number are kept as written
    and identify no page: the postings are stored, and two that share a mail address are not one posting."""
    conn = _all_stored(tmp_path, "title,company,location,job_url\n"
                                 "CUDA 算子工程师,甲公司,北京,javascript:alert(3)\n"
                                 "推理工程师,乙公司,上海,mailto:hr@example.com\n"
                                 "编译器工程师,乙公司,上海,mailto:hr@example.com\n"
                                 "感知算法工程师,丙公司,杭州,http://example.com:abc/jobs/1\n", 4)
    assert conn.execute("SELECT title, url FROM postings ORDER BY id").fetchall() == [
        ("CUDA 算子工程师", "javascript:alert(3)"), ("推理工程师", "mailto:hr@example.com"),
        ("编译器工程师", "mailto:hr@example.com"), ("感知算法工程师", "http://example.com:abc/jobs/1")]
    assert conn.execute("SELECT count(*) FROM raw_inputs").fetchone()[0] == 1
    assert conn.execute("SELECT count(DISTINCT cluster_id) FROM dedupe_signatures").fetchone()[0] == 4


def test_absurd_numbers_are_kept_as_written_not_a_failed_run(tmp_path):
    """A head count of 24 digits failed the run (exit 3, nothing stored, no line saying why, "new 3")."""
    conn = _all_stored(tmp_path, "title,company,location,salary,company_info,posted\n"
                                 "工程师A,甲,北京,99999999999999999999999-999999999999999999999999K,"
                                 "互联网A轮99999999999999999999999-999999999999999999999999人,99999999999999999999天前\n"
                                 "工程师B,乙,北京,1e308-1e309K,互联网,2026-13-45\n", 2)
    assert conn.execute("SELECT title, company_info_size_min, company_info_raw, salary_status, salary_raw, posted_at"
                        " FROM postings ORDER BY id").fetchall() == [
        ("工程师A", None, "互联网A轮99999999999999999999999-999999999999999999999999人", "unparseable",
         "99999999999999999999999-999999999999999999999999K", None),
        ("工程师B", None, "互联网", "unparseable", "1e308-1e309K", None)]
