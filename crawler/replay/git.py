"""The committed versions of one file in a local git repository, read with the ``git`` command.

:func:`versions` lists them oldest first with their committer dates and blob ids (two git processes however long
the history); :func:`read_blob` reads one version's bytes. Every git process has a timeout; a blob larger than
the caller's cap is never read. A repository, revision or path that git does not know is a :class:`GitError`
(one line).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

LOG_TIMEOUT = 300.0
"""Seconds ``git log`` and ``git cat-file --batch-check`` may take over a whole history."""
BLOB_TIMEOUT = 120.0
"""Seconds reading one version may take."""


class GitError(ValueError):
    """git could not answer: no such repository, revision or path (the message is one line)."""


@dataclass(frozen=True)
class Version:
    """One commit that changed the file: its hash, committer date (ISO 8601 with its offset), and the file's blob
    id and size at that commit (``blob`` None when the commit deleted it)."""

    commit: str
    time: str
    blob: str | None
    size: int = 0


def _git(repo: Path, *args: str, stdin: bytes | None = None, timeout: float = LOG_TIMEOUT) -> bytes:
    try:
        proc = subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, timeout=timeout,
                              env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"})
    except FileNotFoundError:
        raise GitError("git is not installed (it reads the repository)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took more than {timeout:.0f} s in {repo}") from None
    if proc.returncode != 0:
        lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]} in {repo}: {lines[-1] if lines else f'exit {proc.returncode}'}")
    return proc.stdout


def versions(repo: str | Path, path: str, rev: str = "HEAD") -> list[Version]:
    """The commits reachable from ``rev`` that changed ``path`` (relative to the repository's top), oldest first
    (by committer date, git's order among equal dates). Raises :class:`GitError` when ``repo`` is no git
    repository, ``rev`` no revision, or ``path`` was never committed there."""
    repo = Path(repo)
    if not repo.is_dir():
        raise GitError(f"{repo}: no such folder")
    _git(repo, "rev-parse", "--git-dir")  # git's own line when it is no repository
    try:
        _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")
    except GitError:
        raise GitError(f"{rev}: no such revision in {repo}") from None
    log = _git(repo, "log", "--reverse", "--format=%H %cI", rev, "--", path).decode()
    commits = [line.split(" ", 1) for line in log.splitlines() if line.strip()]
    if not commits:
        raise GitError(f"{path}: no commit of it in {repo} (from {rev}); paths are relative to the repository's top")
    query = "".join(f"{commit}:{path}\n" for commit, _ in commits).encode()
    answers = _git(repo, "cat-file", "--batch-check", stdin=query).decode().splitlines()
    out = []
    for (commit, time), answer in zip(commits, answers):
        parts = answer.split()
        if len(parts) == 3 and parts[1] == "blob":
            out.append(Version(commit, time, parts[0], int(parts[2])))
        else:  # "<commit>:<path> missing": deleted by this commit
            out.append(Version(commit, time, None))
    order = {v.commit: i for i, v in enumerate(out)}
    return sorted(out, key=lambda v: (_utc(v.time), order[v.commit]))


def _utc(time: str) -> str:
    from datetime import datetime

    from normalize.clock import iso_utc

    return iso_utc(datetime.fromisoformat(time))


def read_blob(repo: str | Path, blob: str) -> bytes:
    """The bytes of one blob (its size checked by the caller from :attr:`Version.size`)."""
    return _git(Path(repo), "cat-file", "blob", blob, timeout=BLOB_TIMEOUT)
