"""Shared fixtures: paths, a CLI runner that starts the real `jobcrawl` in a subprocess, fresh databases."""

from __future__ import annotations

import json
import os
import pickle
import re
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "seeds"
FIXTURES = ROOT / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"
AS_OF = "2026-11-29T12:00:00+08:00"


FRESH_PROCESS = frozenset({"serve", "worker"})
"""Commands :func:`run_cli` always runs in a fresh interpreter (long-running servers)."""


def run_cli(*args: str, cwd: Path | None = None, check: bool = False, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run `jobcrawl ARGS` as a process of its own: forked from this session's :class:`Zygote` (jobcrawl imported
    once) or, for the commands of :data:`FRESH_PROCESS` and without a zygote, a fresh Python process. ``env``: more
    environment variables (an empty value removes one)."""
    env = {k: v for k, v in dict(os.environ, PYTHONUTF8="1", **(env or {})).items() if v or k not in (env or {})}
    if ZYGOTE.alive() and args and args[0] not in FRESH_PROCESS and ZYGOTE.lock.acquire(blocking=False):
        try:  # one command at a time through the zygote; another thread's meanwhile runs as a fresh process
            proc = ZYGOTE.run(args, cwd or ROOT, env, timeout)
        finally:
            ZYGOTE.lock.release()
    else:
        proc = subprocess.run([sys.executable, "-m", "crawler.cli", *args], cwd=cwd or ROOT, env=env,
                              capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"jobcrawl {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


class Zygote:
    """A process forked when the session starts — before any test imported Twisted or started a thread — that
    imports jobcrawl's CLI and its run path once, then forks one child per :func:`run_cli` command. Each child starts
    from that same clean state, runs the command as ``python -m crawler.cli`` would (its environment and working
    folder the caller's; stdout and stderr file descriptors, its own processes' too, into files) and ends with
    ``os._exit``: a process of its own, without an interpreter's start and imports (about a second a command)."""

    PRELOAD = ("crawler.cli", "crawler.api", "crawler.run.runner", "crawler.run.project", "crawler.pipelines",
               "crawler.ingest.tabular", "crawler.store.queries", "crawler.score.step", "crawler.dedupe.step",
               "crawler.signals.step", "crawler.market.velocity", "crawler.alerts.delivery", "scrapy.crawler")

    def __init__(self) -> None:
        import threading

        self.pid: int | None = None
        self.lock = threading.Lock()

    def alive(self) -> bool:
        return self.pid is not None

    def start(self) -> None:
        requests_r, requests_w = os.pipe()
        results_r, results_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(requests_w)
            os.close(results_r)
            self._serve(os.fdopen(requests_r, "rb"), os.fdopen(results_w, "wb"))
        os.close(requests_r)
        os.close(results_w)
        self.pid, self.requests, self.results = pid, os.fdopen(requests_w, "wb"), os.fdopen(results_r, "rb")

    def stop(self) -> None:
        if self.pid is not None:
            self.requests.close()
            os.waitpid(self.pid, 0)
            self.pid = None

    def run(self, args, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="jobcrawl-cli-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            try:
                pickle.dump((list(args), str(cwd), env, str(out), str(err)), self.requests)
                self.requests.flush()
                child = pickle.load(self.results)
            except (BrokenPipeError, EOFError):  # the zygote is gone (it could not import jobcrawl): say so
                self.pid = None
                raise RuntimeError("the test session's zygote process ended; run with "
                                   "JOBCRAWL_TEST_FRESH_PROCESSES=1 to see why") from None
            deadline = time.monotonic() + timeout
            while not select.select([self.results], [], [], 0.5)[0]:
                if time.monotonic() > deadline:
                    os.kill(child, signal.SIGKILL)
                    pickle.load(self.results)
                    raise subprocess.TimeoutExpired(["jobcrawl", *args], timeout)
            status = pickle.load(self.results)
            stdout, stderr = (p.read_bytes().decode("utf-8", "replace").replace("\r\n", "\n") for p in (out, err))
        return subprocess.CompletedProcess([sys.executable, "-m", "crawler.cli", *args],
                                           os.waitstatus_to_exitcode(status), stdout, stderr)

    def _serve(self, requests, results) -> None:
        """The zygote's loop: never returns."""
        import importlib

        try:
            for name in self.PRELOAD:
                importlib.import_module(name)
            while True:
                try:
                    args, cwd, env, out, err = pickle.load(requests)
                except EOFError:
                    break
                child = os.fork()
                if child == 0:
                    requests.close()
                    results.close()
                    _child_main(args, cwd, env, out, err)
                pickle.dump(child, results)
                results.flush()
                pickle.dump(os.waitpid(child, 0)[1], results)
                results.flush()
        finally:
            os._exit(0)


def _child_main(args: list[str], cwd: str, env: dict[str, str], out: str, err: str) -> None:
    """A command's child of the :class:`Zygote`: never returns."""
    import importlib
    import io
    import traceback

    status = 1
    try:
        for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, out, os.O_WRONLY | os.O_CREAT),
                                (2, err, os.O_WRONLY | os.O_CREAT)):
            opened = os.open(path, flags, 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                      errors="backslashreplace", write_through=True)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()
        importlib.reload(sys.modules["crawler.settings"])  # its defaults read the environment
        sys.argv = [str(ROOT / "crawler" / "cli" / "__main__.py"), *args]
        try:
            sys.modules["crawler.cli"].main.main(args, prog_name="python -m crawler.cli")
            status = 0
        except SystemExit as exit_:
            code = exit_.code
            if isinstance(code, str):
                print(code, file=sys.stderr)
            status = code if isinstance(code, int) else 0 if code is None else 1
        except BaseException:
            traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status)


ZYGOTE = Zygote()


FUZZ_SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
FAST_SUBSET = False  # set by pytest_configure: this run is `-m "not slow"`


def examples(n: int) -> int:
    """A randomized test's example budget (hypothesis, or seeded random inputs): ``n`` in the whole suite, a quarter
    of it in the fast subset (``-m "not slow"``, the edit loop), times ``FUZZ_SCALE`` (e.g. 10 for a longer hunt)."""
    return max(1, int(n * FUZZ_SCALE * (0.25 if FAST_SUBSET else 1)))


def pytest_configure(config):
    """Compile the project's modules once (the controller, or a run without xdist) and fork the :class:`Zygote` in
    each process that runs tests (not in an xdist controller). Pytest keeps the test modules' rewritten bytecode even
    under PYTHONDONTWRITEBYTECODE: rewriting every module's asserts takes about 7 s a process. The fast subset takes a
    quarter of each hypothesis budget."""
    global FAST_SUBSET
    sys.dont_write_bytecode = False
    FAST_SUBSET = config.getoption("markexpr", "") == "not slow"
    controller = getattr(config.option, "numprocesses", None) and not os.environ.get("PYTEST_XDIST_WORKER")
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        compile_project()
    if not controller and not os.environ.get("JOBCRAWL_TEST_FRESH_PROCESSES"):
        ZYGOTE.start()


def compile_project() -> None:
    """Write the bytecode of crawler/, normalize/, browse/ and bench/ where it is missing or stale, also when
    PYTHONDONTWRITEBYTECODE is set: the Python processes the tests start (crawls, servers, spawned workers) then
    read it instead of compiling every module again (about 0.35 s a process)."""
    import compileall

    for folder in ("crawler", "normalize", "browse", "bench"):
        compileall.compile_dir(ROOT / folder, quiet=2, workers=1)


def pytest_unconfigure(config):
    ZYGOTE.stop()


PROGRESS_LINE = re.compile(r"(reading|storing|dedupe|scoring): ")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """``rows`` as a JSON Lines file at ``path`` (its folders made)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def sql(db: Path, query: str, *args) -> list[tuple]:
    """The rows of ``query`` on the database at ``db``."""
    with sqlite3.connect(db) as conn:
        return conn.execute(query, args).fetchall()


def problem_lines(stderr: str) -> list[str]:
    """A run's stderr without its progress lines (one per phase, and one every 10 s: crawler/run/progress.py)."""
    return [line for line in stderr.splitlines() if not PROGRESS_LINE.match(line)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_serve(db: Path, *options: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """`jobcrawl serve` over ``db`` (with ``options``) on a free port, once it answers on 127.0.0.1:
    (process, base URL).

    The caller terminates the process; its stderr is a pipe (the `serving …` line)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "crawler.cli", "serve", "--db", str(db), "--port", str(port), *options],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=None if env is None else dict(os.environ, **env))
    base = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            urllib.request.urlopen(base + "/-/versions.json", timeout=5).close()
            return proc, base
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"jobcrawl serve exited {proc.returncode}: {proc.stderr.read()}")
            time.sleep(0.2)
    proc.terminate()
    pytest.fail("jobcrawl serve did not answer")


def export_records(db: Path) -> list[dict]:
    proc = run_cli("export", "--db", str(db), check=True)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def indexed_postings(conn: sqlite3.Connection) -> int:
    """How many postings the full-text index ``postings_fts`` holds (their ids, read from the index alone)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_instances USING fts5vocab(main, postings_fts, instance)")
    return conn.execute("SELECT count(DISTINCT doc) FROM temp.fts_instances").fetchone()[0]


def signal_ids_as_keys(records: list[dict]) -> list[dict]:
    """The records with the posting ids their ghost signals' sentences and likely employer's evidence name replaced
    by those postings' keys (a sentence's list of them sorted): ids follow the order in which postings were stored,
    which worker processes change."""
    key_of = {r["id"]: r["key"] for r in records}

    def keys(match: re.Match) -> str:
        return ", ".join(sorted(key_of[int(i)] for i in re.findall(r"#(\d+)", match[0])))

    out = []
    for r in records:
        r = dict(r)
        if r.get("likely_employer_evidence"):
            r["likely_employer_evidence"] = {**r["likely_employer_evidence"],
                                             "posting_id": key_of[r["likely_employer_evidence"]["posting_id"]]}
        r["ghost_signals"] = [{**s, "sentence": re.sub(r"#\d+(?:, #\d+)*", keys, s["sentence"])}
                              for s in r.get("ghost_signals") or []]
        out.append(r)
    return out


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A path for a fresh database file."""
    return tmp_path / "jobs.db"


@pytest.fixture(scope="session")
def seeded_db(tmp_path_factory) -> Path:
    """A database with both seeds ingested at AS_OF (read-only use)."""
    path = tmp_path_factory.mktemp("seeded") / "jobs.db"
    run_cli("ingest", str(SEEDS), "--db", str(path), "--as-of", AS_OF, check=True)
    return path


@pytest.fixture
def sqlite_runs(monkeypatch):
    """Counts the queries that reach SQLite (Datasette's own Database.execute) through the cache."""
    from datasette.database import Database

    runs: list[str] = []
    real = Database.execute

    async def counted(self, sql, *args, **kwargs):
        runs.append(sql)
        return await real(self, sql, *args, **kwargs)

    monkeypatch.setattr(Database, "execute", counted)
    return runs


# The test files that take longest (`pytest --durations=40`), longest first. They are handed out first: with
# `--dist loadfile` a file runs whole in one process, and a long file started last keeps one core busy alone.
LONGEST_FIRST = ("test_hostile_crawl.py", "test_crawl.py", "test_distributed.py", "test_ats_more.py", "test_serve.py",
                 "test_bad_input.py", "test_distributed_faults.py", "test_shared_trust.py", "test_crash.py",
                 "test_reingest.py", "test_tabular.py", "test_import_shared.py", "test_score_report.py", "test_alerts.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "shared_data" in item.keywords and not SHARED_DATA.exists():
            item.add_marker(pytest.mark.skip(reason=f"{SHARED_DATA} is absent"))
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's own order is kept
