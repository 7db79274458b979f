"""A hostile HTTP server for crawl tests: what a site nobody controls may answer. Run in a subprocess.

    python tests/hostile_server.py --root DIR --log FILE [--robots 503,200]   # prints its base URL

It listens on a free port of 127.0.0.1. Built on ``http.server`` (a thread per connection, HTTP/1.0:
the connection closes after each response) rather than Twisted, so that every byte on the wire is
its own: wrong lengths, drips and endless bodies. Paths (``<rest>`` is a path served as below):

- ``/robots.txt``              the statuses of ``--robots`` in turn, the last one repeating (default
  200); a 200 allows everything, a 0 closes the connection without an answer;
- ``/chain/<n>/<rest>``        302 to ``/chain/<n-1>/<rest>``; ``/chain/0/<rest>`` 302 to ``/<rest>``;
- ``/cycle/<k>/<i>``           302 to ``/cycle/<k>/<i+1 mod k>``: a redirect loop of k URLs;
- ``/to/<netloc>/<rest>``      302 to ``http://<netloc>/<rest>`` (another port, ``localhost``,
  ``169.254.169.254`` …);
- ``/drip/<seconds>/<rest>``   200 announcing 1 MB, then one byte every ``<seconds>``, for ever;
- ``/endless/<rest>``          200 without a length (the body ends when the connection does), 64 KB
  chunks for ever; ``<rest>`` only sets the Content-Type;
- ``/big/<mb>/<rest>``         200 announcing ``<mb>`` MB, then spaces until the client goes away;
- ``/gzip-bomb/<mb>/<rest>``   the file, then ``<mb>`` MB of spaces, gzip-compressed, sent with
  ``Content-Encoding: gzip`` (a few KB on the wire per 10 MB);
- ``/gzip-file/<mb>/<rest>.gz`` the same bytes as a ``.gz`` file (no Content-Encoding: a sitemap.xml.gz);
- ``/length/<n>/<rest>``       the file with ``Content-Length: <n>`` whatever its size;
- ``/status/<code>/<rest>``    always ``<code>``;
- anything else                the file under ROOT (a folder: its ``index.html``; ``.json`` and
  ``.html`` appended to a missing path), ``{{BASE}}`` replaced by the base URL in text files.

Each request is one tab-separated line in LOG, in the format of tests/mockserver.py, written when its
status line is sent (a drip never ends): method, URI, status, ``-``, User-Agent.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
import zlib
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

from mockserver import CONTENT_TYPES, MockServer, find_file, served_body

MB = 2**20
CHUNK = 64 * 1024


class HostileServer(MockServer):
    """The hostile server in a subprocess, as a context manager (``url()``, ``hits()``, ``root``)."""

    def __init__(self, root: Path, log: Path, *, robots: str = "200"):
        super().__init__(root, log)
        self.robots = robots

    def command(self) -> list[str]:
        return [sys.executable, __file__, "--root", str(self.root), "--log", str(self.log), "--robots", self.robots]


def padded(body: bytes, mb: int) -> bytes:
    """``body`` then ``mb`` MB of spaces, gzip-compressed in steps (the padding is never held whole)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # 16+: a gzip header and trailer
    out = [packer.compress(body)]
    spaces = b" " * MB
    out += [packer.compress(spaces) for _ in range(mb)]
    out.append(packer.flush())
    return b"".join(out)


def make_handler(root: Path, log, robots: list[int]):
    robot_answers = itertools.chain(robots, itertools.repeat(robots[-1]))
    lock = threading.Lock()
    bombs = lru_cache(maxsize=8)(padded)

    class Handler(BaseHTTPRequestHandler):
        server_version = "hostile/1"

        def log_message(self, format, *args):  # noqa: A002 - the stdlib's signature
            pass

        @property
        def base(self) -> str:
            return f"http://{self.headers.get('Host') or '127.0.0.1:%d' % self.server.server_port}"

        def record(self, status: int) -> None:
            with lock:
                agent = (self.headers.get("User-Agent") or "-").replace("\t", " ")
                log.write(f"{self.command}\t{self.path}\t{status}\t-\t{agent}\t{time.time():.3f}\n")

        def start(self, status: int, headers: dict[str, str]) -> None:
            self.record(status)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()

        def answer(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
            self.start(status, {"Content-Length": str(len(body)), **(headers or {})})
            self.wfile.write(body)

        def redirect(self, location: str) -> None:
            self.answer(302, b"", {"Location": location})

        def file(self, parts: list[str]) -> tuple[bytes, str] | None:
            """The bytes and Content-Type of the file ``parts`` names, or None."""
            path = find_file(root, parts)
            if path is None:
                return None
            return served_body(path, self.base), CONTENT_TYPES.get(path.suffix, "application/octet-stream")

        def stream(self, chunk: bytes, pause: float = 0.0) -> None:
            """Write ``chunk`` again and again until the client goes away."""
            while True:
                self.wfile.write(chunk)
                self.wfile.flush()
                if pause:
                    time.sleep(pause)

        def do_GET(self) -> None:
            try:
                self.route([p for p in urlsplit(self.path).path.split("/") if p and p not in (".", "..")])
            except (BrokenPipeError, ConnectionResetError):
                pass

        def route(self, parts: list[str]) -> None:
            head, args = (parts[0], parts[1:]) if parts else ("", [])
            if parts == ["robots.txt"]:
                with lock:
                    status = next(robot_answers)
                if status == 0:  # no answer at all: the connection closes
                    return self.record(0)
                return self.answer(status, b"User-agent: *\nAllow: /\n" if status == 200 else b"no robots here\n",
                                   {"Content-Type": "text/plain"})
            if head == "chain" and args and args[0].isdigit():
                n = int(args[0])
                return self.redirect("/" + "/".join((["chain", str(n - 1)] if n else []) + args[1:]))
            if head == "cycle" and len(args) == 2:
                return self.redirect(f"/cycle/{args[0]}/{(int(args[1]) + 1) % int(args[0])}")
            if head == "to" and args:
                return self.redirect(f"http://{unquote(args[0])}/" + "/".join(args[1:]))
            if head == "drip" and args:
                self.start(200, {"Content-Type": "text/html; charset=utf-8", "Content-Length": str(MB)})
                return self.stream(b" ", float(args[0]))
            if head == "endless":
                self.start(200, {"Content-Type": CONTENT_TYPES.get(Path(parts[-1]).suffix, "text/html")})
                return self.stream(b" " * CHUNK)
            if head == "big" and args:
                self.start(200, {"Content-Type": "text/html", "Content-Length": str(int(args[0]) * MB)})
                return self.stream(b" " * CHUNK)
            if head == "status" and args:
                return self.answer(int(args[0]), b"status\n", {"Content-Type": "text/plain"})
            found = self.file(args[1:] if head != "gzip-file" else [*args[1:-1], args[-1].removesuffix(".gz")])
            if head in ("gzip-bomb", "gzip-file", "length") and args and found is None:
                return self.answer(404, b"not found\n", {"Content-Type": "text/plain"})
            if head == "gzip-bomb":
                body, ctype = found
                return self.answer(200, bombs(body, int(args[0])), {"Content-Type": ctype, "Content-Encoding": "gzip"})
            if head == "gzip-file":
                return self.answer(200, bombs(found[0], int(args[0])), {"Content-Type": "application/x-gzip"})
            if head == "length":
                body, ctype = found
                self.start(200, {"Content-Type": ctype, "Content-Length": args[0]})
                return self.wfile.write(body)
            found = self.file(parts)
            if found is None:
                return self.answer(404, b"not found\n", {"Content-Type": "text/plain"})
            self.answer(200, found[0], {"Content-Type": found[1]})

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description="Hostile HTTP server for crawl tests.")
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--log", required=True, type=Path)
    parser.add_argument("--robots", default="200", help="robots.txt statuses in turn, comma-separated")
    args = parser.parse_args()
    log = args.log.open("a", encoding="utf-8", buffering=1)
    robots = [int(s) for s in args.robots.split(",")]
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(args.root.resolve(), log, robots))
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
