"""Do two versions of jobcrawl store the same postings? Ingest seeds/ and every posting file of ../shared/data/zh
with the code of a git revision and with the working tree, export each database (JSON lines and JSON) and the
text its search index reads (``postings_fts_source``), and compare them byte for byte.

    python bench/same_exports.py 48137de            # the revision to compare the working tree with
    python bench/same_exports.py HEAD~3 --keep /tmp/same

Prints one line per input and output: ``same`` or ``DIFFERS`` with the first differing line. Exit status 1 when
anything differs. The revision's code is checked out with ``git worktree add --detach`` into a temporary folder.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.shared import AS_OF, OPTIONS, shared_files  # noqa: E402

FTS_SOURCE = ("import sqlite3, sys; from crawler.store import fts; c = sqlite3.connect(sys.argv[1]); fts.register(c);"
              " [print(r) for r in c.execute('SELECT * FROM postings_fts_source ORDER BY id')]")


def outputs(tree: Path, out: Path) -> dict[str, Path]:
    """Ingest every input with the code of ``tree`` into ``out``; return output name → file."""
    out.mkdir(parents=True, exist_ok=True)
    made = {}
    inputs = [(ROOT / "seeds", [])] + [(p, OPTIONS.get(p.name, [])) for p in shared_files()]
    for path, options in inputs:
        db = out / f"{path.name}.db"
        run = dict(cwd=tree, check=True, capture_output=True)
        subprocess.run([sys.executable, "-m", "crawler.cli", "ingest", str(path), "--db", str(db), "--as-of", AS_OF,
                        "-q", *options], **run)
        for fmt in ("jsonl", "json"):
            made[f"{path.name}.{fmt}"] = out / f"{path.name}.{fmt}"
            made[f"{path.name}.{fmt}"].write_bytes(subprocess.run(
                [sys.executable, "-m", "crawler.cli", "export", "--db", str(db), "--format", fmt], **run).stdout)
        made[f"{path.name}.fts"] = out / f"{path.name}.fts"
        made[f"{path.name}.fts"].write_bytes(subprocess.run([sys.executable, "-c", FTS_SOURCE, str(db)], **run).stdout)
    return made


def first_difference(a: Path, b: Path) -> str | None:
    left, right = a.read_bytes().splitlines(), b.read_bytes().splitlines()
    for n, (x, y) in enumerate(zip(left, right), 1):
        if x != y:
            return f"line {n}: {x[:120]!r} / {y[:120]!r}"
    return None if len(left) == len(right) else f"{len(left)} lines / {len(right)} lines"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev", help="git revision to compare the working tree with")
    parser.add_argument("--keep", type=Path, help="keep the databases and outputs in this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="same-exports-") as tmp:
        work = args.keep or Path(tmp)
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.rev], cwd=ROOT, check=True)
        try:
            old = outputs(base, work / "old")
            new = outputs(ROOT, work / "new")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=ROOT, check=False)
        differs = 0
        for name, path in old.items():
            diff = first_difference(path, new[name])
            differs += diff is not None
            print(f"{name:48} {'same' if diff is None else 'DIFFERS ' + diff} ({path.stat().st_size:,} B)")
        print(f"{len(old) - differs} of {len(old)} outputs the same as {args.rev}'s")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
