"""``jobcrawl``: a thin command line over the library. Every command has help and an example."""

from __future__ import annotations

import csv
import json
import sys
from datetime import datetime
from pathlib import Path

import click

DB_OPTION = click.option(
    "--db", default="jobs.db", show_default=True, type=click.Path(dir_okay=False), help="SQLite database file."
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
              help="Anchor for relative times (发布于 4 小时前). Default: each file's modification time. "
                   "Without an offset it means local time.")
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 100_000),
              help="Postings written per transaction.")
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log (-v info, -vv debug).")
def ingest(paths: tuple[str, ...], db: str, as_of: str | None, batch_size: int, verbose: int) -> None:
    """Ingest job-app text dumps into the database through the Scrapy engine.

    PATHS are files, folders (read recursively) or quoted globs. Every file is stored verbatim
    before it is parsed; bad input is quarantined with its reason and the run goes on.

    Exit status: 0 when everything was ingested, 1 when some input was quarantined,
    2 for usage errors (no such path, bad --as-of).

    \b
    Example:
      jobcrawl ingest seeds/
      jobcrawl ingest 'exports/**/*.txt' --db jobs.db --as-of 2026-11-29T12:00:00+08:00
    """
    from crawler.db.runs import finish_run, start_run
    from crawler.db.schema import open_db
    from crawler.inputs import InputError, resolve_inputs
    from crawler.run import run_spider
    from crawler.spiders.textdump import TextdumpSpider

    anchor = _parse_as_of(as_of)
    try:
        inputs = resolve_inputs(list(paths), exclude=[db + suffix for suffix in ("", "-wal", "-shm", "-journal")])
    except InputError as err:
        raise click.UsageError(str(err)) from None

    database = open_db(db)
    run_id = start_run(database, "ingest", {"paths": list(paths), "as_of": as_of})
    database.close()

    log_level = {0: "ERROR", 1: "INFO"}.get(verbose, "DEBUG")
    overrides = {"JOBCRAWL_DB": db, "JOBCRAWL_RUN_ID": run_id, "LOG_LEVEL": log_level, "JOBCRAWL_BATCH_SIZE": batch_size}
    show_bar = len(inputs) > 5 and sys.stderr.isatty()
    with click.progressbar(length=len(inputs), label="ingesting", file=sys.stderr,
                           hidden=not show_bar) as bar:
        stats = run_spider(TextdumpSpider, overrides, on_response=lambda: bar.update(1),
                           inputs=inputs, as_of=anchor)

    counts = {
        "files": stats.get("jobcrawl/files", 0),
        "found": stats.get("jobcrawl/postings_found", 0),
        "new": stats.get("jobcrawl/new", 0),
        "updated": stats.get("jobcrawl/updated", 0),
        "unchanged": stats.get("jobcrawl/unchanged", 0),
        "quarantined": stats.get("jobcrawl/quarantined", 0),
    }
    problems = stats.get("jobcrawl/quarantine_log", [])
    status = "partial" if counts["quarantined"] else "ok"
    if stats.get("finish_reason") not in (None, "finished"):
        status = "failed"
    database = open_db(db)
    finish_run(database, run_id, counts, status=status,
               stats={k: v for k, v in stats.items() if k.startswith("jobcrawl/") and k != "jobcrawl/quarantine_log"})
    total = database["postings"].count
    database.close()

    for line in problems:
        click.echo(f"quarantined: {line}", err=True)
    click.echo(
        f"files read {counts['files']} · postings found {counts['found']} · new {counts['new']} · "
        f"updated {counts['updated']} · unchanged {counts['unchanged']} · quarantined {counts['quarantined']}"
    )
    click.echo(f"database {db}: {total} postings (run {run_id})")
    if status == "failed":
        raise SystemExit(3)
    raise SystemExit(1 if counts["quarantined"] else 0)


def _flat(value):
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value


@main.command()
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl", show_default=True,
              help="JSON lines (nested) or CSV (nested values as JSON text).")
@click.option("--out", default="-", show_default=True, type=click.Path(dir_okay=False, allow_dash=True),
              help="Output file; - for standard output.")
def export(db: str, fmt: str, out: str) -> None:
    """Export every posting, one record each, with its sections, insights and evaluations.

    \b
    Example:
      jobcrawl export --db jobs.db > postings.jsonl
      jobcrawl export --format csv --out postings.csv
    """
    from crawler.db.read import iter_export
    from crawler.db.schema import open_db

    if not Path(db).exists():
        raise click.UsageError(f"{db}: no such database (run `jobcrawl ingest` first)")
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


if __name__ == "__main__":
    main()
