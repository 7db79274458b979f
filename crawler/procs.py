"""Helper processes: a worker that dies with its parent, and a function run in a fresh process."""

from __future__ import annotations

import multiprocessing
import os
import signal
import traceback
from typing import Any, Callable


def die_with_parent() -> None:
    """Ask the kernel to kill this process when its parent dies (Linux; elsewhere a no-op)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(1)
    except (OSError, AttributeError):  # not Linux: the worker still ends when its pipe closes
        pass


MMAP_THRESHOLD = 128 * 1024
"""glibc's default: blocks at least this large are mmap-ed, and returned to the system when freed."""


def fixed_mmap_threshold() -> None:
    """Keep glibc's mmap threshold at :data:`MMAP_THRESHOLD` in this process (glibc only; elsewhere a no-op).

    By default glibc raises the threshold whenever a mmap-ed block is freed, up to 32 MB, so later
    large blocks (numpy temporaries in dedupe, pickled batches in the stage worker) come from the
    heap and stay resident after they are freed. A fixed threshold returns them: bench/ingest.py
    100k, the dedupe process peaked at 266-268 MB without it and 231 MB with it.
    """
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD; setting it disables the adjustment
    except (OSError, AttributeError):
        pass


class ChildFailed(RuntimeError):
    """The function run by :func:`call_in_fresh_process` raised, or its process died."""


def run_reporting(conn, func: Callable[..., Any], args: tuple) -> None:
    """Body of a helper process: die with the parent, run ``func(*args)`` and send ``("ok", result)`` or
    ``("error", traceback)`` on ``conn``, then close it."""
    die_with_parent()
    fixed_mmap_threshold()
    try:
        conn.send(("ok", func(*args)))
    except BaseException:  # re-raised in the parent, with this traceback
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def call_in_fresh_process(func: Callable[..., Any], *args: Any, name: str = "jobcrawl-child") -> Any:
    """``func(*args)`` in a newly spawned Python process; returns its (picklable) result.

    The child imports only what ``func``'s module needs, and its memory is returned to the system when
    it ends. It may start processes of its own (it is not a daemon) and dies with this process.
    Raises :class:`ChildFailed` with the child's traceback, or its exit code if it died.
    """
    context = multiprocessing.get_context("spawn")  # no fork: the caller may hold threads (Scrapy, writers)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=run_reporting, args=(sender, func, args), name=name)
    process.start()
    sender.close()
    try:
        status, value = receiver.recv()
    except EOFError:
        process.join()
        raise ChildFailed(f"{name} died (exit code {process.exitcode})") from None
    finally:
        receiver.close()
    process.join()
    if status == "error":
        raise ChildFailed(f"{name} failed:\n{value}")
    return value
