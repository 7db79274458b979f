"""A function run in a fresh process (the dedupe step at scale): its result, or its failure."""

from __future__ import annotations

import multiprocessing
import traceback
from typing import Any, Callable


class ChildFailed(RuntimeError):
    """The function run by :func:`call_in_fresh_process` raised, or its process died."""


def run_reporting(conn, func: Callable[..., Any], args: tuple) -> None:
    """Body of a helper process: run ``func(*args)`` and send ``("ok", result)`` or ``("error", traceback)``
    on ``conn``, then close it."""
    try:
        conn.send(("ok", func(*args)))
    except BaseException:  # re-raised in the parent, with this traceback
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def call_in_fresh_process(func: Callable[..., Any], *args: Any, name: str = "jobcrawl-child") -> Any:
    """``func(*args)`` in a newly spawned Python process; returns its (picklable) result.

    The child imports only what ``func``'s module needs, and its memory is returned to the system when
    it ends. It may start processes of its own (it is not a daemon).
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
