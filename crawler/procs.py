"""Processes: when a run starts them besides its own (the one rule, below) and how: its reading workers and scoring
processes forked from one server that has imported the run path (:func:`context`); a helper function in a freshly
spawned process of its own, its result or its failure (:func:`call_in_fresh_process`).

``workers`` is the one switch (``--workers N``, default: the number of cores); with 1, everything runs in this
process. Above 1, a step starts processes only where they win back their start-up (a run's first process waits
for the fork server's imports and taxonomy; a spawned helper imports its own; figures in bench/README.md):

- **reading** (Scrapy engines with the whole pipeline chain): one process per shard, up to ``workers``, for a
  crawl or for an ingest of more than :data:`READ_APART_MIN_BYTES` of files; the one writer stays here;
- **dedupe**: planned in a process of its own while this one scores, from :data:`DEDUPE_APART_MIN` postings;
- **scoring**: up to :data:`MAX_SCORING` processes from :data:`SCORE_POOL_MIN` active postings; beside the dedupe's
  planner they yield the CPU to it.

The run's phase lines name the processes of a phase that used more than this one.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import time
import traceback
from dataclasses import dataclass
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
    _return_freed_blocks()
    try:
        conn.send(("ok", func(*args)))
    except BaseException:  # re-raised in the parent, with this traceback
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _return_freed_blocks(threshold: int = 2**20) -> None:
    """Serve every allocation of ``threshold`` bytes or more from a mapping of its own, returned to the system when
    freed. glibc's default threshold rises to the size of each large block freed (up to 32 MB), after which such
    blocks come from the heap and stay resident once freed: the dedupe planner's band-table runs, made and merged
    away by the dozen, would grow its peak with every one."""
    import ctypes

    try:
        ctypes.CDLL(None).mallopt(-3, threshold)  # M_MMAP_THRESHOLD; a fixed value ends the rising
    except (AttributeError, OSError):  # not glibc
        pass


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


def context():
    """The multiprocessing context of a run's reading workers and scoring processes: forked from one server that has
    imported the run path and built the packaged skill taxonomy (crawler/run/preload.py), instead of a fresh
    interpreter that imports and builds them again. The server starts with this process's first child and ends with
    this process. A child gets this process's working folder and ``sys.path`` (multiprocessing sends them); start it
    through :func:`with_environment` and it gets the environment too."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["crawler.run.preload"])
    return ctx


def with_environment(target: Callable[..., Any], *args: Any) -> tuple[Callable[..., Any], tuple]:
    """``(target, args)`` for a process of :func:`context` that calls ``target(*args)`` in this process's environment
    of now (the server's is the one it started with)."""
    return _in_environment, (dict(os.environ), target, *args)


def _in_environment(environ: dict[str, str], target: Callable[..., Any], *args: Any) -> Any:
    if os.environ != environ:
        os.environ.clear()
        os.environ.update(environ)
        time.tzset()
    return target(*args)


def start_in_fresh_process(func: Callable[..., Any], *args: Any, name: str = "jobcrawl-child") -> Child:
    """Start ``func(*args)`` in a newly spawned Python process; :meth:`Child.result` waits for its (picklable)
    result. The child imports only what ``func``'s module needs (the dedupe planner, which holds a corpus's
    signatures, is not forked from :func:`context`'s server with the whole run path in its memory), and its memory
    is returned to the system when it ends. It may start processes of its own (it is not a daemon)."""
    ctx = multiprocessing.get_context("spawn")  # no fork: the caller may hold threads (Scrapy, writers)
    receiver, sender = ctx.Pipe(duplex=False)
    process = ctx.Process(target=run_reporting, args=(sender, func, args), name=name)
    process.start()
    sender.close()
    return Child(process, receiver, name)


def call_in_fresh_process(func: Callable[..., Any], *args: Any, name: str = "jobcrawl-child") -> Any:
    """``func(*args)`` in a newly spawned Python process (:func:`start_in_fresh_process`); returns its result.
    Raises :class:`ChildFailed` with the child's traceback, or its exit code if it died."""
    return start_in_fresh_process(func, *args, name=name).result()


# --------------------------------------------------------------------------- when processes start

READ_APART_MIN_BYTES = 8 * 2**20
DEDUPE_APART_MIN = 5_000
SCORE_POOL_MIN = 5_000
MAX_SCORING = 2
SCORING_NICENESS = 10


def default_workers() -> int:
    """The switch's default: the number of cores."""
    return os.cpu_count() or 1


def reading(workers: int | None, input_bytes: int | None, shards: int) -> int:
    """Worker processes that read: 0 (this process reads) or one per shard. ``input_bytes``: of an ingest's
    files, None for a crawl (a crawl of one source runs in a worker too: its engine then does not share a core
    with the writer); ``shards``: the parts the work splits into, at most ``workers``."""
    if (workers or default_workers()) <= 1 or input_bytes is not None and input_bytes <= READ_APART_MIN_BYTES:
        return 0
    return max(1, shards)


@dataclass(frozen=True)
class Corpus:
    """How the corpus steps after a run use processes: ``dedupe_apart`` (planned in a process of its own beside the
    scoring), ``scoring`` processes (1: this one) and their ``niceness``."""

    dedupe_apart: bool = False
    scoring: int = 1
    niceness: int = 0


def scoring(workers: int | None, active: int) -> int:
    """Scoring processes for ``active`` postings (1: this process)."""
    n = min(workers or default_workers(), MAX_SCORING)
    return n if n > 1 and active >= SCORE_POOL_MIN else 1


def corpus(workers: int | None, postings: int, active: int) -> Corpus:
    """The corpus steps' processes for a database of ``postings`` (``active`` of them open)."""
    if (workers or default_workers()) <= 1 or postings < DEDUPE_APART_MIN:
        return Corpus(scoring=scoring(workers, active))
    pool = scoring(workers, active)
    return Corpus(dedupe_apart=True, scoring=pool, niceness=SCORING_NICENESS if pool > 1 else 0)
