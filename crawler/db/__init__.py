"""SQLite storage: schema and migrations, batched writer, readers, full-text search."""

from __future__ import annotations

from pathlib import Path


def readonly_uri(path: str | Path) -> str:
    """The URI that opens the database file at ``path`` read-only (``sqlite3.connect(..., uri=True)``).

    Escaped, so a path holding ``#``, ``?`` or ``%`` names that file (``file:{path}`` would cut it there).
    """
    return f"{Path(path).resolve().as_uri()}?mode=ro"
