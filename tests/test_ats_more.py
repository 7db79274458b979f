"""Workable, SmartRecruiters, Recruitee and Workday: page objects on recorded bodies (exact fields, errors),
the shared pieces (pay lines, multi-part descriptions, listing + detail merge), and real crawls of the
recorded bodies served by the mock server on 127.0.0.1 (paging, details, a detail that answers 404,
revalidation, closing)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from crawler.web.pages.base import PageError
from crawler.web.pages.parts import describe_parts, pay_line, pay_object, pay_period
from crawler.web.pages.recruitee import RecruiteePage
from crawler.web.pages.smartrecruiters import SmartRecruitersPage
from crawler.web.pages.workable import WorkablePage
from crawler.web.pages.workday import WorkdayPage
from crawler.web.sources import SourcesError, load_sources
from crawler.web.spiders.paged import merge_listed
from normalize.models import RawPosting, RawSection
from normalize.posting import content_hash, normalize_posting
from test_crawl import crawl, crawl_twice, runs, server, table, write_sources  # noqa: F401 (server: the fixture)

WEB = Path(__file__).resolve().parents[1] / "fixtures" / "web"
ATS = WEB / "ats"
FETCHED = "2026-11-29T04:00:00+00:00"
RECRUITEE_URL = "https://examplevision.recruitee.com/api/offers/"
SR_API = "https://api.smartrecruiters.com/v1/companies/ExampleAI/postings"
WD_SITE = "https://exampleai.wd5.myworkdayjobs.com/wday/cxs/exampleai/External"
WIDGET_URL = "https://apply.workable.com/api/v1/widget/accounts/examplerobotics?details=true"
V3_URL = "https://apply.workable.com/api/v3/accounts/exampledata/jobs"
V2_URL = "https://apply.workable.com/api/v2/accounts/exampledata/jobs/{}"


def body(name: str) -> bytes:
    return (ATS / name).read_bytes()


def fields(item: RawPosting) -> dict:
    """What a test pins down: the posting without its provenance; sections as (heading, lines). The salary's numbers
    (``salary_parts``) are checked in test_api_pay_objects_are_stored_as_their_numbers."""
    data = item.model_dump(exclude_defaults=True, exclude={"source", "locator", "input_sha256", "fetched_at", "as_of",
                                                           "position", "complete_listing", "sections", "salary_parts"})
    if item.sections:
        data["sections"] = [(s.heading, s.lines) for s in item.sections]
    return data


# --------------------------------------------------------------------------- shared pieces

PAY_LINES = [
    pytest.param(["We pay well.", "Salary: €60,000–€75,000 per annum"], "Salary: €60,000–€75,000 per annum", id="label-euro"),
    pytest.param(["薪资：40-60K·15薪"], "薪资：40-60K·15薪", id="chinese-k-months"),
    pytest.param(["- The base salary range for this role is $150,000 - $190,000 per year."],
                 "The base salary range for this role is $150,000 - $190,000 per year.", id="bullet-sentence"),
    pytest.param(["Pay: CHF 3,000 per month."], "Pay: CHF 3,000 per month.", id="currency-code"),
    pytest.param(["日薪 300元"], "日薪 300元", id="yuan-per-day"),
    pytest.param(["Competitive compensation and a 401(k) plan", "Great 401k matching and salary reviews"], None,
                 id="401k-is-no-pay"),
    pytest.param(["Competitive salary and equity"], None, id="pay-word-without-amount"),
    pytest.param(["Budget of $2,000 for your home office"], None, id="amount-without-pay-word"),
    pytest.param(["Salary: $100,000 " + "and more " * 25], None, id="prose-longer-than-200"),
    pytest.param(["Offices in 3 cities", "Compensation review twice a year; 25 days of leave"], None,
                 id="figures-but-no-money"),
]


@pytest.mark.parametrize(("lines", "expected"), PAY_LINES)
def test_pay_line(lines, expected):
    assert pay_line([RawSection(heading="Benefits", lines=lines)], None) == expected
    assert pay_line([], "\n".join(lines)) == expected


PAY_OBJECTS = [
    pytest.param({"max": "5250", "min": "3750", "period": "month", "currency": "EUR"}, "EUR 3750-5250/MONTH",
                 id="recruitee-strings"),
    pytest.param({"min": 95000, "max": 130000, "currency": "USD", "period": "YEARLY"}, "USD 95000-130000/YEAR",
                 id="smartrecruiters-numbers"),
    pytest.param({"min": 45.5, "max": None, "currency": "GBP", "period": "per_hour"}, "GBP 45.5/HOUR", id="min-only-hourly"),
    pytest.param({"min": 4000, "max": 4000, "currency": "EUR", "period": "fortnight"}, "EUR 4000/fortnight",
                 id="unknown-period-as-written"),
    pytest.param({"max": None, "min": None, "period": None, "currency": None}, None, id="no-figures"),
    pytest.param("EUR 4000", None, id="not-an-object"),
]


@pytest.mark.parametrize(("value", "expected"), PAY_OBJECTS)
def test_pay_object(value, expected):
    assert pay_object(value) == expected


@pytest.mark.parametrize(("word", "expected"), [
    pytest.param("month", "MONTH", id="month"), pytest.param("YEARLY", "YEAR", id="yearly"),
    pytest.param("Annual", "YEAR", id="annual"), pytest.param("per_day", "DAY", id="per-day"),
    pytest.param("hourly", "HOUR", id="hourly"), pytest.param("weekly", "WEEK", id="weekly"),
    pytest.param("quarter", "quarter", id="unknown-as-written"), pytest.param("", None, id="empty"),
])
def test_pay_period(word, expected):
    assert pay_period(word) == expected


DESCRIBE_PARTS = [
    pytest.param([(None, "<p>Intro</p>"), ("Requirements", "<ul><li>CUDA</li></ul>"), ("Benefits", "")],
                 (None, [("", ["Intro"]), ("Requirements", ["CUDA"])]), id="headings-added-empty-part-skipped"),
    pytest.param([("Qualifications", "<p><strong>Qualifications</strong></p><ul><li>C++</li></ul>")],
                 (None, [("Qualifications", ["C++"])]), id="heading-not-repeated"),
    pytest.param([(None, "<p>One</p>"), (None, "<p>Two</p>")], ("One\nTwo", []), id="no-heading-is-text"),
    pytest.param([(None, "<h4>What you do</h4><ul><li>Train</li></ul>"), (None, "<h4>What you bring</h4><p>Go</p>")],
                 (None, [("What you do", ["Train"]), ("What you bring", ["Go"])]), id="headings-inside-the-parts"),
    pytest.param([("Job", None), ("Job", 42)], (None, []), id="no-text-at-all"),
]


@pytest.mark.parametrize(("parts", "expected"), DESCRIBE_PARTS)
def test_describe_parts(parts, expected):
    description, sections = describe_parts(parts)
    assert (description, [(s.heading, s.lines) for s in sections]) == expected


def _raw(**kwargs) -> RawPosting:
    base = dict(source="workday", source_id="t:JR-1", locator="http://x/list", fetched_at=FETCHED, as_of=FETCHED)
    return RawPosting(**{**base, **kwargs})


def test_merge_listed_detail_wins_listing_fills_gaps():
    listed = _raw(position=3, title="Listed title", location="Santa Clara, CA", posted="Posted 3 Days Ago",
                  complete_listing=True, extra={"external_path": "/job/x_JR-1", "locations_text": "Santa Clara, CA"})
    detail = _raw(locator="http://x/detail", title="Detail title", posted="2026-11-25", employment_type="Full time",
                  sections=[RawSection(heading="Pay", lines=["$1"])], extra={"job_req_id": "JR-1"})
    merged = merge_listed(detail, listed)
    assert (merged.locator, merged.position, merged.complete_listing) == ("http://x/detail", 0, True)
    assert fields(merged) == {
        "source_id": "t:JR-1", "title": "Detail title", "location": "Santa Clara, CA", "posted": "2026-11-25",
        "employment_type": "Full time", "sections": [("Pay", ["$1"])],
        "extra": {"external_path": "/job/x_JR-1", "locations_text": "Santa Clara, CA", "job_req_id": "JR-1"},
    }


def test_merge_listed_takes_the_listing_text_only_when_the_detail_has_none():
    listed = _raw(description="Listed teaser")
    assert merge_listed(_raw(sections=[RawSection(heading="A", lines=["b"])]), listed).description is None
    assert merge_listed(_raw(), listed).description == "Listed teaser"


# --------------------------------------------------------------------------- Recruitee


def test_recruitee_offers():
    page = RecruiteePage(RECRUITEE_URL, body("recruitee_offers.json"), fetched_at=FETCHED)
    engineer, intern = page.to_items()
    assert (page.board, page.problems, engineer.complete_listing, intern.position) == ("examplevision", [], True, 1)
    assert fields(engineer) == {
        "source_id": "3100001", "url": "https://careers.example.com/o/computer-vision-engineer",
        "company": "Example Vision B.V.", "title": "Computer Vision Engineer",
        "location": "Amsterdam, North Holland, Netherlands", "posted": "2026-10-02 08:00:00 UTC",
        "employment_type": "fulltime_permanent", "work_mode": "Hybrid", "category": "Perception",
        "experience": "mid_level", "education": "master_degree", "tags": ["PyTorch", "TensorRT"],
        "salary": "EUR 5000-6500/MONTH",
        "sections": [("", ["Example Vision builds camera systems that understand warehouses."]),
                     ("What you will do", ["Train detection and segmentation models in PyTorch",
                                           "Quantize and deploy them with TensorRT on Jetson devices"]),
                     ("What you bring", ["3+ years of computer vision in production",
                                         "CUDA and C++ for pre- and post-processing"])],
        "extra": {"slug": "computer-vision-engineer", "guid": "evcv1", "country_code": "NL", "state_code": "NH",
                  "postal_code": "1011 AB", "careers_apply_url": "https://careers.example.com/o/computer-vision-engineer/c/new",
                  "category_code": "engineering", "min_hours": "32", "max_hours": "40",
                  "updated_at": "2026-10-03 16:40:02 UTC", "status": "published", "locations": "Amsterdam",
                  "highlight": "Ship vision models to 10,000 edge devices.",
                  "salary_json": '{"max":"6500","min":"5000","period":"month","currency":"EUR"}'},
    }
    assert {k: v for k, v in fields(intern).items() if k != "extra"} == {
        "source_id": "3100002", "url": "https://careers.example.com/o/edge-ai-intern", "company": "Example Vision B.V.",
        "title": "Edge AI Intern", "location": "Eindhoven, North Brabant, Netherlands",
        "posted": "2026-09-21 11:30:00 UTC", "valid_through": "2026-12-31 23:59:59 UTC", "employment_type": "internship",
        "work_mode": "On-site", "category": "Research", "experience": "student_college", "education": "bachelor_degree",
        "salary": "Compensation: €1,200 per month internship allowance.",
        "description": "Six months in our research team: compress a vision transformer until it runs on a microcontroller.\n"
                       "Compensation: €1,200 per month internship allowance.",
    }
    assert "salary_json" not in intern.extra


@pytest.mark.parametrize(("url", "board", "company", "expected"), [
    pytest.param(RECRUITEE_URL, None, "Example Vision", ("examplevision", "Example Vision"), id="configured-company-wins"),
    pytest.param("https://careers.example.com/api/offers/", "examplevision", None, ("examplevision", "Example Vision B.V."),
                 id="own-domain-board-given"),
    pytest.param("http://127.0.0.1:8000/recruitee/examplevision/api/offers/", None, None, (None, "Example Vision B.V."),
                 id="no-board-company-from-offer"),
])
def test_recruitee_board_and_company(url, board, company, expected):
    page = RecruiteePage(url, body("recruitee_offers.json"), fetched_at=FETCHED, board=board, company=company)
    assert (page.board, page.to_items()[0].company) == expected


def test_recruitee_single_offer():
    offer = json.loads(body("recruitee_offers.json"))["offers"][1]
    page = RecruiteePage(RECRUITEE_URL + "edge-ai-intern", json.dumps({"offer": offer}), fetched_at=FETCHED)
    [item] = page.to_items()
    assert (item.source_id, item.complete_listing, page.complete_listing()) == ("3100002", False, False)


# --------------------------------------------------------------------------- SmartRecruiters


def test_smartrecruiters_listing_pages():
    first = SmartRecruitersPage(f"{SR_API}?limit=2&offset=0", body("smartrecruiters_postings_0.json"), fetched_at=FETCHED)
    last = SmartRecruitersPage(f"{SR_API}?limit=2&offset=2", body("smartrecruiters_postings_2.json"), fetched_at=FETCHED)
    assert (first.board, first.next_offset(), last.next_offset()) == ("ExampleAI", 2, None)
    senior, cuda = first.to_items()
    [technician] = last.to_items()
    assert [i.complete_listing for i in (senior, cuda, technician)] == [True, True, True]
    assert fields(technician) == {
        "source_id": "744000200000003", "url": "https://jobs.smartrecruiters.com/ExampleAI/744000200000003",
        "company": "Example AI Pte. Ltd.", "title": "Data Center Technician", "location": "Shenzhen, Guangdong, China",
        "posted": "2026-11-02T06:30:00.000Z", "seniority": "Entry Level", "employment_type": "Contract",
        "category": "Information Technology",
        "extra": {"refNumber": "REF2003C", "uuid": "00000000-0000-4000-8000-000200000003", "visibility": "PUBLIC",
                  "industry": "Computer Software", "department": "AI Infrastructure", "language": "en",
                  "custom.Brands": "Example AI", "custom.Country/Region": "China"},
    }
    assert (senior.work_mode, senior.salary, senior.description, senior.sections) == ("Hybrid", None, None, [])


def test_smartrecruiters_detail_with_compensation():
    page = SmartRecruitersPage(f"{SR_API}/744000200000001", body("smartrecruiters_posting_744000200000001.json"),
                               fetched_at=FETCHED)
    [item] = page.to_items()
    assert item.complete_listing is False
    assert fields(item) == {
        "source_id": "744000200000001", "url": "https://jobs.smartrecruiters.com/ExampleAI/744000200000001-x",
        "company": "Example AI Pte. Ltd.", "title": "Senior LLM Inference Engineer",
        "location": "Singapore, Singapore, Singapore", "posted": "2026-11-20T03:15:00.000Z",
        "seniority": "Mid-Senior Level", "employment_type": "Full-time", "work_mode": "Hybrid", "category": "Engineering",
        "salary": "SGD 120000-160000/YEAR",
        "sections": [("Company Description", ["Example AI runs inference clusters for open-weight models across Asia."]),
                     ("Job Description", ["Own the continuous-batching scheduler of our serving stack",
                                          "Cut time-to-first-token at p99", "Profile kernels with Nsight Systems"]),
                     ("Qualifications", ["vLLM or SGLang internals", "CUDA, C++ and Python"]),
                     ("Additional Information", ["Hybrid: three days a week in our Singapore office."])],
        "extra": {"refNumber": "REF2001A", "uuid": "00000000-0000-4000-8000-000200000001",
                  "applyUrl": "https://jobs.smartrecruiters.com/ExampleAI/744000200000001-x?oga=true",
                  "visibility": "PUBLIC", "industry": "Computer Software", "department": "AI Infrastructure",
                  "language": "en", "custom.Brands": "Example AI", "custom.Country/Region": "Singapore",
                  "salary_json": '{"min":120000,"max":160000,"currency":"SGD","period":"YEARLY"}'},
    }


def test_smartrecruiters_detail_salary_from_text():
    page = SmartRecruitersPage(f"{SR_API}/744000200000002", body("smartrecruiters_posting_744000200000002.json"),
                               fetched_at=FETCHED)
    [item] = page.to_items()
    assert (item.salary, [s.heading for s in item.sections], item.sections[2].lines) == (
        "薪资：40-60K·15薪", ["Company Description", "岗位职责", "任职要求", "Additional Information"],
        ["熟悉 CUDA 编程与 GPU 体系结构", "熟练使用 C++", "有 Triton 经验者优先"])
    assert "salary_json" not in item.extra


def test_smartrecruiters_sections_given_as_a_list():
    page = SmartRecruitersPage(f"{SR_API}/1", json.dumps({"id": "1", "name": "X", "jobAd": {"sections": [
        {"title": "Job Description", "text": "<p>Build</p>"}, "junk", {"title": "Qualifications", "text": "<p>Go</p>"}]}}),
        fetched_at=FETCHED)
    assert [(s.heading, s.lines) for s in page.to_items()[0].sections] == [("Job Description", ["Build"]),
                                                                          ("Qualifications", ["Go"])]


# --------------------------------------------------------------------------- Workday


def test_workday_listing_pages():
    first = WorkdayPage(f"{WD_SITE}/jobs", body("workday_jobs_0.json"), fetched_at=FETCHED)
    last = WorkdayPage(f"{WD_SITE}/jobs", body("workday_jobs_2.json"), fetched_at=FETCHED)
    assert (first.board, first.tenant, first.site, first.paging(), last.paging()) == (
        "exampleai/External", "exampleai", "External", (2, 3), (1, None))  # later pages report total 0
    senior, sre = first.to_items()
    [compiler] = last.to_items()
    assert fields(senior) == {
        "source_id": "exampleai:Senior-LLM-Inference-Engineer_JR-2001",
        "url": "https://exampleai.wd5.myworkdayjobs.com/External/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001",
        "company": "exampleai", "title": "Senior LLM Inference Engineer", "location": "Santa Clara, CA",
        "posted": "Posted 3 Days Ago",
        "extra": {"external_path": "/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001", "bullet_fields": "JR-2001",
                  "locations_text": "Santa Clara, CA"},
    }
    assert (sre.title, sre.location, sre.posted) == ("GPU 集群运维工程师", "China, Shanghai", "Posted Yesterday")
    # "2 Locations" counts places: kept as written, it names no city (tests/test_import_gaps.py)
    assert (compiler.location, compiler.extra["locations_text"], compiler.complete_listing) == ("2 Locations", "2 Locations", True)


WORKDAY_NEXT = [
    pytest.param(None, {"total": 3, "jobPostings": [{}, {}]}, (2, 3), id="first-page-announces-3"),
    pytest.param((2, 3), {"total": 0, "jobPostings": [{}]}, None, id="later-page-says-0-first-total-kept"),
    pytest.param((2, 5), {"total": 0, "jobPostings": [{}, {}]}, (4, 5), id="middle-page"),
    pytest.param(None, {"jobPostings": [{}, {}]}, (2, None), id="no-total-full-page-may-have-more"),
    pytest.param((2, None), {"jobPostings": [{}]}, None, id="no-total-short-page-is-last"),
    pytest.param(None, {"total": 3, "jobPostings": []}, None, id="empty-page-is-last"),
]


@pytest.mark.parametrize(("cursor", "data", "expected"), WORKDAY_NEXT)
def test_workday_next_page(cursor, data, expected):
    from crawler.web.spiders.workday import WorkdaySpider

    spider = WorkdaySpider(tenant="exampleai", site="External", wd=5, page_size=2)
    page = WorkdayPage(f"{WD_SITE}/jobs", json.dumps(data), fetched_at=FETCHED)
    assert spider.next_cursor(page, cursor) == expected


def test_workday_detail():
    page = WorkdayPage(f"{WD_SITE}/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001", body("workday_job_JR-2001.json"),
                       fetched_at=FETCHED)
    [item] = page.to_items()
    assert (page.complete_listing(), page.paging()) == (False, (0, None))
    assert fields(item) == {
        "source_id": "exampleai:Senior-LLM-Inference-Engineer_JR-2001",
        "url": "https://exampleai.wd5.myworkdayjobs.com/External/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001",
        "company": "Example AI Inc.", "title": "Senior LLM Inference Engineer", "location": "Santa Clara, CA",
        "posted": "2026-11-25", "employment_type": "Full time", "work_mode": "Hybrid",
        "salary": "The base salary range for this position is $180,000 - $240,000 per year.",
        "sections": [("", ["Example AI serves open-weight models to enterprises."]),
                     ("What you will do", ["Design the KV-cache manager of our inference engine",
                                           "Write CUDA kernels for speculative decoding"]),
                     ("What you bring", ["5+ years of C++ and CUDA", "Experience with TensorRT-LLM or vLLM"]),
                     ("Pay", ["The base salary range for this position is $180,000 - $240,000 per year."])],
        "extra": {"job_req_id": "JR-2001", "country": "United States of America"},
    }


def test_workday_detail_reads_the_same_every_day():
    """The detail's relative texts (posted N days ago, N days left to apply) are not part of the posting."""
    data = json.loads(body("workday_job_JR-2002.json"))
    later = json.loads(body("workday_job_JR-2002.json"))
    later["jobPostingInfo"].update(postedOn="Posted 9 Days Ago", timeLeftToApply="10 days left to apply")
    items = [WorkdayPage(f"{WD_SITE}/job/x", json.dumps(d), fetched_at=FETCHED).to_items()[0] for d in (data, later)]
    assert content_hash(normalize_posting(items[0])) == content_hash(normalize_posting(items[1]))
    assert (items[0].posted, items[0].extra["additional_locations"], items[0].company) == (
        "2026-11-27", "China, Hangzhou", "Example AI Inc.")


# --------------------------------------------------------------------------- Workable


def test_workable_widget():
    page = WorkablePage(WIDGET_URL, body("workable_widget.json"), fetched_at=FETCHED)
    engineer, intern = page.to_items()
    assert (page.board, page.complete_listing(), page.next_token(), engineer.complete_listing) == (
        "examplerobotics", True, None, True)
    assert fields(engineer) == {
        "source_id": "A1B2C3D4E5", "url": "https://apply.workable.com/j/A1B2C3D4E5", "company": "Example Robotics AG",
        "title": "Robot Learning Engineer", "location": "Zurich, Zurich, Switzerland", "posted": "2026-11-10",
        "seniority": "Mid-Senior level", "employment_type": "Full-time", "category": "Autonomy",
        "education": "Master's Degree",
        "sections": [("", ["Teach our mobile manipulators new skills from demonstrations."]),
                     ("Responsibilities", ["Train diffusion policies on fleet data", "Run sim-to-real experiments in Isaac Sim"]),
                     ("Requirements", ["PyTorch and JAX", "ROS 2"])],
        "extra": {"code": "RLE-01", "application_url": "https://apply.workable.com/j/A1B2C3D4E5/apply",
                  "function": "Engineering", "industry": "Robotics", "created_at": "2026-11-01",
                  "locations": "Zurich, Zurich, Switzerland"},
    }
    assert (intern.work_mode, intern.salary) == (
        "Remote", "Help us fuse lidar and camera data for grasp detection. Pay: CHF 3,000 per month.")


def test_workable_jobs_list_pages():
    first = WorkablePage(V3_URL, body("workable_jobs_0.json"), fetched_at=FETCHED)
    last = WorkablePage(V3_URL, body("workable_jobs_T2.json"), fetched_at=FETCHED)
    assert (first.board, first.next_token(), last.next_token()) == ("exampledata", "T2", None)
    platform, annotation = first.to_items()
    assert fields(annotation) == {
        "source_id": "K2K2K2K2K2", "url": "https://apply.workable.com/exampledata/j/K2K2K2K2K2/",
        "company": "exampledata", "title": "Data Annotation Lead", "location": "Athens, Attica, Greece",
        "posted": "2026-11-19T00:00:00.000Z", "employment_type": "full", "work_mode": "on-site", "category": "Data",
        "extra": {"language": "en", "state": "published", "locations": "Athens, Attica, Greece"},
    }
    assert (platform.work_mode, last.to_items()[0].work_mode) == ("remote", "hybrid")


def test_workable_job_detail():
    page = WorkablePage(V2_URL.format("K1K1K1K1K1"), body("workable_job_K1K1K1K1K1.json"), fetched_at=FETCHED,
                        company="Example Data")
    [item] = page.to_items()
    assert (page.complete_listing(), item.company, item.salary) == (False, "Example Data", "Salary: €110,000–€140,000 per year")
    assert [(s.heading, s.lines) for s in item.sections] == [
        ("", ["Example Data labels and curates training data for foundation models.",
              "You will own the platform our training jobs run on."]),
        ("Requirements", ["Kubernetes and Ray at scale", "Python and Go", "Experience running GPU clusters"]),
        ("Benefits", ["Salary: €110,000–€140,000 per year", "Fully remote within the EU"])]


# --------------------------------------------------------------------------- errors

API_ERRORS = [
    pytest.param(RecruiteePage, b'{"error": "Not found"}', ("api_error", "Recruitee API error: Not found"), id="recruitee-error"),
    pytest.param(RecruiteePage, b"[]", ("unexpected_shape", "expected an object with an 'offers' list or one 'offer'; "
                                                            "got a JSON list"), id="recruitee-list"),
    pytest.param(SmartRecruitersPage, b'{"code": "NOT_FOUND", "message": "Company not found"}',
                 ("api_error", "SmartRecruiters API error: Company not found"), id="smartrecruiters-error"),
    pytest.param(WorkdayPage, b'{"errorCode": "HTTP_400", "httpStatus": 400}',
                 ("unexpected_shape", "expected an object with a 'jobPostings' list or a 'jobPostingInfo'; "
                                      "got an object with keys errorCode, httpStatus"), id="workday-shape"),
    pytest.param(WorkablePage, b"<html>Just a moment...</html>", ("bad_json", "invalid JSON: Expecting value (line 1, column 1)"),
                 id="workable-html-challenge"),
    pytest.param(WorkablePage, b"", ("empty", "empty response body"), id="workable-empty"),
]


@pytest.mark.parametrize(("cls", "raw", "expected"), API_ERRORS)
def test_api_page_errors(cls, raw, expected):
    page = cls("http://127.0.0.1:8000/wday/cxs/t/s/jobs", raw, fetched_at=FETCHED)
    with pytest.raises(PageError) as caught:
        page.to_items()
    assert (caught.value.reason, str(caught.value)) == expected


def test_bad_entries_are_problems_and_the_others_postings():
    data = json.loads(body("smartrecruiters_postings_0.json"))
    data["content"][1].pop("id")
    data["content"].append("not a posting")
    page = SmartRecruitersPage(f"{SR_API}?offset=0", json.dumps(data), fetched_at=FETCHED)
    items = page.to_items()
    assert [i.source_id for i in items] == ["744000200000001"]
    assert [(p.reason, p.detail) for p in page.problems] == [
        ("no_id", "entry 1 has no id"), ("bad_entry", "entry 2 is a JSON str, not an object")]
    assert items[0].complete_listing is False  # a posting we could not read must not be taken for a closed one


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12)
    | st.sampled_from(["<p><b>Requirements</b></p><ul><li>x</li></ul>", "Salary: $100k", "/job/x/y_1", "month"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["title", "text", "label", "name", "min", "max", "currency", "period", "city", "country",
                         "descriptor", "fullLocation", "remote", "hybrid", "sections", "fieldLabel", "valueLabel"]),
        children, max_size=4),
    max_leaves=10,
)
ENTRY_KEYS = {
    RecruiteePage: ("offers", "id", ["title", "careers_url", "company_name", "location", "city", "country", "published_at",
                                     "close_at", "remote", "hybrid", "on_site", "department", "tags", "salary",
                                     "description", "requirements", "locations", "highlight"]),
    SmartRecruitersPage: ("content", "id", ["name", "postingUrl", "company", "location", "releasedDate", "typeOfEmployment",
                                            "experienceLevel", "function", "department", "jobAd", "compensation",
                                            "customField", "language"]),
    WorkdayPage: ("jobPostings", "externalPath", ["title", "locationsText", "postedOn", "bulletFields", "jobDescription",
                                                  "startDate", "timeType", "remoteType", "country", "additionalLocations"]),
    WorkablePage: ("results", "shortcode", ["title", "url", "location", "locations", "published", "type", "workplace",
                                            "remote", "telecommuting", "department", "description", "requirements",
                                            "benefits", "experience", "education", "state"]),
}


@pytest.mark.parametrize("cls", list(ENTRY_KEYS), ids=lambda cls: cls.source)
@settings(max_examples=examples(120), deadline=None)
@given(data=st.data())
def test_any_field_shape_gives_a_posting_or_a_problem(cls, data):
    listing, id_key, keys = ENTRY_KEYS[cls]
    job = data.draw(st.fixed_dictionaries({}, optional={key: JSON_VALUES for key in [id_key, *keys]}))
    page = cls("http://127.0.0.1:8000/wday/cxs/t/s/accounts/a/companies/c/jobs", json.dumps({listing: [job]}),
               fetched_at=FETCHED)
    items = page.to_items()
    assert len(items) + len(page.problems) == 1
    assert all(problem.reason == "no_id" for problem in page.problems)


# --------------------------------------------------------------------------- real crawls against the local server

SOURCES = """
[sources.vision]
spider = "recruitee"
boards = ["examplevision"]
base_url = "{base}/recruitee/{{board}}"

[sources.sr]
spider = "smartrecruiters"
boards = ["ExampleAI"]
base_url = "{base}/smartrecruiters"
page_size = 2

[sources.wd]
spider = "workday"
tenant = "exampleai"
site = ["External"]
base_url = "{base}/workday"
page_size = 2

[sources.robots]
spider = "workable"
boards = ["examplerobotics"]
base_url = "{base}/workable"

[sources.data]
spider = "workable"
api = "v3"
boards = ["exampledata"]
base_url = "{base}/workable"
company = "Example Data"
"""


@pytest.fixture(scope="module")
def two_runs(server, tmp_path_factory):
    """`crawl --all` over the five sources, then again over the unchanged bodies."""
    return crawl_twice(server, tmp_path_factory.mktemp("ats"), SOURCES)


def counts(run: dict) -> tuple:
    return tuple(run[k] for k in ("status", "requests", "responses", "files", "found", "new", "updated", "unchanged",
                                  "closed", "reopened", "quarantined", "errors")) + (
        run["stats"].get("jobcrawl/details_missing", 0),)


@pytest.mark.slow
def test_first_run_counts_and_exit_status(two_runs):
    _, [first, _] = two_runs
    proc, got = first.proc, first.runs
    assert proc.returncode == 0, proc.stderr
    assert "failed:" not in proc.stderr  # a detail that answers 404 is no failure: the posting is stored as listed
    assert {source: counts(run) for source, run in got.items()} == {
        "vision": ("ok", 2, {"200": 2}, 1, 2, 2, 0, 0, 0, 0, 0, 0, 0),
        "sr": ("ok", 6, {"200": 5, "404": 1}, 4, 3, 3, 0, 0, 0, 0, 0, 0, 1),
        "wd": ("ok", 6, {"200": 5, "404": 1}, 4, 3, 3, 0, 0, 0, 0, 0, 0, 1),
        "robots": ("ok", 2, {"200": 2}, 1, 2, 2, 0, 0, 0, 0, 0, 0, 0),
        "data": ("ok", 6, {"200": 5, "404": 1}, 4, 3, 3, 0, 0, 0, 0, 0, 0, 1),
    }


@pytest.mark.slow
def test_paging_and_details_cross_the_wire(two_runs):
    hits = two_runs[1][0].hits
    assert sorted((h.method, h.uri, h.status) for h in hits if h.path != "/robots.txt") == sorted([
        ("GET", "/recruitee/examplevision/api/offers/", 200),
        ("GET", "/smartrecruiters/v1/companies/ExampleAI/postings?limit=2&offset=0", 200),
        ("GET", "/smartrecruiters/v1/companies/ExampleAI/postings?limit=2&offset=2", 200),
        ("GET", "/smartrecruiters/v1/companies/ExampleAI/postings/744000200000001", 200),
        ("GET", "/smartrecruiters/v1/companies/ExampleAI/postings/744000200000002", 200),
        ("GET", "/smartrecruiters/v1/companies/ExampleAI/postings/744000200000003", 404),
        ("POST", "/workday/wday/cxs/exampleai/External/jobs", 200),
        ("POST", "/workday/wday/cxs/exampleai/External/jobs", 200),
        ("GET", "/workday/wday/cxs/exampleai/External/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001", 200),
        ("GET", "/workday/wday/cxs/exampleai/External/job/China-Shanghai/GPU-Cluster-SRE_JR-2002", 200),
        ("GET", "/workday/wday/cxs/exampleai/External/job/China-Beijing/Compiler-Engineer--MLIR_JR-2003", 404),
        ("GET", "/workable/api/v1/widget/accounts/examplerobotics?details=true", 200),
        ("POST", "/workable/api/v3/accounts/exampledata/jobs", 200),
        ("POST", "/workable/api/v3/accounts/exampledata/jobs", 200),
        ("GET", "/workable/api/v2/accounts/exampledata/jobs/K1K1K1K1K1", 200),
        ("GET", "/workable/api/v2/accounts/exampledata/jobs/K2K2K2K2K2", 200),
        ("GET", "/workable/api/v2/accounts/exampledata/jobs/K3K3K3K3K3", 404),
    ])
    assert {h.user_agent for h in hits} == {"jobcrawl/0.1 (+https://example.org/jobcrawl-tests)"}


def stored(r: dict) -> dict:
    s = r["salary"]
    return {"what": (r["company"], r["title"], r["city"], r["location_raw"], r["work_mode"]),
            # a relative time resolves against the run's clock: how long before it, not the instant
            "posted": (r["posted_raw"], r["posted_at"] if not r["posted_approx"] else
                       f"{(datetime.fromisoformat(r['as_of']) - datetime.fromisoformat(r['posted_at'])).days} days before as_of"),
            "salary": (s["raw"], s["min"], s["max"], s["currency"], s["period"], s["monthly_min"], s["months"]),
            "sections": {k: len(v) for k, v in r["sections"].items()}, "locator": r["locator"].split("/", 3)[3]}


STORED = [
    pytest.param("3100001", {
        "what": ("Example Vision B.V.", "Computer Vision Engineer", "Amsterdam", "Amsterdam, North Holland, Netherlands", "Hybrid"),
        "posted": ("2026-10-02 08:00:00 UTC", "2026-10-02T08:00:00+00:00"),
        "salary": ("EUR 5000-6500/MONTH", 5000, 6500, "EUR", "month", 5000, 12),
        "sections": {"about": 1, "responsibilities": 2, "requirements": 2},
        "locator": "recruitee/examplevision/api/offers/",
    }, id="recruitee-salary-object"),
    pytest.param("744000200000001", {
        "what": ("Example AI Pte. Ltd.", "Senior LLM Inference Engineer", "Singapore", "Singapore, Singapore, Singapore",
                 "Hybrid"),
        "posted": ("2026-11-20T03:15:00.000Z", "2026-11-20T03:15:00+00:00"),
        "salary": ("SGD 120000-160000/YEAR", 120000, 160000, "SGD", "year", 10000, 12),
        "sections": {"Company Description": 1, "about": 3, "requirements": 2, "Additional Information": 1},
        "locator": "smartrecruiters/v1/companies/ExampleAI/postings/744000200000001",
    }, id="smartrecruiters-detail-compensation"),
    pytest.param("744000200000002", {
        "what": ("Example AI Pte. Ltd.", "CUDA 算子开发工程师", "Beijing", "Beijing, Beijing, China", None),
        "posted": ("2026-11-18T01:00:00.000Z", "2026-11-18T01:00:00+00:00"),
        "salary": ("薪资：40-60K·15薪", 40000, 60000, "CNY", "month", 40000, 15),
        "sections": {"Company Description": 1, "responsibilities": 2, "requirements": 3, "Additional Information": 2},
        "locator": "smartrecruiters/v1/companies/ExampleAI/postings/744000200000002",
    }, id="smartrecruiters-detail-salary-from-text"),
    pytest.param("744000200000003", {
        "what": ("Example AI Pte. Ltd.", "Data Center Technician", "Shenzhen", "Shenzhen, Guangdong, China", None),
        "posted": ("2026-11-02T06:30:00.000Z", "2026-11-02T06:30:00+00:00"),
        "salary": (None, None, None, None, None, None, 12), "sections": {},
        "locator": "smartrecruiters/v1/companies/ExampleAI/postings?limit=2&offset=2",
    }, id="smartrecruiters-detail-404-keeps-listing"),
    pytest.param("exampleai:Senior-LLM-Inference-Engineer_JR-2001", {
        "what": ("Example AI Inc.", "Senior LLM Inference Engineer", "Santa Clara", "Santa Clara, CA", "Hybrid"),
        "posted": ("2026-11-25", "2026-11-25T00:00:00+00:00"),
        "salary": ("The base salary range for this position is $180,000 - $240,000 per year.", 180000, 240000, "USD",
                   "year", 15000, 12),
        "sections": {"about": 1, "responsibilities": 2, "requirements": 2, "Pay": 1},
        "locator": "workday/wday/cxs/exampleai/External/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001",
    }, id="workday-detail-pay-line"),
    pytest.param("exampleai:Compiler-Engineer--MLIR_JR-2003", {
        "what": ("exampleai", "Compiler Engineer, MLIR", None, "2 Locations", None),
        "posted": ("Posted 30+ Days Ago", "30 days before as_of"), "salary": (None, None, None, None, None, None, 12), "sections": {},
        "locator": "workday/wday/cxs/exampleai/External/jobs",
    }, id="workday-detail-404-keeps-listing"),
    pytest.param("F6G7H8I9J0", {
        "what": ("Example Robotics AG", "Perception Intern", "Zurich", "Zurich, Zurich, Switzerland", "Remote"),
        "posted": ("2026-11-15", "2026-11-15T00:00:00+00:00"),
        "salary": ("Help us fuse lidar and camera data for grasp detection. Pay: CHF 3,000 per month.", 3000, 3000, "CHF",
                   "month", 3000, 12),
        "sections": {"about": 1}, "locator": "workable/api/v1/widget/accounts/examplerobotics?details=true",
    }, id="workable-widget"),
    pytest.param("K1K1K1K1K1", {
        "what": ("Example Data", "Staff ML Platform Engineer", "Warsaw", "Warsaw, Masovian, Poland", "remote"),
        "posted": ("2026-11-21T00:00:00.000Z", "2026-11-21T00:00:00+00:00"),
        "salary": ("Salary: €110,000–€140,000 per year", 110000, 140000, "EUR", "year", 9166.67, 12),
        "sections": {"about": 2, "requirements": 3, "benefits": 2},
        "locator": "workable/api/v2/accounts/exampledata/jobs/K1K1K1K1K1",
    }, id="workable-v3-detail"),
    pytest.param("K3K3K3K3K3", {
        "what": ("Example Data", "Solutions Engineer", "London", "London, England, United Kingdom", "hybrid"),
        "posted": ("2026-11-05T00:00:00.000Z", "2026-11-05T00:00:00+00:00"),
        "salary": (None, None, None, None, None, None, 12), "sections": {},
        "locator": "workable/api/v3/accounts/exampledata/jobs",
    }, id="workable-v3-detail-404-keeps-listing"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("source_id", "expected"), STORED)
def test_stored_postings(two_runs, source_id, expected):
    _, (first, second) = two_runs
    assert stored(first.records[source_id]) == expected
    assert stored(second.records[source_id]) == expected


@pytest.mark.slow
def test_each_paged_board_is_one_complete_listing(two_runs):
    db, _ = two_runs
    assert table(db, "SELECT listing, count(*) FROM listing_postings GROUP BY listing ORDER BY listing") == [
        ("recruitee:examplevision", 2), ("smartrecruiters:ExampleAI", 3), ("workable:exampledata", 3),
        ("workable:examplerobotics", 2), ("workday:exampleai/External", 3)]


@pytest.mark.slow
def test_second_run_revalidates_and_changes_nothing(two_runs):
    db, (first, second) = two_runs
    assert second.proc.returncode == 0, second.proc.stderr
    # every page and detail is revalidated (POSTs too); the three gone details answer 404 again
    assert sorted((h.status, h.conditional) for h in second.hits) == [(304, True)] * 19 + [(404, False)] * 3
    assert {s: counts(r)[7:] for s, r in second.runs.items()} == {
        "vision": (2, 0, 0, 0, 0, 0), "sr": (3, 0, 0, 0, 0, 1), "wd": (3, 0, 0, 0, 0, 1), "robots": (2, 0, 0, 0, 0, 0),
        "data": (3, 0, 0, 0, 0, 1)}
    assert table(db, "SELECT count(*) FROM posting_versions") == [(0,)]
    for key, before in first.records.items():
        after = second.records[key]
        assert {k: v for k, v in after.items() if k not in ("last_seen", "last_seen_local")} == {k: v for k, v in before.items() if k not in ("last_seen", "last_seen_local")}


def _board(root: Path, total: int, pages: dict[int, list | bytes]) -> None:
    """SmartRecruiters listing pages under ``root`` (2 postings a page): {offset: postings, or raw bytes}."""
    root.mkdir(parents=True, exist_ok=True)
    for old in root.glob("postings*.json"):
        old.unlink()
    for offset, content in pages.items():
        name = "postings.json" if offset == 0 else f"postings@offset={offset}.json"
        raw = content if isinstance(content, bytes) else json.dumps(
            {"offset": offset, "limit": 2, "totalFound": total, "content": content}).encode()
        (root / name).write_bytes(raw)


@pytest.mark.slow
def test_paged_listing_closes_only_when_read_whole(server, tmp_path):
    board = server.root / "t" / "paged" / "v1" / "companies" / "ExampleAI"
    (board / "postings").mkdir(parents=True)
    for n in (1, 2):
        shutil.copyfile(ATS / f"smartrecruiters_posting_74400020000000{n}.json", board / "postings" / f"74400020000000{n}.json")
    p1, p2 = json.loads(body("smartrecruiters_postings_0.json"))["content"]
    [p3] = json.loads(body("smartrecruiters_postings_2.json"))["content"]
    db = tmp_path / "jobs.db"
    sources = write_sources(tmp_path / "sources.toml", f"""
[sources.sr]
spider = "smartrecruiters"
boards = ["ExampleAI"]
base_url = "{server.base}/t/paged"
page_size = 2
""")

    def run(total, pages):
        _board(board, total, pages)
        proc = crawl(db, sources, "sr")
        run = runs(db)["sr"]
        closed = [i for (i,) in table(db, "SELECT source_id FROM postings WHERE closed_at IS NOT NULL ORDER BY source_id")]
        return proc.returncode, run["status"], run["found"], run["closed"], run["reopened"], run["quarantined"], closed

    assert run(3, {0: [p1, p2], 2: [p3]}) == (0, "ok", 3, 0, 0, 0, [])
    # gone from the board: one page now holds everything
    assert run(2, {0: [p1, p2]}) == (0, "ok", 2, 1, 0, 0, ["744000200000003"])
    # back, but its page cannot be read: the board was not read whole, nothing closes or reopens
    assert run(3, {0: [p1, p2], 2: b'{"offset": 2, "content": [{"id": "7440'}) == (1, "partial", 2, 0, 0, 1,
                                                                                  ["744000200000003"])
    # whole again: it reopens
    assert run(3, {0: [p1, p2], 2: [p3]}) == (0, "ok", 3, 0, 1, 0, [])
    # the board changed while it was paged (a posting moved up a page: one listed twice, one never seen): 2 distinct
    # postings where 3 were announced, so the unseen one is not taken for closed
    assert run(3, {0: [p1, p2], 2: [p2]}) == (0, "ok", 3, 0, 0, 0, [])


# --------------------------------------------------------------------------- sources files

SOURCE_ERRORS = [
    pytest.param('spider = "workday"\ntenant = "acme"\nsite = ["External"]',
                 "source x: Value error, give wd (the N of wdN.myworkdayjobs.com) or base_url", id="workday-needs-wd-or-base-url"),
    pytest.param('spider = "workday"\ntenant = "acme.evil.com/"\nsite = "External"\nwd = 5',
                 "source x: tenant: Value error, not a Workday tenant: 'acme.evil.com/'", id="workday-tenant-not-a-name"),
    pytest.param('spider = "workday"\ntenant = "acme"\nsite = []\nwd = 5',
                 "source x: site: List should have at least 1 item after validation, not 0", id="workday-no-site"),
    pytest.param('spider = "recruitee"\nboards = ["evil.com#"]',
                 "source x: boards: Value error, not a Recruitee subdomain: 'evil.com#'", id="recruitee-board-is-a-host-label"),
    pytest.param('spider = "smartrecruiters"\nboards = ["Acme"]\npage_size = 500',
                 "source x: page_size: Input should be less than or equal to 100", id="smartrecruiters-page-size"),
    pytest.param('spider = "workable"\nboards = ["acme"]\napi = "v2"',
                 "source x: api: Input should be 'widget' or 'v3'", id="workable-api"),
]


@pytest.mark.parametrize(("table_body", "message"), SOURCE_ERRORS)
def test_sources_file_checks_the_new_spiders_arguments(tmp_path, table_body, message):
    path = tmp_path / "sources.toml"
    path.write_text(f"[sources.x]\n{table_body}\n", encoding="utf-8")
    with pytest.raises(SourcesError) as caught:
        load_sources(path)
    assert str(caught.value) == f"{path}: {message}"


def test_workday_base_url_defaults_from_tenant_and_wd(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text('[sources.x]\nspider = "workday"\ntenant = "acme"\nsite = "External,Interns"\nwd = 5\n', encoding="utf-8")
    from crawler.web.spiders.workday import WorkdayArgs
    args = WorkdayArgs(**load_sources(path).sources["x"].args)
    assert (args.base_url, args.site, args.page_size) == ("https://acme.wd5.myworkdayjobs.com", ["External", "Interns"], 20)


def test_api_pay_objects_are_stored_as_their_numbers():
    """Recruitee ``salary`` and SmartRecruiters ``compensation``: the numbers come with the item and give the salary
    that parsing the text written from them gives."""
    from normalize.salary import parse_salary, salary_from_parts

    engineer, _ = RecruiteePage(RECRUITEE_URL, body("recruitee_offers.json"), fetched_at=FETCHED).to_items()
    assert (engineer.salary, engineer.salary_parts.model_dump()) == (
        "EUR 5000-6500/MONTH", {"currency": "EUR", "min": 5000.0, "max": 6500.0, "period": "month", "estimated": False})
    assert salary_from_parts(engineer.salary, engineer.salary_parts) == parse_salary(engineer.salary)
