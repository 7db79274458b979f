"""Small files are read a group at a time: one trip to a thread for up to GROUP_FILES of them, each file still
read through ``open_regular`` (only regular files, within the cap), with a byte budget per group."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3

import pytest
from scrapy.utils.test import get_crawler

from conftest import AS_OF, SEEDS, run_cli
import crawler.ingest.textdump as textdump
from crawler.files import InputFile, read_group
from crawler.ingest.textdump import GROUP_FILE_BYTES, GROUP_FILES, TextdumpSpider
from crawler.report import FILES, FOUND
from normalize.models import Quarantined, RawInput, RawPosting

SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_bytes()

BUDGETS = [
    pytest.param([10, 10, 10], 100, 3, id="all-within-the-budget"),
    pytest.param([10, 10, 10], 15, 2, id="stops-once-the-budget-is-reached"),
    pytest.param([10, 10, 10], 20, 2, id="stops-at-exactly-the-budget"),
    pytest.param([10, 10, 10], 1, 1, id="always-reads-one"),
    pytest.param([0, 0, 0], 1, 3, id="empty-files-cost-nothing"),
]


@pytest.mark.parametrize("sizes, budget, read", BUDGETS)
def test_read_group_stops_at_the_byte_budget(tmp_path, sizes, budget, read):
    paths = []
    for i, size in enumerate(sizes):
        (path := tmp_path / f"{i}.txt").write_bytes(b"x" * size)
        paths.append(path)
    assert read_group(paths, max_bytes=1000, budget=budget) == [b"x" * size for size in sizes[:read]]


def test_read_group_reads_each_file_as_open_regular_does(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"abc")
    os.mkfifo(tmp_path / "fifo.txt")
    (tmp_path / "zero.txt").symlink_to("/dev/zero")
    (tmp_path / "big.txt").write_bytes(b"y" * 11)
    (tmp_path / "b.txt").write_bytes(b"de")
    got = read_group([tmp_path / n for n in ("a.txt", "fifo.txt", "zero.txt", "gone.txt", "big.txt", "b.txt")],
                     max_bytes=10, budget=1000)
    assert [g if isinstance(g, bytes) else g.reason for g in got] == [
        b"abc", "not_regular", "not_regular", "unreadable", "too_large", b"de"]


def _spider(inputs: list[InputFile]) -> TextdumpSpider:
    crawler = get_crawler(TextdumpSpider, {"JOBCRAWL_MAX_FILE_SIZE": 2**20})
    return TextdumpSpider.from_crawler(crawler, inputs=inputs, as_of=AS_OF)


def _reads(spider: TextdumpSpider, monkeypatch, budget: int = textdump.GROUP_BYTES) -> tuple[list, list]:
    """The items of the spider's ``start``, and the names of the files of each trip to read_group."""
    trips = []

    def recorded(paths, max_bytes, _budget):
        trips.append([p.name for p in paths])
        return read_group(paths, max_bytes, budget)

    monkeypatch.setattr(textdump, "read_group", recorded)

    async def collect():
        return [out async for out in spider.start()]

    return asyncio.run(collect()), trips


def test_small_regular_files_go_in_groups_and_others_alone(tmp_path, monkeypatch):
    names = ["a.txt", "b.txt", "big.txt", "c.txt", "fifo.txt", "d.txt", "e.txt"]
    for name in names:
        if name == "fifo.txt":
            os.mkfifo(tmp_path / name)
        else:
            (tmp_path / name).write_bytes(SEED0 * (8 if name == "big.txt" else 1))
    assert (tmp_path / "big.txt").stat().st_size > GROUP_FILE_BYTES
    spider = _spider([InputFile(tmp_path / n, n) for n in names])
    out, trips = _reads(spider, monkeypatch)
    assert trips == [["a.txt", "b.txt"], ["big.txt"], ["c.txt"], ["fifo.txt"], ["d.txt", "e.txt"]]
    assert [(type(o).__name__, o.locator) for o in out if not isinstance(o, RawPosting)] == [
        ("RawInput", n) if n != "fifo.txt" else ("Quarantined", n) for n in names]


def test_a_group_holds_at_most_group_files(tmp_path, monkeypatch):
    inputs = []
    for i in range(GROUP_FILES + 1):
        (tmp_path / f"{i:03}.txt").write_bytes(b"x")
        inputs.append(InputFile(tmp_path / f"{i:03}.txt", f"{i:03}.txt"))
    _, trips = _reads(_spider(inputs), monkeypatch)
    assert [len(names) for names in trips] == [GROUP_FILES, 1]
    assert [n for names in trips for n in names] == [inp.locator for inp in inputs]


def test_a_path_that_vanished_is_quarantined_between_groups(tmp_path, monkeypatch):
    for name in ("a.txt", "c.txt"):
        (tmp_path / name).write_bytes(b"x")
    out, trips = _reads(_spider([InputFile(tmp_path / n, n) for n in ("a.txt", "gone.txt", "c.txt")]), monkeypatch)
    assert trips == [["a.txt"], ["c.txt"]]
    assert [(type(o).__name__, o.locator) for o in out] == [
        ("RawInput", "a.txt"), ("Quarantined", "a.txt"), ("Quarantined", "gone.txt"), ("RawInput", "c.txt"),
        ("Quarantined", "c.txt")]
    assert [o.reason for o in out if o.locator == "gone.txt"] == ["unreadable"]


def test_a_group_yields_each_files_items_and_reads_again_what_the_budget_left(tmp_path, monkeypatch):
    names = ["a.txt", "b.txt", "c.txt", "d.txt"]
    for name in names:
        (tmp_path / name).write_bytes(SEED0)
    spider = _spider([InputFile(tmp_path / n, n) for n in names])
    # A budget of two files' bytes: each trip stops after the second file read.
    out, trips = _reads(spider, monkeypatch, budget=2 * len(SEED0))
    assert trips == [names, ["c.txt", "d.txt"]]
    assert [(type(o).__name__, o.locator) for o in out] == [
        (kind, name) for name in names for kind in ("RawInput", "RawPosting")]
    assert (spider.crawler.stats.get_value(FILES), spider.crawler.stats.get_value(FOUND)) == (4, 4)
    assert {o.as_of for o in out} == {"2026-11-29T04:00:00+00:00"}  # AS_OF in UTC


@pytest.mark.slow
def test_an_ingest_of_many_small_files_reads_them_in_groups_in_order(tmp_path):
    folder = tmp_path / "dumps"
    folder.mkdir()
    text = SEED0.decode("utf-8")
    for i in range(70):
        # Each file one posting of its own (another company), so that none is a duplicate of another.
        (folder / f"{i:03}.txt").write_text(text.replace(text.split("\n", 1)[0], f"公司{i:03}", 1), encoding="utf-8")
    os.mkfifo(folder / "040-fifo.txt")
    db = tmp_path / "jobs.db"
    proc = run_cli("ingest", str(folder), "--db", str(db), "--as-of", AS_OF, "--workers", "1", timeout=240)
    assert proc.returncode == 1, proc.stderr  # the FIFO is quarantined
    assert "files read 71 · postings found 70 · new 70" in proc.stdout
    conn = sqlite3.connect(db)
    locators = [row[0] for row in conn.execute("SELECT locator FROM postings ORDER BY id")]
    assert locators == [f"{i:03}.txt" for i in range(70)]
    # File reads are not HTTP requests: the run counts none, and the engine sees none.
    requests, responses = conn.execute("SELECT requests, responses FROM runs").fetchone()
    assert (requests, json.loads(responses)) == (0, {})
    stats = json.loads(conn.execute("SELECT stats FROM runs").fetchone()[0])
    assert "downloader/request_count" not in stats
    assert conn.execute("SELECT locator, reason FROM quarantine").fetchall() == [("040-fifo.txt", "not_regular")]
