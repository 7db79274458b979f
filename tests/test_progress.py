"""Progress of a run (crawler/run/progress.py): the plain lines of a log (a fake clock: no waiting), the tqdm bar of a
terminal, the choice between them; then the real `jobcrawl ingest` and `crawl` off a terminal, in a pseudo-terminal,
with --quiet and with --json."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from conftest import AS_OF, ROOT, SEEDS, problem_lines, run_cli
from crawler.run.progress import LogProgress, NullProgress, TerminalProgress, make_progress


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_log_progress_writes_a_line_every_period_and_one_per_phase():
    out, clock = io.StringIO(), Clock()
    progress = LogProgress(out, noun="files", every=10, clock=clock, thread=False)
    progress.start("reading", total_bytes=4000)
    progress.advance(inputs=3, postings=150, nbytes=1000)
    clock.now += 9.9
    progress.tick()
    assert out.getvalue() == ""  # not yet 10 s
    clock.now += 0.1
    progress.tick()
    progress.tick()  # once per period
    progress.advance(inputs=9, postings=450, nbytes=3000)
    clock.now += 20
    progress.finish("reading", {"inputs": 12, "postings": 600})
    progress.finish("storing", {"new": 590, "updated": 4, "unchanged": 6, "quarantined": 2})
    progress.start("dedupe")
    clock.now += 12.5
    progress.tick()
    progress.finish("dedupe", {"added": 600, "joined": 3})
    progress.start("scoring")
    clock.now += 75
    progress.finish("scoring", {"scored": 598})
    progress.close()
    assert out.getvalue().splitlines() == [
        "reading: 3 files · 150 postings · 15/s · 25 % of the input · about 30.0 s left",
        "reading: 12 files · 600 postings · 30.0 s",
        "storing: new 590 · updated 4 · unchanged 6 · quarantined 2 · 30.0 s",
        "dedupe: running for 12.5 s",
        "dedupe: 600 postings clustered · 12.5 s",
        "scoring: 598 postings scored · 1 min 15 s",
    ]


def test_log_progress_of_a_crawl_has_no_time_left():
    out, clock = io.StringIO(), Clock()
    progress = LogProgress(out, noun="pages", every=10, clock=clock, thread=False)
    progress.start("reading", total_bytes=None)
    progress.advance(inputs=40, postings=1234)
    clock.now += 10
    progress.tick()
    progress.finish("reading", {"inputs": 40, "postings": 1234, "inputs_unchanged": 0})
    assert out.getvalue().splitlines() == ["reading: 40 pages · 1,234 postings · 123/s",
                                           "reading: 40 pages · 1,234 postings · 10.0 s"]


def test_unchanged_inputs_are_named_in_the_reading_line():
    out, clock = io.StringIO(), Clock()
    progress = LogProgress(out, every=10, clock=clock, thread=False)
    progress.start("reading", total_bytes=0)
    clock.now += 0.25
    progress.finish("reading", {"inputs": 2, "postings": 2, "inputs_unchanged": 2})
    assert out.getvalue() == "reading: 2 files · 2 postings (2 files unchanged, not read again) · 0.25 s\n"


@pytest.mark.parametrize("phase, processes, counts, line", [
    pytest.param("reading", 2, {"inputs": 12, "postings": 600}, "reading: 12 files · 600 postings · 2 worker processes · 1.5 s",
                 id="reading-in-two-workers"),
    pytest.param("reading", 0, {"inputs": 12, "postings": 600}, "reading: 12 files · 600 postings · 1.5 s",
                 id="reading-here"),
    pytest.param("dedupe", 1, {"added": 9}, "dedupe: 9 postings clustered · 1 worker process · 1.5 s", id="dedupe-apart"),
    pytest.param("scoring", 2, {"scored": 9}, "scoring: 9 postings scored · 2 worker processes · 1.5 s",
                 id="scoring-pool"),
])
def test_the_phase_line_names_the_worker_processes(phase, processes, counts, line):
    """crawler/procs.py decides when a phase starts processes; its line says how many."""
    out, clock = io.StringIO(), Clock()
    progress = LogProgress(out, every=10, clock=clock, thread=False)
    progress.start(phase, total_bytes=None, processes=processes)
    clock.now += 1.5
    progress.finish(phase, counts)
    assert out.getvalue() == line + "\n"


def test_the_log_thread_writes_without_being_asked():
    out = io.StringIO()
    progress = LogProgress(out, every=0.05)
    progress.start("dedupe")
    deadline = time.monotonic() + 30
    while "dedupe: running for" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    progress.close()
    assert out.getvalue().startswith("dedupe: running for ")


def test_terminal_progress_counts_postings_with_rate_and_time_left():
    out = io.StringIO()
    progress = TerminalProgress(out, noun="files")
    progress.start("reading", total_bytes=1000)
    for _ in range(4):
        progress.advance(inputs=1, postings=25, nbytes=250)
        progress.bar.refresh()
    progress.finish("reading", {"inputs": 4, "postings": 100})
    progress.finish("storing", {"new": 100})
    progress.start("dedupe")
    progress.finish("dedupe", {"added": 100})
    progress.close()
    frames = [f.strip() for f in re.split(r"[\r\n]", out.getvalue()) if f.strip()]
    assert any(re.fullmatch(r"reading 100/~100 postings [█#]+ \[\d\d:\d\d<\d\d:\d\d, +[\d.?]+/s, files 4\]", f)
               for f in frames), frames
    assert [f for f in frames if ":" in f.split(" ")[0]] == [
        f for f in frames if re.fullmatch(r"(reading: 4 files · 100 postings|storing: new 100 · updated 0 · "
                                          r"unchanged 0 · quarantined 0|dedupe: 100 postings clustered) · .* s", f)]
    assert len([f for f in frames if ":" in f.split(" ")[0]]) == 3


def test_make_progress_picks_by_the_stream():
    assert isinstance(make_progress(io.StringIO(), quiet=True), NullProgress)
    log = make_progress(io.StringIO())
    assert isinstance(log, LogProgress)
    log.close()
    master, slave = os.openpty()
    try:
        with open(slave, "w", closefd=False) as tty:
            assert isinstance(make_progress(tty), TerminalProgress)
    finally:
        os.close(master)
        os.close(slave)


# --------------------------------------------------------------------------- through the CLI

PHASE_LINES = [r"reading: 2 files · 2 postings · [\d.]+ s", r"storing: new 2 · updated 0 · unchanged 0 · quarantined 0 · [\d.]+ s",
               r"dedupe: 2 postings clustered · [\d.]+ s", r"scoring: 2 postings scored · [\d.]+ s"]


@pytest.mark.slow
def test_ingest_off_a_terminal_writes_a_line_per_phase(tmp_path):
    proc = run_cli("ingest", str(SEEDS), "--db", str(tmp_path / "jobs.db"), "--as-of", AS_OF, check=True)
    lines = proc.stderr.splitlines()
    assert len(lines) == 4 and all(re.fullmatch(p, line) for p, line in zip(PHASE_LINES, lines)), lines
    assert proc.stdout.splitlines()[0] == "files read 2 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 0"


@pytest.mark.slow
def test_quiet_and_json(tmp_path):
    db = str(tmp_path / "jobs.db")
    quiet = run_cli("ingest", str(SEEDS), "--db", db, "--as-of", AS_OF, "--quiet")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    again = run_cli("ingest", str(SEEDS), "--db", db, "--as-of", AS_OF, "--json", "-q")
    assert (again.returncode, again.stderr) == (0, "")
    report = json.loads(again.stdout)
    assert (report["kind"], report["status"], report["counts"]["unchanged"], report["counts"]["files_unchanged"],
            report["total_postings"], sorted(report["steps"])) == ("ingest", "ok", 2, 2, 2,
                                                                   ["dedupe", "score", "signals", "velocity"])


@pytest.mark.slow
def test_crawl_json_is_a_list_of_reports(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sources = tmp_path / "sources.toml"
    sources.write_text(f'[sources.closed]\nspider = "lever"\nboards = ["acme"]\nbase_url = "http://127.0.0.1:{port}"\n'
                       'allow_private = true\nsettings = { RETRY_TIMES = 0 }\n', encoding="utf-8")
    proc = run_cli("crawl", "--all", "--sources", str(sources), "--db", str(tmp_path / "jobs.db"), "--json")
    assert proc.returncode == 3
    reports = json.loads(proc.stdout)
    assert [(r["source"], r["status"], r["crawl"]["failures"]) for r in reports] == [
        ("closed", "failed", {f"connection refused by 127.0.0.1:{port}": 1})]
    assert problem_lines(proc.stderr) == [f"closed: failed: connection refused by 127.0.0.1:{port}"]
    # A crawl of one source reads in a worker process (crawler/procs.py): the line says so.
    # (a line every 10 s may come before it on a slow machine)
    assert [line for line in proc.stderr.splitlines()
            if re.fullmatch(r"reading: 0 pages · 0 postings · 1 worker process · [\d.]+ s", line)] != []


def run_in_a_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    """`jobcrawl ARGS` with stdout and stderr on a pseudo-terminal 100 columns wide; (exit status, what it showed)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "crawler.cli", *args], cwd=cwd, stdout=slave, stderr=slave,
                            env=dict(os.environ, PYTHONUTF8="1", COLUMNS="100"))
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.slow
def test_ingest_on_a_terminal_shows_a_bar_counting_postings(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(12):
        for seed in SEEDS.glob("*.txt"):
            text = seed.read_text(encoding="utf-8").replace("吉利汽车", f"吉利汽车{i}").replace("初速度", f"初速度{i}")
            (folder / f"{i}_{seed.name}").write_text(text, encoding="utf-8")
    code, shown = run_in_a_terminal("ingest", str(folder), "--db", str(tmp_path / "jobs.db"), "--workers", "1",
                                    "--as-of", AS_OF, cwd=ROOT)
    assert code == 0, shown
    frames = [f.strip() for f in re.split(r"[\r\n]", shown) if f.strip()]
    # tqdm pads a rate under 10/s to five characters (`  9.66/s`)
    bars = [f for f in frames if re.fullmatch(r"reading \d+/~\d+ postings .*\[\d\d:\d\d<\d\d:\d\d, +[\d.?]+/s, files \d+\]", f)]
    assert bars, frames
    lines = [f for f in frames if f.split(" ")[0] in ("reading:", "storing:", "dedupe:", "scoring:")]
    assert [line.split(" ·")[0] for line in lines] == [
        "reading: 24 files", "storing: new 24", "dedupe: 24 postings clustered", "scoring: 24 postings scored",
        "dedupe: 24 clustered"]  # the last one is the summary's, on stdout
