"""Resolving ingest PATH arguments (files, folders, globs) into input files with stable locators,
and opening them safely: only regular files are read, with a size cap, checked on the opened
descriptor (a FIFO, socket or device, or a symlink to one, is refused before anything is read)."""

from __future__ import annotations

import errno
import glob
import hashlib
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from normalize.shown import shown

TEXT_SUFFIXES = {".txt", ".text", ".dump", ""}
TABLE_SUFFIXES = {".csv", ".tsv", ".jsonl", ".ndjson", ".json"}
INGEST_SUFFIXES = TEXT_SUFFIXES | TABLE_SUFFIXES
"""What ``ingest`` reads from a folder; files named explicitly or by a glob are always read."""

MAX_FILE_BYTES = 256 * 2**20
"""Default size cap of one input file (``jobcrawl ingest --max-file-size``)."""
HEAD_KEPT = 64 * 1024
"""Bytes of a too-large file kept as its raw input."""

# What a JSON reader says of input nested beyond the recursion limit (page objects and table imports alike).
TOO_DEEP = "JSON nested too deeply to read (arrays or objects inside each other beyond Python's recursion limit)"


@dataclass(frozen=True)
class Problem:
    """Why an input was not read: a reason code (``not_regular``, ``too_large``, ``unreadable``,
    ``dangling_symlink``, ``symlink_loop``, ``unreadable_folder``, ``symlink_to_folder``) and one
    line for humans."""

    reason: str
    detail: str


@dataclass(frozen=True)
class TooLarge(Problem):
    """A regular file over the cap: its size, SHA-256 and first :data:`HEAD_KEPT` bytes."""

    size: int = 0
    sha256: str = ""
    head: bytes = b""


@dataclass(frozen=True)
class InputFile:
    """A file to ingest: its absolute path and its locator (path relative to the ingest root), or
    the problem that keeps it from being read (``path`` is then the path as found)."""

    path: Path
    locator: str
    problem: Problem | None = None


class InputError(ValueError):
    """A PATH argument that names nothing to ingest."""


def quote_name(name: str) -> str:
    """``name`` as shown in one line of output: as it is, else quoted with escapes (``'a\\nb.txt'``) when it holds
    a character that could forge or hide a line (:func:`normalize.shown.shown`) or undecodable bytes."""
    return shown(name, quoted=True)


def _locator(relative: Path) -> str:
    """A stored locator: the relative path, its undecodable bytes (surrogate escapes of a name that
    is not UTF-8) written as ``\\xNN`` so that it can be stored and printed."""
    text = relative.as_posix()
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _glob_root(pattern: str) -> Path:
    parts = Path(pattern).parts
    base: list[str] = []
    for part in parts:
        if glob.has_magic(part):
            break
        base.append(part)
    return Path(*base) if base else Path(".")


def _found(f: Path, locator: str) -> tuple[Path, InputFile]:
    """The key and :class:`InputFile` of a path found: resolved, or with the problem of a dangling
    symlink or a symlink loop (which cannot be resolved)."""
    try:
        resolved = f.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a loop so
        return f.absolute(), InputFile(f.absolute(), locator, Problem("symlink_loop", "symlink loop: not read"))
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f.absolute(), InputFile(f.absolute(), locator, Problem("symlink_loop", "symlink loop: not read"))
        if f.is_symlink():
            target = quote_name(os.readlink(f))
            return f.absolute(), InputFile(f.absolute(), locator,
                                           Problem("dangling_symlink", f"dangling symlink to {target}: not read"))
        return f.absolute(), InputFile(f.absolute(), locator, Problem("unreadable", f"unreadable: {err.strerror}"))
    return resolved, InputFile(resolved, locator)


def _walk(top: Path, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[str], list[str]]]:
    """``(dirpath, dirnames, linked, filenames)`` like ``os.walk(top, onerror=onerror)``, without recursion (Python
    3.11's recurses once per level: a folder nested a few thousand deep raised RecursionError). Top-down; the
    caller may prune ``dirnames``; ``linked``: the symlinks to folders, never entered."""
    stack = [str(top)]
    while stack:
        dirpath = stack.pop()
        try:
            with os.scandir(dirpath) as entries:
                listed = list(entries)
        except OSError as err:
            onerror(err)
            continue
        dirnames, linked, filenames = [], [], []
        for entry in listed:
            try:
                kind = (linked if entry.is_symlink() else dirnames) if entry.is_dir() else filenames
            except OSError:
                kind = filenames
            kind.append(entry.name)
        yield dirpath, dirnames, linked, filenames
        stack.extend(os.path.join(dirpath, d) for d in reversed(dirnames))


def resolve_inputs(paths: list[str], *, suffixes: set[str] | None = None, exclude: list[str | Path] = ()) -> list[InputFile]:
    """Expand PATHs: a file (locator = its name), a folder, recursively (locator relative to it),
    or a glob (locator relative to the glob's fixed prefix). A PATH that exists is never read as a
    glob (a folder named ``exports [2026]``). Hidden files are skipped in folders.

    ``suffixes`` filters folder contents (default: any file); explicitly named files are always taken.
    ``exclude`` names files never to take (the database being written and its -wal/-shm files).
    A dangling symlink, a symlink loop, a folder that cannot be listed or a symlink to a folder
    (never followed) is an input with its :class:`Problem` (the run reports it and goes on); a
    FIFO, socket or device is taken and refused when opened (:func:`open_regular`).
    Raises :class:`InputError` for a PATH that does not exist or matches nothing.
    """
    out: dict[Path, InputFile] = {}
    skip = {Path(e).resolve() for e in exclude}
    for arg in paths:
        p = Path(arg)
        if glob.has_magic(arg) and not p.exists() and not p.is_symlink():  # a path that exists is that path
            root = _glob_root(arg)
            matches = sorted(Path(m) for m in glob.glob(arg, recursive=True) if not Path(m).is_dir())
            if not matches:
                raise InputError(f"{quote_name(arg)}: the pattern matches no file")
            for m in matches:
                out.setdefault(*_found(m, _locator(m.relative_to(root))))
        elif p.is_dir():
            found = False

            def unlistable(err: OSError, root: Path = p) -> None:
                nonlocal found
                folder = Path(err.filename)
                found = True
                out.setdefault(folder.absolute(), InputFile(folder.absolute(), _locator(folder.relative_to(root)),
                                                            Problem("unreadable_folder",
                                                                    f"folder not read: {err.strerror}")))

            for dirpath, dirnames, linked, filenames in _walk(p, unlistable):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(d for d in linked if not d.startswith(".")):
                    # never followed: it may lead out of the folder, or back into it
                    link = Path(dirpath) / name
                    found = True
                    out.setdefault(link.absolute(), InputFile(link.absolute(), _locator(link.relative_to(p)), Problem(
                        "symlink_to_folder", f"symlink to a folder ({quote_name(os.readlink(link))}): not followed; "
                                             "name the folder itself to ingest it")))
                for name in sorted(filenames):
                    f = Path(dirpath) / name
                    if name.startswith(".") or (suffixes is not None and f.suffix.lower() not in suffixes):
                        continue
                    found = True
                    out.setdefault(*_found(f, _locator(f.relative_to(p))))
            if not found:
                raise InputError(f"{quote_name(arg)}: the folder holds no file to ingest")
        elif p.exists() or p.is_symlink():  # a file, FIFO, device, or a symlink that leads nowhere
            out.setdefault(*_found(p, _locator(Path(p.name))))
        else:
            raise InputError(f"{quote_name(arg)}: no such file or folder")
    return [f for f in out.values() if f.path not in skip]


# --------------------------------------------------------------------------- opening


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a folder"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it exists and is no regular file (``a FIFO (named pipe)``, ``a folder`` …), else None."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else _kind(mode)


def _open_checked(path: Path) -> tuple[int, os.stat_result] | Problem:
    """An open descriptor of ``path`` and its ``fstat``, when it is a regular file. ``O_NONBLOCK``:
    opening a FIFO without a writer returns at once instead of waiting for one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ENXIO:  # a socket (or a FIFO opened for writing): name what it is
            try:
                return Problem("not_regular", f"{_kind(os.stat(path).st_mode)}, not a regular file: not read")
            except OSError:
                pass
        if err.errno == errno.ELOOP:
            return Problem("symlink_loop", "symlink loop: not read")
        return Problem("unreadable", f"unreadable: {err.strerror}")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        return Problem("not_regular", f"{_kind(st.st_mode)}, not a regular file: not read")
    return fd, st


def size_text(n: int) -> str:
    """``n`` bytes for humans: ``512 B``, ``200 KB``, ``1.5 MB``, ``2 GB`` (binary units, at most one decimal)."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} B"


def _too_large(fd: int, size: int, max_bytes: int) -> TooLarge:
    """The problem of a file over the cap: its head, and the SHA-256 of all of it (read in blocks)."""
    digest = hashlib.sha256()
    head = b""
    total = 0
    while block := os.read(fd, 2**20):
        if total < HEAD_KEPT:
            head += block[: HEAD_KEPT - total]
        digest.update(block)
        total += len(block)
    detail = (f"too large: {size_text(max(size, total))} exceeds the cap of {size_text(max_bytes)} (--max-file-size); "
              f"first {HEAD_KEPT // 1024} KB kept")
    return TooLarge("too_large", detail, max(size, total), digest.hexdigest(), head)


def open_regular(path: Path, max_bytes: int = MAX_FILE_BYTES) -> bytes | Problem:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` (checked on the open
    descriptor, so a symlink to ``/dev/zero`` or a FIFO is never read), else the :class:`Problem`
    (:class:`TooLarge` for a file over the cap). Never reads more than ``max_bytes + 1`` bytes into memory."""
    opened = _open_checked(path)
    if isinstance(opened, Problem):
        return opened
    fd, st = opened
    try:
        if st.st_size > max_bytes:
            return _too_large(fd, st.st_size, max_bytes)
        parts, total = [], 0
        while total <= max_bytes and (block := os.read(fd, min(2**20, max_bytes + 1 - total))):
            parts.append(block)
            total += len(block)
        if total > max_bytes:  # it grew while being read
            os.lseek(fd, 0, os.SEEK_SET)
            return _too_large(fd, total, max_bytes)
        return b"".join(parts)
    except OSError as err:
        return Problem("unreadable", f"unreadable: {err.strerror}")
    finally:
        os.close(fd)


MAX_CONFIG_BYTES = 2**20
TAXONOMY_MAX_BYTES = 16 * 2**20
"""A skill taxonomy may be larger than other configuration files (the packaged one is about 100 KB)."""


class ConfigFileError(ValueError):
    """A configuration file (sources, profile) that is not read: why, in a few words."""


def read_config_text(path: Path, max_bytes: int = MAX_CONFIG_BYTES) -> str:
    """The text (UTF-8) of a configuration file the user names: only a regular file of at most ``max_bytes``,
    checked on the open descriptor (a FIFO never blocks, a symlink to ``/dev/zero`` is never read, a huge file is
    refused unread). Raises :class:`ConfigFileError`, or UnicodeDecodeError for text that is not UTF-8."""
    opened = _open_checked(Path(path))
    if isinstance(opened, Problem):
        raise ConfigFileError(opened.detail)
    fd, st = opened
    try:
        if st.st_size > max_bytes:
            raise ConfigFileError(f"{st.st_size:,} bytes, more than a configuration file may hold "
                                  f"({max_bytes:,}): not read")
        parts, total = [], 0
        while total <= max_bytes and (block := os.read(fd, max_bytes + 1 - total)):
            parts.append(block)
            total += len(block)
        data = b"".join(parts)
    except OSError as err:
        raise ConfigFileError(f"unreadable: {err.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew since it was opened
        raise ConfigFileError(f"more than a configuration file may hold ({max_bytes:,} bytes): not read")
    return data.decode("utf-8")


def read_taxonomy(path: str | Path | None):
    """The skill taxonomy at ``path`` (None: the packaged one), read only when it is a regular file of at most
    :data:`TAXONOMY_MAX_BYTES` (:func:`read_config_text`). Raises :class:`ConfigFileError`, or
    :class:`normalize.skills.TaxonomyError` (its message names the file) for one that is not a taxonomy."""
    from normalize.skills import TaxonomyError, load_taxonomy

    if path:
        try:
            read_config_text(Path(path), TAXONOMY_MAX_BYTES)
        except UnicodeDecodeError as err:
            raise TaxonomyError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    return load_taxonomy(path)


def open_stream(path: Path, max_bytes: int = MAX_FILE_BYTES) -> BinaryIO | Problem:
    """``path`` opened for reading in binary mode if it is a regular file of at most ``max_bytes``
    (checked on the open descriptor), else the :class:`Problem`. The caller closes the file."""
    opened = _open_checked(path)
    if isinstance(opened, Problem):
        return opened
    fd, st = opened
    if st.st_size > max_bytes:
        try:
            return _too_large(fd, st.st_size, max_bytes)
        finally:
            os.close(fd)
    return os.fdopen(fd, "rb")


def stat_of(path: Path) -> os.stat_result | Problem:
    """``os.stat`` of ``path`` (followed), or the problem of a path that vanished."""
    try:
        return path.stat()
    except OSError as err:
        return Problem("unreadable", f"unreadable: {err.strerror}")


EARLIEST_FILE_TIME = datetime(1990, 1, 1, tzinfo=timezone.utc)
"""A file modified before this was not: its time was lost (an archive without times, ``touch -d @0``)."""


def saved_at(st: os.stat_result, now: datetime | None = None) -> tuple[datetime, str | None]:
    """When a file was saved, as its relative times (``发布于 2 小时前``) are read against: its modification time, or,
    when that is not plausible (before :data:`EARLIEST_FILE_TIME`, or more than a day after ``now``: a clock set
    wrong), its status-change time (when it came to this machine), else ``now``; with a line saying so."""
    now = now or datetime.now(timezone.utc)

    def plausible(seconds: float) -> datetime | None:
        try:
            when = datetime.fromtimestamp(seconds, timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
        return when if EARLIEST_FILE_TIME <= when <= now + timedelta(days=1) else None

    if modified := plausible(st.st_mtime):
        return modified, None
    changed = plausible(st.st_ctime)
    used, what = (changed, "its status-change time") if changed else (now, "the time of reading")
    try:
        written = datetime.fromtimestamp(st.st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        written = f"{st.st_mtime:.0f} s after 1970"
    return used, (f"modification time {written} is not plausible: its relative times are read against {what}, "
                  f"{used.strftime('%Y-%m-%d %H:%M:%S UTC')} (--as-of gives them another)")


def read_group(paths: list[Path], max_bytes: int, budget: int) -> list[bytes | Problem]:
    """:func:`open_regular` of each path, in order, until ``budget`` bytes are read: the paths after that are
    not read (the list returned is shorter), so a group of files that grew since they were listed still reads
    at most ``budget + max_bytes`` bytes."""
    out: list[bytes | Problem] = []
    total = 0
    for path in paths:
        if total >= budget:
            break
        got = open_regular(path, max_bytes)
        out.append(got)
        if isinstance(got, bytes):
            total += len(got)
    return out
