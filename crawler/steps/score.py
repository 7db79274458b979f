"""The scoring step over the database: market statistics, our evaluation of every active posting
(scorer ``jobcrawl-v1``, rules in :mod:`normalize.score`), personal fit (``fit:<profile>``,
:mod:`normalize.fit`) and the agreement report against the app's own evaluations.

Batched: postings and their section bullets are read 2,000 at a time by id range, evaluations and
signals written with ``executemany``, all in one transaction, so a killed run leaves the previous
scores in place. Re-scoring replaces only the scorer's own rows of the postings it scores (the
app's ``source`` rows and other scorers are never touched); a closed posting keeps the evaluation
it had while it was active. Deterministic: ``now`` is the only input besides the database.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from collections import defaultdict, deque
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, Callable, Iterator

import sqlite_utils

from crawler.db import readonly_uri
from crawler.db.rows import EVAL_COLS, evaluation_rows
from normalize.clock import now_iso as utcnow
from normalize.fit import FitProfile, score_fit
from normalize.models import DIMENSIONS, Evaluation
from normalize.score import SCORER, Market, PostingFacts, SkillInfo, score_posting
from normalize.skills import load_taxonomy

from .stats import recompute

BATCH = 2000
PARALLEL_MIN = 20_000
"""Active postings from which scoring runs in worker processes (starting them costs about a second)."""
MAX_WORKERS = 2
ACTIVE = "closed_at IS NULL"
FACT_COLUMNS = {
    # PostingFacts field: postings column
    "title": "title", "company": "company", "city": "city", "district": "district", "category": "category",
    "seniority": "seniority", "work_mode": "work_mode", "experience_min_years": "experience_min_years",
    "industry": "company_info_industry", "tags": "tags", "skills": "skills", "description": "description",
    "extra": "extra", "salary_status": "salary_status", "salary_raw": "salary_raw",
    "monthly_min": "salary_monthly_min", "monthly_max": "salary_monthly_max", "currency": "salary_currency",
    "months": "salary_months", "salary_estimated": "salary_estimated", "salary_implausible": "salary_implausible",
    "compare_raw": "salary_compare_raw", "vs_median": "salary_vs_median", "compare_scope": "salary_compare_scope",
    "signal_raw": "salary_signal_raw", "signal_min": "salary_signal_min", "signal_max": "salary_signal_max",
    "signal_currency": "salary_signal_currency", "signal_period": "salary_signal_period",
    "signal_estimated": "salary_signal_estimated", "signal_implausible": "salary_signal_implausible",
    "company_open_jobs": "company_activity_open_jobs", "market_open_jobs": "market_open_jobs",
}


def _json(kind: type) -> Callable[[Any], Any]:
    return lambda v: kind(json.loads(v)) if v else kind()


_CONVERT: dict[str, Callable[[Any], Any]] = {
    "tags": _json(tuple), "skills": _json(tuple), "extra": _json(dict),
    "salary_estimated": bool, "salary_implausible": bool, "signal_estimated": bool, "signal_implausible": bool,
    "months": lambda v: v or 12, "salary_status": lambda v: v or "missing",
}
_CONVERTERS = [(field, _CONVERT.get(field)) for field in FACT_COLUMNS]
_SELECT = "SELECT id, " + ", ".join(f"[{c}]" for c in FACT_COLUMNS.values()) + " FROM postings"
_INSERT_EVAL = f"INSERT OR REPLACE INTO evaluations ({', '.join(EVAL_COLS)}) VALUES ({', '.join('?' * len(EVAL_COLS))})"
_INSERT_SIGNAL = "INSERT INTO signals (posting_id, scorer, dimension, position, key, value) VALUES (?,?,?,?,?,?)"


def taxonomy_info(db: sqlite_utils.Database) -> dict[str, SkillInfo]:
    """Category, parent and frontier flag of every skill: the ``skills`` table, else the packaged taxonomy."""
    rows = db.execute("SELECT name, category, parent, frontier FROM skills").fetchall()
    if rows:
        return {name: SkillInfo(category, parent, bool(frontier)) for name, category, parent, frontier in rows}
    return {s.name: SkillInfo(s.category, s.parent, s.frontier) for s in load_taxonomy().skills}


def _facts(row: tuple, sections: dict[str, list[str]]) -> PostingFacts:
    values = {field: convert(v) if convert else v for (field, convert), v in zip(_CONVERTERS, row[1:])}
    return PostingFacts(sections=sections, **values)


RawBatch = tuple[list[tuple], dict[int, dict[str, list[str]]]]


def iter_rows(db: sqlite_utils.Database, *, where: str = ACTIVE, batch: int = BATCH) -> Iterator[RawBatch]:
    """Batches of postings rows (id first, then FACT_COLUMNS) in id order, with their bullets by posting
    and section key (each batch one id range, :func:`_id_ranges`; the worker processes read the same)."""
    for first, last in _id_ranges(db.conn, where, batch):
        yield _read_range(db.conn, first, last, where)


def _sections(conn: sqlite3.Connection, first: int, last: int) -> dict[int, dict[str, list[str]]]:
    """Bullets of the postings ``first``..``last`` by posting id and section key, in order."""
    sections: dict[int, dict[str, list[str]]] = defaultdict(dict)
    for pid, key, text in conn.execute(
        "SELECT posting_id, key, text FROM sections WHERE posting_id BETWEEN ? AND ? ORDER BY posting_id, seq",
        (first, last),
    ):
        sections[pid].setdefault(key, []).append(text)
    return sections


def _read_range(conn: sqlite3.Connection, first: int, last: int, where: str = ACTIVE) -> RawBatch:
    """Postings rows matching ``where`` with ids ``first``..``last``, and their bullets."""
    rows = conn.execute(f"{_SELECT} WHERE id BETWEEN ? AND ? AND ({where}) ORDER BY id", (first, last)).fetchall()
    return rows, _sections(conn, first, last)


def _id_ranges(conn: sqlite3.Connection, where: str = ACTIVE, batch: int = BATCH) -> Iterator[tuple[int, int]]:
    """(first, last) id of each batch of ``batch`` postings matching ``where``, in id order."""
    ids = [row[0] for row in conn.execute(f"SELECT id FROM postings WHERE {where} ORDER BY id")]
    for i in range(0, len(ids), batch):
        yield ids[i], ids[min(i + batch, len(ids)) - 1]


def iter_facts(db: sqlite_utils.Database, *, where: str = ACTIVE, batch: int = BATCH) -> Iterator[list[tuple[int, PostingFacts]]]:
    """Batches of (posting id, facts) in id order."""
    for rows, sections in iter_rows(db, where=where, batch=batch):
        yield [(row[0], _facts(row, sections.get(row[0], {}))) for row in rows]


Scorer = Callable[[PostingFacts], Evaluation]


def _score_batch(score: Scorer, raw: RawBatch, now: str) -> tuple[list[list], list[tuple]]:
    """evaluations rows and signals rows for one batch."""
    rows, sections = raw
    evals, signals = [], []
    for row in rows:
        ev_row, sigs = evaluation_rows(row[0], score(_facts(row, sections.get(row[0], {}))), now)
        evals.append(ev_row)
        signals.extend(sigs)
    return evals, signals


_WORKER: dict[str, Any] = {}


def _worker_init(score: Scorer, path: str) -> None:
    _WORKER["score"] = score
    _WORKER["conn"] = sqlite3.connect(readonly_uri(path), uri=True)


def _worker_batch(first: int, last: int, now: str, where: str = ACTIVE) -> tuple[list[list], list[tuple]]:
    return _score_batch(_WORKER["score"], _read_range(_WORKER["conn"], first, last, where), now)


def _db_path(db: sqlite_utils.Database) -> str | None:
    """The file behind ``db``'s main schema; None in memory."""
    path = next((row[2] for row in db.conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    return path or None


def _scored_batches(db: sqlite_utils.Database, score: Scorer, now: str, workers: int,
                    where: str = ACTIVE) -> Iterator[tuple[list, list]]:
    """Scored batches in id order: in this process, or in ``workers`` spawned processes (the scoring is
    pure Python and CPU-bound; this process writes meanwhile). At most 2 × workers batches are in
    flight; results come back in submission order, so the output is the same either way.

    Workers read their batches from the file themselves (committed rows: postings and bullets) and
    are sent only id ranges: a worker that dies (killed, out of memory) then fails the step with
    BrokenProcessPool. A batch of rows larger than the pipe, blocked half-written when its reader
    died, hung the executor's shutdown for good.
    """
    path = _db_path(db)
    if workers <= 1 or path is None:
        for raw in iter_rows(db, where=where):
            yield _score_batch(score, raw, now)
        return
    context = multiprocessing.get_context("spawn")  # no fork: callers may hold threads (Scrapy, the writer)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_worker_init, initargs=(score, path)) as pool:
        pending: deque = deque()
        for first, last in _id_ranges(db.conn, where):
            pending.append(pool.submit(_worker_batch, first, last, now, where))
            if len(pending) > 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _write(db: sqlite_utils.Database, scorer: str, score: Scorer, now: str, workers: int | None,
           where: str = ACTIVE) -> int:
    """Store ``score(facts)`` as ``scorer``'s evaluation of every posting ``where`` selects (default: the
    active ones), in one transaction.

    Only evaluations that changed are written (with ``now`` as their ``computed_at``), so scoring an
    unchanged corpus again changes nothing, and the per-row triggers of the browse columns fire only
    where the score moved. Returns the postings scored (changed or not).
    """
    conn = db.conn
    if workers is None:
        active = conn.execute(f"SELECT count(*) FROM postings WHERE {where}").fetchone()[0]
        workers = min(MAX_WORKERS, os.cpu_count() or 1) if active >= PARALLEL_MIN else 1
    count = 0
    with conn:
        for evals, signals in _scored_batches(db, score, now, workers, where):
            count += len(evals)
            changed = _changed(conn, scorer, evals, signals)
            if not changed:
                continue
            conn.executemany("DELETE FROM signals WHERE scorer = ? AND posting_id = ?", [(scorer, pid) for pid in changed])
            # INSERT OR REPLACE: the per-row triggers of the browse columns fire once, not for a DELETE and an INSERT.
            conn.executemany(_INSERT_EVAL, [row for row in evals if row[0] in changed])
            conn.executemany(_INSERT_SIGNAL, [sig for sig in signals if sig[0] in changed])
    return count


def _changed(conn, scorer: str, evals: list[list], signals: list[tuple]) -> set[int]:
    """Posting ids of ``evals`` whose stored evaluation or signals differ (``computed_at`` aside)."""
    ids = [row[0] for row in evals]
    q = ",".join("?" * len(ids))
    stored = {r[0]: tuple(r) for r in conn.execute(
        f"SELECT {', '.join(EVAL_COLS[:-1])} FROM evaluations WHERE scorer = ? AND posting_id IN ({q})", (scorer, *ids))}
    stored_signals: dict[int, list[tuple]] = defaultdict(list)
    for r in conn.execute("SELECT posting_id, scorer, dimension, position, key, value FROM signals"
                          f" WHERE scorer = ? AND posting_id IN ({q}) ORDER BY posting_id, dimension, position",
                          (scorer, *ids)):
        stored_signals[r[0]].append(tuple(r))
    new_signals: dict[int, list[tuple]] = defaultdict(list)
    for sig in signals:
        new_signals[sig[0]].append(tuple(sig))
    return {
        row[0] for row in evals
        if stored.get(row[0]) != tuple(row[:-1])
        or stored_signals.get(row[0], []) != sorted(new_signals.get(row[0], []), key=lambda t: (t[2], t[3]))
    }


def score_corpus(db: sqlite_utils.Database, *, now: str | None = None, workers: int | None = None) -> dict:
    """Recompute the market statistics and score every active posting with ``jobcrawl-v1``.

    ``workers``: scoring processes; default 1 below ``PARALLEL_MIN`` active postings, else up to 2.

    Returns counts: ``scored`` postings, ``market_stats`` rows stored, ``salary_groups`` with at
    least the minimum sample, ``scorer``.
    """
    now = now or utcnow()
    market, stats_rows = recompute(db, now=now)
    info = taxonomy_info(db)
    scored = _write(db, SCORER, partial(score_posting, market=market, taxonomy_info=info), now, workers)
    sufficient = sum(1 for g in market.salary.values() if g.n >= market.min_sample)
    return {"scorer": SCORER, "scored": scored, "market_stats": stats_rows, "salary_groups": sufficient}


def score_profile(db: sqlite_utils.Database, profile: FitProfile, *, now: str | None = None,
                  workers: int | None = None, where: str = ACTIVE) -> dict:
    """Score the fit of every active posting (or those ``where`` selects) for ``profile`` (scorer
    ``fit:<name>``); returns counts."""
    info = taxonomy_info(db)
    scored = _write(db, profile.scorer, partial(score_fit, profile=profile, taxonomy_info=info), now or utcnow(),
                    workers, where)
    return {"scorer": profile.scorer, "scored": scored}


def agreement_report(db: sqlite_utils.Database, *, scorer: str = SCORER, top: int = 5) -> dict:
    """Agreement of ``scorer`` with the app's own evaluation wherever a posting has both.

    ``mae``: mean absolute error per dimension and overall (over the pairs where both have the
    value); ``within_10``: share of dimension pairs at most 10 apart; ``furthest``: the ``top``
    postings with the largest summed absolute difference over the four dimensions.
    """
    cols = ("overall", *DIMENSIONS)
    pick = ", ".join(f"s.{c}, o.{c}" for c in cols)
    rows = db.execute(
        f"SELECT p.id, p.company, p.title, {pick} FROM evaluations s JOIN evaluations o "
        "ON o.posting_id = s.posting_id AND o.scorer = ? JOIN postings p ON p.id = s.posting_id "
        "WHERE s.scorer = 'source' ORDER BY p.id",
        (scorer,),
    ).fetchall()
    errors: dict[str, list[int]] = {c: [] for c in cols}
    distances = []
    for row in rows:
        pid, company, title, values = row[0], row[1], row[2], row[3:]
        diff = {}
        for i, c in enumerate(cols):
            src, ours = values[2 * i], values[2 * i + 1]
            if src is not None and ours is not None:
                errors[c].append(abs(src - ours))
                diff[c] = {"source": src, "ours": ours}
        total = sum(abs(d["source"] - d["ours"]) for c, d in diff.items() if c != "overall")
        distances.append({"posting_id": pid, "company": company, "title": title, "distance": total, "scores": diff})
    distances.sort(key=lambda d: (-d["distance"], d["posting_id"]))
    dim_errors = [e for c in DIMENSIONS for e in errors[c]]
    return {
        "scorer": scorer,
        "pairs": len(rows),
        "mae": {c: round(sum(e) / len(e), 2) if e else None for c, e in errors.items()},
        "within_10": round(sum(1 for e in dim_errors if e <= 10) / len(dim_errors), 4) if dim_errors else None,
        "furthest": distances[:top],
    }


def format_report(report: dict) -> str:
    """The agreement report as lines for the terminal."""
    if not report["pairs"]:
        return f"agreement with source: no posting has both a source and a {report['scorer']} evaluation"
    mae = " · ".join(f"{c} {v}" for c, v in report["mae"].items() if v is not None)
    lines = [f"agreement with source over {report['pairs']} postings — mean absolute error: {mae}",
             f"dimension scores within 10 points: {report['within_10']:.1%}",
             "furthest apart (source → ours; overall, pay, growth, worklife, mission):"]
    for d in report["furthest"]:
        pairs = ", ".join(f"{v['source']}→{v['ours']}" for v in d["scores"].values())
        lines.append(f"  #{d['posting_id']} {d['company']} · {d['title']}: Σ|Δ| {d['distance']} ({pairs})")
    return "\n".join(lines)


def best_fits(db: sqlite_utils.Database, scorer: str, *, top: int = 5) -> list[dict]:
    """The ``top`` active postings by fit for one profile scorer, best first."""
    return [dict(r) for r in db.query(
        "SELECT p.id, p.company, p.title, p.city, e.overall, e.summary FROM evaluations e JOIN postings p "
        f"ON p.id = e.posting_id WHERE e.scorer = ? AND p.{ACTIVE} ORDER BY e.overall DESC, p.id LIMIT ?",
        [scorer, top],
    )]
