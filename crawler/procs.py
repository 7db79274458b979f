"""A function run in a fresh process (the dedupe step at scale): its result, or its failure."""

from __future__ import annotations

import gc
import multiprocessing
import traceback
from typing import Any, Callable


GC_THRESHOLDS = (10_000, 50, 50)
"""The cyclic collector's thresholds in jobcrawl's own processes (CPython's default: 700, 10, 10)."""


def settle_gc(*, freeze: bool = True) -> None:
    """Make the cyclic garbage collector cheap for a run: a run allocates millions of short-lived containers
    (items, rows, Scrapy's requests and deferreds), and at CPython's default thresholds its collections,
    each older one walking the whole heap, took a tenth of a worker's time. ``freeze`` moves what is alive
    now (modules, the skill taxonomy, built components) out of every collection's reach; call it once a
    process is set up, and only in a process this project owns."""
    if freeze:
        gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class ChildFailed(RuntimeError):
    """The function run by :func:`call_in_fresh_process` raised, or its process died."""


def run_reporting(conn, func: Callable[..., Any], args: tuple) -> None:
    """Body of a helper process: run ``func(*args)`` and send ``("ok", result)`` or ``("error", traceback)``
    on ``conn``, then close it."""
    settle_gc()
    try:
        conn.send(("ok", func(*args)))
    except BaseException:  # re-raised in the parent, with this traceback
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


class Child:
    """A function running in a fresh process (:func:`start_in_fresh_process`)."""

    def __init__(self, process, receiver, name: str):
        self.process, self.receiver, self.name = process, receiver, name
        self._outcome: tuple[str, Any] | None = None

    def result(self) -> Any:
        """Wait for the function's result (the same one on every call); raises :class:`ChildFailed` with the
        child's traceback, or its exit code if it died."""
        if self._outcome is None:
            try:
                self._outcome = self.receiver.recv()
            except EOFError:
                self.process.join()
                self._outcome = ("died", self.process.exitcode)
            finally:
                self.receiver.close()
            self.process.join()
        status, value = self._outcome
        if status == "died":
            raise ChildFailed(f"{self.name} died (exit code {value})")
        if status == "error":
            raise ChildFailed(f"{self.name} failed:\n{value}")
        return value

    def close(self) -> None:
        """Stop the child if its result was never asked for (the caller gave up on it)."""
        if self._outcome is None and self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.receiver.close()


def start_in_fresh_process(func: Callable[..., Any], *args: Any, name: str = "jobcrawl-child") -> Child:
    """Start ``func(*args)`` in a newly spawned Python process; :meth:`Child.result` waits for its (picklable)
    result. The child imports only what ``func``'s module needs, and its memory is returned to the system when
    it ends. It may start processes of its own (it is not a daemon)."""
    context = multiprocessing.get_context("spawn")  # no fork: the caller may hold threads (Scrapy, writers)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=run_reporting, args=(sender, func, args), name=name)
    process.start()
    sender.close()
    return Child(process, receiver, name)


def call_in_fresh_process(func: Callable[..., Any], *args: Any, name: str = "jobcrawl-child") -> Any:
    """``func(*args)`` in a newly spawned Python process (:func:`start_in_fresh_process`); returns its result.
    Raises :class:`ChildFailed` with the child's traceback, or its exit code if it died."""
    return start_in_fresh_process(func, *args, name=name).result()
