"""The floor issue #39 measures an ingest against: the plainest loop that stores and indexes the same dumps.

In one process: read each file, split it into pages on the dump's separator line, take company and title from
each page's first two lines, one ``executemany`` of (company, title, page text) into a table, and an FTS5
``trigram`` index over the page text (external content: the text is not stored twice) filled in the same
transaction. No parsing. Prints the pages stored.

    python bench/plain_loop.py FOLDER DB
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.gen import FOOTER  # noqa: E402

SEPARATOR = f"\n{FOOTER}\n"


def pages_of(text: str) -> list[tuple[str, str, str]]:
    """(company, title, page text) of every non-blank page of one dump."""
    rows = []
    for page in text.split(SEPARATOR):
        page = page.strip("\n")
        if page:
            company, _, rest = page.partition("\n")
            rows.append((company, rest.partition("\n")[0], page))
    return rows


def main(folder: Path, db_path: Path) -> int:
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript("""
        CREATE TABLE pages (id INTEGER PRIMARY KEY, company TEXT, title TEXT, text TEXT);
        CREATE VIRTUAL TABLE pages_fts USING fts5(text, content='pages', content_rowid='id', tokenize='trigram');
    """)
    rows = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rows.extend(pages_of(path.read_bytes().decode("utf-8")))
    with conn:
        conn.executemany("INSERT INTO pages (company, title, text) VALUES (?, ?, ?)", rows)
        conn.execute("INSERT INTO pages_fts (rowid, text) SELECT id, text FROM pages")
    conn.close()
    print(len(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2])))
