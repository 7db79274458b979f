"""Each watch's new matches as an Atom feed: a real `jobcrawl serve` (datasette-atom renders the canned query
watch_feed), fetched at the URL `jobcrawl watch list` prints and parsed as XML."""

from __future__ import annotations

import json
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import SEEDS, run_cli, start_serve

pytestmark = pytest.mark.slow

SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8")  # 吉利汽车 · AI算子开发工程师 · 杭州 · 43K
SEED3 = (SEEDS / "003_5eabc84b6ca487f0.txt").read_text(encoding="utf-8")  # 初速度 · 模型训练优化开发工程师 · 苏州
SCRIPT_TITLE = "<script>alert(1)</script>模型训练优化开发工程师"
ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Postings 1 (seed 000) and 2 (seed 003 under a title holding markup); watch ``plain`` and watch ``all-in``
    (--include-tracked) delivered both to stdout; posting 2 tracked before, posting 1 after the delivery. Served by
    `jobcrawl serve`: (database, base URL)."""
    tmp = tmp_path_factory.mktemp("feeds")
    inputs, db, config = tmp / "in", tmp / "jobs.db", tmp / "alerts.toml"
    inputs.mkdir()
    (inputs / "a.txt").write_text(SEED0, encoding="utf-8")
    (inputs / "b.txt").write_text(SEED3.replace("模型训练优化开发工程师", SCRIPT_TITLE), encoding="utf-8")
    config.write_text("", encoding="utf-8")
    run_cli("ingest", str(inputs), "--db", str(db), "--as-of", "2026-11-29T12:00:00+08:00", check=True)
    run_cli("track", "2", "applied", "--db", str(db), check=True)
    for name, *flags in (("plain",), ("all-in", "--include-tracked")):
        run_cli("watch", "add", name, "--include-existing", *flags, "--db", str(db), "--config", str(config), check=True)
    run_cli("watch", "deliver", "--db", str(db), "--config", str(config), check=True)
    run_cli("track", "1", "saved", "--db", str(db), check=True)
    proc, base = start_serve(db)
    yield db, base
    proc.terminate()
    proc.wait(timeout=10)


def feed_urls(db: Path, base: str) -> dict[str, str]:
    lines = run_cli("watch", "list", "--db", str(db), "--browse-url", base, check=True).stdout.splitlines()
    return {head.split(":")[0]: feed.removeprefix("  feed: ") for head, feed in zip(lines[::2], lines[1::2])}


def entries(url: str) -> tuple[str, list[tuple[str, str, str]]]:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.headers["Content-Type"] == "application/xml; charset=utf-8"
        root = ET.fromstring(response.read())
    assert root.tag == f"{ATOM}feed"
    return root.findtext(f"{ATOM}title"), [
        (e.findtext(f"{ATOM}title"), e.find(f"{ATOM}link").get("href"), e.findtext(f"{ATOM}content"))
        for e in root.iter(f"{ATOM}entry")]


def test_watch_list_prints_each_watchs_feed_url(served):
    db, base = served
    assert feed_urls(db, base) == {"plain": f"{base}/jobs/watch_feed.atom?watch=plain",
                                   "all-in": f"{base}/jobs/watch_feed.atom?watch=all-in"}


@pytest.mark.parametrize(("watch", "expected"), [
    pytest.param("all-in", [(f"{SCRIPT_TITLE} · 初速度 · 苏州", "/jobs/postings/2", "3.5万"),
                            ("AI算子开发工程师 · 吉利汽车 · 杭州", "/jobs/postings/1", "43K")],
                 id="including-tracked-postings"),
    pytest.param("plain", [("watch plain: no new match yet", "/jobs/watch_matches",
                            "New matches of the watch appear here after each ingest, crawl or jobcrawl watch deliver.")],
                 id="its-one-match-tracked-since"),
])
def test_a_watchs_feed_links_each_match_to_its_posting_page(served, watch, expected):
    db, base = served
    title, found = entries(feed_urls(db, base)[watch])
    assert (title, found) == ("Watch feed", expected)


def test_a_title_with_markup_stays_text(served):
    db, base = served
    with urllib.request.urlopen(feed_urls(db, base)["all-in"], timeout=30) as response:
        body = response.read().decode("utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;模型训练优化开发工程师 · 初速度 · 苏州" in body
    assert "<script" not in body
    assert not list(ET.fromstring(body).iter("script"))


def test_an_unknown_watch_is_a_feed_saying_so(served):
    _, base = served
    assert entries(f"{base}/jobs/watch_feed.atom?watch=nobody")[1] == [
        ("no watch named nobody", "/jobs/watch_matches",
         "New matches of the watch appear here after each ingest, crawl or jobcrawl watch deliver.")]


def test_the_feed_page_links_each_posting(served):
    """The canned query's own page (what the feed is made of) opens, with the row of each match."""
    _, base = served
    with urllib.request.urlopen(f"{base}/jobs/watch_feed.json?watch=all-in&_shape=array", timeout=30) as response:
        rows = json.loads(response.read())
    assert [r["atom_link"] for r in rows] == ["/jobs/postings/2", "/jobs/postings/1"]
