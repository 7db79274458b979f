"""``jobcrawl track``: the status of the jobs you apply to."""

from __future__ import annotations

import click

from crawler.cli import DB_OPTION, main, require_db, say, say_json
from crawler.suggest import did_you_mean
from crawler.track.store import STATUSES


def _status(value: str | None, hint: str) -> str | None:
    if value is None or value in STATUSES:
        return value
    raise click.BadParameter(f"unknown status {value!r}{did_you_mean(value, list(STATUSES))}; one of "
                             f"{', '.join(STATUSES)}", param_hint=hint)


def _at(value: str | None) -> str:
    """``--at`` as UTC ISO text (a date or a datetime without an offset is local time); now when not given."""
    from normalize.clock import iso_utc, now_iso
    from normalize.dates import parse_as_of

    if value is None:
        return now_iso()
    try:
        return iso_utc(parse_as_of(value, None))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO date or datetime (e.g. 2026-12-02, 2026-12-02T09:30+08:00)",
                                 param_hint="--at") from None


def _job(row: dict) -> str:
    return " · ".join(str(row[k]) for k in ("title", "company", "city") if row.get(k))


def _when(at: str) -> str:
    return at[:16].replace("T", " ")


@main.command()
@click.argument("ref", metavar="[ID]", required=False)
@click.argument("status", metavar="[STATUS]", required=False)
@click.option("--note", metavar="TEXT", help="A note kept with this change (sent CV, recruiter's name …).")
@click.option("--at", metavar="DATE", help="When the status changed (ISO date or datetime; without an offset: local "
                                           "time). Default: now.")
@click.option("--list", "listing", is_flag=True, help="List the tracked jobs instead, newest change first.")
@click.option("--status", "only", metavar="STATUS", help="With --list: only jobs with this status.")
@click.option("--json", "as_json", is_flag=True,
              help="With --list: one JSON object a line (id, title, company, city, status, since, notes, url).")
@DB_OPTION
def track(ref: str | None, status: str | None, note: str | None, at: str | None, listing: bool, only: str | None,
          as_json: bool, db: str) -> None:
    """Track an application: set the status of posting ID's job, or list the tracked jobs.

    STATUS is one of saved, applied, interviewing, offer, accepted, rejected, withdrawn. A status
    belongs to the job, not to one copy: set on any posting of a duplicate cluster it shows on every
    member, and it survives re-ingest, crawls, reparse, dedupe --rebuild, closing and reopening.
    Every change is kept (with its note) and shown by `jobcrawl history ID`; the job's status is
    its latest change, "since" when it has had it. --list shows one line per job (the posting
    you last tracked of it), newest change first. Watches skip tracked postings (see `watch add --include-tracked`);
    the export carries application_status and application_since.

    ID is a posting's id (or its URL). Exit status: 0 done; 2 usage error (no such posting, an
    unknown status or date); 3 the database cannot be written.

    \b
    Example:
      jobcrawl track 17 applied --note "sent CV"
      jobcrawl track 17 interviewing --at 2026-12-04
      jobcrawl track --list
      jobcrawl track --list --status interviewing --json
    """
    from crawler.store.history import resolve
    from crawler.store.schema import open_db
    from crawler.track import store

    if listing:
        if ref is not None or note is not None or at is not None:
            raise click.UsageError("--list takes no ID, STATUS, --note or --at")
        only = _status(only, "--status")
        require_db(db)
        database = open_db(db, readonly=True)
        try:
            jobs = store.tracked_jobs(database.conn, only)
        finally:
            database.close()
        for job in jobs:
            if as_json:
                say_json({k: job[k] for k in ("id", "title", "company", "city", "status", "since", "notes", "url")})
            else:
                notes = " / ".join((job["notes"] or "").splitlines())
                say(f"#{job['id']} {job['status']} since {_when(job['since'])} · {_job(job)}"
                    + (f" — {notes}" if notes else ""))
        if not jobs and not as_json:
            click.echo(f"no tracked jobs{f' with status {only}' if only else ''} (jobcrawl track ID applied)")
        return
    if only is not None or as_json:
        raise click.UsageError("--status and --json go with --list")
    if ref is None or status is None:
        raise click.UsageError("give ID and STATUS (jobcrawl track 17 applied), or --list")
    status = _status(status, "STATUS")
    when = _at(at)
    if note and len(note) > store.NOTE_CHARS:
        raise click.BadParameter(f"{len(note):,} characters long, the limit is {store.NOTE_CHARS:,}",
                                 param_hint="--note")
    require_db(db)
    database = open_db(db)
    try:
        posting_id = resolve(database.conn, ref)
        if posting_id is None:
            raise click.BadParameter(f"no posting with id {ref!r} (jobcrawl export or the listing shows ids)",
                                     param_hint="ID")
        found = store.posting(database.conn, posting_id)
        store.add_event(database.conn, posting_id, status, note or None, when)
        now = store.application(database.conn, posting_id)
    finally:
        database.close()
    line = f"#{posting_id} {_job(found)}: {status} at {_when(when)}" + (f" — {note}" if note else "")
    if now["status"] != status or now["updated"] != when:
        line += f"; the job stays {now['status']} since {_when(now['since'])} (a later change)"
    say(line)
