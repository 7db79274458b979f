"""Benchmark: what the database stores per posting — bytes and rows per table and index, against the input.

Each input is ingested with the real ``jobcrawl ingest`` into a fresh database in a temporary folder, the WAL is
checkpointed (``PRAGMA wal_checkpoint(TRUNCATE)``) and the database measured:

- the empty database first: the schema and the skills taxonomy as a run prepares them, its bytes and objects
  (and the bytes ``jobcrawl ingest`` of a header-only CSV leaves); every other figure is taken beyond it;
- ``seeds``: the two seed files of seeds/ in one ingest;
- ``mixed`` and ``seeds-kind``: N generated postings in the app's dump layout (bench/gen.py, as bench/ingest.py);
- every posting file of ../shared/data/zh (bench/shared.py; a line says so when the folder is absent).

Per input it prints the input's bytes, the database's bytes, the bytes beyond the empty database and their ratio
to the input, the postings stored, the ingest's CPU per posting, the rows written per posting by table (beyond the
empty database's), and, from SQLite's ``dbstat`` table, the bytes per posting of each table and index: the bytes
its pages use (page size minus unused bytes) beyond the empty database's, so that a 2-posting input is not
rounded to 16 KB pages; then the columns holding most of each table's bytes (a value's stored size: text and
blobs by their bytes, numbers by SQLite's record sizes, approximately).

    python bench/storage.py                        # everything, N = 2,000
    python bench/storage.py --n 10000 --only mixed
    python bench/storage.py --only seeds --json    # machine-readable
    python bench/storage.py --keep /tmp/dbs        # keep the databases (to look into them)

Targets (issue 39): database ≤ 3 × the input on the app-dump layout; on ../shared/data/zh, bytes beyond the empty
database ≤ 4 × the input on the full-JD files, ≤ 5 × on the list-card files; the empty database ≤ 0.5 MB.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.ingest import AS_OF, generate  # noqa: E402
from bench.shared import OPTIONS, SHARED_ZH, shared_files  # noqa: E402
from bench.sizes import run_measured  # noqa: E402

SEED_FILES = sorted((ROOT / "seeds").glob("*.txt"))
TARGETS = {"mixed": ("database", 3.0), "seeds-kind": ("database", 3.0),
           "boss_horti_295_with_jd.csv": ("beyond", 4.0), "lagou_horti_63_with_jd.csv": ("beyond", 4.0),
           "boss_list_python_bj.csv": ("beyond", 5.0), "lagou_list_data_analyst.csv": ("beyond", 5.0)}
"""Input → (which bytes, the most × the input issue 39 allows)."""
EMPTY_TARGET = 500_000
COLUMN_FLOOR = 20
"""Columns holding fewer bytes a posting than this are not listed."""


def ingest(paths: list[Path], db: Path, options: list[str] = ()) -> dict:
    """``jobcrawl ingest`` of ``paths`` into ``db`` (exit 0 or 1: something quarantined is fine here)."""
    run = run_measured([sys.executable, "-m", "crawler.cli", "ingest", *map(str, paths), "--db", str(db),
                        "--as-of", AS_OF, "-q", *options], cwd=ROOT)
    if run["returncode"] not in (0, 1):
        raise SystemExit(f"jobcrawl ingest {' '.join(p.name for p in paths)} failed:\n{run['stderr']}")
    return run


def _value_bytes(column: str) -> str:
    quoted = '"' + column.replace('"', '""') + '"'
    return (f"CASE typeof({quoted}) WHEN 'text' THEN length(CAST({quoted} AS BLOB)) WHEN 'blob' THEN length({quoted})"
            f" WHEN 'real' THEN 8 WHEN 'integer' THEN CASE WHEN abs({quoted}) < 128 THEN 1"
            f" WHEN abs({quoted}) < 32768 THEN 2 WHEN abs({quoted}) < 2147483648 THEN 4 ELSE 8 END ELSE 0 END")


def measure(db: Path) -> dict:
    """The database's bytes, pages, objects (schema entries by type), rows per table, and per b-tree (``dbstat``)
    its type, table, pages' bytes and used bytes; per table the stored bytes of each column."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        out = {"bytes": db.stat().st_size, "page_size": page_size,
               "pages": conn.execute("PRAGMA page_count").fetchone()[0],
               "free_pages": conn.execute("PRAGMA freelist_count").fetchone()[0], "objects": {}, "rows": {},
               "btrees": {}, "columns": {}}
        schema = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
        for kind, *_ in schema:
            out["objects"][kind] = out["objects"].get(kind, 0) + 1
        owner = {name: (kind, table) for kind, name, table, _ in schema}
        tables = [name for kind, name, _, sql in schema
                  if kind == "table" and not (sql or "").upper().startswith("CREATE VIRTUAL")]
        for name in tables:
            out["rows"][name] = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")')]
            if out["rows"][name] and columns:
                sums = conn.execute(f'SELECT {", ".join(f"sum({_value_bytes(c)})" for c in columns)} FROM "{name}"')
                out["columns"][name] = dict(zip(columns, (s or 0 for s in sums.fetchone())))
        try:
            stats = conn.execute("SELECT name, count(*), sum(pgsize), sum(pgsize - unused) FROM dbstat GROUP BY name")
        except sqlite3.OperationalError:
            out["dbstat"] = False
            return out
        out["dbstat"] = True
        for name, pages, size, used in stats:
            kind, table = owner.get(name, ("table" if name == "sqlite_schema" else "index", name))
            out["btrees"][name] = {"type": kind, "table": table, "pages": pages, "bytes": size, "used": used}
        return out
    finally:
        conn.close()


def beyond(m: dict, empty: dict, postings: int) -> dict:
    """What ``m`` holds beyond ``empty``: rows per posting by table, bytes per posting by b-tree (used and
    pages' bytes) and by column."""
    n = max(postings, 1)
    rows = {t: (c - empty["rows"].get(t, 0)) / n for t, c in m["rows"].items() if c != empty["rows"].get(t, 0)}
    zero = {"used": 0, "bytes": 0}
    btrees = {name: {"type": b["type"], "table": b["table"],
                     "used": (b["used"] - empty["btrees"].get(name, zero)["used"]) / n,
                     "bytes": (b["bytes"] - empty["btrees"].get(name, zero)["bytes"]) / n}
              for name, b in m["btrees"].items()}
    columns = {t: {c: (s - empty["columns"].get(t, {}).get(c, 0)) / n for c, s in cols.items()}
               for t, cols in m["columns"].items()}
    return {"rows": dict(sorted(rows.items(), key=lambda kv: -kv[1])),
            "btrees": dict(sorted(((k, v) for k, v in btrees.items() if v["used"] or v["bytes"]),
                                  key=lambda kv: -kv[1]["used"])),
            "columns": {t: dict(sorted(((c, s) for c, s in cols.items() if s), key=lambda kv: -kv[1]))
                        for t, cols in columns.items()}}


def one(name: str, paths: list[Path], options: list[str], empty: dict, work: Path) -> dict:
    db = work / f"{name}.db"
    run = ingest(paths, db, options)
    m = measure(db)
    postings = m["rows"].get("postings", 0)
    input_bytes = sum(p.stat().st_size for path in paths for p in ([path] if path.is_file() else path.iterdir()))
    out = {"input": name, "input_bytes": input_bytes, "postings": postings, "database_bytes": m["bytes"],
           "pages": m["pages"], "page_size": m["page_size"],
           "beyond_empty_bytes": m["bytes"] - empty["bytes"], "free_pages": m["free_pages"],
           "cpu_ms_per_posting": round(1000 * run["cpu_seconds"] / max(postings, 1), 2), "dbstat": m["dbstat"]}
    out["database_ratio"] = round(m["bytes"] / input_bytes, 2)
    out["beyond_ratio"] = round(out["beyond_empty_bytes"] / input_bytes, 2)
    used_beyond = sum(b["used"] for b in m["btrees"].values()) - sum(b["used"] for b in empty["btrees"].values())
    out["used_beyond_ratio"] = round(used_beyond / input_bytes, 2)
    out.update(per_posting=beyond(m, empty, postings))
    if name in TARGETS:
        which, most = TARGETS[name]
        out["target"] = {"bytes": which, "at_most": most,
                         "ratio": out["database_ratio" if which == "database" else "beyond_ratio"]}
    return out


def empty_database(work: Path) -> dict:
    """The database before any input: the schema (``open_db``) and the skills taxonomy, as a run prepares it
    (``crawler.store.skills.prepare``). Its rows are what no input wrote."""
    from crawler.store import skills
    from crawler.store.schema import open_db
    from crawler.files import read_taxonomy

    db = open_db(work / "empty.db")
    skills.prepare(db, read_taxonomy(None))
    db.close()
    return measure(work / "empty.db")


def empty_ingest(work: Path) -> int:
    """Bytes of the database ``jobcrawl ingest`` of a header-only CSV leaves (no posting; one run, one input)."""
    blank = work / "empty.csv"
    blank.write_text("title,company\n", encoding="utf-8")
    ingest([blank], work / "empty-ingest.db")
    return measure(work / "empty-ingest.db")["bytes"]


def inputs(args, work: Path) -> list[tuple[str, list[Path], list[str]]]:
    """(name, paths, ingest options) of every input asked for."""
    out = []
    if "seeds" in args.only:
        out.append(("seeds", SEED_FILES, []))
    for kind in ("mixed", "seeds-kind"):
        if kind in args.only:
            folder = work / f"in-{kind}"
            generate(folder, args.n, args.per_file, "mixed" if kind == "mixed" else "seeds")
            out.append((kind, [folder], []))
    if "shared" in args.only:
        files = shared_files()
        if not files:
            print(f"shared: {SHARED_ZH} is absent: its files are skipped", flush=True,
                  file=sys.stderr if args.json else sys.stdout)
        out.extend((path.name, [path], OPTIONS.get(path.name, [])) for path in files)
    return out


def _kb(b: float) -> str:
    return f"{b / 1000:,.1f} KB" if abs(b) >= 1000 else f"{b:,.0f} B"


def show_empty(e: dict, ingested: int) -> str:
    objects = " · ".join(f"{n} {k}{'es' if k == 'index' else 's'}"
                         for k, n in sorted(e["objects"].items(), key=lambda kv: -kv[1]))
    line = (f"empty database (schema and skills taxonomy): {e['bytes']:,} bytes = {e['pages']} pages of "
            f"{e['page_size'] // 1024} KB · {objects} · {len(e['btrees'])} b-trees; after an ingest of a header-only "
            f"CSV {ingested:,} bytes")
    if not e["dbstat"]:
        return line + "\n  (this SQLite has no dbstat table: sizes per table and index are not available)"
    big = sorted(e["btrees"].items(), key=lambda kv: -kv[1]["bytes"])
    multi = [f"{n} {b['pages']} pages" for n, b in big if b["pages"] > 1]
    one_page = sum(1 for b in e["btrees"].values() if b["pages"] == 1)
    return line + f"\n  b-trees of more than one page: {' · '.join(multi)}; {one_page} b-trees of one page"


def show(r: dict, top: int) -> str:
    lines = [f"{r['input']}: {r['postings']:,} postings · input {r['input_bytes']:,} B · database "
             f"{r['database_bytes']:,} B = {r['database_ratio']:.2f} × input · beyond the empty database "
             f"{r['beyond_empty_bytes']:,} B = {r['beyond_ratio']:.2f} × (pages in use: {r['used_beyond_ratio']:.2f} ×)"
             f" · free pages {r['free_pages']} · ingest CPU {r['cpu_ms_per_posting']:.2f} ms/posting"]
    if "target" in r:
        t = r["target"]
        ok = "met" if t["ratio"] <= t["at_most"] else "NOT met"
        lines.append(f"  target: {t['bytes']} bytes ≤ {t['at_most']:g} × input: {t['ratio']:.2f} × — {ok}")
    p = r["per_posting"]
    rows = " · ".join(f"{t} {round(c, 2):g}" for t, c in p["rows"].items())
    lines.append(f"  rows per posting ({round(sum(p['rows'].values()), 1):g} in all): {rows}")
    if not r["dbstat"]:
        lines.append(f"  (this SQLite has no dbstat table: bytes per table and index left out; PRAGMA page_count "
                     f"{r['pages']:,} pages of {r['page_size']:,} B)")
        return "\n".join(lines)
    total = sum(b["used"] for b in p["btrees"].values()) or 1
    lines.append(f"  bytes per posting by table and index (used bytes of its pages, beyond the empty database; "
                 f"pages' bytes): {_kb(total)} in all")
    for name, b in list(p["btrees"].items())[:top]:
        of = f" ({b['table']})" if b["type"] == "index" else ""
        lines.append(f"    {name + of:<58} {b['type']:<5} {_kb(b['used']):>10} {100 * b['used'] / total:5.1f} %"
                     f"   pages {_kb(b['bytes']):>10}")
    for table in [b["table"] for b in list(p["btrees"].values())[:top] if b["type"] == "table"]:
        cols = [(c, s) for c, s in p["columns"].get(table, {}).items() if s >= COLUMN_FLOOR]
        if cols:
            lines.append(f"    columns of {table}: " + " · ".join(f"{c} {_kb(s)}" for c, s in cols))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="generated postings (default 2,000)")
    parser.add_argument("--per-file", type=int, default=100, help="generated postings per dump file (default 100)")
    parser.add_argument("--only", action="append", choices=["seeds", "mixed", "seeds-kind", "shared"],
                        help="inputs to measure (repeatable; default all)")
    parser.add_argument("--top", type=int, default=15, help="tables and indexes listed per input (default 15)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="make the databases in DIR (new or empty) and keep them")
    args = parser.parse_args()
    args.only = args.only or ["seeds", "mixed", "seeds-kind", "shared"]
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        raise SystemExit(f"--keep {args.keep}: the folder is not empty")
    with tempfile.TemporaryDirectory(prefix="jobcrawl-storage-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        empty = empty_database(work)
        report = {"empty": {k: empty[k] for k in ("bytes", "page_size", "pages", "objects", "dbstat")}
                  | {"btrees": len(empty["btrees"]), "target_bytes": EMPTY_TARGET,
                     "empty_ingest_bytes": empty_ingest(work)}, "inputs": []}
        if not args.json:
            print(show_empty(empty, report["empty"]["empty_ingest_bytes"]), flush=True)
            met = "met" if empty["bytes"] <= EMPTY_TARGET else "NOT met"
            print(f"  target: ≤ {EMPTY_TARGET / 1e6:g} MB — {met}\n", flush=True)
        for name, paths, options in inputs(args, work):
            r = one(name, paths, options, empty, work)
            report["inputs"].append(r)
            if not args.json:
                print(show(r, args.top) + "\n", flush=True)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))


if __name__ == "__main__":
    main()
