"""``jobcrawl ingest``, ``reparse`` and ``retag``: files and stored inputs into the database."""

from __future__ import annotations

import sys

import click

from crawler.cli import (
    DB_OPTION, WORKERS_OPTION, ByteSize, alert_lines, calling, dedupe_line, main, require_db, run_output,
    run_settings, say, say_json, setting_pairs, taxonomy_option)


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


@main.command()
@click.argument("paths", nargs=-1, required=True)
@DB_OPTION
@click.option("--as-of", "as_of", metavar="ISO-DATETIME",
              help="The run's time: the postings' first_seen and last_seen, the time --complete closes "
                   "postings at, and the anchor for relative times (发布于 4 小时前, 90天前更新, 09-03发布). "
                   "Default: each file's modification time (now for closing). Without an offset it means local time.")
@click.option("--source", metavar="NAME",
              help="The source of the files' postings (default textdump / tabular), e.g. greenhouse-acme: snapshots "
                   "of one board are one source whatever their file names. Its runs go forward in time: an "
                   "--as-of earlier than its latest run is refused (exit 2).")
@click.option("--complete", is_flag=True,
              help="The files together are the complete listing of --source: its postings missing from them are "
                   "closed at the run's time, and reopen when a later listing has them again. A file or row that "
                   "is quarantined makes the listing incomplete: it then closes nothing.")
@click.option("--rebuild", is_flag=True,
              help="Replay --source from scratch: its earlier runs no longer order this one (an earlier --as-of is "
                   "accepted) and its listing's postings count as not seen yet; each starts its timeline "
                   "(first_seen, last_seen) at the first snapshot that has it from here on, those missing are "
                   "closed. Postings, versions and everything else stay.")
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
@run_output
def ingest(paths: tuple[str, ...], db: str, as_of: str | None, fmt: str, preset: str | None,
           mapping: tuple[str, ...], constants: tuple[str, ...], tz: str | None,
           source: str | None, complete: bool, rebuild: bool,
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

    Snapshots: saved listings of one board, ingested in time order with --source NAME --complete
    --as-of TIME, make its timeline: when each posting was first and last seen, when it closed
    and reopened (jobcrawl replay does it for every version of a file in a git repository).

    Exit status: 0 when everything was ingested, 1 when some input was quarantined,
    2 for usage errors (no such path, bad --as-of, unknown preset or field, an --as-of earlier
    than the latest run of --source), 3 when the run
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
      jobcrawl ingest acme-2026-11-02.json --source acme --complete --as-of 2026-11-02T06:00:00Z
    """
    from crawler import api
    from crawler.run.progress import make_progress

    with calling("ingest"):
        job, options = api.ingest_job(paths, db, as_of=as_of, fmt=fmt, preset=preset, mapping=mapping,
                                      constants=constants, tz=tz, batch_size=batch_size, reparse=reparse,
                                      max_file_size=max_file_size, source=source, complete=complete,
                                      rebuild=rebuild)
        settings = {**run_settings(verbose), **options, **setting_pairs(scrapy_settings, "-s")}
        progress = make_progress(sys.stderr, quiet=quiet, noun="files")
        try:
            [result] = api.run([job], db, workers=workers, settings=settings, progress=progress)
        finally:
            progress.close()
    _report(result, db, quiet=quiet, as_json=as_json)


def _report(result, db: str, *, quiet: bool = False, as_json: bool = False) -> None:
    """Print the run's problems (stderr) and its summary, or its report as JSON (stdout); exit 0 (all stored),
    1 (some quarantined or not stored) or 3 (failed)."""
    from crawler.report import capped, table_lines

    for line in (capped("quarantined", result.problems)
                 + capped("repaired", result.crawl.repaired + [r for t in result.crawl.tables for r in t["repaired"]])
                 + capped("failed", result.errors)):
        say(line, err=True)
    if as_json:
        say_json(result.as_dict(), default=str)
    elif not quiet:
        for line in table_lines(result.crawl.tables):
            say(line)
        click.echo(result.summary())
        if "dedupe" in result.steps:
            click.echo(dedupe_line(result.steps["dedupe"]))
        if "score" in result.steps and not result.steps["score"].get("skipped"):
            scored = result.steps["score"]
            click.echo(f"score: {scored.get('scored', 0)} postings scored, {scored.get('unchanged', 0)} unchanged "
                       "(jobcrawl-v1)")
        alert_lines(result)
        click.echo(f"database {db}: {result.total_postings} postings (run {result.run_id})")
    if result.status == "failed":
        raise SystemExit(3)
    raise SystemExit(1 if result.counts["quarantined"] or result.counts["errors"] else 0)


@main.command()
@DB_OPTION
@click.option("--source", "sources", multiple=True, metavar="NAME",
              help="Only raw inputs of this source (textdump, tabular, greenhouse, lever, ashby, jsonld …; repeatable).")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log with tracebacks (-v info, -vv debug).")
@run_output
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
    from crawler import api
    from crawler.run.progress import make_progress

    require_db(db)
    progress = make_progress(sys.stderr, quiet=quiet, noun="inputs")
    try:
        with calling("reparse"):
            result = api.reparse(db, sources=sources, settings=run_settings(verbose), progress=progress)
    finally:
        progress.close()
    _report(result, db, quiet=quiet, as_json=as_json)


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

    require_db(db)
    tax = taxonomy_option(taxonomy)
    database = open_db(db)
    counts = run_retag(database, tax)
    database.close()
    click.echo(f"retagged {counts['postings']} postings · skills changed in {counts['changed']} · "
               f"{counts['rows']} evidence rows · taxonomy {tax.version} ({len(tax.skills)} skills)")
