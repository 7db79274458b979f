"""Hostile and odd inputs of ``jobcrawl ingest`` (issue #26, points 1–5): no hang, no unbounded
memory, no forged output line, no row lost. The CLI runs in a subprocess with a memory cap and a
timeout, so that the behaviours of old code (memory growing on /dev/zero, a FIFO blocking forever)
fail the test instead of the machine."""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import AS_OF, ROOT, SEEDS
from crawler.inputs import Problem, TooLarge, open_regular, open_stream, quote_name, resolve_inputs
from crawler.lock import LockHeld, db_lock, lock_path

SEED0 = (SEEDS / "000_7c4373297891d5ca.txt").read_bytes()
SEED3 = (SEEDS / "003_5eabc84b6ca487f0.txt").read_bytes()
PROSE = "这是一段备忘录，不是职位。\n".encode("utf-8")
MEMORY_CAP = 3 * 2**30  # the old code read /dev/zero until memory ran out
ROOT_WITHOUT_CAPS = ["setpriv", "--inh-caps=-all", "--bounding-set=-all"]
"""As root, a folder of mode 000 is still readable: the run drops the capabilities that allow it."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def ingest(*args: str, unprivileged: bool = False, timeout: float = 180) -> subprocess.CompletedProcess:
    """`jobcrawl ingest ARGS` in a fresh process under a memory cap (and without root's capabilities
    when ``unprivileged``); a run that hangs fails the test with TimeoutExpired."""
    command = [sys.executable, "-m", "crawler.cli", "ingest", *args]
    if unprivileged and os.geteuid() == 0:
        command = ROOT_WITHOUT_CAPS + command
    return subprocess.run(command, cwd=ROOT, env=dict(os.environ, PYTHONUTF8="1"), capture_output=True, text=True,
                          timeout=timeout, preexec_fn=_capped)


def can_lock_out_root() -> bool:
    return os.geteuid() != 0 or shutil.which("setpriv") is not None


def quarantined_lines(stderr: str) -> list[str]:
    return sorted(line for line in stderr.splitlines() if line.startswith("quarantined: "))


# --------------------------------------------------------------------------- points 1 and 2: files that are not files


def make_hostile_folder(root: Path) -> None:
    """Good files beside every kind of path that is not a regular file to read."""
    (root / "good").mkdir(parents=True)
    (root / "good" / "seed0.txt").write_bytes(SEED0)
    (root / "good" / "jobs.csv").write_text("title,company\n推理工程师,甲公司\n", encoding="utf-8")
    (root / "zero.txt").symlink_to("/dev/zero")
    (root / "null.txt").symlink_to("/dev/null")
    os.mkfifo(root / "fifo.txt")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(root / "sock.txt"))
    (root / "dangling.txt").symlink_to("nowhere.txt")
    (root / "loop.txt").symlink_to("loop.txt")
    (root / "big.txt").write_bytes(SEED3 * 40)  # 214 KB, over --max-file-size 200K
    (root / "big.csv").write_bytes(b"title,company\n" + b"x,y\n" * 60_000)
    (root / "locked").mkdir()
    (root / "locked" / "seed3.txt").write_bytes(SEED3)
    (root / "locked").chmod(0)


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    if not can_lock_out_root():
        pytest.skip("root without setpriv: a folder of mode 000 stays readable")
    root = tmp_path_factory.mktemp("hostile") / "in"
    make_hostile_folder(root)
    db = root.parent / "jobs.db"
    try:
        proc = ingest(str(root), "--db", str(db), "--as-of", AS_OF, "--max-file-size", "200K", unprivileged=True)
    finally:
        (root / "locked").chmod(0o755)
    return proc, db


HOSTILE_LINES = [
    pytest.param("zero.txt: a character device, not a regular file: not read", id="symlink-to-dev-zero"),
    pytest.param("null.txt: a character device, not a regular file: not read", id="symlink-to-dev-null"),
    pytest.param("fifo.txt: a FIFO (named pipe), not a regular file: not read", id="fifo"),
    pytest.param("sock.txt: a socket, not a regular file: not read", id="socket"),
    pytest.param("dangling.txt: dangling symlink to nowhere.txt: not read", id="dangling-symlink"),
    pytest.param("loop.txt: symlink loop: not read", id="symlink-loop"),
    pytest.param("locked: folder not read: Permission denied", id="unreadable-folder"),
    pytest.param("big.txt: too large: 214.3 KB exceeds the cap of 200 KB (--max-file-size); first 64 KB kept",
                 id="text-over-the-cap"),
    pytest.param("big.csv: too large: 234.4 KB exceeds the cap of 200 KB (--max-file-size); first 64 KB kept",
                 id="table-over-the-cap"),
]


@pytest.mark.slow
@pytest.mark.parametrize("line", HOSTILE_LINES)
def test_each_path_that_is_not_a_file_to_read_is_one_line(hostile_run, line):
    proc, _ = hostile_run
    assert f"quarantined: {line}" in quarantined_lines(proc.stderr), proc.stderr


@pytest.mark.slow
def test_the_run_goes_on_stores_the_good_files_and_exits_1(hostile_run):
    proc, db = hostile_run
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(quarantined_lines(proc.stderr)) == len(HOSTILE_LINES)
    assert "files read 11 · postings found 2 · new 2 · updated 0 · unchanged 0 · quarantined 9" in proc.stdout
    conn = sqlite3.connect(db)
    assert sorted(conn.execute("SELECT company, title FROM postings")) == [("吉利汽车", "AI算子开发工程师"), ("甲公司", "推理工程师")]
    assert sorted(conn.execute("SELECT locator, reason FROM quarantine")) == [
        ("big.csv", "too_large"), ("big.txt", "too_large"), ("dangling.txt", "dangling_symlink"),
        ("fifo.txt", "not_regular"), ("locked", "unreadable_folder"), ("loop.txt", "symlink_loop"),
        ("null.txt", "not_regular"), ("sock.txt", "not_regular"), ("zero.txt", "not_regular")]
    # a file over the cap keeps its first 64 KB and the hash of all of it
    size, body, sha = conn.execute("SELECT size, body, sha256 FROM raw_inputs WHERE locator = 'big.txt'").fetchone()
    assert (size, bytes(body)) == (len(SEED3) * 40, (SEED3 * 40)[:65536])
    assert conn.execute("SELECT input_sha256 FROM quarantine WHERE locator = 'big.txt'").fetchone() == (sha,)


@pytest.mark.slow
def test_a_fifo_named_on_the_command_line_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "a.txt").write_bytes(SEED0)
    proc = ingest(str(tmp_path / "pipe"), str(tmp_path / "a.txt"), "--db", str(tmp_path / "jobs.db"), "--as-of", AS_OF,
                  timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert quarantined_lines(proc.stderr) == ["quarantined: pipe: a FIFO (named pipe), not a regular file: not read"]
    assert "files read 2 · postings found 1 · new 1" in proc.stdout


OPENED = [
    pytest.param(lambda d: (d / "f").write_bytes(b"abc"), 3, b"abc", id="regular"),
    pytest.param(lambda d: (d / "f").write_bytes(b"abc"), 2, "too_large", id="regular-over-the-cap"),
    pytest.param(lambda d: (d / "f").write_bytes(b""), 0, b"", id="empty"),
    pytest.param(lambda d: (d / "f").symlink_to("/dev/zero"), 10, "not_regular", id="dev-zero"),
    pytest.param(lambda d: os.mkfifo(d / "f"), 10, "not_regular", id="fifo"),
    pytest.param(lambda d: (d / "f").mkdir(), 10, "not_regular", id="folder"),
    pytest.param(lambda d: (d / "f").symlink_to("f"), 10, "symlink_loop", id="loop"),
    pytest.param(lambda d: (d / "f").symlink_to("gone"), 10, "unreadable", id="dangling"),
]


@pytest.mark.parametrize("make, cap, expected", OPENED)
def test_open_regular_reads_only_regular_files_within_the_cap(tmp_path, make, cap, expected):
    make(tmp_path)
    got = open_regular(tmp_path / "f", cap)
    assert got == expected if isinstance(expected, bytes) else (isinstance(got, Problem) and got.reason == expected)
    stream = open_stream(tmp_path / "f", cap)
    if isinstance(expected, bytes):
        with stream:
            assert stream.read() == expected
    else:
        assert isinstance(stream, Problem) and stream.reason == expected


def test_too_large_keeps_the_head_and_hashes_everything(tmp_path):
    import hashlib

    data = bytes(range(256)) * 1000
    (tmp_path / "f").write_bytes(data)
    got = open_regular(tmp_path / "f", 1000)
    assert isinstance(got, TooLarge)
    assert (got.size, got.sha256, got.head) == (len(data), hashlib.sha256(data).hexdigest(), data[:65536])


def test_resolve_inputs_names_dangling_symlinks_and_loops(tmp_path):
    (tmp_path / "a.txt").write_bytes(SEED0)
    (tmp_path / "dangling.txt").symlink_to("nowhere.txt")
    (tmp_path / "loop.txt").symlink_to("loop.txt")
    (tmp_path / "zero.txt").symlink_to("/dev/zero")
    found = {f.locator: f.problem.reason if f.problem else None for f in resolve_inputs([str(tmp_path)])}
    assert found == {"a.txt": None, "dangling.txt": "dangling_symlink", "loop.txt": "symlink_loop", "zero.txt": None}
    # named on the command line, or matched by a glob, they are inputs with their problem too
    assert [(f.locator, f.problem.reason) for f in resolve_inputs([str(tmp_path / "loop.txt")])] == [("loop.txt", "symlink_loop")]
    assert [(f.locator, f.problem and f.problem.reason) for f in resolve_inputs([str(tmp_path / "[dl]*.txt")])] == [
        ("dangling.txt", "dangling_symlink"), ("loop.txt", "symlink_loop")]


# --------------------------------------------------------------------------- point 3: names quoted on output


QUOTED = [
    pytest.param("a.txt", "a.txt", id="plain"),
    pytest.param("职位 [2026].txt", "职位 [2026].txt", id="cjk-and-spaces"),
    pytest.param("new\nline.txt", "'new\\nline.txt'", id="newline"),
    pytest.param("x\rquarantined: y", "'x\\rquarantined: y'", id="carriage-return"),
    pytest.param("red\x1b[31m.txt", "'red\\x1b[31m.txt'", id="escape-sequence"),
    pytest.param("rtl\u202eexe.txt", "'rtl\\u202eexe.txt'", id="bidi-override"),
    pytest.param("bad\udcff.txt", "'bad\\udcff.txt'", id="undecodable-byte"),
    pytest.param("'quoted'.txt", "\"'quoted'.txt\"", id="starts-with-a-quote"),
]


@pytest.mark.parametrize("name, shown", QUOTED)
def test_quote_name(name, shown):
    assert quote_name(name) == shown


FORGED = "x.txt: fine\nquarantined: forged.txt"


@pytest.mark.slow
def test_names_with_newlines_and_controls_cannot_forge_output_lines(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / FORGED).write_bytes(PROSE)
    (root / "tab\x1b[2J.csv").write_text("title,company\n推理工程师,甲公司\n", encoding="utf-8")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(PROSE)  # a name that is not UTF-8
    (root / "ok.txt").write_bytes(SEED0)
    proc = ingest(str(root), "--db", str(tmp_path / "jobs.db"), "--as-of", AS_OF, "-v")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    problem = "no posting found: none of the app's headings (职位详情, 值不值得投, 职位点评 …) occur"
    assert quarantined_lines(proc.stderr) == [
        f"quarantined: 'x.txt: fine\\nquarantined: forged.txt': {problem}",
        f"quarantined: caf\\xe9.txt: {problem}",
    ]
    assert not [line for line in proc.stderr.splitlines() if line.startswith("quarantined: forged.txt")]
    assert proc.stdout.splitlines()[0].startswith("'tab\\x1b[2J.csv': csv, utf-8, delimiter comma")
    assert "\x1b" not in proc.stdout + proc.stderr
    assert "files read 4 · postings found 2 · new 2" in proc.stdout
    stored = sorted(r[0] for r in sqlite3.connect(tmp_path / "jobs.db").execute("SELECT locator FROM raw_inputs"))
    assert stored == ["caf\\xe9.txt", "ok.txt", "tab\x1b[2J.csv", FORGED]  # the names themselves are kept


# --------------------------------------------------------------------------- point 4: the lock


def test_the_lock_is_taken_on_the_resolved_path(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "x").mkdir()
    (tmp_path / "link.db").symlink_to(tmp_path / "real" / "jobs.db")
    expected = tmp_path / "real" / "jobs.db.lock"
    assert lock_path(tmp_path / "link.db") == expected
    assert lock_path(tmp_path / "real" / "x" / ".." / "jobs.db") == expected
    with db_lock(tmp_path / "real" / "jobs.db"):
        for other in (tmp_path / "link.db", tmp_path / "real" / "x" / ".." / "jobs.db"):
            with pytest.raises(LockHeld):
                with db_lock(other):
                    pass


def test_no_lock_file_is_left_and_the_next_run_locks_again(tmp_path):
    db = tmp_path / "jobs.db"
    with db_lock(db) as path:
        assert path.read_text().startswith(f"pid {os.getpid()}, started ")
    assert list(tmp_path.iterdir()) == []
    with db_lock(db):
        with pytest.raises(LockHeld):
            with db_lock(db):
                pass
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_run_through_a_symlink_or_dotdot_meets_the_lock_and_leaves_no_lock_file(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "x").mkdir()
    real = tmp_path / "real" / "jobs.db"
    (tmp_path / "link.db").symlink_to(real)
    with db_lock(real):
        for via in (str(tmp_path / "link.db"), f"{tmp_path}/x/../real/jobs.db"):
            proc = ingest(str(SEEDS), "--db", via, "--as-of", AS_OF)
            assert proc.returncode == 4, (via, proc.stdout, proc.stderr)
            assert proc.stderr.startswith(f"jobcrawl ingest: {via} is locked by another jobcrawl run (pid {os.getpid()}")
    proc = ingest(str(SEEDS), "--db", str(tmp_path / "link.db"), "--as-of", AS_OF)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["jobs.db"]
