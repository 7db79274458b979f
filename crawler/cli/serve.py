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
              help="Refuse arbitrary SQL (Datasette's allow_sql: false), also MCP's; pages, canned queries and charts "
                   "still work. It does not allow writes.")
@click.option("--allow-writes", "allow_writes", is_flag=True,
              help="Allow setting application statuses (the track canned query, by form or MCP) when listening on "
                   "another address than this machine's loopback (they are allowed there by default).")
@click.option("--no-mcp", "no_mcp", is_flag=True, help="Turn the MCP endpoint (/-/mcp) off.")
def serve(db: str, port: int, host: str, immutable: bool, no_sql: bool, allow_writes: bool, no_mcp: bool) -> None:
    """Browse the database in Datasette: listing, search, facets, posting pages, charts.

    The file is opened read-only, the normal way: a run may write it while it is served, and every
    page shows it as of the run's last commit. --immutable is for a file nobody writes (the
    write-ahead log is checkpointed into the file first; if another process holds it, the file is
    served the normal way). Arbitrary SQL (/jobs?sql=) runs under a 1 s time limit, one query at a
    time; --no-sql refuses it. Start at /jobs/jobs; charts at /-/dashboards/market; your tracked
    jobs at /jobs/my_applications.

    Writes: besides pending migrations, the only write is an application status, through the
    writable canned query /jobs/track (the posting page's form, CSRF-protected) or MCP. Allowed on
    loopback (the default host); on another address only with --allow-writes; never with
    --immutable. Every other POST is answered 405.

    MCP: /-/mcp is a Streamable HTTP MCP endpoint (datasette-mcp; --no-mcp turns it off): list
    the databases and their schema, run read-only SQL (the SQL page's limits), the canned queries
    (search, my_applications, and track when writes are allowed), and get_posting (one posting
    with its evaluation evidence and status). Writes and /-/mcp answer 403 to a
    request whose Host is not this server's address or whose Origin is another site.

    Exit status: 2 for a usage error, such as a port another program listens on, or
    --allow-writes with --immutable.

    \b
    Example:
      jobcrawl serve --db jobs.db
      jobcrawl serve --db archive-2026.db --immutable --port 8080
      jobcrawl serve --db jobs.db --host 0.0.0.0 --allow-writes --no-mcp
    """
    from browse.access import Access, is_local
    from crawler.serve.app import listen, prepare, serve as run_server

    require_db(db)
    if immutable and allow_writes:
        click.echo("jobcrawl serve: --allow-writes with --immutable: an immutable file cannot be written", err=True)
        sys.exit(2)
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
        if allow_writes:
            click.echo("warning: --allow-writes: they can also set application statuses", err=True)
    access = Access.of(host, port, immutable=immutable, allow_writes=allow_writes, mcp=not no_mcp)
    click.echo(f"serving {db} at http://{host}:{port}/jobs/jobs (Ctrl-C to stop)", err=True)
    run_server(db, sock, immutable=immutable, allow_sql=not no_sql, access=access)
