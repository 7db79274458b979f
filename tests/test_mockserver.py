"""The mock HTTP server the crawl tests use (tests/mockserver.py) leaves the machine as it found it."""

from __future__ import annotations

import os
import urllib.request

import pytest

from mockserver import MockServer


def files_open_for_writing(pid: int) -> list[str]:
    """Paths of the files (not pipes or sockets) that process ``pid`` holds open for writing, beyond fds 0–2."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fdinfo/{fd}") as info:
                flags = int(next(line for line in info if line.startswith("flags:")).split()[1], 8)
        except FileNotFoundError:  # closed since it was listed (a connection the server just ended)
            continue
        if int(fd) > 2 and target.startswith("/") and flags & (os.O_WRONLY | os.O_RDWR):
            out.append(target)
    return sorted(out)


@pytest.mark.slow
def test_the_mock_server_writes_its_own_log_alone(tmp_path):
    """Twisted's ``Site(logPath=os.devnull)`` wrote an access log through a LogFile that rotates at 1,000,000
    bytes: a long benchmark renamed /dev/null to /dev/null.1 and left a regular file in its place, and tests that
    read /dev/null failed. The server writes the log the tests read, and nothing else."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "a.html").write_text("<p>a</p>", encoding="utf-8")
    with MockServer(tmp_path / "www", tmp_path / "requests.log") as server:
        with urllib.request.urlopen(server.url("a.html"), timeout=10) as response:
            assert response.status == 200
        assert files_open_for_writing(server.proc.pid) == [str(tmp_path / "requests.log")]
