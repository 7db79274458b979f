"""``jobcrawl``: a thin command line over the library. Every command has help and an example."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import click

from crawler.procs import settle_gc
from crawler.suggest import did_you_mean


def _new_file_path(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
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
        return _new_file_path(ctx, param, value)
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
         "starts them for a crawl or more than 2 MB of files; dedupe from 5,000 postings; scoring from 5,000 "
         "active postings. The phase lines name them. Default: the number of cores.")


def _run_output(command):
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


def _parse_since(value: str | None, hint: str) -> str | None:
    """An ISO date or datetime option as UTC ISO text (the form stored times have)."""
    if value is None:
        return None
    try:
        return _parse_as_of(value).isoformat()
    except click.BadParameter as err:
        raise click.BadParameter(err.message.replace("--as-of", hint), param_hint=hint) from None


def _zone(value: str | None) -> str | None:
    """``--tz``: an IANA time zone name, checked."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if value is None:
        return None
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise click.BadParameter(f"{value!r} is not a time zone name (e.g. Asia/Shanghai, Europe/Berlin)",
                                 param_hint="--tz") from None
    return value


def _parse_as_of(value: str | None) -> datetime | None:
    from normalize.dates import parse_as_of

    if value is None:
        return None
    try:
        return parse_as_of(value, None)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--as-of") from None


@main.command()
@click.argument("paths", nargs=-1, required=True)
@DB_OPTION
@click.option("--as-of", "as_of", metavar="ISO-DATETIME",
              help="Anchor for relative times (发布于 4 小时前, 90天前更新, 09-03发布). Default: each file's "
                   "modification time. Without an offset it means local time.")
@click.option("--format", "fmt", type=click.Choice(["auto", "text", "csv", "jsonl", "lines"]), default="auto",
              show_default=True,
              help="How to read the files: auto picks by suffix (.csv/.tsv → csv; .jsonl/.ndjson/.json → jsonl; "
                   "anything else → text, the job app's dump); lines = one free-text JD per line.")
@click.option("--preset", metavar="NAME",
              help="Column layout of csv/jsonl files (see below); none = only --map. Default: each file's "
                   "header picks the preset that explains most of its columns.")
@click.option("--map", "mapping", multiple=True, metavar="FIELD=COLUMN",
              help="Map a column onto a field, over the preset (repeatable). COLUMN may join columns "
                   "(city+district); an empty COLUMN unmaps the field.")
@click.option("--value", "constants", multiple=True, metavar="FIELD=VALUE",
              help="Give every row this value, e.g. --value company=… when the file has no company (repeatable).")
@click.option("--tz", metavar="ZONE", callback=lambda ctx, param, value: _zone(value),
              help="Time zone of the files' sources (IANA, e.g. Europe/Berlin): their dates are read and their "
                   "times shown in it (stored times stay UTC). Default: Asia/Shanghai for Chinese postings, else UTC.")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 100_000),
              help="Postings written per transaction.")
@click.option("--reparse", is_flag=True,
              help="Parse every input again. Without it a text dump whose bytes, --as-of and parser are those "
                   "of its last complete parse, and whose postings are stored as it gave them, is counted "
                   "as unchanged without being parsed; so are the rows of a table file (or of a block of "
                   "rows of a streamed one) read with the same --format, --preset, --map and --value.")
@click.option("--max-file-size", default="256M", show_default=True, type=ByteSize(), metavar="SIZE",
              help="Read no input file larger than SIZE (e.g. 64M, 1G): a larger one is quarantined, its "
                   "first 64 KB kept.")
@WORKERS_OPTION
@click.option("-s", "--setting", "scrapy_settings", multiple=True, metavar="NAME=VALUE",
              help="A Scrapy or jobcrawl setting (repeatable), e.g. -s JOBCRAWL_MAX_TITLE_CHARS=120.")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log with tracebacks (-v info, -vv debug).")
@_run_output
def ingest(paths: tuple[str, ...], db: str, as_of: str | None, fmt: str, preset: str | None,
           mapping: tuple[str, ...], constants: tuple[str, ...], tz: str | None,
           batch_size: int, reparse: bool, max_file_size: int, workers: int | None, scrapy_settings: tuple[str, ...],
           verbose: int, quiet: bool, as_json: bool) -> None:
    """Ingest job-app text dumps and CSV / JSONL exports of other tools through the Scrapy engine.

    PATHS are files, folders (read recursively) or quoted globs. In folders only .txt .text .dump
    .csv .tsv .jsonl .ndjson .json files and files without an extension are read; name other
    files or use a glob. Every file is stored verbatim before it is parsed; bad input is
    quarantined with its reason and the run goes on. Only regular files are read: a FIFO,
    socket or device (or a symlink to one), a dangling symlink, a symlink loop, a folder
    that cannot be listed or a symlink to a folder (not followed) is one quarantine line naming it.

    Tables (csv, jsonl, lines): one posting per row. A row needs a title or a description (without
    both it is quarantined as `row 17: no title`); without company it is kept (the employer is
    hidden: shown as （企业未公开）); blank rows and repeated header rows are skipped and counted; columns no field uses are kept in the posting's extra. One line
    per table file says how it was read (encoding, delimiter, preset) and what became of its rows.

    \b
    FIELDS: title company url location (city) salary posted published valid_through
            description tags seniority employment_type work_mode category experience
            education benefits company_info source_id (id)
    PRESETS: jobspy      JobSpy's CSV (id, site, job_url, title, company, location,
                         date_posted, min_amount, max_amount, interval, currency, …)
             zh-board    a generic Chinese listing (职位名称, 公司名称, 薪资, 工作地点,
                         职位描述, 经验要求, 学历要求, 福利, 发布时间, 公司信息 …)
             boss-list   BOSS直聘 search cards (职位名称 … 学历经验要求, 公司信息, 详情页链接)
             boss-jd     BOSS直聘 postings with JD (公司, 经验学历, 职位, 工资, 职位描述 …)
             lagou-jd    拉勾 postings with JD (公司, 规模, 职位, 工资, 职位诱惑, 职位描述)
             lagou-api   拉勾 JSON fields (positionName, salary, workYear, companyFullName …)
             51job-list  前程无忧 rows (职位, 公司, 地址, 薪酬, 标签)
             jobcrawl    a CSV or TSV of `jobcrawl export` (read back as the same postings)
             generic     columns named like the fields, or job_title, company_name, link …

    Progress goes to stderr: on a terminal a bar counting postings (rate, time left) and a line
    as each phase ends (reading, storing, dedupe, scoring); elsewhere a line every 10 s and one
    per phase. --quiet shows none of it, --json prints the run report as JSON instead of the summary.

    Exit status: 0 when everything was ingested, 1 when some input was quarantined,
    2 for usage errors (no such path, bad --as-of, unknown preset or field), 3 when the run
    failed (also when dedupe or scoring failed after the postings were stored: the message names the
    command that re-runs the step), 4 when another run holds the database's lock (<db>.lock).

    \b
    Example:
      jobcrawl ingest seeds/
      jobcrawl ingest seeds/ --reparse
      jobcrawl ingest 'exports/**/*.txt' --db jobs.db --as-of 2026-11-29T12:00:00+08:00
      jobcrawl ingest jobs.csv --preset jobspy
      jobcrawl ingest boss.csv --map title=岗位 --map location=城市+区域
      jobcrawl ingest jds.txt --format lines --value company=某公司 --value title=算法工程师
    """
    from crawler.files import INGEST_SUFFIXES, InputError, resolve_inputs
    from crawler.run.lock import LockHeld, db_lock
    from crawler.ingest.table import format_for
    from crawler.run.progress import make_progress
    from crawler.run.runner import Job, run_job
    from crawler.ingest.textdump import TextdumpSpider

    anchor = _parse_as_of(as_of)
    try:
        inputs = resolve_inputs(list(paths), suffixes=INGEST_SUFFIXES,
                                exclude=[db + suffix for suffix in ("", "-wal", "-shm", "-journal")])
    except InputError as err:
        raise click.UsageError(str(err)) from None

    spidercls, spider_kwargs = TextdumpSpider, {"inputs": inputs, "as_of": anchor}
    run_args: dict = {"paths": list(paths), "as_of": as_of}
    table_options = {"format": fmt, "preset": preset, "mapping": list(mapping), "constants": list(constants)}
    if any(format_for(inp.path, fmt) != "text" for inp in inputs):
        from pydantic import ValidationError

        from crawler.ingest.tabular import TabularArgs, TabularSpider

        try:
            checked = TabularArgs(inputs=inputs, **table_options)
        except ValidationError as err:
            raise click.UsageError("; ".join(e["msg"].removeprefix("Value error, ")
                                             for e in err.errors())) from None
        _check_mapped_columns(checked.mapping, inputs, fmt)
        spidercls = TabularSpider
        spider_kwargs.update(table_options)
        run_args.update(table_options)
    elif preset or mapping or constants:
        raise click.UsageError("--preset, --map and --value apply to csv, jsonl and lines files; "
                               "PATHS hold only text dumps (see --format)")

    settings = {**_run_settings(verbose), "JOBCRAWL_BATCH_SIZE": batch_size, "JOBCRAWL_REPARSE": reparse,
                "JOBCRAWL_MAX_FILE_SIZE": max_file_size, "JOBCRAWL_TZ": tz,
                "JOBCRAWL_AS_OF_SOURCE": "as_of" if as_of else "file_mtime", **_setting_pairs(scrapy_settings, "-s")}
    progress = make_progress(sys.stderr, quiet=quiet, noun="files")
    try:
        with db_lock(db):
            result = run_job(Job(spidercls, "ingest", run_args, spider_kwargs), db, workers=workers,
                             settings=settings, progress=progress)
    except LockHeld as err:
        click.echo(f"jobcrawl ingest: {err}", err=True)
        raise SystemExit(4) from None
    finally:
        progress.close()
    _report(result, db, quiet=quiet, as_json=as_json)


def _check_mapped_columns(mapping: dict[str, str], inputs: list, fmt: str) -> None:
    """A ``--map`` naming a column that no csv or jsonl file of the ingest has is a usage error naming the
    columns there are, with the closest one (a column some files lack is their own problem: quarantined)."""
    from crawler.ingest.table import format_for, missing_columns, table_columns

    headers = {}
    for inp in inputs:
        kind = format_for(inp.path, fmt)
        if mapping and kind in ("csv", "jsonl") and (columns := table_columns(inp.path, kind)):
            headers[inp.locator] = columns
    if not headers:
        return
    missing = [missing_columns(mapping, header) for header in headers.values()]
    for name, spec, part in (m for m in missing[0] if all(m in other for other in missing[1:])):
        every = list(dict.fromkeys(c for header in headers.values() for c in header))
        shown = "; ".join(f"{locator}: {', '.join(header)}" for locator, header in list(headers.items())[:3])
        more = f"; … ({len(headers) - 3} more files)" if len(headers) > 3 else ""
        raise click.BadParameter(f"{name}={spec}: no file has a column {part!r}{did_you_mean(part, every)}; "
                                 f"columns of {shown}{more}", param_hint="--map")


def _setting_pairs(pairs: tuple[str, ...], hint: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a settings dict; a pair without ``=``, or a JOBCRAWL_TAXONOMY that names no
    taxonomy, is a usage error."""
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint=hint)
        settings[name] = value
    if settings.get("JOBCRAWL_TAXONOMY"):
        _taxonomy(settings["JOBCRAWL_TAXONOMY"], "JOBCRAWL_TAXONOMY=")
    return settings


def _taxonomy(path: str | None, hint: str = ""):
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


def _check_search(search: str | None) -> None:
    """A --search of exclusions only (``-Java``) finds nothing, and one with no word (``*``) would act on every
    posting: say so instead of running it."""
    from crawler.store.fts import names_no_term, only_exclusions

    if search and only_exclusions(search):
        raise click.BadParameter(f"{search!r} only leaves terms out; name one to find too (e.g. 'CUDA {search}')",
                                 param_hint="--search")
    if search is not None and names_no_term(search):
        raise click.BadParameter(f"{search!r} holds no word to search for (letters, digits or Chinese characters)",
                                 param_hint="--search")


def _say(line: str, err: bool = False) -> None:
    """Print one line that carries scraped text or names found in inputs: escaped (:func:`normalize.shown.shown`),
    so that it stays one line."""
    from normalize.shown import shown

    click.echo(shown(line), err=err)


def _alert_lines(result) -> None:
    """The alerts step's summary (stdout) and problems (stderr), when the run has watches."""
    lines = result.alerts.lines() if result.alerts else []
    for i, line in enumerate(lines):
        _say(line, err=i > 0)


def _report(result, db: str, *, quiet: bool = False, as_json: bool = False) -> None:
    """Print the run's problems (stderr) and its summary, or its report as JSON (stdout); exit 0 (all stored),
    1 (some quarantined or not stored) or 3 (failed)."""
    from crawler.report import capped, table_lines

    for line in (capped("quarantined", result.problems)
                 + capped("repaired", result.crawl.repaired + [r for t in result.crawl.tables for r in t["repaired"]])
                 + capped("failed", result.errors)):
        _say(line, err=True)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False, default=str))
    elif not quiet:
        for line in table_lines(result.crawl.tables):
            _say(line)
        click.echo(result.summary())
        if "dedupe" in result.steps:
            click.echo(_dedupe_line(result.steps["dedupe"]))
        if "score" in result.steps and not result.steps["score"].get("skipped"):
            scored = result.steps["score"]
            click.echo(f"score: {scored.get('scored', 0)} postings scored, {scored.get('unchanged', 0)} unchanged "
                       "(jobcrawl-v1)")
        _alert_lines(result)
        click.echo(f"database {db}: {result.total_postings} postings (run {result.run_id})")
    if result.status == "failed":
        raise SystemExit(3)
    raise SystemExit(1 if result.counts["quarantined"] or result.counts["errors"] else 0)


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
@_run_output
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
    refused, timed out, HTTP 503 …); -v adds each failed request and Scrapy's log. Progress and
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
    import os

    from crawler.run.lock import LockHeld, db_lock
    from crawler.run.progress import make_progress
    from crawler.run.runner import Job, run_jobs
    from crawler.web.sources import SourcesError, load_sources, locate_sources

    if bool(names) == all_sources:
        raise click.UsageError("name the sources to crawl, or pass --all (not both)")
    settings = _run_settings(verbose)
    from crawler.web.killsafe import cache_root as cache_root_of

    cache_root = cache_root_of(db)
    if not cache:
        settings["HTTPCACHE_ENABLED"] = False
    settings.update(_setting_pairs(scrapy_settings, "-s/--setting"))
    try:
        path = locate_sources(sources_file, dict(os.environ), Path.cwd())
        sources = load_sources(path)
        selected = sources.select(names, all_enabled=all_sources)
    except SourcesError as err:
        raise click.UsageError(str(err)) from None
    if not selected:
        raise click.UsageError(f"{path}: no enabled source")
    jobs = []
    for source in selected:
        own = sources.settings_for(source)
        # One cache per source: sources crawled by different workers never revalidate each other's pages.
        own["HTTPCACHE_DIR"] = str(cache_root / source.name)
        if max_requests is not None:
            own["JOBCRAWL_MAX_REQUESTS"] = max_requests
        if jobdir:
            own["JOBDIR"] = str(Path(jobdir) / source.name)
        jobs.append(Job(source.spider, "crawl", {"source": source.name, "spider": source.spider, **source.args},
                        source.args, own, source=source.name))
    if redis_url and (jobdir or workers):
        raise click.UsageError("--jobdir and --workers are for local crawls (the queue of --redis is in Redis)")
    progress = make_progress(sys.stderr, quiet=quiet, noun="pages")
    try:
        with db_lock(db):
            if redis_url:
                results = _crawl_distributed(jobs, db, redis_url, prefix=prefix, store=not no_store, settings=settings,
                                             stall_timeout=stall_timeout)
            else:
                results = run_jobs(jobs, db, settings=settings, workers=workers, progress=progress)
    except LockHeld as err:
        click.echo(f"jobcrawl crawl: {err}", err=True)
        raise SystemExit(4) from None
    finally:
        progress.close()
    for result in results:
        for line in (result.crawl.request_errors if verbose else []) + result.crawl.errors + result.messages:
            _say(f"{result.source}: failed: {line}", err=True)
        if (line := result.failure_line()) is not None:
            _say(line, err=True)
        for line in result.problems:
            _say(f"{result.source}: quarantined: {line}", err=True)
        for line in result.crawl.repaired:
            _say(f"{result.source}: repaired: {line}", err=True)
        if not (quiet or as_json):
            _say(result.crawl_summary())
        if result.status == "interrupted" and jobdir:
            click.echo(f"{result.source}: interrupted; run the same command again to resume from {jobdir}", err=True)
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in results], ensure_ascii=False, default=str))
    elif not quiet:
        if "dedupe" in results[-1].steps:
            click.echo(_dedupe_line(results[-1].steps["dedupe"]))
        _alert_lines(results[-1])
        click.echo(f"database {db}: {results[-1].total_postings} postings")
    raise SystemExit(crawl_exit_status([r.status for r in results]))


def crawl_exit_status(statuses: list[str]) -> int:
    """3 when every source failed or one was interrupted, 1 when some source is not ``ok``, else 0."""
    if all(s == "failed" for s in statuses) or "interrupted" in statuses:
        return 3
    return 1 if any(s != "ok" for s in statuses) else 0


def _run_settings(verbose: int) -> dict:
    """Scrapy settings of a run for ``-v`` given ``verbose`` times: the log level, and tracebacks only with -v."""
    return {"LOG_LEVEL": {0: "ERROR", 1: "INFO"}.get(verbose, "DEBUG"), "JOBCRAWL_LOG_TRACEBACKS": verbose > 0}


def _crawl_distributed(jobs, db: str, url: str, *, prefix: str, store: bool, settings: dict, stall_timeout: float):
    """``crawl --redis``: Redis is checked before the database is touched (exit 3, nothing written); Redis
    lost mid-run, or a writer that failed and left the run unfinished, is one line and exit 3."""
    from crawler.distributed.cluster import RedisUnreachable, connect
    from crawler.distributed.coordinator import ClusterBusy, StoreFailed, run_distributed

    try:
        connect(url).close()
        return run_distributed(jobs, db, url, prefix=prefix, store=store, settings=settings,
                               say=lambda line: click.echo(line, err=True), stall_timeout=stall_timeout)
    except (RedisUnreachable, StoreFailed) as err:
        click.echo(f"jobcrawl crawl: {err}", err=True)
        raise SystemExit(3) from None
    except ClusterBusy as err:
        click.echo(f"jobcrawl crawl: {err}", err=True)
        raise SystemExit(4) from None


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
    settings = {**_run_settings(verbose), **_setting_pairs(overrides, "--set")}
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


@main.command()
@DB_OPTION
@click.option("--source", "sources", multiple=True, metavar="NAME",
              help="Only raw inputs of this source (textdump, tabular, greenhouse, lever, ashby, jsonld …; repeatable).")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log with tracebacks (-v info, -vv debug).")
@_run_output
def reparse(db: str, sources: tuple[str, ...], verbose: int, quiet: bool, as_json: bool) -> None:
    """Parse the stored raw inputs again with today's parsers, without reading files or crawling again.

    Every file and every crawled response is kept verbatim in raw_inputs before it is parsed. After a
    parser improves (sections, salaries, dates, a page object), reparse runs the newest raw input of each
    file or URL through the whole pipeline again; a posting whose content changed is stored as a new
    version (the old one stays in posting_versions), then dedupe and scoring run. A quarantined input
    kept whole (a file that was not a dump, a table without a title column) is parsed again too, so a
    fixed parser reaches it; inputs kept only in part (a file over the size cap, the head of a large
    table, blocks of a streamed table) are named and left as they are.

    Exit status: 0 done; 1 some input could not be parsed again or was quarantined; 2 usage error;
    3 the run failed; 4 another run holds the database's lock.

    \b
    Example:
      jobcrawl reparse --db jobs.db
      jobcrawl reparse --db jobs.db --source greenhouse --source lever
    """
    from crawler.store.queries import raw_input_sources
    from crawler.run.lock import LockHeld, db_lock
    from crawler.run.progress import make_progress
    from crawler.run.runner import Job, run_job
    from crawler.reparse.spider import ReparseSpider

    _require_db(db)
    stored = raw_input_sources(db)
    unknown = [name for name in sources if name not in stored]
    if unknown:
        raise click.BadParameter(f"no raw input of {', '.join(map(repr, unknown))} in {db} (its sources: "
                                 f"{', '.join(stored) or 'none'})", param_hint="--source")
    progress = make_progress(sys.stderr, quiet=quiet, noun="inputs")
    try:
        with db_lock(db):
            result = run_job(Job(ReparseSpider, "reparse", {"sources": list(sources)},
                                 {"db": str(Path(db).resolve()), "sources": list(sources)}),
                             db, workers=1, settings=_run_settings(verbose), progress=progress)
    except LockHeld as err:
        click.echo(f"jobcrawl reparse: {err}", err=True)
        raise SystemExit(4) from None
    finally:
        progress.close()
    _report(result, db, quiet=quiet, as_json=as_json)


def _export_since(value: str | None) -> str | None:
    from normalize.clock import iso_utc
    from normalize.dates import parse_as_of

    if value is None:
        return None
    try:
        return iso_utc(parse_as_of(value, None))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO date or datetime (e.g. 2026-11-01)",
                                 param_hint="--since") from None


@main.command()
@DB_OPTION
@click.option("--out", default="-", show_default=True, type=click.Path(dir_okay=False, allow_dash=True),
              callback=_new_file_path,
              help="Output file; its suffix gives the format (.csv .tsv .jsonl .ndjson .json); - for standard output.")
@click.option("--format", "fmt", type=click.Choice(["csv", "tsv", "jsonl", "json", "parquet"]),
              help="csv / tsv: flat columns (see above); jsonl: one nested record per line; json: one array; parquet is not built in. "
                   "Default: from --out's suffix (standard output: jsonl); it must agree with the suffix.")
@click.option("--bom/--no-bom", default=None,
              help="Start a CSV or TSV file with the UTF-8 byte order mark (default: on), which Excel needs to "
                   "read Chinese text correctly; --no-bom for tools that do not expect one.")
@click.option("--open", "open_only", is_flag=True, help="Only open postings (not closed).")
@click.option("--since", metavar="DATE", help="Only postings posted on or after DATE (ISO date or datetime; "
                                              "without a post time: first seen on or after it).")
@click.option("--min-score", type=click.IntRange(0, 100), metavar="N",
              help="Only postings scored at least N (ours, else the app's own).")
@click.option("--search", metavar="TEXT", help="Only postings matching every term of TEXT in title, company or JD "
                                               "(as the search box: 算子, CUDA, \"large language\").")
@click.option("--source", "sources", multiple=True, metavar="NAME",
              help="Only postings of this source (textdump, tabular, greenhouse, lever …; repeatable).")
@click.option("--changed-since", metavar="ISO-DATETIME",
              help="Only postings new or changed (a new version, closed, reopened) at or after this time; "
                   "without an offset it means local time.")
@click.option("--columns", metavar="A,B,C",
              help="Only these columns, in this order (CSV/TSV: the flat columns, e.g. title,company,score; JSON: record keys).")
def export(db: str, out: str, fmt: str | None, bom: bool | None, open_only: bool, since: str | None,
           min_score: int | None, search: str | None, sources: tuple[str, ...], changed_since: str | None,
           columns: str | None) -> None:
    """Export postings: a flat CSV or TSV for spreadsheets, or JSON with every nested detail.

    CSV and TSV have one row per posting: salary in columns (salary_min, salary_max,
    salary_currency, salary_period, salary_monthly_min/max, salary_raw), each JD section as one
    cell with a bullet per line (about, responsibilities, requirements, preferred, benefits,
    other_sections), skills and tags joined by "; ", our score and its four dimensions, the
    app's own score, the duplicate cluster. They are UTF-8 with a byte order mark unless
    --no-bom (Excel needs it for Chinese). Text that a spreadsheet would take for a formula (a scraped
    title starting with =, +, -, @) gets a leading ' so it shows as text. `jobcrawl ingest` reads such a
    CSV back, without the '.

    \b
    Exit status: 0 written (also when no posting matched); 2 usage error.

    \b
    Example:
      jobcrawl export --out postings.csv
      jobcrawl export --out best.csv --open --min-score 80 --search CUDA
      jobcrawl export --out new.jsonl --since 2026-11-01 --source greenhouse
      jobcrawl export --out short.tsv --columns title,company,city,salary_monthly_max,score
      jobcrawl export --format json > postings.json
      jobcrawl export --changed-since 2026-11-25 --out changed.jsonl
    """
    from crawler.store.read import export_filter, iter_export
    from crawler.store.schema import open_db
    from crawler.export import ExportError, available_columns, choose_format, is_flat, write_file, write_records

    try:
        fmt = choose_format(out, fmt)
    except ExportError as err:
        raise click.UsageError(str(err)) from None
    if bom and not is_flat(fmt):
        raise click.UsageError(f"--bom applies to csv and tsv, not {fmt}")
    _check_search(search)
    where, params = export_filter(open_only=open_only, since=_export_since(since), min_score=min_score,
                                  search=search, sources=sources)
    _require_db(db)
    changed = _parse_since(changed_since, "--changed-since")
    if changed:
        from crawler.store.history import CHANGED_SINCE

        where = " AND ".join(filter(None, [where, CHANGED_SINCE.replace(":since", "?")]))
        params = [*params, changed, changed, changed]
    database = open_db(db, readonly=True)
    try:
        records = iter_export(database, where=where, params=params)
        first = next(records, None)
        picked = None
        if columns is not None:
            known = available_columns(fmt, first or (next(iter_export(database), None) if not is_flat(fmt) else None))
            picked = [c.strip() for c in columns.split(",") if c.strip()]
            unknown = [c for c in picked if c not in known]
            if not picked or (unknown and known):
                what = unknown[0] if unknown else columns
                raise click.BadParameter(f"no column {what!r}{did_you_mean(what, known)}; columns: {', '.join(known)}",
                                         param_hint="--columns")

        def chained():
            if first is not None:
                yield first
            yield from records

        n = write_file(out, lambda stream: write_records(stream, chained(), fmt, columns=picked,
                                                         bom=is_flat(fmt) if bom is None else bom))
    finally:
        database.close()
    if out != "-":
        click.echo(f"exported {n} posting{'' if n == 1 else 's'} to {out} ({fmt})", err=True)


@main.command()
@DB_OPTION
@click.option("--taxonomy", type=click.Path(exists=True, dir_okay=False),
              help="Skill taxonomy TOML (default: the packaged normalize/data/skills.toml).")
def retag(db: str, taxonomy: str | None) -> None:
    """Re-run skill tagging over every stored posting, without re-ingesting.

    Run it after editing the taxonomy; it is idempotent. Ingests and crawls retag on their own
    when they notice the taxonomy changed.

    \b
    Example:
      jobcrawl retag --db jobs.db
      jobcrawl retag --taxonomy my_skills.toml
    """
    from crawler.store.schema import open_db
    from crawler.store.skills import retag as run_retag

    _require_db(db)
    tax = _taxonomy(taxonomy)
    database = open_db(db)
    counts = run_retag(database, tax)
    database.close()
    click.echo(f"retagged {counts['postings']} postings · skills changed in {counts['changed']} · "
               f"{counts['rows']} evidence rows · taxonomy {tax.version} ({len(tax.skills)} skills)")


def _dedupe_line(c: dict[str, int]) -> str:
    if c.get("skipped"):
        return "dedupe and scoring: skipped, no posting changed since they last ran"
    return (f"dedupe: {c.get('added', 0)} clustered · {c.get('joined', 0)} joined a cluster · "
            f"{c.get('merged_clusters', 0)} clusters merged · {c.get('clusters', 0)} clusters, "
            f"{c.get('duplicates', 0)} duplicates in all")


@main.command()
@DB_OPTION
@click.option("--rebuild", is_flag=True, help="Forget stored signatures and clusters; recompute from the postings.")
def dedupe(db: str, rebuild: bool) -> None:
    """Cluster duplicate postings: reposts, cross-site copies, agency copies (never deleted).

    Runs incrementally at the end of every ingest and crawl; run it by hand after changing the
    dedupe rules, with --rebuild.

    \b
    Example:
      jobcrawl dedupe --db jobs.db
      jobcrawl dedupe --rebuild
    """
    from crawler.store.schema import open_db
    from crawler.dedupe.step import dedupe as run_dedupe

    _require_db(db)
    database = open_db(db)
    counts = run_dedupe(database, rebuild=rebuild)
    database.close()
    click.echo(_dedupe_line(counts))


@main.command()
@DB_OPTION
@click.option("--report", is_flag=True,
              help="Print agreement with the app's own evaluations (mean absolute error per dimension and "
                   "overall, the postings furthest apart) and store it in the runs table.")
@click.option("--top", default=5, show_default=True, type=click.IntRange(0, 1000),
              help="Postings listed by --report (furthest apart) and --profile (best fits).")
@click.option("--profile", "profile_file", type=click.Path(exists=True, dir_okay=False),
              help="Also score personal fit for this profile (TOML: skills I have and want, cities, minimum "
                   "monthly salary, work modes; see seeds/profile.toml), stored as scorer fit:<name>.")
@click.option("--all", "--rebuild", "force", is_flag=True,
              help="Score every active posting again, also those whose inputs have not changed since.")
def score(db: str, report: bool, top: int, profile_file: str | None, force: bool) -> None:
    """Score every active posting: 综合评分 and 薪资福利, 成长发展, 工作生活, 使命价值 with evidence.

    Recomputes the market statistics of the corpus (table market_stats: salary quartiles per
    category and city + category where at least 20 salaries exist, open postings per company and
    city + category), then stores our evaluation of every active posting as scorer jobcrawl-v1:
    scores, levels (信息不足 where the evidence is too little) and the evidence of every rule that
    fired (rules: normalize/score.py); its explanations and signals are rendered from them when
    read (export, posting page). A posting whose inputs (its
    facts, the market figures it uses, the rules' version) have not changed since it was scored is
    not scored again, unless --all. Re-scoring replaces only our own rows; the app's own evaluation
    (scorer source) is never touched. Each run is one row of kind score in the runs table.

    On a database that cannot be written (read-only media), --report alone prints the agreement of
    the scores stored, without scoring or storing anything.

    Exit status: 0 done; 2 usage error (no database, bad profile); 3 the database cannot be written.

    \b
    Example:
      jobcrawl score --db jobs.db
      jobcrawl score --report --top 10
      jobcrawl score --profile seeds/profile.toml
      jobcrawl score --all
    """
    import time

    from crawler.store import unwritable
    from crawler.store.runs import record_step_run
    from crawler.store.schema import open_db
    from crawler.files import ConfigFileError, read_config_text
    from crawler.score import step
    from normalize.clock import now_iso
    from normalize.fit import ProfileError, load_profile
    from normalize.score import MIN_SAMPLE
    from normalize.skills import load_taxonomy

    _require_db(db)
    profile = None
    if profile_file:
        try:
            profile = load_profile(read_config_text(Path(profile_file)), load_taxonomy())
        except (ProfileError, ConfigFileError, UnicodeDecodeError) as err:
            raise click.UsageError(f"{profile_file}: {err}") from None
    readonly = unwritable(db)
    if readonly and report and not (profile or force):
        database = open_db(db, readonly=True)
        try:
            for line in step.report_lines(step.agreement_report(database, top=top)):
                _say(line)
        finally:
            database.close()
        click.echo(f"{db} {readonly}: reported the stored scores without scoring again or storing the report", err=True)
        return
    started, clock = now_iso(), time.perf_counter()
    database = open_db(db)
    counts = step.score_corpus(database, now=started, force=force)
    stats: dict = {"counts": counts}
    click.echo(f"scored {counts['scored']} postings, {counts['unchanged']} unchanged ({counts['scorer']}) · market "
               f"statistics: {counts['market_stats']} rows, {counts['salary_groups']} salary groups with at least "
               f"{MIN_SAMPLE} salaries · {time.perf_counter() - clock:.1f} s")
    if profile:
        for skill in profile.unknown_skills:
            click.echo(f"{profile_file}: skill not in the taxonomy, ignored: {skill}", err=True)
        from crawler.fit.step import score_fit_and_blocks

        fit = score_fit_and_blocks(database, profile, now=started, incremental=not force)
        stats["fit"] = fit
        click.echo(f"{fit['scorer']}: scored {fit['scored']} postings, {fit['unchanged']} unchanged, "
                   f"{fit['blocked']} blocked; best fits:")
        for row in step.best_fits(database, fit["scorer"], top=top):
            _say(f"  #{row['id']} {row['company']} · {row['title']} · {row['city'] or '城市未明确'}: {row['summary']}")
    if report:
        stats["report"] = step.agreement_report(database, top=top)
        for line in step.report_lines(stats["report"]):
            _say(line)
    run_id = record_step_run(database, "score", started=started, stats=stats,
                             args={"report": report, "top": top, "profile": profile_file})
    database.close()
    if report:
        click.echo(f"report stored in runs #{run_id} (stats)")


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

    _require_db(db)
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

CONFIG_OPTION = click.option(
    "--config", "config_path", type=click.Path(dir_okay=False),
    help="Alerts config (TOML: destinations, profile). Default: $JOBCRAWL_ALERTS_CONFIG, else "
         "~/.config/jobcrawl/alerts.toml ($XDG_CONFIG_HOME).")


def _alerts_config(config_path: str | None):
    from crawler.alerts.delivery import ConfigError, load_config

    try:
        return load_config(config_path)
    except ConfigError as err:
        raise click.UsageError(str(err)) from None


@main.group()
def watch() -> None:
    """Saved searches: postings new to a watch are delivered after every ingest and crawl.

    A watch delivers each matching posting once, to each of its destinations (stdout, a file, a
    webhook, an ntfy topic, e-mail; see `jobcrawl watch add --help` and docs/alerts.md). Only the
    canonical member of a duplicate cluster is delivered, never a blocked or closed posting.

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
def watch_add(name: str, db: str, config_path: str | None, search: str | None, cities: tuple[str, ...],
              min_salary: str | None, min_fit: int | None, exclude_duplicates: bool, changed_since: str | None,
              destinations: tuple[str, ...], include_existing: bool) -> None:
    """Add a watch NAME (a saved search).

    \b
    Example:
      jobcrawl watch add cuda-bj --search "CUDA 算子" --city 北京 --min-salary 40k --min-fit 70 --to mail
      jobcrawl watch add infra --search "推理 vLLM" --exclude-duplicates --include-existing --changed-since 2026-11-25
    """
    from pydantic import ValidationError

    from crawler.alerts.delivery import ConfigError, add_watch
    from crawler.store.schema import open_db
    from crawler.run.lock import LockHeld, db_lock
    from normalize.watch import WatchSpec

    config = _alerts_config(config_path)
    names = list(destinations) or (list(config.destinations) if config and config.destinations else ["stdout"])
    _check_search(search)
    try:
        spec = WatchSpec(name=name, search=search, cities=list(cities), min_salary=min_salary, min_fit=min_fit,
                         exclude_duplicates=exclude_duplicates, changed_since=changed_since, destinations=names)
    except ValidationError as err:
        first = err.errors()[0]
        raise click.UsageError(f"{'.'.join(str(p) for p in first['loc'])}: "
                               f"{first['msg'].removeprefix('Value error, ')}") from None
    try:
        with db_lock(db):
            database = open_db(db)
            try:
                added = add_watch(database, spec, config=config, include_existing=include_existing)
            finally:
                database.close()
    except (ValueError, ConfigError) as err:
        raise click.UsageError(str(err)) from None
    except LockHeld as err:
        click.echo(f"jobcrawl watch add: {err}", err=True)
        raise SystemExit(4) from None
    later = "delivered on the next run" if include_existing else "the baseline (never delivered)"
    click.echo(f"watch {name} added (#{added['id']}) → {', '.join(names)}; "
               f"{added['matching']} postings match already: {later}")


@watch.command("list")
@DB_OPTION
def watch_list(db: str) -> None:
    """List the watches: what each asks for, its destinations, deliveries sent and pending.

    \b
    Example:
      jobcrawl watch list --db jobs.db
    """
    from crawler.alerts import store
    from crawler.store.schema import open_db

    _require_db(db)
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
                     f"changed since {spec.changed_since}" if spec.changed_since else None]
            c = store.watch_counts(database.conn, w.id)
            _say(f"{spec.name}: {' · '.join(x for x in wants if x) or 'every posting'} → {', '.join(spec.destinations)}"
                 f" · delivered {c['matched']} postings ({c['sent']} sent, {c['pending']} pending) · "
                 f"baseline {c['baseline']} · since {w.created_at}")
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

    _require_db(db)
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
    from crawler.run.lock import LockHeld, db_lock

    _require_db(db)
    if config_path is not None:
        _alerts_config(config_path)
    try:
        with db_lock(db):
            report = deliver_new_matches(db, config_path=config_path)
    except LockHeld as err:
        click.echo(f"jobcrawl watch deliver: {err}", err=True)
        raise SystemExit(4) from None
    lines = report.lines() or ["alerts: no watches and nothing pending"]
    for i, line in enumerate(lines):
        _say(line, err=i > 0)
    raise SystemExit(1 if report.pending else 0)


@main.command()
@click.argument("ref", metavar="URL|ID")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON instead of lines.")
def history(ref: str, db: str, as_json: bool) -> None:
    """What changed in a posting, version by version: salary 40–60K → 45–65K, bullets added and
    removed, closed and reopened.

    \b
    Example:
      jobcrawl history 17
      jobcrawl history https://boards.greenhouse.io/gitlab/jobs/123 --db jobs.db
    """
    from dataclasses import asdict

    from crawler.store.history import resolve, versions
    from crawler.store.schema import open_db
    from normalize.history import format_history, history as build

    _require_db(db)
    database = open_db(db, readonly=True)
    try:
        posting_id = resolve(database.conn, ref)
        if posting_id is None:
            raise click.UsageError(f"no posting with id or URL {ref!r}")
        found, events = versions(database, posting_id)
    finally:
        database.close()
    steps = build(found, events)
    current = found[-1].record
    if as_json:
        click.echo(json.dumps({"id": posting_id, "steps": [asdict(s) for s in steps]}, ensure_ascii=False, indent=1))
        return
    _say(f"#{posting_id} {current.get('title')} · {current.get('company')} · {current.get('city') or ''}"
         f" — {len(found)} version{'s' if len(found) != 1 else ''}")
    for line in format_history(steps):
        _say(line)


def _require_db(db: str) -> None:
    if not Path(db).exists():
        raise click.UsageError(f"{db}: no such database (run `jobcrawl ingest` first)")


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

    _require_db(db)
    database = open_db(db, readonly=True)
    rows = source_health(database)
    database.close()
    for row in rows:
        row["cache_bytes"], row["cache_entries"] = cache_size(cache_root(db) / row["source"])
        if as_json:
            click.echo(json.dumps(row, ensure_ascii=False))
            continue
        statuses = " ".join(f"{code}×{n}" for code, n in sorted(row["responses"].items())) or "none"
        _say(f"{row['source']}: {row['state']} · last run {row['last_run']} {row['last_run_at']} "
             f"({row['last_status']}) · last success {row['last_success'] or 'never'} · requests "
             f"{row['requests']} · responses {statuses} · postings found {row['found']} · new {row['new']} · "
             f"updated {row['updated']} · closed {row['closed']} · errors {row['errors']} · HTTP cache "
             f"{row['cache_bytes']} bytes in {row['cache_entries']} entries")
    if not rows:
        click.echo(f"{db}: no crawl has finished yet", err=True)
    raise SystemExit(0 if all(r["state"] == "ok" for r in rows) else 1)


@sources.command()
@click.argument("urls", nargs=-1, required=True)
@click.option("--add", "add_to", type=click.Path(dir_okay=False), callback=_new_file_path,
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

