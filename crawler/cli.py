"""``jobcrawl``: a thin command line over the library. Every command has help and an example."""

from __future__ import annotations

import csv
import json
import sys
from datetime import datetime
from pathlib import Path

import click

def _new_file_path(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """A file to create (or replace): its folder must exist."""
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


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="jobcrawl")
def main() -> None:
    """jobcrawl: job postings → a clean, scored SQLite database you browse in Datasette.

    \b
    Example:
      jobcrawl ingest seeds/ --db jobs.db
      jobcrawl export --db jobs.db --format jsonl --out postings.jsonl
    """
    from crawler.procs import fixed_mmap_threshold

    fixed_mmap_threshold()


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
@click.option("--set", "constants", multiple=True, metavar="FIELD=VALUE",
              help="Give every row this value, e.g. --set company=… when the file has no company (repeatable).")
@click.option("--tz", metavar="ZONE", callback=lambda ctx, param, value: _zone(value),
              help="Time zone of the files' sources (IANA, e.g. Europe/Berlin): their dates are read and their "
                   "times shown in it (stored times stay UTC). Default: Asia/Shanghai for Chinese postings, else UTC.")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 100_000),
              help="Postings written per transaction.")
@click.option("--reparse", is_flag=True,
              help="Parse every input again. Without it a text dump whose bytes, --as-of and parser are those "
                   "of its last complete parse, and whose postings are stored as it gave them, is counted "
                   "as unchanged without being parsed; so are the rows of a table file (or of a block of "
                   "rows of a streamed one) read with the same --format, --preset, --map and --set.")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log (-v info, -vv debug).")
def ingest(paths: tuple[str, ...], db: str, as_of: str | None, fmt: str, preset: str | None,
           mapping: tuple[str, ...], constants: tuple[str, ...], tz: str | None, batch_size: int, reparse: bool,
           verbose: int) -> None:
    """Ingest job-app text dumps and CSV / JSONL exports of other tools through the Scrapy engine.

    PATHS are files, folders (read recursively) or quoted globs. In folders only .txt .text .dump
    .csv .tsv .jsonl .ndjson .json files and files without an extension are read; name other
    files or use a glob. Every file is stored verbatim before it is parsed; bad input is
    quarantined with its reason and the run goes on.

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
             generic     columns named like the fields, or job_title, company_name, link …

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
      jobcrawl ingest jds.txt --format lines --set company=某公司 --set title=算法工程师
    """
    from crawler.inputs import INGEST_SUFFIXES, InputError, resolve_inputs
    from crawler.jobs import run_into_db
    from crawler.lock import LockHeld, db_lock
    from crawler.pages.tabular import format_for
    from crawler.spiders.textdump import TextdumpSpider

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

        from crawler.spiders.tabular import TabularArgs, TabularSpider

        try:
            TabularArgs(inputs=inputs, **table_options)
        except ValidationError as err:
            raise click.UsageError("; ".join(e["msg"].removeprefix("Value error, ") for e in err.errors())) from None
        spidercls = TabularSpider
        spider_kwargs.update(table_options)
        run_args.update(table_options)
    elif preset or mapping or constants:
        raise click.UsageError("--preset, --map and --set apply to csv, jsonl and lines files; "
                               "PATHS hold only text dumps (see --format)")

    show_bar = len(inputs) > 5 and sys.stderr.isatty()
    try:
        with db_lock(db), click.progressbar(length=len(inputs), label="ingesting", file=sys.stderr,
                                            hidden=not show_bar) as bar:
            result = run_into_db(
                spidercls, db, kind="ingest", args=run_args, spider_kwargs=spider_kwargs,
                settings={"LOG_LEVEL": _log_level(verbose), "JOBCRAWL_BATCH_SIZE": batch_size,
                          "JOBCRAWL_REPARSE": reparse, "JOBCRAWL_TZ": tz,
                          "JOBCRAWL_AS_OF_SOURCE": "as_of" if as_of else "file_mtime"},
                on_response=lambda: bar.update(1),
            )
    except LockHeld as err:
        click.echo(f"jobcrawl ingest: {err}", err=True)
        raise SystemExit(4) from None
    for table in result.stats.get("jobcrawl/tables", []):
        click.echo(table["summary"])
    _report(result, db)


def _log_level(verbose: int) -> str:
    return {0: "ERROR", 1: "INFO"}.get(verbose, "DEBUG")


def _report(result, db: str) -> None:
    """Print the run's problems and summary; exit 0 (all stored), 1 (some quarantined or not stored) or 3 (failed)."""
    for line in result.problems:
        click.echo(f"quarantined: {line}", err=True)
    for line in result.stats.get("jobcrawl/repaired", []):
        click.echo(f"repaired: {line}", err=True)
    for line in result.errors:
        click.echo(f"failed: {line}", err=True)
    click.echo(result.summary())
    if "dedupe" in result.steps:
        click.echo(_dedupe_line(result.steps["dedupe"]))
    if "score" in result.steps:
        scored = result.steps["score"]
        click.echo(f"score: {scored.get('scored', 0)} postings scored, {scored.get('unchanged', 0)} unchanged (jobcrawl-v1)")
    click.echo(f"database {db}: {result.total_postings} postings (run {result.run_id})")
    if result.status == "failed":
        raise SystemExit(3)
    raise SystemExit(1 if result.counts["quarantined"] or result.counts["errors"] else 0)


@main.command()
@click.argument("names", nargs=-1)
@click.option("--all", "all_sources", is_flag=True, help="Crawl every enabled source of the file.")
@click.option("--sources", "sources_file", default="sources.toml", show_default=True,
              type=click.Path(dir_okay=False), help="Sources file (TOML; see seeds/sources.toml).")
@DB_OPTION
@click.option("--jobdir", type=click.Path(file_okay=False),
              help="Keep each source's crawl state in DIR/<source>/: a run stopped by Ctrl-C or a signal "
                   "resumes where it stopped when run again. Removed when the source's crawl finishes.")
@click.option("--max-requests", type=click.IntRange(0), metavar="N",
              help="Send at most N requests per source (overrides the file; 0 = no cap; cache hits are free).")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="HTTP cache in <db>.httpcache/: unchanged pages are revalidated (304) instead of downloaded.")
@click.option("-s", "--set", "overrides", multiple=True, metavar="NAME=VALUE",
              help="A Scrapy setting for every source (repeatable), e.g. -s DOWNLOAD_TIMEOUT=10.")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log (-v info, -vv debug).")
def crawl(names: tuple[str, ...], all_sources: bool, sources_file: str, db: str, jobdir: str | None,
          max_requests: int | None, cache: bool, overrides: tuple[str, ...], verbose: int) -> None:
    """Crawl sources of a sources file into the database, all in one process.

    NAMES are source names of the file; --all crawls every enabled one. Each source is one row in
    the runs table (requests, responses by status, postings new/updated/unchanged/closed, errors).
    Postings missing from a complete listing (a whole Greenhouse/Lever/Ashby board) are marked
    closed, never deleted. One run at a time per database: a lock on <db>.lock.

    Exit status: 0 every source crawled cleanly; 1 some input quarantined, some request failed
    or a request cap was reached; 2 usage error (sources file, source name, option); 3 a crawl
    failed or was interrupted (with --jobdir, run it again to resume); 4 another run holds the
    database's lock.

    \b
    Example:
      jobcrawl crawl --all --sources seeds/sources.toml --db jobs.db
      jobcrawl crawl gitlab linear --sources seeds/sources.toml --jobdir .jobdir --max-requests 500
    """
    from crawler.jobs import Job, run_jobs_into_db
    from crawler.lock import LockHeld, db_lock
    from crawler.sources import SourcesError, load_sources

    if bool(names) == all_sources:
        raise click.UsageError("name the sources to crawl, or pass --all (not both)")
    settings = {"LOG_LEVEL": _log_level(verbose), "HTTPCACHE_DIR": str(Path(db).resolve()) + ".httpcache"}
    if not cache:
        settings["HTTPCACHE_ENABLED"] = False
    for pair in overrides:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {pair!r}", param_hint="--set")
        settings[name] = value
    try:
        sources = load_sources(sources_file)
        selected = sources.select(names, all_enabled=all_sources)
    except SourcesError as err:
        raise click.UsageError(str(err)) from None
    if not selected:
        raise click.UsageError(f"{sources_file}: no enabled source")
    jobs = []
    for source in selected:
        own = sources.settings_for(source)
        if max_requests is not None:
            own["JOBCRAWL_MAX_REQUESTS"] = max_requests
        if jobdir:
            own["JOBDIR"] = str(Path(jobdir) / source.name)
        jobs.append(Job(source.spider, "crawl", {"source": source.name, "spider": source.spider, **source.args},
                        source.args, own, source=source.name))
    try:
        with db_lock(db):
            results = run_jobs_into_db(jobs, db, settings=settings)
    except LockHeld as err:
        click.echo(f"jobcrawl crawl: {err}", err=True)
        raise SystemExit(4) from None
    for result in results:
        for line in result.errors:
            click.echo(f"{result.source}: failed: {line}", err=True)
        for line in result.problems:
            click.echo(f"{result.source}: quarantined: {line}", err=True)
        for line in result.stats.get("jobcrawl/repaired", []):
            click.echo(f"{result.source}: repaired: {line}", err=True)
        click.echo(result.crawl_summary())
        if result.status == "interrupted" and jobdir:
            click.echo(f"{result.source}: interrupted; run the same command again to resume from {jobdir}", err=True)
    if "dedupe" in results[-1].steps:
        click.echo(_dedupe_line(results[-1].steps["dedupe"]))
    click.echo(f"database {db}: {results[-1].total_postings} postings")
    statuses = {r.status for r in results}
    raise SystemExit(3 if statuses & {"failed", "interrupted"} else 1 if "partial" in statuses else 0)


def _flat(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value


@main.command()
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True,
              help="JSON lines (nested) or CSV (nested values as JSON text).")
@click.option("--out", default="-", show_default=True, type=click.Path(dir_okay=False, allow_dash=True),
              callback=_new_file_path, help="Output file; - for standard output.")
def export(db: str, fmt: str, out: str) -> None:
    """Export every posting, one record each, with its sections, insights and evaluations.

    \b
    Example:
      jobcrawl export --db jobs.db > postings.jsonl
      jobcrawl export --format csv --out postings.csv
    """
    from crawler.db.read import iter_export
    from crawler.db.schema import open_db

    _require_db(db)
    database = open_db(db)
    stream = click.open_file(out, "w", encoding="utf-8")
    with stream:
        if fmt == "jsonl":
            for record in iter_export(database):
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            writer = None
            for record in iter_export(database):
                if writer is None:
                    writer = csv.DictWriter(stream, fieldnames=list(record), extrasaction="ignore")
                    writer.writeheader()
                writer.writerow({k: _flat(v) for k, v in record.items()})
    database.close()


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
@click.option("--all", "--rebuild", "force", is_flag=True,
              help="Score every active posting again, also those whose inputs have not changed since.")
def score(db: str, report: bool, top: int, profile_file: str | None, force: bool) -> None:
    """Score every active posting: 综合评分 and 薪资福利, 成长发展, 工作生活, 使命价值 with evidence.

    Recomputes the market statistics of the corpus (table market_stats: salary quartiles per
    category and city + category where at least 20 salaries exist, open postings per company and
    city + category), then stores our evaluation of every active posting as scorer jobcrawl-v1:
    scores, levels (信息不足 where the evidence is too little), explanations, signals and the
    evidence of every rule that fired (rules: normalize/score.py). A posting whose inputs (its
    facts, the market figures it uses, the rules' version) have not changed since it was scored is
    not scored again, unless --all. Re-scoring replaces only our own rows; the app's own evaluation
    (scorer source) is never touched. Each run is one row of kind score in the runs table.

    Exit status: 0 done; 2 usage error (no database, bad profile).

    \b
    Example:
      jobcrawl score --db jobs.db
      jobcrawl score --report --top 10
      jobcrawl score --profile seeds/profile.toml
      jobcrawl score --all
    """
    import time

    from crawler.db.schema import open_db
    from crawler.db.writer import utcnow
    from crawler.steps import score as step
    from normalize.fit import ProfileError, load_profile
    from normalize.score import MIN_SAMPLE
    from normalize.skills import load_taxonomy

    _require_db(db)
    profile = None
    if profile_file:
        try:
            profile = load_profile(Path(profile_file).read_text(encoding="utf-8"), load_taxonomy())
        except (ProfileError, UnicodeDecodeError) as err:
            raise click.UsageError(f"{profile_file}: {err}") from None
    started, clock = utcnow(), time.perf_counter()
    database = open_db(db)
    counts = step.score_corpus(database, now=started, force=force)
    stats: dict = {"counts": counts}
    click.echo(f"scored {counts['scored']} postings, {counts['unchanged']} unchanged ({counts['scorer']}) · market "
               f"statistics: {counts['market_stats']} rows, {counts['salary_groups']} salary groups with at least "
               f"{MIN_SAMPLE} salaries · {time.perf_counter() - clock:.1f} s")
    if profile:
        for skill in profile.unknown_skills:
            click.echo(f"{profile_file}: skill not in the taxonomy, ignored: {skill}", err=True)
        fit = step.score_profile(database, profile, now=started, force=force)
        stats["fit"] = fit
        click.echo(f"{fit['scorer']}: scored {fit['scored']} postings, {fit['unchanged']} unchanged; best fits:")
        for row in step.best_fits(database, fit["scorer"], top=top):
            click.echo(f"  #{row['id']} {row['company']} · {row['title']} · {row['city'] or '城市未明确'}: {row['summary']}")
    if report:
        stats["report"] = step.agreement_report(database, top=top)
        click.echo(step.format_report(stats["report"]))
    run_id = step.record_run(database, started=started, stats=stats,
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


if __name__ == "__main__":
    main()
