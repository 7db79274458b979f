"""The crawler against hostile sites (issue #26, points 6-9 and 12): the real `jobcrawl crawl` against
tests/hostile_server.py (redirect chains, loops and redirects elsewhere, drips, endless bodies, gzip
bombs, lying lengths, robots.txt server errors) and tests/mockserver.py (a second port), into real
SQLite files. The first tests are unit tests of crawler/web/safety.py and need no server."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_cli
from crawler.report import summary_note
from crawler.web.safety import Origin, address_problem
from hostile_server import HostileServer
from mockserver import MockServer, build_docroot
from test_crawl import CONTACT, QUICK_THROTTLE, runs, table

MB = 2**20
JOB_PAGE = (FIXTURES / "web" / "site" / "jobs" / "8.html").read_text(encoding="utf-8")
GITLAB_IDS = ["8503792002", "8565469002"]

# --------------------------------------------------------------------------- addresses and hosts (units)

ADDRESSES = [
    pytest.param("127.0.0.1", "loopback", id="ipv4-loopback"),
    pytest.param("127.8.9.10", "loopback", id="ipv4-loopback-net"),
    pytest.param("::1", "loopback", id="ipv6-loopback"),
    pytest.param("10.1.2.3", "private", id="rfc1918-10"),
    pytest.param("172.16.0.1", "private", id="rfc1918-172"),
    pytest.param("192.168.1.1", "private", id="rfc1918-192"),
    pytest.param("169.254.169.254", "link-local", id="cloud-metadata"),
    pytest.param("fe80::1", "link-local", id="ipv6-link-local"),
    pytest.param("fe80::1%eth0", "link-local", id="ipv6-link-local-zone"),
    pytest.param("fd00:ec2::254", "unique-local", id="ipv6-unique-local-metadata"),
    pytest.param("0.0.0.0", "unspecified", id="ipv4-unspecified"),
    pytest.param("::", "unspecified", id="ipv6-unspecified"),
    pytest.param("::ffff:127.0.0.1", "loopback", id="ipv4-mapped-loopback"),
    pytest.param("::ffff:169.254.169.254", "link-local", id="ipv4-mapped-metadata"),
    pytest.param("64:ff9b::a9fe:a9fe", "link-local", id="nat64-metadata"),
    pytest.param("2002:7f00:1::1", "loopback", id="6to4-loopback"),
    pytest.param("224.0.0.1", "multicast", id="ipv4-multicast"),
    pytest.param("ff02::1", "multicast", id="ipv6-multicast"),
    pytest.param("100.64.0.1", "not public", id="carrier-grade-nat"),
    pytest.param("192.0.2.1", "not public", id="documentation"),
    pytest.param("240.0.0.1", "not public", id="reserved"),
    pytest.param("fec0::1", "not public", id="ipv6-site-local"),
    pytest.param("8.8.8.8", None, id="public-ipv4"),
    pytest.param("2606:4700:4700::1111", None, id="public-ipv6"),
    pytest.param("::ffff:8.8.8.8", None, id="ipv4-mapped-public"),
]


@pytest.mark.parametrize(("address", "problem"), ADDRESSES)
def test_address_problem(address, problem):
    assert address_problem(address) == problem


ORIGINS = [
    pytest.param(Origin.of_url("https://boards-api.greenhouse.io"), "http://boards-api.greenhouse.io/v1/x", True,
                 id="scheme-upgrade-same-host"),
    pytest.param(Origin.of_url("https://boards-api.greenhouse.io"), "https://boards-api.greenhouse.io:443/v1", True,
                 id="explicit-default-port"),
    pytest.param(Origin.of_url("https://boards-api.greenhouse.io"), "https://boards-api.greenhouse.io:8443/v1", False,
                 id="other-port"),
    pytest.param(Origin.of_url("https://boards-api.greenhouse.io"), "https://api.greenhouse.io/v1", False,
                 id="sibling-host"),
    pytest.param(Origin.of_url("https://boards-api.greenhouse.io"), "https://x.boards-api.greenhouse.io/", False,
                 id="no-subdomains-for-apis"),
    pytest.param(Origin.of_url("http://example.com/", subdomains=True), "https://jobs.example.com/1", True,
                 id="subdomain-of-a-site"),
    pytest.param(Origin.of_url("http://example.com/", subdomains=True), "https://badexample.com/1", False,
                 id="suffix-is-not-a-subdomain"),
    pytest.param(Origin.of_url("http://127.0.0.1:8000/"), "http://127.0.0.1:8001/", False, id="loopback-other-port"),
    pytest.param(Origin.of_url("http://127.0.0.1:8000/"), "http://127.0.0.1:8000/x", True, id="loopback-same-port"),
    pytest.param(Origin.parse("Jobs.Example.COM."), "https://jobs.example.com/", True, id="case-and-trailing-dot"),
    pytest.param(Origin.parse("[::1]:8080"), "http://[0:0::1]:8080/", True, id="ipv6-spellings"),
    pytest.param(Origin.parse("bücher.example"), "https://xn--bcher-kva.example/", True, id="idna"),
]


@pytest.mark.parametrize(("origin", "url", "admitted"), ORIGINS)
def test_origin_admits(origin, url, admitted):
    from crawler.web.safety import split_url

    scheme, host, port = split_url(url)
    assert origin.admits(host, port) is admitted


class Answers:
    """What a name resolution delivered to its receiver."""

    def __init__(self):
        self.began, self.addresses, self.complete = 0, [], 0

    def resolutionBegan(self, resolution):
        self.began += 1

    def addressResolved(self, address):
        self.addresses.append(address.host)

    def resolutionComplete(self):
        self.complete += 1


RESOLVED = [  # what the resolver's filter passes on of a DNS answer, and what it records as refused
    pytest.param(["93.184.215.14"], ["93.184.215.14"], None, id="public"),
    pytest.param(["127.0.0.1"], [], "127.0.0.1 (loopback)", id="loopback"),
    pytest.param(["10.0.0.7", "169.254.169.254"], [], "10.0.0.7 (private), 169.254.169.254 (link-local)", id="all-bad"),
    pytest.param(["10.0.0.7", "93.184.215.14"], ["93.184.215.14"], None, id="public-kept-private-dropped"),
    pytest.param([], [], None, id="no-answer"),
]


@pytest.mark.parametrize(("answer", "passed", "refused"), RESOLVED)
def test_resolver_passes_only_public_answers(answer, passed, refused):
    from twisted.internet.address import IPv4Address

    from crawler.web.safety import _PublicOnly

    refusals = {"jobs.example.com": "stale"}
    answers = Answers()
    receiver = _PublicOnly(answers, "jobs.example.com", refusals)
    receiver.resolutionBegan(None)
    for address in answer:
        receiver.addressResolved(IPv4Address("TCP", address, 443))
    receiver.resolutionComplete()
    assert (answers.began, answers.addresses, answers.complete) == (1, passed, 1)
    assert refusals.get("jobs.example.com") == refused


LITERALS = [
    pytest.param("127.0.0.1", [], "127.0.0.1 (loopback)", id="ipv4-loopback"),
    pytest.param("::1", [], "::1 (loopback)", id="ipv6-loopback"),
    pytest.param("169.254.169.254", [], "169.254.169.254 (link-local)", id="metadata"),
    pytest.param("8.8.8.8", ["8.8.8.8"], None, id="public-ipv4"),
    pytest.param("2606:4700:4700::1111", ["2606:4700:4700::1111"], None, id="public-ipv6-no-lookup"),
]


@pytest.mark.parametrize(("host", "passed", "refused"), LITERALS)
def test_resolver_checks_ip_addresses_without_a_lookup(host, passed, refused):
    from crawler.web.safety import SafeResolver

    resolver = SafeResolver(reactor=None, upstream=None)  # an IP address never reaches the upstream resolver
    answers = Answers()
    resolver.resolveHostName(answers, host, 8080)
    assert (answers.addresses, answers.complete, resolver.refusals.get(host)) == (passed, 1, refused)


def test_summary_note_names_only_what_happened():
    assert summary_note({"jobcrawl/refused/host": 2, "jobcrawl/oversize": 1, "jobcrawl/redirect_loops": 0}) == (
        " · refused (host) 2 · too large 1")
    assert summary_note({}) == ""


# --------------------------------------------------------------------------- servers and crawls


@pytest.fixture(scope="module")
def docroot(tmp_path_factory) -> Path:
    """The mock server's fixtures plus pages of these tests under h/."""
    root = build_docroot(tmp_path_factory.mktemp("hostile-www"))
    (root / "h").mkdir()
    (root / "h" / "job.html").write_text(JOB_PAGE, encoding="utf-8")
    (root / "h" / "refresh-a.html").write_text('<html><head><meta http-equiv="refresh" content="0; url=/h/refresh-b.html">'
                                               "</head><body>moved</body></html>")
    (root / "h" / "refresh-b.html").write_text('<html><head><meta http-equiv="refresh" content="0; url=/h/refresh-a.html">'
                                               "</head><body>moved</body></html>")
    return root


@pytest.fixture(scope="module")
def hostile(docroot):
    with HostileServer(docroot, docroot.parent / "hostile.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def other(docroot):
    """A second server (another port of 127.0.0.1) that nothing may reach unless named."""
    with MockServer(docroot, docroot.parent / "other.log") as srv:
        yield srv


@dataclass
class Crawl:
    proc: subprocess.CompletedProcess
    runs: dict[str, dict]
    db: Path
    rss_mb: float | None = None

    def lines(self, kind: str) -> dict[str, list[str]]:
        """stderr lines ``<source>: <kind>: <text>`` by source; for ``failed``, the line of each failed request
        (``-v``: ``<source>: failed: <URL>: <reason>``), not the source's line that groups them."""
        out: dict[str, list[str]] = {}
        for line in self.proc.stderr.splitlines():
            source, sep, text = line.partition(f": {kind}: ")
            if sep and (kind != "failed" or text.startswith(("http://", "https://"))):
                out.setdefault(source, []).append(text)
        return out

    def stat(self, source: str, name: str) -> int:
        return self.runs[source]["stats"].get(f"jobcrawl/{name}", 0)


# Runs the command given and prints the peak RSS of its process tree (KiB) as the last line of stderr.
PEAK_RSS = ("import resource, subprocess, sys; rc = subprocess.call(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(rc)")


def crawl(tmp: Path, sources: str, *args: str, rss: bool = False, timeout: float = 300) -> Crawl:
    """`jobcrawl crawl --all` over ``sources`` (TOML, written as given: no source may reach 127.0.0.1
    unless it says ``allow_private = true``) into a fresh database under ``tmp``."""
    tmp.mkdir(parents=True, exist_ok=True)
    path, db = tmp / "sources.toml", tmp / "jobs.db"
    path.write_text(f'contact = "{CONTACT}"\n\n{sources}', encoding="utf-8")
    # -v: a line per failed request (what these tests look at); the log itself only at ERROR level.
    args = ("crawl", "--all", "--sources", str(path), "--db", str(db), "-v", "-s", "LOG_LEVEL=ERROR", *QUICK_THROTTLE,
            *args)
    if rss:  # a fresh interpreter, whose peak RSS is the crawl's alone
        proc = subprocess.run([sys.executable, "-c", PEAK_RSS, sys.executable, "-m", "crawler.cli", *args], cwd=ROOT,
                              env=dict(os.environ, PYTHONUTF8="1"), capture_output=True, text=True, timeout=timeout)
    else:
        proc = run_cli(*args, timeout=timeout)
    peak = None
    if rss:
        stderr, _, last = proc.stderr.rstrip("\n").rpartition("\n")
        peak, proc.stderr = int(last) / 1024, stderr
    return Crawl(proc, runs(db) if db.exists() else {}, db, peak)


def greenhouse(name: str, base_url: str, *extra: str) -> str:
    return "\n".join([f"[sources.{name}]", 'spider = "greenhouse"', 'boards = ["gitlab"]', f'base_url = "{base_url}"',
                      *extra]) + "\n\n"


def jsonld(name: str, *extra: str) -> str:
    return "\n".join([f"[sources.{name}]", 'spider = "jsonld"', *extra]) + "\n\n"


def stored(db: Path) -> list[tuple]:
    return table(db, "SELECT source, source_id FROM postings ORDER BY source, source_id")


def new_hits(server, before: int) -> list[tuple[str, int]]:
    return [(h.path, h.status) for h in server.hits()[before:]]


# --------------------------------------------------------------------------- 6. SSRF


@pytest.mark.slow
def test_redirects_to_other_hosts_and_ports_are_refused(hostile, other, tmp_path):
    """A board whose API answers 302 elsewhere (another port, a name of the same machine, the cloud
    metadata address, an IPv6 loopback) is refused at the hop, named and counted; nothing is stored and
    nothing reaches the other server. The same redirect within the source's host is followed."""
    port = hostile.base.rsplit(":", 1)[1]
    targets = {"port": f"127.0.0.1:{other.base.rsplit(':', 1)[1]}", "name": f"localhost:{port}",
               "metadata": "169.254.169.254", "ipv6": f"[::1]:{port}"}
    sources = "".join(greenhouse(name, f"{hostile.base}/to/{netloc}/greenhouse", "allow_private = true")
                      for name, netloc in targets.items())
    sources += greenhouse("same", f"{hostile.base}/to/127.0.0.1:{port}/greenhouse", "allow_private = true")
    before = len(other.hits())
    result = crawl(tmp_path, sources)
    assert result.proc.returncode == 1, result.proc.stderr
    failed = result.lines("failed")
    for name, netloc in targets.items():
        in_path = netloc.replace("[", "%5B").replace("]", "%5D")  # as Scrapy quotes it in the first URL
        assert failed[name] == [
            f"http://{netloc}/greenhouse/v1/boards/gitlab/jobs: Refused: {netloc} is not a host of this source (its "
            f"hosts: 127.0.0.1:{port}; more with allow_hosts), redirected from "
            f"{hostile.base}/to/{in_path}/greenhouse/v1/boards/gitlab/jobs?content=true"]
        run = result.runs[name]
        assert (run["status"], run["found"], result.stat(name, "refused/host"), result.stat(name, "errors")) == (
            "failed", 0, 1, 1)  # nothing read: every request refused
    assert "same" not in failed and result.runs["same"]["status"] == "ok"
    assert stored(result.db) == [("greenhouse", i) for i in GITLAB_IDS]  # from the source "same" only
    assert other.hits()[before:] == []
    assert "refused (host) 1 · failed" in result.proc.stdout


@pytest.mark.slow
def test_allow_hosts_admits_a_redirect_target(hostile, other, tmp_path):
    other_netloc = f"127.0.0.1:{other.base.rsplit(':', 1)[1]}"
    before = len(other.hits())
    result = crawl(tmp_path, greenhouse("moved", f"{hostile.base}/to/{other_netloc}/greenhouse", "allow_private = true",
                                        f'allow_hosts = ["{other_netloc}"]'))
    assert result.proc.returncode == 0, result.proc.stderr
    assert stored(result.db) == [("greenhouse", i) for i in GITLAB_IDS]
    assert [h.path for h in other.hits()[before:]] == ["/robots.txt", "/greenhouse/v1/boards/gitlab/jobs"]


@pytest.mark.slow
def test_links_to_another_port_are_not_followed(hostile, other, docroot, tmp_path):
    """JSON-LD crawling follows links on the start URL's host and port only (another port of the same
    address was followed before)."""
    other_page = f"{other.base}/h/job.html"
    (docroot / "h" / "ports.html").write_text(f'<html><body><a href="{other_page}">there</a>'
                                              '<a href="/h/job.html">here</a></body></html>')
    before = len(other.hits())
    result = crawl(tmp_path, jsonld("site", f'start_urls = ["{hostile.base}/h/ports.html"]', "allow_private = true"))
    assert result.proc.returncode == 0, result.proc.stderr
    assert stored(result.db) == [("jsonld", "careers.example.cn#HZ-AI-0042")]
    assert other.hits()[before:] == []


PRIVATE = [  # source, its URL (before /greenhouse), what is refused, refusals (robots.txt and the listing: 2)
    ("literal", "{hostile}", "127.0.0.1 (loopback)", 1),
    ("ipv6", "http://[::1]:{port}", "::1 (loopback)", 1),
    ("metadata", "http://169.254.169.254", "169.254.169.254 (link-local)", 1),
    ("name", "http://localhost:{other_port}", "localhost resolves to 127.0.0.1 (loopback)", 2),
    ("shared-name", "http://localhost:{port}", "localhost resolves to 127.0.0.1 (loopback)", 1),
]


@pytest.mark.slow
def test_private_addresses_need_allow_private(hostile, other, tmp_path):
    """Without ``allow_private`` nothing is sent to a loopback, link-local or other private address,
    whether the URL names it (an IP address: refused before robots.txt is asked for) or a host name
    resolves to it (``localhost``: the resolver drops the answer, for robots.txt and for the page);
    each refusal is named and counted. The sources that allow it, in the same process and on the same
    server, crawl as usual; one of them shares its host name with a source that does not allow it."""
    port, other_port = hostile.base.rsplit(":", 1)[1], other.base.rsplit(":", 1)[1]
    urls = {name: url.format(hostile=hostile.base, port=port, other_port=other_port) for name, url, _, _ in PRIVATE}
    sources = "".join(greenhouse(name, f"{url}/greenhouse") for name, url in urls.items())
    sources += (greenhouse("allowed", f"{hostile.base}/greenhouse", "allow_private = true")
                + greenhouse("allowed-name", f"http://localhost:{port}/greenhouse", "allow_private = true"))
    before, other_before = len(hostile.hits()), len(other.hits())
    result = crawl(tmp_path, sources)
    assert result.proc.returncode == 1, result.proc.stderr
    failed = result.lines("failed")
    for name, _, what, refusals in PRIVATE:
        assert failed[name] == [f"{urls[name]}/greenhouse/v1/boards/gitlab/jobs?content=true: Refused: {what}, not a "
                                "public address (allow_private = true in the source allows it)"]
        assert (result.runs[name]["status"], result.stat(name, "refused/private")) == ("failed", refusals)
    assert sorted(failed) == sorted(name for name, *_ in PRIVATE)
    assert [result.runs[s]["status"] for s in ("allowed", "allowed-name")] == ["ok", "ok"]
    assert sorted(new_hits(hostile, before)) == [("/greenhouse/v1/boards/gitlab/jobs", 200)] * 2 + [
        ("/robots.txt", 200)] * 2  # the two allowed sources only (each host name reads robots.txt)
    assert other.hits()[other_before:] == []


# --------------------------------------------------------------------------- 7. size caps


@pytest.mark.slow
def test_gzip_bomb_is_refused_in_bounded_memory(hostile, tmp_path):
    """A listing padded to 200 MB and gzipped (about 200 KB on the wire): before, stored verbatim (a
    200 MB raw input) with 1.1 GiB of peak RSS; now refused at the 10 MB default cap, decompressing no
    further (Scrapy 2.19's HttpCompressionMiddleware honours DOWNLOAD_MAXSIZE)."""
    result = crawl(tmp_path, greenhouse("bomb", f"{hostile.base}/gzip-bomb/200/greenhouse", "allow_private = true"),
                   rss=True)
    assert result.proc.returncode == 3, result.proc.stderr  # its one source read nothing
    [line] = result.lines("failed")["bomb"]
    url, _, reason = line.partition(": Refused: ")
    assert url == f"{hostile.base}/gzip-bomb/200/greenhouse/v1/boards/gitlab/jobs?content=true"
    assert reason.startswith("response too large: its ") and reason.endswith(
        " bytes decompress to more than the size cap of 10485760 bytes (max_size_mb)")
    compressed = int(reason.split()[4])
    assert 150_000 < compressed < 300_000
    assert (result.runs["bomb"]["status"], result.stat("bomb", "oversize")) == ("failed", 1)
    assert table(result.db, "SELECT count(*) FROM raw_inputs") == [(0,)]
    assert result.rss_mb < 400, f"peak RSS {result.rss_mb:.0f} MB"


@pytest.mark.slow
def test_size_caps_per_source(hostile, tmp_path):
    """A body announced beyond the cap is not downloaded; one without a length (an endless body) is cut
    at the cap; ``max_size_mb`` sets the cap per source and the default is 10 MB."""
    sources = (greenhouse("small-cap", f"{hostile.base}/greenhouse", "allow_private = true", "max_size_mb = 0.01")
               + greenhouse("default-cap", f"{hostile.base}/greenhouse", "allow_private = true")
               + jsonld("announced", f'start_urls = ["{hostile.base}/big/20/x.html"]', "allow_private = true")
               + jsonld("endless", f'start_urls = ["{hostile.base}/endless/x.html"]', "allow_private = true",
                        "max_size_mb = 1"))
    result = crawl(tmp_path, sources)
    assert result.proc.returncode == 1, result.proc.stderr
    assert result.lines("failed") == {
        "small-cap": [f"{hostile.base}/greenhouse/v1/boards/gitlab/jobs?content=true: Refused: response too large: "
                      "its Content-Length, 31132 bytes, exceeds the size cap of 10485 bytes (max_size_mb)"],
        "announced": [f"{hostile.base}/big/20/x.html: Refused: response too large: its Content-Length, 20971520 "
                      "bytes, exceeds the size cap of 10485760 bytes (max_size_mb)"],
        "endless": [f"{hostile.base}/endless/x.html: Refused: response too large: its body grew beyond the size cap "
                    "of 1048576 bytes (max_size_mb)"],
    }
    assert {s: (r["status"], result.stat(s, "oversize")) for s, r in result.runs.items()} == {
        "small-cap": ("failed", 1), "default-cap": ("ok", 0), "announced": ("failed", 1), "endless": ("failed", 1)}
    assert stored(result.db) == [("greenhouse", i) for i in GITLAB_IDS]


@pytest.mark.slow
def test_sitemaps_too_large_or_not_sitemaps_are_reported(hostile, tmp_path):
    """A gzipped sitemap decompressing beyond the cap, and a sitemap URL answering an HTML page, were
    skipped with a log line only (exit 0): each is now a failed request of the source."""
    result = crawl(tmp_path, jsonld("maps", f'sitemap_urls = ["{hostile.base}/gzip-file/100/sitemaps/jobs.xml.gz", '
                                            f'"{hostile.base}/careers/"]', "allow_private = true"))
    assert result.proc.returncode == 3, result.proc.stderr  # its one source read nothing
    page, bomb = sorted(result.lines("failed")["maps"])
    assert page == f"{hostile.base}/careers/: not a sitemap (text/html; charset=utf-8)"
    assert bomb.startswith(f"{hostile.base}/gzip-file/100/sitemaps/jobs.xml.gz: Refused: response too large: its ")
    assert bomb.endswith(" bytes decompress to more than the size cap of 10485760 bytes (max_size_mb)")
    assert (result.runs["maps"]["errors"], result.stat("maps", "oversize")) == (2, 1)


# --------------------------------------------------------------------------- 8. redirect loops


@pytest.mark.slow
def test_redirect_loops_are_reported(hostile, tmp_path):
    """A redirect back to a URL of its own chain (the duplicate filter dropped the repeat silently:
    exit 0, "errors 0 · ok"), by Location or by meta refresh, is a failed request; a chain within
    REDIRECT_MAX_TIMES (5) is followed, a longer one is counted."""
    base = hostile.base
    result = crawl(tmp_path, jsonld("loops", f'start_urls = ["{base}/h/job.html", "{base}/cycle/2/0", '
                                             f'"{base}/h/refresh-a.html"]', "allow_private = true")
                   + greenhouse("chain5", f"{base}/chain/4/greenhouse", "allow_private = true")
                   + greenhouse("chain7", f"{base}/chain/6/greenhouse", "allow_private = true"))
    assert result.proc.returncode == 1, result.proc.stderr
    failed = result.lines("failed")
    assert sorted(failed["loops"]) == [
        f"{base}/cycle/2/1: Refused: redirect loop: {base}/cycle/2/0 → {base}/cycle/2/1 → {base}/cycle/2/0",
        f"{base}/h/refresh-b.html: Refused: redirect loop: {base}/h/refresh-a.html → {base}/h/refresh-b.html → "
        f"{base}/h/refresh-a.html",
    ]
    assert failed["chain7"] == [f"{base}/chain/1/greenhouse/v1/boards/gitlab/jobs: too many redirects"]
    assert "chain5" not in failed
    got = {s: (r["status"], r["errors"], result.stat(s, "redirect_loops"), result.stat(s, "redirects_exceeded"))
           for s, r in result.runs.items()}
    assert got == {"loops": ("partial", 2, 2, 0), "chain5": ("ok", 0, 0, 0), "chain7": ("failed", 1, 0, 1)}
    assert stored(result.db) == [("greenhouse", i) for i in GITLAB_IDS] + [("jsonld", "careers.example.cn#HZ-AI-0042")]
    assert "redirect loops 2 · partial" in result.proc.stdout


# --------------------------------------------------------------------------- 9. robots.txt


ROBOTS = [
    pytest.param("503", "answered HTTP 503", id="server-error-disallows"),
    pytest.param("500,500,500,500,500,200", "answered HTTP 500", id="server-error-after-every-retry"),
    pytest.param("429", "answered HTTP 429", id="too-many-requests-disallows"),
    pytest.param("0", "could not be fetched (DownloadFailedError: Connection was closed cleanly.)",
                 id="unreachable-disallows"),
    pytest.param("500,200", None, id="readable-on-retry"),
    pytest.param("404", None, id="not-found-allows"),
    pytest.param("403", None, id="forbidden-allows"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("answers", "why"), ROBOTS)
def test_robots_txt_server_errors_disallow_the_host(docroot, tmp_path, answers, why):
    """RFC 9309 §2.3.1: robots.txt answering 5xx (or 429), or not at all, means disallow-all until it can
    be read (it was allow-all); 4xx means allow-all. Retries wait 0.1 s here."""
    with HostileServer(docroot, tmp_path / "robots.log", robots=answers) as srv:
        result = crawl(tmp_path, greenhouse("site", f"{srv.base}/greenhouse", "allow_private = true",
                                            "settings = { JOBCRAWL_RETRY_BACKOFF = 0.1 }"))
        paths = [h.path for h in srv.hits()]
    run = result.runs["site"]
    if why is None:
        assert result.proc.returncode == 0, result.proc.stderr
        assert (run["status"], run["new"], paths[-1]) == ("ok", 2, "/greenhouse/v1/boards/gitlab/jobs")
        return
    assert result.proc.returncode == 3, result.proc.stderr  # its one source read nothing
    assert result.lines("failed") == {"site": [
        f"{srv.base}/greenhouse/v1/boards/gitlab/jobs?content=true: Refused: robots.txt of {srv.base[7:]} {why}: "
        "every page of the host is disallowed until it can be read (RFC 9309)"]}
    assert (run["status"], run["found"], result.stat("site", "robots/unreadable"),
            result.stat("site", "refused/robots")) == ("failed", 0, 1, 1)
    assert set(paths) == {"/robots.txt"} and len(paths) == 4  # the first try and three retries; no page
    assert "refused (robots.txt unreadable) 1" in result.proc.stdout


# --------------------------------------------------------------------------- 12. drips and lying lengths


@pytest.mark.slow
def test_drips_and_lying_lengths_end_with_a_reason(hostile, tmp_path):
    """A body dripping one byte at a time ends at DOWNLOAD_TIMEOUT; a body shorter than its
    Content-Length is a failed request with a reason (the message was empty); a Content-Length shorter
    than the body cuts it, and the cut body is stored raw and quarantined."""
    quick = "settings = { DOWNLOAD_TIMEOUT = 2, RETRY_TIMES = 0 }"
    result = crawl(tmp_path, jsonld("drip", f'start_urls = ["{hostile.base}/drip/0.2/x"]', "allow_private = true", quick)
                   + greenhouse("short", f"{hostile.base}/length/50000/greenhouse", "allow_private = true", quick)
                   + greenhouse("cut", f"{hostile.base}/length/100/greenhouse", "allow_private = true", quick))
    assert result.proc.returncode == 1, result.proc.stderr
    assert result.lines("failed") == {
        "drip": [f"{hostile.base}/drip/0.2/x: timed out on 127.0.0.1"],
        "short": [f"{hostile.base}/length/50000/greenhouse/v1/boards/gitlab/jobs?content=true: ResponseDataLossError: "
                  "the connection closed before the whole body arrived (shorter than its Content-Length)"],
    }
    assert result.lines("quarantined") == {"cut": [
        f"{hostile.base}/length/100/greenhouse/v1/boards/gitlab/jobs?content=true: invalid JSON: Unterminated string "
        "starting at (line 7, column 23)"]}
    assert table(result.db, "SELECT length(text), status FROM raw_inputs") == [(100, "quarantined")]


# --------------------------------------------------------------------------- 12. SIGKILL loop


@pytest.mark.slow
def test_crawl_killed_again_and_again_loses_and_doubles_nothing(docroot, tmp_path):
    """`crawl --jobdir` killed with SIGKILL first once 250 of 400 pages were fetched (every page is in
    the seen-requests file by then, none stored: the writer had no whole batch), then at random
    moments, then run to the end: every run that ends by itself, and the last one, exits 0 with every
    posting stored once. Before, the run after a kill resumed the killed one's JOBDIR, skipped the
    pages it had seen and finished "ok" with them missing; and a kill while the HTTP cache rewrote an
    entry could leave it with an empty body, quarantined on every later run."""
    n = 400
    (docroot / "k").mkdir()
    links = []
    for i in range(n):
        (docroot / "k" / f"{i}.html").write_text(JOB_PAGE.replace("HZ-AI-0042", f"K-{i}"), encoding="utf-8")
        links.append(f'<a href="/k/{i}.html">{i}</a>')
    (docroot / "k" / "index.html").write_text("<html><body>" + "".join(links) + "</body></html>")
    seed = int(os.environ.get("JOBCRAWL_KILL_SEED", "26"))
    rng = random.Random(seed)
    db = tmp_path / "jobs.db"
    every = {f"careers.example.cn#K-{i}" for i in range(n)}
    history = []

    def assert_all_stored() -> None:
        context = f"seed {seed}; runs: {history}"
        assert table(db, "SELECT count(*), count(DISTINCT source_id), max(version), count(closed_at) FROM postings"
                     ) == [(n, n, 1, 0)], context
        assert {r[0] for r in table(db, "SELECT source_id FROM postings")} == every, context

    with MockServer(docroot, tmp_path / "kill.log") as srv:
        (tmp_path / "sources.toml").write_text(
            f'contact = "{CONTACT}"\n\n' + jsonld("k", f'start_urls = ["{srv.base}/k/"]', 'allow = ["/k/"]',
                                                   "allow_private = true", "settings = { AUTOTHROTTLE_ENABLED = false }"))
        command = [sys.executable, "-m", "crawler.cli", "crawl", "k", "--sources", str(tmp_path / "sources.toml"),
                   "--db", str(db), "--jobdir", str(tmp_path / "jobdir")]
        env = dict(os.environ, PYTHONUTF8="1")
        pages = lambda: sum(1 for h in srv.hits() if h.path.startswith("/k/") and h.path != "/k/")  # noqa: E731
        for attempt in range(7):  # the later ones mostly revalidate: each rewrites every cache entry
            proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            start, delay = time.monotonic(), rng.uniform(1.0, 8.0)
            while proc.poll() is None and (pages() < 250 if attempt == 0 else time.monotonic() - start < delay):
                time.sleep(0.02)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                history.append(f"killed after {time.monotonic() - start:.1f} s")
            else:
                history.append(f"exit {proc.returncode}")
                assert proc.returncode == 0, history
                assert_all_stored()
        final = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    history.append(f"exit {final.returncode}")
    assert final.returncode == 0, f"{history}\n{final.stderr}"
    assert_all_stored()


# Stores a small page in the configured HTTP cache storage, says so, then rewrites it with a 64 MB body
# (several seconds of gzip) during which the test kills it.
CACHE_WRITER = """
import os, sys
from scrapy import Request, Spider
from scrapy.http import HtmlResponse
from scrapy.utils.misc import load_object
from scrapy.utils.test import get_crawler
from crawler.settings import project_settings
crawler = get_crawler(Spider, {"HTTPCACHE_DIR": sys.argv[1]})
storage = load_object(project_settings()["HTTPCACHE_STORAGE"])(crawler.settings)
spider = Spider.from_crawler(crawler, name="cache")
storage.open_spider(spider)
request = Request("https://careers.example.com/jobs/1")
storage.store_response(spider, request, HtmlResponse(request.url, body=b"<html>job 1</html>"))
print("stored", flush=True)
storage.store_response(spider, request, HtmlResponse(request.url, body=os.urandom(64 * 2**20)))
"""


def cache_storage(folder: Path):
    """The project's HTTP cache storage over ``folder``, opened for a spider: (storage, spider, request)."""
    from scrapy import Request, Spider
    from scrapy.utils.misc import load_object
    from scrapy.utils.test import get_crawler

    from crawler.settings import project_settings

    crawler = get_crawler(Spider, {"HTTPCACHE_DIR": str(folder)})
    storage = load_object(project_settings()["HTTPCACHE_STORAGE"])(crawler.settings)
    spider = Spider.from_crawler(crawler, name="cache")
    storage.open_spider(spider)
    return storage, spider, Request("https://careers.example.com/jobs/1")


@pytest.mark.slow
def test_cache_entry_killed_while_rewritten_is_a_miss(tmp_path):
    """SIGKILL while an HTTP cache entry is rewritten (its body half written): the entry is a miss,
    the page is fetched again and stored whole. Scrapy's storage had already replaced the entry's
    metadata, so the half-written body was read back (or raised)."""
    from scrapy.http import HtmlResponse

    writer = subprocess.Popen([sys.executable, "-c", CACHE_WRITER, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True)
    assert writer.stdout.readline() == "stored\n"
    [entry] = [p for p in tmp_path.glob("cache/*/*") if p.is_dir()]
    body = entry / "response_body"
    deadline = time.monotonic() + 60
    while (not body.exists() or body.stat().st_size < MB) and writer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    assert MB <= body.stat().st_size < 60 * MB  # killed in the middle of the body
    storage, spider, request = cache_storage(tmp_path)
    assert storage.retrieve_response(spider, request) is None
    storage.store_response(spider, request, HtmlResponse(request.url, body=b"<html>job 1, again</html>"))
    assert storage.retrieve_response(spider, request).body == b"<html>job 1, again</html>"


BROKEN_ENTRIES = [  # what a kill left in an entry written by an older jobcrawl (Scrapy's order of files)
    pytest.param(lambda e: (e / "response_body").write_bytes(b""), id="body-emptied"),
    pytest.param(lambda e: (e / "response_body").unlink(), id="body-missing"),
    pytest.param(lambda e: (e / "response_body").write_bytes((e / "response_body").read_bytes()[:20]), id="body-cut"),
    pytest.param(lambda e: (e / "pickled_meta").write_bytes((e / "pickled_meta").read_bytes()[:15]), id="meta-cut"),
]


@pytest.mark.parametrize("damage", BROKEN_ENTRIES)
def test_cache_entry_that_is_not_whole_is_a_miss(tmp_path, damage):
    from scrapy.extensions.httpcache import FilesystemCacheStorage
    from scrapy.http import HtmlResponse

    storage, spider, request = cache_storage(tmp_path)
    page = HtmlResponse(request.url, body=b"<html>" + b"job 1 " * 200 + b"</html>", headers={"Content-Length": "1213"})
    legacy = FilesystemCacheStorage(spider.crawler.settings)
    legacy.open_spider(spider)
    legacy.store_response(spider, request, page)
    assert storage.retrieve_response(spider, request).body == page.body
    [entry] = [p for p in tmp_path.glob("cache/*/*") if p.is_dir()]
    damage(entry)
    assert storage.retrieve_response(spider, request) is None
    assert not (entry / "pickled_meta").exists()  # the next store writes the entry anew


def test_cache_stores_the_body_length_a_304_replaced(tmp_path):
    """Scrapy freshens a cached page with the headers of a 304, ``Content-Length: 0`` included: the
    stored entry keeps the length of its body (else it would read as broken on every run)."""
    from scrapy.http import HtmlResponse

    storage, spider, request = cache_storage(tmp_path)
    storage.store_response(spider, request, HtmlResponse(request.url, body=b"x" * 100, headers={"Content-Length": "0"}))
    cached = storage.retrieve_response(spider, request)
    assert (cached.body, cached.headers[b"Content-Length"]) == (b"x" * 100, b"100")


def _descendants(pid: int) -> set[int]:
    """The processes under ``pid`` (Linux /proc)."""
    out, todo = set(), [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out.update(children)
            todo.extend(children)
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("when", [0, 20], ids=["while-it-starts", "mid-crawl"])
def test_a_crawl_killed_leaves_no_worker_behind(docroot, tmp_path, when):
    """A crawl runs in a worker process (one source too). `kill -9` of the run's process, as soon as its worker
    exists or once 20 pages were fetched: the worker stops within seconds, and sends no request more (it has
    nowhere to store what it would fetch)."""
    n = 300
    (docroot / "orphan").mkdir(exist_ok=True)
    (docroot / "orphan" / "index.html").write_text(
        "<html><body>" + "".join(f'<a href="/slow/0.2/orphan/{i}.html">{i}</a>' for i in range(n)) + "</body></html>")
    for i in range(n):
        (docroot / "orphan" / f"{i}.html").write_text(JOB_PAGE.replace("HZ-AI-0042", f"O-{i}"), encoding="utf-8")
    with MockServer(docroot, tmp_path / "orphan.log") as srv:
        (tmp_path / "sources.toml").write_text(
            f'contact = "{CONTACT}"\n\n' + jsonld("o", f'start_urls = ["{srv.base}/orphan/"]', 'allow = ["/orphan/"]',
                                                   "allow_private = true", "settings = { AUTOTHROTTLE_ENABLED = false }"))
        proc = subprocess.Popen([sys.executable, "-m", "crawler.cli", "crawl", "o", "--sources", str(tmp_path / "sources.toml"),
                                 "--db", str(tmp_path / "jobs.db")], cwd=ROOT, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        pages = lambda: sum(1 for h in srv.hits() if h.path.startswith("/slow/"))  # noqa: E731
        deadline = time.monotonic() + 60
        while (pages() < when or not _descendants(proc.pid)) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        workers = _descendants(proc.pid)
        assert workers and proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 30
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [pid for pid in workers if _alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert left == []
        fetched = pages()
        time.sleep(1.0)
        assert pages() == fetched < n
