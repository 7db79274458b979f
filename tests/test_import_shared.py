"""Optional: import every file of ``../shared/data/zh/`` through the real CLI and check the issue-3 targets.

Skipped when the folder is absent (its files have no licence and are read in place, never copied).
Run with ``-s`` to see the per-file figures::

    .venv/bin/pytest tests/test_import_shared.py -s

Targets, per file: every data row imported or quarantined with a reason (none lost: imported +
quarantined + skipped repeated headers and blank rows == data rows, and the data rows counted
independently with Python's csv module); sections (requirements AND responsibilities) found in ≥ 95 %
of the JDs that contain a responsibilities heading and a requirements heading; every salary as
written parsed or explicitly marked (negotiable, undisclosed, unparseable).
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from conftest import run_cli

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]

SHARED_ZH = Path(__file__).resolve().parents[2] / "shared" / "data" / "zh"
LINES_OPTIONS = ["--format", "lines", "--value", "company=智联/51job 样本", "--value", "title=未注明职位"]
FILES = {
    "51job_list_java.csv": [],
    "boss_horti_295_with_jd.csv": [],
    "boss_list_python_bj.csv": [],
    "lagou_horti_63_with_jd.csv": [],
    "lagou_list_data_analyst.csv": [],
    "zhilian51job_jd_text_program_362.txt": LINES_OPTIONS,
}
# Unambiguous heading words: a JD containing one of each kind states both sections.
RESPONSIBILITY_HEADINGS = re.compile(r"岗位职责|工作职责|职位职责|职责描述|主要职责|工作内容|岗位描述|职位描述|responsibilities", re.I)
REQUIREMENT_HEADINGS = re.compile(r"任职要求|任职资格|岗位要求|职位要求|任职条件|招聘要求|requirements|qualifications", re.I)
MARKED = ("negotiable", "undisclosed", "unparseable")


def data_rows(path: Path, options: list[str]) -> int:
    """Records after the header, counted with Python's csv module reading the file the documented
    way (``newline=""``); for a lines file, the ``\\n``-terminated lines."""
    if "lines" in options:
        text = path.read_text(encoding="utf-8")
        return text.count("\n") + (not text.endswith("\n"))
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return sum(1 for _ in csv.reader(fh)) - 1


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The files ingested into one database, one run per set of options (the CSV files together); per file the
    run's process, its table report, postings, sections and quarantine."""
    db = tmp_path_factory.mktemp("shared") / "jobs.db"
    by_options: dict[tuple[str, ...], list[str]] = {}
    for name, options in FILES.items():
        by_options.setdefault(tuple(options), []).append(name)
    procs = {}
    for options, names in by_options.items():
        proc = run_cli("ingest", *(str(SHARED_ZH / name) for name in names), *options, "--db", str(db), timeout=1800)
        procs.update(dict.fromkeys(names, proc))
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    reports = {t["locator"]: t for (stats,) in conn.execute("SELECT stats FROM runs ORDER BY id")
               for t in json.loads(stats).get("jobcrawl/tables", [])}
    keys: dict[int, set[str]] = {}
    for pid, key in conn.execute("SELECT DISTINCT posting_id, key FROM sections"):
        keys.setdefault(pid, set()).add(key)
    out = {}
    for name in FILES:
        postings = [dict(r) for r in conn.execute(
            "SELECT id, description, salary_raw, salary_status FROM postings WHERE locator = ?", [name])]
        quarantine = [dict(r) for r in conn.execute(
            "SELECT position, reason, detail FROM quarantine WHERE locator = ? AND position >= 0", [name])]
        out[name] = {"proc": procs[name], "report": reports.get(name), "postings": postings,
                     "keys": {p["id"]: keys.get(p["id"], set()) for p in postings}, "quarantine": quarantine}
    conn.close()
    return out


def figures(result: dict) -> dict:
    report, postings, keys = result["report"], result["postings"], result["keys"]
    jds = [p for p in postings if p["description"]]
    with_headings = [p for p in jds if RESPONSIBILITY_HEADINGS.search(p["description"])
                     and REQUIREMENT_HEADINGS.search(p["description"])]
    found = [p for p in with_headings if {"requirements", "responsibilities"} <= keys[p["id"]]]
    any_heading = [p for p in jds if RESPONSIBILITY_HEADINGS.search(p["description"]) or REQUIREMENT_HEADINGS.search(p["description"])]
    some_found = [p for p in any_heading if {"requirements", "responsibilities"} & keys[p["id"]]]
    salaries = [p for p in postings if (p["salary_raw"] or "").strip()]
    status = Counter(p["salary_status"] for p in salaries)
    imported_rows = len(postings) + report["duplicates"]  # rows repeating an earlier row's id update that posting
    return {
        "rows": report["rows"], "imported": imported_rows, "postings": len(postings),
        "quarantined": len(result["quarantine"]), "header": report["header_rows"], "blank": report["blank_rows"],
        "reasons": Counter(q["reason"] for q in result["quarantine"]),
        "jds": len(jds), "any_heading": len(any_heading), "some_found": len(some_found),
        "both_headings": len(with_headings), "found": len(found),
        "missed": [p["description"][:80] for p in with_headings if p not in found][:3],
        "salaries": len(salaries), "parsed": status["parsed"], "marked": sum(status[s] for s in MARKED),
        "status": dict(status),
        "unparseable": sorted({p["salary_raw"] for p in salaries if p["salary_status"] == "unparseable"})[:5],
        "preset": report["preset"],
    }


def share(part: int, whole: int) -> str:
    return f"{part / whole:6.1%}" if whole else "     –"


def test_print_figures(imported):
    """The per-file figures (run with -s)."""
    print()
    print(f"{'file':38} {'preset':10} {'rows':>5} {'imported':>8} {'quar.':>5} {'hdr':>3} {'blank':>5}  "
          f"{'JDs':>4} {'w/ both headings':>16} {'sections found':>14}  {'salaries':>8} {'parsed':>7} {'marked':>7}")
    for name, result in imported.items():
        f = figures(result)
        print(f"{name:38} {f['preset'] or '-':10} {f['rows']:5} {f['imported']:8} {f['quarantined']:5} {f['header']:3} "
              f"{f['blank']:5}  {f['jds']:4} {f['both_headings']:16} {share(f['found'], f['both_headings']):>14}  "
              f"{f['salaries']:8} {share(f['parsed'], f['salaries']):>7} {share(f['marked'], f['salaries']):>7}")
        if f["reasons"]:
            print(f"    quarantined: {dict(f['reasons'])}; e.g. {result['quarantine'][0]['detail']}")
        if f["unparseable"]:
            print(f"    salaries marked unparseable, e.g. {f['unparseable']}")
        if f["missed"]:
            print(f"    JDs with both headings where a section was not found, e.g. {f['missed']}")
        print(f"    JDs with any known heading: {f['any_heading']}, requirements or responsibilities found in "
              f"{share(f['some_found'], f['any_heading']).strip()}; salary status: {f['status']}; distinct postings: "
              f"{f['postings']}")


@pytest.mark.parametrize("name", FILES)
def test_no_row_lost(imported, name):
    result = imported[name]
    assert result["proc"].returncode in (0, 1), result["proc"].stderr
    f = figures(result)
    assert f["rows"] == data_rows(SHARED_ZH / name, FILES[name])
    assert f["imported"] + f["quarantined"] + f["header"] + f["blank"] == f["rows"]
    assert all(q["reason"] and q["detail"] for q in result["quarantine"])
    assert (f["imported"] + f["quarantined"]) / (f["rows"] - f["header"] - f["blank"]) >= 0.99


@pytest.mark.parametrize("name", FILES)
def test_sections_found_where_headings_are(imported, name):
    f = figures(imported[name])
    if not f["both_headings"]:
        pytest.skip(f"{name}: no JD with both a responsibilities and a requirements heading")
    assert f["found"] / f["both_headings"] >= 0.95, f["missed"]
    assert f["some_found"] / f["any_heading"] >= 0.95


@pytest.mark.parametrize("name", FILES)
def test_every_salary_parsed_or_marked(imported, name):
    f = figures(imported[name])
    assert f["parsed"] + f["marked"] == f["salaries"], f["status"]
