"""Skill tagging throughput on 5,000-character postings with the full taxonomy, one core.

Postings are built from the seeds' JD sections and the zhilian JD texts (the committed copies in
fixtures/skills_eval/zhilian.toml, plus ../shared/data/zh/zhilian51job_jd_text_program_362.txt when it
exists), lines dealt round-robin into about/requirements/responsibilities/preferred until a posting
holds 5,000 characters. Prints taxonomy build time, postings/s, MB/s, hits per posting, peak RSS, and
for scale a naive loop of `alias in text` checks on a sample.

    .venv/bin/python bench/skills.py [--postings 2000] [--chars 5000]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from normalize.skills import Taxonomy  # noqa: E402
from normalize.text import fold  # noqa: E402

TAXONOMY = ROOT / "normalize" / "data" / "skills.toml"
ZHILIAN = ROOT.parent / "shared" / "data" / "zh" / "zhilian51job_jd_text_program_362.txt"
SECTION_KEYS = ("about", "requirements", "responsibilities", "preferred")
SEED_SECTIONS = {"关于这个职位", "最低要求", "工作职责", "优先资格"}


def seed_lines() -> list[str]:
    """JD lines of the seeds: those under 关于这个职位 / 最低要求 / 工作职责 / 优先资格."""
    out = []
    for path in sorted((ROOT / "seeds").glob("*.txt")):
        inside = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line in SEED_SECTIONS:
                inside = True
            elif line == "AI 洞察":
                inside = False
            elif inside and line.strip():
                out.append(line)
    return out


def source_lines() -> list[str]:
    lines = seed_lines()
    doc = tomllib.loads((ROOT / "fixtures" / "skills_eval" / "zhilian.toml").read_text(encoding="utf-8"))
    lines += [jd["sections"]["about"] for jd in doc["jd"]]
    if ZHILIAN.is_file():
        lines += [l for l in ZHILIAN.read_text(encoding="utf-8").split("\n") if l.strip()]
    return lines


def build_postings(n: int, chars: int) -> list[dict[str, list[str]]]:
    """``n`` postings of at least ``chars`` characters, drawn round-robin from the source lines."""
    lines = source_lines()
    postings, i = [], 0
    for _ in range(n):
        sections: dict[str, list[str]] = {k: [] for k in SECTION_KEYS}
        size = 0
        while size < chars:
            line = lines[i % len(lines)]
            sections[SECTION_KEYS[i % len(SECTION_KEYS)]].append(line)
            size += len(line) + 1
            i += 1
        postings.append(sections)
    return postings


def naive(taxonomy: Taxonomy, postings: list[dict[str, list[str]]]) -> float:
    """Postings/s of the approach the issue warns against: one `in` check per alias."""
    aliases = list(taxonomy._aliases)  # the folded aliases the automaton holds
    start = time.perf_counter()
    for sections in postings:
        text = fold("\n".join(line for lines in sections.values() for line in lines))
        sum(1 for alias in aliases if alias in text)
    return len(postings) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postings", type=int, default=2000)
    parser.add_argument("--chars", type=int, default=5000)
    args = parser.parse_args(argv)

    data = TAXONOMY.read_bytes()
    builds = []
    for _ in range(5):
        start = time.perf_counter()
        taxonomy = Taxonomy(data)
        builds.append(time.perf_counter() - start)
    aliases = len(taxonomy._aliases)

    postings = build_postings(args.postings, args.chars)
    total_chars = sum(len(l) + 1 for p in postings for lines in p.values() for l in lines)
    total_bytes = sum(len(l.encode()) + 1 for p in postings for lines in p.values() for l in lines)
    taxonomy.tag(postings[0])  # warm up
    start = time.perf_counter()
    hits = 0
    for sections in postings:
        hits += len(taxonomy.tag(sections))
    elapsed = time.perf_counter() - start
    naive_rate = naive(taxonomy, postings[:100])
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"taxonomy: {len(taxonomy.skills)} skills, {aliases} folded aliases (with variants)")
    print(f"build (parse + automaton): median {statistics.median(builds) * 1000:.1f} ms of 5")
    print(f"postings: {len(postings)} x >= {args.chars} chars "
          f"(mean {total_chars / len(postings):.0f} chars, {total_bytes / len(postings) / 1000:.1f} KB UTF-8)")
    print(f"tagging: {len(postings) / elapsed:,.0f} postings/s, {total_bytes / elapsed / 1e6:.1f} MB/s, "
          f"{hits / len(postings):.1f} hits/posting, {elapsed:.2f} s")
    print(f"naive alias loop (100 postings): {naive_rate:,.0f} postings/s "
          f"(Aho-Corasick is {len(postings) / elapsed / naive_rate:.1f}x)")
    print(f"peak RSS: {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
