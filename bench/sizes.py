"""Run a benchmark once per size, each size in a fresh Python process (so peak RSS is its own)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable


def per_size(script: str, doc: str, one: Callable[[int, Path], dict], show: Callable[[dict], str],
             default: tuple[int, ...] = (10_000, 100_000)) -> list[dict]:
    """The command line of a size benchmark: ``--n N`` (repeatable) runs ``script --one N`` in a fresh
    process per size, which calls ``one(N, workdir)`` and prints its figures as JSON; each size's
    figures are printed with ``show``. Returns the figures (empty in the ``--one`` child)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, action="append", help=f"postings (repeatable); default {' and '.join(map(str, default))}")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        workdir = Path(tempfile.mkdtemp(prefix="jobcrawl-bench-"))
        try:
            print(json.dumps(one(args.one, workdir)))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        return []
    results = []
    for n in args.n or default:
        out = subprocess.run([sys.executable, script, "--one", str(n)], capture_output=True, text=True, check=True)
        results.append(json.loads(out.stdout.splitlines()[-1]))
        print(show(results[-1]), flush=True)
    return results


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
    return out


def run_measured(command: list[str], cwd: Path) -> dict:
    """Run ``command`` and measure its memory: ``peak_rss_mb``, the largest peak RSS of any one of its
    processes (``wait4``'s ru_maxrss: exact), and ``peak_total_mb``, the largest sum of the RSS of all its
    processes alive at once (sampled every 0.1 s from /proc, so a shorter spike can be missed).

    Call it from a small process: on Linux a child's ru_maxrss starts from its parent's RSS when it is
    spawned (the address space it execs from), so a benchmark that built its input in memory would
    charge that to the command. Returns also ``returncode``, ``stdout``, ``stderr``, ``seconds`` and
    ``cpu_seconds``: of all its processes. This process becomes their subreaper, so a descendant that outlives its
    parent (the fork server of the run's processes, which reaped them) is waited for and counted here too; no
    other child of this process may be running meanwhile.
    """
    _become_subreaper()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, text=True)
        total = 0
        # WNOWAIT: look without reaping, so that wait4 below still gets the child's resource usage.
        while os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            total = max(total, sum(map(_rss_kb, _tree(proc.pid))))
            time.sleep(0.1)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - start
        cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss
        while True:  # the orphaned descendants, as they end
            try:
                _, _, orphan = os.wait4(-1, 0)
            except ChildProcessError:
                break
            cpu, peak = cpu + orphan.ru_utime + orphan.ru_stime, max(peak, orphan.ru_maxrss)
        out.seek(0)
        err.seek(0)
        return {"returncode": proc.returncode, "stdout": out.read(), "stderr": err.read(), "seconds": seconds,
                "peak_rss_mb": round(peak / 1024), "peak_total_mb": round(total / 1024), "cpu_seconds": cpu}


def _become_subreaper() -> None:
    """Orphaned descendants of this process are reparented to it (Linux ``PR_SET_CHILD_SUBREAPER``)."""
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
