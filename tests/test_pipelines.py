"""Each stage of the one pipeline chain on its own: built by its ``from_crawler`` from a crawler made by
``scrapy.utils.test.get_crawler``, fed items directly (no engine, no subprocess, no CLI)."""

from __future__ import annotations

import json
import os
import sqlite3
import threading

import pytest
from scrapy.utils.test import get_crawler

from conftest import AS_OF, SEEDS
from crawler.store import fts
from crawler.store.rows import POSTING_COLS, Batch, posting_row, scorer_stored
from crawler.files import ConfigFileError
from crawler.ingest.appdump import parse_dump
from crawler.pipelines import (MAX_POSTING_CHARS, QUARANTINE_TEXT_CHARS, NormalizePipeline, SkillsPipeline, StorePipeline,
                               ValidatePipeline, _chars)
from crawler.report import REPORT_SETTING, CrawlReport, handed_report
from crawler.settings import ITEM_PIPELINES
from crawler.run.sinks import attach
from normalize.clock import iso_utc
from normalize.dates import parse_as_of
from normalize.models import Posting, Quarantined, RawInput, RawPosting
from normalize.posting import normalize_posting

AS_OF_UTC = iso_utc(parse_as_of(AS_OF, None))


def seed_items(name: str = "000_7c4373297891d5ca.txt") -> list:
    """What the textdump spider yields for a seed: its raw input, then its raw posting."""
    return list(parse_dump((SEEDS / name).read_bytes(), locator=name, fetched_at=AS_OF_UTC, as_of=AS_OF_UTC))


def raw_posting(**changes) -> RawPosting:
    raw = next(i for i in seed_items() if isinstance(i, RawPosting))
    return raw.model_copy(update=changes)


SEED_CHARS = 3611
"""Characters of text in the seed's raw posting (every string field; the cap below counts them all)."""


def crawler_with(**settings):
    """A crawler with the report a run hands it."""
    return get_crawler(settings_dict={"JOBCRAWL_MAX_TITLE_CHARS": 200, "JOBCRAWL_BATCH_SIZE": 500,
                                      REPORT_SETTING: CrawlReport(), **settings})


def through(stages, item):
    for stage in stages:
        item = stage.process_item(item)
    return item


def test_the_chain_is_declared_once_in_order():
    assert sorted(ITEM_PIPELINES, key=ITEM_PIPELINES.get) == [
        "crawler.pipelines.ValidatePipeline", "crawler.pipelines.NormalizePipeline",
        "crawler.pipelines.SkillsPipeline", "crawler.pipelines.StorePipeline"]


# --------------------------------------------------------------------------- validate


@pytest.mark.parametrize("changes, reason, detail", [
    pytest.param({"title": "  ", "description": None, "sections": []}, "invalid",
                 "posting has neither title nor description", id="no-title-no-description"),
    pytest.param({"title": "岗" * 201}, "invalid", "title is 201 characters long (limit 200): not a title",
                 id="title-over-the-limit"),
    pytest.param({"description": "y" * 300_000}, "invalid",
                 f"posting holds {SEED_CHARS + 300_000:,} characters of text, 300,000 of them in description "
                 "(limit 200,000): not one job posting", id="text-over-the-limit"),
    pytest.param({"extra": {"notes": "备" * 250_000}}, "invalid",
                 f"posting holds {SEED_CHARS + 250_005:,} characters of text, 250,005 of them in extra "
                 "(limit 200,000): not one job posting", id="unmapped-column-over-the-limit"),
])
def test_validate_quarantines_what_cannot_be_a_posting(changes, reason, detail):
    crawler = crawler_with()
    stage = ValidatePipeline.from_crawler(crawler)
    out = stage.process_item(raw_posting(**changes))
    assert isinstance(out, Quarantined)
    assert (out.reason, out.detail, out.locator, out.position) == (reason, detail, "000_7c4373297891d5ca.txt", 0)
    assert crawler.stats.get_value(f"jobcrawl/invalid/{reason}") == 1


def test_validate_caps_a_postings_text_at_its_limit_and_quarantines_a_clipped_copy():
    stage = ValidatePipeline.from_crawler(crawler_with())
    assert _chars(raw_posting(description="")) == SEED_CHARS
    at_limit = raw_posting(description="y" * (MAX_POSTING_CHARS - SEED_CHARS))
    assert stage.process_item(at_limit) is at_limit
    over = stage.process_item(raw_posting(description="y" * (MAX_POSTING_CHARS - SEED_CHARS + 1)))
    assert isinstance(over, Quarantined) and over.detail.startswith("posting holds 200,001 characters of text")
    record = json.loads(over.text)  # what the quarantine row shows: every field, each cut at 4,096 characters
    assert record["description"] == "y" * 4096 + f"… [{MAX_POSTING_CHARS - SEED_CHARS + 1:,} characters]"
    assert record["title"] == raw_posting().title and record["sections"] == raw_posting().model_dump()["sections"]
    wide = stage.process_item(raw_posting(extra={f"c{i}": "v" for i in range(100_000)}))  # a 100,000-column row
    kept = json.loads(wide.text)["extra"]
    assert len(wide.text) < 100_000 and list(kept)[:2] == ["c0", "c1"] and kept["…"] == f"{100_000 - len(kept) + 1:,} more"


def test_validate_repairs_lone_surrogates_and_names_the_posting_in_the_report():
    crawler = crawler_with()
    stage = ValidatePipeline.from_crawler(crawler)
    out = stage.process_item(raw_posting(source="tabular", title="推理\ud800工程师"))
    assert out.title == "推理\ufffd工程师"
    assert handed_report(crawler).repaired == [
        "000_7c4373297891d5ca.txt#0: 1 lone UTF-16 surrogate (a broken escape such as \\ud800) replaced by U+FFFD"]
    assert crawler.stats.get_value("jobcrawl/repaired/lone_surrogates") == 1


def test_validate_keeps_a_posting_whose_employer_is_hidden():
    stage = ValidatePipeline.from_crawler(crawler_with())
    out = stage.process_item(raw_posting(company=None))
    assert isinstance(out, RawPosting) and out.company is None


def test_validate_passes_other_items_through():
    stage = ValidatePipeline.from_crawler(crawler_with())
    raw_input = seed_items()[0]
    assert stage.process_item(raw_input) is raw_input


# --------------------------------------------------------------------------- normalize


def test_normalize_turns_a_raw_posting_into_a_posting():
    crawler = crawler_with()
    out = NormalizePipeline.from_crawler(crawler).process_item(raw_posting())
    assert isinstance(out, Posting)
    assert (out.company, out.title, out.city, out.salary.min, out.salary.max, out.salary.period) == (
        "吉利汽车", "AI算子开发工程师", "杭州", 43000.0, 43000.0, "month")
    assert out.content_hash and out.key
    assert crawler.stats.get_value("jobcrawl/salary/parsed") == 1


def test_normalize_passes_other_items_through():
    stage = NormalizePipeline.from_crawler(crawler_with())
    quarantined = Quarantined(source="textdump", locator="x.txt", reason="empty", detail="empty file",
                              fetched_at=AS_OF_UTC)
    assert stage.process_item(quarantined) is quarantined


# --------------------------------------------------------------------------- skills


def test_skills_tags_the_sections_with_evidence():
    crawler = crawler_with()
    posting = through([NormalizePipeline.from_crawler(crawler), SkillsPipeline.from_crawler(crawler)], raw_posting())
    assert posting.skills[:3] == ["CUDA", "FlashAttention", "PyTorch"]
    cuda = [(e.category, e.section, e.matched) for e in posting.skill_evidence if e.skill == "CUDA"]
    assert cuda[:2] == [("gpu", "tags", "Cuda"), ("gpu", "requirements", "CUDA")]


# --------------------------------------------------------------------------- store


def stored(db) -> tuple:
    conn = sqlite3.connect(db)
    try:
        return tuple(conn.execute(q).fetchall() for q in (
            "SELECT key, title FROM postings", "SELECT locator, status FROM raw_inputs",
            "SELECT locator, reason FROM quarantine", "SELECT count(*) FROM sections"))
    finally:
        conn.close()


def test_store_without_a_sink_writes_through_a_writer_of_its_own(tmp_path):
    from crawler.store.schema import open_db

    db = tmp_path / "jobs.db"
    open_db(db).close()
    crawler = crawler_with(JOBCRAWL_DB=str(db), JOBCRAWL_RUN_ID=None)
    normalize = NormalizePipeline.from_crawler(crawler)
    store = StorePipeline.from_crawler(crawler)
    store.open_spider()
    for item in seed_items():
        store.process_item(normalize.process_item(item))
    store.process_item(Quarantined(source="textdump", locator="bad.txt", reason="empty", detail="empty file",
                                   fetched_at=AS_OF_UTC))
    store.close_spider()
    postings, inputs, quarantine, sections = stored(db)
    assert [title for _, title in postings] == ["AI算子开发工程师"]
    assert inputs == [("000_7c4373297891d5ca.txt", "parsed")]
    assert quarantine == [("bad.txt", "empty")]
    assert sections == [(4,)]  # about, requirements, responsibilities, preferred
    assert handed_report(crawler).problems == ["bad.txt: empty file"]
    # the dedupe key is made by the store stage (so the dedupe step after a run has none left to make)
    from crawler.store.dedupe import key_values
    from normalize.dedupe import posting_signature

    posting = normalize.process_item(seed_items()[1])
    conn = sqlite3.connect(db)
    stored_key = conn.execute("SELECT signature, company, title, city, fingerprint, identity, url, has_jd, completeness"
                              " FROM dedupe_signatures").fetchall()
    conn.close()
    assert stored_key == [key_values(posting_signature(posting))]
    assert (crawler.stats.get_value("jobcrawl/new"), crawler.stats.get_value("jobcrawl/quarantined")) == (1, 1)


class ListSink:
    """The sink seam as a test sees it: keeps the batches it is handed."""

    def __init__(self):
        self.batches: list[Batch] = []

    def put(self, batch):
        self.batches.append(batch)

    def close(self):
        pass


def stored_batches(crawler, n: int) -> list[Batch]:
    """The batches the store stage of ``crawler`` hands over to the sink attached to it for ``n`` copies of the
    seed's posting (positions 0 … n-1), normalized first."""
    attach(crawler, sink := ListSink())
    normalize = NormalizePipeline.from_crawler(crawler)
    store = StorePipeline.from_crawler(crawler)
    store.open_spider()
    raw = raw_posting()
    for i in range(n):
        store.process_item(normalize.process_item(raw.model_copy(update={"source_id": f"x#{i}", "position": i})))
    store.close_spider()
    return sink.batches


def test_store_hands_batches_of_plain_rows_to_the_named_sink():
    batches = stored_batches(crawler_with(JOBCRAWL_RUN_ID=7, JOBCRAWL_BATCH_SIZE=2), 5)
    assert [len(b.postings) for b in batches] == [2, 2, 1]
    assert {b.run_id for b in batches} == {7}
    row = batches[0].postings[0]
    assert type(row.values) is tuple and len(row.values) == len(POSTING_COLS)
    assert all(isinstance(v, (str, int, float, type(None))) for v in row.values)


def test_store_quarantines_a_posting_whose_row_cannot_be_made_and_keeps_the_rest_of_its_batch(monkeypatch):
    import crawler.pipelines as store_module

    def row_or_bug(posting, keys=None):
        if posting.position == 1:
            raise ValueError("Port could not be cast to integer value as alert(3)")
        return posting_row(posting, keys)

    monkeypatch.setattr(store_module, "posting_row", row_or_bug)
    crawler = crawler_with(JOBCRAWL_BATCH_SIZE=3)
    batches = stored_batches(crawler, 5)
    assert [[dict(zip(POSTING_COLS, r.values))["position"] for r in b.postings] for b in batches] == [[0, 2], [3, 4]]
    assert [q[:6] for b in batches for q in b.quarantine] == [
        ("textdump", "000_7c4373297891d5ca.txt", 1, raw_posting().input_sha256, "store_error",
         "store error: ValueError: Port could not be cast to integer value as alert(3)")]
    assert handed_report(crawler).problems == [
        "000_7c4373297891d5ca.txt#1: store error: ValueError: Port could not be cast to integer value as alert(3)"]


@pytest.mark.parametrize("description, clipped", [("", False), ("y" * (MAX_POSTING_CHARS - SEED_CHARS + 1), True)],
                         ids=["whole", "too-much-text"])
def test_a_posting_a_stage_raised_on_is_quarantined_its_text_clipped_when_too_long(description, clipped):
    """Scrapy's item_error: the raw posting becomes a quarantine row (the stage that raised may be the validator,
    before anything capped it); another item is named in the run's errors."""
    from scrapy import signals
    from twisted.python.failure import Failure

    crawler = crawler_with(JOBCRAWL_BATCH_SIZE=10)
    attach(crawler, sink := ListSink())
    store = StorePipeline.from_crawler(crawler)
    store.open_spider()
    item = raw_posting(description=description)
    crawler.signals.send_catch_log(signals.item_error, item=item, response=None, spider=None,
                                   failure=Failure(ValueError("an unforeseen bug")))
    other = RawInput(source="textdump", locator="a.txt", sha256="0" * 64, size=1, fetched_at=AS_OF_UTC, as_of=AS_OF_UTC)
    crawler.signals.send_catch_log(signals.item_error, item=other, response=None, spider=None,
                                   failure=Failure(KeyError("x")))
    store.close_spider()
    (row,), = [b.quarantine for b in sink.batches]
    assert row[:6] == ("textdump", "000_7c4373297891d5ca.txt", 0, item.input_sha256, "pipeline_error",
                       "pipeline error: ValueError: an unforeseen bug")
    text = row[6]
    if clipped:
        assert len(text) < 2 * QUARANTINE_TEXT_CHARS
        assert json.loads(text)["description"] == "y" * 4096 + f"… [{len(description):,} characters]"
    else:
        assert text == item.model_dump_json()
    report = handed_report(crawler)
    assert report.errors == ["a.txt: KeyError: 'x'; this RawInput was not stored"]
    assert report.problems == ["000_7c4373297891d5ca.txt#0: pipeline error: ValueError: an unforeseen bug"]


def test_a_number_sqlite_cannot_store_is_quarantined_with_its_posting_not_its_batch(monkeypatch):
    import crawler.pipelines as normalize_module

    def absurd_head_count(raw, **kwargs):  # what a parser without a bound made of `99999999999999999999999人`
        posting = normalize_posting(raw, **kwargs)
        if posting.position == 1:
            posting.company_info.size_min = 99999999999999999999999
        return posting

    monkeypatch.setattr(normalize_module, "normalize_posting", absurd_head_count)
    batches = stored_batches(crawler_with(JOBCRAWL_BATCH_SIZE=3), 3)
    assert [dict(zip(POSTING_COLS, r.values))["position"] for b in batches for r in b.postings] == [0, 2]
    assert [q[4:6] for b in batches for q in b.quarantine] == [
        ("store_error", "store error: ValueError: company_info_size_min 99999999999999999999999 does not fit an "
                        "SQLite integer")]


def test_a_taxonomy_setting_that_names_a_fifo_fails_the_stage_at_once(tmp_path):
    """JOBCRAWL_TAXONOMY naming a FIFO made every worker wait for a writer forever."""
    fifo = tmp_path / "skills.toml"
    os.mkfifo(fifo)

    def writer_that_closes():  # lets the old code's blocked open return (empty), so that it fails, not hangs
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # no reader: the new code never opened it for reading
            pass

    timer = threading.Timer(5, writer_that_closes)
    timer.start()
    try:
        with pytest.raises(ConfigFileError, match=r"^a FIFO \(named pipe\), not a regular file: not read$"):
            SkillsPipeline.from_crawler(crawler_with(JOBCRAWL_TAXONOMY=str(fifo)))
    finally:
        timer.cancel()


def test_posting_rows_are_plain_values():
    posting = NormalizePipeline.from_crawler(crawler_with()).process_item(raw_posting())
    row = posting_row(posting)
    values = dict(zip(POSTING_COLS, row.values))
    assert (values["title"], values["salary_max"], values["posted_approx"]) == ("AI算子开发工程师", 43000.0, 1)
    assert [s[:3] for s in row.sections] == [(0, "about", "关于这个职位"), (1, "requirements", "最低要求"),
                                          (2, "responsibilities", "工作职责"), (3, "preferred", "优先资格")]
    assert row.sections[0][3].split("\n") == posting.sections["about"]
    assert row.evaluation[:3] == (scorer_stored("source"), 72, 70)  # the scorer as stored: its code
    body = fts.body_text(posting.tags, "\n".join("\n".join(b) for b in posting.sections.values()), None)
    assert row.search == fts.index_values("AI算子开发工程师", "吉利汽车", "杭州", posting.skills, body)


def test_raw_input_rows_and_quarantine_rows():
    from crawler.store.rows import INPUT_COLS, input_row, quarantine_row

    raw_input = next(i for i in seed_items() if isinstance(i, RawInput))
    assert dict(zip(INPUT_COLS, input_row(raw_input)))["locator"] == "000_7c4373297891d5ca.txt"
    q = Quarantined(source="tabular", locator="a.csv", position=None, reason="empty", detail="d", fetched_at=AS_OF_UTC)
    assert quarantine_row(q) == ("tabular", "a.csv", -1, None, "empty", "d", None)
