"""Alerts: postings new to a watch, delivered to its destinations after every ingest and crawl.

:func:`deliver_new_matches` is the hook the runs call (and ``jobcrawl watch deliver``): with a
profile in the config (:mod:`crawler.alerts.config`) it scores fit and refreshes the blocklist's flags
(``crawler.fit.step``), then matches every watch against the open postings it has not seen (rules:
:mod:`normalize.watch`), then sends every pending delivery (:mod:`crawler.alerts.transports`).

**At-least-once.** A match and one ``pending`` delivery per destination are recorded in one
transaction before anything is sent; a delivery becomes ``sent`` only after its destination accepted
it. A crash between the two leaves it pending and the next run sends it again (a duplicate, never a
loss: the alert's key is the same); a recorded delivery is never sent again. A failed destination keeps
its deliveries pending, reported (stderr, ``watch_deliveries.error``) redacted; the other destinations go on.

**Tracked postings.** A watch without ``include_tracked`` never matches a posting whose job is tracked
(``jobcrawl track``), and a delivery still pending when its posting gets tracked is cancelled, not sent.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from crawler.alerts import store
from crawler.alerts.config import AlertsConfig, ConfigError, default_config_path, load_config, load_profile_of
from crawler.alerts.transports import Alert, SendError, describe, send_alert
from normalize.history import pay_label
from normalize.watch import WatchSpec, candidate, match

MAX_PER_MESSAGE = 20
"""Postings in one alert; more new matches of a watch go out as several alerts."""


def _posting(row: dict[str, Any], browse_url: str | None) -> dict[str, Any]:
    salary = {"monthly_min": row["salary_monthly_min"], "monthly_max": row["salary_monthly_max"],
              "currency": row["salary_currency"], "months": row["salary_months"], "status": row["salary_status"],
              "estimated": bool(row["salary_estimated"]), "raw": row["salary_raw"]}
    return {"id": row["posting_id"], "title": row["title"], "company": row["company"], "city": row["city"],
            "salary": pay_label(salary), "salary_raw": row["salary_raw"], "url": row["url"], "fit": row["fit"],
            "first_seen": row["first_seen"], "reasons": json.loads(row["reasons"] or "[]"),
            "page": f"{browse_url.rstrip('/')}/jobs/postings/{row['posting_id']}" if browse_url else None}


@dataclass
class DeliveryReport:
    """What one delivery step did: new matches per watch, postings delivered per destination, deliveries
    still pending, and one line per problem."""

    matched: dict[str, int] = field(default_factory=dict)
    sent: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    errors: list[str] = field(default_factory=list)
    fit: dict[str, int] = field(default_factory=dict)

    def counters(self) -> dict[str, int]:
        """Plain integer counters for a run's stats (``jobcrawl/alerts/<name>``)."""
        return {"matched": sum(self.matched.values()), "sent": sum(self.sent.values()), "pending": self.pending,
                "errors": len(self.errors)}

    def lines(self) -> list[str]:
        """One summary line (when there were watches), then the problems."""
        if not self.matched and not self.sent and not self.pending and not self.errors:
            return []
        new = ", ".join(f"{w} {n}" for w, n in self.matched.items()) or "none"
        sent = ", ".join(f"{d} {n}" for d, n in self.sent.items()) or "nothing"
        line = f"alerts: new matches {new} · delivered {sent}"
        if self.pending:
            line += f" · {self.pending} pending (sent again on the next run, or `jobcrawl watch deliver`)"
        return [line, *(f"alerts: {e}" for e in self.errors)]


def find_matches(db, watch: store.Watch, profile: str | None) -> list[tuple[int, list[str]]]:
    """``(posting id, reasons)`` of every open posting the watch has not seen and matches now."""
    found = store.search_ids(db, watch.spec.search) if watch.spec.search else None
    out = []
    for row in store.unseen_rows(db, watch.id, profile=profile, cities=watch.spec.cities, ids=found):
        reasons = match(watch.spec, candidate(row, found=found is None or row["id"] in found))
        if reasons is not None:
            out.append((row["id"], reasons))
    return out


def _refresh_fit(db, profile, report: DeliveryReport) -> None:
    from crawler.fit.step import score_fit_and_blocks

    report.fit = score_fit_and_blocks(db, profile, incremental=True)


def add_watch(db, spec: WatchSpec, *, config: AlertsConfig | None, include_existing: bool = False) -> dict[str, int]:
    """Store a watch: its ``id``, and how many open postings match it now (``matching``). They are its baseline
    (seen, never delivered) unless ``include_existing``: then the next delivery sends them. Raises ValueError for a
    name in use, a destination the config lacks, or ``min_fit`` without a profile in the config."""
    config = config or AlertsConfig()
    for name in spec.destinations:
        if config.destination(name) is None:
            raise ValueError(f"destination {name!r} is not in the alerts config ({default_config_path()} or --config)")
    profile = load_profile_of(config)
    if spec.min_fit is not None and profile is None:
        raise ValueError("--min-fit needs a profile: profile = \"…\" in the alerts config")
    if profile is not None:
        _refresh_fit(db, profile, DeliveryReport())
    matching = find_matches(db, store.Watch(store.NEW_WATCH, spec, ""), profile and profile.name)
    return {"id": store.add_watch(db.conn, spec, [] if include_existing else matching), "matching": len(matching)}


def deliver_new_matches(db_path: str | Path, run_id: int | None = None, *, config_path: str | Path | None = None,
                        out: TextIO | None = None, sleep: Callable[[float], None] = time.sleep) -> DeliveryReport:
    """After a run: score the config's profile (fit and blocklist, :func:`crawler.fit.step.score_fit_and_blocks`),
    record each watch's new matches, then send every pending delivery (of this run and of earlier ones).
    Never raises for a config, profile or destination problem: it is a line of the report, and the
    deliveries it holds up stay pending. Without a profile or a watch it reads the config and one row."""
    from crawler.store.schema import open_db

    report = DeliveryReport()
    out = out or sys.stdout
    try:
        config = load_config(config_path) or AlertsConfig()
        profile = load_profile_of(config)
    except ConfigError as err:
        report.errors.append(str(err))
        config, profile = AlertsConfig(), None
    db = open_db(db_path)
    try:
        watching = store.has_watches(db.conn)
        if profile is not None:  # its fit and blocklist, for the watches and for browsing
            _refresh_fit(db, profile, report)
        if not watching:
            return report
        for watch in store.active_watches(db.conn):
            if watch.spec.min_fit is not None and profile is None:
                report.errors.append(f"watch {watch.spec.name}: --min-fit needs a profile in the alerts config; not matched")
                continue
            new = find_matches(db, watch, profile and profile.name)
            report.matched[watch.spec.name] = store.record_matches(db.conn, watch, new, run_id=run_id)
        _send_pending(db, config, profile and profile.name, report, out, sleep)
        return report
    finally:
        db.close()


def _send_pending(db, config: AlertsConfig, profile: str | None, report: DeliveryReport, out: TextIO,
                  sleep: Callable[[float], None]) -> None:
    store.cancel_tracked(db.conn)  # tracked after it was matched: not delivered either
    groups: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for row in store.pending(db.conn, profile=profile):
        groups.setdefault((row["watch_id"], row["destination"]), []).append(row)
    browse_url, secrets = config.browse_url, config.secrets
    failed: dict[str, str] = {}  # destination → why it took no alert in this delivery: not tried again in it
    for (watch_id, name), rows in groups.items():
        dest = config.destination(name)
        if dest is None:
            report.pending += len(rows)
            report.errors.append(f"watch {rows[0]['name']}: destination {name!r} is not in the alerts config; "
                                 f"{len(rows)} kept pending")
            continue
        sent = 0
        while sent < len(rows) and name not in failed:  # one failed message is enough: the rest wait
            part = rows[sent:sent + MAX_PER_MESSAGE]
            alert = Alert(part[0]["name"], [_posting(r, browse_url) for r in part])
            ids = [r["posting_id"] for r in part]
            try:
                attempts = send_alert(dest, alert, out=out, sleep=sleep, secrets=secrets)
            except SendError as err:  # redacted
                failed[name] = f"{describe(name, dest, secrets)}: {err}"
                store.mark_failed(db.conn, watch_id, name, ids, attempts=err.attempts, error=failed[name])
                break
            store.mark_sent(db.conn, watch_id, name, ids, attempts=attempts)
            report.sent[name] = report.sent.get(name, 0) + len(ids)
            sent += len(part)
        if sent < len(rows):
            report.pending += len(rows) - sent
            report.errors.append(f"watch {rows[0]['name']} → {failed[name]}; {len(rows) - sent} kept pending")
