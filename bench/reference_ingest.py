"""The reference the ingest benchmark compares with: the plainest loop doing the same reading and writing.

Reads every dump file of a folder, parses it with the project's own ``parse_dump``, and stores each raw
posting's fields in a ``postings`` table of the same columns (a database made by ``open_db``: same schema,
same full-text index) with one ``executemany``, then fills the same full-text index with title, company and
the JD lines. No normalizing, tagging, deduplication or scoring: what is left of jobcrawl's cost above this
is the price of what it adds.

    python bench/reference_ingest.py FOLDER DB
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.store import fts  # noqa: E402
from crawler.store.rows import POSTING_COLS, STORED_AS  # noqa: E402
from crawler.store.schema import open_db  # noqa: E402
from crawler.ingest.appdump import parse_dump  # noqa: E402
from normalize.models import RawPosting  # noqa: E402

AS_OF = "2026-11-29T04:00:00+00:00"
# Raw fields stored under the postings column of their normalized twin.
COLUMN_OF = {"location": "location_raw", "posted": "posted_raw", "salary": "salary_raw", "published": "published_label",
             "company_info": "company_info_raw"}


def main(folder: Path, db_path: Path) -> int:
    db = open_db(db_path)
    index = {c: i for i, c in enumerate(POSTING_COLS)}
    fields = [(name, index[COLUMN_OF.get(name, name)]) for name, info in RawPosting.model_fields.items()
              if COLUMN_OF.get(name, name) in index and info.annotation in (str, str | None, int)]
    rows, search = [], []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        for item in parse_dump(path.read_bytes(), locator=path.name, fetched_at=AS_OF, as_of=AS_OF):
            if not isinstance(item, RawPosting):
                continue
            row = [None] * len(POSTING_COLS)
            for name, i in fields:
                row[i] = getattr(item, name)
            row[index["key"]] = item.source_id
            row[index["first_seen"]] = row[index["last_seen"]] = AS_OF
            rows.append(row)
            body = "\n".join(line for section in item.sections for line in section.lines)
            search.append((len(rows), item.title, item.company, item.location, None, body))
    with db.conn:
        db.conn.executemany(f"INSERT INTO postings (id, {', '.join(STORED_AS.get(c, c) for c in POSTING_COLS)}) VALUES (?, {', '.join('?' * len(POSTING_COLS))})",
                            [(i + 1, *row) for i, row in enumerate(rows)])
        fts.insert_rows(db.conn, search)
    db.close()
    print(len(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2])))
