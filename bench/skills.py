"""Skill tagging throughput on 5 KB postings with the full taxonomy, one core.

Postings are built from the seeds' JD sections and the zhilian JD texts (the committed copies in
fixtures/skills_eval/zhilian.toml, plus ../shared/data/zh/zhilian51job_jd_text_program_362.txt when it
exists), lines dealt round-robin into about/requirements/responsibilities/preferred until a posting
holds 5,000 bytes of UTF-8 (about 1,900 characters of this mostly Chinese text); a second run uses
5,000 characters (about 13 KB), a third 5,000 bytes of the English descriptions. Prints taxonomy build time,
postings/s (best and median of --passes passes, by wall clock, and the best by CPU time of the process: the
machine is shared, so the load average is printed before and after), MB/s, hits per posting, peak RSS, and for
scale, over the same postings in passes interleaved with ours, a plain Aho-Corasick tagger (casefold, every
overlapping match of every alias, the skills found in a dict; no boundaries, guards or evidence: the issue's
reference, "~10,000/s here"; it slows down with the shared machine as the tagging does, so it tells whether a
run was taken at the issue's machine speed), and a naive loop of `alias in text` checks on a sample.

    .venv/bin/python bench/skills.py [--postings 2000] [--passes 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import ahocorasick_rs

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


def english_lines() -> list[str]:
    """Lines of the English descriptions in fixtures/skills_eval/ats_en.toml."""
    doc = tomllib.loads((ROOT / "fixtures" / "skills_eval" / "ats_en.toml").read_text(encoding="utf-8"))
    return [l for jd in doc["jd"] for text in jd["sections"].values() for l in text.splitlines() if l.strip()]


def build_postings(n: int, size: int, unit: str = "bytes", source: list[str] | None = None) -> list[dict[str, list[str]]]:
    """``n`` postings of at least ``size`` UTF-8 bytes (or characters), drawn round-robin from the source lines.

    A line that would overshoot is cut, so postings stay close to ``size``.
    """
    lines = source_lines() if source is None else source
    measure = (lambda s: len(s.encode())) if unit == "bytes" else len
    postings, i = [], 0
    for _ in range(n):
        sections: dict[str, list[str]] = {k: [] for k in SECTION_KEYS}
        filled = 0
        while filled < size:
            line = lines[i % len(lines)]
            while measure(line) + 1 > size - filled + 200 and len(line) > 40:
                line = line[: len(line) // 2]
            sections[SECTION_KEYS[i % len(SECTION_KEYS)]].append(line)
            filled += measure(line) + 1
            i += 1
        postings.append(sections)
    return postings


def joined(sections: dict[str, list[str]]) -> str:
    """A posting's section lines as one text."""
    return "\n".join(line for lines in sections.values() for line in lines)


def naive(taxonomy: Taxonomy, postings: list[dict[str, list[str]]]) -> float:
    """Postings/s of the approach the issue warns against: one `in` check per alias."""
    aliases = list(taxonomy._aliases)  # the folded aliases the automaton holds
    start = time.perf_counter()
    for sections in postings:
        text = fold(joined(sections))
        sum(1 for alias in aliases if alias in text)
    return len(postings) / (time.perf_counter() - start)


def plain_tagger(taxonomy: Taxonomy) -> Callable[[list[dict[str, list[str]]]], int]:
    """A plain Aho-Corasick tagger over the taxonomy's folded aliases: a function tagging postings."""
    aliases = list(taxonomy._aliases)
    skill_of = [taxonomy._aliases[alias].skill for alias in aliases]
    automaton = ahocorasick_rs.AhoCorasick(aliases)

    def tag_all(postings: list[dict[str, list[str]]]) -> int:
        skills = 0
        for sections in postings:
            text = joined(sections).casefold()
            found: dict[int, str] = {}
            for key, begin, end in automaton.find_matches_as_indexes(text, overlapping=True):
                found.setdefault(skill_of[key], text[begin:end])
            skills += len(found)
        return skills

    return tag_all


def run(taxonomy: Taxonomy, postings: list[dict[str, list[str]]], label: str, passes: int) -> None:
    """Tag every posting (after one warm-up) ``passes`` times, each pass followed by a pass of the plain Aho-Corasick
    tagger over the same postings, so that both see the same state of the shared machine; print the best and median
    rates (by wall clock, and the best by CPU time of the process) and the ratio of the two taggers' best passes."""
    lines = [line for p in postings for section in p.values() for line in section]
    chars = sum(len(l) + 1 for l in lines) / len(postings)
    kb = sum(len(l.encode()) + 1 for l in lines) / len(postings) / 1000
    plain = plain_tagger(taxonomy)
    taxonomy.tag(postings[0])
    plain(postings[:1])
    walls, cpus, plain_walls = [], [], []
    for _ in range(passes):
        start, start_cpu = time.perf_counter(), time.process_time()
        hits = sum(len(taxonomy.tag(sections)) for sections in postings)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
        start = time.perf_counter()
        plain(postings)
        plain_walls.append(time.perf_counter() - start)
    wall, n = min(walls), len(postings)
    print(f"postings of {label} (mean {chars:,.0f} chars, {kb:.1f} KB UTF-8): {n / wall:,.0f} postings/s "
          f"(median of {passes} passes {n / statistics.median(walls):,.0f}/s; {n / min(cpus):,.0f}/s of CPU time), "
          f"{kb * n / wall / 1000:.1f} MB/s, {hits / n:.1f} hits/posting ({n} in {wall:.2f} s)")
    reference = n / min(plain_walls)
    print(f"    plain Aho-Corasick tagger, passes interleaved with ours: {reference:,.0f} postings/s "
          f"(median {n / statistics.median(plain_walls):,.0f}/s); ours runs at {n / wall / reference:.2f} of its speed")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postings", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=5, help="passes over the postings; the best counts")
    args = parser.parse_args(argv)
    print(load())

    data = TAXONOMY.read_bytes()
    builds = []
    for _ in range(5):
        start = time.perf_counter()
        taxonomy = Taxonomy(data)
        builds.append(time.perf_counter() - start)
    aliases = len(taxonomy._aliases)

    print(f"taxonomy: {len(taxonomy.skills)} skills, {aliases} folded aliases (with variants)")
    print(f"build (parse + automaton): median {statistics.median(builds) * 1000:.1f} ms of 5")
    for size, unit in ((5000, "bytes"), (5000, "chars")):
        postings = build_postings(args.postings, size, unit)
        run(taxonomy, postings, f"{size:,} {unit}", args.passes)
    run(taxonomy, build_postings(args.postings, 5000, "bytes", english_lines()), "5,000 bytes of English", args.passes)
    print(f"naive alias loop (100 postings of 5,000 bytes): {naive(taxonomy, build_postings(100, 5000)):,.0f} postings/s")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
