"""``jobcrawl``: a thin command line over the library. Every command has help and an example."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import click

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
    import sqlite3

    from crawler.db import readonly_uri

    path = Path(value)
    if not path.is_file():
        return _new_file_path(ctx, param, value)
    with path.open("rb") as fh:
        head = fh.read(16)
    if not head:
        return value
    if head != b"SQLite format 3\x00":
        raise click.BadParameter(f"{value} is not an SQLite database")
    conn = sqlite3.connect(readonly_uri(path), uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        ours = "_sqlite_migrations" in tables and conn.execute(
            "SELECT 1 FROM _sqlite_migrations WHERE migration_set = 'jobcrawl' LIMIT 1").fetchone()
    finally:
        conn.close()
    if tables and not ours:
        shown = ", ".join(tables[:5]) + (", …" if len(tables) > 5 else "")
        raise click.BadParameter(f"{value} is the SQLite database of something else (tables: {shown}); "
                                 "name a new file or a jobcrawl database")
    return value


DB_OPTION = click.option(
    "--db", default="jobs.db", show_default=True, type=click.Path(dir_okay=False), callback=_database_path,
    help="SQLite database file.",
)


WORKERS_OPTION = click.option(
    "--workers", type=click.IntRange(1, 64), metavar="N",
    help="Worker processes, each running the Scrapy engine and the whole pipeline over a share of the inputs "
         "(files of an ingest, sources of a crawl) while this process writes the database. Default: the number "
         "of cores; a run of one source or of at most 2 MB of files runs in one process.")


def _run_output(command):
    """``--quiet`` and ``--json``, the options of the commands that run the crawler (ingest, crawl, reparse)."""
    command = click.option("--json", "as_json", is_flag=True,
                           help="Print the run report as JSON on standard output (for scripts) instead of the summary; "
                                "problems still go to stderr.")(command)
    return click.option("-q", "--quiet", is_flag=True,
                        help="No progress and no summary: only problems on stderr, and the exit status.")(command)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="jobcrawl")
def main() -> None:
    """jobcrawl: job postings → a clean, scored SQLite database you browse in Datasette.

    \b
    Example:
      jobcrawl ingest seeds/ --db jobs.db
      jobcrawl export --db jobs.db --format jsonl --out postings.jsonl
    """


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
@click.option("--set", "old_constants", multiple=True, metavar="FIELD=VALUE", hidden=True,
              help="Deprecated spelling of --value.")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 100_000),
              help="Postings written per transaction.")
@click.option("--reparse", is_flag=True,
              help="Parse every input again. Without it a text dump whose bytes, --as-of and parser are those "
                   "of its last complete parse, and whose postings are stored as it gave them, is counted "
                   "as unchanged without being parsed; so are the rows of a table file (or of a block of "
                   "rows of a streamed one) read with the same --format, --preset, --map and --value.")
@WORKERS_OPTION
@click.option("-s", "--setting", "scrapy_settings", multiple=True, metavar="NAME=VALUE",
              help="A Scrapy or jobcrawl setting (repeatable), e.g. -s JOBCRAWL_MAX_TITLE_CHARS=120.")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log with tracebacks (-v info, -vv debug).")
@_run_output
def ingest(paths: tuple[str, ...], db: str, as_of: str | None, fmt: str, preset: str | None,
           mapping: tuple[str, ...], constants: tuple[str, ...], old_constants: tuple[str, ...], batch_size: int,
           reparse: bool, workers: int | None, scrapy_settings: tuple[str, ...], verbose: int, quiet: bool,
           as_json: bool) -> None:
    """Ingest job-app text dumps and CSV / JSONL exports of other tools through the Scrapy engine.

    PATHS are files, folders (read recursively) or quoted globs. In folders only .txt .text .dump
    .csv .tsv .jsonl .ndjson .json files and files without an extension are read; name other
    files or use a glob. Every file is stored verbatim before it is parsed; bad input is
    quarantined with its reason and the run goes on.

    Tables (csv, jsonl, lines): one posting per row. Title and company are required (a row
    without them is quarantined as `row 17: no title`); blank rows and repeated header rows
    are skipped and counted; columns no field uses are kept in the posting's extra. One line
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
    from crawler.inputs import INGEST_SUFFIXES, InputError, resolve_inputs
    from crawler.lock import LockHeld, db_lock
    from crawler.pages.tabular import format_for
    from crawler.progress import make_progress
    from crawler.runner import Job, run_job
    from crawler.spiders.textdump import TextdumpSpider

    anchor = _parse_as_of(as_of)
    if old_constants:
        click.echo("jobcrawl ingest: --set FIELD=VALUE is deprecated: use --value FIELD=VALUE "
                   "(-s/--setting NAME=VALUE is a Scrapy setting)", err=True)
        constants = old_constants + constants
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

        from crawler.spiders.tabular import TabularArgs, TabularSpider

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
                **_setting_pairs(scrapy_settings, "-s")}
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
    from crawler.pages.tabular import format_for, missing_columns, table_columns

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
    """``NAME=VALUE`` options as a settings dict; a pair without ``=`` is a usage error."""
    settings = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint=hint)
        settings[name] = value
    return settings


def _report(result, db: str, *, quiet: bool = False, as_json: bool = False) -> None:
    """Print the run's problems (stderr) and its summary, or its report as JSON (stdout); exit 0 (all stored),
    1 (some quarantined or not stored) or 3 (failed)."""
    for line in result.problems:
        click.echo(f"quarantined: {line}", err=True)
    for line in result.crawl.repaired:
        click.echo(f"repaired: {line}", err=True)
    for line in result.errors:
        click.echo(f"failed: {line}", err=True)
    if as_json:
        click.echo(json.dumps(result.as_dict(), ensure_ascii=False, default=str))
    elif not quiet:
        for table in result.crawl.tables:
            click.echo(table["summary"])
        click.echo(result.summary())
        if "dedupe" in result.steps:
            click.echo(_dedupe_line(result.steps["dedupe"]))
        if "score" in result.steps:
            click.echo(f"score: {result.steps['score'].get('scored', 0)} postings scored (jobcrawl-v1)")
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
@click.option("--set", "old_settings", multiple=True, metavar="NAME=VALUE", hidden=True,
              help="Deprecated spelling of --setting.")
@WORKERS_OPTION
@click.option("-v", "--verbose", count=True,
              help="Show each failed request and Scrapy's log with tracebacks (-v info, -vv debug).")
@_run_output
def crawl(names: tuple[str, ...], all_sources: bool, sources_file: str | None, db: str, jobdir: str | None,
          max_requests: int | None, cache: bool, scrapy_settings: tuple[str, ...], old_settings: tuple[str, ...],
          workers: int | None, verbose: int, quiet: bool, as_json: bool) -> None:
    """Crawl sources of a sources file into the database (in --workers processes, one writer).

    NAMES are source names of the file; --all crawls every enabled one. Each source is one row in
    the runs table (requests, responses by status, postings new/updated/unchanged/closed, errors).
    Postings missing from a complete listing (a whole Greenhouse/Lever/Ashby board) are marked
    closed, never deleted. One run at a time per database: a lock on <db>.lock.

    The sources file is --sources, else $JOBCRAWL_SOURCES, else ./sources.toml. A source whose
    requests failed gets one line on stderr with the reasons (DNS lookup failed, connection
    refused, timed out, HTTP 503 …); -v adds each failed request and Scrapy's log. Progress and
    --quiet / --json as for ingest (--json: a list, one report per source).

    Exit status: 0 every source crawled cleanly; 1 partly: some input quarantined, some request
    or some source failed, or a request cap was reached; 2 usage error (sources file, source
    name, option); 3 every source failed, or the run failed or was interrupted (with --jobdir,
    run it again to resume); 4 another run holds the database's lock.

    \b
    Example:
      jobcrawl crawl --all --sources seeds/sources.toml --db jobs.db
      jobcrawl crawl gitlab linear --sources seeds/sources.toml --jobdir .jobdir --max-requests 500
    """
    import os

    from crawler.lock import LockHeld, db_lock
    from crawler.progress import make_progress
    from crawler.runner import Job, run_jobs
    from crawler.sources import SourcesError, load_sources, locate_sources

    if bool(names) == all_sources:
        raise click.UsageError("name the sources to crawl, or pass --all (not both)")
    if old_settings:
        click.echo("jobcrawl crawl: --set is deprecated: use -s/--setting NAME=VALUE", err=True)
    settings = _run_settings(verbose)
    cache_root = Path(str(Path(db).resolve()) + ".httpcache")
    if not cache:
        settings["HTTPCACHE_ENABLED"] = False
    settings.update(_setting_pairs(old_settings + scrapy_settings, "-s/--setting"))
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
    progress = make_progress(sys.stderr, quiet=quiet, noun="pages")
    try:
        with db_lock(db):
            results = run_jobs(jobs, db, settings=settings, workers=workers, progress=progress)
    except LockHeld as err:
        click.echo(f"jobcrawl crawl: {err}", err=True)
        raise SystemExit(4) from None
    finally:
        progress.close()
    for result in results:
        for line in (result.crawl.request_errors if verbose else []) + result.crawl.errors + result.messages:
            click.echo(f"{result.source}: failed: {line}", err=True)
        if (line := result.failure_line()) is not None:
            click.echo(line, err=True)
        for line in result.problems:
            click.echo(f"{result.source}: quarantined: {line}", err=True)
        for line in result.crawl.repaired:
            click.echo(f"{result.source}: repaired: {line}", err=True)
        if not (quiet or as_json):
            click.echo(result.crawl_summary())
        if result.status == "interrupted" and jobdir:
            click.echo(f"{result.source}: interrupted; run the same command again to resume from {jobdir}", err=True)
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in results], ensure_ascii=False, default=str))
    elif not quiet:
        if "dedupe" in results[-1].steps:
            click.echo(_dedupe_line(results[-1].steps["dedupe"]))
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
    version (the old one stays in posting_versions), then dedupe and scoring run. Inputs kept only in
    part (quarantined ones, blocks of a streamed table) are named and left as they are.

    Exit status: 0 done; 1 some input could not be parsed again or was quarantined; 2 usage error;
    3 the run failed; 4 another run holds the database's lock.

    \b
    Example:
      jobcrawl reparse --db jobs.db
      jobcrawl reparse --db jobs.db --source greenhouse --source lever
    """
    from crawler.lock import LockHeld, db_lock
    from crawler.progress import make_progress
    from crawler.runner import Job, run_job
    from crawler.spiders.reparse import ReparseSpider

    _require_db(db)
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
@click.option("--columns", metavar="A,B,C",
              help="Only these columns, in this order (CSV/TSV: the flat columns, e.g. title,company,score; JSON: record keys).")
def export(db: str, out: str, fmt: str | None, bom: bool | None, open_only: bool, since: str | None,
           min_score: int | None, search: str | None, sources: tuple[str, ...], columns: str | None) -> None:
    """Export postings: a flat CSV or TSV for spreadsheets, or JSON with every nested detail.

    CSV and TSV have one row per posting: salary in columns (salary_min, salary_max,
    salary_currency, salary_period, salary_monthly_min/max, salary_raw), each JD section as one
    cell with a bullet per line (about, responsibilities, requirements, preferred, benefits,
    other_sections), skills and tags joined by "; ", our score and its four dimensions, the
    app's own score, the duplicate cluster. They are UTF-8 with a byte order mark unless
    --no-bom (Excel needs it for Chinese). `jobcrawl ingest` reads such a CSV back.

    \b
    Exit status: 0 written (also when no posting matched); 2 usage error.

    \b
    Example:
      jobcrawl export --out postings.csv
      jobcrawl export --out best.csv --open --min-score 80 --search CUDA
      jobcrawl export --out new.jsonl --since 2026-11-01 --source greenhouse
      jobcrawl export --out short.tsv --columns title,company,city,salary_monthly_max,score
      jobcrawl export --format json > postings.json
    """
    from crawler.db.read import export_filter, iter_export
    from crawler.db.schema import open_db
    from crawler.export import ExportError, available_columns, choose_format, is_flat, write_file, write_records

    try:
        fmt = choose_format(out, fmt)
    except ExportError as err:
        raise click.UsageError(str(err)) from None
    if bom and not is_flat(fmt):
        raise click.UsageError(f"--bom applies to csv and tsv, not {fmt}")
    where, params = export_filter(open_only=open_only, since=_export_since(since), min_score=min_score,
                                  search=search, sources=sources)
    _require_db(db)
    database = open_db(db)
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
    from crawler.db.schema import open_db
    from crawler.db.skills import retag as run_retag
    from normalize.skills import TaxonomyError, load_taxonomy

    _require_db(db)
    try:
        tax = load_taxonomy(taxonomy)
    except TaxonomyError as err:
        raise click.UsageError(f"{taxonomy}: {err}") from None
    database = open_db(db)
    counts = run_retag(database, tax)
    database.close()
    click.echo(f"retagged {counts['postings']} postings · skills changed in {counts['changed']} · "
               f"{counts['rows']} evidence rows · taxonomy {tax.version} ({len(tax.skills)} skills)")


def _dedupe_line(c: dict[str, int]) -> str:
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
    from crawler.db.schema import open_db
    from crawler.steps.dedupe import dedupe as run_dedupe

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
def score(db: str, report: bool, top: int, profile_file: str | None) -> None:
    """Score every active posting: 综合评分 and 薪资福利, 成长发展, 工作生活, 使命价值 with evidence.

    Recomputes the market statistics of the corpus (table market_stats: salary quartiles per
    category and city + category where at least 5 salaries exist, open postings per company and
    city + category), then stores our evaluation of every active posting as scorer jobcrawl-v1:
    scores, levels, explanations, signals and the evidence of every rule that fired (rules:
    normalize/score.py). Re-scoring replaces only our own rows; the app's own evaluation (scorer
    source) is never touched. Each run is one row of kind score in the runs table.

    Exit status: 0 done; 2 usage error (no database, bad profile).

    \b
    Example:
      jobcrawl score --db jobs.db
      jobcrawl score --report --top 10
      jobcrawl score --profile seeds/profile.toml
    """
    import time

    from crawler.db.runs import record_step_run
    from crawler.db.schema import open_db
    from crawler.steps import score as step
    from normalize.clock import now_iso
    from normalize.fit import ProfileError, load_profile
    from normalize.skills import load_taxonomy

    _require_db(db)
    profile = None
    if profile_file:
        try:
            profile = load_profile(Path(profile_file).read_text(encoding="utf-8"), load_taxonomy())
        except (ProfileError, UnicodeDecodeError) as err:
            raise click.UsageError(f"{profile_file}: {err}") from None
    started, clock = now_iso(), time.perf_counter()
    database = open_db(db)
    counts = step.score_corpus(database, now=started)
    stats: dict = {"counts": counts}
    click.echo(f"scored {counts['scored']} postings ({counts['scorer']}) · market statistics: "
               f"{counts['market_stats']} rows, {counts['salary_groups']} salary groups with at least 5 salaries · "
               f"{time.perf_counter() - clock:.1f} s")
    if profile:
        for skill in profile.unknown_skills:
            click.echo(f"{profile_file}: skill not in the taxonomy, ignored: {skill}", err=True)
        fit = step.score_profile(database, profile, now=started)
        stats["fit"] = fit
        click.echo(f"{fit['scorer']}: scored {fit['scored']} postings; best fits:")
        for row in step.best_fits(database, fit["scorer"], top=top):
            click.echo(f"  #{row['id']} {row['company']} · {row['title']} · {row['city'] or '城市未明确'}: {row['summary']}")
    if report:
        stats["report"] = step.agreement_report(database, top=top)
        click.echo(step.format_report(stats["report"]))
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
@click.option("--writable", is_flag=True,
              help="Open the database mutable (Datasette sees changes, e.g. a running ingest) instead of immutable.")
def serve(db: str, port: int, host: str, writable: bool) -> None:
    """Browse the database in Datasette: listing, search, facets, posting pages, charts.

    First the only writes: pending migrations, the search index brought level with the postings,
    the write-ahead log checkpointed. Then Datasette opens the file immutable (read-only, counts
    cached) unless --writable, or unless another process is writing it. Start at /jobs/jobs;
    charts at /-/dashboards/market.

    \b
    Example:
      jobcrawl serve --db jobs.db
      jobcrawl serve --db jobs.db --port 8080 --writable
    """
    from crawler.serve import prepare, serve as run_server

    _require_db(db)
    indexed, settled = prepare(db)
    if indexed:
        click.echo(f"search index: {indexed} postings indexed", err=True)
    if not settled and not writable:
        click.echo("another process is writing the database: serving it mutable (as with --writable)", err=True)
        writable = True
    click.echo(f"serving {db} at http://{host}:{port}/jobs/jobs (Ctrl-C to stop)", err=True)
    run_server(db, host=host, port=port, writable=writable, prepared=True)


def _require_db(db: str) -> None:
    if not Path(db).exists():
        raise click.UsageError(f"{db}: no such database (run `jobcrawl ingest` first)")


@main.group()
def sources() -> None:
    """Sources files (what `jobcrawl crawl` fetches): find the job board behind a careers page.

    \b
    Example:
      jobcrawl sources discover https://www.example.com/careers --add sources.toml
    """


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

    from crawler.discover import FetchError, add_entries, entry_toml, unique_name, user_agent
    from crawler.discover import discover as find
    from crawler.sources import SourcesError, load_sources

    for url in urls:
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise click.BadParameter(f"{url}: not an http(s) URL", param_hint="URLS")
    contact = None
    if add_to and Path(add_to).is_file() and Path(add_to).read_text(encoding="utf-8").strip():
        try:
            contact = load_sources(add_to).contact
        except SourcesError as err:
            raise click.UsageError(str(err)) from None
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


if __name__ == "__main__":
    main()
