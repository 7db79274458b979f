"""Bodies and files that declare no charset and are not UTF-8 (issue #38, class 6): read in the encoding browsers
would find (BOM, declared charset, then GB18030 for Chinese text or windows-1252 for Western text), the repair named
in one ``repaired:`` line; bytes no candidate reads as text are quarantined with the reason, never stored with U+FFFD.
The decoder on its own (exact outputs), the page objects on bodies, and a real crawl of boards on 127.0.0.1."""

from __future__ import annotations

import codecs
import json
import random
from pathlib import Path

import pytest

from conftest import FIXTURES, export_records, problem_lines
from crawler.web.pages.base import PageError
from crawler.web.pages.greenhouse import GreenhousePage
from crawler.web.pages.jsonld import JsonLdPage
from crawler.web.pages.lever import LeverPage
from crawler.reparse.pages import reparse_items
from crawler.web.spiders.webbase import page_reader
from normalize.models import Quarantined, RawInput, RawPosting
from normalize.text import DecodeError, declared_codec, decode_bytes, sha256_hex
from test_crawl import crawl, server, table, write_sources  # noqa: F401 (server: the fixture)

FETCHED = "2026-11-29T04:00:00+00:00"
GREENHOUSE = "http://127.0.0.1/greenhouse/v1/boards/{}/jobs?content=true"
LEVER = "http://127.0.0.1/lever/v0/postings/{}?mode=json"
JSON = {"Content-Type": "application/json"}

CN_TITLE = "算子开发工程师"
FR_TITLE = "Ingénieur logiciel"
DE_TITLE = "Softwareentwickler für Bildverarbeitung (m/w/d)"
GBK_ONLY = "北京 · 算子开发工程师（CUDA/C++）"
FR_LINE = "Ingénieur logiciel – Lyon, 45 k€\n"
DE_LINE = "Größe des Teams: 12 Entwickler (m/w/d)\n"
# 40 bytes of a noisy radio link: every one past 0x7f, so neither UTF-8 nor plausible GB18030 or windows-1252.
_RNG = random.Random(38)
NOISE = bytes(_RNG.randrange(0x80, 0x100) for _ in range(40))


def greenhouse_json(title: str, city: str = "Paris") -> str:
    job = {"id": 4000301, "title": title, "updated_at": "2026-11-20T08:00:00Z", "location": {"name": city},
           "absolute_url": "https://boards.greenhouse.io/example/jobs/4000301", "content": "&lt;p&gt;x&lt;/p&gt;"}
    return json.dumps({"jobs": [job], "meta": {"total": 1}}, ensure_ascii=False)


def lever_json(title: str) -> str:
    return json.dumps([{"id": "5c0a9b1e-0000-4000-8000-000000000001", "text": title, "createdAt": 1763625600000,
                        "categories": {"location": "München"}, "hostedUrl": "https://jobs.lever.co/example/1"}],
                      ensure_ascii=False)


def gbk_html(meta: str = "") -> bytes:
    """The recorded JSON-LD page 8 (Chinese) in GBK, with ``meta`` in place of its ``<meta charset>``."""
    text = (FIXTURES / "web" / "site" / "jobs" / "8.html").read_text(encoding="utf-8")
    return text.replace('<meta charset="utf-8">', meta).encode("gbk")


# --------------------------------------------------------------------------- the decoder


DECODED = [
    pytest.param(FR_LINE.encode("cp1252"), None, (FR_LINE, "cp1252"), id="french-cp1252"),
    pytest.param(DE_LINE.encode("cp1252"), None, (DE_LINE, "cp1252"), id="german-cp1252-oe-sz-reads-as-one-hanzi"),
    pytest.param(FR_TITLE.encode("cp1252"), None, (FR_TITLE, "cp1252"), id="cp1252-that-gb18030-also-decodes"),
    pytest.param(GBK_ONLY.encode("gbk"), "gb18030", (GBK_ONLY, "gb18030"), id="declared-gb18030"),
    pytest.param(GBK_ONLY.encode("gbk"), "gbk", (GBK_ONLY, "gb18030"), id="declared-gbk-reads-as-gb18030"),
    pytest.param(GBK_ONLY.encode("gbk"), "GB2312", (GBK_ONLY, "gb18030"), id="declared-gb2312-reads-as-gb18030"),
    pytest.param(("\u3400" + GBK_ONLY).encode("gb18030"), "gbk", ("\u3400" + GBK_ONLY, "gb18030"),
                 id="declared-gbk-with-a-gb18030-only-character"),
    pytest.param(FR_TITLE.encode("utf-8"), "base64", (FR_TITLE, "utf-8"), id="declared-base64-is-no-charset"),
    pytest.param(FR_TITLE.encode("utf-8"), "rot13", (FR_TITLE, "utf-8"), id="declared-rot13-is-no-charset"),
    pytest.param(FR_TITLE.encode("utf-8"), "undefined", (FR_TITLE, "utf-8"), id="declared-undefined-reads-nothing"),
    pytest.param(FR_TITLE.encode("cp1252"), "utf-8", (FR_TITLE, "cp1252"), id="declared-utf-8-that-does-not-fit"),
    pytest.param(GBK_ONLY.encode("gbk"), "utf-8", (GBK_ONLY, "gb18030"), id="declared-utf-8-gbk-body"),
    pytest.param(FR_TITLE.encode("utf-8"), "iso8859-2", ("IngĂŠnieur logiciel", "iso8859-2"),
                 id="declared-charset-that-fits-wins"),
    pytest.param(codecs.BOM_UTF8 + GBK_ONLY.encode("utf-8"), "cp1252", (GBK_ONLY, "utf-8-sig"), id="bom-wins"),
    pytest.param(FR_TITLE.encode("cp1252"), "no-such-charset", (FR_TITLE, "cp1252"), id="unknown-charset-ignored"),
]


@pytest.mark.parametrize(("charset", "codec"), [
    ("gbk", "gb18030"), ("GB2312", "gb18030"), ("cp936", "gb18030"), ("gb18030", "gb18030"), ("utf-8", "utf-8"),
    ("UTF8", "utf-8"), ("cp1252", "cp1252"), ("big5hkscs", "big5hkscs"), ("no-such-charset", None),
    ("base64", None), ("rot13", None), ("zlib", None), ("hex", None),
])
def test_a_declared_charset_is_read_with_its_codec(charset, codec):
    assert declared_codec(charset) == codec


@pytest.mark.parametrize(("data", "declared", "expected"), DECODED)
def test_decode_bytes(data, declared, expected):
    assert decode_bytes(data, declared=declared) == expected


UNDECODABLE = [
    pytest.param(b'{"title": "' + NOISE + b'"}', ("bad_encoding", "unknown encoding: not UTF-8 (bad byte at 11), and "
                                                  "neither GB18030 nor windows-1252 reads it as text"), id="noise"),
    pytest.param(b"\x81\x8d\x8f\x90\x9d" * 4, ("bad_encoding", "unknown encoding: not UTF-8 (bad byte at 0), and "
                                               "neither GB18030 nor windows-1252 reads it as text"),
                 id="bytes-windows-1252-leaves-undefined"),
]


@pytest.mark.parametrize(("data", "expected"), UNDECODABLE)
def test_bytes_no_candidate_reads_are_rejected(data, expected):
    with pytest.raises(DecodeError) as caught:
        decode_bytes(data)
    assert (caught.value.reason, str(caught.value)) == expected


@pytest.mark.xfail(strict=True, raises=DecodeError, reason="traditional hanzi in GBK are mostly outside GB2312: the "
                                                           "text is quarantined as undecodable, not read as GB18030")
def test_traditional_chinese_in_gbk_is_a_known_miss():
    text = "軟體工程師 負責機器學習演算法開發與優化"
    assert decode_bytes(text.encode("gbk")) == (text, "gb18030")


# --------------------------------------------------------------------------- page objects

NOTE_GB = "the body declares no charset and is not UTF-8: decoded as GB18030 (detected)"
NOTE_1252 = "the body declares no charset and is not UTF-8: decoded as windows-1252 (detected)"

PAGES = [
    pytest.param(GreenhousePage, greenhouse_json(CN_TITLE, "北京").encode("gbk"), JSON,
                 ("gb18030", [CN_TITLE], NOTE_GB), id="greenhouse-gbk"),
    pytest.param(GreenhousePage, greenhouse_json(FR_TITLE).encode("cp1252"), JSON,
                 ("cp1252", [FR_TITLE], NOTE_1252), id="greenhouse-windows-1252"),
    pytest.param(LeverPage, lever_json(DE_TITLE).encode("cp1252"), JSON,
                 ("cp1252", [DE_TITLE], NOTE_1252), id="lever-windows-1252-german"),
    pytest.param(LeverPage, lever_json(CN_TITLE).encode("gbk"), JSON, ("gb18030", [CN_TITLE], NOTE_GB), id="lever-gbk"),
    pytest.param(GreenhousePage, greenhouse_json(FR_TITLE).encode("utf-8"), JSON, ("utf-8", [FR_TITLE], None),
                 id="utf-8-needs-no-note"),
    pytest.param(GreenhousePage, greenhouse_json(CN_TITLE).encode("gbk"), {"Content-Type": "application/json; charset=GBK"},
                 ("gb18030", [CN_TITLE], None), id="declared-gbk-needs-no-note"),
    pytest.param(GreenhousePage, greenhouse_json(FR_TITLE).encode("cp1252"),
                 {"Content-Type": "application/json; charset=utf-8"},
                 ("cp1252", [FR_TITLE], "the body declares charset utf-8 but is not in it: decoded as windows-1252 "
                                        "(detected)"), id="declared-utf-8-is-windows-1252"),
    pytest.param(GreenhousePage, greenhouse_json(FR_TITLE).encode("utf-8"),
                 {"Content-Type": "application/json; charset=base64"}, ("utf-8", [FR_TITLE], None),
                 id="declared-base64-is-no-charset"),
    pytest.param(JsonLdPage, gbk_html(), {"Content-Type": "text/html"}, ("gb18030", ["AI推理加速工程师"], NOTE_GB),
                 id="html-gbk-no-charset-anywhere"),
    pytest.param(JsonLdPage, gbk_html('<meta charset="gbk">'), {"Content-Type": "text/html"},
                 ("gb18030", ["AI推理加速工程师"], None), id="html-gbk-meta-charset"),
]


@pytest.mark.parametrize(("page_class", "raw", "headers", "expected"), PAGES)
def test_page_decodes_undeclared_charsets(page_class, raw, headers, expected):
    page = page_class(GREENHOUSE.format("example"), raw, headers=headers, fetched_at=FETCHED)
    items = list(page.parse())
    assert (page.encoding, [i.title for i in items if isinstance(i, RawPosting)], page.decoding_repair) == expected
    assert (items[0].status, items[0].encoding, items[0].text) == ("parsed", expected[0], raw.decode(expected[0]))


def test_undecodable_body_is_quarantined_as_its_bytes():
    raw = greenhouse_json("X").replace('"X"', '"@"').encode().replace(b"@", NOISE)
    page = GreenhousePage(GREENHOUSE.format("noise"), raw, headers=JSON, fetched_at=FETCHED)
    detail = ("body cannot be decoded: unknown encoding: not UTF-8 (bad byte at 36), and neither GB18030 nor "
              "windows-1252 reads it as text")
    with pytest.raises(PageError) as caught:
        page.to_items()
    assert (caught.value.reason, caught.value.detail) == ("bad_encoding", detail)
    raw_input, problem = page.parse()
    assert isinstance(raw_input, RawInput) and isinstance(problem, Quarantined)
    assert (raw_input.status, raw_input.error, raw_input.encoding, raw_input.text, raw_input.body) == (
        "quarantined", detail, None, None, raw)
    assert (problem.reason, problem.detail, problem.position, problem.text) == ("bad_encoding", detail, None, None)


REPARSED = [
    pytest.param(greenhouse_json("@").encode().replace(b"@", NOISE), ("Quarantined", "bad_encoding"), id="still-noise"),
    pytest.param(greenhouse_json(CN_TITLE).encode("gbk"), ("RawPosting", CN_TITLE), id="gbk-read-now"),
]


@pytest.mark.parametrize(("raw", "expected"), REPARSED)
def test_reparse_reads_an_undecodable_body_from_its_bytes(raw, expected):
    row = {"source": "greenhouse", "locator": GREENHOUSE.format("x"), "sha256": sha256_hex(raw), "text": None,
           "encoding": None, "body": raw, "status": "quarantined", "as_of": FETCHED,
           "reader": page_reader(GreenhousePage, None, {"board": "x"})}
    [item] = reparse_items(row, fetched_at=FETCHED)
    assert (type(item).__name__, item.reason if isinstance(item, Quarantined) else item.title) == expected


# --------------------------------------------------------------------------- a real crawl

SOURCES = """
[sources.boards]
spider = "greenhouse"
boards = ["cn", "fr", "noise"]
base_url = "{base}/charsets/greenhouse"

[sources.page]
spider = "jsonld"
start_urls = ["{base}/charsets/job-8.htm"]
follow = false
"""


@pytest.mark.slow
def test_crawl_reads_undeclared_charsets_and_quarantines_noise(server, tmp_path):
    boards = server.root / "charsets" / "greenhouse" / "v1" / "boards"
    for board, raw in (("cn", greenhouse_json(CN_TITLE, "北京").encode("gbk")),
                       ("fr", greenhouse_json(FR_TITLE).replace("4000301", "4000302").encode("cp1252")),
                       ("noise", greenhouse_json("@").replace("4000301", "4000303").encode().replace(b"@", NOISE))):
        (boards / board).mkdir(parents=True)
        (boards / board / "jobs.json").write_bytes(raw)
    (server.root / "charsets" / "job-8.htm").write_bytes(gbk_html())
    db = tmp_path / "jobs.db"
    proc = crawl(db, write_sources(tmp_path / "sources.toml", SOURCES.format(base=server.base)), "--all")

    url = server.url("charsets/greenhouse/v1/boards/{}/jobs?content=true").format
    detail = ("body cannot be decoded: unknown encoding: not UTF-8 (bad byte at 36), and neither GB18030 nor "
              "windows-1252 reads it as text")
    assert proc.returncode == 1, proc.stderr
    assert sorted(problem_lines(proc.stderr)) == sorted([
        f"boards: quarantined: {url('noise')}: {detail}",
        f"boards: repaired: {url('cn')}: {NOTE_GB}",
        f"boards: repaired: {url('fr')}: {NOTE_1252}",
        f"page: repaired: {server.url('charsets/job-8.htm')}: {NOTE_GB}",
    ])
    records = export_records(db)
    assert sorted((r["source_id"], r["title"], r["city"]) for r in records) == [
        ("4000301", CN_TITLE, "北京"), ("4000302", FR_TITLE, "Paris"), ("careers.example.cn#HZ-AI-0042", "AI推理加速工程师", "杭州")]
    assert "\ufffd" not in json.dumps(records, ensure_ascii=False)
    assert table(db, "SELECT locator, reason, detail, text FROM quarantine") == [(url("noise"), "bad_encoding", detail, None)]
    assert sorted(table(db, "SELECT locator, encoding, status, body IS NOT NULL FROM raw_inputs")) == sorted([
        (url("cn"), "gb18030", "parsed", 0), (url("fr"), "cp1252", "parsed", 0), (url("noise"), None, "quarantined", 1),
        (server.url("charsets/job-8.htm"), "gb18030", "parsed", 0)])
    assert table(db, "SELECT count(*) FROM raw_inputs WHERE instr(text, char(65533))") == [(0,)]
