"""A real ``redis-server`` for tests and benchmarks: a free port on 127.0.0.1, a temporary folder, no
persistence; stopped by its PID."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """``with RedisServer(folder) as r: r.url``; ``r.client()`` gives a redis-py client."""

    def __init__(self, folder: Path):
        self.folder, self.port, self.proc = Path(folder), free_port(), None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed (Debian: apt-get install redis-server)")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder), "--save", "",
             "--appendonly", "no", "--protected-mode", "yes", "--logfile", str(self.folder / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = self.client()
        for _ in range(100):
            try:
                client.ping()
                return self
            except Exception:  # noqa: BLE001 — not listening yet
                if self.proc.poll() is not None:
                    raise RuntimeError(f"redis-server exited {self.proc.returncode}") from None
                time.sleep(0.05)
        self.__exit__()
        raise RuntimeError("redis-server did not answer")

    def client(self):
        import redis

        return redis.Redis.from_url(self.url)

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
