"""Web crawls end to end: the real `jobcrawl crawl` against a mock HTTP server on 127.0.0.1, through the
real pipelines into a real SQLite file. The server serves the recorded fixtures of fixtures/web/ and logs
every request, so the tests see what crossed the network."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, export_records, problem_lines, run_cli
from crawler.run.lock import db_lock
from mockserver import MockServer, build_docroot

pytestmark = pytest.mark.slow

CONTACT = "https://example.org/jobcrawl-tests"
USER_AGENT = f"jobcrawl/0.1 (+{CONTACT})"
ATS = FIXTURES / "web" / "ats"


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """The mock server, once per session, over a copy of the fixtures that tests may add to."""
    root = build_docroot(tmp_path_factory.mktemp("www"))
    with MockServer(root, root.parent / "requests.log") as srv:
        yield srv


def write_sources(path: Path, body: str) -> Path:
    """A sources file of ``body`` whose every source may reach the mock server's address (127.0.0.1)."""
    body = re.sub(r"^(\[sources\.[^\]]+\])$", r"\1\nallow_private = true", body, flags=re.M)
    path.write_text(f'contact = "{CONTACT}"\n\n{body}', encoding="utf-8")
    return path


QUICK_THROTTLE = ("-s", "AUTOTHROTTLE_START_DELAY=0.1")
"""AutoThrottle on, as by default, but starting 0.1 s apart instead of 1 s: a revalidation (304s) never lowers the
delay it starts with, and none of these tests is about that pace."""


def crawl(db: Path, sources: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli("crawl", *args, *QUICK_THROTTLE, "--sources", str(sources), "--db", str(db))


def table(db: Path, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def runs(db: Path) -> dict[str, dict]:
    """The last run of each source: counts, responses by status and stats."""
    out = {}
    for row in table(db, "SELECT source, status, requests, responses, files, found, new, updated, unchanged, closed, "
                         "reopened, quarantined, errors, stats FROM runs ORDER BY id"):
        (source, status, requests, responses, files, found, new, updated, unchanged, closed, reopened,
         quarantined, errors, stats) = row
        out[source] = {"status": status, "requests": requests, "responses": json.loads(responses), "files": files,
                       "found": found, "new": new, "updated": updated, "unchanged": unchanged, "closed": closed,
                       "reopened": reopened, "quarantined": quarantined, "errors": errors, "stats": json.loads(stats)}
    return out


def counts_of(run: dict) -> tuple:
    return tuple(run[k] for k in ("status", "requests", "responses", "files", "found", "new", "updated", "unchanged",
                                  "closed", "reopened", "quarantined", "errors"))


# --------------------------------------------------------------------------- every spider, twice

MAIN_SOURCES = """
[sources.careers]
spider = "jsonld"
start_urls = ["{base}/careers/"]
sitemap_urls = ["{base}/robots.txt"]
allow = ["/jobs/"]
company = "Acme Careers"

[sources.gitlab]
spider = "greenhouse"
boards = ["gitlab"]
base_url = "{base}/greenhouse"

[sources.mixed]
spider = "greenhouse"
boards = ["examplerobotics", "truncated"]
base_url = "{base}/fail-once/429/greenhouse"
company = "Example Robotics"

[sources.matchgroup]
spider = "lever"
boards = ["matchgroup"]
base_url = "{base}/lever"

[sources.ashby]
spider = "ashby"
boards = ["linear", "examplecomp"]
base_url = "{base}/ashby"
"""


@dataclass
class Run:
    proc: subprocess.CompletedProcess
    hits: list
    records: dict[str, dict]
    runs: dict[str, dict]


def crawl_twice(server, tmp: Path, sources_body: str) -> tuple[Path, list[Run]]:
    """`crawl --all` over the sources (``{base}`` is the server's URL) into ``tmp/jobs.db``, twice."""
    db = tmp / "jobs.db"
    sources = write_sources(tmp / "sources.toml", sources_body.format(base=server.base))
    out = []
    for _ in range(2):
        before = len(server.hits())
        proc = crawl(db, sources, "--all")
        records = {r["source_id"]: r for r in export_records(db)}
        out.append(Run(proc, server.hits()[before:], records, runs(db)))
    return db, out


@pytest.fixture(scope="module")
def two_runs(server, tmp_path_factory):
    """`crawl --all` over every source, then again over the unchanged fixtures."""
    return crawl_twice(server, tmp_path_factory.mktemp("main"), MAIN_SOURCES)


def test_first_run_exit_status_and_messages(two_runs):
    _, (first, _) = two_runs
    assert first.proc.returncode == 1, first.proc.stderr  # something quarantined, one request failed
    failed = [line for line in first.proc.stderr.splitlines() if " failed: " in line]
    assert failed == ["careers: 1 request failed: too many redirects"]
    assert "Traceback" not in first.proc.stderr
    quarantined = sorted(line.split(": quarantined: ")[1].split(": ", 1)[1] for line in first.proc.stderr.splitlines()
                         if ": quarantined: " in line)
    assert quarantined == [
        "JSON-LD block 1: Expecting ',' delimiter (line 8, column 42)",
        "entry 1 has no id",
        "entry 2 is a JSON str, not an object",
        "invalid JSON: Unterminated string starting at (line 38, column 18)",
    ]


def test_first_run_counts_per_source(two_runs):
    _, (first, _) = two_runs
    got = {source: counts_of(run) for source, run in first.runs.items()}
    # status, requests, responses, files, found, new, updated, unchanged, closed, reopened, quarantined, errors
    assert got == {
        # robots.txt twice (middleware, then as a sitemap URL: revalidated), careers/, 2 sitemaps,
        # 5 sitemap pages, 4.html (500, then 200), 6.html (slow), 7.html, broken.html, 6 redirects
        "careers": ("partial", 21, {"200": 13, "302": 6, "304": 1, "500": 1}, 9, 12, 12, 0, 0, 0, 0, 1, 1),
        "gitlab": ("ok", 2, {"200": 2}, 1, 2, 2, 0, 0, 0, 0, 0, 0),
        "mixed": ("partial", 5, {"200": 3, "429": 2}, 2, 2, 2, 0, 0, 0, 0, 3, 0),
        "matchgroup": ("ok", 2, {"200": 2}, 1, 2, 2, 0, 0, 0, 0, 0, 0),
        "ashby": ("ok", 3, {"200": 3}, 2, 4, 4, 0, 0, 0, 0, 0, 0),
    }
    assert [first.runs[s]["stats"]["jobcrawl/listings_complete"] for s in first.runs] == [0, 1, 0, 1, 2]


def test_politeness_robots_agent_and_scope(two_runs):
    _, (first, second) = two_runs
    hits = first.hits + second.hits
    assert {h.user_agent for h in hits} == {USER_AGENT}
    assert [h.path for h in hits if h.path.startswith("/private/")] == []  # disallowed by robots.txt
    assert [h.path for h in hits if h.path == "/about.html"] == []  # not matching `allow`
    # each crawler reads robots.txt before anything else on the host
    assert sum(1 for h in first.hits if h.path == "/robots.txt") == 6


def test_retries_wait_honor_retry_after_and_backoff(two_runs):
    _, (first, _) = two_runs
    flaky = [(h.path, h.status) for h in first.hits if h.path.startswith("/fail-once/")]
    assert sorted(flaky) == [
        ("/fail-once/429/greenhouse/v1/boards/examplerobotics/jobs", 200),
        ("/fail-once/429/greenhouse/v1/boards/examplerobotics/jobs", 429),
        ("/fail-once/429/greenhouse/v1/boards/truncated/jobs", 200),
        ("/fail-once/429/greenhouse/v1/boards/truncated/jobs", 429),
        ("/fail-once/500/site/jobs/4.html", 200),
        ("/fail-once/500/site/jobs/4.html", 500),
    ]
    for path in {p for p, _ in flaky}:  # the failure first, then the retry that succeeds
        assert [h.status for h in first.hits if h.path == path] in ([429, 200], [500, 200])
    assert first.runs["mixed"]["stats"]["retry/wait_seconds"] == 2.0  # Retry-After: 1, twice
    assert first.runs["careers"]["stats"]["retry/wait_seconds"] == 1.0  # first backoff step
    assert "https://careers.example.com/jobs/4" in first.records  # the page that failed once is stored


def test_redirect_loop_stops_at_the_limit(two_runs):
    _, (first, _) = two_runs
    loop = [(h.path, h.status) for h in first.hits if h.path.startswith("/redirect-loop/")]
    assert loop == [(f"/redirect-loop/jobs/{n}", 302) for n in range(6)]


def summary(r: dict) -> dict:
    s = r["salary"]
    return {
        "id": (r["source"], r["source_id"], r["url"]), "what": (r["company"], r["title"], r["city"], r["location_raw"]),
        "salary": (s["raw"], s["min"], s["max"], s["currency"], s["period"], s["monthly_min"], s["monthly_max"],
                   s["annual_min"], s["annual_max"]),
        "sections": {k: len(v) for k, v in r["sections"].items()},
        "closed_at": r["closed_at"], "version": r["version"],
    }


STORED = [
    pytest.param("8565469002", {
        "id": ("greenhouse", "8565469002", "https://job-boards.greenhouse.io/gitlab/jobs/8565469002"),
        "what": ("GitLab", "AI Engineer", None, "Remote, US"),
        "salary": ("$108,400—$129,600 USD", 108400, 129600, "USD", "year", 9033.33, 10800, 108400, 129600),
        "sections": {"about": 8, "responsibilities": 9, "requirements": 11, "preferred": 6,
                     "How GitLab Supports Full-Time Employees": 10},
        "closed_at": None, "version": 1,
    }, id="greenhouse-pay-in-content"),
    pytest.param("4000201", {
        "id": ("greenhouse", "4000201", "https://boards.greenhouse.io/examplerobotics/jobs/4000201"),
        "what": ("Example Robotics", "Compiler Engineer (MLIR)", "Shanghai", "Shanghai"),
        "salary": (None,) * 9, "sections": {"about": 1}, "closed_at": None, "version": 1,
    }, id="greenhouse-after-429-configured-company"),
    pytest.param("3414ba28-35f7-45d3-8e13-35c883959635", {
        "id": ("lever", "3414ba28-35f7-45d3-8e13-35c883959635",
               "https://jobs.lever.co/matchgroup/3414ba28-35f7-45d3-8e13-35c883959635"),
        "what": ("matchgroup", "Android Engineer III", "New York", "New York, New York"),
        "salary": ("USD 150000-180000/YEAR", 150000, 180000, "USD", "year", 12500, 15000, 150000, 180000),
        "sections": {"Hinge is the dating app designed to be deleted": 1, "about": 1, "responsibilities": 8,
                     "requirements": 6, "As a member of our team, you’ll enjoy:": 6, "At Hinge, our core values are…": 3,
                     "Diversity inspires innovation": 3},
        "closed_at": None, "version": 1,
    }, id="lever-salary-range"),
    pytest.param("6f1c2a3b-0000-4000-8000-000000000001", {
        "id": ("ashby", "6f1c2a3b-0000-4000-8000-000000000001",
               "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000001"),
        "what": ("examplecomp", "LLM Serving Engineer", "San Francisco", "San Francisco"),
        "salary": ("USD 180000-240000/YEAR", 180000, 240000, "USD", "year", 15000, 20000, 180000, 240000),
        "sections": {"about": 1, "responsibilities": 2, "requirements": 1}, "closed_at": None, "version": 1,
    }, id="ashby-compensation-year"),
    pytest.param("6f1c2a3b-0000-4000-8000-000000000002", {
        "id": ("ashby", "6f1c2a3b-0000-4000-8000-000000000002",
               "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000002"),
        "what": ("examplecomp", "Research Intern, Kernels", "Beijing", "Beijing"),
        "salary": ("CNY 400/DAY", 400, 400, "CNY", "day", 8700, 8700, 104400, 104400),
        "sections": {"about": 2}, "closed_at": None, "version": 1,
    }, id="ashby-compensation-day"),
    pytest.param("127.0.0.1#W-12", {
        "id": ("jsonld", "127.0.0.1#W-12", "{base}/site/jobs/broken.html"),
        "what": ("Acme Fabrication", "Welder", "Springfield", "Springfield, US"),
        "salary": ("USD 25-32.5/HOUR", 25, 32.5, "USD", "hour", 4350, 5655, 52200, 67860),
        "sections": {"about": 1, "requirements": 2}, "closed_at": None, "version": 1,
    }, id="jsonld-broken-html"),
    pytest.param("careers.example.cn#HZ-AI-0042", {
        "id": ("jsonld", "careers.example.cn#HZ-AI-0042", "https://careers.example.cn/jobs/8"),
        "what": ("示例智能科技（杭州）有限公司", "AI推理加速工程师", "杭州", "杭州, 浙江省, CN"),
        "salary": ("CNY 35000-50000/MONTH", 35000, 50000, "CNY", "month", 35000, 50000, 420000, 600000),
        "sections": {"about": 1, "responsibilities": 3, "requirements": 7, "preferred": 2, "benefits": 1},
        "closed_at": None, "version": 1,
    }, id="jsonld-sitemap-cny"),
    pytest.param("https://careers.example.com/jobs/4", {
        "id": ("jsonld", "https://careers.example.com/jobs/4", "https://careers.example.com/jobs/4"),
        "what": ("ABC Company Inc.", "Software Engineer", "Kirkland", "Kirkland, WA"),
        "salary": ("USD 100000", 100000, 100000, "USD", "year", 8333.33, 8333.33, 100000, 100000),
        "sections": {"about": 1, "requirements": 5, "responsibilities": 2, "benefits": 1}, "closed_at": None, "version": 1,
    }, id="jsonld-microdata-after-500"),
    pytest.param("https://careers.example.com/jobs/1", {
        "id": ("jsonld", "https://careers.example.com/jobs/1", "https://careers.example.com/jobs/1"),
        "what": ("Acme Careers", "Software Engineer", "Kirkland", "Kirkland, WA"),
        "salary": ("USD 100000", 100000, 100000, "USD", "year", 8333.33, 8333.33, 100000, 100000),
        "sections": {"about": 1, "requirements": 2, "responsibilities": 1, "benefits": 1}, "closed_at": None, "version": 1,
    }, id="jsonld-company-from-source"),
]


@pytest.mark.parametrize(("source_id", "expected"), STORED)
def test_stored_fields(two_runs, server, source_id, expected):
    _, (first, second) = two_runs
    expected = {**expected, "id": tuple(v.format(base=server.base) for v in expected["id"])}
    assert summary(first.records[source_id]) == expected
    assert summary(second.records[source_id]) == expected


def test_stored_sections_text(two_runs):
    _, (first, _) = two_runs
    welder = first.records["127.0.0.1#W-12"]
    assert welder["sections"] == {"about": ["Weld steel frames."], "requirements": ["MIG and TIG welding", "Read blueprints"]}
    ai = first.records["8565469002"]["sections"]
    assert (ai["requirements"][-1], ai["responsibilities"][0][:40]) == (
        "Product Mindset - Ability to scope MVPs, prioritise ruthlessly, and deliver iteratively. In addition, "
        "consider adoption, user experience, and business outcomes.", "Diagnose business problems before buildi")


def test_preferred_requirements_heading_is_preferred(two_runs):
    _, (first, _) = two_runs
    assert "preferred" in first.records["8565469002"]["sections"]


def test_every_posting_of_a_multi_posting_page_is_stored(two_runs):
    _, (first, _) = two_runs
    assert first.runs["careers"]["new"] == first.runs["careers"]["found"] == 12


def test_second_run_costs_304s_and_changes_nothing(two_runs):
    db, (first, second) = two_runs
    assert second.proc.returncode == 1, second.proc.stderr  # the same bad inputs are reported again
    # every page and listing is revalidated: 304, no body; only the redirect loop answers 302 again
    assert {(h.status, h.conditional) for h in second.hits if not h.path.startswith("/redirect-loop/")} == {(304, True)}
    got = {source: counts_of(run) for source, run in second.runs.items()}
    assert got == {
        "careers": ("partial", 20, {"302": 6, "304": 14}, 9, 12, 0, 0, 12, 0, 0, 1, 1),  # 4.html no longer fails
        "gitlab": ("ok", 2, {"304": 2}, 1, 2, 0, 0, 2, 0, 0, 0, 0),
        "mixed": ("partial", 3, {"304": 3}, 2, 2, 0, 0, 2, 0, 0, 3, 0),
        "matchgroup": ("ok", 2, {"304": 2}, 1, 2, 0, 0, 2, 0, 0, 0, 0),
        "ashby": ("ok", 3, {"304": 3}, 2, 4, 0, 0, 4, 0, 0, 0, 0),
    }
    assert table(db, "SELECT count(*) FROM posting_versions") == [(0,)]
    assert table(db, "SELECT count(*) FROM postings WHERE version != 1 OR closed_at IS NOT NULL") == [(0,)]
    for key, before in first.records.items():  # only last_seen moved
        after = second.records[key]
        assert after["last_seen"] > before["last_seen"]
        assert {k: v for k, v in after.items() if k not in ("last_seen", "last_seen_local")} == {k: v for k, v in before.items() if k not in ("last_seen", "last_seen_local")}


# --------------------------------------------------------------------------- closing and reopening


def gitlab_listing(*, ids: tuple[int, ...] | None = None, company: str | None = None, drop: int | None = None) -> str:
    data = json.loads((ATS / "greenhouse_gitlab_jobs.json").read_text(encoding="utf-8"))
    jobs = data["jobs"]
    if ids:
        for job, new_id in zip(jobs, ids):
            job["id"] = new_id
            job["company_name"] = company
    data["jobs"] = [job for job in jobs if job["id"] != drop]
    return json.dumps(data)


def test_missing_posting_is_closed_only_in_its_own_listing_and_reopened(server, tmp_path):
    boards = server.root / "t" / "closing" / "greenhouse" / "v1" / "boards"
    for board in ("gitlab", "acme"):
        (boards / board).mkdir(parents=True)
    lever = server.root / "t" / "closing" / "lever" / "v0" / "postings"
    lever.mkdir(parents=True)
    (lever / "matchgroup.json").write_bytes((ATS / "lever_matchgroup_postings.json").read_bytes())
    full_gitlab, acme = gitlab_listing(), gitlab_listing(ids=(1001, 1002), company="Acme")
    (boards / "gitlab" / "jobs.json").write_text(full_gitlab)
    (boards / "acme" / "jobs.json").write_text(acme)
    db = tmp_path / "jobs.db"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.gh]
spider = "greenhouse"
boards = ["gitlab", "acme"]
base_url = "{server.base}/t/closing/greenhouse"

[sources.lv]
spider = "lever"
boards = ["matchgroup"]
base_url = "{server.base}/t/closing/lever"
""")

    first = crawl(db, sources, "--all")
    assert first.returncode == 0, first.stderr
    assert table(db, "SELECT listing, count(*) FROM listing_postings GROUP BY listing ORDER BY listing") == [
        ("greenhouse:acme", 2), ("greenhouse:gitlab", 2), ("lever:matchgroup", 2)]

    # gitlab drops one job; acme's listing cannot be read (it must close nothing); lever is unchanged
    (boards / "gitlab" / "jobs.json").write_text(gitlab_listing(drop=8503792002))
    (boards / "acme" / "jobs.json").write_bytes((ATS / "greenhouse_truncated.json").read_bytes())
    second = crawl(db, sources, "--all")
    assert second.returncode == 1, second.stderr  # acme's listing is quarantined
    assert [(r["closed"], r["reopened"], r["unchanged"]) for r in runs(db).values()] == [(1, 0, 1), (0, 0, 2)]
    closed = table(db, "SELECT source, source_id, closed_at FROM postings WHERE closed_at IS NOT NULL")
    assert [(s, i) for s, i, _ in closed] == [("greenhouse", "8503792002")]
    started, finished = table(db, "SELECT started, finished FROM runs WHERE source = 'gh' ORDER BY id DESC LIMIT 1")[0]
    assert started <= closed[0][2] <= finished
    exported = {r["source_id"]: r["closed_at"] for r in export_records(db)}
    assert exported == {"8503792002": closed[0][2], "8565469002": None, "1001": None, "1002": None,
                        "3414ba28-35f7-45d3-8e13-35c883959635": None, "4004a95b-ed89-4193-ad1a-a2ed5d4703d5": None}
    assert table(db, "SELECT count(*) FROM postings") == [(6,)]  # closed, never deleted

    (boards / "gitlab" / "jobs.json").write_text(full_gitlab)
    (boards / "acme" / "jobs.json").write_text(acme)
    third = crawl(db, sources, "--all")
    assert third.returncode == 0, third.stderr
    assert [(r["closed"], r["reopened"], r["unchanged"]) for r in runs(db).values()] == [(0, 1, 4), (0, 0, 2)]
    assert table(db, "SELECT count(*) FROM postings WHERE closed_at IS NOT NULL OR version != 1") == [(0,)]
    assert table(db, "SELECT count(*) FROM listing_postings WHERE closed_at IS NOT NULL") == [(0,)]


def test_complete_site_closes_pages_gone_from_its_sitemap(server, tmp_path):
    site = server.root / "t" / "site"
    (site / "jobs").mkdir(parents=True)
    page = (FIXTURES / "web" / "site" / "jobs" / "8.html").read_text(encoding="utf-8")
    for n in range(3):
        (site / "jobs" / f"{n}.html").write_text(page.replace("HZ-AI-0042", f"HZ-{n}"), encoding="utf-8")

    def sitemap(pages):
        urls = "".join(f"<url><loc>{{{{BASE}}}}/t/site/jobs/{n}.html</loc></url>" for n in pages)
        (site / "sitemap.xml").write_text(
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>')

    sitemap([0, 1, 2])
    db = tmp_path / "jobs.db"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.site]
spider = "jsonld"
sitemap_urls = ["{server.base}/t/site/sitemap.xml"]
allow = ["/t/site/jobs/"]
complete = true
site = "example-cn"
""")
    assert crawl(db, sources, "site").returncode == 0
    sitemap([0, 2])
    assert crawl(db, sources, "site").returncode == 0
    assert [(r["found"], r["closed"]) for r in runs(db).values()] == [(2, 1)]
    assert table(db, "SELECT source_id FROM postings WHERE closed_at IS NOT NULL") == [("careers.example.cn#HZ-1",)]
    assert table(db, "SELECT listing, count(*) FROM listing_postings GROUP BY listing") == [("jsonld:example-cn", 3)]


def test_request_cap_is_a_hard_limit(server, tmp_path):
    db = tmp_path / "jobs.db"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.boards]
spider = "greenhouse"
boards = ["gitlab", "examplerobotics", "truncated"]
base_url = "{server.base}/greenhouse"
max_requests = 5
""")
    before = len(server.hits())
    proc = crawl(db, sources, "boards", "--max-requests", "2")  # the option wins over the file
    assert proc.returncode == 1, proc.stderr
    assert [h.path for h in server.hits()[before:]][0] == "/robots.txt"
    assert len(server.hits()) - before == 2
    run = runs(db)["boards"]
    assert (run["status"], run["requests"], run["errors"], run["stats"]["finish_reason"],
            run["stats"]["jobcrawl/request_cap/dropped"]) == ("partial", 2, 0, "request_cap", 2)


# --------------------------------------------------------------------------- lock, resume, usage


def test_a_second_run_on_a_locked_database_exits_4(server, tmp_path):
    db = tmp_path / "jobs.db"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.gitlab]
spider = "greenhouse"
boards = ["gitlab"]
base_url = "{server.base}/greenhouse"
""")
    before = len(server.hits())
    with db_lock(db):
        proc = crawl(db, sources, "gitlab")
        started = (tmp_path / "jobs.db.lock").read_text().split("started ")[1].strip()  # removed when released
    assert proc.returncode == 4
    assert proc.stderr.strip() == (f"jobcrawl crawl: {db} is locked by another jobcrawl run (pid {os.getpid()}, "
                                   f"started {started}); lock file {db}.lock")
    assert not db.exists() and len(server.hits()) == before  # nothing written, nothing fetched


def test_interrupted_crawl_resumes_from_its_jobdir(server, tmp_path):
    jobs = server.root / "t" / "resume"
    (jobs / "jobs").mkdir(parents=True)
    page = (FIXTURES / "web" / "site" / "jobs" / "8.html").read_text(encoding="utf-8")
    links = []
    for n in range(20):
        (jobs / "jobs" / f"{n}.html").write_text(page.replace("HZ-AI-0042", f"R-{n}"), encoding="utf-8")
        links.append(f'<a href="/slow/0.2/t/resume/jobs/{n}.html">job {n}</a>')
    (jobs / "index.html").write_text("<html><body>" + "".join(links) + "</body></html>")
    db, jobdir = tmp_path / "jobs.db", tmp_path / "jobdir"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.resume]
spider = "jsonld"
start_urls = ["{server.base}/t/resume/"]
allow = ["/t/resume/jobs/"]
concurrency = 1
settings = {{ AUTOTHROTTLE_ENABLED = false, CONCURRENT_REQUESTS = 1 }}
""")
    args = [sys.executable, "-m", "crawler.cli", "crawl", "resume", "--sources", str(sources), "--db", str(db),
            "--jobdir", str(jobdir)]
    before = len(server.hits())
    proc = subprocess.Popen(args, cwd=ROOT, env=dict(os.environ, PYTHONUTF8="1"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    pages = lambda: [h for h in server.hits()[before:] if "/t/resume/jobs/" in h.path]  # noqa: E731
    deadline = time.monotonic() + 60
    while len(pages()) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert "resume: interrupted; run the same command again to resume" in err
    fetched = len(pages())
    assert 5 <= fetched < 20
    assert (jobdir / "resume" / "requests.seen").exists()
    assert table(db, "SELECT status, found FROM runs") == [("interrupted", fetched)]

    again = subprocess.run(args, cwd=ROOT, env=dict(os.environ, PYTHONUTF8="1"), capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    hits = server.hits()[before:]
    assert sorted(h.path for h in hits if "/t/resume/jobs/" in h.path) == sorted(
        f"/slow/0.2/t/resume/jobs/{n}.html" for n in range(20))  # every page once over both runs
    assert [h.path for h in hits].count("/t/resume/") == 1
    assert table(db, "SELECT status, found, new FROM runs") == [("interrupted", fetched, fetched),
                                                               ("ok", 20 - fetched, 20 - fetched)]
    assert table(db, "SELECT count(*) FROM postings") == [(20,)]
    assert not (jobdir / "resume").exists()  # a finished crawl starts afresh next time


USAGE = [
    pytest.param(["gitlab", "--all"], "name the sources to crawl, or pass --all (not both)", id="names-and-all"),
    pytest.param([], "name the sources to crawl, or pass --all (not both)", id="nothing-to-crawl"),
    pytest.param(["nosuch"], "no source named nosuch (sources: gitlab)", id="unknown-name"),
    pytest.param(["gitlab", "-s", "NOEQUALS"], "expected NAME=VALUE, got 'NOEQUALS'", id="bad-setting"),
]


@pytest.mark.parametrize(("args", "message"), USAGE)
def test_usage_errors_exit_2(tmp_path, args, message):
    sources = write_sources(tmp_path / "sources.toml", '[sources.gitlab]\nspider = "greenhouse"\nboards = ["gitlab"]\n')
    proc = crawl(tmp_path / "jobs.db", sources, *args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not (tmp_path / "jobs.db").exists()


# --------------------------------------------------------------------------- offline: one line per failing source


def closed_port() -> int:
    """A port of 127.0.0.1 nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


OFFLINE = """
[defaults]
settings = {{ RETRY_TIMES = 1, JOBCRAWL_RETRY_BACKOFF = 0.1, DOWNLOAD_TIMEOUT = 20 }}

[sources.nowhere]
spider = "greenhouse"
boards = ["acme"]
base_url = "https://boards.example.invalid"

[sources.closed]
spider = "lever"
boards = ["acme"]
base_url = "http://127.0.0.1:{port}"
"""


def test_offline_crawl_is_one_line_per_source_and_exit_3(tmp_path):
    port = closed_port()
    sources = write_sources(tmp_path / "sources.toml", OFFLINE.format(port=port))
    proc = crawl(tmp_path / "jobs.db", sources, "--all")
    assert proc.returncode == 3, proc.stderr
    assert problem_lines(proc.stderr) == ["nowhere: failed: DNS lookup failed for boards.example.invalid",
                                        f"closed: failed: connection refused by 127.0.0.1:{port}"]
    assert [(r["status"], r["errors"]) for r in runs(tmp_path / "jobs.db").values()] == [("failed", 1), ("failed", 1)]


def test_verbose_offline_crawl_names_each_request_and_shows_tracebacks(tmp_path):
    port = closed_port()
    sources = write_sources(tmp_path / "sources.toml", OFFLINE.format(port=port))
    proc = crawl(tmp_path / "jobs.db", sources, "closed", "-v")
    assert proc.returncode == 3
    lines = proc.stderr.splitlines()
    assert f"closed: failed: http://127.0.0.1:{port}/v0/postings/acme?mode=json: connection refused by " \
           f"127.0.0.1:{port}" in lines
    assert f"closed: failed: connection refused by 127.0.0.1:{port}" in lines
    assert "Traceback (most recent call last):" in lines
    assert any("Gave up retrying" in line for line in lines)


def test_a_failing_source_beside_a_good_one_is_a_partial_run(server, tmp_path):
    port = closed_port()
    body = OFFLINE.format(port=port) + f'\n[sources.gitlab]\nspider = "greenhouse"\nboards = ["gitlab"]\n' \
                                       f'base_url = "{server.base}/greenhouse"\n'
    proc = crawl(tmp_path / "jobs.db", write_sources(tmp_path / "sources.toml", body), "--all")
    assert proc.returncode == 1, proc.stderr
    assert problem_lines(proc.stderr) == ["nowhere: failed: DNS lookup failed for boards.example.invalid",
                                        f"closed: failed: connection refused by 127.0.0.1:{port}"]
    assert {source: run["status"] for source, run in runs(tmp_path / "jobs.db").items()} == {
        "nowhere": "failed", "closed": "failed", "gitlab": "ok"}


# --------------------------------------------------------------------------- where the sources file is looked for


def test_bare_crawl_names_where_it_looked_for_the_sources_file(tmp_path):
    proc = run_cli("crawl", "--all", "--db", str(tmp_path / "jobs.db"), cwd=tmp_path, env={"JOBCRAWL_SOURCES": ""})
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == (
        f"Error: no sources file: --sources not given, $JOBCRAWL_SOURCES not set, no sources.toml in {tmp_path}; "
        "name one, e.g. --sources seeds/sources.toml (the bundled example)")
    assert not (tmp_path / "jobs.db").exists()


def test_the_sources_file_comes_from_the_environment_then_the_working_folder(tmp_path):
    port = closed_port()
    one = ('[sources.{name}]\nspider = "lever"\nboards = ["acme"]\nbase_url = "http://127.0.0.1:%d"\n'
           'settings = {{ RETRY_TIMES = 0 }}\n' % port)
    write_sources(tmp_path / "env.toml", one.format(name="from_env"))
    write_sources(tmp_path / "sources.toml", one.format(name="from_cwd"))
    by_env = run_cli("crawl", "--all", "--db", "jobs.db", cwd=tmp_path, env={"JOBCRAWL_SOURCES": "env.toml"})
    by_cwd = run_cli("crawl", "--all", "--db", "jobs.db", cwd=tmp_path, env={"JOBCRAWL_SOURCES": ""})
    assert (by_env.returncode, by_cwd.returncode) == (3, 3)
    assert by_env.stdout.startswith("from_env: ") and by_cwd.stdout.startswith("from_cwd: ")
