"""Section splitting throughput: ``split_sections`` over real free-text JDs, µs per JD.

The JDs are the 职位描述 column of ../shared/data/zh/boss_horti_295_with_jd.csv and the texts of
zhilian51job_jd_text_program_362.txt (one JD a line) when ../shared/data exists, else the 60 committed excerpts in
fixtures/jd_examples/zhilian_sample.tsv (said in the output). Prints the mean length, µs per JD for
the whole split (best of --passes passes) and for the list-marker scan alone (``_MARK`` over each
JD), the part the scan's first-character lookahead speeds up.

    .venv/bin/python bench/sections.py [--passes 7]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from normalize import sections  # noqa: E402

SHARED_ZH = ROOT.parent / "shared" / "data" / "zh"


def jds() -> tuple[str, list[str]]:
    """(where the JDs come from, the JD texts)."""
    boss, zhilian = SHARED_ZH / "boss_horti_295_with_jd.csv", SHARED_ZH / "zhilian51job_jd_text_program_362.txt"
    if boss.exists() and zhilian.exists():
        with boss.open(encoding="utf-8", newline="") as fh:
            texts = [row["职位描述"] for row in csv.DictReader(fh)]
        texts += [t for t in zhilian.read_text(encoding="utf-8").splitlines() if t.strip()]  # one JD a line
        return f"{SHARED_ZH} (boss_horti 职位描述, zhilian texts)", texts
    rows = (ROOT / "fixtures" / "jd_examples" / "zhilian_sample.tsv").read_text(encoding="utf-8").split("\n")[1:]
    return "fixtures/jd_examples/zhilian_sample.tsv (../shared/data absent)", [r.split("\t", 1)[1] for r in rows if r]


def best_us(texts: list[str], work: Callable[[str], object], passes: int) -> float:
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for text in texts:
            work(text)
        best = min(best, time.perf_counter() - start)
    return best / len(texts) * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=7, help="passes over the JDs; the best counts")
    args = parser.parse_args(argv)
    origin, texts = jds()
    folded = [sections._fold1(text) for text in texts]
    print(f"{len(texts)} JDs from {origin}, mean {sum(map(len, texts)) / len(texts):,.0f} chars")
    print(f"split_sections: {best_us(texts, sections.split_sections, args.passes):.1f} µs per JD")
    print(f"list-marker scan alone: {best_us(folded, lambda f: list(sections._MARK.finditer(f)), args.passes):.1f} µs per JD")
    return 0


if __name__ == "__main__":
    sys.exit(main())
