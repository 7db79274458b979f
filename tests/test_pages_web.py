"""Web page objects: recorded ATS responses and career pages → RawPosting, exact fields; error cases."""

from __future__ import annotations

import json
from hashlib import sha256
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.http import HtmlResponse, TextResponse

from conftest import examples
from crawler.web.pages.ashby import AshbyPage, ashby_interval
from crawler.web.pages.base import PageError, number_text, salary_text
from crawler.web.pages.html import Block, blocks_text, describe, html_blocks
from crawler.web.pages.greenhouse import GreenhousePage
from crawler.web.pages.jsonld import JsonLdPage, loads_lenient
from crawler.web.pages.lever import LeverPage, lever_interval

WEB = Path(__file__).resolve().parents[1] / "fixtures" / "web"
FETCHED = "2026-11-29T04:00:00+00:00"
GREENHOUSE_URL = "https://boards-api.greenhouse.io/v1/boards/{}/jobs?content=true"
LEVER_URL = "https://api.lever.co/v0/postings/matchgroup?mode=json"
ASHBY_URL = "https://api.ashbyhq.com/posting-api/job-board/{}?includeCompensation=true"


def body(name: str) -> bytes:
    return (WEB / name).read_bytes()


def summary(item) -> dict:
    """The fields a test pins down; sections as (heading, line count, first line, last line). The salary's numbers
    (``salary_parts``) are checked against its text in test_api_salaries_are_stored_as_their_numbers."""
    data = item.model_dump(exclude_defaults=True,
                           exclude={"source", "locator", "input_sha256", "fetched_at", "as_of", "position", "complete_listing",
                                    "salary_parts"})
    data["sections"] = [(s.heading, len(s.lines), s.lines[0] if s.lines else None, s.lines[-1] if s.lines else None)
                        for s in item.sections]
    if not data["sections"]:
        del data["sections"]
    return data


def site_page(n: int, **kwargs) -> JsonLdPage:
    return JsonLdPage(f"http://127.0.0.1:8000/jobs/{n}.html", body(f"site/jobs/{n}.html"), fetched_at=FETCHED, **kwargs)


# --------------------------------------------------------------------------- HTML → lines

HEAD, ITEM, TEXT = "heading", "item", "text"

BLOCKS = [
    pytest.param("<h2>Requirements</h2><ul><li>C++</li><li>CUDA</li></ul>",
                 [(HEAD, "Requirements", 0), (ITEM, "C++", 1), (ITEM, "CUDA", 1)], id="h2-and-list"),
    pytest.param("<p><strong>What you'll do</strong></p><p>Build tools</p>",
                 [(HEAD, "What you'll do", 0), (TEXT, "Build tools", 0)], id="bold-paragraph-is-heading"),
    pytest.param("<b>Nice to have</b><br>Triton<br>Go", [(HEAD, "Nice to have", 0), (TEXT, "Triton", 0), (TEXT, "Go", 0)],
                 id="bold-line-before-br-is-heading"),
    pytest.param("<p><strong>Location:</strong> Kirkland WA</p>", [(TEXT, "Location: Kirkland WA", 0)],
                 id="partly-bold-is-text"),
    pytest.param("<p><b>" + "x" * 81 + "</b></p>", [(TEXT, "x" * 81, 0)], id="long-bold-line-is-text"),
    pytest.param("<ul><li><strong>Kotlin:</strong> Know it.</li></ul>", [(ITEM, "Kotlin: Know it.", 1)],
                 id="bold-in-list-item-is-item"),
    pytest.param("<ul><li><p>One</p></li><li><p>Two</p><p>more</p></li></ul>",
                 [(ITEM, "One", 1), (ITEM, "Two", 1), (TEXT, "more", 0)], id="ashby-paragraphs-in-items"),
    pytest.param("<ul><li>one<ul><li>nested</li></ul></li></ul>", [(ITEM, "one", 1), (ITEM, "nested", 2)], id="nested-list"),
    pytest.param("<p>Requirements:</p><p>A home office</p>", [(HEAD, "Requirements:", 0), (TEXT, "A home office", 0)],
                 id="plain-heading-word"),
    pytest.param("&lt;h3&gt;Benefits&lt;/h3&gt;&lt;p&gt;R&amp;amp;D budget&lt;/p&gt;",
                 [(HEAD, "Benefits", 0), (TEXT, "R&D budget", 0)], id="entity-escaped-greenhouse"),
    pytest.param("Intro. &amp;lt;p&amp;gt;Any HTML&amp;lt;/p&amp;gt;", [(TEXT, "Intro.", 0), (TEXT, "Any HTML", 0)],
                 id="double-escaped-docs-example"),
    pytest.param("<p>a</p><script>alert(1)</script><style>p{}</style><p>&lt;script&gt;x&lt;/script&gt;</p>",
                 [(TEXT, "a", 0), (TEXT, "<script>x</script>", 0)], id="scripts-dropped-escaped-text-kept"),
    pytest.param("<table><tr><td>Base</td><td>$1</td></tr></table>", [(TEXT, "Base $1", 0)], id="table-cells"),
    pytest.param("<p>&nbsp;</p><div><br></div><p>x&nbsp;&nbsp;y</p>", [(TEXT, "x y", 0)], id="nbsp-and-empty-blocks"),
    pytest.param("<pre>line 1\nline 2</pre>", [(TEXT, "line 1", 0), (TEXT, "line 2", 0)], id="pre-keeps-lines"),
    pytest.param("", [], id="empty"),
]


@pytest.mark.parametrize(("markup", "expected"), BLOCKS)
def test_html_blocks(markup, expected):
    assert [(b.kind, b.text, b.depth) for b in html_blocks(markup)] == expected


def test_blocks_text_marks_items_and_nesting():
    blocks = [Block(TEXT, "Intro"), Block(ITEM, "one", 1), Block(ITEM, "nested", 2)]
    assert blocks_text(blocks) == "Intro\n- one\n  - nested"


DESCRIBE = [
    pytest.param("<p>Just text.</p><ul><li>a</li></ul>", ("Just text.\n- a", []), id="no-heading-gives-description"),
    pytest.param("<p>Intro</p><h3>Requirements</h3><ul><li>a</li></ul>",
                 (None, [("", ["Intro"]), ("Requirements", ["a"])]), id="headings-give-sections"),
    pytest.param("Line one\nResponsibilities\n- build", (None, [("", ["Line one"]), ("Responsibilities", ["- build"])]),
                 id="plain-text-keeps-markers"),
    pytest.param(None, (None, []), id="none"),
]


@pytest.mark.parametrize(("value", "expected"), DESCRIBE)
def test_describe(value, expected):
    description, sections = describe(value)
    assert (description, [(s.heading, s.lines) for s in sections]) == expected


# --------------------------------------------------------------------------- values

SALARY_TEXTS = [
    pytest.param(("USD", 120000, 150000, "YEAR"), {}, "USD 120000-150000/YEAR", id="range-year"),
    pytest.param(("USD", 120000.0, 150000.0, "YEAR"), {}, "USD 120000-150000/YEAR", id="floats-without-zero"),
    pytest.param(("USD", 60, 80.5, "HOUR"), {"estimated": True}, "estimated: USD 60-80.5/HOUR", id="estimated-hour"),
    pytest.param(("CNY", 35000, 35000, "MONTH"), {}, "CNY 35000/MONTH", id="equal-ends-one-figure"),
    pytest.param(("USD", "100000", None, None), {}, "USD 100000", id="bare-string-figure"),
    pytest.param((None, 5000, None, None), {}, "5000", id="no-currency"),
    pytest.param(("USD", None, 90000, "YEAR"), {}, "USD 90000/YEAR", id="only-max"),
    pytest.param(("USD", None, None, "YEAR"), {}, None, id="no-figures"),
]


@pytest.mark.parametrize(("args", "kwargs", "expected"), SALARY_TEXTS)
def test_salary_text(args, kwargs, expected):
    assert salary_text(*args, **kwargs) == expected


NUMBERS = [
    pytest.param(150000, "150000", id="int"),
    pytest.param(1.5e5, "150000", id="float-whole"),
    pytest.param(0.05, "0.05", id="float-fraction"),
    pytest.param(" 1,000 ", "1,000", id="string-as-written"),
    pytest.param(True, None, id="bool-is-not-a-number"),
    pytest.param(float("nan"), None, id="nan"),
]


@pytest.mark.parametrize(("value", "expected"), NUMBERS)
def test_number_text(value, expected):
    assert number_text(value) == expected


INTERVALS = [
    pytest.param(lever_interval, "per-year-salary", "YEAR", id="lever-year"),
    pytest.param(lever_interval, "per-hour-wage", "HOUR", id="lever-hour"),
    pytest.param(lever_interval, "one-time", "one-time", id="lever-other-as-written"),
    pytest.param(ashby_interval, "1 YEAR", "YEAR", id="ashby-year"),
    pytest.param(ashby_interval, "NONE", None, id="ashby-none"),
    pytest.param(ashby_interval, "2 WEEK", "2 WEEK", id="ashby-other-as-written"),
]


@pytest.mark.parametrize(("function", "value", "expected"), INTERVALS)
def test_intervals(function, value, expected):
    assert function(value) == expected


LENIENT = [
    pytest.param('{"a": 1}', {"a": 1}, id="strict"),
    pytest.param('{"a": [1, 2,],}', {"a": [1, 2]}, id="trailing-commas"),
    pytest.param('{"url": "https://x/y", // note\n "b": /* c */ 2}', {"url": "https://x/y", "b": 2},
                 id="comments-not-inside-strings"),
    pytest.param('<!--\n{"a": 1};\n-->', {"a": 1}, id="html-comment-wrapper-and-semicolon"),
    pytest.param('//<![CDATA[\n{"a": 1}\n//]]>', {"a": 1}, id="cdata-wrapper"),
    pytest.param('{&quot;url&quot;: &quot;https://x&quot;}', {"url": "https://x"}, id="entity-escaped"),
    pytest.param('{"a": "line\nbreak"}', {"a": "line\nbreak"}, id="raw-newline-in-string"),
]


@pytest.mark.parametrize(("raw", "expected"), LENIENT)
def test_loads_lenient(raw, expected):
    assert loads_lenient(raw) == expected


def test_loads_lenient_reports_the_strict_error():
    with pytest.raises(json.JSONDecodeError) as caught:
        loads_lenient('{"title": "electrician", "x": {')
    assert (caught.value.msg, caught.value.lineno, caught.value.colno) == ("Expecting property name enclosed in double quotes", 1, 32)


# --------------------------------------------------------------------------- JSON-LD career pages

# The eg-0028 JSON-LD texts (one line each: the example writes lists as run-on sentences).
QUALIFICATIONS = "Ability to work in a team environment with members of varying skill levels. Highly motivated. Learns quickly."
RESPONSIBILITIES = "Design and write specifications for tools for in-house customers Build tools according to specifications"
SKILLS = ("Web application development using Java/J2EE Web application development using Python or familiarity with "
          "dynamic programming languages")
PYTHON_SKILL = "Web application development using Python or familiarity with dynamic programming languages"
TELECOMMUTE = "A job where one must be in the United States to apply."
ACME_OVERVIEW = "Acme is committed to providing an environment where the most creative people want to work."

JSONLD_PAGES = [
    pytest.param(1, [{
        "source_id": "https://careers.example.com/jobs/1", "url": "https://careers.example.com/jobs/1",
        "title": "Software Engineer", "location": "Kirkland, WA", "posted": "2011-10-31", "employment_type": "Full-time",
        "category": "15-1132.00 Software Developers, Application",
        "experience": "Minumum 3 years experience as a software engineer",
        "education": "Bachelor's Degree in Computer Science, Information Systems or related fields of study.",
        "salary": "USD 100000",
        "description": "Description: ABC Company Inc. seeks a full-time mid-level software engineer to develop in-house tools.",
        "sections": [
            ("Qualifications", 1, QUALIFICATIONS, QUALIFICATIONS),
            ("Responsibilities", 1, RESPONSIBILITIES, RESPONSIBILITIES),
            ("Skills", 1, SKILLS, SKILLS),
            ("Benefits", 1, "Medical, Life, Dental", "Medical, Life, Dental"),
        ],
        "extra": {"syntax": "json-ld", "industry": "Computer Software", "workHours": "40 hours per week",
                  "incentiveCompensation": "Performance-based annual bonus plan, project-completion bonuses",
                  "specialCommitments": "VeteranCommit", "salary_json": '"100000"'},
    }], id="1-single-bare-salary"),
    pytest.param(2, [{
        "source_id": "careers.example.com#JSD-2026-07", "url": "https://careers.example.com/jobs/2",
        "company": "ACME Corp.", "title": "Junior software developer", "location": "Kirkland, WA, US; Seattle, WA, US",
        "posted": "2026-11-02", "valid_through": "2026-12-31T23:59:59-08:00", "employment_type": "FULL_TIME, CONTRACTOR",
        "experience": "12 months", "education": "bachelor degree", "salary": "USD 85000-110000/YEAR",
        "sections": [
            ("About the role", 1, "Junior software developer in ITS Division C of ACME Corp.",
             "Junior software developer in ITS Division C of ACME Corp."),
            ("Responsibilities", 3, "Build in-house tools", "and write tests"),
            ("What you'll need", 2, "Knowledge of computer programming principles", "A bachelor degree, or experience in its place"),
            ("Nice to have:", 2, "Python", "Go"),
            ("Skills", 1, "Knowledge of computer programming principles", "Knowledge of computer programming principles"),
        ],
        "extra": {"syntax": "json-ld", "salary_json": '{"@type":"MonetaryAmount","currency":"USD","value":{"@type":'
                  '"QuantitativeValue","minValue":85000,"maxValue":110000.0,"unitText":"YEAR"}}'},
    }], id="2-graph-with-id-reference"),
    pytest.param(3, [{
        "source_id": "https://careers.example.com/jobs/3#0", "url": "https://careers.example.com/jobs/3",
        "company": "Acme", "title": "Systems Research Engineer", "location": "Boston, MA", "posted": "2026-10-15",
        "description": "JobPosting for a position that requires applicants to have a bachelor of science in computer "
                       "science from a program accredited by ABET.",
        "sections": [("Qualifications", 1, "Bachelor of Science, Computer Science, ABET", "Bachelor of Science, Computer Science, ABET")],
        "extra": {"syntax": "json-ld"},
    }, {
        "source_id": "https://careers.example.com/jobs/3#1", "url": "https://careers.example.com/jobs/3",
        "company": "Acme", "title": "Telecommute from anywhere in USA!", "location": "USA", "employment_type": "PART_TIME",
        "work_mode": "Remote", "salary": "estimated: USD 60-80.5/HOUR",
        "sections": [("", 1, TELECOMMUTE, TELECOMMUTE),
                     ("Requirements:", 2, "A home office", "US work authorization")],
        "extra": {"syntax": "json-ld", "jobLocationType": "TELECOMMUTE", "applicantLocationRequirements": "USA",
                  "estimated_salary_json": '{"@type":"MonetaryAmount","currency":"USD","value":{"@type":"QuantitativeValue",'
                  '"minValue":60,"maxValue":80.5,"unitText":"HOUR"}}'},
    }], id="3-array-of-two"),
    pytest.param(4, [{
        "source_id": "https://careers.example.com/jobs/4", "url": "https://careers.example.com/jobs/4",
        "company": "ABC Company Inc.", "title": "Software Engineer", "location": "Kirkland, WA", "posted": "2011-10-31",
        "employment_type": "Full-time", "category": "15-1132.00 Software Developers, Application",
        "experience": "Minumum 3 years experience as a software engineer",
        "education": "Bachelor's Degree in Computer Science, Information Systems or related fields of study.",
        "salary": "USD 100000",
        "description": "Description: ABC Company Inc. seeks a full-time mid-level software engineer to develop in-house tools.",
        "sections": [
            ("Qualifications", 3, "Ability to work in a team environment with members of varying skill levels.", "Learns quickly."),
            ("Responsibilities", 2, "Design and write specifications for tools for in-house customers",
             "Build tools according to specifications"),
            ("Skills", 2, "Web application development using Java/J2EE", PYTHON_SKILL),
            ("Benefits", 1, "Medical, Life, Dental", "Medical, Life, Dental"),
        ],
        "extra": {"syntax": "microdata", "industry": "Computer Software", "workHours": "40 hours per week",
                  "incentiveCompensation": "Performance-based annual bonus plan, project-completion bonuses",
                  "specialCommitments": "VeteranCommit", "salary_json": '"100000"'},
    }], id="4-microdata-only"),
    pytest.param(5, [{
        "source_id": "https://careers.example.com/jobs/5", "url": "https://careers.example.com/jobs/5",
        "title": "Stone mason", "extra": {"syntax": "json-ld"},
    }], id="5-broken-block-skipped"),
    pytest.param(6, [{
        "source_id": "careers.example.com#SRE-6", "url": "https://careers.example.com/jobs/6",
        "company": "Acme <img src=x onerror=alert(1)>", "title": '<script>alert("title")</script> Systems Research Engineer',
        "location": "<b>Springfield</b>",
        "description": "Job Title \"Systems Research Engineer\" at Acme.\nLiteral text: <script>alert('escaped')</script>\nApply here.",
        "extra": {"syntax": "json-ld", "employerOverview": "Acme is committed to providing an environment where the most creative "
                  "people want to work. We are committed to creating a diverse environment and are proud to be an equal "
                  "opportunity employer."},
    }], id="6-markup-kept-as-written-for-escaping"),
    pytest.param(7, [{
        "source_id": "https://careers.example.com/jobs/7#electrician", "url": "https://careers.example.com/jobs/7#electrician",
        "title": "electrician", "extra": {"syntax": "json-ld"},
    }, {
        "source_id": "https://careers.example.com/jobs/7#sre", "url": "https://careers.example.com/jobs/7#sre",
        "title": "Systems Research Engineer", "extra": {"syntax": "json-ld", "industry": "Software Publishers"},
    }, {
        "source_id": "https://careers.example.com/jobs/7#rnd", "url": "https://careers.example.com/jobs/7#rnd",
        "company": "Acme & Sons", "title": "Systems Research Engineer (R&D)",
        "extra": {"syntax": "json-ld", "employerOverview": ACME_OVERVIEW},
    }], id="7-lenient-json"),
    pytest.param(8, [{
        "source_id": "careers.example.cn#HZ-AI-0042", "url": "https://careers.example.cn/jobs/8",
        "company": "示例智能科技（杭州）有限公司", "title": "AI推理加速工程师", "location": "杭州, 浙江省, CN",
        "posted": "2026-11-28", "valid_through": "2027-01-31T23:59:59+08:00", "employment_type": "FULL_TIME",
        "category": "人工智能", "experience": "3-5年", "education": "本科及以上", "salary": "CNY 35000-50000/MONTH",
        "sections": [
            ("关于这个职位", 1, "团队负责自动驾驶与座舱大模型在车端芯片上的推理部署，目标是在有限算力下把时延和显存做到极致。",
             "团队负责自动驾驶与座舱大模型在车端芯片上的推理部署，目标是在有限算力下把时延和显存做到极致。"),
            ("【岗位职责】", 3, "1. 负责大模型推理引擎的算子开发与性能调优；", "3. 与编译器、硬件团队协作，定位并解决端到端性能瓶颈。"),
            ("任职要求：", 3, "计算机、电子或相关专业本科及以上学历，3-5年相关经验；", "熟悉 TensorRT、vLLM 等推理框架中的至少一种。"),
            ("加分项", 2, "有 FlashAttention、PagedAttention 等实现或优化经验", "有车端芯片（Orin、Thor 等）部署经验"),
            ("福利待遇", 1, "六险一金、年度体检、弹性工作", "六险一金、年度体检、弹性工作"),
            ("Skills", 4, "CUDA", "算子优化"),
        ],
        "extra": {"syntax": "json-ld", "salary_json": '{"@type":"MonetaryAmount","currency":"CNY","value":{"@type":'
                  '"QuantitativeValue","minValue":35000,"maxValue":50000,"unitText":"MONTH"}}'},
    }], id="8-chinese-cny-month"),
]


@pytest.mark.parametrize(("n", "expected"), JSONLD_PAGES)
def test_jsonld_page(n, expected):
    assert [summary(item) for item in site_page(n).to_items()] == expected


def test_jsonld_broken_block_is_a_problem_and_the_valid_posting_survives():
    page = site_page(5)
    items = page.to_items()
    assert [item.title for item in items] == ["Stone mason"]
    assert [(q.reason, q.detail, q.position) for q in page.problems] == [
        ("bad_jsonld", "JSON-LD block 1: Expecting ',' delimiter (line 8, column 42)", None)]
    assert page.problems[0].text.strip().startswith(
        '{\n  "@context": "https://schema.org/",\n  "@type": "JobPosting",\n  "title": "electrician"')


def test_jsonld_block_nested_too_deeply_is_a_problem_and_the_valid_posting_survives():
    nested = '{"a":' * 5000 + "1" + "}" * 5000
    valid = '{"@type": "JobPosting", "title": "GPU工程师", "hiringOrganization": {"name": "示例"}, "description": "熟悉CUDA"}'
    markup = (f'<html><head><script type="application/ld+json">{nested}</script>'
              f'<script type="application/ld+json">{valid}</script></head></html>')
    page = JsonLdPage("http://127.0.0.1:8000/job", markup.encode(), fetched_at=FETCHED)
    assert [item.title for item in page.to_items()] == ["GPU工程师"]
    assert [(q.reason, q.detail) for q in page.problems] == [
        ("bad_jsonld", "JSON-LD block 1: JSON nested too deeply to read (arrays or objects inside each other beyond "
                       "Python's recursion limit) (line 1, column 1)")]


def test_jsonld_provenance_and_company_fallback():
    page = site_page(1, company="ABC Company Inc.", as_of="2026-11-28T00:00:00+00:00")
    [item] = page.to_items()
    assert (item.source, item.locator, item.position, item.input_sha256, item.fetched_at, item.as_of,
            item.complete_listing, item.company) == (
        "jsonld", "http://127.0.0.1:8000/jobs/1.html", 0, sha256(body("site/jobs/1.html")).hexdigest(), FETCHED,
        "2026-11-28T00:00:00+00:00", False, "ABC Company Inc.")
    assert page.problems == []


def test_jsonld_page_without_canonical_link_uses_its_url_and_position():
    html = ('<script type="application/ld+json">[{"@type": "JobPosting", "title": "A"}, '
            '{"@type": "JobPosting", "title": "B"}]</script>')
    items = JsonLdPage("https://jobs.example.org/list#top", html, fetched_at=FETCHED).to_items()
    assert [(i.source_id, i.url, i.position) for i in items] == [
        ("https://jobs.example.org/list#0", "https://jobs.example.org/list", 0),
        ("https://jobs.example.org/list#1", "https://jobs.example.org/list", 1)]


def test_jsonld_prefers_json_ld_over_microdata_on_the_same_page():
    html = body("site/jobs/1.html").replace(b"<body>", b"<body>" + body("site/jobs/4.html").split(b"<body>")[1].split(b"</body>")[0])
    items = JsonLdPage("https://careers.example.com/jobs/1", html, fetched_at=FETCHED).to_items()
    assert [(i.title, i.extra["syntax"]) for i in items] == [("Software Engineer", "json-ld")]


def test_jsonld_page_with_no_posting_yields_nothing():
    page = JsonLdPage("https://example.com/", "<html><body><p>About us</p></body></html>", fetched_at=FETCHED)
    assert (page.to_items(), page.problems) == ([], [])


def test_jsonld_from_scrapy_response_decodes_the_declared_charset():
    text = body("site/jobs/8.html").decode("utf-8").replace('<meta charset="utf-8">', "")
    response = HtmlResponse(url="http://127.0.0.1:8000/jobs/8.html", body=text.encode("gb18030"),
                            headers={"Content-Type": "text/html; charset=gb18030"})
    [item] = JsonLdPage.from_response(response, fetched_at=FETCHED).to_items()
    assert (item.title, item.company, item.salary) == ("AI推理加速工程师", "示例智能科技（杭州）有限公司", "CNY 35000-50000/MONTH")


JSONLD_ERRORS = [
    pytest.param(b"", ("empty", "empty response body"), id="empty"),
    pytest.param(b"  \n ", ("empty", "empty response body"), id="blank"),
    pytest.param(b"\x00\x01PK\x03\x04" + b"\x00" * 20, ("binary", "body cannot be decoded: binary file (NUL bytes; UTF-16 without a "
                                                        "byte-order mark is not accepted)"), id="binary"),
]


@pytest.mark.parametrize(("raw", "expected"), JSONLD_ERRORS)
def test_jsonld_unreadable_page_raises(raw, expected):
    page = JsonLdPage("https://careers.example.com/jobs/x", raw, fetched_at=FETCHED)
    with pytest.raises(PageError) as caught:
        page.to_items()
    assert (caught.value.reason, str(caught.value)) == expected
    record = page.quarantine(caught.value)
    assert (record.source, record.locator, record.reason, record.detail, record.position) == (
        "jsonld", "https://careers.example.com/jobs/x", expected[0], expected[1], None)


def test_broken_html_still_yields_its_json_ld():
    html = (b'<html><head><script type="application/ld+json">{"@type": "JobPosting", "title": "Welder"}</script>'
            b'<body><div><p>unclosed <b>tags <li>everywhere')
    [item] = JsonLdPage("https://careers.example.com/jobs/w", html, fetched_at=FETCHED).to_items()
    assert item.title == "Welder"


# --------------------------------------------------------------------------- Greenhouse

GITLAB_INTRO = ("GitLab is the intelligent orchestration platform for DevSecOps. GitLab enables organizations to increase "
                "developer productivity, improve operational efficiency, reduce security and compliance risk, and accelerate "
                "digital transformation. More than 50 million registered users and more than 50% of the Fortune 100* trust "
                "GitLab to ship better, more secure software faster.")
GITLAB_FORTUNE = ("*Fortune 500® is a registered trademark of Fortune Media IP Limited, used under license. Claim based on "
                  "GitLab data. Fortune 100 refers to the top 20% ranked companies in the 2025 Fortune 500 list, published in "
                  "June 2025. Fortune and Fortune Media IP Limited are not affiliated with, and do not endorse products or "
                  "services of GitLab.")
GITLAB_EEO_START = "GitLab is proud to be an equal opportunity workplace and is an affirmative action employer."


def test_greenhouse_gitlab_listing():
    page = GreenhousePage(GREENHOUSE_URL.format("gitlab"), body("ats/greenhouse_gitlab_jobs.json"), fetched_at=FETCHED)
    items = page.to_items()
    assert page.problems == []
    assert [(i.position, i.complete_listing, i.locator) for i in items] == [
        (0, True, GREENHOUSE_URL.format("gitlab")), (1, True, GREENHOUSE_URL.format("gitlab"))]
    first, second = (summary(i) for i in items)
    assert {k: v for k, v in first.items() if k != "sections"} == {
        "source_id": "8503792002", "url": "https://job-boards.greenhouse.io/gitlab/jobs/8503792002", "company": "GitLab",
        "title": "Account Executive - Italy", "location": "Remote, Italy", "posted": "2026-04-17T05:58:03-04:00",
        "category": "EMEA - Commercial",
        "extra": {"internal_job_id": "6396658002", "requisition_id": "6263", "updated_at": "2026-07-17T08:48:22-04:00",
                  "language": "en", "offices": "Italy", "metadata.Quota Coverage Type": "Account Executive"},
    }
    assert [s[:2] for s in first["sections"]] == [
        ("", 3), ("An overview of this role", 1), ("What you’ll do", 8), ("What you’ll bring", 9), ("About the team", 1),
        ("How GitLab Supports Full-Time Employees", 10)]
    assert first["sections"][0][2:] == (GITLAB_INTRO, GITLAB_FORTUNE)
    assert first["sections"][2][2:] == (
        "Report to a Regional Sales Director and own a broad book of business, from new prospects to growing existing accounts.",
        "Represent the voice of the customer by contributing product feedback and ideas to our public issue tracker.")
    assert first["sections"][3][3] == "Fluent Italian language skills (required)."
    assert first["sections"][5][2] == "Benefits to support your health, finances, and well-being"
    assert first["sections"][5][3].startswith(GITLAB_EEO_START)

    assert {k: v for k, v in second.items() if k not in ("sections", "extra")} == {
        "source_id": "8565469002", "url": "https://job-boards.greenhouse.io/gitlab/jobs/8565469002", "company": "GitLab",
        "title": "AI Engineer", "location": "Remote, US", "posted": "2026-05-29T07:49:29-04:00",
        "category": "Enterprise Applications", "salary": "$108,400—$129,600 USD",
    }
    assert second["extra"]["salary_titles"] == "United States Salary Range"
    assert second["extra"]["salary_description"].startswith("The base salary range for this role’s listed level is currently for residents")
    assert "salary_json" not in second["extra"]
    assert [s[:2] for s in second["sections"]] == [
        ("", 3), ("An overview of this role", 3), ("What you'll do", 9), ("What you'll bring", 11),
        ("Preferred requirements", 6), ("About the team", 2), ("How GitLab Supports Full-Time Employees", 10)]
    # the rendered pay range is the salary, not a line of "About the team"
    assert second["sections"][5][3] == (
        "We believe the best AI solutions start with understanding the system, not the technology. We value people who "
        "think in constraints and flow, who build with conviction, and who never stop learning. We work in an all-remote, "
        "asynchronous setting, guided by GitLab's values of collaboration, results, efficiency, diversity, inclusion and "
        "belonging, iteration, and transparency.")
    assert second["sections"][3][2].startswith("A Technologist at Heart - Genuinely invested in technology")
    assert second["sections"][4][2:] == ("Experience with GitLab platform and CI/CD workflows",
                                          "Experience mentoring or leading technical projects with junior engineers")


def test_greenhouse_single_job_with_pay_input_ranges():
    url = "https://boards-api.greenhouse.io/v1/boards/examplerobotics/jobs/4000123?pay_transparency=true"
    page = GreenhousePage(url, body("ats/greenhouse_job_pay.json"), fetched_at=FETCHED)
    [item] = page.to_items()
    assert item.complete_listing is False
    assert summary(item) == {
        "source_id": "4000123", "url": "https://boards.greenhouse.io/examplerobotics/jobs/4000123",
        "company": "examplerobotics", "title": "Inference Performance Engineer", "location": "New York, NY",
        "posted": "2026-09-30T10:00:00-04:00", "valid_through": "2026-12-31", "category": "Engineering, ML Systems",
        "salary": "USD 150000-190000",
        "sections": [
            ("", 1, "Example Robotics builds inference runtimes for warehouse robots.",
             "Example Robotics builds inference runtimes for warehouse robots."),
            ("What you’ll do", 3, "Write and tune CUDA kernels for transformer inference", "and fix what you find"),
            ("Qualifications", 2, "3+ years of C++", "Experience with TensorRT or TVM"),
            ("Nice to have", 2, "Triton kernels", "Quantization (INT8/FP8)"),
        ],
        "extra": {
            "internal_job_id": "5000456", "requisition_id": "ENG-42", "updated_at": "2026-10-02T09:15:00-04:00",
            "language": "en", "offices": "New York, Remote - US", "metadata.Employment Type": "Full-time",
            "metadata.Tech Stack": "CUDA, C++", "salary_titles": "NYC Salary Range; Remote US Salary Range",
            "salary_ranges": "NYC Salary Range: USD 150000-190000; Remote US Salary Range: USD 135000.5-170000",
            "salary_json": json.dumps(json.loads(body("ats/greenhouse_job_pay.json"))["pay_input_ranges"],
                                      ensure_ascii=False, separators=(",", ":")),
            "salary_description": "Base pay only.\nVaries by location.",
        },
    }


COMPANIES = [
    pytest.param("ats/greenhouse_gitlab_jobs.json", "gitlab", None, "GitLab", id="company_name-in-job"),
    pytest.param("ats/greenhouse_gitlab_jobs.json", "gitlab", "GitLab Inc.", "GitLab Inc.", id="configured-name-wins"),
    pytest.param("ats/greenhouse_job_pay.json", "examplerobotics", None, "examplerobotics", id="board-token-last"),
]


@pytest.mark.parametrize(("fixture", "board", "company", "expected"), COMPANIES)
def test_greenhouse_company(fixture, board, company, expected):
    page = GreenhousePage(f"http://127.0.0.1:8000/v1/boards/{board}/jobs", body(fixture), fetched_at=FETCHED, company=company)
    assert {item.company for item in page.to_items()} == {expected}


def test_greenhouse_listing_with_bad_entries_yields_the_good_ones():
    page = GreenhousePage(GREENHOUSE_URL.format("examplerobotics"), body("ats/greenhouse_mixed_listing.json"),
                          fetched_at=FETCHED, company="Example Robotics")
    items = page.to_items()
    assert [(i.position, i.source_id, i.title, i.description, i.complete_listing) for i in items] == [
        (0, "4000201", "Compiler Engineer (MLIR)", "Lower models to our accelerator.", False),
        (3, "4000204", "Runtime Engineer", None, False)]
    assert [(q.position, q.reason, q.detail, q.text) for q in page.problems] == [
        (1, "no_id", "entry 1 has no id",
         '{"title":"Job without an id","updated_at":"2026-10-05T12:00:00Z","location":{"name":"Beijing"}}'),
        (2, "bad_entry", "entry 2 is a JSON str, not an object", "not a job object")]


API_ERRORS = [
    pytest.param(GreenhousePage, "ats/greenhouse_truncated.json", None,
                 ("bad_json", "invalid JSON: Unterminated string starting at (line 38, column 18)"), id="greenhouse-truncated"),
    pytest.param(GreenhousePage, None, b'{"status": 404, "error": "Job not found"}',
                 ("api_error", "Greenhouse API error: Job not found"), id="greenhouse-404-body"),
    pytest.param(GreenhousePage, None, b'{"meta": {"total": 0}}',
                 ("unexpected_shape", "expected an object with a 'jobs' list or one job; got an object with keys meta"),
                 id="greenhouse-no-jobs"),
    pytest.param(LeverPage, None, b'{"ok": false, "error": "Document not found"}',
                 ("api_error", "Lever API error: Document not found"), id="lever-error"),
    pytest.param(LeverPage, None, b"<html><body>Rate limited</body></html>",
                 ("bad_json", "invalid JSON: Expecting value (line 1, column 1)"), id="lever-html-instead-of-json"),
    pytest.param(AshbyPage, None, b"[]",
                 ("unexpected_shape", "expected an object with a 'jobs' list; got a JSON list"), id="ashby-list"),
    pytest.param(AshbyPage, None, b"", ("empty", "empty response body"), id="ashby-empty"),
    pytest.param(LeverPage, None, b"[" * 5000 + b"]" * 5000,
                 ("bad_json", "invalid JSON: JSON nested too deeply to read (arrays or objects inside each other beyond "
                              "Python's recursion limit)"), id="lever-nested-too-deeply"),
]


@pytest.mark.parametrize(("cls", "fixture", "raw", "expected"), API_ERRORS)
def test_api_page_errors(cls, fixture, raw, expected):
    page = cls("http://127.0.0.1:8000/api", body(fixture) if fixture else raw, fetched_at=FETCHED)
    with pytest.raises(PageError) as caught:
        page.to_items()
    assert (caught.value.reason, str(caught.value)) == expected
    assert page.quarantine(caught.value).text == page.text


# --------------------------------------------------------------------------- Lever

HINGE_ADDITIONAL_LAST = "#Hinge"


def test_lever_listing():
    page = LeverPage(LEVER_URL, body("ats/lever_matchgroup_postings.json"), fetched_at=FETCHED)
    items = page.to_items()
    assert page.problems == []
    assert [i.complete_listing for i in items] == [True, True]
    hinge, azar = (summary(i) for i in items)
    assert {k: v for k, v in hinge.items() if k not in ("sections", "extra")} == {
        "source_id": "3414ba28-35f7-45d3-8e13-35c883959635",
        "url": "https://jobs.lever.co/matchgroup/3414ba28-35f7-45d3-8e13-35c883959635",
        "company": "matchgroup", "title": "Android Engineer III", "location": "New York, New York",
        "posted": "1779223091267", "employment_type": "Full-time", "work_mode": "hybrid", "category": "Engineering",
        "salary": "USD 150000-180000/YEAR",
    }
    assert [s[:2] for s in hinge["sections"]] == [
        ("Hinge is the dating app designed to be deleted", 1), ("About the Role", 1), ("Responsibilities", 8),
        ("What We're Looking For", 6), ("As a member of our team, you’ll enjoy:", 6), ("At Hinge, our core values are…", 3),
        ("Diversity inspires innovation", 3)]
    assert hinge["sections"][2][2:] == (
        "Cross-Disciplinary Collaboration: Work closely with a diverse team of developers, designers, and product managers "
        "to build features that prioritize high quality and user engagement.",
        "Effective Communication: Maintain clear and positive communication with team members and other departments, "
        "supporting an empowering and inclusive team environment.")
    assert hinge["sections"][6][3] == HINGE_ADDITIONAL_LAST
    assert {k: v for k, v in hinge["extra"].items() if k != "salary_description"} == {
        "department": "Hinge", "team": "Engineering", "country": "US",
        "apply_url": "https://jobs.lever.co/matchgroup/3414ba28-35f7-45d3-8e13-35c883959635/apply",
        "salary_json": '{"interval":"per-year-salary","currency":"USD","min":150000,"max":180000}',
    }
    assert hinge["extra"]["salary_description"].startswith("Factors such as scope and responsibilities of the position")

    assert [s[:2] for s in azar["sections"]] == [
        ("[Android Team 소개]", 1), ("Responsibilities", 4), ("Requirements", 6), ("Preferred Qualifications", 5),
        ("Hiring Process", 3), ("", 4)]
    assert azar["sections"][2][2:] == ("Android 개발 경력 9년 이상, 상용 서비스 및 대규모 사용자 환경 경험 보유",
                                        "성능 최적화·안정성 개선 경험과 함께, 코드 리뷰 및 지식 공유를 통해 팀 역량을 높이실 수 있는 분")
    assert azar["sections"][5][3] == "#HPCNT"
    assert (azar["posted"], azar["location"], "salary" in azar) == ("1767596368549", "Seoul, South Korea", False)


def test_lever_eu_single_posting_and_paged_listing():
    posting = json.loads(body("ats/lever_matchgroup_postings.json"))[0]
    posting["categories"]["allLocations"] = ["New York, New York", "Remote, US"]
    single = LeverPage("https://api.eu.lever.co/v0/postings/matchgroup/3414ba28-35f7-45d3-8e13-35c883959635",
                       json.dumps(posting), fetched_at=FETCHED, company="Hinge")
    [item] = single.to_items()
    assert (single.board, item.company, item.complete_listing, item.extra["all_locations"]) == (
        "matchgroup", "Hinge", False, "New York, New York; Remote, US")
    paged = LeverPage(LEVER_URL + "&skip=0&limit=1", body("ats/lever_matchgroup_postings.json"), fetched_at=FETCHED)
    assert {i.complete_listing for i in paged.to_items()} == {False}


def test_lever_posting_without_lists_or_headings_is_a_description():
    posting = {"id": "p1", "text": "Kernel Engineer", "description": "<div>Write kernels.</div><div>Ship them.</div>",
               "additionalPlain": "Equal opportunity employer.", "lists": []}
    [item] = LeverPage(LEVER_URL, json.dumps([posting]), fetched_at=FETCHED).to_items()
    assert (item.description, item.sections) == ("Write kernels.\nShip them.\nEqual opportunity employer.", [])


# --------------------------------------------------------------------------- Ashby

def test_ashby_linear_board():
    page = AshbyPage(ASHBY_URL.format("linear"), body("ats/ashby_linear_job_board.json"), fetched_at=FETCHED)
    items = page.to_items()
    assert page.problems == []
    first = summary(items[0])
    assert {k: v for k, v in first.items() if k != "sections"} == {
        "source_id": "d3bc1ced-3ce4-4086-a050-555055dbb1ff",
        "url": "https://jobs.ashbyhq.com/linear/d3bc1ced-3ce4-4086-a050-555055dbb1ff",
        "company": "linear", "title": "Senior / Staff Fullstack Engineer", "location": "Europe",
        "posted": "2021-04-27T20:13:45.158+00:00", "employment_type": "FullTime", "work_mode": "Remote",
        "category": "Engineering",
        "extra": {"department": "Product", "team": "Engineering", "is_remote": "true", "is_listed": "true",
                  "apply_url": "https://jobs.ashbyhq.com/linear/d3bc1ced-3ce4-4086-a050-555055dbb1ff/application"},
    }
    assert [s[:2] for s in first["sections"]] == [
        ("", 3), ("Location & work mode", 1), ("What you'll do", 7), ("What we're looking for", 8), ("Our tech", 8),
        ("What we offer", 11), ("Learn how we think and work", 9)]
    assert first["sections"][2][2:] == (
        "Build new user-facing features with everything from database models to GraphQL resolvers and UI components",
        "Redefine best-in-class software development processes so that we can build a purpose-built product.")
    assert first["sections"][6][2] == "A story about our mission: Read Me"
    assert [(i.source_id, i.location, i.complete_listing) for i in items] == [
        ("d3bc1ced-3ce4-4086-a050-555055dbb1ff", "Europe", True),
        ("cd5ae036-0223-427a-b038-ba16ef9dcb32", "North America", True)]


def test_ashby_compensation():
    page = AshbyPage(ASHBY_URL.format("exampleai"), body("ats/ashby_compensation.json"), fetched_at=FETCHED,
                     company="Example AI")
    serving, intern = (summary(i) for i in page.to_items())
    compensation = json.loads(body("ats/ashby_compensation.json"))["jobs"][0]["compensation"]
    assert serving == {
        "source_id": "6f1c2a3b-0000-4000-8000-000000000001",
        "url": "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000001",
        "company": "Example AI", "title": "LLM Serving Engineer", "location": "San Francisco",
        "posted": "2026-10-12T17:05:00.000+00:00", "employment_type": "FullTime", "work_mode": "Hybrid",
        "category": "Inference", "salary": "USD 180000-240000/YEAR",
        "sections": [("", 1, "We serve open-weight models at scale.", "We serve open-weight models at scale."),
                     ("Responsibilities", 2, "Own the batching scheduler", "Cut p99 latency"),
                     ("Requirements", 1, "vLLM or SGLang internals", "vLLM or SGLang internals")],
        "extra": {"department": "Engineering", "team": "Inference", "secondary_locations": "New York; Remote (US)",
                  "is_remote": "false", "is_listed": "true",
                  "apply_url": "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000001/application",
                  "compensation_summary": "$180K – $240K • 0.05% – 0.1% • Offers Bonus",
                  "compensation_tiers": "Zone A: $200K – $240K • 0.05% – 0.1%; Zone B: $180K – $215K • 0.05% – 0.1%",
                  "salary_json": json.dumps(compensation, ensure_ascii=False, separators=(",", ":"))},
    }
    assert {k: v for k, v in intern.items() if k != "extra"} == {
        "source_id": "6f1c2a3b-0000-4000-8000-000000000002",
        "url": "https://jobs.ashbyhq.com/exampleai/6f1c2a3b-0000-4000-8000-000000000002",
        "company": "Example AI", "title": "Research Intern, Kernels", "location": "Beijing",
        "posted": "2026-10-20T02:00:00.000+00:00", "employment_type": "Intern", "category": "Research",
        "salary": "CNY 400/DAY",
        "description": "Write Triton kernels with the research team.\nTwo days a week on site.",
    }
    assert (intern["extra"]["compensation_summary"], intern["extra"]["compensation_tiers"]) == (
        "CN¥400 per day", "CN¥400 per day")


def test_ashby_board_name_from_url_path():
    page = AshbyPage("http://127.0.0.1:8000/posting-api/job-board/linear?includeCompensation=true",
                     body("ats/ashby_linear_job_board.json"), fetched_at=FETCHED)
    assert {i.company for i in page.to_items()} == {"linear"}


PARSE = [
    pytest.param(GreenhousePage, "ats/greenhouse_gitlab_jobs.json", ("parsed", 2, None),
                 ["RawInput", "RawPosting", "RawPosting"], id="greenhouse-parsed"),
    pytest.param(GreenhousePage, "ats/greenhouse_mixed_listing.json",
                 ("partial", 2, "entry 1 has no id; entry 2 is a JSON str, not an object"),
                 ["RawInput", "RawPosting", "RawPosting", "Quarantined", "Quarantined"], id="greenhouse-partial"),
    pytest.param(GreenhousePage, "ats/greenhouse_truncated.json",
                 ("quarantined", 0, "invalid JSON: Unterminated string starting at (line 38, column 18)"),
                 ["RawInput", "Quarantined"], id="greenhouse-unreadable"),
    pytest.param(JsonLdPage, "site/jobs/5.html", ("partial", 1, "JSON-LD block 1: Expecting ',' delimiter (line 8, column 42)"),
                 ["RawInput", "RawPosting", "Quarantined"], id="jsonld-partial"),
]


@pytest.mark.parametrize(("cls", "fixture", "expected", "kinds"), PARSE)
def test_parse_yields_the_raw_input_first(cls, fixture, expected, kinds):
    results = list(cls("http://127.0.0.1:8000/v1/boards/b/jobs", body(fixture), fetched_at=FETCHED).parse())
    raw = results[0]
    assert [type(r).__name__ for r in results] == kinds
    assert (raw.status, raw.postings, raw.error) == expected
    assert (raw.source, raw.locator, raw.sha256, raw.size, raw.encoding, raw.text) == (
        cls.source, "http://127.0.0.1:8000/v1/boards/b/jobs", sha256(body(fixture)).hexdigest(), len(body(fixture)),
        "utf-8", body(fixture).decode("utf-8"))


def test_from_response_keeps_url_and_body():
    response = TextResponse(url=LEVER_URL, body=body("ats/lever_matchgroup_postings.json"),
                            headers={"Content-Type": "application/json"})
    page = LeverPage.from_response(response, fetched_at=FETCHED)
    assert (page.url, page.sha256, page.board, len(page.to_items())) == (
        LEVER_URL, sha256(body("ats/lever_matchgroup_postings.json")).hexdigest(), "matchgroup", 2)


# --------------------------------------------------------------------------- any JSON shape: postings or problems, never a crash

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
    | st.sampled_from(["<p><b>Requirements</b></p><ul><li>x</li></ul>", "&lt;p&gt;x&lt;/p&gt;", "1 YEAR", "per-year-salary"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(
        st.sampled_from(["@type", "@id", "name", "value", "minValue", "maxValue", "unitText", "currency", "address",
                         "addressLocality", "location", "title", "content", "text", "compensationType", "interval",
                         "summaryComponents", "compensationTiers", "components", "min_cents", "currency_type"]),
        children, max_size=4),
    max_leaves=12,
)

JOB_KEYS = {
    JsonLdPage: ["title", "name", "identifier", "url", "hiringOrganization", "jobLocation", "jobLocationType",
                 "applicantLocationRequirements", "employmentType", "datePosted", "validThrough", "baseSalary",
                 "estimatedSalary", "salaryCurrency", "description", "qualifications", "responsibilities", "skills",
                 "experienceRequirements", "educationRequirements", "jobBenefits", "industry", "occupationalCategory"],
    GreenhousePage: ["id", "title", "absolute_url", "location", "updated_at", "first_published", "departments",
                     "offices", "metadata", "content", "pay_input_ranges", "company_name", "application_deadline"],
    LeverPage: ["id", "text", "categories", "workplaceType", "createdAt", "hostedUrl", "description",
                "descriptionPlain", "lists", "additional", "additionalPlain", "salaryRange", "salaryDescription"],
    AshbyPage: ["id", "title", "department", "team", "employmentType", "location", "secondaryLocations", "isRemote",
                "workplaceType", "publishedAt", "jobUrl", "descriptionHtml", "descriptionPlain", "compensation"],
}


def _response(cls, job: dict) -> str:
    if cls is JsonLdPage:
        script = json.dumps(dict(job, **{"@type": "JobPosting"})).replace("</", "<\\/")
        return f'<script type="application/ld+json">{script}</script>'
    if cls is LeverPage:
        return json.dumps([job])
    return json.dumps({"jobs": [job]})


@pytest.mark.parametrize("cls", list(JOB_KEYS), ids=lambda cls: cls.source)
@settings(max_examples=examples(150), deadline=None)
@given(data=st.data())
def test_any_field_shape_gives_a_posting_or_a_problem(cls, data):
    job = data.draw(st.fixed_dictionaries({}, optional={key: JSON_VALUES for key in JOB_KEYS[cls]}))
    page = cls("http://127.0.0.1:8000/v1/boards/b/jobs", _response(cls, job), fetched_at=FETCHED)
    items = page.to_items()
    assert len(items) + len(page.problems) == 1
    assert all(problem.reason in ("no_id", "bad_entry") for problem in page.problems)


MARKUP = st.lists(st.sampled_from(["<p>", "</p>", "<li>", "<ul>", "</ul>", "<b>", "</b>", "<br>", "<h2>", "</h2>",
                                   "<script>", "</script>", "&lt;", "&amp;", "&nbsp;", "<!--", "-->", "<", ">", "\x00"])
                  | st.text(max_size=8), max_size=30).map("".join)


@settings(max_examples=examples(300), deadline=None)
@given(markup=MARKUP)
def test_html_blocks_reads_any_markup(markup):
    blocks = html_blocks(markup)
    assert all(b.text and b.text == b.text.strip() and b.kind in (HEAD, ITEM, TEXT) for b in blocks)


@settings(max_examples=examples(300), deadline=None)
@given(raw=MARKUP | st.text(alphabet='{}[]",:/*\n tru0-9&;quot', max_size=40))
def test_loads_lenient_fails_only_with_a_json_error(raw):
    try:
        loads_lenient(raw)
    except json.JSONDecodeError:
        pass


def _all_api_items():
    """Every posting of the recorded JSON-LD pages and ATS responses above that states pay."""
    pages = [site_page(int(p.stem)) for p in sorted((WEB / "site" / "jobs").glob("*.html"))] + [
        GreenhousePage("https://boards-api.greenhouse.io/v1/boards/examplerobotics/jobs/4000123",
                       body("ats/greenhouse_job_pay.json"), fetched_at=FETCHED),
        LeverPage(LEVER_URL, body("ats/lever_matchgroup_postings.json"), fetched_at=FETCHED),
        AshbyPage(ASHBY_URL.format("linear"), body("ats/ashby_compensation.json"), fetched_at=FETCHED)]
    return [(type(page).__name__, item) for page in pages for item in page.to_items() if item.salary]


def test_api_salaries_are_stored_as_their_numbers():
    """Structured pay (JSON-LD baseSalary, Greenhouse pay_input_ranges, Lever salaryRange, Ashby) comes with its numbers; normalizing uses them without parsing the
    text written from them, and gets the same salary as parsing that text would."""
    from normalize.salary import parse_salary, salary_from_parts

    items = _all_api_items()
    assert items, "the recorded pages state pay"
    with_parts = [item for _, item in items if item.salary_parts is not None]
    assert {kind for kind, item in items if item.salary_parts is not None} == {
        "JsonLdPage", "GreenhousePage", "LeverPage", "AshbyPage"}
    for item in with_parts:
        assert salary_from_parts(item.salary, item.salary_parts) == parse_salary(item.salary), item.salary


@pytest.mark.parametrize("args, text, parts", [
    pytest.param(("USD", 120000, 150000, "YEAR"), "USD 120000-150000/YEAR",
                 {"currency": "USD", "min": 120000.0, "max": 150000.0, "period": "year", "estimated": False}, id="range"),
    pytest.param(("eur", 52.5, None, "HOUR"), "eur 52.5/HOUR",
                 {"currency": "EUR", "min": 52.5, "max": 52.5, "period": "hour", "estimated": False}, id="one-figure"),
    pytest.param(("USD", "120,000", "150,000", "YEAR"), "USD 120,000-150,000/YEAR", None, id="figures-as-text"),
    pytest.param(("$", 10, 20, None), "$ 10-20", None, id="symbol-not-a-code"),
    pytest.param((None, None, None, None), None, None, id="nothing"),
])
def test_salary_text_carries_the_numbers(args, text, parts):
    from crawler.web.pages.base import Pay, salary_text

    out = salary_text(*args)
    assert out == text
    assert (out.parts if isinstance(out, Pay) else None) == parts
