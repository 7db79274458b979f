"""``jobcrawl stats velocity`` and ``stats pay``: the market over time."""

from __future__ import annotations

import click

from crawler.cli import DB_OPTION, main, require_db, say, say_json
from crawler.suggest import did_you_mean
from normalize.market import SCOPES, TOO_FEW, VELOCITY_FIELDS

PAY_FIELDS = ("month", "skill", "city", "category", "currency", "jobs", "p25", "median", "p75", "note")


def _since(value: str | None) -> str | None:
    """``--since``: an ISO date (its week) or datetime (its week in China time) as a week label."""
    from datetime import date

    from normalize.market import week_label, week_of

    if value is None:
        return None
    try:
        return week_label(date.fromisoformat(value)) if len(value) == 10 else week_of(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO date or datetime (e.g. 2026-10-01)",
                                 param_hint="--since") from None


def _open(db: str):
    """The database, and whether it can be written (stats are stored again when stale)."""
    from crawler.store import unwritable
    from crawler.store.schema import open_db

    require_db(db)
    writable = unwritable(db) is None
    return open_db(db, readonly=not writable), writable


def _skill(conn, text: str, hint: str) -> str:
    """The taxonomy's name of a skill given by name or alias (any case); one it lacks is a usage error."""
    from crawler.market import store

    name = store.skill_name(conn, text)
    if name is None:
        raise click.BadParameter(f"no skill {text!r} in the taxonomy{did_you_mean(text, store.skill_names(conn))}",
                                 param_hint=hint)
    return name


@main.group()
def stats() -> None:
    """The market over time: hiring velocity per week, pay per month.

    Both count jobs, not postings: the copies of one job (a duplicate cluster) count once, as its
    canonical posting. Weeks are ISO weeks and months calendar months in China time (UTC+8).
    See docs/market.md.

    \b
    Example:
      jobcrawl stats velocity --by skill --key CUDA
      jobcrawl stats pay --skill CUDA --city 上海
    """


@stats.command()
@click.option("--by", "scope", type=click.Choice(SCOPES), required=True,
              help="Per company, city, category or skill (of each job's canonical posting).")
@click.option("--key", metavar="K", help="Only this company, city, category or skill (a skill by name or alias, any "
                                         "case).")
@click.option("--since", metavar="DATE", help="From the week of this day on (ISO date; a datetime: its week in China "
                                              "time).")
@click.option("--top", type=click.IntRange(1), metavar="N", help="Only the N keys with the most jobs opened in the "
                                                                 "weeks shown.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object a line: week, scope, key, opened, closed, open_at_end, median_days_to_close.")
@DB_OPTION
def velocity(scope: str, key: str | None, since: str | None, top: int | None, as_json: bool, db: str) -> None:
    """Hiring velocity per week: jobs opened, closed and open at the week's end, and the median
    days from opening to closing of the jobs closed that week, per company, city, category or skill.

    A job opened when its first copy was first seen and closed when its last copy closed (missing
    from a complete listing). Every week from a key's first to the database's newest is shown
    while the key has open jobs (a week with nothing opened or closed: 0, 0 and the open count).
    The table velocity_weekly (Datasette) holds the weeks in which something happened; it is kept
    after every run and stored again here when the database changed since.

    Exit status: 0 done (nothing found: a line on stderr); 2 usage error (no such database,
    --key no job has, a bad date); 3 the database is damaged.

    \b
    Example:
      jobcrawl stats velocity --by company --top 10 --since 2026-09-01
      jobcrawl stats velocity --by skill --key cuda --json
    """
    from crawler.market import store
    from crawler.market.velocity import weeks
    from normalize.shown import aligned

    week = _since(since)
    database, writable = _open(db)
    try:
        if key is not None and scope == "skill":
            key = _skill(database.conn, key, "--key")
        rows = weeks(database.conn, scope, key, since=week, top=top, writable=writable)
        if not rows and key is not None and key not in store.keys(database.conn, scope):
            raise click.BadParameter(f"no job has {scope} {key!r}{did_you_mean(key, store.keys(database.conn, scope))}",
                                     param_hint="--key")
    finally:
        database.close()
    if not rows:
        click.echo(f"no jobs opened or closed{f' since {week}' if week else ''}", err=True)
    elif as_json:
        for row in rows:
            say_json({f: row[f] for f in VELOCITY_FIELDS})
    else:
        table = [["week", scope, "opened", "closed", "open", "median days to close"]] + [
            [r["week"], r["key"], str(r["opened"]), str(r["closed"]), str(r["open_at_end"]),
             "" if r["median_days_to_close"] is None else f"{r['median_days_to_close']:.1f}"] for r in rows]
        for line in aligned(table, right=frozenset({2, 3, 4, 5})):
            click.echo(line)


@stats.command()
@click.option("--skill", metavar="S", help="Jobs whose canonical posting asks for this skill (name or alias, any case).")
@click.option("--city", metavar="C", help="Jobs in this city.")
@click.option("--category", metavar="C", help="Jobs of this category.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object a line: month, skill, city, category, currency, jobs, p25, median, p75, note.")
@DB_OPTION
def pay(skill: str | None, city: str | None, category: str | None, as_json: bool, db: str) -> None:
    """Pay over time: per month, the 25th percentile, median and 75th percentile of the monthly
    pay of the jobs first seen that month, per currency.

    A job's monthly pay is the midpoint of its canonical posting's monthly range (salary_monthly_min
    and _max), of a salary stated, parsed and plausible (estimates left out); its month is the
    month (China time) its first copy was first seen. A month of fewer than 10 jobs shows 样本不足
    (too small a sample), never a figure.

    Exit status: 0 done (nothing found: a line on stderr); 2 usage error (no such database, a skill
    the taxonomy lacks); 3 the database is damaged.

    \b
    Example:
      jobcrawl stats pay --skill CUDA
      jobcrawl stats pay --skill CUDA --city 上海 --json
    """
    from crawler.market import store
    from normalize.shown import aligned

    database, _ = _open(db)
    try:
        if skill is not None:
            skill = _skill(database.conn, skill, "--skill")
        rows = store.pay(database.conn, skill or "", city or "", category or "")
    finally:
        database.close()
    if not rows:
        say("no job with a stated monthly salary" + "".join(f" · {name} {value}" for name, value in
                                                             (("skill", skill), ("city", city), ("category", category))
                                                             if value), err=True)
    elif as_json:
        for row in rows:
            say_json({f: {"skill": skill, "city": city, "category": category}.get(f, row.get(f)) for f in PAY_FIELDS})
    else:
        table = [["month", "currency", "jobs", "p25", "median", "p75"]] + [
            [r["month"], r["currency"] or "", str(r["jobs"])] + (
                [TOO_FEW, "", ""] if r["note"] else [f"{r[q]:,.0f}" for q in ("p25", "median", "p75")]) for r in rows]
        for line in aligned(table, right=frozenset({2, 3, 4, 5})):
            click.echo(line)
