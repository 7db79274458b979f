"""The one full-text index (crawler/store/fts.py): stored text, queries, what matches, snippets, writes,
and the migration that replaces the two old indexes on a database made by the code before it."""

from __future__ import annotations

import gzip
import re
import shutil
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, examples
from crawler.store import fts
from normalize.text import drop_format

SEP, BREAK = fts.SEP, fts.BREAK
J = SEP + BREAK + SEP


@pytest.mark.parametrize("text, stored", [
    pytest.param("AI算子开发工程师", f"AI{J}算{SEP}子{SEP}开{SEP}发{SEP}工{SEP}程{SEP}师{J}", id="cjk-run-after-latin"),
    pytest.param("熟悉C/C++编程", f"{J}熟{SEP}悉{J}C/C++{J}编{SEP}程{J}", id="runs-around-latin"),
    pytest.param("京", f"{J}京{J}", id="lone-character"),
    pytest.param("ＣＵＤＡ高性能，Ｃ＋＋", f"CUDA{J}高{SEP}性{SEP}能{J}，C++", id="full-width-latin-narrowed-punctuation-kept"),
    pytest.param("データ分析", f"{J}デ{SEP}ー{SEP}タ{SEP}分{SEP}析{J}", id="kana-and-kanji"),
    pytest.param("plain English text", "plain English text", id="latin-unchanged"),
    pytest.param(f"a{BREAK}b{SEP}c\ue001d\ue002", "abcd", id="the-index-marks-removed"),
    pytest.param("", "", id="empty"),
    pytest.param(None, "", id="none"),
])
def test_index_text(text, stored):
    assert fts.index_text(text) == stored


@pytest.mark.parametrize("query, expression", [
    pytest.param("算子", '"算 子"', id="two-characters"),
    pytest.param("CUDA", '"CUDA"', id="english-word"),
    pytest.param("京", '"京"', id="one-character"),
    pytest.param("算子开发 CUDA", '"算 子 开 发" "CUDA"', id="two-terms-and"),
    pytest.param('"精通CUDA"', f'"精 通 {BREAK} CUDA"', id="phrase-run-then-latin"),
    pytest.param("cuda京", f'"cuda {BREAK} 京"', id="latin-then-run"),
    pytest.param("，算子。", '"算 子"', id="punctuation-around-a-run"),
    pytest.param("ＣＵＤＡ", '"CUDA"', id="full-width"),
    pytest.param("Tensor*", '"Tensor"*', id="prefix"),
    pytest.param("C/C++", '"C/C++"', id="tokenizer-splits-inside-the-phrase"),
    pytest.param('"unbalanced', '"unbalanced"', id="unbalanced-quote"),
    pytest.param('a"b', '"a" "b"', id="quote-inside"),
    pytest.param("。。", '""', id="punctuation-only"),
    pytest.param("", '""', id="empty"),
    pytest.param("CUDA -Java", '"CUDA" NOT "Java"', id="a-term-left-out"),
    pytest.param('算子 -"外包"', '"算 子" NOT "外 包"', id="a-phrase-left-out"),
    pytest.param("-Java", '""', id="exclusions-only-find-nothing"),
    pytest.param("C-V2X", '"C-V2X"', id="a-hyphen-inside-a-word"),
    pytest.param("Python - 北京", '"Python" "北 京"', id="a-dash-on-its-own"),
])
def test_fts_query(query, expression):
    assert fts.fts_query(query) == expression


@pytest.mark.parametrize("query, only", [
    pytest.param("-Java", True, id="one-left-out"),
    pytest.param('-"外包" -Java', True, id="several-left-out"),
    pytest.param("CUDA -Java", False, id="one-to-find"),
    pytest.param("", False, id="empty"),
    pytest.param("- 。", False, id="nothing-searchable"),
])
def test_only_exclusions(query, only):
    assert fts.only_exclusions(query) is only


@pytest.mark.parametrize("query, none", [
    pytest.param("", True, id="empty"), pytest.param("*", True, id="star"), pytest.param("- 。", True, id="punctuation"),
    pytest.param('""', True, id="empty-phrase"), pytest.param("-Java", False, id="one-left-out"),
    pytest.param("c++", False, id="a-word-and-signs"), pytest.param("算", False, id="one-chinese-character"),
])
def test_names_no_term(query, none):
    assert fts.names_no_term(query) is none


def _index(texts: list[str], column: str = "body") -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE {fts.TABLE} USING fts5({', '.join(fts.COLUMNS)}, tokenize=\"{fts.TOKENIZER}\")")
    fts.insert_rows(conn, [(i, *(t if c == column else None for c in ("title", "company", "city", "skills", "body")))
                           for i, t in enumerate(texts, 1)])
    return conn


DOCS = ["精通CUDA高性能编程，熟悉C/C++", "负责Google广告系统的Go语言开发", "FlashAttention and TensorRT-LLM on H100",
        "北京，上海", "算，子", "robust array code in Rust", "使用 PyTorch 与 vLLM 部署大模型"]


@pytest.mark.parametrize("query, found", [
    pytest.param("算子", [], id="cjk-pair-split-by-punctuation-is-not-a-word"),
    pytest.param("京上", [], id="no-match-across-a-comma"),
    pytest.param("北京", [4], id="two-characters"),
    pytest.param("京", [4], id="one-character"),
    pytest.param("高性能编程", [1], id="longer-term"),
    pytest.param("CUDA", [1], id="latin-inside-cjk-text"),
    pytest.param("cuda", [1], id="case-insensitive"),
    pytest.param("c++", [1], id="plus-signs-are-part-of-the-word"),
    pytest.param("C", [1], id="c-alone-not-inside-cuda"),
    pytest.param("Go", [2], id="go-a-word-not-inside-google"),
    pytest.param("Rust", [6], id="rust-not-inside-robust"),
    pytest.param("ray", [], id="ray-not-inside-array"),
    pytest.param("Attention", [], id="a-compound-of-the-body-is-one-word"),
    pytest.param("LLM", [3], id="a-word-after-a-hyphen-not-inside-vllm"),
    pytest.param("Tensor*", [3], id="prefix"),
    pytest.param("Tensor", [], id="no-part-of-the-body"),
    pytest.param("Tens", [], id="no-prefix-without-a-star"),
    pytest.param("精通CUDA", [1], id="run-then-latin"),
    pytest.param("Go语言", [2], id="latin-then-run"),
    pytest.param("部署 PyTorch", [7], id="two-terms"),
    pytest.param('"PyTorch 与 vLLM"', [7], id="quoted-phrase"),
    pytest.param('"vLLM 与 PyTorch"', [], id="quoted-phrase-in-order"),
    pytest.param("Go -Google", [], id="left-out-by-a-word"),
    pytest.param("京 -上海", [], id="left-out-by-a-cjk-term"),
    pytest.param("CUDA -Rust", [1], id="kept-without-the-word-left-out"),
    pytest.param("-Rust", [], id="exclusions-only"),
])
def test_what_a_query_finds(query, found):
    assert fts.search_ids(_index(DOCS), query) == found


@pytest.mark.parametrize("query, found", [
    pytest.param("Attention", [1], id="part-of-a-skill-name"),
    pytest.param("torch", [2], id="part-of-pytorch"),
    pytest.param("LLM", [1, 2], id="part-of-vllm-and-a-word"),
    pytest.param("Tensor", [1], id="part-of-tensorrt"),
    pytest.param("Infer", [3], id="part-of-the-title"),
    pytest.param("Flash", [1, 3], id="part-of-a-title-and-of-a-skill"),
    pytest.param("attention", [1], id="any-case"),
])
def test_parts_of_the_compound_names_of_title_and_skills(query, found):
    conn = _index([])
    fts.insert_rows(conn, [(1, "推理工程师", None, None, ["FlashAttention", "TensorRT-LLM"], "负责推理优化"),
                           (2, "训练工程师", None, None, "PyTorch; vLLM", "负责训练"),
                           (3, "FlashInfer 开发", None, None, [], "")])
    assert fts.search_ids(conn, query) == found


CJK = st.sampled_from(list("算子开发工程师北京上海模型训练推理优化性能大数据"))
TEXT = st.lists(st.one_of(CJK, st.sampled_from(list("ab ,。/、")), st.sampled_from(["CUDA", "C++", " Go "])),
                max_size=40).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(texts=st.lists(TEXT, min_size=1, max_size=5), data=st.data())
def test_cjk_substring_of_any_length_is_found_exactly(texts, data):
    """A CJK substring of a document finds exactly the documents that contain it."""
    runs = [run for t in texts for run in re.findall(f"[{fts._CJK}]+", t)]
    if not runs:
        return
    run = data.draw(st.sampled_from(runs))
    start = data.draw(st.integers(0, len(run) - 1))
    term = run[start : data.draw(st.integers(start + 1, min(len(run), start + 4)))]
    assert fts.search_ids(_index(texts), term) == [i for i, t in enumerate(texts, 1) if term in t]


@settings(max_examples=examples(300), deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",),
                                           exclude_characters=f"{SEP}{BREAK}\ue001\ue002"), max_size=200))
def test_stored_text_reads_as_written(text):
    narrowed = drop_format(text).translate(fts._NARROW)  # format characters (U+200B …) would split words
    assert fts.plain(fts.index_text(text)) == narrowed


def test_snippet_highlights_the_match_in_the_text_as_written():
    conn = _index(["本职位隶属于吉利汽车集团，负责大模型训练与推理场景下底层算子的设计、开发与极致性能优化"])
    start, end = fts.HIGHLIGHT
    [(snippet,)] = conn.execute(f"SELECT {fts.snippet_sql(tokens=12)} FROM {fts.TABLE} WHERE {fts.TABLE} MATCH ?",
                                (fts.fts_query("算子"),)).fetchall()
    assert snippet == f"…场景下底层{start}算子{end}的设计、…"  # 12 tokens, the break after 、 one of them


def test_compound_parts():
    assert fts.compound_parts("FlashAttention, vLLM", "TensorRT-LLM; PyTorch", None) == "Flash Attention v LLM Tensor RT Py Torch"
    assert fts.compound_parts("CUDA C++ Python 大模型") == ""
    assert fts.compound_parts("9ABc xYZ 外\u200b包DeepSpeed ＤｅｅｐＳｐｅｅｄ 中vLLM中") == "A Bc x YZ Deep Speed v LLM"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="aAbBzZ09 -_.;中\u200b+#ÄäßİıﬀＣ\x00\ud800", max_size=14))
def test_compound_parts_are_the_words_the_compound_pattern_finds(text):
    """The Latin runs split apart first: exactly the parts of what the pattern finds in the whole text."""
    words = fts._COMPOUND.findall(drop_format(text))
    assert fts.compound_parts(text) == " ".join(dict.fromkeys(p for w in words for p in fts._PART.findall(w)))


def test_delete_insert_and_set_skills(tmp_path):
    from crawler.store.schema import open_db

    conn = open_db(tmp_path / "jobs.db").conn
    with conn:
        conn.execute("INSERT INTO postings (id, key, description) VALUES (1, 'a', '负责交易系统后端服务的设计与开发，熟悉Kafka')")
        fts.rebuild(conn)
    with conn:
        fts.set_skills(conn, [(1, '["Kafka", "FlashAttention"]'), (99, '["Go"]')])
    assert fts.search_ids(conn, "Kafka") == [1]
    assert fts.search_ids(conn, "Attention") == [1]  # the part of a skill name
    with conn:
        fts.delete_rows(conn, [(1,)])
        conn.execute("UPDATE postings SET title = '后端工程师', company = '地平线', city = '北京', skills = '[\"Java\", \"Go\"]',"
                     " description = '负责支付系统' WHERE id = 1")
        fts.insert_rows(conn, [(1, "后端工程师", "地平线", "北京", "Java; Go", "负责支付系统")])
    assert (fts.search_ids(conn, "kafka"), fts.search_ids(conn, "支付"), fts.search_ids(conn, "北京")) == ([], [1], [1])
    assert fts.search_ids(conn, "Java Go 后端") == [1]
    assert fts.search_ids(conn, "。") == []
    conn.execute(f"INSERT INTO {fts.TABLE} ({fts.TABLE}, rank) VALUES ('integrity-check', 1)")


def test_search_ids_limit():
    conn = _index(["北京"] * 5)
    assert fts.search_ids(conn, "北京", limit=3) == [1, 2, 3]


OLD_DB = FIXTURES / "db" / "seeds_main_bd6b0cc.db.gz"


def test_migration_replaces_both_indexes_and_rebuilds_the_one(tmp_path):
    """A database the code before the single index made (both seeds ingested: trigram postings_fts,
    segmented postings_seg, their watermark) is migrated by open_db: one index, filled from the
    stored postings, which finds a city, a skill name, a two-character word and a compound's part."""
    from crawler.store.schema import open_db

    path = tmp_path / "old.db"
    with gzip.open(OLD_DB) as src, path.open("wb") as out:
        shutil.copyfileobj(src, out)
    db = open_db(path)
    conn = db.conn
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name LIKE 'postings_%'")}
    assert "postings_seg" not in names and "postings_fts" in names
    assert conn.execute("SELECT count(*) FROM meta WHERE key = 'search_index_versions'").fetchone() == (0,)
    assert conn.execute(f"SELECT count(*) FROM {fts.TABLE}").fetchone() == (2,)
    assert fts.search_ids(conn, "苏州") == [2]
    assert fts.search_ids(conn, "operator development") == [1, 2]
    assert fts.search_ids(conn, "算子") == [1, 2]
    assert fts.search_ids(conn, "Attention") == [1]
    assert fts.search_ids(conn, "DETR NPU") == [2]
    title, company, city = conn.execute(f"SELECT {', '.join(fts.PLAIN_SQL.format(c) for c in ('title', 'company', 'city'))}"
                                        f" FROM {fts.TABLE} WHERE rowid = 1").fetchone()
    assert (title, company, city) == ("AI算子开发工程师", "吉利汽车", "杭州")
    db.close()


def test_rebuild_indexes_what_the_writer_indexes(seeded_db, tmp_path):
    """The body rebuild() makes from the stored rows is the writer's (fts_body): the same index rows."""
    path = tmp_path / "jobs.db"
    shutil.copy(seeded_db, path)
    conn = sqlite3.connect(path)
    fts.register(conn)
    written = conn.execute(f"SELECT * FROM {fts.TABLE} ORDER BY rowid").fetchall()
    with conn:
        assert fts.rebuild(conn) == 2
    assert conn.execute(f"SELECT * FROM {fts.TABLE} ORDER BY rowid").fetchall() == written
    assert len(written) == 2 and all(row[4] for row in written)
