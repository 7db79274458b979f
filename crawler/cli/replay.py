"""``jobcrawl replay``: every committed version of a file in a git repository, ingested in commit order."""

from __future__ import annotations

import sys

import click

from crawler.cli import (DB_OPTION, WORKERS_OPTION, ByteSize, alert_lines, calling, main, run_output, run_settings, say,
                         say_json)


@main.command()
@click.argument("git_dir", metavar="GIT_DIR")
@click.argument("file", metavar="FILE")
@DB_OPTION
@click.option("--source", metavar="NAME",
              help="The source of the file's postings (as ingest --source). Default: the repository folder's "
                   "name and FILE, e.g. boards/acme.json.")
@click.option("--rev", default="HEAD", show_default=True, metavar="REV",
              help="Replay the history reachable from this revision (a branch, tag or commit).")
@click.option("--format", "fmt", type=click.Choice(["auto", "text", "csv", "jsonl", "lines"]), default="auto",
              show_default=True, help="How to read the file (as ingest --format; auto picks by FILE's suffix).")
@click.option("--preset", metavar="NAME", help="Column layout of a csv or jsonl file (as ingest --preset).")
@click.option("--rebuild", is_flag=True,
              help="Replay the whole history again from scratch (as ingest --rebuild): without it, versions "
                   "replayed before are skipped, so a second replay ingests only the new commits.")
@click.option("--max-file-size", default="256M", show_default=True, type=ByteSize(), metavar="SIZE",
              help="Read no version larger than SIZE: it is skipped with a problem line.")
@WORKERS_OPTION
@click.option("-v", "--verbose", count=True, help="Show Scrapy's log with tracebacks (-v info, -vv debug).")
@run_output
def replay(git_dir: str, file: str, db: str, source: str | None, rev: str, fmt: str, preset: str | None,
           rebuild: bool, max_file_size: int, workers: int | None, verbose: int, quiet: bool, as_json: bool) -> None:
    """Ingest each committed version of FILE in the git repository GIT_DIR, oldest first, at its
    commit time, as the complete listing of its source ("git scraping" histories of a board).

    Each version is one ingest run, as `jobcrawl ingest FILE --source NAME --complete --as-of
    <committer date>` would make it: a posting's first_seen and last_seen are the commit times it
    first and last appeared at, it is closed at the first commit that lacks it and reopens when it
    comes back. FILE is a path relative to the repository's top; GIT_DIR its work tree or .git
    folder. Versions replayed into the source before are skipped (run it again after new commits);
    a version with the same bytes as the one before it is not parsed (its open postings are seen
    again at its time), nor is a row as it was stored before; a commit that deleted FILE is skipped.
    The watches' alerts run once, after the last version: their new matches among the postings
    open at the end. Progress counts versions on stderr.

    Exit status: 0 done; 1 some version was skipped (too large, its commit date before the
    source's latest run) or had quarantined rows; 2 usage error (no such folder, repository,
    revision or path); 3 a run failed; 4 another run holds the database's lock.

    \b
    Example:
      jobcrawl replay ~/src/board-history jobs/acme.json --db jobs.db --source acme
      jobcrawl replay ~/src/board-history jobs/acme.json --db jobs.db --source acme --rebuild
      jobcrawl replay . listings.csv --preset zh-board --rev main
    """
    from crawler.replay.git import GitError
    from crawler.replay.run import replay as run_replay
    from crawler.run.progress import make_progress

    progress = make_progress(sys.stderr, quiet=quiet or as_json, noun="versions")
    try:
        with calling("replay"):
            done = run_replay(git_dir, file, db, source=source, rev=rev, fmt=fmt, preset=preset, rebuild=rebuild,
                              max_file_size=max_file_size, workers=workers, settings=run_settings(verbose),
                              progress=progress)
    except GitError as err:
        click.echo(f"jobcrawl replay: {err}", err=True)
        raise SystemExit(2) from None
    finally:
        progress.close()
    for line in done.problems:
        say(f"problem: {line}", err=True)
    if as_json:
        say_json(done.as_dict())
    elif not quiet:
        for line in summary_lines(done, file):
            say(line)
        alert_lines(done)
    raise SystemExit(3 if done.failed else 1 if done.problems else 0)


def summary_lines(done, file: str) -> list[str]:
    """The lines that end a replay: what it read, what it stored, what it skipped."""
    span = ""
    if done.first is not None:
        span = (f" ({done.first.commit[:7]} {done.first.time} → {done.last.commit[:7]} {done.last.time})"
                if done.last.commit != done.first.commit else f" ({done.first.commit[:7]} {done.first.time})")
    counts = " · ".join(f"{key} {done.counts.get(key, 0):,}" for key in
                        ("new", "updated", "unchanged", "closed", "reopened", "quarantined"))
    skipped = [f"{n} {what}" for n, what in ((done.done, "replayed before"), (done.unchanged, "same as the version "
               "before, not parsed"), (done.deleted, "deleted"), (done.skipped, "skipped")) if n]
    return [f"replayed {done.ingested + done.unchanged} of {done.versions} versions of {file} into source "
            f"{done.source}{span}",
            f"postings: {counts}" + (f" · versions: {', '.join(skipped)}" if skipped else "")]
