"""Import gaps found on recorded public data: a Workable account without a widget (read through the v3 jobs list, in a
real crawl against the mock server on 127.0.0.1), Workday's ``2 Locations``, JobSpy CSVs written with
``escapechar="\\\\"`` and the currency a bare ``$`` stands for in each dollar country."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from conftest import export_records, run_cli
from crawler.ingest.table import TableOptions, TableReport, parse_table
from crawler.web.pages.workday import WorkdayPage
from crawler.web.spiders.paged import merge_listed
from normalize.models import RawPosting
from normalize.posting import normalize_posting
from test_crawl import crawl, runs, server, write_sources  # noqa: F401 (server: the fixture)

ATS = Path(__file__).resolve().parents[1] / "fixtures" / "web" / "ats"
FETCHED = "2026-11-29T04:00:00+00:00"
WD_SITE = "https://exampleai.wd5.myworkdayjobs.com/wday/cxs/exampleai/External"


# --------------------------------------------------------------------------- Workday: a count of locations


def _workday_listing(locations_text: str) -> WorkdayPage:
    body = {"total": 1, "jobPostings": [{"title": "Compiler Engineer", "externalPath": "/job/X/Compiler_JR-9",
                                          "locationsText": locations_text, "postedOn": "Posted Today"}]}
    return WorkdayPage(f"{WD_SITE}/jobs", json.dumps(body).encode(), fetched_at=FETCHED)


WORKDAY_LOCATIONS = [
    pytest.param("2 Locations", ("2 Locations", None), id="count-kept-raw-no-city"),
    pytest.param("Multiple Locations", ("Multiple Locations", None), id="multiple-kept-raw-no-city"),
    pytest.param("Santa Clara, CA", ("Santa Clara, CA", "Santa Clara"), id="one-place-names-the-city"),
    pytest.param("Berlin", ("Berlin", "Berlin"), id="city-alone"),
]


@pytest.mark.parametrize(("text", "expected"), WORKDAY_LOCATIONS)
def test_workday_list_item_location(text, expected):
    [item] = _workday_listing(text).to_items()
    posting = normalize_posting(item)
    assert (posting.location_raw, posting.city) == expected


def test_workday_detail_names_the_city_of_a_counted_listing():
    [listed] = _workday_listing("2 Locations").to_items()
    detail_body = json.loads((ATS / "workday_job_JR-2001.json").read_bytes())
    detail_body["jobPostingInfo"]["jobPostingId"] = "Compiler_JR-9"
    [detail] = WorkdayPage(f"{WD_SITE}/job/X/Compiler_JR-9", json.dumps(detail_body).encode(),
                           fetched_at=FETCHED).to_items()
    posting = normalize_posting(merge_listed(detail, listed))
    assert (posting.location_raw, posting.city, posting.extra["locations_text"]) == (
        "Santa Clara, CA", "Santa Clara", "2 Locations")


# --------------------------------------------------------------------------- Workable: widget 404 → v3 jobs list

WORKABLE_SOURCES = """
[sources.nowidget]
spider = "workable"
boards = ["exampledata"]
base_url = "{base}/nowidget"
company = "Example Data"

[sources.widget]
spider = "workable"
boards = ["examplerobotics"]
base_url = "{base}/workable"

[sources.ghost]
spider = "workable"
boards = ["ghost"]
base_url = "{base}/workable"
"""

NOTE = ('nowidget: note: workable:exampledata: the widget endpoint answered 404; the v3 jobs list answered '
        '(api = "v3" in the source goes there directly)')


@pytest.fixture(scope="module")
def workable_run(server, tmp_path_factory):
    """One `crawl --all`: an account with no widget but a v3 jobs list (the recorded v3 pages and details, served
    under ``/nowidget``), one with a widget, one with neither."""
    root = server.root / "nowidget" / "api"
    for name, target in [("workable_jobs_0.json", "v3/accounts/exampledata/jobs.json"),
                         ("workable_jobs_T2.json", "v3/accounts/exampledata/jobs@token=T2.json"),
                         ("workable_job_K1K1K1K1K1.json", "v2/accounts/exampledata/jobs/K1K1K1K1K1.json"),
                         ("workable_job_K2K2K2K2K2.json", "v2/accounts/exampledata/jobs/K2K2K2K2K2.json")]:
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ATS / name, root / target)
    tmp = tmp_path_factory.mktemp("workable")
    db = tmp / "jobs.db"
    sources = write_sources(tmp / "sources.toml", WORKABLE_SOURCES.format(base=server.base))
    before = len(server.hits())
    proc = crawl(db, sources, "--all")
    return proc, [(h.method, h.uri, h.status) for h in server.hits()[before:] if h.path != "/robots.txt"], runs(db)


@pytest.mark.slow
def test_widget_404_reads_the_v3_jobs_list(workable_run):
    proc, hits, got = workable_run
    mine = [h for h in hits if h[1].startswith("/nowidget/")]
    assert mine[:3] + sorted(mine[3:]) == [  # the details in any order
        ("GET", "/nowidget/api/v1/widget/accounts/exampledata?details=true", 404),
        ("POST", "/nowidget/api/v3/accounts/exampledata/jobs", 200),
        ("POST", "/nowidget/api/v3/accounts/exampledata/jobs", 200),
        ("GET", "/nowidget/api/v2/accounts/exampledata/jobs/K1K1K1K1K1", 200),
        ("GET", "/nowidget/api/v2/accounts/exampledata/jobs/K2K2K2K2K2", 200),
        ("GET", "/nowidget/api/v2/accounts/exampledata/jobs/K3K3K3K3K3", 404),
    ]
    run = got["nowidget"]
    assert (run["status"], run["found"], run["new"], run["errors"], run["stats"]["jobcrawl/notes"]) == (
        "ok", 3, 3, 0, [NOTE.split(": note: ")[1]])
    assert [line for line in proc.stderr.splitlines() if ": note: " in line] == [NOTE]


@pytest.mark.slow
def test_widget_that_answers_never_asks_v3(workable_run):
    _, hits, got = workable_run
    assert [h for h in hits if "/examplerobotics" in h[1]] == [
        ("GET", "/workable/api/v1/widget/accounts/examplerobotics?details=true", 200)]
    assert (got["widget"]["status"], got["widget"]["found"], "jobcrawl/notes" in got["widget"]["stats"]) == (
        "ok", 2, False)


@pytest.mark.slow
def test_neither_endpoint_answers_both_are_reported(workable_run):
    proc, hits, got = workable_run
    assert [h for h in hits if "/ghost" in h[1]] == [
        ("GET", "/workable/api/v1/widget/accounts/ghost?details=true", 404),
        ("POST", "/workable/api/v3/accounts/ghost/jobs", 404)]
    assert (got["ghost"]["status"], got["ghost"]["found"], got["ghost"]["errors"]) == ("failed", 0, 2)
    assert "ghost: failed: HTTP 404 ×2" in proc.stderr.splitlines()
    assert proc.returncode == 1


# --------------------------------------------------------------------------- JobSpy CSVs, however they were saved

JOBSPY_COLUMNS = ["id", "site", "job_url", "title", "company", "location", "date_posted", "job_type", "interval",
                  "min_amount", "max_amount", "currency", "is_remote", "description"]
MARKDOWN = ('**About us**\n\nWe build next\\-generation tools\\. Our R\\&D team ships weekly\\.\n\n'
            '**Pay:** $17\\-$22/hr \\(plus tips\\)\\. Say "hi" to C:\\\\Jobs\\.')
"""A description as JobSpy holds it (scrape_jobs(description_format="markdown")): Markdown with its escapes."""
DESCRIPTION = ('**About us**\n\nWe build next-generation tools. Our R&D team ships weekly.\n\n'
               '**Pay:** $17-$22/hr (plus tips). Say "hi" to C:\\Jobs.')
JOBSPY_ROWS = [
    ["in-1", "indeed", "https://www.indeed.com/viewjob?jk=1", "Barista", "Bean Co", "Austin, TX, US", "2026-11-20",
     "parttime", None, None, None, None, False, MARKDOWN],
    ["in-2", "indeed", "https://www.indeed.com/viewjob?jk=2", "Shift Lead", "Bean Co", "Austin, TX, US", "2026-11-21",
     "fulltime", "hourly", 17.0, 22.0, "USD", False, "Lead the floor\\. Pay is $17\\-$22/hr\\."],
]


def jobspy_csv(**writer) -> bytes:
    """The rows as pandas' ``to_csv(**writer)`` writes them (numbers unquoted, a missing value empty)."""
    out = io.StringIO()
    rows = csv.writer(out, **writer)
    rows.writerow(JOBSPY_COLUMNS)
    rows.writerows(JOBSPY_ROWS)
    return out.getvalue().encode()


def read_table(data: bytes, **options) -> tuple[list, TableReport]:
    report = TableReport(locator="jobs.csv", format="csv")
    return list(parse_table(data, locator="jobs.csv", fetched_at=FETCHED, as_of=FETCHED, fmt="csv",
                            options=TableOptions(**options), report=report)), report


SAVED = [
    pytest.param({"quoting": csv.QUOTE_NONNUMERIC, "escapechar": "\\"}, True, id="jobspy-readme-escapechar"),
    pytest.param({"quoting": csv.QUOTE_NONNUMERIC, "escapechar": "\\", "doublequote": False}, True,
                 id="escapechar-no-doublequote"),
    pytest.param({}, False, id="plain-to_csv"),
]


@pytest.mark.parametrize(("writer", "escaped"), SAVED)
@pytest.mark.parametrize("preset", [pytest.param("jobspy", id="preset"), pytest.param(None, id="sniffed")])
def test_jobspy_csv_reads_as_written(writer, escaped, preset):
    items, report = read_table(jobspy_csv(**writer), preset=preset)
    first, second = [i for i in items if isinstance(i, RawPosting)]
    assert (report.preset, report.backslash_escapes, report.postings, report.quarantined) == ("jobspy", escaped, 2, 0)
    assert ("backslash escapes" in report.line()) is escaped
    assert (first.description, second.description) == (DESCRIPTION, "Lead the floor. Pay is $17-$22/hr.")
    salaries = [normalize_posting(p).salary for p in (first, second)]
    assert [(s.min, s.max, s.currency, s.period, s.source) for s in salaries] == [
        (17, 22, "USD", "hour", "text"), (17, 22, "USD", "hour", "field")]


SNIFFED = [
    pytest.param(b'a,b\n"x","no backslash"\n', False, id="no-backslash"),
    pytest.param(b'a,b\n"x","next\\-gen"\n', False, id="lone-backslash-is-plain"),
    pytest.param(b'a,b\n"x","next\\\\-gen \\\\\\\\ ok"\n', True, id="backslashes-in-pairs"),
    pytest.param(b'a,b\n"x","say \\"hi\\""\n', True, id="backslash-quote"),
    pytest.param(b'a,b\n"x","a\\\\-b"\n"y","c\\d"\n', False, id="one-odd-run-is-plain"),
]


@pytest.mark.parametrize(("data", "escaped"), SNIFFED)
def test_backslash_escapes_are_decided_per_file(data, escaped):
    items, report = read_table(data, preset="none", mapping={"title": "a", "company": "a", "description": "b"})
    assert report.backslash_escapes is escaped
    assert report.quarantined == 0


# --------------------------------------------------------------------------- a bare $ follows the posting's country

CURRENCIES = [
    # location, url, text → (min, max, currency, period)
    pytest.param("Toronto, ON, Canada", None, "Pay: $17-$22/hr", (17, 22, "CAD", "hour"), id="toronto-canada"),
    pytest.param("Toronto, ON", None, "Pay: $17-$22/hr", (17, 22, "CAD", "hour"), id="province-code"),
    pytest.param("Toronto", "https://ca.indeed.com/viewjob?jk=1", "Pay: $17-$22/hr", (17, 22, "CAD", "hour"),
                 id="ca-indeed-host"),
    pytest.param("Sydney, NSW", None, "Salary: $90,000 to $110,000 per year", (90000, 110000, "AUD", "year"),
                 id="australian-state"),
    pytest.param(None, "https://www.seek.com.au/job/1", "Salary: $90,000 to $110,000 per year",
                 (90000, 110000, "AUD", "year"), id="au-domain"),
    pytest.param("Auckland, New Zealand", None, "Pay: $30/hour", (30, 30, "NZD", "hour"), id="new-zealand"),
    pytest.param("Singapore", None, "Salary: $5,000 to $7,000 per month", (5000, 7000, "SGD", "month"), id="singapore"),
    pytest.param("Hong Kong", None, "Salary: $30,000 to $40,000 per month", (30000, 40000, "HKD", "month"),
                 id="hong-kong"),
    pytest.param("Austin, TX", None, "Pay: $17-$22/hr", (17, 22, "USD", "hour"), id="us-state"),
    pytest.param("Perth, WA", None, "Pay: $17-$22/hr", (17, 22, "USD", "hour"), id="state-of-two-countries-no-country"),
    pytest.param(None, None, "Pay: $17-$22/hr", (17, 22, "USD", "hour"), id="no-country-keeps-usd"),
    pytest.param(None, "A://[", "Pay: $17-$22/hr", (17, 22, "USD", "hour"), id="url-that-is-no-url"),
    pytest.param("Berlin, Germany", None, "Salary: $90,000 to $110,000 per year", (90000, 110000, "USD", "year"),
                 id="not-a-dollar-country"),
    pytest.param("Toronto, ON, Canada", None, "Pay: US$17-$22/hr", (17, 22, "USD", "hour"), id="us-dollar-wins"),
    pytest.param("Austin, TX", None, "Pay: C$17-22/hr", (17, 22, "CAD", "hour"), id="c-dollar-wins"),
    pytest.param("Austin, TX", None, "Pay: CA$17-22/hr", (17, 22, "CAD", "hour"), id="ca-dollar-wins"),
    pytest.param("Toronto, ON", None, "Salary: A$90,000 to A$110,000 per year", (90000, 110000, "AUD", "year"),
                 id="a-dollar-wins"),
    pytest.param("Singapore", None, "Salary: HK$30,000 to HK$40,000 per month", (30000, 40000, "HKD", "month"),
                 id="hk-dollar-wins"),
    pytest.param("Austin, TX", None, "Salary: $80,000 to $95,000 CAD per year", (80000, 95000, "CAD", "year"),
                 id="cad-code-wins"),
    pytest.param("Toronto, ON", None, "Salary: $80,000 to $95,000 USD per year", (80000, 95000, "USD", "year"),
                 id="usd-code-wins"),
    pytest.param("Toronto, ON", None, "Base salary: $150,000", (150000, 150000, "CAD", "year"),
                 id="single-yearly-amount"),
]


def _raw(location, url, **fields) -> RawPosting:
    return RawPosting(source="test", source_id="1", locator="t", fetched_at=FETCHED, as_of=FETCHED, title="Barista",
                      company="Bean Co", location=location, url=url, **fields)


@pytest.mark.parametrize(("location", "url", "text", "expected"), CURRENCIES)
def test_bare_dollar_follows_the_country(location, url, text, expected):
    from_text = normalize_posting(_raw(location, url, description=f"About the job.\n{text}")).salary
    from_field = normalize_posting(_raw(location, url, salary=text)).salary
    assert (from_text.min, from_text.max, from_text.currency, from_text.period) == expected
    assert (from_field.min, from_field.max, from_field.currency, from_field.period) == expected


@pytest.mark.slow
def test_jobspy_row_in_toronto_is_paid_in_cad(tmp_path):
    row = ["in-9", "indeed", "https://ca.indeed.com/viewjob?jk=9", "Barista", "Bean Co", "Toronto, ON, Canada",
           "2026-11-20", "parttime", None, None, None, None, False, MARKDOWN]
    out = io.StringIO()
    rows = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, escapechar="\\")
    rows.writerows([JOBSPY_COLUMNS, row])
    (tmp_path / "toronto.csv").write_text(out.getvalue(), encoding="utf-8")
    db = tmp_path / "jobs.db"
    run_cli("ingest", str(tmp_path / "toronto.csv"), "--preset", "jobspy", "--db", str(db), check=True)
    [record] = export_records(db)
    s = record["salary"]
    assert (record["city"], s["raw"], s["min"], s["max"], s["currency"], s["period"]) == (
        "Toronto", "$17-$22/hr", 17, 22, "CAD", "hour")
    assert record["description"] == DESCRIPTION
