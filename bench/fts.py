"""Benchmark: the full-text index — indexing CPU per posting and what each candidate finds.

The postings are the two seeds as ``jobcrawl ingest`` stores them (title, company, city, skill
names, the body the writer indexes: tags and JD bullets), repeated N times (default 4,000) under
new ids. Each candidate indexes them into a file database (WAL, 16 KB pages, as the writer's)
in transactions of 500 postings, and this prints its CPU milliseconds per posting (the text
preparation in Python included), the index's bytes per posting, and which of the search cases
(``CASES``) it answers right:

- ``one index (jobcrawl)``: crawler/store/fts.py — unicode61 over text whose CJK characters are
  tokens, with a break token after each run; one contentful table (snippet() works).
- ``trigram + bigram (before)``: the two indexes this replaces: a trigram table over the text
  and a contentless unicode61 table over the text with every CJK run split into overlapping
  bigrams in Python.
- ``bigram, one table``: the second of those alone, with its text stored (snippet() then shows
  the split text: 算子 子开 开发).
- ``trigram only``: no Python work, but a term under three characters finds nothing.
- An ICU tokenizer: not in this SQLite build (printed when absent).

    python bench/fts.py              # 4,000 postings
    python bench/fts.py --n 20000

Target (#24.5): indexing ≤ 0.3 ms CPU per posting of the seeds' length.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.store import fts  # noqa: E402

AS_OF = "2026-11-29T12:00:00+08:00"
_RUN = re.compile(f"[{fts._CJK}]+")

# (query, what it must find among the seeds: 1 = seed 000 吉利汽车 杭州, 2 = seed 003 初速度 苏州)
CASES = [
    ("算子", {1, 2}), ("北京", set()), ("杭州", {1}), ("量化", {1}), ("算子融合", {1}), ("CUDA", {1, 2}),
    ("c++", {1, 2}), ("Go", set()), ("Attention", {1}), ("Tensor*", {2}), ("operator development", {1, 2}),
    ("DETR NPU", {2}), ("苏州 PyTorch", {2}), ("子融", {1}), ("京", set()), ("合", {1, 2}), ("训练", {1, 2}), ("检测", set()),
]


def _seed_rows(workdir: Path) -> list[tuple]:
    """The seeds' index rows as the writer makes them: (title, company, city, skills, body)."""
    db = workdir / "seeds.db"
    subprocess.run([sys.executable, "-m", "crawler.cli", "ingest", str(ROOT / "seeds"), "--db", str(db), "--as-of", AS_OF],
                   cwd=ROOT, check=True, capture_output=True)
    conn = sqlite3.connect(db)
    rows = []
    for pid, title, company, city, skills, tags, description in conn.execute(
            "SELECT id, title, company, city, skills, tags, description FROM postings ORDER BY id"):
        bullets = [r[0] for r in conn.execute("SELECT text FROM sections WHERE posting_id = ? ORDER BY seq", (pid,))]
        body = "\n".join(p for p in [" ".join(json.loads(tags or "[]")), *(bullets or [description or ""])] if p)
        rows.append((title, company, city, json.loads(skills or "[]"), body))
    return rows


def _bigrams(text: str | None) -> str:
    """The replaced index's text: every CJK run as its overlapping bigrams plus its last character."""
    if not text:
        return ""
    return _RUN.sub(lambda m: " " + " ".join(a + b for a, b in zip(m.group(), m.group()[1:])) + " " + m.group()[-1] + " ",
                    text)


def _bigram_query(query: str) -> str:
    phrases = []
    for term in query.split():
        star = term.endswith("*")
        term = term.rstrip("*")
        tokens = []
        for piece in re.split(f"([{fts._CJK}]+)", term):
            if _RUN.fullmatch(piece or " "):
                tokens += [a + b for a, b in zip(piece, piece[1:])] or [piece]
            elif piece:
                tokens.append(piece)
        lone = len(term) == 1 and _RUN.fullmatch(term)
        phrases.append('"' + " ".join(tokens) + '"' + ("*" if star or lone else ""))
    return " AND ".join(phrases)


def _trigram_query(query: str) -> str:
    return " AND ".join('"' + t.rstrip("*") + '"' for t in query.split())


Candidate = tuple[list[str], Callable[[sqlite3.Connection, list[tuple]], None], Callable[[sqlite3.Connection, str], set[int]]]


def _search(table: str, expression: Callable[[str], str]):
    def run(conn: sqlite3.Connection, query: str) -> set[int]:
        try:
            return {r[0] for r in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (expression(query),))}
        except sqlite3.OperationalError:
            return set()
    return run


def _skills(row: tuple) -> str:
    return "; ".join(row[4])


CANDIDATES: dict[str, Candidate] = {
    "one index (jobcrawl)": (
        [f"CREATE VIRTUAL TABLE {fts.TABLE} USING fts5({', '.join(fts.COLUMNS)}, tokenize=\"{fts.TOKENIZER}\")"],
        lambda conn, rows: fts.insert_rows(conn, rows),
        lambda conn, query: set(fts.search_ids(conn, query)),
    ),
    "trigram + bigram (before)": (
        ["CREATE VIRTUAL TABLE tri USING fts5(title, company, city, skills, body, tokenize='trigram')",
         "CREATE VIRTUAL TABLE seg USING fts5(title, company, city, skills, body, content='', "
         "tokenize=\"unicode61 tokenchars '+#'\")"],
        lambda conn, rows: (
            conn.executemany("INSERT INTO tri (rowid, title, company, city, skills, body) VALUES (?,?,?,?,?,?)",
                             [(r[0], r[1], r[2], r[3], _skills(r), r[5]) for r in rows]),
            conn.executemany("INSERT INTO seg (rowid, title, company, city, skills, body) VALUES (?,?,?,?,?,?)",
                             [(r[0], *map(_bigrams, (r[1], r[2], r[3], _skills(r), r[5]))) for r in rows])),
        lambda conn, query: (_search("seg", _bigram_query)(conn, query) if _RUN.search(query) or len(query) < 3
                             else _search("tri", _trigram_query)(conn, query)),
    ),
    "bigram, one table": (
        ["CREATE VIRTUAL TABLE seg USING fts5(title, company, city, skills, body, tokenize=\"unicode61 tokenchars '+#'\")"],
        lambda conn, rows: conn.executemany(
            "INSERT INTO seg (rowid, title, company, city, skills, body) VALUES (?,?,?,?,?,?)",
            [(r[0], *map(_bigrams, (r[1], r[2], r[3], _skills(r), r[5]))) for r in rows]),
        _search("seg", _bigram_query),
    ),
    "trigram only": (
        ["CREATE VIRTUAL TABLE tri USING fts5(title, company, city, skills, body, tokenize='trigram')"],
        lambda conn, rows: conn.executemany(
            "INSERT INTO tri (rowid, title, company, city, skills, body) VALUES (?,?,?,?,?,?)",
            [(r[0], r[1], r[2], r[3], _skills(r), r[5]) for r in rows]),
        _search("tri", _trigram_query),
    ),
}


def measure(name: str, candidate: Candidate, rows: list[tuple], workdir: Path, *, batch: int = 500,
            repeats: int = 3) -> dict:
    """Index ``rows`` ``repeats`` times, each into a new file: CPU ms per posting of each pass, bytes
    per posting, and (query, answered right) per search case."""
    ddl, insert, search = candidate
    passes = []
    for attempt in range(repeats):
        path = workdir / f"{re.sub(r'[^a-z]+', '-', name)}-{attempt}.db"
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA page_size = 16384")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        for statement in ddl:
            conn.execute(statement)
        start = time.process_time()
        for i in range(0, len(rows), batch):
            with conn:
                insert(conn, rows[i : i + batch])
        passes.append((time.process_time() - start) * 1000 / len(rows))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = path.stat().st_size
        # posting i is a copy of seed (i - 1) % 2 + 1
        right = [(query, search(conn, query) == {r[0] for r in rows if (r[0] - 1) % 2 + 1 in found})
                 for query, found in CASES]
        conn.close()
        path.unlink()
    return {"ms": passes, "bytes": size / len(rows), "right": right}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=4000, help="postings to index (the two seeds, repeated)")
    parser.add_argument("--repeats", type=int, default=3, help="passes per candidate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        seeds = _seed_rows(workdir)
        lengths = [sum(len(v) if isinstance(v, str) else len("; ".join(v)) for v in row if v) for row in seeds]
        rows = [(i + 1, *seeds[i % len(seeds)]) for i in range(args.n)]
        print(f"{args.n:,} postings: the 2 seeds ({', '.join(map(str, lengths))} characters indexed) repeated;"
              f" {len(CASES)} search cases on the seeds")
        probe = sqlite3.connect(":memory:")
        try:
            probe.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='icu')")
        except sqlite3.OperationalError as error:
            print(f"ICU tokenizer: not available in this SQLite build ({error})")
        print(f"\nCPU ms per posting: best and median of {args.repeats} passes (text preparation in Python included)")
        print(f"{'candidate':28} {'best':>6} {'median':>7} {'KB/posting':>11} {'cases right':>12}  wrong")
        for name, candidate in CANDIDATES.items():
            m = measure(name, candidate, rows, workdir, repeats=args.repeats)
            wrong = [query for query, ok in m["right"] if not ok]
            best, median = min(m["ms"]), statistics.median(m["ms"])
            flag = "" if name != "one index (jobcrawl)" or best <= 0.3 else "  > 0.3 ms target"
            print(f"{name:28} {best:6.3f} {median:7.3f} {m['bytes'] / 1024:11.1f} {len(CASES) - len(wrong):8}/{len(CASES)}"
                  f"  {', '.join(wrong)}{flag}")
        print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
