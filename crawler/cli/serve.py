"""``jobcrawl serve``: the database in Datasette."""

from __future__ import annotations

import sys

import click

from crawler.cli import DB_OPTION, main, require_db


@main.command()
@DB_OPTION
@click.option("--port", default=8001, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Interface to listen on; keep 127.0.0.1 unless the machine is meant to share it.")
@click.option("--immutable", is_flag=True,
              help="Open the file immutable (counts precomputed, the write-ahead log never read): only for a "
                   "database nobody writes while it is served.")
@click.option("--no-sql", "no_sql", is_flag=True,
              help="Refuse arbitrary SQL (Datasette's allow_sql: false); pages, canned queries and charts still work.")
def serve(db: str, port: int, host: str, immutable: bool, no_sql: bool) -> None:
    """Browse the database in Datasette: listing, search, facets, posting pages, charts.

    The file is opened read-only, the normal way: a run may write it while it is served, and every
    page shows it as of the run's last commit. --immutable is for a file nobody writes (the
    write-ahead log is checkpointed into the file first; if another process holds it, the file is
    served the normal way). The only writes serve makes are pending migrations. Arbitrary SQL
    (/jobs?sql=) runs under a 1 s time limit, one query at a time; --no-sql refuses it. Start at
    /jobs/jobs; charts at /-/dashboards/market.

    Exit status: 2 for a usage error, such as a port another program listens on.

    \b
    Example:
      jobcrawl serve --db jobs.db
      jobcrawl serve --db archive-2026.db --immutable --port 8080
    """
    from crawler.serve.app import is_local, listen, prepare, serve as run_server

    require_db(db)
    try:
        sock = listen(host, port)
    except OSError as err:
        reason = err.strerror or str(err)
        click.echo(f"jobcrawl serve: cannot listen on {host}:{port}: {reason} "
                   "(another server on that port? choose another with --port)", err=True)
        sys.exit(2)
    port = sock.getsockname()[1]
    if not prepare(db, immutable=immutable) and immutable:
        click.echo("another process is reading or writing the database: serving it the normal way, "
                   "not --immutable", err=True)
        immutable = False
    if not is_local(host):
        what = "read the whole database" + ("" if no_sql else " and run SQL on it (up to 1 s a query)")
        click.echo(f"warning: listening on {host}: anyone who can reach this machine on port {port} can {what}"
                   + ("" if no_sql else "; --no-sql refuses SQL"), err=True)
    click.echo(f"serving {db} at http://{host}:{port}/jobs/jobs (Ctrl-C to stop)", err=True)
    run_server(db, sock, immutable=immutable, allow_sql=not no_sql)
