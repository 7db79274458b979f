"""Resolving ingest PATH arguments (files, folders, globs) into input files with stable locators."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

TEXT_SUFFIXES = {".txt", ".text", ".dump", ""}
TABLE_SUFFIXES = {".csv", ".tsv", ".jsonl", ".ndjson", ".json"}
INGEST_SUFFIXES = TEXT_SUFFIXES | TABLE_SUFFIXES
"""What ``ingest`` reads from a folder; files named explicitly or by a glob are always read."""


@dataclass(frozen=True)
class InputFile:
    """A file to ingest: its absolute path and its locator (path relative to the ingest root)."""

    path: Path
    locator: str


class InputError(ValueError):
    """A PATH argument that names nothing to ingest."""


def _glob_root(pattern: str) -> Path:
    parts = Path(pattern).parts
    base: list[str] = []
    for part in parts:
        if glob.has_magic(part):
            break
        base.append(part)
    return Path(*base) if base else Path(".")


def resolve_inputs(paths: list[str], *, suffixes: set[str] | None = None, exclude: list[str | Path] = ()) -> list[InputFile]:
    """Expand PATHs: a file (locator = its name), a folder, recursively (locator relative to it),
    or a glob (locator relative to the glob's fixed prefix). A PATH that exists is never read as a
    glob (a folder named ``exports [2026]``). Hidden files are skipped in folders.

    ``suffixes`` filters folder contents (default: any file); explicitly named files are always taken.
    ``exclude`` names files never to take (the database being written and its -wal/-shm files).
    Raises :class:`InputError` for a PATH that does not exist or matches nothing.
    """
    out: dict[Path, InputFile] = {}
    skip = {Path(e).resolve() for e in exclude}
    for arg in paths:
        p = Path(arg)
        if glob.has_magic(arg) and not p.exists():  # a path that exists is that path, whatever its characters
            root = _glob_root(arg)
            matches = sorted(Path(m) for m in glob.glob(arg, recursive=True) if Path(m).is_file())
            if not matches:
                raise InputError(f"{arg}: the pattern matches no file")
            for m in matches:
                out.setdefault(m.resolve(), InputFile(m.resolve(), m.relative_to(root).as_posix()))
        elif p.is_dir():
            found = False
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    f = Path(dirpath) / name
                    if name.startswith(".") or (suffixes is not None and f.suffix.lower() not in suffixes):
                        continue
                    found = True
                    out.setdefault(f.resolve(), InputFile(f.resolve(), f.relative_to(p).as_posix()))
            if not found:
                raise InputError(f"{arg}: the folder holds no file to ingest")
        elif p.is_file():
            out.setdefault(p.resolve(), InputFile(p.resolve(), p.name))
        else:
            raise InputError(f"{arg}: no such file or folder")
    return [f for f in out.values() if f.path not in skip]
