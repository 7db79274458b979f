"""Stored MinHash signatures keep 16 bits a permutation (b-bit MinHash): their bytes, the Jaccard estimate on
them, migration 0044 of old 525-byte signatures, and clusters of a real database made with them."""

from __future__ import annotations

import gzip
import sqlite3
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import AS_OF, FIXTURES, ROOT, SEEDS
from crawler.store.migrations import m0044
from crawler.store.schema import open_db
from normalize.dedupe import NUM_PERM, SIGNATURE_VERSION, jaccard, signature, signature_from_bytes, signature_to_bytes
from normalize.dedupe.minhash import COLLISION

LEAN_HEADER = struct.pack("<qiB", 1, -NUM_PERM, 1)
"""How datasketch's LeanMinHash bytes, the former stored form, start: seed 1, −128 values, scheme affine32."""
OLD_VERSION, NEW_VERSION = "minhash-affine32-p128-s1-k5-jd-v2", "minhash-affine32-p128-s1-k5-b16-jd-v2"


def _values(*pattern: int) -> np.ndarray:
    """128 uint32 values: ``pattern`` repeated."""
    return np.resize(np.asarray(pattern, dtype=np.uint32), NUM_PERM)


@pytest.mark.parametrize("values,stored", [
    pytest.param(_values(0x12345678), bytes.fromhex("7856") * 128, id="low-half-little-endian"),
    pytest.param(_values(0xFFFFFFFF), b"\xff\xff" * 128, id="empty-signature"),
    pytest.param(_values(0x00010002, 0xABCD0000), bytes.fromhex("0200" "0000") * 64, id="high-half-dropped"),
    pytest.param(np.arange(NUM_PERM, dtype=np.uint32) * np.uint32(0x10001),
                 b"".join(struct.pack("<H", i) for i in range(NUM_PERM)), id="counting"),
])
def test_packing_keeps_the_low_16_bits_and_unpacks_them(values, stored):
    data = signature_to_bytes(values)
    assert (len(data), data) == (256, stored)
    unpacked = signature_from_bytes(data)
    assert (unpacked.dtype, unpacked.tolist()) == (np.uint16, (values & 0xFFFF).tolist())
    assert signature_to_bytes(unpacked) == stored  # a stored signature packs to itself


def test_packing_a_real_signature():
    sig = signature("熟悉C++与CUDA编程\n负责推理引擎算子开发")
    assert sig[:4].tolist() == [141247870, 1006439890, 135685150, 463018253]  # 32-bit minima, as datasketch's
    assert signature_to_bytes(sig)[:8].hex() == "7e45d20d1e640d19"


@pytest.mark.parametrize("data", [
    pytest.param(b"\x00" * 255, id="short"),
    pytest.param(LEAN_HEADER + b"\x00" * 512, id="old-525-byte-form"),
])
def test_bytes_of_another_size_are_refused(data):
    with pytest.raises(ValueError, match=f"other parameters \\({len(data)} bytes, not 256\\)"):
        signature_from_bytes(data)


JD = "熟悉C++与CUDA编程，有推理引擎开发经验\n负责大模型推理算子开发与优化\n参与模型部署与性能调优"
REWORDED = "熟悉C++与CUDA编程，有推理引擎开发经验\n负责大模型推理算子开发与优化\n参与模型量化与部署"
OTHER = "负责门店日常运营管理\n完成销售目标"


@pytest.mark.parametrize("a,b,equal_32", [
    pytest.param(signature(JD), signature(JD), 128, id="same-text"),
    pytest.param(signature(JD), signature(REWORDED), 88, id="reworded"),
    pytest.param(signature(JD), signature(OTHER), 0, id="unrelated"),
    pytest.param(_values(7), _values(7, 8), 64, id="half"),
])
def test_estimate_is_the_32_bit_one_within_the_collision_correction(a, b, equal_32):
    share_32 = equal_32 / NUM_PERM
    assert np.count_nonzero(a == b) == equal_32
    estimate = jaccard(signature_from_bytes(signature_to_bytes(a)), signature_from_bytes(signature_to_bytes(b)))
    assert estimate == jaccard(a, b) == share_32
    corrected = max(0.0, (share_32 - COLLISION) / (1 - COLLISION))  # Li & König: chance agreements taken out
    assert abs(corrected - estimate) <= COLLISION


@pytest.mark.parametrize("a,b,expected", [
    pytest.param(_values(0x00010005), _values(0x00020005), 1.0, id="low-bits-agree-by-chance"),
    pytest.param(_values(0xFFFFFFFF), _values(0xFFFFFFFF), 0.0, id="empty"),
    pytest.param(_values(5), _values(0xFFFFFFFF), 0.0, id="one-empty"),
])
def test_estimate_compares_the_stored_bits(a, b, expected):
    assert jaccard(a, b) == expected


def _old_blob(values: np.ndarray) -> bytes:
    return LEAN_HEADER + values.astype("<u4").tobytes()


def test_migration_0044_converts_a_525_byte_signature_to_its_256_bytes(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE dedupe_signatures (posting_id INTEGER PRIMARY KEY, signature BLOB);"
                       "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    values = np.arange(NUM_PERM, dtype=np.uint32) * np.uint32(0x10001) + np.uint32(0xABCD0000)
    rows = [(1, _old_blob(values)), (2, None), (3, _old_blob(_values(0xFFFFFFFF)))]
    rows += [(i, _old_blob(_values(i))) for i in range(4, 4004)]  # two batches of 2,000 and one more
    conn.executemany("INSERT INTO dedupe_signatures VALUES (?, ?)", rows)
    conn.execute("INSERT INTO meta VALUES ('signature_version', ?)", (OLD_VERSION,))
    conn.commit()
    m0044(open_sqlite_utils(conn))
    stored = dict(conn.execute("SELECT posting_id, signature FROM dedupe_signatures"))
    assert len(_old_blob(values)) == 525
    assert stored[1] == b"".join(struct.pack("<H", i) for i in range(NUM_PERM))
    assert (stored[2], stored[3]) == (None, b"\xff\xff" * 128)
    assert [stored[i] for i in (4, 2003, 4003)] == [struct.pack("<H", i) * 128 for i in (4, 2003, 4003)]
    assert conn.execute("SELECT value FROM meta").fetchall() == [(NEW_VERSION,)] == [(SIGNATURE_VERSION,)]


def open_sqlite_utils(conn: sqlite3.Connection):
    import sqlite_utils

    return sqlite_utils.Database(conn)


def test_an_old_database_keeps_its_keys_and_clusters_as_16_bit_signatures(tmp_path):
    """The database made by 6e4c4bc (its two seed postings' 525-byte signatures) migrates; the dedupe step then
    computes no key again."""
    path = tmp_path / "jobs.db"
    path.write_bytes(gzip.decompress((FIXTURES / "migrations" / "db-6e4c4bc.db.gz").read_bytes()))
    before = dict(sqlite3.connect(path).execute("SELECT posting_id, signature FROM dedupe_signatures"))
    db = open_db(path)
    after = dict(db.conn.execute("SELECT posting_id, signature FROM dedupe_signatures"))
    assert {pid: len(blob) for pid, blob in before.items()} == {1: 525, 2: 525}
    assert after == {pid: (np.frombuffer(blob, "<u4", offset=13) & 0xFFFF).astype("<u2").tobytes()
                     for pid, blob in before.items()}
    from crawler.dedupe.step import dedupe, plannable

    assert plannable(db.conn)
    assert dedupe(db).get("keys", 0) == 0
    db.close()


INGEST = """
import sys
from crawler import api
api.ingest(sys.argv[2:], sys.argv[1], as_of=%r, settings={"LOG_LEVEL": "CRITICAL"})
""" % AS_OF


@pytest.fixture(scope="module")
def family_db(tmp_path_factory):
    """seeds/ and the repost family of fixtures/reposts ingested through crawler.api (a fresh process)."""
    db = tmp_path_factory.mktemp("bits") / "jobs.db"
    proc = subprocess.run([sys.executable, "-c", INGEST, str(db), str(SEEDS), str(FIXTURES / "reposts")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return db


@pytest.mark.slow
@pytest.mark.parametrize("a,b,same", [
    pytest.param("000_7c4373297891d5ca.txt", "reworded.txt", True, id="near-duplicate"),
    pytest.param("000_7c4373297891d5ca.txt", "other_city.txt", True, id="other-city"),
    pytest.param("000_7c4373297891d5ca.txt", "003_5eabc84b6ca487f0.txt", False, id="other-posting"),
    pytest.param("000_7c4373297891d5ca.txt", "same_company_other_role.txt", False, id="same-company-other-role"),
])
def test_postings_cluster_on_16_bit_signatures(family_db, a, b, same):
    conn = sqlite3.connect(family_db)
    clusters = dict(conn.execute("SELECT p.locator, s.cluster_id FROM dedupe_signatures s"
                                 " JOIN postings p ON p.id = s.posting_id"))
    assert (clusters[a] == clusters[b]) is same
    sizes = {len(blob) for (blob,) in conn.execute("SELECT signature FROM dedupe_signatures WHERE signature NOT NULL")}
    assert sizes == {256}
    assert conn.execute("SELECT value FROM meta WHERE key = 'signature_version'").fetchall() == [(SIGNATURE_VERSION,)]
