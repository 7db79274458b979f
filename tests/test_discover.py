"""Board discovery: vendor patterns on recorded careers-page snippets (pure, table-driven), the TOML entries and
the sources file they go into, the polite fetch (robots, User-Agent, caps, private addresses) against the mock
server on 127.0.0.1, and `jobcrawl sources discover` end to end."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from conftest import run_cli
from crawler.web.discover import (
    FetchError,
    Fetched,
    Found,
    _check_address,
    _guarded_connect,
    add_entries,
    detect,
    entry_toml,
    fetch_page,
    unique_name,
    user_agent,
)
from crawler.web.sources import SourcesError, load_sources
from test_crawl import server  # noqa: F401 (the session's mock server fixture)

PAGES = Path(__file__).resolve().parents[1] / "fixtures" / "web" / "www" / "discover"
PAGE_URL = "https://www.example.com/careers"
AGENT = "jobcrawl/0.1 (+https://example.org/jobcrawl-tests)"


def found(url: str, text: str) -> list[tuple]:
    return [(f.spider, f.args, f.name) for f in detect(url, text)]


def page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


# --------------------------------------------------------------------------- detection

RECORDED = [
    pytest.param("greenhouse.html", [("greenhouse", {"boards": ["examplerobotics"]}, "examplerobotics")],
                 id="greenhouse-embed-script"),
    pytest.param("lever.html", [("lever", {"boards": ["examplematch"]}, "examplematch")], id="lever-links"),
    pytest.param("ashby.html", [("ashby", {"boards": ["exampleinfer"]}, "exampleinfer")], id="ashby-embed-script"),
    pytest.param("workable.html", [("workable", {"boards": ["exampledata"]}, "exampledata")],
                 id="workable-link-not-blog-not-shortcode-not-numeric-embed"),
    pytest.param("smartrecruiters.html", [("smartrecruiters", {"boards": ["ExampleAI"]}, "exampleai")],
                 id="smartrecruiters-case-kept"),
    pytest.param("recruitee.html", [("recruitee", {"boards": ["examplevision"]}, "examplevision")],
                 id="recruitee-iframe-not-support-host"),
    pytest.param("workday.html", [("workday", {"tenant": "exampleai", "site": ["External", "Interns"], "wd": 5}, "exampleai")],
                 id="workday-two-sites-one-tenant"),
    pytest.param("escaped.html", [("greenhouse", {"boards": ["examplecloud"]}, "examplecloud")],
                 id="api-url-in-escaped-json"),
    pytest.param("two-boards.html", [("greenhouse", {"boards": ["examplecloud", "exampleedge"]}, "examplecloud"),
                                     ("lever", {"boards": ["examplegroup-eu"], "eu": True}, "examplegroup-eu")],
                 id="two-greenhouse-boards-one-entry-and-an-eu-lever-site"),
    pytest.param("../../site/jobs/8.html", [("jsonld", {"start_urls": [PAGE_URL]}, "www-example-com")],
                 id="jsonld-posting-page"),
    pytest.param("none.html", [], id="vendor-names-in-prose-are-no-board"),
]


@pytest.mark.parametrize(("name", "expected"), RECORDED)
def test_detect_recorded_pages(name, expected):
    assert found(PAGE_URL, page(name)) == expected


SNIPPETS = [
    pytest.param("https://job-boards.eu.greenhouse.io/embed/job_board?for=acme&b=x", "",
                 [("greenhouse", {"boards": ["acme"], "base_url": "https://boards-api.eu.greenhouse.io"}, "acme")],
                 id="greenhouse-eu-url-alone"),
    pytest.param(PAGE_URL, '<a href="https://boards.greenhouse.io/acme/jobs/123?gh_jid=123">', 
                 [("greenhouse", {"boards": ["acme"]}, "acme")], id="greenhouse-job-link"),
    pytest.param(PAGE_URL, '<a href="https://boards.greenhouse.io/embed/job_app?token=123">', [], id="greenhouse-embed-path-is-no-board"),
    pytest.param("https://jobs.lever.co/acme.", "", [("lever", {"boards": ["acme"]}, "acme")], id="trailing-dot-cut"),
    pytest.param(PAGE_URL, "fetch('https://api.lever.co/v0/postings/acme?mode=json')",
                 [("lever", {"boards": ["acme"]}, "acme")], id="lever-api-call"),
    pytest.param(PAGE_URL, '<iframe src="//jobs.ashbyhq.com/Acme%20Labs"></iframe>', [("ashby", {"boards": ["Acme"]}, "acme")],
                 id="ashby-protocol-relative"),
    pytest.param(PAGE_URL, "<script src='https://apply.workable.com/api/v1/widget/accounts/acme-ltd?details=true'></script>",
                 [("workable", {"boards": ["acme-ltd"]}, "acme-ltd")], id="workable-widget-api"),
    pytest.param(PAGE_URL, '<a href="https://acme.workable.com/">Jobs</a>', [("workable", {"boards": ["acme"]}, "acme")],
                 id="workable-subdomain"),
    pytest.param(PAGE_URL, '<a href="https://apply.workable.com/j/ABCDE12345/">', [], id="workable-shortcode-has-no-account"),
    pytest.param(PAGE_URL, '"https://api.smartrecruiters.com/v1/companies/Acme1/postings"',
                 [("smartrecruiters", {"boards": ["Acme1"]}, "acme1")], id="smartrecruiters-api"),
    pytest.param(PAGE_URL, '<a href="https://www.recruitee.com/">Powered by Recruitee</a>', [], id="recruitee-own-site-is-no-board"),
    pytest.param("https://wd3.myworkdaysite.com/en-US/recruiting/acme/Careers", "",
                 [("workday", {"tenant": "acme", "site": ["Careers"], "base_url": "https://wd3.myworkdaysite.com"}, "acme")],
                 id="workday-myworkdaysite"),
    pytest.param(PAGE_URL, "POST https://acme.wd12.myworkdayjobs.com/wday/cxs/acme/Acme_Careers/jobs",
                 [("workday", {"tenant": "acme", "site": ["Acme_Careers"], "wd": 12}, "acme")], id="workday-cxs-api"),
    pytest.param(PAGE_URL, '<a href="https://jobs.lever.co/acme">a</a><a href="https://jobs.lever.co/acme/1">b</a>',
                 [("lever", {"boards": ["acme"]}, "acme")], id="one-board-linked-twice"),
    pytest.param(PAGE_URL, "<p>boards.greenhouse.io is great</p>", [], id="bare-host-is-no-board"),
]


@pytest.mark.parametrize(("url", "text", "expected"), SNIPPETS)
def test_detect_snippets(url, text, expected):
    assert found(url, text) == expected


@pytest.mark.parametrize(("content_type", "body", "text"), [
    pytest.param("text/html; charset=GBK", "<p>\u3400算子 jobs.lever.co/acme</p>".encode("gb18030"),
                 "<p>\u3400算子 jobs.lever.co/acme</p>", id="declared-gbk-with-a-gb18030-only-character"),
    pytest.param("text/html", '<meta charset="gbk"><p>推理 jobs.lever.co/acme</p>'.encode("gbk"),
                 '<meta charset="gbk"><p>推理 jobs.lever.co/acme</p>', id="meta-gbk"),
    pytest.param("text/html", "<p>Ingénieur</p>".encode("cp1252"), "<p>Ingénieur</p>", id="undeclared-windows-1252"),
    pytest.param("text/plain", b"User-agent: *\x00\nDisallow: /\xff", "User-agent: *\x00\nDisallow: /\ufffd",
                 id="binary-as-utf-8-replaced"),
    pytest.param("text/plain", b"", "", id="empty"),
    pytest.param("text/html; charset=rot13", b"<p>jobs.lever.co/acme</p>", "<p>jobs.lever.co/acme</p>",
                 id="declared-rot13-is-no-charset"),
])
def test_a_fetched_page_is_decoded_as_every_input(content_type, body, text):
    assert Fetched("https://example.com/", 200, content_type, body).text == text


def test_detect_keeps_the_evidence():
    [board] = detect(PAGE_URL, page("greenhouse.html"))
    assert board.evidence == "boards.greenhouse.io/embed/job_board/js?for=examplerobotics"


# --------------------------------------------------------------------------- entries and the sources file


def test_entry_toml_is_valid_and_checked():
    board = Found("workday", {"tenant": "acme", "site": ["External"], "wd": 5}, "acme.wd5.myworkdayjobs.com/External",
                  "acme", "https://www.acme.com/careers")
    assert entry_toml(board) == (
        "# found on https://www.acme.com/careers: acme.wd5.myworkdayjobs.com/External\n"
        "[sources.acme]\n"
        'spider = "workday"\n'
        'tenant = "acme"\n'
        'site = ["External"]\n'
        "wd = 5\n")
    odd = Found("jsonld", {"start_urls": ['https://x.example/"quoted"\\path?q=é']}, "1 schema.org JobPosting")
    assert tomllib.loads(entry_toml(odd, "x"))["sources"]["x"]["start_urls"] == ['https://x.example/"quoted"\\path?q=é']
    with pytest.raises(ValueError):  # the spider's own argument check
        entry_toml(Found("workday", {"tenant": "acme", "site": ["External"]}, ""), "acme")


@pytest.mark.parametrize(("name", "taken", "expected"), [
    pytest.param("acme", [], "acme", id="free"), pytest.param("acme", ["acme"], "acme-2", id="taken"),
    pytest.param("acme", ["acme", "acme-2"], "acme-3", id="twice-taken"),
])
def test_unique_name(name, taken, expected):
    assert unique_name(name, taken) == expected


EXISTING = '''contact = "https://example.org/me"

[sources.examplerobotics]
spider = "lever"
boards = ["examplerobotics"]

[sources.acme]
spider = "greenhouse"
boards = ["acme", "examplecloud"]
company = "Acme"
'''


def test_add_entries_never_duplicates_a_board_or_a_name(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text(EXISTING, encoding="utf-8")
    founds = (detect(PAGE_URL, page("greenhouse.html")) + detect(PAGE_URL, page("escaped.html"))
              + detect(PAGE_URL, page("greenhouse.html")))
    results = add_entries(path, founds)
    # the Lever site's name is taken: a new name; examplecloud is already in [sources.acme]; the third is the first again
    assert [(f.boards(), name, added) for f, name, added in results] == [
        (["examplerobotics"], "examplerobotics-2", True), (["examplecloud"], "acme", False),
        (["examplerobotics"], "examplerobotics-2", False)]
    text = path.read_text(encoding="utf-8")
    assert text.startswith(EXISTING)
    assert text[len(EXISTING):] == ("\n# found: boards.greenhouse.io/embed/job_board/js?for=examplerobotics\n"
                                    "[sources.examplerobotics-2]\n"
                                    'spider = "greenhouse"\n'
                                    'boards = ["examplerobotics"]\n')
    loaded = load_sources(path)
    assert [(n, s.spider) for n, s in loaded.sources.items()] == [
        ("examplerobotics", "lever"), ("acme", "greenhouse"), ("examplerobotics-2", "greenhouse")]
    assert add_entries(path, detect(PAGE_URL, page("greenhouse.html")))[0][1:] == ("examplerobotics-2", False)
    assert path.read_text(encoding="utf-8") == text  # nothing to add: the file is untouched


def test_add_entries_creates_a_missing_file(tmp_path):
    path = tmp_path / "new.toml"
    [(_, name, added)] = add_entries(path, detect(PAGE_URL, page("workday.html")))
    assert (name, added, load_sources(path).sources["exampleai"].args) == (
        "exampleai", True, {"tenant": "exampleai", "site": ["External", "Interns"], "wd": 5})


def test_add_entries_refuses_a_broken_sources_file_and_leaves_it(tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text('[sources.x]\nspider = "nope"\n', encoding="utf-8")
    with pytest.raises(SourcesError):
        add_entries(path, detect(PAGE_URL, page("lever.html")))
    assert path.read_text(encoding="utf-8") == '[sources.x]\nspider = "nope"\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sources.toml"]


# --------------------------------------------------------------------------- the polite fetch

ADDRESSES = [
    pytest.param("127.0.0.1", False, id="loopback"), pytest.param("10.1.2.3", False, id="private-10"),
    pytest.param("192.168.0.10", False, id="private-192"), pytest.param("169.254.169.254", False, id="link-local-metadata"),
    pytest.param("100.64.0.1", False, id="shared-cgnat"), pytest.param("0.0.0.0", False, id="unspecified"),
    pytest.param("::1", False, id="ipv6-loopback"), pytest.param("fe80::1%eth0", False, id="ipv6-link-local-scoped"),
    pytest.param("::ffff:10.0.0.1", False, id="ipv4-mapped-private"), pytest.param("fd00::1", False, id="ipv6-unique-local"),
    pytest.param("93.184.215.14", True, id="public-ipv4"), pytest.param("2606:4700::1111", True, id="public-ipv6"),
]


@pytest.mark.parametrize(("address", "public"), ADDRESSES)
def test_only_public_addresses_unless_allowed(address, public):
    _check_address("h", address, allow_private=True)
    if public:
        _check_address("h", address, allow_private=False)
    else:
        with pytest.raises(FetchError, match=r"^h is at .*, not a public address: refused \(--allow-private allows it\)$"):
            _check_address("h", address, allow_private=False)


def test_the_check_is_made_when_connecting():
    with pytest.raises(FetchError, match="^localhost is at 127.0.0.1, not a public address"):
        _guarded_connect(False)(("localhost", 9))
    with pytest.raises(ConnectionRefusedError):  # allowed: it really connects (nothing listens on port 9)
        _guarded_connect(True)(("127.0.0.1", 9), timeout=5)


def test_user_agent_names_the_project_and_a_contact():
    assert user_agent("https://example.org/me") == "jobcrawl/0.1 (+https://example.org/me)"


@pytest.mark.slow
def test_fetch_refuses_a_private_address_by_default(server):
    before = len(server.hits())
    with pytest.raises(FetchError) as caught:
        fetch_page(server.url("discover/greenhouse.html"))
    assert str(caught.value) == "127.0.0.1 is at 127.0.0.1, not a public address: refused (--allow-private allows it)"
    assert server.hits()[before:] == []  # not even robots.txt was asked for


@pytest.mark.slow
def test_fetch_reads_robots_then_the_page_with_the_agent(server):
    before = len(server.hits())
    got = fetch_page(server.url("discover/lever.html"), agent=AGENT, allow_private=True)
    assert (got.status, got.url, "jobs.lever.co/examplematch" in got.text) == (200, server.url("discover/lever.html"), True)
    assert [(h.method, h.path, h.status, h.user_agent) for h in server.hits()[before:]] == [
        ("GET", "/robots.txt", 200, AGENT), ("GET", "/discover/lever.html", 200, AGENT)]


FETCH_ERRORS = [
    pytest.param("private/jobs/9.html", {}, "robots.txt disallows {base}/private/jobs/9.html", id="robots-disallow"),
    pytest.param("discover/nowhere.html", {}, "HTTP 404", id="not-found"),
    pytest.param("discover/greenhouse.html", {"max_bytes": 100}, "larger than 100 bytes: not read", id="size-cap"),
    pytest.param("slow/5/discover/greenhouse.html", {"timeout": 1}, "timed out", id="time-limit"),
    pytest.param("redirect-loop/discover/1", {}, "HTTP 302", id="redirects-capped"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("path", "kwargs", "message"), FETCH_ERRORS)
def test_fetch_errors_name_the_reason(server, path, kwargs, message):
    with pytest.raises(FetchError) as caught:
        fetch_page(server.url(path), agent=AGENT, allow_private=True, **kwargs)
    assert str(caught.value) == message.format(base=server.base)


# --------------------------------------------------------------------------- the command


@pytest.mark.slow
def test_discover_prints_entries_and_names_what_it_cannot_find(server):
    proc = run_cli("sources", "discover", server.url("discover/workday.html"), "https://jobs.lever.co/examplematch/",
                   server.url("discover/none.html"), server.url("discover/lever.html"), server.url("site/jobs/8.html"),
                   "--allow-private")
    assert proc.returncode == 1, proc.stderr  # none.html shows no board
    assert proc.stdout == (
        f"# found on {server.url('discover/workday.html')}: exampleai.wd5.myworkdayjobs.com/en-US/External\n"
        "[sources.exampleai]\n"
        'spider = "workday"\n'
        'tenant = "exampleai"\n'
        'site = ["External", "Interns"]\n'
        "wd = 5\n"
        "\n"
        "# found on https://jobs.lever.co/examplematch/: jobs.lever.co/examplematch\n"
        "[sources.examplematch]\n"
        'spider = "lever"\n'
        'boards = ["examplematch"]\n'
        "\n"  # lever.html's board is the same site: printed once
        f"# found on {server.url('site/jobs/8.html')}: 1 schema.org JobPosting on the page\n"
        "[sources.127-0-0-1]\n"
        'spider = "jsonld"\n'
        f'start_urls = ["{server.url("site/jobs/8.html")}"]\n'
        "\n")
    assert proc.stderr == f"{server.url('discover/none.html')}: no job board or schema.org JobPosting found\n"
    assert tomllib.loads(proc.stdout)["sources"]["examplematch"] == {"spider": "lever", "boards": ["examplematch"]}


@pytest.mark.slow
def test_discover_add_appends_once_and_uses_the_files_contact(server, tmp_path):
    path = tmp_path / "sources.toml"
    path.write_text('contact = "https://example.org/jobcrawl-tests"\n', encoding="utf-8")
    urls = [server.url("discover/two-boards.html"), server.url("discover/ashby.html")]
    before = len(server.hits())
    first = run_cli("sources", "discover", *urls, "--add", str(path), "--allow-private")
    assert (first.returncode, first.stderr) == (0, "")
    assert first.stdout.splitlines() == [
        f"added [sources.examplecloud] (greenhouse examplecloud, exampleedge) to {path}",
        f"added [sources.examplegroup-eu] (lever examplegroup-eu) to {path}",
        f"added [sources.exampleinfer] (ashby exampleinfer) to {path}"]
    assert {h.user_agent for h in server.hits()[before:]} == {AGENT}
    text = path.read_text(encoding="utf-8")
    again = run_cli("sources", "discover", urls[1], "--add", str(path), "--allow-private")
    assert (again.returncode, again.stdout) == (
        0, f"{urls[1]}: ashby exampleinfer is already in {path} as [sources.exampleinfer]\n")
    assert path.read_text(encoding="utf-8") == text
    loaded = load_sources(path)
    assert {n: (s.spider, s.args) for n, s in loaded.sources.items()} == {
        "examplecloud": ("greenhouse", {"boards": ["examplecloud", "exampleedge"]}),
        "examplegroup-eu": ("lever", {"boards": ["examplegroup-eu"], "eu": True}),
        "exampleinfer": ("ashby", {"boards": ["exampleinfer"]})}


@pytest.mark.slow
def test_discover_refuses_private_addresses_and_bad_input(server, tmp_path):
    refused = run_cli("sources", "discover", server.url("discover/greenhouse.html"))
    assert (refused.returncode, refused.stdout, refused.stderr) == (
        1, "", f"{server.url('discover/greenhouse.html')}: 127.0.0.1 is at 127.0.0.1, not a public address: refused "
               "(--allow-private allows it)\n")
    not_http = run_cli("sources", "discover", "file:///etc/passwd")
    assert not_http.returncode == 2 and "file:///etc/passwd: not an http(s) URL" in not_http.stderr
    broken = tmp_path / "broken.toml"
    broken.write_text("[sources.x\n", encoding="utf-8")
    bad_file = run_cli("sources", "discover", "https://jobs.lever.co/acme", "--add", str(broken))
    assert bad_file.returncode == 2 and f"{broken}: not valid TOML" in bad_file.stderr
    assert broken.read_text(encoding="utf-8") == "[sources.x\n"
