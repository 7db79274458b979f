"""What a run tells while it goes, shown to whoever watches it.

The run (crawler/run/runner.py) calls a :class:`Progress`: :meth:`~Progress.start` and :meth:`~Progress.finish`
around each phase — ``reading`` (inputs read and postings found, the spiders and pipelines), ``storing`` (what
the writer made of them), ``dedupe``, ``scoring`` — and :meth:`~Progress.advance` while reading. It knows
nothing of terminals; :func:`make_progress` picks how to show it:

- on a terminal, :class:`TerminalProgress`: one tqdm bar counting postings, with their rate and, for files
  (whose total size is known), the time left; a line per phase when it ends;
- elsewhere (cron, CI, ``| tee``), :class:`LogProgress`: a plain line every 10 s and a line per phase;
- ``--quiet``: :class:`NullProgress`.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Protocol, TextIO

PHASES = ("reading", "storing", "dedupe", "scoring")


class Progress(Protocol):
    def start(self, phase: str, *, total_bytes: int | None = None, processes: int = 0) -> None:
        """A phase begins; ``reading`` may say how many bytes of input it will read; ``processes``: the worker
        processes it uses besides this one (crawler/procs.py), named in the line that ends it."""

    def advance(self, *, inputs: int = 0, postings: int = 0, nbytes: int = 0) -> None:
        """While reading: more inputs (files, pages) read, postings through the pipelines, bytes of input read."""

    def finish(self, phase: str, counts: dict[str, int]) -> None:
        """A phase ended, with its counts."""

    def close(self) -> None:
        """The run is over (also after an error)."""


class NullProgress:
    """Shows nothing (``--quiet``, ``--json`` scripts that want stderr quiet too)."""

    def start(self, phase: str, *, total_bytes: int | None = None, processes: int = 0) -> None:
        pass

    def advance(self, *, inputs: int = 0, postings: int = 0, nbytes: int = 0) -> None:
        pass

    def finish(self, phase: str, counts: dict[str, int]) -> None:
        pass

    def close(self) -> None:
        pass


def _n(value: int) -> str:
    return f"{value:,}"


def _seconds(value: float) -> str:
    if value < 1:
        return f"{value:.2f} s"
    if value < 60:
        return f"{value:.1f} s"
    minutes, seconds = divmod(int(round(value)), 60)
    return f"{minutes} min {seconds:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


class _Tally:
    """Counts of the reading phase and of each phase's duration, shared by the displays."""

    def __init__(self, noun: str, clock: Callable[[], float]):
        self.noun, self.clock = noun, clock
        self.inputs = self.postings = self.nbytes = 0
        self.total_bytes: int | None = None
        self.phase: str | None = None
        self.started: dict[str, float] = {}
        self.processes: dict[str, int] = {}

    def start(self, phase: str, total_bytes: int | None, processes: int = 0) -> None:
        self.phase = phase
        self.started[phase] = self.clock()
        self.processes[phase] = processes
        if phase == "reading":
            self.total_bytes = total_bytes or None

    def advance(self, inputs: int, postings: int, nbytes: int) -> None:
        self.inputs += inputs
        self.postings += postings
        self.nbytes += nbytes

    def elapsed(self, phase: str) -> float:
        """Seconds since ``phase`` started; storing goes on while reading: since reading started."""
        now = self.clock()
        return max(now - self.started.get(phase, self.started.get("reading", now)), 0.0)

    def eta(self) -> float | None:
        """Seconds left reading, from the bytes read so far (None when the total is not known)."""
        if not self.total_bytes or not self.nbytes:
            return None
        left = max(self.total_bytes - self.nbytes, 0)
        return self.elapsed("reading") * left / self.nbytes

    def line(self, phase: str, counts: dict[str, int]) -> str:
        """The line that ends a phase."""
        took = _seconds(self.elapsed(phase))
        apart = self.processes.get(phase, 0)
        if apart:
            took = f"{apart} worker process{'es' if apart > 1 else ''} · {took}"
        if phase == "reading":
            unchanged = counts.get("inputs_unchanged", 0)
            return (f"reading: {_n(counts.get('inputs', 0))} {self.noun} · {_n(counts.get('postings', 0))} postings"
                    + (f" ({_n(unchanged)} {self.noun} unchanged, not read again)" if unchanged else "") + f" · {took}")
        if phase == "storing":
            parts = " · ".join(f"{k} {_n(counts.get(k, 0))}" for k in ("new", "updated", "unchanged", "quarantined"))
            return f"storing: {parts} · {took}"
        if phase == "dedupe":
            return f"dedupe: {_n(counts.get('added', 0))} postings clustered · {took}"
        if phase == "scoring":
            return f"scoring: {_n(counts.get('scored', 0))} postings scored · {took}"
        return f"{phase}: " + " · ".join(f"{k} {_n(v)}" for k, v in counts.items()) + f" · {took}"


class LogProgress:
    """Plain lines for a log: every ``every`` seconds one on the phase under way, and one when each phase ends.

    A daemon thread calls :meth:`tick` (tests call it themselves, with their own ``clock``)."""

    def __init__(self, stream: TextIO, *, noun: str = "files", every: float = 10.0,
                 clock: Callable[[], float] = time.monotonic, thread: bool = True):
        self.stream, self.every = stream, every
        self.tally = _Tally(noun, clock)
        self.last = clock()
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="jobcrawl-progress", daemon=True) if thread else None
        if self._thread:
            self._thread.start()

    def _write(self, line: str) -> None:
        with self.lock:
            self.stream.write(line + "\n")
            self.stream.flush()

    def _run(self) -> None:
        while not self._stop.wait(min(self.every, 1.0)):
            self.tick()

    def tick(self) -> None:
        """Write the periodic line when ``every`` seconds have passed since the last line."""
        t = self.tally
        if t.phase is None or t.clock() - self.last < self.every:
            return
        self.last = t.clock()
        if t.phase == "reading":
            elapsed = t.elapsed("reading")
            rate = t.postings / elapsed if elapsed > 0 else 0.0
            eta = t.eta()
            share = f" · {100 * t.nbytes / t.total_bytes:.0f} % of the input" if t.total_bytes else ""
            left = f" · about {_seconds(eta)} left" if eta is not None else ""
            self._write(f"reading: {_n(t.inputs)} {t.noun} · {_n(t.postings)} postings · {rate:,.0f}/s{share}{left}")
        else:
            self._write(f"{t.phase}: running for {_seconds(t.elapsed(t.phase))}")

    def start(self, phase: str, *, total_bytes: int | None = None, processes: int = 0) -> None:
        self.tally.start(phase, total_bytes, processes)
        self.last = self.tally.clock()

    def advance(self, *, inputs: int = 0, postings: int = 0, nbytes: int = 0) -> None:
        self.tally.advance(inputs, postings, nbytes)

    def finish(self, phase: str, counts: dict[str, int]) -> None:
        self._write(self.tally.line(phase, counts))
        self.last = self.tally.clock()

    def close(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=2)


class TerminalProgress:
    """One tqdm bar on a terminal: postings while reading (rate, and time left when the input size is known), the
    elapsed time of the steps after it; each phase's line printed above it when the phase ends."""

    def __init__(self, stream: TextIO, *, noun: str = "files"):
        self.stream = stream
        self.tally = _Tally(noun, time.monotonic)
        self.bar = None

    def _bar(self, phase: str):
        from tqdm import tqdm

        self._close_bar()
        if phase == "reading":
            # Postings counted; the total is estimated from the bytes read, so it shows as ~N.
            fmt = "{desc} {n_fmt} postings [{elapsed}, {rate_fmt}{postfix}]"
            self.bar = tqdm(total=None, desc="reading", unit="", file=self.stream, bar_format=fmt,
                            dynamic_ncols=True, leave=False)
        else:
            self.bar = tqdm(total=None, desc=phase, file=self.stream, bar_format="{desc} [{elapsed}]", leave=False)

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def start(self, phase: str, *, total_bytes: int | None = None, processes: int = 0) -> None:
        self.tally.start(phase, total_bytes, processes)
        if phase != "storing":  # stored as read: no bar of its own
            self._bar(phase)

    def advance(self, *, inputs: int = 0, postings: int = 0, nbytes: int = 0) -> None:
        t = self.tally
        t.advance(inputs, postings, nbytes)
        if self.bar is None or t.phase != "reading":
            return
        if t.total_bytes and t.nbytes and t.postings:
            # Bytes are counted as inputs are read and postings as they are stored, so the estimate is made
            # again on every update (and never below the postings counted: tqdm drops a total that n passed).
            self.bar.bar_format = ("{desc} {n_fmt}/~{total_fmt} postings {bar:20} "
                                   "[{elapsed}<{remaining}, {rate_fmt}{postfix}]")
            self.bar.total = max(t.postings * t.total_bytes // t.nbytes, t.postings)
        self.bar.set_postfix_str(f"{t.noun} {_n(t.inputs)}", refresh=False)
        self.bar.update(postings)

    def finish(self, phase: str, counts: dict[str, int]) -> None:
        from tqdm import tqdm

        if phase != "storing":
            if self.bar is not None:
                self.bar.refresh()  # its last state, even when every update came within one refresh interval
            self._close_bar()
        tqdm.write(self.tally.line(phase, counts), file=self.stream)

    def close(self) -> None:
        self._close_bar()


def make_progress(stream: TextIO, *, quiet: bool = False, noun: str = "files") -> Progress:
    """The display for ``stream``: nothing when ``quiet``, a tqdm bar on a terminal, plain lines elsewhere."""
    if quiet:
        return NullProgress()
    if stream.isatty():
        return TerminalProgress(stream, noun=noun)
    return LogProgress(stream, noun=noun)
