"""One writer run per database: an exclusive ``fcntl.flock`` on ``<db>.lock``, next to the database's
resolved path (symlinks and ``..`` followed), so that every path reaching one database file takes one lock.

The lock belongs to the open file, so the kernel releases it when the process ends, however it
ends (SIGKILL included): a stale lock file never blocks the next run. The run removes the file
before it releases the lock, so none is left behind; a run that takes the lock checks that the
path still names the file it locked (else the file was removed under it and it locks the new one),
so two runs never hold two different files. The file holds the pid and start time of the run, for
the message the next run prints.
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
    """The lock file of ``db``: ``<resolved db path>.lock``."""
    return Path(f"{Path(db).resolve()}.lock")


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


@contextmanager
def db_lock(db: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the lock of ``db`` for the block; raise :class:`LockHeld` at once if another process has it,
    :class:`crawler.store.ReadOnlyDatabase` if ``db`` cannot be written (nor its lock made)."""
    from crawler.store import require_writable

    require_writable(db)
    path = lock_path(db)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            raise LockHeld(f"{os.fspath(db)} is locked by another jobcrawl run ({holder}); lock file {path}") from None
        if _same_file(fd, path):
            break
        os.close(fd)  # the holder removed it between our open and our lock: lock the file there now
    try:
        os.ftruncate(fd, 0)
        stamp = datetime.now(timezone.utc).replace(microsecond=0).isoformat()
        os.pwrite(fd, f"pid {os.getpid()}, started {stamp}\n".encode(), 0)
        yield path
    finally:
        try:
            os.unlink(path)  # while still locked: nobody can take a lock on it in between
        except FileNotFoundError:
            pass
        os.close(fd)  # closing the descriptor releases the lock
