"""The market over time, as pure rules: the ISO week of a time in China time, hiring velocity per week, and the
smallest sample a pay figure is shown for.

A job is a duplicate cluster (or a posting alone): it opened when its first copy was first seen and closed when its
last copy closed (crawler/store/schema.sql: the view ``job_timeline``). Weeks are ISO weeks (Monday to Sunday) in
China time, UTC+8 all year (Asia/Shanghai has kept no daylight saving since 1991): ``2026-W49``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import date, datetime, timedelta, timezone

CHINA = timezone(timedelta(hours=8), "Asia/Shanghai")
MIN_CELL = 10
"""A pay cell (month × skill/city/category × currency) shows figures from this many jobs up; below, :data:`TOO_FEW`."""
TOO_FEW = "样本不足"
SCOPES = ("company", "city", "category", "skill")
VELOCITY_FIELDS = ("week", "scope", "key", "opened", "closed", "open_at_end", "median_days_to_close")


def china_time(moment: str | datetime) -> datetime:
    """An ISO time (or a datetime; naive means UTC, as stored times are) in China time."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(CHINA)


def week_label(day: date) -> str:
    """The ISO week of a calendar day: ``2026-W49``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"


def week_of(moment: str | datetime) -> str:
    """The ISO week, in China time, of a time: Sunday 23:30 +08:00 is the week before Monday 00:30."""
    return week_label(china_time(moment).date())


def week_monday(week: str) -> date:
    """The Monday that starts ``week`` (``2026-W49`` → 2026-11-30)."""
    year, number = week.split("-W")
    return date.fromisocalendar(int(year), int(number), 1)


def next_week(week: str) -> str:
    return week_label(week_monday(week) + timedelta(days=7))


def median(values: list[float]) -> float | None:
    """The median (the mean of the two middle values of an even count); None of nothing."""
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _days(opened: str, closed: str) -> float:
    return (china_time(closed) - china_time(opened)).total_seconds() / 86400


class Kinds:
    """Jobs of one kind count alike: :meth:`of` numbers each job's timeline, (the week it opened, the week it closed
    or None, the days from opening to closing or None); :attr:`timelines` lists them by number."""

    def __init__(self) -> None:
        self._number: dict[tuple, int] = {}

    def of(self, opened: str, closed: str | None) -> int:
        timeline = (week_of(opened), closed and week_of(closed), closed and _days(opened, closed))
        return self._number.setdefault(timeline, len(self._number))

    @property
    def timelines(self) -> list[tuple]:
        return list(self._number)


def velocity(timelines: list[tuple], counts: Iterable[tuple[str, str, int, int]]) -> list[dict]:
    """Rows of ``velocity_weekly`` (fields :data:`VELOCITY_FIELDS`) from the jobs' timelines by kind
    (:attr:`Kinds.timelines`) and ``counts`` ``(scope, key, kind, jobs)``, how many jobs of each kind a key has: per
    scope,
    key and week in which a job of the key opened or closed, the jobs opened and closed, those open at the week's
    end, and the median days from opening to closing of those closed (one decimal; None when none closed). Ordered
    by scope, key, week."""
    weeks: dict[tuple[str, str], dict[str, list]] = defaultdict(lambda: defaultdict(lambda: [0, []]))
    for scope, key, kind, n in counts:
        opened_week, closed_week, days = timelines[kind]
        cells = weeks[scope, key]
        cells[opened_week][0] += n
        if closed_week:
            cells[closed_week][1].extend([days] * n)
    rows = []
    for (scope, key), cells in sorted(weeks.items()):
        open_now = 0
        for week in sorted(cells):
            opened, closed = cells[week]
            open_now += opened - len(closed)
            middle = median(closed)
            rows.append({"week": week, "scope": scope, "key": key, "opened": opened, "closed": len(closed),
                         "open_at_end": open_now, "median_days_to_close": None if middle is None else round(middle, 1)})
    return rows


def every_week(rows: Iterable[dict], last_week: str | None) -> Iterator[dict]:
    """``rows`` of :func:`velocity` (ordered by scope, key, week) with the weeks between a key's rows filled in
    (nothing opened or closed: the open count carried), and after its last row through ``last_week`` while jobs of
    the key are still open."""
    previous = None
    for row in rows:
        if previous is not None and (previous["scope"], previous["key"]) == (row["scope"], row["key"]):
            yield from _quiet_weeks(previous, row["week"])
        elif previous is not None:
            yield from _quiet_weeks(previous, _after(last_week) if previous["open_at_end"] else None)
        yield row
        previous = row
    if previous is not None:
        yield from _quiet_weeks(previous, _after(last_week) if previous["open_at_end"] else None)


def _after(week: str | None) -> str | None:
    return week and next_week(week)


def _quiet_weeks(row: dict, until: str | None) -> Iterator[dict]:
    """The weeks after ``row``'s, before ``until`` (none when it is None), in which nothing happened."""
    week = next_week(row["week"])
    while until is not None and week < until:
        yield {**row, "week": week, "opened": 0, "closed": 0, "median_days_to_close": None}
        week = next_week(week)
