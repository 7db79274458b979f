"""The library API: what the command line, the tests and the benchmarks call to run jobcrawl.

- :func:`ingest` files, :func:`crawl` sources, :func:`reparse` stored raw inputs: each a run into a database
  (crawler/run/runner.py), returning its :class:`~crawler.report.RunReport`; :func:`ingest_job` checks an ingest's
  options and chooses its spider without running it, :func:`run` runs such jobs.
- :func:`refresh` the corpus steps a run ends with, in order: :data:`REFRESH_STEPS`.
- :func:`score` what ``jobcrawl score`` does: scores, a profile's fit, the agreement report.

A run holds the database's lock (crawler/run/lock.py: :class:`~crawler.run.lock.LockHeld` when another run has
it). Bad options raise :class:`UsageError`; the functions print nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from crawler.files import MAX_FILE_BYTES
from crawler.report import RunReport
from crawler.run.progress import Progress

REFRESH_STEPS = ("dedupe", "score", "signals", "velocity", "alerts")
"""The corpus steps after the writer, in the order :func:`refresh` runs them."""


class UsageError(ValueError):
    """An option the API cannot run with; ``option`` names it (a command-line flag) when one is to blame."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.option = option


class OutOfOrder(ValueError):
    """An ingest of a named source whose time is earlier than the source's latest run (one line: why)."""


def ingest(paths: Iterable[str], db: str, *, workers: int | None = None, settings: dict[str, Any] | None = None,
           progress: Progress | None = None, **options: Any) -> RunReport:
    """Ingest files (text dumps of the job app, csv / jsonl / lines tables) into ``db``, then run the
    corpus steps of :func:`refresh` (skipped when no posting changed).

    ``paths``: files, folders or globs; ``options``: those of :func:`ingest_job`; ``workers``: processes (default:
    the number of cores); ``settings``: more Scrapy or jobcrawl settings (over the options).

    >>> report = ingest(["seeds"], "jobs.db", as_of="2026-11-29T12:00:00+08:00")
    >>> report.counts["new"], report.status
    (2, 'ok')
    """
    job, own = ingest_job(paths, db, **options)
    return run([job], db, workers=workers, settings={**own, **(settings or {})}, progress=progress)[0]


def ingest_job(paths: Iterable[str], db: str, *, as_of: str | None = None, fmt: str = "auto",
               preset: str | None = None, mapping: Iterable[str] = (), constants: Iterable[str] = (),
               tz: str | None = None, batch_size: int = 500, reparse: bool = False,
               max_file_size: int = MAX_FILE_BYTES, source: str | None = None, complete: bool = False,
               rebuild: bool = False) -> tuple[Any, dict[str, Any]]:
    """The checked job of an :func:`ingest` (its spider chosen by the files' formats) and the settings its options
    make, not run yet. ``as_of``: the run's time — first_seen, last_seen, closing — and the anchor of relative
    times (default: each file's mtime, and now for closing); ``fmt``, ``preset``, ``mapping`` (``FIELD=COLUMN``),
    ``constants`` (``FIELD=VALUE``): how tables are read; ``reparse``: parse unchanged inputs too.

    ``source`` names the source of the files' postings (default textdump / tabular); its runs are ordered
    (:func:`run` refuses one earlier than the latest with :class:`OutOfOrder`). ``complete``: the files together
    are the complete listing of ``source``, whose postings missing from them close at the run's time and reopen
    when they come back. ``rebuild``: the source's runs and listing are forgotten first (crawler.store.closing.
    restart_listing), so an earlier time is accepted and the snapshots that follow make its timeline again.

    >>> job, settings = ingest_job(["seeds"], "jobs.db", batch_size=100)
    >>> job.spidercls.name, settings["JOBCRAWL_BATCH_SIZE"]
    ('textdump', 100)
    """
    from crawler.files import INGEST_SUFFIXES, InputError, resolve_inputs
    from crawler.ingest.table import format_for
    from crawler.ingest.textdump import TextdumpSpider
    from crawler.run.runner import Job

    paths, mapping, constants = list(paths), list(mapping), list(constants)
    anchor = _as_of(as_of)
    source = source_name(source, complete=complete, rebuild=rebuild)
    try:
        inputs = resolve_inputs(paths, suffixes=INGEST_SUFFIXES,
                                exclude=[db + suffix for suffix in ("", "-wal", "-shm", "-journal")])
    except InputError as err:
        raise UsageError(str(err)) from None

    spidercls, spider_kwargs = TextdumpSpider, {"inputs": inputs, "as_of": anchor}
    run_args: dict = {"paths": paths, "as_of": as_of}
    if source:
        from normalize.clock import iso_utc, now_iso

        spider_kwargs.update(source=source, listing=f"ingest:{source}" if complete else None)
        run_args.update(source=source, complete=complete, rebuild=rebuild,
                        time=iso_utc(anchor) if anchor else now_iso())
    table_options = {"format": fmt, "preset": preset, "mapping": mapping, "constants": constants}
    if any(format_for(inp.path, fmt) != "text" for inp in inputs):
        from pydantic import ValidationError

        from crawler.ingest.tabular import TabularArgs, TabularSpider

        try:
            checked = TabularArgs(inputs=inputs, **table_options)
        except ValidationError as err:
            raise UsageError("; ".join(e["msg"].removeprefix("Value error, ") for e in err.errors())) from None
        _check_mapped_columns(checked.mapping, inputs, fmt)
        spidercls = TabularSpider
        spider_kwargs.update(table_options)
        run_args.update(table_options)
    elif preset or mapping or constants:
        raise UsageError("--preset, --map and --value apply to csv, jsonl and lines files; "
                         "PATHS hold only text dumps (see --format)")

    return Job(spidercls, "ingest", run_args, spider_kwargs, source=source), {
        "JOBCRAWL_BATCH_SIZE": batch_size, "JOBCRAWL_REPARSE": reparse, "JOBCRAWL_MAX_FILE_SIZE": max_file_size,
        "JOBCRAWL_TZ": tz, "JOBCRAWL_AS_OF_SOURCE": "as_of" if as_of else "file_mtime"}


def _as_of(value: str | None):
    from normalize.dates import parse_as_of

    if value is None:
        return None
    try:
        return parse_as_of(value, None)
    except ValueError as err:
        raise UsageError(str(err), "--as-of") from None


SOURCE_NAME = r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}"
"""A source named by ``--source``: letters, digits and ``._:/@+-``, at most 100 characters."""


def source_name(source: str | None, *, complete: bool, rebuild: bool) -> str | None:
    """``--source`` checked (None when not given); ``--complete`` and ``--rebuild`` need it. Raises
    :class:`UsageError`."""
    import re

    if source is None:
        if complete or rebuild:
            raise UsageError(f"{'--complete' if complete else '--rebuild'} needs --source NAME (the source whose "
                             "listing the files are)")
        return None
    if not re.fullmatch(SOURCE_NAME, source):
        raise UsageError(f"{source!r} is not a source name (letters, digits and ._:/@+-, e.g. greenhouse-acme)",
                         "--source")
    if source in ("textdump", "tabular"):
        raise UsageError(f"{source} is the source of files without --source: name the board (e.g. greenhouse-acme)",
                         "--source")
    return source


def check_order(db: str, jobs: list) -> None:
    """Raise :class:`OutOfOrder` for an ingest job of a named source whose time is earlier than the latest run
    of that source (since its last rebuild); a rebuild may go back."""
    from crawler.store.runs import latest_source_time

    for job in jobs:
        args = job.args
        if job.kind != "ingest" or not args.get("source") or args.get("rebuild"):
            continue
        latest = latest_source_time(db, args["source"])
        if latest is not None and args["time"] < latest:
            given = "--as-of" if args.get("as_of") else "now,"
            raise OutOfOrder(f"{given} {args['time']} is earlier than the latest run of source "
                             f"{args['source']!r} ({latest}): its runs go forward in time (--rebuild replays it "
                             "from scratch)")


def _check_mapped_columns(mapping: dict[str, str], inputs: list, fmt: str) -> None:
    """A ``--map`` naming a column that no csv or jsonl file of the ingest has is a usage error naming the
    columns there are, with the closest one (a column some files lack is their own problem: quarantined)."""
    from crawler.ingest.table import format_for, missing_columns, table_columns
    from crawler.suggest import did_you_mean

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
        raise UsageError(f"{name}={spec}: no file has a column {part!r}{did_you_mean(part, every)}; "
                         f"columns of {shown}{more}", "--map")


def crawl(names: Iterable[str], db: str, *, all_sources: bool = False, sources_file: str | None = None,
          jobdir: str | None = None, max_requests: int | None = None, settings: dict[str, Any] | None = None,
          workers: int | None = None, redis_url: str | None = None, store: bool = True, prefix: str = "jobcrawl",
          stall_timeout: float = 300, say: Callable[[str], None] | None = None,
          progress: Progress | None = None) -> list[RunReport]:
    """Crawl the named sources (or ``all_sources`` enabled ones) of a sources file into ``db``, then refresh
    it as :func:`ingest` does.

    ``sources_file``: default $JOBCRAWL_SOURCES, else ./sources.toml. Each source has its HTTP cache in
    ``<db>.httpcache/<source>/`` and, with ``jobdir``, its resumable state in ``jobdir/<source>/``. With
    ``redis_url`` the crawl is distributed (crawler/distributed/coordinator.py; ``say`` hears its lines) and
    may raise RedisUnreachable, StoreFailed or ClusterBusy. One report per source, in the file's order.

    >>> [r.status for r in crawl(["gitlab"], "jobs.db", sources_file="seeds/sources.toml")]
    ['ok']
    """
    from crawler.run.runner import Job
    from crawler.web.killsafe import cache_root as cache_root_of
    from crawler.web.sources import SourcesError, load_sources, locate_sources

    cache_root = cache_root_of(db)
    try:
        path = locate_sources(sources_file, dict(os.environ), Path.cwd())
        sources = load_sources(path)
        selected = sources.select(tuple(names), all_enabled=all_sources)
    except SourcesError as err:
        raise UsageError(str(err)) from None
    if not selected:
        raise UsageError(f"{path}: no enabled source")
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
        raise UsageError("--jobdir and --workers are for local crawls (the queue of --redis is in Redis)")
    if not redis_url:
        return run(jobs, db, workers=workers, settings=settings, progress=progress)

    from crawler.distributed.cluster import connect
    from crawler.distributed.coordinator import run_distributed
    from crawler.run.lock import db_lock

    with db_lock(db):  # Redis is checked before the database is touched
        connect(redis_url).close()
        return run_distributed(jobs, db, redis_url, prefix=prefix, store=store, settings=settings or {},
                               say=say or (lambda line: None), stall_timeout=stall_timeout)


def reparse(db: str, *, sources: Iterable[str] = (), settings: dict[str, Any] | None = None,
            progress: Progress | None = None) -> RunReport:
    """Parse the raw inputs stored in ``db`` (all, or those of ``sources``) again with today's parsers, then
    refresh it as :func:`ingest` does. ``db`` must exist; a source with no raw input stored is a :class:`UsageError`.

    >>> reparse("jobs.db", sources=["textdump"]).counts["unchanged"]
    2
    """
    from crawler.reparse.spider import ReparseSpider
    from crawler.run.runner import Job
    from crawler.store.queries import raw_input_sources

    sources = list(sources)
    stored = raw_input_sources(db)
    unknown = [name for name in sources if name not in stored]
    if unknown:
        raise UsageError(f"no raw input of {', '.join(map(repr, unknown))} in {db} (its sources: "
                         f"{', '.join(stored) or 'none'})", "--source")
    job = Job(ReparseSpider, "reparse", {"sources": sources}, {"db": str(Path(db).resolve()), "sources": sources})
    return run([job], db, workers=1, settings=settings, progress=progress)[0]


def run(jobs: list, db: str, **options: Any) -> list[RunReport]:
    """Run jobs (crawler.run.runner.Job, e.g. from :func:`ingest_job`) into ``db`` under its lock, then refresh it
    as :func:`ingest` does: crawler.run.runner.run_jobs, whose keyword ``options`` it takes. One report per job, in
    order. An ingest of a named source earlier than its latest run raises :class:`OutOfOrder`, before any run."""
    from crawler.run.lock import db_lock
    from crawler.run.runner import run_jobs

    with db_lock(db):
        check_order(db, jobs)
        return run_jobs(jobs, db, **options)


@dataclass
class Refreshed:
    """What :func:`refresh` did: each corpus step's counts (``dedupe``, ``score``, ``signals``) and the alerts'
    report."""

    steps: dict[str, dict[str, int]]
    alerts: Any = None
    """crawler.alerts.delivery.DeliveryReport"""


def refresh(db: str, *, alerts_config: str | None = None, progress: Progress | None = None) -> Refreshed:
    """Run the corpus steps of :data:`REFRESH_STEPS` on ``db`` in order, as every run does after its writer:
    dedupe (incremental), market statistics and scores, ghost signals and likely employers, the weekly hiring
    velocity, then the watches' alerts (config ``alerts_config``). A dedupe, scoring, signals or velocity step that
    fails raises
    crawler.run.steps.StepFailed; alert problems are lines of the report.

    >>> refresh("jobs.db").steps["score"]["unchanged"]
    2
    """
    from crawler.alerts.delivery import deliver_new_matches
    from crawler.run.lock import db_lock
    from crawler.run.steps import corpus_steps
    from crawler.store.schema import open_db

    with db_lock(db):
        database = open_db(db)
        try:
            steps = corpus_steps(database, progress=progress)
        finally:
            database.close()
        return Refreshed(steps, deliver_new_matches(db, config_path=alerts_config))


@dataclass
class Scores:
    """What :func:`score` did. ``counts``: the scoring's (None when ``db`` could not be written and only the stored
    scores were reported: ``readonly`` says why); ``fit``, ``best_fits``: the profile's; ``report``: the agreement
    with the app's own evaluations; ``run_id``: the ``runs`` row of kind score."""

    counts: dict[str, Any] | None = None
    seconds: float = 0.0
    fit: dict[str, Any] | None = None
    best_fits: list[dict] = field(default_factory=list)
    unknown_skills: list[str] = field(default_factory=list)
    report: dict | None = None
    readonly: str | None = None
    run_id: int | None = None


def score(db: str, *, force: bool = False, profile: str | None = None, report: bool = False,
          top: int = 5) -> Scores:
    """Score every active posting of ``db`` whose inputs changed (all with ``force``): market statistics and our
    evaluation; with ``profile`` (a TOML file) also its fit; with ``report`` the agreement with the app's own
    evaluations (``top`` postings furthest apart, and ``top`` best fits). Recorded as one ``runs`` row. A ``db``
    that cannot be written gives the agreement of the stored scores alone when that is all that was asked.

    >>> score("jobs.db", force=True).counts["scored"]
    2
    """
    from crawler.files import ConfigFileError, read_config_text
    from crawler.score import step
    from crawler.store import unwritable
    from crawler.store.runs import record_step_run
    from crawler.store.schema import open_db
    from normalize.clock import now_iso
    from normalize.fit import ProfileError, load_profile
    from normalize.skills import load_taxonomy

    fit_profile = None
    if profile:
        try:
            fit_profile = load_profile(read_config_text(Path(profile)), load_taxonomy())
        except (ProfileError, ConfigFileError, UnicodeDecodeError) as err:
            raise UsageError(f"{profile}: {err}") from None
    readonly = unwritable(db)
    if readonly and report and not (fit_profile or force):
        database = open_db(db, readonly=True)
        try:
            return Scores(report=step.agreement_report(database, top=top), readonly=readonly)
        finally:
            database.close()
    started, clock = now_iso(), time.perf_counter()
    database = open_db(db)
    try:
        done = Scores(step.score_corpus(database, now=started, force=force))
        done.seconds = time.perf_counter() - clock
        stats: dict = {"counts": done.counts}
        if fit_profile:
            from crawler.fit.step import score_fit_and_blocks

            done.unknown_skills = list(fit_profile.unknown_skills)
            done.fit = stats["fit"] = score_fit_and_blocks(database, fit_profile, now=started, incremental=not force)
            done.best_fits = step.best_fits(database, done.fit["scorer"], top=top)
        if report:
            done.report = stats["report"] = step.agreement_report(database, top=top)
        done.run_id = record_step_run(database, "score", started=started, stats=stats,
                                      args={"report": report, "top": top, "profile": profile})
    finally:
        database.close()
    return done
