"""``jobcrawl dedupe``, ``signals``, ``score``, ``export`` and ``history``: the stored corpus."""

from __future__ import annotations


import click

from crawler.cli import DB_OPTION, calling, check_search, dedupe_line, main, new_file_path, require_db, say, say_json
from crawler.suggest import did_you_mean


def _parse_since(value: str | None, hint: str) -> str | None:
    """An ISO date or datetime option as UTC ISO text (the form stored times have)."""
    from normalize.dates import parse_as_of

    if value is None:
        return None
    try:
        return parse_as_of(value, None).isoformat()
    except ValueError as err:
        raise click.BadParameter(str(err).replace("--as-of", hint), param_hint=hint) from None


@main.command()
@DB_OPTION
@click.option("--rebuild", is_flag=True, help="Forget stored signatures and clusters; recompute from the postings.")
def dedupe(db: str, rebuild: bool) -> None:
    """Cluster duplicate postings: reposts, cross-site copies, agency copies (never deleted).

    Runs incrementally at the end of every ingest and crawl; run it by hand after changing the
    dedupe rules, with --rebuild. The weekly hiring velocity (jobcrawl stats velocity), which
    counts each cluster once, is computed again after it.

    \b
    Example:
      jobcrawl dedupe --db jobs.db
      jobcrawl dedupe --rebuild
    """
    from crawler.store.schema import open_db
    from crawler.dedupe.step import dedupe as run_dedupe
    from crawler.market.velocity import refresh

    require_db(db)
    database = open_db(db)
    counts = run_dedupe(database, rebuild=rebuild)
    refresh(database.conn)  # the weekly velocity counts each cluster once
    database.close()
    click.echo(dedupe_line(counts))


@main.command()
@DB_OPTION
def signals(db: str) -> None:
    """Find ghost signals and the employers behind agency and hidden postings (nothing is hidden).

    Runs after every ingest and crawl; run it by hand after editing your agency words. Each
    canonical posting gets its ghost signals: open_long (open and unchanged for 60 days), reposted
    (3 postings of the job under new ids within 90 days), reopened (closed and back), mass_agency
    (the same JD from 3 agencies). "Now" is the newest last_seen of the database. An agency's
    (猎头, 人力资源, 外包, 派遣 and your words) or hidden posting gets the company of a direct posting
    of the same job: in its duplicate cluster, or in its city with a JD similarity of at least 0.6.
    Your agency words: the file $JOBCRAWL_AGENCIES, else ~/.config/jobcrawl/agencies.txt
    ($XDG_CONFIG_HOME), one word a line, # comments. Rules and thresholds: normalize/ghost.py;
    see docs/ghost.md.

    Exit status: 0 done; 2 usage error (no database, an agency file that cannot be read); 4 another
    run holds the database.

    \b
    Example:
      jobcrawl signals --db jobs.db
      JOBCRAWL_AGENCIES=agencies.txt jobcrawl signals
    """
    from crawler.files import ConfigFileError
    from crawler.run.lock import db_lock
    from crawler.signals.step import agency_words, refresh_signals
    from crawler.store.schema import open_db
    from normalize.ghost import CODES

    require_db(db)
    try:
        words = agency_words()
    except ConfigFileError as err:
        raise click.UsageError(str(err)) from None
    with calling("signals"), db_lock(db):
        database = open_db(db)
        try:
            counts = refresh_signals(database, words=words)
        finally:
            database.close()
    ghosts = " · ".join(f"{code} {counts[f'ghost_{code}']}" for code in CODES)
    click.echo(f"ghost signals: {ghosts} · likely employers: {counts['likely_employers']}")


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
    fired (rules: normalize/score/); its explanations and signals are rendered from them when
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
    from crawler import api
    from crawler.score.step import report_lines
    from normalize.score import MIN_SAMPLE

    require_db(db)
    with calling("score"):
        done = api.score(db, force=force, profile=profile_file, report=report, top=top)
    if done.counts is None:
        for line in report_lines(done.report):
            say(line)
        click.echo(f"{db} {done.readonly}: reported the stored scores without scoring again or storing the report",
                   err=True)
        return
    counts = done.counts
    click.echo(f"scored {counts['scored']} postings, {counts['unchanged']} unchanged ({counts['scorer']}) · market "
               f"statistics: {counts['market_stats']} rows, {counts['salary_groups']} salary groups with at least "
               f"{MIN_SAMPLE} salaries · {done.seconds:.1f} s")
    if done.fit:
        for skill in done.unknown_skills:
            click.echo(f"{profile_file}: skill not in the taxonomy, ignored: {skill}", err=True)
        fit = done.fit
        click.echo(f"{fit['scorer']}: scored {fit['scored']} postings, {fit['unchanged']} unchanged, "
                   f"{fit['blocked']} blocked; best fits:")
        for row in done.best_fits:
            say(f"  #{row['id']} {row['company']} · {row['title']} · {row['city'] or '城市未明确'}: {row['summary']}")
    if report:
        for line in report_lines(done.report):
            say(line)
        click.echo(f"report stored in runs #{done.run_id} (stats)")


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
              callback=new_file_path,
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
    check_search(search)
    where, params = export_filter(open_only=open_only, since=_export_since(since), min_score=min_score,
                                  search=search, sources=sources)
    require_db(db)
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
@click.argument("ref", metavar="URL|ID")
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON instead of lines.")
def history(ref: str, db: str, as_json: bool) -> None:
    """What changed in a posting, version by version: salary 40–60K → 45–65K, bullets added and
    removed, closed and reopened; and, in time order among them, every status change of its job's
    application (jobcrawl track, on this posting or another member of its duplicate cluster) with its note.

    \b
    Example:
      jobcrawl history 17
      jobcrawl history https://boards.greenhouse.io/gitlab/jobs/123 --db jobs.db
    """
    from dataclasses import asdict

    from crawler.store.history import resolve, versions
    from crawler.store.schema import open_db
    from crawler.track.store import job_events
    from normalize.history import format_history, history as build

    require_db(db)
    database = open_db(db, readonly=True)
    try:
        posting_id = resolve(database.conn, ref)
        if posting_id is None:
            raise click.UsageError(f"no posting with id or URL {ref!r}")
        found, events = versions(database, posting_id)
        applications = [(at, status, note) for at, status, note, _ in job_events(database.conn, posting_id)]
    finally:
        database.close()
    steps = build(found, events, applications)
    current = found[-1].record
    if as_json:
        say_json({"id": posting_id, "steps": [asdict(s) for s in steps]}, indent=1)
        return
    say(f"#{posting_id} {current.get('title')} · {current.get('company')} · {current.get('city') or ''}"
         f" — {len(found)} version{'s' if len(found) != 1 else ''}")
    for line in format_history(steps):
        say(line)
