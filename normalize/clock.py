"""The one clock: times as ISO 8601 strings in UTC, to the second (``2026-11-29T04:00:00+00:00``)."""

from __future__ import annotations

from datetime import datetime, timezone


def iso_utc(moment: datetime) -> str:
    """``moment`` in UTC, to the second, as ISO 8601; a naive ``moment`` is taken as local time."""
    return moment.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def now_iso() -> str:
    """Now, as :func:`iso_utc` writes it."""
    return iso_utc(datetime.now(timezone.utc))
