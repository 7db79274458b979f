"""Reading postings back: export records (JSONL/CSV), shared by ``jobcrawl export`` and tests.

An export record has the shape of :class:`normalize.models.Posting` (nested salary, sections,
insights, source evaluation, times in UTC; ``posted_local`` and :data:`LOCAL_TIMES` in the posting's zone) plus
``evaluation`` (ours) once the scoring step has run — every level, the overall's as ``overall_level``,
``信息不足`` where the evidence was too little (its number then null), and ``completeness`` — and the
dedupe evidence: ``cluster_id``, ``duplicate_of`` (the canonical member), ``dedupe_reason``,
``dedupe_similarity``, ``dedupe_matched`` (the member it matched), ``cross_company``, ``different_city``. The
export (:func:`iter_export`) adds the application of the posting's job (``jobcrawl track``): ``application_status``
and ``application_since`` (None when untracked), and its signals (:func:`with_signals`): ``ghost_signals``,
``likely_employer``, ``likely_employer_evidence``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Iterator

import sqlite_utils

from normalize.dates import local_time, source_zone
from normalize.evaluation import unpack_evidence, unpack_signals
from normalize.ghost import CODES, Employer, Signal, sentence
from normalize.models import DIMENSIONS
from normalize.score import FACT_RULES, SCORER, PostingFacts, render_evaluation

from crawler.store import extra
from crawler.store.dedupe import ALONE
from crawler.store.evidence import expand
from crawler.store.schema import app_columns, app_join, unflatten_posting
from crawler.store.sections import section_bullets
from crawler.store.skills import categories, evidence_records

BATCH = 500
_POSTINGS = (f"SELECT p.*, {app_columns()}, (SELECT sha256 FROM raw_inputs WHERE id = p.raw_input_id) AS raw_input_sha256"
             f" FROM postings p {app_join()}")
"""Postings rows as :func:`crawler.store.schema.unflatten_posting` reads them."""
LOCAL_TIMES = ("first_seen", "last_seen", "closed_at")
"""UTC times of a posting that the export also gives as ``<name>_local`` in the posting's zone."""


def posting_zone(rec: dict[str, Any]) -> str:
    """The zone of a posting's local times: its stored ``tz``, else (a row parsed before migration 0024 stored it)
    the rule that set it (:func:`normalize.dates.source_zone` on title, company and city)."""
    return source_zone(rec.get("tz"), rec.get("title"), rec.get("company"), rec.get("city"))


def _evaluation(row: dict[str, Any], rec: dict[str, Any]) -> dict[str, Any]:
    """An ``evaluations`` row of the posting ``rec`` as the export gives it: evidence and signals read back from their
    compact form; a ``jobcrawl-v1`` row's sentences, which it does not store, rendered from its scores, evidence and
    the posting (:func:`normalize.score.render_evaluation`); the facts stored for that (:data:`FACT_RULES`) are not
    shown as evidence."""
    out: dict[str, Any] = {"scorer": row["scorer"], "overall": row["overall"], "overall_level": row["overall_level"]}
    for dim in DIMENSIONS:
        out[dim] = row[dim]
    out["levels"] = {d: row[f"{d}_level"] for d in DIMENSIONS if row[f"{d}_level"]}
    out["completeness"] = row.get("completeness")
    evidence = unpack_evidence(row["evidence"])
    if row["scorer"] == SCORER and row["summary"] is None and evidence:
        prose = render_evaluation({d: row[d] for d in DIMENSIONS}, evidence, PostingFacts.from_record(rec))
        out["summary"], out["notes"], out["explanations"] = prose.summary, prose.notes, prose.explanations
        out["signals"] = {d: [{"key": k, "value": v} for k, v in pairs] for d, pairs in prose.signals.items()}
    else:
        out["summary"] = row["summary"]
        out["notes"] = json.loads(row["notes"] or "[]")
        out["explanations"] = json.loads(row["explanations"] or "{}")
        out["signals"] = unpack_signals(json.loads(row["signals"] or "{}"), DIMENSIONS)
    out["evidence"] = {d: [e for e in items if not (isinstance(e, dict) and e.get("rule") in FACT_RULES)]
                       for d, items in evidence.items()}  # the facts the sentences are rendered from, not evidence
    out["problems"] = json.loads(row["problems"] or "[]")
    return out


def _records(db: sqlite_utils.Database, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assemble export records for a batch of postings rows (children fetched in one query each)."""
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    q = ",".join("?" * len(ids))
    children: dict[str, dict[int, list[dict[str, Any]]]] = {}
    for table, order in (("section_texts", "seq"), ("posting_skills", "seq"), ("evaluations", "scorer")):
        grouped: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for child in db.query(f"SELECT * FROM {table} WHERE posting_id IN ({q}) ORDER BY posting_id, {order}", ids):
            grouped[child["posting_id"]].append(child)
        children[table] = grouped
    evals = [e for pid in ids for e in children["evaluations"][pid]]
    posting = {r["id"]: r for r in rows}
    for e, packed in zip(evals, expand(db.conn, [e["evidence"] for e in evals],
                                       [posting[e["posting_id"]] for e in evals])):
        e["evidence"] = packed

    clusters = {r[0]: r[1:3] + (r[3:] if r[3] is not None else ALONE) for r in db.execute(
        "SELECT s.posting_id, s.cluster_id, coalesce(c.canonical_posting_id, s.posting_id), m.reason, m.similarity,"
        " m.matched_posting_id, m.cross_company, m.different_city FROM dedupe_signatures s"
        " LEFT JOIN cluster_members m ON m.posting_id = s.posting_id LEFT JOIN clusters c ON c.id = m.cluster_id"
        f" WHERE s.posting_id IN ({q}) AND s.cluster_id IS NOT NULL", ids)}
    skill_categories = categories(db)
    out = []
    for row, extra_object in zip(rows, extra.expand(db.conn, [r["extra"] for r in rows])):
        pid = row["id"]
        rec = unflatten_posting(row | {"extra": extra_object})
        sections: dict[str, list[str]] = {}
        headings: dict[str, str] = {}
        for s in children["section_texts"][pid]:
            sections[s["key"]] = section_bullets(s["text"])
            headings[s["key"]] = s["heading"] or ""
        rec["sections"] = sections
        rec["section_headings"] = headings
        rec["skill_evidence"] = evidence_records(children["posting_skills"][pid], sections, rec.get("tags") or [],
                                                 skill_categories)
        evaluations = {e["scorer"]: _evaluation(e, rec) for e in children["evaluations"][pid]}
        rec["source_evaluation"] = evaluations.pop("source", None)
        ours = sorted(k for k in evaluations if k.startswith("jobcrawl-"))
        rec["evaluation"] = evaluations[ours[-1]] if ours else None
        fits = {k.split(":", 1)[1]: v for k, v in evaluations.items() if k.startswith("fit:")}
        if fits:
            rec["fit"] = fits
        rec["version"] = row.get("version")
        zone = posting_zone(rec)
        for name in LOCAL_TIMES:
            rec[f"{name}_local"] = local_time(rec.get(name), zone)
        cluster_id, canonical, reason, similarity, matched, cross, other_city = clusters.get(pid) or (None,) * 7
        rec["cluster_id"] = cluster_id
        rec["duplicate_of"] = canonical if canonical != pid else None
        rec["dedupe_reason"], rec["dedupe_similarity"], rec["dedupe_matched"] = reason, similarity, matched
        rec["cross_company"] = bool(cross) if cluster_id is not None else None
        rec["different_city"] = bool(other_city) if cluster_id is not None else None
        out.append(rec)
    return out


def export_record(db: sqlite_utils.Database, posting_id: int) -> dict[str, Any]:
    """The export record of one posting."""
    rows = list(db.query(f"{_POSTINGS} WHERE p.id = ?", [posting_id]))
    records = _records(db, rows)
    return records[0] if records else {}


def iter_export(db: sqlite_utils.Database, *, where: str | None = None, params: list | None = None) -> Iterator[dict[str, Any]]:
    """Every posting as an export record, in id order, read in batches of 500."""
    last = 0
    cond = f" AND ({where})" if where else ""
    while True:
        rows = list(db.query(f"{_POSTINGS} WHERE p.id > ?{cond} ORDER BY p.id LIMIT {BATCH}", [last, *(params or [])]))
        if not rows:
            return
        yield from with_signals(db, _with_applications(db, _records(db, rows)))
        last = rows[-1]["id"]


def _with_applications(db: sqlite_utils.Database, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` with the status and since of their job's application (view ``applications``)."""
    ids = [r["id"] for r in records]
    found = {pid: (status, since) for pid, status, since in db.execute(
        f"SELECT posting_id, status, since FROM applications WHERE posting_id IN ({','.join('?' * len(ids))})", ids)}
    for rec in records:
        rec["application_status"], rec["application_since"] = found.get(rec["id"], (None, None))
    return records


def with_signals(db: sqlite_utils.Database, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` with their ghost signals (``ghost_signals``: a list of ``{code, sentence}``, empty for none; a
    job's signals are on its canonical posting, not on its duplicates) and, for an agency's or hidden posting, ``likely_employer`` and
    ``likely_employer_evidence`` (``{posting_id, similarity, rule}``; both None when not found)."""
    ids = [r["id"] for r in records]
    q = ",".join("?" * len(ids))
    signals: dict[int, list[Signal]] = defaultdict(list)
    for pid, code, n, days, at, found in db.execute(
            f"SELECT posting_id, code, n, days, at, ids FROM ghost_signals WHERE posting_id IN ({q})", ids):
        signals[pid].append(Signal(code, n, days, at, tuple(json.loads(found or "[]"))))
    employers = {r[0]: Employer(*r[1:]) for r in db.execute(
        "SELECT posting_id, company, evidence_posting_id, similarity, rule FROM likely_employers"
        f" WHERE posting_id IN ({q})", ids)}
    for rec in records:
        rec["ghost_signals"] = [{"code": s.code, "sentence": sentence(s)}
                                for s in sorted(signals.get(rec["id"], []), key=lambda s: CODES.index(s.code))]
        employer = employers.get(rec["id"])
        rec["likely_employer"] = employer.company if employer else None
        rec["likely_employer_evidence"] = ({"posting_id": employer.posting_id, "similarity": employer.similarity,
                                            "rule": employer.rule} if employer else None)
    return records


def search(db: sqlite_utils.Database, query: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """Postings matching every term of ``query`` in title, company, city, skill names or JD text
    (:func:`crawler.store.fts.search_ids`: a Chinese term of any length matches as a substring, a Latin
    term whole words or a part of a compound name, ``term*`` a prefix): id, company, title, city,
    by id, at most ``limit``."""
    from crawler.store.fts import search_ids

    ids = search_ids(db.conn, query, limit=limit)
    if not ids:
        return []
    return list(db.query(f"SELECT id, company, title, city FROM postings WHERE id IN ({','.join('?' * len(ids))})"
                         " ORDER BY id", ids))


def search_clauses(query: str, id_column: str = "id") -> tuple[list[str], list[str]]:
    """The SQL condition on ``id_column`` (and its parameter) that keeps the postings matching every term of
    ``query``, as :func:`search` finds them (the one full-text index, crawler/store/fts.py); none for an empty query."""
    from crawler.store.fts import TABLE, fts_query

    expression = fts_query(query)
    if expression == '""':
        return [], []
    return [f"{id_column} IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?)"], [expression]


def export_filter(*, open_only: bool = False, since: str | None = None, min_score: int | None = None,
                  search: str | None = None, sources: list[str] | tuple[str, ...] = ()) -> tuple[str | None, list]:
    """The ``where`` and ``params`` of :func:`iter_export` for ``jobcrawl export``'s filters, all of which must hold:
    open (not closed), posted on or after ``since`` (an ISO UTC time; postings without a post time: first seen),
    the listing's score (ours, else the app's) at least ``min_score``, every term of ``search`` (as :func:`search`),
    from one of ``sources``."""
    clauses: list[str] = []
    params: list = []
    if open_only:
        clauses.append("closed_at IS NULL")
    if since:
        clauses.append("coalesce(posted_at, first_seen) >= ?")
        params.append(since)
    if min_score is not None:
        clauses.append("score >= ?")
        params.append(min_score)
    if search:
        terms, values = search_clauses(search)
        clauses += terms
        params += values
    if sources:
        clauses.append(f"source IN ({', '.join('?' * len(sources))})")
        params += list(sources)
    return (" AND ".join(clauses) or None), params
