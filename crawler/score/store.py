"""SQL of the scoring step: the postings' facts read by id range, our evaluations written, the
stored input digests, the agreement report's pairs, best fits and the skills' taxonomy facts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

from normalize.evaluation import POSTING_FIELDS
from normalize.models import Evaluation

from crawler.store import evidence, extra
from crawler.store.rows import EVAL_COLS, evaluation_values, scorer_stored, stored_columns
from crawler.store.schema import app_join
from crawler.store.sections import stored_bullets

ACTIVE = "closed_at IS NULL"
BATCH = 2000
FACT_COLUMNS = {
    # PostingFacts field: postings or app_market column
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
SCORE_COLS = [*EVAL_COLS, "completeness", "inputs_digest"]
"""Columns of our evaluations' rows (:func:`evaluation_row`)."""
_SELECT = (f"SELECT p.id, {', '.join(f'[{c}]' for c in FACT_COLUMNS.values())} FROM postings p {app_join()}")
_KEY = ("posting_id", "scorer")
_INSERT_EVAL = (f"INSERT INTO evaluations ({stored_columns(SCORE_COLS)}) VALUES ({', '.join('?' * len(SCORE_COLS))})"
                f" ON CONFLICT ({stored_columns(_KEY)}) DO UPDATE SET"
                f" {stored_columns([c for c in SCORE_COLS if c not in _KEY], '[{0}] = excluded.[{0}]')}")
_EVIDENCE_AT = SCORE_COLS.index("evidence")
_EXTRA_AT = 1 + list(FACT_COLUMNS).index("extra")
_POSTING_AT = [(c, 1 + list(FACT_COLUMNS.values()).index(c)) for c in POSTING_FIELDS]

RawBatch = tuple[list[tuple], dict[int, dict[str, list[str]]]]
"""Postings rows (id, then the FACT_COLUMNS, ``extra`` as its object) and their section bullets by posting and key."""


def id_ranges(conn: sqlite3.Connection, where: str = ACTIVE, batch: int = BATCH) -> Iterator[tuple[int, int]]:
    """(first, last) id of each batch of ``batch`` postings matching ``where``, in id order."""
    ids = [row[0] for row in conn.execute(f"SELECT id FROM postings WHERE {where} ORDER BY id")]
    for i in range(0, len(ids), batch):
        yield ids[i], ids[min(i + batch, len(ids)) - 1]


def read_range(conn: sqlite3.Connection, first: int, last: int, where: str = ACTIVE) -> RawBatch:
    """Postings rows matching ``where`` with ids ``first``..``last``, and their bullets in order."""
    rows = conn.execute(f"{_SELECT} WHERE id BETWEEN ? AND ? AND ({where}) ORDER BY id", (first, last)).fetchall()
    rows = [(*row[:_EXTRA_AT], obj, *row[_EXTRA_AT + 1:])
            for row, obj in zip(rows, extra.expand(conn, [row[_EXTRA_AT] for row in rows]))]
    return rows, stored_bullets(conn, "posting_id BETWEEN ? AND ?", (first, last))


def active_count(conn: sqlite3.Connection) -> int:
    return conn.execute(f"SELECT count(*) FROM postings WHERE {ACTIVE}").fetchone()[0]


def digests(conn: sqlite3.Connection, scorer: str, first: int, last: int) -> dict[int, int]:
    """The stored input digest of ``scorer``'s evaluations of postings ``first``..``last``."""
    return dict(conn.execute("SELECT posting_id, inputs_digest FROM evaluations WHERE scorer_stored = ?"
                             " AND posting_id BETWEEN ? AND ?", (scorer_stored(scorer), first, last)))


def posting_fields(row: tuple) -> dict[str, Any]:
    """The postings columns of ``POSTING_FIELDS`` (normalize/evaluation.py) of a row of :func:`read_range`."""
    return {c: row[i] for c, i in _POSTING_AT}


def evaluation_row(row: tuple, ev: Evaluation, computed_at: str, digest: int) -> tuple:
    """Our evaluation of the posting ``row`` (of :func:`read_range`) as one ``evaluations`` row (:data:`SCORE_COLS`:
    :func:`~crawler.store.rows.evaluation_values`, the evidence without the values equal to the posting's, then its
    completeness and input digest); a fit's levels as it gives them (none)."""
    return (row[0], *evaluation_values(ev, computed_at, ev.levels.get("overall"), posting_fields(row)),
            ev.completeness, digest)


def write_evaluations(conn: sqlite3.Connection, evals: list[tuple]) -> None:
    """Store the evaluations of ``evals`` (rows of :func:`evaluation_row`), each replacing the scorer's earlier one of
    its posting in place: an update, which the score trigger compares, not a delete and an insert, which it would
    follow twice (REPLACE fires the delete triggers where recursive triggers are on, as sqlite_utils sets them)."""
    conn.executemany(_INSERT_EVAL, evidence.intern_rows(conn, evals, _EVIDENCE_AT))


def skill_facts(conn: sqlite3.Connection) -> list[tuple[str, str, str | None, int]]:
    """(name, category, parent, frontier) of every skill of the stored taxonomy."""
    return conn.execute("SELECT name, category, parent, frontier FROM skills").fetchall()


def agreement_pairs(conn: sqlite3.Connection, scorer: str, columns: Iterable[str]) -> list[tuple]:
    """(posting id, company, title, then per column the app's value and ours) wherever a posting has both."""
    pick = ", ".join(f"s.{c}, o.{c}" for c in columns)
    return conn.execute(
        f"SELECT p.id, p.company, p.title, {pick} FROM evaluations s JOIN evaluations o "
        "ON o.posting_id = s.posting_id AND o.scorer_stored = ? JOIN postings p ON p.id = s.posting_id "
        "WHERE s.scorer_stored = ? ORDER BY p.id", (scorer_stored(scorer), scorer_stored("source"))).fetchall()


def best(conn: sqlite3.Connection, scorer: str, top: int) -> list[dict]:
    """The ``top`` active postings by ``scorer``'s overall, best first."""
    cur = conn.execute(
        "SELECT p.id, p.company, p.title, p.city, e.overall, e.summary FROM evaluations e JOIN postings p "
        f"ON p.id = e.posting_id WHERE e.scorer_stored = ? AND p.{ACTIVE} ORDER BY e.overall DESC, p.id LIMIT ?",
        (scorer_stored(scorer), top))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur]
