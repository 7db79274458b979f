"""``jobcrawl``: a thin command line over the library (crawler/api.py). Every command has help and an example.

This module holds the ``main`` group and what the commands share (options, checks, output); each command
group is a module of this package: ingest (ingest, reparse, retag), crawl (crawl, worker, store, sources),
corpus (dedupe, score, export, history), serve, stats, track, watch."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import click

from crawler.procs import settle_gc


def new_file_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file to create (or replace): its folder must exist. An option not given stays None."""
    if value is None:
        return None
    path = Path(value)
    if value != "-" and not path.exists() and not path.resolve().parent.is_dir():
        raise click.BadParameter(f"{value}: the folder {path.resolve().parent} does not exist")
    return value


def _database_path(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--db``: a jobcrawl database, an empty file, or a new file in a folder that exists. The
    SQLite database of something else (tables, but not jobcrawl's migrations) is refused: jobcrawl
    would add its own tables to it."""
    from crawler.store.queries import foreign_tables
    from crawler.files import special_kind

    path = Path(value)
    ctx.meta[_DB_KEY] = value
    if kind := special_kind(path):
        raise click.BadParameter(f"{value} is {kind}, not a database file")
    if not path.is_file():
        return new_file_path(ctx, param, value)
    with path.open("rb") as fh:
        head = fh.read(16)
    if not head:
        return value
    if head != b"SQLite format 3\x00":
        raise click.BadParameter(f"{value} is not an SQLite database")
    tables = foreign_tables(path)
    if tables:
        shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        raise click.BadParameter(f"{value} is the SQLite database of something else (tables: {shown}); "
                                 "name a new file or a jobcrawl database")
    return value


class ByteSize(click.ParamType):
    """A size in bytes: ``1048576``, ``512K``, ``256M``, ``1.5G`` (binary units)."""

    name = "size"
    UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "M": 2**20, "MB": 2**20, "G": 2**30, "GB": 2**30}

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip().upper()
        number = text.rstrip("KMGB")
        unit = text[len(number):]
        try:
            size = int(float(number) * self.UNITS[unit])
        except (ValueError, KeyError):
            self.fail(f"{value!r} is not a size (e.g. 256M, 1G, 500K)", param, ctx)
        if size < 1:
            self.fail(f"{value!r}: the size must be positive", param, ctx)
        return size


DB_OPTION = click.option(
    "--db", default="jobs.db", show_default=True, type=click.Path(dir_okay=False), callback=_database_path,
    help="SQLite database file.",
)


REDIS_PREFIX_OPTION = click.option(
    "--prefix", default="jobcrawl", show_default=True, metavar="NAME",
    help="Prefix of the Redis keys: one distributed run at a time per prefix.")


WORKERS_OPTION = click.option(
    "--workers", type=click.IntRange(1, 64), metavar="N",
    help="The one switch for parallelism: at most N processes besides this one, which writes the database (1: "
         "everything in this process). Reading (Scrapy engines and the whole pipeline over shares of the inputs) "
         "starts them for a crawl or more than 8 MB of files; dedupe from 5,000 postings; scoring from 5,000 "
         "active postings. The phase lines name them. Default: the number of cores.")


def run_output(command):
    """``--quiet`` and ``--json``, the options of the commands that run the crawler (ingest, crawl, reparse)."""
    command = click.option("--json", "as_json", is_flag=True,
                           help="Print the run report as JSON on standard output (for scripts) instead of the summary; "
                                "problems still go to stderr.")(command)
    return click.option("-q", "--quiet", is_flag=True,
                        help="No progress and no summary: only problems on stderr, and the exit status.")(command)


_DB_KEY = "jobcrawl.db"  # ctx.meta: the --db a command was given


class _Commands(click.Group):
    """The commands; a database that fails under one (damaged, a full disk, read-only for a command that
    writes) ends it with one line and exit 3."""

    def invoke(self, ctx: click.Context):
        import sqlite3

        try:
            return super().invoke(ctx)
        except sqlite3.DatabaseError as err:
            from crawler.store import ReadOnlyDatabase

            db = ctx.meta.get(_DB_KEY, "the database")
            if isinstance(err, ReadOnlyDatabase):
                detail = str(err)
            elif str(err) in ("database disk image is malformed", "file is not a database"):
                detail = (f"{db} is damaged ({err}): restore it from a backup, or copy out what it still holds "
                          f"with: sqlite3 {db} .recover | sqlite3 recovered.db")
            else:
                detail = f"{db}: {type(err).__name__}: {err}"
            click.echo(f"jobcrawl {ctx.invoked_subcommand}: {detail}", err=True)
            ctx.exit(3)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="jobcrawl")
def main() -> None:
    """jobcrawl: job postings → a clean, scored SQLite database you browse in Datasette.

    \b
    Example:
      jobcrawl ingest seeds/ --db jobs.db
      jobcrawl export --db jobs.db --format jsonl --out postings.jsonl
    """
    settle_gc(freeze=False)


def setting_pairs(pairs: tuple[str, ...], hint: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a settings dict; a pair without ``=``, or a JOBCRAWL_TAXONOMY that names no
    taxonomy, is a usage error."""
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint=hint)
        settings[name] = value
    if settings.get("JOBCRAWL_TAXONOMY"):
        taxonomy_option(settings["JOBCRAWL_TAXONOMY"], "JOBCRAWL_TAXONOMY=")
    return settings


def taxonomy_option(path: str | None, hint: str = ""):
    """The skill taxonomy at ``path`` (None: the packaged one); one that cannot be read or is no taxonomy is a
    usage error naming the file and why."""
    from crawler.files import ConfigFileError, read_taxonomy
    from normalize.skills import TaxonomyError

    try:
        return read_taxonomy(path)
    except ConfigFileError as err:
        raise click.UsageError(f"{hint}{path}: {err}") from None
    except TaxonomyError as err:
        raise click.UsageError(f"{hint}{err}") from None


def check_search(search: str | None) -> None:
    """A --search of exclusions only (``-Java``) finds nothing, and one with no word (``*``) would act on every
    posting: say so instead of running it."""
    from crawler.store.fts import names_no_term, only_exclusions

    if search and only_exclusions(search):
        raise click.BadParameter(f"{search!r} only leaves terms out; name one to find too (e.g. 'CUDA {search}')",
                                 param_hint="--search")
    if search is not None and names_no_term(search):
        raise click.BadParameter(f"{search!r} holds no word to search for (letters, digits or Chinese characters)",
                                 param_hint="--search")


def say(line: str, err: bool = False) -> None:
    """Print one line that carries scraped text or names found in inputs: escaped (:func:`normalize.shown.shown`),
    so that it stays one line."""
    from normalize.shown import shown

    click.echo(shown(line), err=err)


def say_json(value, **options) -> None:
    """Print ``value`` as JSON (non-ASCII as is; ``options`` for :func:`json.dumps`) with every character a terminal or
    a line splitter acts on inside its strings written as a ``\\uXXXX`` escape (:func:`normalize.shown.json_line`):
    the same JSON value, read back exactly."""
    import json

    from normalize.shown import json_line

    text = json.dumps(value, ensure_ascii=False, **options)
    click.echo("\n".join(map(json_line, text.split("\n"))))  # raw line breaks are the indent's, never a string's


def alert_lines(result) -> None:
    """The alerts step's summary (stdout) and problems (stderr), when the run has watches."""
    lines = result.alerts.lines() if result.alerts else []
    for i, line in enumerate(lines):
        say(line, err=i > 0)


def run_settings(verbose: int) -> dict:
    """Scrapy settings of a run for ``-v`` given ``verbose`` times: the log level, and tracebacks only with -v."""
    return {"LOG_LEVEL": {0: "ERROR", 1: "INFO"}.get(verbose, "DEBUG"), "JOBCRAWL_LOG_TRACEBACKS": verbose > 0}


def dedupe_line(c: dict[str, int]) -> str:
    """The line a dedupe prints: what it clustered, or that it was skipped."""
    if c.get("skipped"):
        return "dedupe and scoring: skipped, no posting changed since they last ran"
    return (f"dedupe: {c.get('added', 0)} clustered · {c.get('joined', 0)} joined a cluster · "
            f"{c.get('merged_clusters', 0)} clusters merged · {c.get('clusters', 0)} clusters, "
            f"{c.get('duplicates', 0)} duplicates in all")


def require_db(db: str) -> None:
    """A command that reads a database: one that does not exist is a usage error."""
    if not Path(db).exists():
        raise click.UsageError(f"{db}: no such database (run `jobcrawl ingest` first)")


@contextmanager
def calling(command: str):
    """Around a call of crawler.api: its usage error is click's (naming the option when it has one); a run out of
    order is one line and exit 2; another run holding the database's lock is one line and exit 4."""
    from crawler.api import OutOfOrder, UsageError
    from crawler.run.lock import LockHeld

    try:
        yield
    except OutOfOrder as err:
        click.echo(f"jobcrawl {command}: {err}", err=True)
        raise SystemExit(2) from None
    except UsageError as err:
        if err.option:
            raise click.BadParameter(str(err), param_hint=err.option) from None
        raise click.UsageError(str(err)) from None
    except LockHeld as err:
        click.echo(f"jobcrawl {command}: {err}", err=True)
        raise SystemExit(4) from None


from crawler.cli import corpus, crawl, ingest, replay, serve, stats, track, watch  # noqa: E402,F401 — each adds its commands to main
