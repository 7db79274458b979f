"""Saved answers of seven board APIs, ingested as files, are read by the page object a crawl of the board uses
(crawler/ingest/boards.py): the posting's public URL, title, company, location and a section or pay value, the
same again on reparse; an ordinary JSON table is still a table; a git-scraped Lever history replays into one
posting per job, the job dropped from the listing closed."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, problem_lines, run_cli
from crawler.ingest.boards import SAVED_ANSWERS, saved_answer_page

ATS = ROOT / "fixtures" / "web" / "ats"
AT = "2026-12-01T00:00:00+00:00"
ANSWERS = ("lever_matchgroup_postings.json", "ashby_compensation.json", "workable_widget.json", "workable_jobs_0.json",
           "smartrecruiters_postings_0.json", "recruitee_offers.json", "workday_jobs_0.json")
TABLE = [{"id": "t1", "title": "CUDA Engineer", "company": "Acme", "location": "上海", "url": "https://acme.example/1",
          "content": "Write kernels."}]  # flat rows: ids and a "content" key, but no board's shape
PAGES = {
    "lever_matchgroup_postings.json": "lever.LeverPage", "ashby_compensation.json": "ashby.AshbyPage",
    "workable_widget.json": "workable.WorkablePage", "workable_jobs_0.json": "workable.WorkablePage",
    "smartrecruiters_postings_0.json": "smartrecruiters.SmartRecruitersPage",
    "recruitee_offers.json": "recruitee.RecruiteePage", "workday_jobs_0.json": "workday.WorkdayPage",
}


def _sql(db: Path, query: str, *args) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(query, args).fetchall()


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> tuple[Path, Path]:
    """One ingest of the seven saved answers and a plain JSON table as source ``boards``, and a copy of its
    database parsed again by ``jobcrawl reparse``: (database, reparsed copy)."""
    tmp = tmp_path_factory.mktemp("saved")
    folder = tmp / "answers"
    folder.mkdir()
    for name in ANSWERS:
        shutil.copy(ATS / name, folder / name)
    (folder / "table.json").write_text(json.dumps(TABLE, ensure_ascii=False), encoding="utf-8")
    db, copy = tmp / "jobs.db", tmp / "reparsed.db"
    proc = run_cli("ingest", str(folder), "--db", str(db), "--source", "boards", "--as-of", AT, "--workers", "1",
                   check=True)
    assert proc.stdout.splitlines()[1] == (
        "files read 8 · postings found 15 · new 15 · updated 0 · unchanged 0 · quarantined 0")
    shutil.copy(db, copy)
    proc = run_cli("reparse", "--db", str(copy), "--source", "boards", check=True)
    assert proc.stdout.splitlines()[0] == (
        "files read 8 · postings found 15 · new 0 · updated 0 · unchanged 15 · quarantined 0")
    return db, copy


JOB = {"id": 1, "title": "CUDA Engineer", "company": "Acme"}
SHAPES = {
    # every listing answer among the fixtures is told by its shape; single-job answers and other bodies are not
    **{name: (ATS / name, PAGES[name].split(".")[1]) for name in ANSWERS},
    "greenhouse": (ATS / "greenhouse_gitlab_jobs.json", "GreenhousePage"),
    "smartrecruiters-detail": (ATS / "smartrecruiters_posting_744000200000001.json", None),
    "workday-detail": (ATS / "workday_job_JR-2001.json", None),
    # near misses: ordinary tables and envelopes that lack what the board's answer always has
    "table-array": ([JOB], None),
    "table-under-jobs": ({"jobs": [JOB]}, None),
    "lever-without-categories": ([{"id": "a", "text": "x", "hostedUrl": "https://jobs.lever.co/s/a"}], None),
    "lever-categories-not-an-object": ([{"id": "a", "text": "x", "hostedUrl": "h", "categories": "c"}], None),
    "content-without-totalFound": ({"content": [{"id": "1", "name": "x"}]}, None),
    "offers-without-careers_url": ({"offers": [JOB]}, None),
    "jobPostings-without-total": ({"jobPostings": [{"title": "x", "externalPath": "/job/x"}]}, None),
    "results-without-shortcode": ({"total": 1, "results": [JOB]}, None),
    "jobs-of-strings": ({"jobs": ["x"]}, None),
    "empty-listing": ({"jobs": []}, None),
    "bad-json": (b'{"jobs": [', None),
    "csv-like": (b"title,company\nx,y\n", None),
}


@pytest.mark.parametrize("body, page", SHAPES.values(), ids=SHAPES.keys())
def test_a_saved_answer_is_told_by_its_shape(body, page):
    """Read by its board's page class, and of no other board's shape."""
    if isinstance(body, Path):
        body = body.read_bytes()
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    fits = [answer.page.rsplit(".", 1)[1] for answer in SAVED_ANSWERS if answer.entries(data) is not None]
    read = saved_answer_page(raw, locator="saved.json", source="boards", fetched_at=AT, as_of=AT)
    assert (read and type(read).__name__, fits) == (page, [page] if page else [])


POSTING = ("SELECT url, company, title, city, location_raw, salary_raw,"
           " (SELECT heading || ': ' || substr(text, 1, 30) FROM section_texts"
           "  WHERE posting_id = p.id ORDER BY seq LIMIT 1 OFFSET 1)"
           " FROM postings p WHERE source = 'boards' AND source_id = ?")

# source id → url, company, title, city, location, salary, the second section (heading: its first 30 characters)
EXPECTED = {
    "lever": ("3414ba28-35f7-45d3-8e13-35c883959635", (
        "https://jobs.lever.co/matchgroup/3414ba28-35f7-45d3-8e13-35c883959635", "matchgroup", "Android Engineer III",
        "New York", "New York, New York", "USD 150000-180000/YEAR",
        "About the Role: As a key member of our Android")),
    "lever-seoul": ("4004a95b-ed89-4193-ad1a-a2ed5d4703d5", (
        "https://jobs.lever.co/matchgroup/4004a95b-ed89-4193-ad1a-a2ed5d4703d5", "matchgroup",
        "Android Software Engineer (Azar)", "Seoul", "Seoul, South Korea", None,
        "Responsibilities: Feature development : 다양한 팀(기획")),
    "ashby": ("6f1c2a3b-0000-4000-8000-000000000001", (
        "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000001", "exampleai",
        "LLM Serving Engineer", "San Francisco", "San Francisco", "USD 180000-240000/YEAR",
        "Responsibilities: Own the batching scheduler\nCut")),
    "ashby-intern": ("6f1c2a3b-0000-4000-8000-000000000002", (
        "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000002", "exampleai",
        "Research Intern, Kernels", "Beijing", "Beijing", "CNY 400/DAY", None)),
    "workable-widget": ("A1B2C3D4E5", (
        "https://apply.workable.com/j/A1B2C3D4E5", "Example Robotics AG", "Robot Learning Engineer", "Zurich",
        "Zurich, Zurich, Switzerland", None, "Responsibilities: Train diffusion policies on fl")),
    "workable-widget-pay": ("F6G7H8I9J0", (
        "https://apply.workable.com/j/F6G7H8I9J0", "Example Robotics AG", "Perception Intern", "Zurich",
        "Zurich, Zurich, Switzerland",
        "Help us fuse lidar and camera data for grasp detection. Pay: CHF 3,000 per month.", None)),
    "workable-jobs-list": ("K1K1K1K1K1", (
        None, None, "Staff ML Platform Engineer", "Warsaw", "Warsaw, Masovian, Poland", None, None)),
    "smartrecruiters": ("744000200000002", (
        "https://jobs.smartrecruiters.com/ExampleAI/744000200000002", "Example AI Pte. Ltd.", "CUDA 算子开发工程师",
        "Beijing", "Beijing, Beijing, China", None, None)),
    "recruitee": ("3100001", (
        "https://careers.example.com/o/computer-vision-engineer", "Example Vision B.V.", "Computer Vision Engineer",
        "Amsterdam", "Amsterdam, North Holland, Netherlands", "EUR 5000-6500/MONTH",
        "What you will do: Train detection and segmentati")),
    "recruitee-pay-line": ("3100002", (
        "https://careers.example.com/o/edge-ai-intern", "Example Vision B.V.", "Edge AI Intern", "Eindhoven",
        "Eindhoven, North Brabant, Netherlands", "Compensation: €1,200 per month internship allowance.",
        "Compensation:: €1,200 per month internship al")),
    "workday": ("GPU-Cluster-SRE_JR-2002", (
        None, None, "GPU 集群运维工程师", "Shanghai", "China, Shanghai", None, None)),
    "table": ("t1", ("https://acme.example/1", "Acme", "CUDA Engineer", "上海", "上海", None, None)),
}


@pytest.mark.slow
@pytest.mark.parametrize("source_id, expected", EXPECTED.values(), ids=EXPECTED.keys())
def test_a_saved_answer_gives_what_a_crawl_reads_and_reparse_reads_it_again(saved, source_id, expected):
    db, reparsed = saved
    assert _sql(db, POSTING, source_id) == [expected]
    assert _sql(reparsed, POSTING, source_id) == [expected]


@pytest.mark.slow
def test_each_saved_answer_is_stored_with_its_page_class_and_the_table_with_its_format(saved):
    db, _ = saved
    readers = dict(_sql(db, "SELECT locator, coalesce(json_extract(reader, '$.page'), json_extract(reader, '$.format'))"
                            " FROM raw_inputs"))
    assert {Path(locator).name: page for locator, page in readers.items()} == {
        **{name: f"crawler.web.pages.{page}" for name, page in PAGES.items()}, "table.json": "jsonl"}


@pytest.mark.slow
def test_a_saved_listing_without_details_gives_its_relative_date_anchored_at_the_run(saved):
    db, _ = saved
    assert _sql(db, "SELECT source_id, posted_raw, posted_at FROM postings WHERE locator LIKE '%workday_jobs_0.json'"
                    " ORDER BY position") == [
        ("Senior-LLM-Inference-Engineer_JR-2001", "Posted 3 Days Ago", "2026-11-28T00:00:00+00:00"),
        ("GPU-Cluster-SRE_JR-2002", "Posted Yesterday", "2026-11-29T16:00:00+00:00")]


C1, C2 = "2026-03-02T09:00:00+08:00", "2026-03-09T09:00:00+08:00"
U1, U2 = "2026-03-02T01:00:00+00:00", "2026-03-09T01:00:00+00:00"


def _git(repo: Path, *args: str, at: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "scraper", "GIT_AUTHOR_EMAIL": "s@example.org",
           "GIT_COMMITTER_NAME": "scraper", "GIT_COMMITTER_EMAIL": "s@example.org"}
    if at:
        env.update(GIT_COMMITTER_DATE=at, GIT_AUTHOR_DATE=at)
    subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True)


@pytest.mark.slow
def test_a_git_scraped_lever_board_replays_into_one_posting_per_job(tmp_path):
    """Two commits of a Lever answer: the second drops the Seoul job (closed at its time) and retitles the other
    (one posting, its first title kept as a superseded version)."""
    postings = json.loads((ATS / "lever_matchgroup_postings.json").read_text(encoding="utf-8"))
    repo, db = tmp_path / "history", tmp_path / "jobs.db"
    (repo / "lever").mkdir(parents=True)
    _git(repo, "init", "-q")
    for at, answer in ((C1, postings), (C2, [{**postings[0], "text": "Senior Android Engineer"}])):
        (repo / "lever" / "matchgroup.json").write_text(json.dumps(answer, ensure_ascii=False), encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", at, at=at)
    proc = run_cli("replay", str(repo), "lever/matchgroup.json", "--db", str(db), "--source", "lever-matchgroup",
                   "--workers", "1")
    assert (proc.returncode, problem_lines(proc.stderr)) == (0, [])
    assert _sql(db, "SELECT source_id, url, title, first_seen, last_seen, closed_at,"
                    " (SELECT group_concat(json_extract(snapshot, '$.title')) FROM posting_versions"
                    "  WHERE posting_id = p.id)"
                    " FROM postings p ORDER BY id") == [
        ("3414ba28-35f7-45d3-8e13-35c883959635",
         "https://jobs.lever.co/matchgroup/3414ba28-35f7-45d3-8e13-35c883959635", "Senior Android Engineer",
         U1, U2, None, "Android Engineer III"),
        ("4004a95b-ed89-4193-ad1a-a2ed5d4703d5",
         "https://jobs.lever.co/matchgroup/4004a95b-ed89-4193-ad1a-a2ed5d4703d5", "Android Software Engineer (Azar)",
         U1, U1, U2, None)]
