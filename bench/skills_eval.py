"""Skill tagger accuracy on the hand-labeled set in fixtures/skills_eval/ (see its README.md).

Prints precision and recall overall, per split (dev: curated against; test: held out) and per
category, then every false positive (with the text it matched) and false negative per JD.
Committed cases are always scored; the reference rows of ../shared/data are added when that folder
exists. Exits non-zero only on errors (malformed fixture, a label that is not a canonical skill).

    .venv/bin/python bench/skills_eval.py [--split dev|test|all] [--committed-only] [--quiet]
"""

from __future__ import annotations

import argparse
import ast
import csv
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from normalize.skills import CATEGORIES, Taxonomy, load_taxonomy  # noqa: E402

FIXTURES = ROOT / "fixtures" / "skills_eval"
SHARED = ROOT.parent / "shared" / "data"
COMMITTED = ("zhilian.toml", "ats_en.toml")
TARGET_PRECISION = 0.90
TARGET_RECALL = 0.85


@dataclass(frozen=True)
class Case:
    """One labeled posting: its sections (key → lines), tags, and the expected canonical skills."""

    id: str
    split: str
    sections: dict[str, list[str]]
    tags: tuple[str, ...]
    expected: frozenset[str]


def load_cases(fixtures: Path = FIXTURES) -> list[Case]:
    """The committed (licensed) cases."""
    cases = []
    for name in COMMITTED:
        doc = tomllib.loads((fixtures / name).read_text(encoding="utf-8"))
        for jd in doc["jd"]:
            sections = {key: text.splitlines() for key, text in jd["sections"].items()}
            cases.append(Case(jd["id"], jd["split"], sections, (), frozenset(jd["skills"])))
    return cases


def load_reference_cases(shared: Path = SHARED, fixtures: Path = FIXTURES) -> list[Case]:
    """Cases read in place from unlicensed files under ``shared``; empty when the folder is absent."""
    if not shared.is_dir():
        return []
    doc = tomllib.loads((fixtures / "refs.toml").read_text(encoding="utf-8"))
    cases = []
    for ref in doc["ref"]:
        with (shared / ref["file"]).open(encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.DictReader(fh))
        for item in ref["cases"]:
            cell = rows[item["row"]][ref["column"]]
            case_id = f"{ref['file']}#{item['row']}"
            if ref["as"] == "tags":
                case = Case(case_id, "ref", {}, tuple(ast.literal_eval(cell)), frozenset(item["skills"]))
            else:
                case = Case(case_id, "ref", {"about": cell.splitlines()}, (), frozenset(item["skills"]))
            cases.append(case)
    return cases


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0


@dataclass
class Miss:
    case: str
    false_positives: list[tuple[str, str]]  # (skill, text matched)
    false_negatives: list[str]


@dataclass
class Report:
    overall: Score = field(default_factory=Score)
    by_split: dict[str, Score] = field(default_factory=dict)
    by_category: dict[str, Score] = field(default_factory=dict)
    misses: list[Miss] = field(default_factory=list)
    cases: int = 0


def check_labels(cases: Iterable[Case], taxonomy: Taxonomy) -> None:
    """Raise ValueError naming every label that is not a canonical skill of the taxonomy."""
    unknown = sorted({f"{case.id}: {s}" for case in cases for s in case.expected if s not in taxonomy})
    if unknown:
        raise ValueError("labels that are not canonical skills:\n  " + "\n  ".join(unknown))


def evaluate(cases: Sequence[Case], taxonomy: Taxonomy | None = None) -> Report:
    """Score the tagger against the labels: a skill counts once per case, whatever its section."""
    taxonomy = taxonomy or load_taxonomy()
    check_labels(cases, taxonomy)
    report = Report(cases=len(cases))
    for case in cases:
        hits = taxonomy.tag(case.sections, case.tags)
        matched: dict[str, str] = {}
        for hit in hits:
            matched.setdefault(hit.skill, hit.matched)
        found = set(matched)
        split = report.by_split.setdefault(case.split, Score())
        for skill in found | case.expected:
            cat = report.by_category.setdefault(taxonomy.skill(skill).category, Score())
            kind = "tp" if skill in found and skill in case.expected else ("fp" if skill in found else "fn")
            for score in (report.overall, split, cat):
                setattr(score, kind, getattr(score, kind) + 1)
        fps = sorted((s, matched[s]) for s in found - case.expected)
        fns = sorted(case.expected - found)
        if fps or fns:
            report.misses.append(Miss(case.id, fps, fns))
    return report


def _row(label: str, score: Score) -> str:
    labels = score.tp + score.fn
    return (f"{label:<14}{labels:>7}{score.tp:>6}{score.fp:>6}{score.fn:>6}"
            f"{score.precision:>11.3f}{score.recall:>8.3f}")


def print_report(report: Report, taxonomy: Taxonomy, quiet: bool = False) -> None:
    print(f"skill tagger evaluation: taxonomy {taxonomy.version}, {len(taxonomy.skills)} skills, {report.cases} cases")
    print(f"{'':<14}{'labels':>7}{'tp':>6}{'fp':>6}{'fn':>6}{'precision':>11}{'recall':>8}")
    print(_row("all", report.overall))
    for split in sorted(report.by_split):
        print(_row(f"split {split}", report.by_split[split]))
    print("by category")
    for cat in CATEGORIES:
        if cat in report.by_category:
            print(_row(f"  {cat}", report.by_category[cat]))
    verdict = ("meets" if report.overall.precision >= TARGET_PRECISION and report.overall.recall >= TARGET_RECALL
               else "misses")
    print(f"targets precision >= {TARGET_PRECISION}, recall >= {TARGET_RECALL}: {verdict}")
    if quiet:
        return
    for miss in report.misses:
        print(f"\n{miss.case}")
        if miss.false_positives:
            print("  FP " + "; ".join(f"{s} ({m!r})" for s, m in miss.false_positives))
        if miss.false_negatives:
            print("  FN " + "; ".join(miss.false_negatives))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "ref", "all"), default="all")
    parser.add_argument("--committed-only", action="store_true", help="skip the reference rows of ../shared/data")
    parser.add_argument("--quiet", action="store_true", help="figures only, no per-JD misses")
    args = parser.parse_args(argv)
    taxonomy = load_taxonomy()
    try:
        cases = load_cases()
        if not args.committed_only:
            cases += load_reference_cases()
        if args.split != "all":
            cases = [c for c in cases if c.split == args.split]
        report = evaluate(cases, taxonomy)
    except (OSError, KeyError, ValueError, SyntaxError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print_report(report, taxonomy, quiet=args.quiet)
    return 0


if __name__ == "__main__":
    sys.exit(main())
