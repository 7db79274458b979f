"""bench/plain_loop.py, issue #39's floor: what it stores is the pages of the dumps, found by their trigram index."""

from __future__ import annotations

import sqlite3

import pytest

from bench.plain_loop import main, pages_of
from bench.gen import write_mixed_dumps


@pytest.mark.parametrize("text, rows", [
    pytest.param("公司A\n算子工程师\n职位详情\nWatch Jobs\n公司B\n推理工程师\nWatch Jobs\n",
                 [("公司A", "算子工程师", "公司A\n算子工程师\n职位详情"), ("公司B", "推理工程师", "公司B\n推理工程师")],
                 id="two-pages"),
    pytest.param("\n公司A\n算子工程师\nWatch Jobs\n\nWatch Jobs\n", [("公司A", "算子工程师", "公司A\n算子工程师")],
                 id="blank-page-left-out"),
    pytest.param("公司A\nWatch Jobs\n", [("公司A", "", "公司A")], id="no-title-line"),
    pytest.param("", [], id="empty-file"),
])
def test_pages_of(text, rows):
    assert pages_of(text) == rows


def test_the_loop_stores_every_generated_page_and_indexes_its_text(tmp_path, capsys):
    write_mixed_dumps(tmp_path / "in", 30, per_file=7)
    assert main(tmp_path / "in", tmp_path / "plain.db") == 0
    assert capsys.readouterr().out == "30\n"
    conn = sqlite3.connect(tmp_path / "plain.db")
    company, title, text = conn.execute("SELECT company, title, text FROM pages WHERE id = 1").fetchone()
    assert text.split("\n")[:2] == [company, title] and "Watch Jobs" not in text
    found = conn.execute("SELECT rowid FROM pages_fts WHERE pages_fts MATCH ?", (f'"{title}"',)).fetchall()
    assert (1,) in found
