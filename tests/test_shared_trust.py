"""#27 on real exports: each file of ../shared/data/zh ingested into a database of its own by the real `jobcrawl
ingest` (bench/shared.py, the code path of `bench/dedupe_accuracy.py --shared` and `bench/score.py --levels`),
then the issue's per-file criteria. Skips when the folder is absent. The six ingests take about 25 s."""

from __future__ import annotations

import json
import sqlite3

import pytest

from bench.shared import cluster_report, ingested, shared_files
from normalize.dedupe import CROSS_COMPANY_THRESHOLD

pytestmark = [pytest.mark.shared_data, pytest.mark.slow]

FILES = [p.name for p in shared_files()]
INSUFFICIENT = "信息不足"


@pytest.fixture(scope="module")
def databases(tmp_path_factory) -> dict:
    """File name → its database (one module-scoped ingest per file)."""
    return ingested(tmp_path_factory.mktemp("shared-trust"))


@pytest.fixture(scope="module")
def reports(databases) -> dict:
    return {name: cluster_report(db) for name, db in databases.items()}


def test_every_shared_file_is_ingested(databases):
    assert sorted(databases) == [
        "51job_list_java.csv", "boss_horti_295_with_jd.csv", "boss_list_python_bj.csv", "lagou_horti_63_with_jd.csv",
        "lagou_list_data_analyst.csv", "zhilian51job_jd_text_program_362.txt"]


@pytest.mark.parametrize("name", FILES)
def test_no_cluster_spans_more_than_two_companies_unless_their_jds_are_near_identical(reports, name):
    """(a) Every two members of different companies in a cluster spanning more than 2 companies have JD texts
    at least CROSS_COMPANY_THRESHOLD alike (estimated Jaccard of their signatures)."""
    wide = reports[name]["wide"]
    assert {cid: w["pairs"] for cid, w in wide.items() if w["pairs"] < CROSS_COMPANY_THRESHOLD} == {}


@pytest.mark.parametrize("name", FILES)
def test_a_member_joins_from_another_company_only_as_a_near_identical_copy(reports, name):
    """What the clusterer guarantees: in a cluster spanning more than 2 companies, each member that joined from
    another company matched at CROSS_COMPANY_THRESHOLD or more."""
    wide = reports[name]["wide"]
    assert [cid for cid, w in wide.items() if (w["cross_company"] or 1.0) < CROSS_COMPANY_THRESHOLD] == []
    # boss_horti's 园艺师 cluster (天力物业 ×2, 天力物业发展, and 富力物业集团's identical copy) spans two employers:
    # a name contained in another is the same company for dedupe and for ``clusters.companies`` alike
    assert wide == {}


# Overall levels of the postings without JD text (list cards), per file with at least 50 of them.
LIST_ONLY_LEVELS = {
    "51job_list_java.csv": {"中等": 1, INSUFFICIENT: 499},
    "boss_horti_295_with_jd.csv": {"中等": 2, "较低": 42, INSUFFICIENT: 22},
    "boss_list_python_bj.csv": {"中等": 63, "较低": 128, INSUFFICIENT: 2216},
    "lagou_list_data_analyst.csv": {"较高": 57, "中等": 1070, "较低": 120, INSUFFICIENT: 582},
}


def list_only_levels(db) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        return dict(conn.execute(
            "SELECT e.overall_level, count(*) FROM evaluations e JOIN dedupe_signatures s USING (posting_id)"
            " WHERE e.scorer = 'jobcrawl-v1' AND NOT s.has_jd GROUP BY 1"))
    finally:
        conn.close()


@pytest.mark.parametrize("name", FILES)
def test_no_known_level_holds_most_list_only_postings(databases, name):
    """(b) Among a file's postings without JD text, no overall level but 信息不足 holds more than 80 %."""
    levels = list_only_levels(databases[name])
    if sum(levels.values()) < 50:
        assert name not in LIST_ONLY_LEVELS
        return
    assert levels == LIST_ONLY_LEVELS[name]
    total = sum(levels.values())
    assert {lv: n for lv, n in levels.items() if lv != INSUFFICIENT and n > 0.8 * total} == {}


def test_boss_python_list_cards_are_not_glued_together(reports):
    """(c) The file whose 2,407 cards made one cluster of 1,783 (#27): its largest cluster is 13 cards of one
    company and city, joined by identity (same company, title, city and salary)."""
    report = reports["boss_list_python_bj.csv"]
    assert (report["clustered"], report["clusters"], report["duplicates"]) == (2407, 2291, 116)
    (_, size, companies, cities, reasons), *_ = report["largest"]
    assert (size, companies, cities, json.loads(reasons)) == (13, 1, 1, {"new": 1, "same_identity": 12})
