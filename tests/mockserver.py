"""A mock HTTP server for crawl tests and benchmarks, run in a subprocess (Scrapy's own test style).

    python tests/mockserver.py --root DIR --log FILE     # prints its base URL once it listens

It listens on 127.0.0.1 (or another loopback address, ``--host``) on a free port and serves the files under ROOT: a URL path names a file
(query strings are ignored); a folder serves its ``index.html``; a missing path (or a folder
without ``index.html``) is tried with ``.json`` then ``.html`` appended, so
``/greenhouse/v1/boards/gitlab/jobs?content=true`` serves ``greenhouse/v1/boards/gitlab/jobs.json``.
In ``.html``, ``.xml`` and ``.txt`` files ``{{BASE}}`` becomes the server's base URL (sitemaps and
robots.txt need absolute URLs).

Paged APIs: a file ``NAME@K=V.json`` (or ``NAME@K=V@K2=V2.json``) answers instead of ``NAME.json``
when the request's query string or JSON body has every ``K=V`` of its name (body values as
text: ``{"offset": 20}`` matches ``offset=20``); the variant naming the most pairs wins.

Every file response carries ``ETag`` (a hash of the body), ``Last-Modified`` (the file's mtime)
and ``Cache-Control: max-age=0``; a request whose ``If-None-Match`` matches, or whose
``If-Modified-Since`` is not older than the file, gets ``304 Not Modified``.

Behaviours, as path prefixes before the path of a file (they compose):

- ``/status/<code>/…``      always answer ``<code>``;
- ``/fail-once/<code>/…``   the first request of this exact URL answers ``<code>`` (a 429 or 503
  with ``Retry-After: 1``), later ones serve the rest of the path;
- ``/slow/<seconds>/…``     wait, then serve the rest;
- ``/redirect-loop/…/<n>``  302 to ``…/<n+1>``, for ever (a session-id style loop).

Each request is one tab-separated line in LOG, written when it is answered: method, URI, status,
``conditional`` or ``-``, User-Agent, the time (Unix seconds, ms precision).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

FIXTURES_WEB = Path(__file__).resolve().parents[1] / "fixtures" / "web"

# Where the recorded API responses live on the mock server (URL path without query → fixture).
API_LAYOUT = {
    "greenhouse/v1/boards/gitlab/jobs.json": "ats/greenhouse_gitlab_jobs.json",
    "greenhouse/v1/boards/examplerobotics/jobs.json": "ats/greenhouse_mixed_listing.json",
    "greenhouse/v1/boards/truncated/jobs.json": "ats/greenhouse_truncated.json",
    "lever/v0/postings/matchgroup.json": "ats/lever_matchgroup_postings.json",
    "ashby/posting-api/job-board/linear.json": "ats/ashby_linear_job_board.json",
    "ashby/posting-api/job-board/examplecomp.json": "ats/ashby_compensation.json",
    "recruitee/examplevision/api/offers.json": "ats/recruitee_offers.json",
    "smartrecruiters/v1/companies/ExampleAI/postings.json": "ats/smartrecruiters_postings_0.json",
    "smartrecruiters/v1/companies/ExampleAI/postings@offset=2.json": "ats/smartrecruiters_postings_2.json",
    "smartrecruiters/v1/companies/ExampleAI/postings/744000200000001.json": "ats/smartrecruiters_posting_744000200000001.json",
    "smartrecruiters/v1/companies/ExampleAI/postings/744000200000002.json": "ats/smartrecruiters_posting_744000200000002.json",
    "workday/wday/cxs/exampleai/External/jobs.json": "ats/workday_jobs_0.json",
    "workday/wday/cxs/exampleai/External/jobs@offset=2.json": "ats/workday_jobs_2.json",
    "workday/wday/cxs/exampleai/External/job/Santa-Clara-CA/Senior-LLM-Inference-Engineer_JR-2001.json":
        "ats/workday_job_JR-2001.json",
    "workday/wday/cxs/exampleai/External/job/China-Shanghai/GPU-Cluster-SRE_JR-2002.json": "ats/workday_job_JR-2002.json",
    "workable/api/v1/widget/accounts/examplerobotics.json": "ats/workable_widget.json",
    "workable/api/v3/accounts/exampledata/jobs.json": "ats/workable_jobs_0.json",
    "workable/api/v3/accounts/exampledata/jobs@token=T2.json": "ats/workable_jobs_T2.json",
    "workable/api/v2/accounts/exampledata/jobs/K1K1K1K1K1.json": "ats/workable_job_K1K1K1K1K1.json",
    "workable/api/v2/accounts/exampledata/jobs/K2K2K2K2K2.json": "ats/workable_job_K2K2K2K2K2.json",
}
CONTENT_TYPES = {".json": "application/json", ".html": "text/html; charset=utf-8", ".xml": "application/xml",
                 ".txt": "text/plain; charset=utf-8", ".htm": "text/html"}  # .htm: a page that names no charset
TEMPLATED = {".html", ".xml", ".txt"}


def build_docroot(dest: Path) -> Path:
    """Lay the recorded fixtures out as the mock server serves them: ``www/`` (robots.txt, sitemaps,
    career index), ``site/jobs/`` (JSON-LD pages) and the API responses at their API paths."""
    shutil.copytree(FIXTURES_WEB / "www", dest, dirs_exist_ok=True)
    shutil.copytree(FIXTURES_WEB / "site", dest / "site", dirs_exist_ok=True)
    for target, fixture in API_LAYOUT.items():
        (dest / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES_WEB / fixture, dest / target)
    return dest


def find_file(root: Path, parts: list[str]) -> Path | None:
    """The file a URL path names under ``root`` (a folder: its ``index.html``; a missing path tried with
    ``.json`` then ``.html``), or None."""
    path = root.joinpath(*parts) if parts else root
    if path.is_dir() and (path / "index.html").is_file():
        path = path / "index.html"
    if not path.is_file():
        path = next((Path(f"{path}{ext}") for ext in (".json", ".html") if Path(f"{path}{ext}").is_file()), path)
    if not path.is_file() or root not in path.resolve().parents:
        return None
    return path


def served_body(path: Path, base: str) -> bytes:
    """The bytes of a served file, ``{{BASE}}`` replaced by the server's base URL in text files."""
    body = path.read_bytes()
    return body.replace(b"{{BASE}}", base.encode()) if path.suffix in TEMPLATED else body


@dataclass(frozen=True)
class Hit:
    """One logged request."""

    method: str
    uri: str
    status: int
    conditional: bool
    user_agent: str
    at: float = 0.0
    """When it was answered (Unix seconds)."""

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path


class MockServer:
    """The server in a subprocess, as a context manager: ``url(path)``, ``hits()``, ``root``."""

    def __init__(self, root: Path, log: Path, host: str = "127.0.0.1"):
        self.root, self.log, self.host = Path(root), Path(log), host
        self.proc: subprocess.Popen | None = None
        self.base = ""

    def command(self) -> list[str]:
        """The server process's command line."""
        return [sys.executable, __file__, "--root", str(self.root), "--log", str(self.log), "--host", self.host]

    def __enter__(self) -> MockServer:
        self.log.write_text("")
        self.proc = subprocess.Popen(self.command(), stdout=subprocess.PIPE, text=True)
        self.base = self.proc.stdout.readline().strip()
        if not self.base.startswith(f"http://{self.host}:"):
            self.proc.kill()
            raise RuntimeError(f"mock server did not start: {self.base!r}")
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def url(self, path: str = "") -> str:
        return self.base + "/" + path.lstrip("/")

    def hits(self) -> list[Hit]:
        out = []
        for line in self.log.read_text(encoding="utf-8").splitlines():
            method, uri, status, conditional, agent, at = line.split("\t")
            out.append(Hit(method, uri, int(status), conditional == "conditional", agent, float(at)))
        return out


# --------------------------------------------------------------------------- the server process


def serve(root: Path, log_path: Path, host: str = "127.0.0.1") -> None:
    from twisted.internet import reactor
    from twisted.web import resource, server

    log = log_path.open("a", encoding="utf-8", buffering=1)
    failed_once: set[bytes] = set()

    def base_of(request) -> str:
        host = request.getHeader("host") or f"127.0.0.1:{request.getHost().port}"
        return f"http://{host}"

    def finish(request, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        if getattr(request, "_gone", False):
            return
        request.setResponseCode(status)
        for name, value in (headers or {}).items():
            request.setHeader(name, value)
        conditional = request.getHeader("if-none-match") or request.getHeader("if-modified-since")
        agent = (request.getHeader("user-agent") or "-").replace("\t", " ")
        log.write(f"{request.method.decode()}\t{request.uri.decode()}\t{status}\t"
                  f"{'conditional' if conditional else '-'}\t{agent}\t{time.time():.3f}\n")
        request.setHeader("Content-Length", str(len(body)))
        if request.method != b"HEAD":
            request.write(body)
        request.finish()

    def serve_file(request, parts: list[str]) -> None:
        path = find_file(root, parts)
        if path is None:
            return finish(request, 404, b"not found\n", {"Content-Type": "text/plain"})
        path = variant(path, request_params(request))
        body = served_body(path, base_of(request))
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        mtime = int(path.stat().st_mtime)
        headers = {"ETag": etag, "Last-Modified": formatdate(mtime, usegmt=True), "Cache-Control": "max-age=0",
                   "Content-Type": CONTENT_TYPES.get(path.suffix, "application/octet-stream")}
        if_none_match = request.getHeader("if-none-match")
        if_modified_since = request.getHeader("if-modified-since")
        if if_none_match is not None:
            fresh = etag in [t.strip() for t in if_none_match.split(",")]
        elif if_modified_since is not None:
            try:
                fresh = parsedate_to_datetime(if_modified_since).timestamp() >= mtime
            except (TypeError, ValueError):
                fresh = False
        else:
            fresh = False
        if fresh:
            return finish(request, 304, b"", {k: v for k, v in headers.items() if k != "Content-Type"})
        finish(request, 200, body, headers)

    def request_params(request) -> dict[str, str]:
        """The query string's pairs and the JSON body's top-level scalars, as text."""
        params = dict(parse_qsl(urlsplit(request.uri.decode("utf-8", "replace")).query))
        try:
            body = json.loads(request.content.read() or b"null")
        except ValueError:
            body = None
        if isinstance(body, dict):
            params.update({k: json.dumps(v) if isinstance(v, bool) or v is None else str(v)
                           for k, v in body.items() if not isinstance(v, (dict, list))})
        return params

    listings: dict[Path, tuple[int, list[str]]] = {}

    def variants_of(path: Path) -> list[Path]:
        """The ``NAME@*.ext`` siblings of ``path`` (as ``glob`` finds them), from a listing of its folder kept
        while the folder is unchanged and was last changed over a second ago (a glob per request cost a
        benchmark's server more CPU than the crawler it served)."""
        folder = path.parent
        stamp = folder.stat().st_mtime_ns
        kept = listings.get(folder)
        if kept is None or kept[0] != stamp:
            kept = (stamp, [e.name for e in os.scandir(folder) if "@" in e.name])
            if time.time_ns() - stamp > 1_000_000_000:  # settled: a change within the clock's tick is seen
                listings[folder] = kept
        head, tail = path.stem + "@", path.suffix
        return [folder / name for name in kept[1]
                if name.startswith(head) and name.endswith(tail) and len(name) >= len(head) + len(tail)]

    def variant(path: Path, params: dict[str, str]) -> Path:
        """The ``NAME@K=V….ext`` sibling of ``path`` whose pairs the request has, most pairs first."""
        best, most = path, 0
        for candidate in variants_of(path):
            pairs = [p.partition("=") for p in candidate.name[len(path.stem) + 1:-len(path.suffix)].split("@")]
            if all(params.get(k) == v for k, _, v in pairs) and len(pairs) > most:
                best, most = candidate, len(pairs)
        return best

    def route(request, parts: list[str]) -> None:
        head = parts[0] if parts else ""
        if head == "status" and len(parts) >= 2:
            return finish(request, int(parts[1]), f"status {parts[1]}\n".encode(), {"Content-Type": "text/plain"})
        if head == "fail-once" and len(parts) >= 2:
            if request.uri not in failed_once:
                failed_once.add(request.uri)
                code = int(parts[1])
                headers = {"Content-Type": "text/plain"}
                if code in (429, 503):
                    headers["Retry-After"] = "1"
                return finish(request, code, f"status {code}\n".encode(), headers)
            return route(request, parts[2:])
        if head == "slow" and len(parts) >= 2:
            reactor.callLater(float(parts[1]), route, request, parts[2:])
            return None
        if head == "redirect-loop" and parts[-1].isdigit():
            following = parts[:-1] + [str(int(parts[-1]) + 1)]
            return finish(request, 302, b"", {"Location": "/" + "/".join(following)})
        return serve_file(request, parts)

    class Root(resource.Resource):
        isLeaf = True

        def render(self, request):
            request.notifyFinish().addErrback(lambda _: setattr(request, "_gone", True))
            path = request.path.decode("utf-8", "replace")
            route(request, [p for p in path.split("/") if p and p not in (".", "..")])
            return server.NOT_DONE_YET

    class QuietSite(server.Site):
        def log(self, request) -> None:
            """No access log: ``finish`` writes the log the tests read. (``Site(logPath=os.devnull)`` logged to a
            twisted LogFile, which rotates at 1,000,000 bytes: it renamed /dev/null and made a regular file there.)"""

    port = reactor.listenTCP(0, QuietSite(Root()), interface=host).getHost().port
    reactor.callWhenRunning(lambda: print(f"http://{host}:{port}", flush=True))
    reactor.run()


def main() -> None:
    parser = argparse.ArgumentParser(description="Mock HTTP server for crawl tests.")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--host", default="127.0.0.1",
                        help="Loopback address to listen on (127.0.0.2 … also reach this machine on Linux: one host name "
                             "each, for benchmarks of many hosts)")
    args = parser.parse_args()
    if not args.host.startswith("127."):
        parser.error("--host must be a loopback address (127.x.x.x)")
    serve(args.root.resolve(), args.log, args.host)


if __name__ == "__main__":
    main()
