"""``jobcrawl crawl``, ``worker``, ``store`` and ``sources``: crawling sources, alone or distributed."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from crawler.cli import (
    DB_OPTION, REDIS_PREFIX_OPTION, WORKERS_OPTION, alert_lines, calling, dedupe_line, main, new_file_path,
    require_db, run_output, run_settings, say, say_json, setting_pairs)


@main.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_sources", is_flag=True, help="Crawl every enabled source of the file.")
@click.option("--sources", "sources_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Sources file (TOML; the bundled example: seeds/sources.toml). Default: $JOBCRAWL_SOURCES, "
                   "else ./sources.toml.")
@DB_OPTION
@click.option("--jobdir", type=click.Path(file_okay=False),
              help="Keep each source's crawl state in DIR/<source>/: a run stopped by Ctrl-C or a signal "
                   "resumes where it stopped when run again. Removed when the source's crawl finishes.")
@click.option("--max-requests", type=click.IntRange(0), metavar="N",
              help="Send at most N requests per source (overrides the file; 0 = no cap; cache hits are free).")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="HTTP cache in <db>.httpcache/<source>/: unchanged pages are revalidated (304) instead of downloaded.")
@click.option("-s", "--setting", "scrapy_settings", multiple=True, metavar="NAME=VALUE",
              help="A Scrapy or jobcrawl setting for every source (repeatable), e.g. -s DOWNLOAD_TIMEOUT=10.")
@WORKERS_OPTION
@click.option("--redis", "redis_url", metavar="URL",
              help="Distributed: seed the crawl into the Redis at URL (redis://HOST:6379/0) for `jobcrawl worker` "
                   "processes on any machine, store what they spool into --db, then finish the run here.")
@click.option("--no-store", is_flag=True,
              help="With --redis: do not drain the spool here (a `jobcrawl store` does); wait until it is empty.")
@REDIS_PREFIX_OPTION
@click.option("--stall-timeout", type=click.FloatRange(min=0.5), default=300, show_default=True, metavar="SECONDS",
              help="With --redis: stop the run (exit 3, each waiting source named) when nothing moved for SECONDS.")
@click.option("-v", "--verbose", count=True,
              help="Show each failed request and Scrapy's log with tracebacks (-v info, -vv debug).")
@run_output
def crawl(names: tuple[str, ...], all_sources: bool, sources_file: str | None, db: str, jobdir: str | None,
          max_requests: int | None, cache: bool, scrapy_settings: tuple[str, ...],
          workers: int | None, redis_url: str | None, no_store: bool, prefix: str, stall_timeout: float, verbose: int,
          quiet: bool, as_json: bool) -> None:
    """Crawl sources of a sources file into the database (in --workers processes, one writer).

    NAMES are source names of the file; --all crawls every enabled one. Each source is one row in
    the runs table (requests, responses by status, postings new/updated/unchanged/closed, errors).
    Postings missing from a complete listing (a whole Greenhouse/Lever/Ashby board) are marked
    closed, never deleted. One run at a time per database: a lock on <db>.lock.

    With --redis, the crawling is done by `jobcrawl worker` processes (any machine) from a shared
    scrapy-redis queue; this process seeds the queue, stores the rows they spool (unless
    --no-store) and finishes the run: the same runs rows, closing and corpus steps as a local crawl.

    The sources file is --sources, else $JOBCRAWL_SOURCES, else ./sources.toml. A source whose
    requests failed gets one line on stderr with the reasons (DNS lookup failed, connection
    refused, timed out, HTTP 503 …); -v adds each failed request and Scrapy's log. A source read
    another way than its file says (a Workable widget that answers 404, read through the v3 jobs
    list) gets a `note:` line. Progress and
    --quiet / --json as for ingest (--json: a list, one report per source).

    Exit status: 0 every source crawled cleanly; 1 partly: some input quarantined, some request
    or some source failed, or a request cap was reached; 2 usage error (sources file, source
    name, option); 3 every source failed, or the run failed or was interrupted (with --jobdir,
    run it again to resume; with --redis also Redis lost or out of memory, the writer failed, or
    nothing moved for --stall-timeout); 4 another run holds the database's lock (or the Redis prefix).

    \b
    Example:
      jobcrawl crawl --all --sources seeds/sources.toml --db jobs.db
      jobcrawl crawl gitlab linear --sources seeds/sources.toml --jobdir .jobdir --max-requests 500
      jobcrawl crawl --all --sources sources.toml --redis redis://127.0.0.1:6379/0
    """
    from crawler import api
    from crawler.run.progress import make_progress

    if bool(names) == all_sources:
        raise click.UsageError("name the sources to crawl, or pass --all (not both)")
    settings = run_settings(verbose)
    if not cache:
        settings["HTTPCACHE_ENABLED"] = False
    settings.update(setting_pairs(scrapy_settings, "-s/--setting"))
    progress = make_progress(sys.stderr, quiet=quiet, noun="pages")
    try:
        with calling("crawl"):
            results = api.crawl(names, db, all_sources=all_sources, sources_file=sources_file, jobdir=jobdir,
                                max_requests=max_requests, settings=settings, workers=workers, redis_url=redis_url,
                                store=not no_store, prefix=prefix, stall_timeout=stall_timeout,
                                say=lambda line: click.echo(line, err=True), progress=progress)
    except _cluster_failures() if redis_url else () as err:
        from crawler.distributed.coordinator import ClusterBusy

        click.echo(f"jobcrawl crawl: {err}", err=True)
        raise SystemExit(4 if isinstance(err, ClusterBusy) else 3) from None
    finally:
        progress.close()
    for result in results:
        for line in (result.crawl.request_errors if verbose else []) + result.crawl.errors + result.messages:
            say(f"{result.source}: failed: {line}", err=True)
        if (line := result.failure_line()) is not None:
            say(line, err=True)
        for line in result.problems:
            say(f"{result.source}: quarantined: {line}", err=True)
        for line in result.crawl.repaired:
            say(f"{result.source}: repaired: {line}", err=True)
        for line in result.crawl.notes:
            say(f"{result.source}: note: {line}", err=True)
        if not (quiet or as_json):
            say(result.crawl_summary())
        if result.status == "interrupted" and jobdir:
            click.echo(f"{result.source}: interrupted; run the same command again to resume from {jobdir}", err=True)
    if as_json:
        say_json([r.as_dict() for r in results], default=str)
    elif not quiet:
        if "dedupe" in results[-1].steps:
            click.echo(dedupe_line(results[-1].steps["dedupe"]))
        alert_lines(results[-1])
        click.echo(f"database {db}: {results[-1].total_postings} postings")
    raise SystemExit(crawl_exit_status([r.status for r in results]))


def _cluster_failures() -> tuple[type[Exception], ...]:
    """What ends a ``crawl --redis`` with one line: Redis unreachable or lost, a writer that failed (exit 3), another
    run on the prefix (exit 4). Looked up only when such a crawl raises: a local crawl never imports Redis."""
    from crawler.distributed.cluster import RedisUnreachable
    from crawler.distributed.coordinator import ClusterBusy, StoreFailed

    return RedisUnreachable, StoreFailed, ClusterBusy


def crawl_exit_status(statuses: list[str]) -> int:
    """3 when every source failed or one was interrupted, 1 when some source is not ``ok``, else 0."""
    if all(s == "failed" for s in statuses) or "interrupted" in statuses:
        return 3
    return 1 if any(s != "ok" for s in statuses) else 0


@main.command()
@click.option("--redis", "redis_url", required=True, metavar="URL", help="Redis of the cluster (redis://HOST:6379/0).")
@click.option("--sources", "sources_file", type=click.Path(exists=True, dir_okay=False),
              help="Take part only in the sources this sources file names (default: every source of a run).")
@click.option("--concurrency", type=click.IntRange(1, 1000), metavar="N",
              help="Requests in flight in this worker per source (CONCURRENT_REQUESTS; default 16). Per-host "
                   "limits are the cluster's, whatever N is.")
@click.option("--once", is_flag=True, help="Exit when the first crawl this worker joins has ended.")
@REDIS_PREFIX_OPTION
@click.option("-s", "--set", "overrides", multiple=True, metavar="NAME=VALUE", help="A Scrapy setting (repeatable).")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log (-v info, -vv debug).")
def worker(redis_url: str, sources_file: str | None, concurrency: int | None, once: bool, prefix: str,
           overrides: tuple[str, ...], verbose: int) -> None:
    """Crawl for distributed runs: take requests from the shared Redis queue, push rows to the spool.

    Runs until stopped (Ctrl-C, SIGTERM), on any machine: it needs no database file, only the Redis.
    Whenever a `jobcrawl crawl --redis` run is active it crawls that run's sources (one Scrapy crawler
    each, the whole pipeline chain) and pushes their rows to the Redis item spool; per-host pace and
    concurrency, robots.txt and request caps are shared by every worker. A stopped or killed worker
    loses nothing: its unfinished requests go back to the queue (at once, or when its heartbeat
    expires after 10 s) and another worker crawls them; a restarted worker joins the run again.

    Exit status: 0 stopped; 2 usage error; 3 Redis cannot be reached.

    \b
    Example:
      jobcrawl worker --redis redis://127.0.0.1:6379/0
      jobcrawl worker --redis redis://crawl-redis:6379/0 --concurrency 32 --sources china.toml
    """
    import logging

    from crawler.distributed.cluster import RedisUnreachable
    from crawler.distributed.worker import run_worker

    only = None
    if sources_file:
        from crawler.web.sources import SourcesError, load_sources

        try:
            only = set(load_sources(sources_file).sources)
        except SourcesError as err:
            raise click.UsageError(str(err)) from None
    settings = {**run_settings(verbose), **setting_pairs(overrides, "--set")}
    logging.getLogger("crawler.distributed").setLevel(logging.INFO)
    try:
        status = run_worker(redis_url, prefix=prefix, only=only, concurrency=concurrency, once=once, settings=settings,
                            say=lambda line: click.echo(line, err=True))
    except RedisUnreachable as err:
        click.echo(f"jobcrawl worker: {err}", err=True)
        raise SystemExit(3) from None
    raise SystemExit(status)


@main.command()
@click.option("--redis", "redis_url", required=True, metavar="URL", help="Redis of the cluster (redis://HOST:6379/0).")
@DB_OPTION
@REDIS_PREFIX_OPTION
@click.option("--until-empty", is_flag=True, help="Exit once the spool is empty instead of waiting for more.")
def store(redis_url: str, db: str, prefix: str, until_empty: bool) -> None:
    """Drain the Redis item spool into the database: the one writer of a distributed run.

    `jobcrawl crawl --redis` runs one itself unless --no-store. Each batch is moved to this writer's
    processing list, written in one transaction, and removed only after the commit; a batch left
    by a writer that was killed is taken first by the next one, and a batch stored before is
    skipped (its id is in spool_batches). One writer per spool at a time.

    Exit status: 0 stopped (Ctrl-C) or the spool is empty (--until-empty); 3 Redis cannot be reached
    or a batch failed to store; 4 another writer drains this spool.

    \b
    Example:
      jobcrawl store --redis redis://127.0.0.1:6379/0 --db jobs.db
    """
    import signal
    import threading

    from crawler.distributed.cluster import Keys, RedisUnreachable, connect
    from crawler.distributed.spool import WriterBusy, drain

    try:
        client = connect(redis_url)
    except RedisUnreachable as err:
        click.echo(f"jobcrawl store: {err}", err=True)
        raise SystemExit(3) from None
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    click.echo(f"storing the spool of {redis_url} into {db} (Ctrl-C to stop)", err=True)
    try:
        stats = drain(client, Keys(prefix), db, stop=stop, until_empty=(lambda: True) if until_empty else None)
    except WriterBusy as err:
        click.echo(f"jobcrawl store: {err}", err=True)
        raise SystemExit(4) from None
    except Exception as err:  # noqa: BLE001 — one line; the batch stays in Redis for the next writer
        from crawler.distributed.spool import store_failed_line

        click.echo(f"jobcrawl store: {store_failed_line(err, client, Keys(prefix), redis_url, db)}", err=True)
        raise SystemExit(3) from None
    click.echo(f"stored {stats.batches} batches ({stats.rows} rows) in {stats.seconds:.1f} s"
               + (f" · {stats.requeued} taken back from a stopped writer" if stats.requeued else "")
               + (f" · {stats.duplicates} stored before, skipped" if stats.duplicates else ""))


@main.group(invoke_without_command=True)
@click.option("--health", is_flag=True,
              help="Print each crawled source's health: last run, last success, requests, responses by status, "
                   "postings new/updated/closed, errors, its HTTP cache's size and a state (ok, failing since …, "
                   "robots-blocked, empty).")
@click.option("--db", default="jobs.db", show_default=True, type=click.Path(dir_okay=False),
              help="SQLite database file (with --health).")
@click.option("--json", "as_json", is_flag=True, help="With --health: one JSON object per source.")
@click.pass_context
def sources(ctx: click.Context, health: bool, db: str, as_json: bool) -> None:
    """Sources files (what `jobcrawl crawl` fetches): find the job board behind a careers page; how each source fares.

    --health reads the source_health view (also a canned query in Datasette), for local and
    distributed crawls alike. Exit status with --health: 0 every source ok; 1 some source is
    failing, robots-blocked or empty; 2 usage error.

    \b
    Example:
      jobcrawl sources discover https://www.example.com/careers --add sources.toml
      jobcrawl sources --health --db jobs.db
    """
    if ctx.invoked_subcommand is not None:
        if health:
            raise click.UsageError("--health is not used with a subcommand")
        return
    if not health:
        click.echo(ctx.get_help())
        raise SystemExit(2)
    from crawler.store.health import source_health
    from crawler.store.schema import open_db
    from crawler.web.killsafe import cache_root, cache_size

    require_db(db)
    database = open_db(db, readonly=True)
    rows = source_health(database)
    database.close()
    for row in rows:
        row["cache_bytes"], row["cache_entries"] = cache_size(cache_root(db) / row["source"])
        if as_json:
            say_json(row)
            continue
        statuses = " ".join(f"{code}×{n}" for code, n in sorted(row["responses"].items())) or "none"
        say(f"{row['source']}: {row['state']} · last run {row['last_run']} {row['last_run_at']} "
             f"({row['last_status']}) · last success {row['last_success'] or 'never'} · requests "
             f"{row['requests']} · responses {statuses} · postings found {row['found']} · new {row['new']} · "
             f"updated {row['updated']} · closed {row['closed']} · errors {row['errors']} · HTTP cache "
             f"{row['cache_bytes']} bytes in {row['cache_entries']} entries")
    if not rows:
        click.echo(f"{db}: no crawl has finished yet", err=True)
    raise SystemExit(0 if all(r["state"] == "ok" for r in rows) else 1)


@sources.command()
@click.argument("urls", nargs=-1, required=True)
@click.option("--add", "add_to", type=click.Path(dir_okay=False), callback=new_file_path,
              help="Append the entries to this sources file (created if missing) instead of printing them. A board "
                   "the file already has is not added again; a source name is never reused.")
@click.option("--allow-private", is_flag=True,
              help="Allow loopback, private and link-local addresses (refused by default).")
@click.option("--timeout", default=20.0, show_default=True, type=click.FloatRange(0.1, 300),
              help="Seconds for each page, robots.txt included.")
@click.option("--max-bytes", default=2_000_000, show_default=True, type=click.IntRange(1024, 100_000_000),
              help="Read at most this many bytes of a page.")
def discover(urls: tuple[str, ...], add_to: str | None, allow_private: bool, timeout: float, max_bytes: int) -> None:
    """Find the job board a careers page embeds and print its sources-file entry.

    Recognized: Greenhouse, Lever, Ashby, Workable, SmartRecruiters, Recruitee and Workday boards
    (embed scripts, iframes, links), else schema.org JobPosting markup (a `jsonld` source). A URL
    that is itself a board's is read without fetching; any other is fetched once, politely:
    robots.txt honoured, the crawler's User-Agent (contact: the --add file's `contact`, else
    JOBCRAWL_CONTACT), a size cap and a time limit.

    Exit status: 0 a source for every URL; 1 some URL could not be fetched or shows no board;
    2 usage error (a URL that is not http(s), an --add file that is not a valid sources file).

    \b
    Example:
      jobcrawl sources discover https://www.example.com/careers https://jobs.lever.co/example
      jobcrawl sources discover https://www.example.com/careers --add sources.toml
    """
    from urllib.parse import urlsplit

    from crawler.web.discover import FetchError, add_entries, entry_toml, unique_name, user_agent
    from crawler.web.discover import discover as find
    from crawler.files import ConfigFileError, read_config_text
    from crawler.web.sources import SourcesError, load_sources

    for url in urls:
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise click.BadParameter(f"{url}: not an http(s) URL", param_hint="URLS")
    contact = None
    if add_to and Path(add_to).exists():
        try:
            if read_config_text(Path(add_to)).strip():
                contact = load_sources(add_to).contact
        except (SourcesError, ConfigFileError, UnicodeDecodeError) as err:
            raise click.UsageError(f"--add-to {add_to}: {err}" if not isinstance(err, SourcesError) else str(err)) from None
    failed, founds = False, []
    for url in urls:
        try:
            found = find(url, agent=user_agent(contact), timeout=timeout, max_bytes=max_bytes, allow_private=allow_private)
        except FetchError as err:
            click.echo(f"{url}: {err}", err=True)
            failed = True
            continue
        if not found:
            click.echo(f"{url}: no job board or schema.org JobPosting found", err=True)
            failed = True
        founds += [f for f in found if not any(f.covered_by(g.spider, g.args) for g in founds)]
    if add_to:
        try:
            results = add_entries(Path(add_to), founds)
        except SourcesError as err:
            raise click.UsageError(str(err)) from None
        for found, name, added in results:
            what = f"{found.spider} {', '.join(found.boards())}"
            click.echo(f"added [sources.{name}] ({what}) to {add_to}" if added
                       else f"{found.page}: {what} is already in {add_to} as [sources.{name}]")
    else:
        names: list[str] = []
        for found in founds:
            names.append(unique_name(found.name, names))
            click.echo(entry_toml(found, names[-1]))
    raise SystemExit(1 if failed else 0)
