"""``jobcrawl watch``: saved searches and their alerts."""

from __future__ import annotations

import click

from crawler.cli import DB_OPTION, calling, check_search, main, require_db, say


CONFIG_OPTION = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False),
    help="Alerts config (TOML: destinations, profile). Default: $JOBCRAWL_ALERTS_CONFIG, else "
         "~/.config/jobcrawl/alerts.toml ($XDG_CONFIG_HOME).")


def _alerts_config(config_path: str | None):
    from crawler.alerts.config import ConfigError, load_config

    try:
        return load_config(config_path)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


@main.group()
def watch() -> None:
    """Saved searches: postings new to a watch are delivered after every ingest and crawl.

    A watch delivers each matching posting once, to each of its destinations (stdout, a file, a
    webhook, an ntfy topic, e-mail; see `jobcrawl watch add --help` and docs/alerts.md). Only the
    canonical member of a duplicate cluster is delivered, never a blocked or closed posting, nor one
    whose job you track (unless the watch was added with --include-tracked). Each watch's new
    matches are also an Atom feed of `jobcrawl serve`, at the URL `watch list` prints.

    \b
    Example:
      jobcrawl watch add cuda-bj --search "CUDA 算子" --city 北京 --min-salary 40k --min-fit 70
      jobcrawl watch list
      jobcrawl watch deliver
      jobcrawl watch remove cuda-bj
    """


@watch.command("add")
@click.argument("name")
@DB_OPTION
@CONFIG_OPTION
@click.option("--search", metavar="TERMS", help="Full-text search of title, company and JD text: every term must be found.")
@click.option("--city", "cities", multiple=True, help="A city the posting must be in (repeatable: any of them).")
@click.option("--min-salary", metavar="AMOUNT", help="Monthly pay floor (40k, 4万, 35000): the range's upper end must reach it.")
@click.option("--min-fit", type=click.IntRange(0, 100), help="Lowest personal fit for the config's profile.")
@click.option("--exclude-duplicates", is_flag=True,
              help="Also skip a posting whose duplicate cluster this watch has delivered before (a repost).")
@click.option("--changed-since", metavar="ISO-DATETIME", help="Only postings new or changed at or after this time.")
@click.option("--to", "destinations", multiple=True, metavar="DESTINATION",
              help="Destination name of the config, or stdout (repeatable). Default: every destination of the "
                   "config, else stdout.")
@click.option("--include-existing", is_flag=True,
              help="Deliver the postings that match already on the next run (default: they are the baseline, "
                   "seen but never delivered).")
@click.option("--include-tracked", is_flag=True,
              help="Also deliver postings whose job you track (jobcrawl track; default: a tracked posting is never "
                   "delivered, not even one tracked after it matched).")
@click.option("--no-ghost", is_flag=True,
              help="Skip postings with a ghost signal (open_long, reposted, reopened, mass_agency: docs/ghost.md).")
def watch_add(name: str, db: str, config_path: str | None, search: str | None, cities: tuple[str, ...],
              min_salary: str | None, min_fit: int | None, exclude_duplicates: bool, changed_since: str | None,
              destinations: tuple[str, ...], include_existing: bool, include_tracked: bool, no_ghost: bool) -> None:
    """Add a watch NAME (a saved search).

    \b
    Example:
      jobcrawl watch add cuda-bj --search "CUDA 算子" --city 北京 --min-salary 40k --min-fit 70 --to mail
      jobcrawl watch add infra --search "推理 vLLM" --exclude-duplicates --include-existing --changed-since 2026-11-25
      jobcrawl watch add fresh-only --search CUDA --no-ghost
    """
    from pydantic import ValidationError

    from crawler.alerts.config import ConfigError
    from crawler.alerts.delivery import add_watch
    from crawler.store.schema import open_db
    from crawler.run.lock import db_lock
    from normalize.watch import WatchSpec

    config = _alerts_config(config_path)
    names = list(destinations) or (list(config.destinations) if config and config.destinations else ["stdout"])
    check_search(search)
    try:
        spec = WatchSpec(name=name, search=search, cities=list(cities), min_salary=min_salary, min_fit=min_fit,
                         exclude_duplicates=exclude_duplicates, changed_since=changed_since, destinations=names,
                         include_tracked=include_tracked, no_ghost=no_ghost)
    except ValidationError as err:
        first = err.errors()[0]
        raise click.UsageError(f"{'.'.join(str(p) for p in first['loc'])}: "
                               f"{first['msg'].removeprefix('Value error, ')}") from None
    try:
        with calling("watch add"), db_lock(db):
            database = open_db(db)
            try:
                added = add_watch(database, spec, config=config, include_existing=include_existing)
            finally:
                database.close()
    except (ValueError, ConfigError) as err:
        raise click.UsageError(str(err)) from None
    later = "delivered on the next run" if include_existing else "the baseline (never delivered)"
    click.echo(f"watch {name} added (#{added['id']}) → {', '.join(names)}; "
               f"{added['matching']} postings match already: {later}")


DEFAULT_BROWSE_URL = "http://127.0.0.1:8001"
"""Where `jobcrawl serve` listens by default."""


@watch.command("list")
@DB_OPTION
@CONFIG_OPTION
@click.option("--browse-url", metavar="URL",
              help="Base URL of `jobcrawl serve` in the feed URLs. Default: browse_url of the alerts config, else "
                   f"{DEFAULT_BROWSE_URL}.")
def watch_list(db: str, config_path: str | None, browse_url: str | None) -> None:
    """List the watches: what each asks for, its destinations, deliveries sent and pending, and
    the URL of its Atom feed (its new matches, newest first, each linking to its posting page on
    `jobcrawl serve`) for a feed reader to follow.

    \b
    Example:
      jobcrawl watch list --db jobs.db
      jobcrawl watch list --browse-url http://jobs.example.lan:8001
    """
    from urllib.parse import quote

    from crawler.alerts import store
    from crawler.store.schema import open_db

    if browse_url is not None and not browse_url.startswith(("http://", "https://")):
        raise click.BadParameter(f"{browse_url!r} is not an http:// or https:// URL", param_hint="--browse-url")
    if browse_url is None:
        config = _alerts_config(config_path)
        browse_url = (config and config.browse_url) or DEFAULT_BROWSE_URL
    require_db(db)
    database = open_db(db, readonly=True)
    try:
        found = store.active_watches(database.conn)
        if not found:
            click.echo("no watches (jobcrawl watch add NAME --search …)")
        for w in found:
            spec = w.spec
            wants = [f"search “{spec.search}”" if spec.search else None,
                     f"city {'/'.join(spec.cities)}" if spec.cities else None,
                     f"min salary {spec.min_salary}" if spec.min_salary else None,
                     f"min fit {spec.min_fit}" if spec.min_fit is not None else None,
                     "no duplicates" if spec.exclude_duplicates else None,
                     f"changed since {spec.changed_since}" if spec.changed_since else None,
                     "tracked too" if spec.include_tracked else None,
                     "no ghost signals" if spec.no_ghost else None]
            c = store.watch_counts(database.conn, w.id)
            say(f"{spec.name}: {' · '.join(x for x in wants if x) or 'every posting'} → {', '.join(spec.destinations)}"
                 f" · delivered {c['matched']} postings ({c['sent']} sent, {c['pending']} pending) · "
                 f"baseline {c['baseline']} · since {w.created_at}")
            say(f"  feed: {browse_url.rstrip('/')}/jobs/watch_feed.atom?watch={quote(spec.name, safe='')}")
    finally:
        database.close()


@watch.command("remove")
@click.argument("name")
@DB_OPTION
def watch_remove(name: str, db: str) -> None:
    """Remove a watch: it matches nothing more and its pending deliveries are cancelled (its history stays).

    \b
    Example:
      jobcrawl watch remove cuda-bj
    """
    from crawler.alerts import store
    from crawler.store.schema import open_db

    require_db(db)
    database = open_db(db)
    try:
        cancelled = store.remove_watch(database.conn, name)
    finally:
        database.close()
    if cancelled < 0:
        raise click.UsageError(f"no watch named {name!r} (jobcrawl watch list)")
    click.echo(f"watch {name} removed; {cancelled} pending deliveries cancelled")


@watch.command("deliver")
@DB_OPTION
@CONFIG_OPTION
def watch_deliver(db: str, config_path: str | None) -> None:
    """Match the watches and send every pending delivery now (what every ingest and crawl does at its end).

    Exit status: 0 nothing left pending; 1 some deliveries are still pending (their errors are printed);
    2 usage error; 4 another run holds the database's lock.

    \b
    Example:
      jobcrawl watch deliver --db jobs.db --config alerts.toml
    """
    from crawler.alerts.delivery import deliver_new_matches
    from crawler.run.lock import db_lock

    require_db(db)
    if config_path is not None:
        _alerts_config(config_path)
    with calling("watch deliver"), db_lock(db):
        report = deliver_new_matches(db, config_path=config_path)
    lines = report.lines() or ["alerts: no watches and nothing pending"]
    for i, line in enumerate(lines):
        say(line, err=i > 0)
    raise SystemExit(1 if report.pending else 0)
