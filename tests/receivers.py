"""Real local receivers for alert tests: an HTTP server (webhook, ntfy) and an SMTP server (aiosmtpd).

Both listen on 127.0.0.1 on a free port, in a thread of the test process, and keep what they received.
"""

from __future__ import annotations

import email
import email.policy
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass(frozen=True)
class Received:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """An HTTP server that answers POSTs with the statuses of ``plan`` in turn, then ``200``.

    ``before_answer(request)`` runs after a request is recorded and before it is answered (a test kills
    the sender there). ``requests`` holds every request in order; ``url(path)`` is an address of it.
    """

    def __init__(self, plan: list[int] | None = None, before_answer: Callable[[Received], None] | None = None):
        self.plan, self.before_answer = list(plan or []), before_answer
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                got = Received(self.path, dict(self.headers.items()), self.rfile.read(length))
                with owner._lock:
                    owner.requests.append(got)
                    status = owner.plan.pop(0) if owner.plan else 200
                if owner.before_answer:
                    owner.before_answer(got)
                body = b"ok\n" if status < 400 else f"status {status}\n".encode()
                self.send_response(status)
                if status == 503:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"


class Dripper:
    """A server on 127.0.0.1 that answers every connection with ``answer`` one byte every ``interval`` seconds (an
    HTTP status line and headers, an SMTP greeting): each byte comes well within a socket timeout, the whole
    answer never soon. It reads nothing (a short request waits in the socket's buffer)."""

    def __init__(self, answer: bytes, interval: float = 0.2):
        self.answer, self.interval = answer, interval
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            for byte in self.answer:
                if self.stop.wait(self.interval):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return

    def __enter__(self) -> Dripper:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SmtpSink:
    """An aiosmtpd server on 127.0.0.1 keeping every message it accepts (``messages``, parsed)."""

    def __init__(self):
        from aiosmtpd.controller import Controller

        self.messages: list[email.message.EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        owner = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                owner.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
                owner.messages.append(email.message_from_bytes(envelope.original_content or envelope.content,
                                                               policy=email.policy.default))
                return "250 Message accepted for delivery"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def __enter__(self) -> SmtpSink:
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()
