"""What a run did, typed: :class:`CrawlReport` per spider run (its counts are the crawler's Scrapy stats; its lines
are added by the spider and the pipelines, in whichever process runs them), :class:`RunReport` per ``runs`` row
(the crawl reports of its shards merged, plus the writer's counts and the corpus steps). The CLI prints a RunReport
and ``crawler.store.runs`` stores it; nothing else is passed between the parts of a run.

Both are plain data (picklable): a worker process sends its CrawlReports to the parent at the end.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from normalize.shown import shown

COUNT_COLUMNS = ("files", "found", "new", "updated", "unchanged", "quarantined", "closed", "reopened", "requests",
                 "errors")
"""Counts of a run, each a column of ``runs``."""


FILES, FOUND = "jobcrawl/files", "jobcrawl/postings_found"
FILES_UNCHANGED, UNPARSED = "jobcrawl/files_unchanged", "jobcrawl/postings_unchanged_unparsed"
SEEN_UNPARSED = "jobcrawl/postings_seen_unparsed"
"""Postings read again as stored (crawler/ingest/textdump.py): the writer counts them unchanged, nothing parses them."""
COUNTED = (FILES, FOUND, FILES_UNCHANGED, UNPARSED)
"""The Scrapy stats a spider counts its inputs and postings in (besides Scrapy's and the pipelines' own): inputs
read (files, pages or API responses parsed, or counted as unchanged), postings found in them (quarantined ones
included), inputs not parsed again (unchanged since their last complete parse: crawler/ingest/ledger.py) and
their postings."""
REQUESTS, STATUS = "jobcrawl/http/requests", "jobcrawl/http/status/"
"""HTTP requests that went over the network and their responses by status (crawler/web/middlewares.py)."""
REPORT_SETTING = "JOBCRAWL_REPORT"
"""The setting that hands a crawler the :class:`CrawlReport` its run made for it."""


def numeric(value: Any) -> bool:
    """A stat that adds up (a bool is not one)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def plain(stats: dict[str, Any]) -> dict[str, Any]:
    """Scrapy's stats as plain values (datetimes as ISO text; other objects left out)."""
    return {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in stats.items()
            if isinstance(v, (int, float, str, bool)) or v is None or hasattr(v, "isoformat")}


@dataclass
class CrawlReport:
    """One spider run over its inputs (or the shards of one job, merged): its counts are Scrapy's stats
    (:data:`COUNTED` and Scrapy's own), its lines are added by its spider, pipelines and extensions. The run
    makes one per crawler and hands it over at the crawler's creation (:func:`handed_report`); the writer's
    counts are not here."""

    problems: list[str] = field(default_factory=list)
    """One line per quarantined input or posting: ``locator#position: detail``."""
    repaired: list[str] = field(default_factory=list)
    """One line per input or posting stored after a repair (lone surrogates replaced, an undeclared charset detected …)."""
    errors: list[str] = field(default_factory=list)
    """One line per item a pipeline raised on that is not a posting (a posting is quarantined), and other errors
    that are not a failed request."""
    request_errors: list[str] = field(default_factory=list)
    """One line per request that failed for good: ``URL: reason``."""
    notes: list[str] = field(default_factory=list)
    """One line per thing the spider did in place of what it was told (an API that answered instead of another)."""
    failures: Counter = field(default_factory=Counter)
    """Requests that failed for good, by reason (``DNS lookup failed for api.lever.co``, ``HTTP 503`` …)."""
    listings: dict[str, list[str] | None] = field(default_factory=dict)
    """Complete listings read: listing name → keys of its postings (the closing step's input); None for a listing
    whose reading met a problem (it closes nothing)."""
    tables: list[dict[str, Any]] = field(default_factory=list)
    """One summary per table file (crawler.ingest.table.TableReport.as_dict() with its line)."""
    finish_reason: str | None = None
    """Why the spider closed: ``finished``, ``shutdown``, ``request_cap`` …"""
    stage_failed: str | None = None
    """A stage or the writer failed: data may be missing (the run's status becomes ``failed``)."""
    stats: dict[str, Any] = field(default_factory=dict)
    """The crawler's stats at the end (plain values: :data:`COUNTED` among them), kept in ``runs.stats``."""

    files = property(lambda self: int(self.stats.get(FILES, 0)), doc="Inputs read (:data:`COUNTED`).")
    found = property(lambda self: int(self.stats.get(FOUND, 0)), doc="Postings found in them.")
    files_unchanged = property(lambda self: int(self.stats.get(FILES_UNCHANGED, 0)), doc="Inputs not parsed again.")
    unchanged_unparsed = property(lambda self: int(self.stats.get(UNPARSED, 0)), doc="Postings of those inputs.")
    requests = property(lambda self: int(self.stats.get(REQUESTS, 0)), doc="HTTP requests sent (no cache hits).")

    @property
    def responses(self) -> Counter:
        """Responses by the status the server sent (304 revalidations included), as strings."""
        return Counter({k.removeprefix(STATUS): v for k, v in self.stats.items() if k.startswith(STATUS)})

    @property
    def error_count(self) -> int:
        """Failed requests, items lost to a pipeline error, inputs a reparse could not read, spider exceptions."""
        return len(self.errors) + len(self.request_errors) + sum(
            int(v) for k, v in self.stats.items() if k.startswith("spider_exceptions/"))

    def ended(self, stats: dict[str, Any], reason: str | None) -> None:
        """The crawl has ended: keep its stats (plain) and why it closed."""
        self.stats, self.finish_reason = plain(stats), reason

    def merge(self, other: "CrawlReport") -> None:
        """Add another shard's report of the same job."""
        self.problems += other.problems
        self.repaired += other.repaired
        self.errors += other.errors
        self.request_errors += other.request_errors
        self.notes += other.notes
        self.failures.update(other.failures)
        for name, keys in other.listings.items():  # shards of one listing: together, unless one failed
            mine = self.listings.get(name, [])
            self.listings[name] = None if mine is None or keys is None else mine + keys
        self.tables += other.tables
        self.stage_failed = self.stage_failed or other.stage_failed
        # The least finished shard decides: one shard stopped by a signal stopped the run.
        if self.finish_reason in (None, "finished"):
            self.finish_reason = other.finish_reason or self.finish_reason
        for key, value in other.stats.items():
            mine = self.stats.get(key)
            if numeric(value) and numeric(mine):
                self.stats[key] = mine + value
            elif mine is None:
                self.stats[key] = value

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data, its counts named."""
        return {"files": self.files, "found": self.found, "files_unchanged": self.files_unchanged,
                "unchanged_unparsed": self.unchanged_unparsed, "requests": self.requests,
                "responses": dict(self.responses), "problems": list(self.problems), "repaired": list(self.repaired),
                "errors": list(self.errors), "request_errors": list(self.request_errors), "notes": list(self.notes),
                "failures": dict(self.failures), "error_count": self.error_count, "listings": dict(self.listings),
                "tables": list(self.tables), "finish_reason": self.finish_reason, "stage_failed": self.stage_failed,
                "stats": {k: v for k, v in self.stats.items() if k not in COUNTED}}


def handed_report(crawler) -> CrawlReport:
    """The :class:`CrawlReport` the run handed ``crawler`` at its creation (setting :data:`REPORT_SETTING`); a crawl
    outside a run (``scrapy crawl``) gets a fresh one that nobody reads."""
    return crawler.settings.get(REPORT_SETTING) or CrawlReport()


@dataclass
class RunReport:
    """One ``runs`` row: what a job did from its inputs to the database, and the corpus steps after it."""

    run_id: int
    kind: str
    source: str | None = None
    crawl: CrawlReport = field(default_factory=CrawlReport)
    written: dict[str, int] = field(default_factory=dict)
    """The writer's counts for this run: new, updated, unchanged, quarantined, reopened, inputs_new."""
    closed: int = 0
    reopened: int = 0
    listings_complete: int = 0
    status: str = "running"
    steps: dict[str, dict[str, int]] = field(default_factory=dict)
    step_failed: dict[str, str] | None = None
    retagged: int | None = None
    alerts: Any = None
    """The watches' deliveries after the run (crawler.alerts.delivery.DeliveryReport), on the last report of a run."""
    workers: int = 1
    """Processes that ran the spiders: 1 = this process; more = worker processes, this one writing."""
    messages: list[str] = field(default_factory=list)
    """Further lines for the user (a failed corpus step and the command that re-runs it)."""
    total_postings: int = 0

    # ------------------------------------------------------------------ derived

    @property
    def counts(self) -> dict[str, int]:
        """The counts of :data:`COUNT_COLUMNS` (and ``files_unchanged``)."""
        c, w = self.crawl, self.written
        return {
            "files": c.files, "found": c.found, "new": w.get("new", 0), "updated": w.get("updated", 0),
            "unchanged": w.get("unchanged", 0) + c.unchanged_unparsed, "quarantined": w.get("quarantined", 0),
            "closed": self.closed, "reopened": self.reopened, "requests": c.requests,
            "errors": c.error_count, "files_unchanged": c.files_unchanged,
        }

    @property
    def problems(self) -> list[str]:
        return self.crawl.problems

    @property
    def errors(self) -> list[str]:
        """Every error line: failed requests, postings not stored, a failed stage (the run stopped there), a failed
        corpus step."""
        stage = [f"the run stopped: {self.crawl.stage_failed}"] if self.crawl.stage_failed else []
        return self.crawl.request_errors + self.crawl.errors + stage + self.messages

    @property
    def responses(self) -> dict[str, int]:
        return dict(self.crawl.responses)

    @property
    def stats(self) -> dict[str, Any]:
        """Everything the ``runs.stats`` column keeps: Scrapy's counters and the run's named extras."""
        c = self.crawl
        out = {k: v for k, v in c.stats.items() if k not in COUNTED}
        # Like Scrapy's counters, each appears once it counted something.
        for name, value in (("files", c.files), ("postings_found", c.found), ("files_unchanged", c.files_unchanged),
                            ("postings_unchanged_unparsed", c.unchanged_unparsed), *self.written.items()):
            if value:
                out[f"jobcrawl/{name}"] = value
        out["jobcrawl/listings_complete"] = self.listings_complete
        out["jobcrawl/workers"] = self.workers
        if self.crawl.finish_reason:
            out["finish_reason"] = self.crawl.finish_reason
        if self.crawl.tables:
            out["jobcrawl/tables"] = self.crawl.tables
        if self.crawl.repaired:
            out["jobcrawl/repaired"] = self.crawl.repaired
        if self.crawl.notes:
            out["jobcrawl/notes"] = self.crawl.notes
        if self.crawl.stage_failed:
            out["jobcrawl/stage_failed"] = self.crawl.stage_failed
        if self.step_failed:
            out["jobcrawl/step_failed"] = self.step_failed
        if self.retagged is not None:
            out["jobcrawl/retagged"] = self.retagged
        if self.alerts is not None:
            out.update({f"jobcrawl/alerts/{k}": v for k, v in self.alerts.counters().items()})
        out.update({f"jobcrawl/{step}/{k}": v for step, result in self.steps.items() for k, v in result.items()})
        return out

    def decide_status(self) -> str:
        """``ok``; ``partial`` (something quarantined or failed, or the request cap was reached);
        ``interrupted`` (a crawl stopped by a signal: resumable with its JOBDIR); ``failed`` (a stage failed,
        or a crawl read nothing because every request it made failed)."""
        reason, counts = self.crawl.finish_reason, self.counts
        if self.crawl.stage_failed or self.step_failed:
            status = "failed"
        elif self.kind == "crawl" and self.crawl.failures and not self.crawl.files:
            status = "failed"
        elif reason == "finished":
            status = "partial" if counts["quarantined"] or counts["errors"] else "ok"
        elif reason in ("request_cap", "closespider_pagecount"):
            status = "partial"
        elif reason == "shutdown" and self.kind == "crawl":
            status = "interrupted"
        else:
            status = "failed"
        self.status = status
        return status

    # ------------------------------------------------------------------ lines

    def summary(self) -> str:
        """One line for an ingest."""
        c = self.counts
        skipped = c["files_unchanged"]
        noun, their = ("file", "its") if skipped == 1 else ("files", "their")
        return (f"files read {c['files']} · postings found {c['found']} · new {c['new']} · updated {c['updated']} · "
                f"unchanged {c['unchanged']} · quarantined {c['quarantined']}"
                + (f" · not stored (errors) {c['errors']}" if c["errors"] else "")
                + (f" · {skipped} {noun} unchanged since {their} last parse, not stored again" if skipped else ""))

    def crawl_summary(self) -> str:
        """One line for a crawl: network, postings, closing, problems, status."""
        c = self.counts
        statuses = " ".join(f"{code}×{n}" for code, n in sorted(self.responses.items())) or "none"
        return (f"{self.source}: requests {c['requests']} · responses {statuses} · postings found {c['found']} · "
                f"new {c['new']} · updated {c['updated']} · unchanged {c['unchanged']} · closed {c['closed']} · "
                f"reopened {c['reopened']} · quarantined {c['quarantined']} · errors {c['errors']}"
                f"{summary_note(self.stats)} · {self.status} (run {self.run_id})")

    def failure_line(self) -> str | None:
        """One line on the requests of a crawl that failed for good, by reason (None when none did):
        ``gitlab: failed: DNS lookup failed for boards-api.greenhouse.io`` when nothing could be read,
        else ``careers: 3 requests failed: HTTP 503 ×2, too many redirects``."""
        failures = self.crawl.failures
        if not failures:
            return None
        reasons = ", ".join(reason if n == 1 else f"{reason} ×{n}" for reason, n in failures.most_common())
        if self.status == "failed" and not self.crawl.files:
            return f"{self.source}: failed: {reasons}"
        n = sum(failures.values())
        return f"{self.source}: {n} request{'' if n == 1 else 's'} failed: {reasons}"

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``--json``)."""
        data = asdict(self)
        data["crawl"] = self.crawl.as_dict()
        data["counts"] = self.counts
        return data


LISTED = 20
"""Lines of one kind (quarantined inputs, repairs, errors, tables read) printed one by one at the end of a run; the
rest are counted in one line (``--json`` and the database hold every one)."""


def capped(kind: str, lines: list[str]) -> list[str]:
    """``kind: line`` for the first :data:`LISTED` lines, then one ``kind: N more …`` line for the rest."""
    out = [f"{kind}: {line}" for line in lines[:LISTED]]
    if len(lines) > LISTED:
        out.append(f"{kind}: {len(lines) - LISTED:,} more, not listed (--json lists them all)")
    return out


def _files(tables: list[dict[str, Any]], named: int = 3) -> str:
    names = ", ".join(shown(t["locator"], quoted=True) for t in tables[:named])
    return f"{len(tables):,} file{'s' * (len(tables) != 1)} ({names}" + (
        f" and {len(tables) - named:,} more)" if len(tables) > named else ")")


def table_lines(tables: list[dict[str, Any]]) -> list[str]:
    """The summary lines of the tables (CSV, JSON files) of a run: one per file up to :data:`LISTED` files; past
    that, one line for the files read, with their rows added up, and the files not imported, capped."""
    if len(tables) <= LISTED:
        return [t["summary"] for t in tables]
    read = [t for t in tables if not t["error"]]
    out = []
    if read:
        def total(key: str) -> str:
            return f"{sum(t[key] for t in read):,}"
        unchanged = [t for t in read if t["unchanged"] and not t["streamed"]]
        out.append(f"tables read: {_files(read)} · rows {total('rows')}: postings {total('postings')}, quarantined "
                   f"{total('quarantined')}, repeated headers skipped {total('header_rows')}, blank skipped "
                   f"{total('blank_rows')}" + (f" · {_files(unchanged)} unchanged since their last parse, not "
                                              "stored again" if unchanged else ""))
    return out + capped("not imported", [f"{shown(t['locator'], quoted=True)}: {t['error']}" for t in tables
                                         if t["error"]])


# The safety counters (crawler/web/safety.py, killsafe.py) a run's summary line names when they are not zero.
SUMMARY_STATS = {
    "refused (host)": "jobcrawl/refused/host",
    "refused (private address)": "jobcrawl/refused/private",
    "refused (robots.txt unreadable)": "jobcrawl/refused/robots",
    "too large": "jobcrawl/oversize",
    "redirect loops": "jobcrawl/redirect_loops",
    "too many redirects": "jobcrawl/redirects_exceeded",
    "state of a killed run discarded": "jobcrawl/jobdir_discarded",  # crawler/web/killsafe.py
}


def summary_note(stats: dict[str, Any]) -> str:
    """`` · refused (host) 1 · too large 2`` for the counters of this module that are not zero."""
    return "".join(f" · {label} {int(stats[key])}" for label, key in SUMMARY_STATS.items() if stats.get(key))
