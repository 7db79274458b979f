"""Run a benchmark once per size, each size in a fresh Python process (so peak RSS is its own)."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable


def per_size(script: str, doc: str, one: Callable[[int, Path], dict], show: Callable[[dict], str],
             default: tuple[int, ...] = (10_000, 100_000)) -> list[dict]:
    """The command line of a size benchmark: ``--n N`` (repeatable) runs ``script --one N`` in a fresh
    process per size, which calls ``one(N, workdir)`` and prints its figures as JSON; each size's
    figures are printed with ``show``. Returns the figures (empty in the ``--one`` child)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, action="append", help=f"postings (repeatable); default {' and '.join(map(str, default))}")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        workdir = Path(tempfile.mkdtemp(prefix="jobcrawl-bench-"))
        try:
            print(json.dumps(one(args.one, workdir)))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return []
    results = []
    for n in args.n or default:
        out = subprocess.run([sys.executable, script, "--one", str(n)], capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.splitlines()[-1]))
        print(show(results[-1]), flush=True)
    return results
