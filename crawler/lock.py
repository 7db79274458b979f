"""One writer run per database: an exclusive ``fcntl.flock`` on ``<db>.lock``.

The lock belongs to the open file, so the kernel releases it when the process ends, however it
ends (SIGKILL included): a stale lock file never blocks the next run. The file is left in place
(removing it would let two runs lock two different files); it holds the pid and start time of
the run that last locked it, for the message the next run prints.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator


class LockHeld(RuntimeError):
    """Another process holds the database's lock."""


def lock_path(db: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(db)}.lock")


@contextmanager
def db_lock(db: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the lock of ``db`` for the block; raise :class:`LockHeld` at once if another process has it."""
    path = lock_path(db)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
            raise LockHeld(f"{os.fspath(db)} is locked by another jobcrawl run ({holder}); lock file {path}") from None
        os.ftruncate(fd, 0)
        stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
        os.pwrite(fd, f"pid {os.getpid()}, started {stamp}\n".encode(), 0)
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the lock
