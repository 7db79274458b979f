"""The scoring step over the database: market statistics, our evaluation of every active posting
(scorer ``jobcrawl-v1``, rules in :mod:`normalize.score`), personal fit (``fit:<profile>``,
:mod:`normalize.fit`) and the agreement report against the app's own evaluations. The SQL is
:mod:`crawler.score.store`'s and :mod:`crawler.store.stats`'s.

Only what changed is scored: each evaluation is stored with the digest of everything it depends on
(:func:`normalize.score.score_inputs`: the posting's facts, its skills' taxonomy facts, the market figures it
reads, the rules' version); a posting whose digest is unchanged is not scored again, unless ``force``
(``jobcrawl score --all``). Batched: postings and their section bullets are read 2,000 at a time by id range,
evaluations written with ``executemany``, all in one transaction, so a killed run leaves the
previous scores in place. The app's ``source`` rows and other scorers are never touched; a closed posting
keeps the evaluation it had while it was active. Deterministic: ``now`` is only the ``computed_at`` stamp.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, Callable, Iterator, NamedTuple

import sqlite_utils

from crawler.store import connect_readonly, evidence, file_of
from crawler.score import store
from crawler import procs
from crawler.procs import settle_gc
from normalize.clock import now_iso as utcnow
from normalize.fit import FIT_VERSION, FitProfile, score_fit
from normalize.models import DIMENSIONS, Evaluation
from normalize.score import SCORER, PostingFacts, SkillInfo, score_inputs, score_posting
from normalize.skills import load_taxonomy

from crawler.score.market import recompute



def taxonomy_info(db: sqlite_utils.Database) -> dict[str, SkillInfo]:
    """Category, parent and frontier flag of every skill: the ``skills`` table, else the packaged taxonomy."""
    rows = store.skill_facts(db.conn)
    if rows:
        return {name: SkillInfo(category, parent, bool(frontier)) for name, category, parent, frontier in rows}
    return {s.name: SkillInfo(s.category, s.parent, s.frontier) for s in load_taxonomy().skills}


def _json(kind: type) -> Callable[[Any], Any]:
    return lambda v: kind(json.loads(v)) if v else kind()


_CONVERT: dict[str, Callable[[Any], Any]] = {
    "tags": _json(tuple), "skills": _json(tuple),
    "salary_estimated": bool, "salary_implausible": bool, "signal_estimated": bool, "signal_implausible": bool,
    "months": lambda v: v or 12, "salary_status": lambda v: v or "missing",
}
_CONVERTERS = [(field, _CONVERT.get(field)) for field in store.FACT_COLUMNS]


def _facts(row: tuple, sections: dict[str, list[str]]) -> PostingFacts:
    values = {field: convert(v) if convert else v for (field, convert), v in zip(_CONVERTERS, row[1:])}
    return PostingFacts(sections=sections, **values)


class Rules(NamedTuple):
    """A scorer: its name, what it computes from a posting's facts, and the digest of what that depends on."""

    scorer: str
    score: Callable[[PostingFacts], Evaluation]
    inputs: Callable[[PostingFacts], str]


class Scored(NamedTuple):
    evals: list[tuple]
    unchanged: int


def _score_batch(rules: Rules, raw: store.RawBatch, now: str, stored: dict[int, str], force: bool) -> Scored:
    """The evaluations rows of one batch's postings whose inputs changed (all with ``force``)."""
    rows, sections = raw
    evals, unchanged = [], 0
    for row in rows:
        facts = _facts(row, sections.get(row[0], {}))
        digest = rules.inputs(facts)
        if not force and stored.get(row[0]) == digest:
            unchanged += 1
            continue
        evals.append(store.evaluation_row(row, rules.score(facts), now, digest))
    return Scored(evals, unchanged)


_WORKER: dict[str, Any] = {}


def _worker_init(rules: Rules, path: str, niceness: int) -> None:
    settle_gc()
    if niceness:
        os.nice(niceness)
    _WORKER["rules"] = rules
    _WORKER["conn"] = connect_readonly(path)


def _batch(conn: sqlite3.Connection, rules: Rules, first: int, last: int, now: str, force: bool) -> Scored:
    return _score_batch(rules, store.read_range(conn, first, last), now,
                        {} if force else store.digests(conn, rules.scorer, first, last), force)


def _worker_batch(first: int, last: int, now: str, force: bool) -> Scored:
    return _batch(_WORKER["conn"], _WORKER["rules"], first, last, now, force)


def _scored_batches(db: sqlite_utils.Database, rules: Rules, now: str, workers: int, force: bool,
                    niceness: int = 0) -> Iterator[Scored]:
    """Scored batches in id order: in this process, or in ``workers`` spawned processes (the scoring is
    pure Python and CPU-bound; this process writes meanwhile). At most 2 × workers batches are in
    flight; results come back in submission order, so the output is the same either way.

    Workers read their batches and stored digests from the file themselves (committed rows) and are sent only
    id ranges: a worker that dies (killed, out of memory) then fails the step with BrokenProcessPool. A batch of
    rows larger than the pipe, blocked half-written when its reader died, hung the executor's shutdown for good.
    """
    path = file_of(db)
    if workers <= 1 or path is None:
        for first, last in store.id_ranges(db.conn):
            yield _batch(db.conn, rules, first, last, now, force)
        return
    context = procs.context()
    initializer, initargs = procs.with_environment(_worker_init, rules, path, niceness)
    with ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=initargs) as pool:
        pending: deque = deque()
        for first, last in store.id_ranges(db.conn):
            pending.append(pool.submit(_worker_batch, first, last, now, force))
            if len(pending) > 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _write(db: sqlite_utils.Database, rules: Rules, now: str, workers: int | None, force: bool,
           before_commit: Callable[[], None] | None = None, niceness: int = 0) -> dict[str, int]:
    """Store ``rules``' evaluation of every active posting whose inputs changed (all with ``force``), in one
    transaction, with ``now`` as their ``computed_at``; ``before_commit`` is called last in that transaction (if it
    raises, nothing is stored). Returns ``scored`` and ``unchanged`` postings."""
    conn = db.conn
    if workers is None:
        workers = procs.scoring(None, store.active_count(conn))
    scored = unchanged = 0
    with conn:
        for batch in _scored_batches(db, rules, now, workers, force, niceness):
            scored += len(batch.evals)
            unchanged += batch.unchanged
            if batch.evals:
                store.write_evaluations(conn, batch.evals)
        if scored:
            evidence.prune(conn)
        if before_commit is not None:
            before_commit()
    return {"scored": scored, "unchanged": unchanged}


def score_corpus(db: sqlite_utils.Database, *, now: str | None = None, workers: int | None = None,
                 force: bool = False, before_commit: Callable[[], None] | None = None, niceness: int = 0) -> dict:
    """Recompute the market statistics and score, with ``jobcrawl-v1``, every active posting whose inputs
    changed since it was last scored (every one with ``force``).

    ``workers``: scoring processes (default: the rule of crawler/procs.py for the active postings).
    ``before_commit``: called last in the evaluations' transaction (the run writes its dedupe there).
    ``niceness``: added to the scoring processes' own (``os.nice``), so that they yield the CPU to a step
    running beside them (the run's dedupe planning) and take what it leaves.

    Returns counts: ``scored`` postings, ``unchanged`` (not scored again), ``market_stats`` rows stored,
    ``salary_groups`` with at least the minimum sample, ``scorer``.
    """
    now = now or utcnow()
    market, stats_rows = recompute(db, now=now)
    info = taxonomy_info(db)
    rules = Rules(SCORER, partial(score_posting, market=market, taxonomy_info=info, rendered=False),
                  partial(score_inputs, market=market, taxonomy_info=info))
    counts = _write(db, rules, now, workers, force, before_commit, niceness)
    sufficient = sum(1 for g in market.salary.values() if g.n >= market.min_sample)
    return {"scorer": SCORER, **counts, "market_stats": stats_rows, "salary_groups": sufficient}


def score_profile(db: sqlite_utils.Database, profile: FitProfile, *, now: str | None = None,
                  workers: int | None = None, force: bool = False) -> dict:
    """Score the fit of every active posting for ``profile`` (scorer ``fit:<name>``), as :func:`score_corpus`
    does (only postings whose inputs or the profile changed); returns counts."""
    info = taxonomy_info(db)
    rules = Rules(profile.scorer, partial(score_fit, profile=profile, taxonomy_info=info),
                  partial(score_inputs, market=None, taxonomy_info=info, version=f"fit/{FIT_VERSION}",
                          extra=profile.inputs()))
    return {"scorer": profile.scorer, **_write(db, rules, now or utcnow(), workers, force)}


def agreement_report(db: sqlite_utils.Database, *, scorer: str = SCORER, top: int = 5) -> dict:
    """Agreement of ``scorer`` with the app's own evaluation wherever a posting has both.

    ``mae``: mean absolute error per dimension and overall (over the pairs where both have the
    value); ``within_10``: share of dimension pairs at most 10 apart; ``furthest``: the ``top``
    postings with the largest summed absolute difference over the four dimensions.
    """
    cols = ("overall", *DIMENSIONS)
    rows = store.agreement_pairs(db.conn, scorer, cols)
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


def report_lines(report: dict) -> list[str]:
    """The agreement report as lines for the terminal (each printed escaped: it names postings)."""
    if not report["pairs"]:
        return [f"agreement with source: no posting has both a source and a {report['scorer']} evaluation"]
    mae = " · ".join(f"{c} {v}" for c, v in report["mae"].items() if v is not None)
    lines = [f"agreement with source over {report['pairs']} postings — mean absolute error: {mae}",
             f"dimension scores within 10 points: {report['within_10']:.1%}",
             "furthest apart (source → ours; overall, pay, growth, worklife, mission):"]
    for d in report["furthest"]:
        pairs = ", ".join(f"{v['source']}→{v['ours']}" for v in d["scores"].values())
        lines.append(f"  #{d['posting_id']} {d['company']} · {d['title']}: Σ|Δ| {d['distance']} ({pairs})")
    return lines


def best_fits(db: sqlite_utils.Database, scorer: str, *, top: int = 5) -> list[dict]:
    """The ``top`` active postings by fit for one profile scorer, best first."""
    return store.best(db.conn, scorer, top)
