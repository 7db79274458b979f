"""SQLite schema: created and changed only through sqlite-utils ``Migrations``.

The ``postings`` columns are the flattening of :class:`normalize.models.Posting` (nested models
become prefixed columns: ``salary.min`` → ``salary_min``), so the pydantic field descriptions are
the one documentation of every column (:func:`column_descriptions`, used by Datasette's metadata).
Sections and evaluations live in child tables; the AI-insight lists are one JSON column.

Migrations are frozen, explicit DDL: never derived from the models, so changing a model never changes
an old migration. A model field that needs a column gets a new migration (``ALTER TABLE … ADD
COLUMN``); tests/test_migrations.py fails while a model column has none.
"""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils
from pydantic import BaseModel
from sqlite_utils.migrations import Migrations

from normalize.models import Posting

from . import ReadOnlyDatabase, connect, connect_readonly, require_writable, unwritable

# Posting fields that live in child tables, not in postings columns.
CHILD_FIELDS = {"sections", "section_headings", "source_evaluation", "skill_evidence"}

migrations = Migrations("jobcrawl")


# --------------------------------------------------------------------------- model ↔ columns


def _unwrap(annotation: Any) -> Any:
    """``X | None`` → X."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _sql_type(annotation: Any) -> type:
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if annotation is bool or annotation is int:
        return int
    if annotation is float:
        return float
    if origin in (list, dict) or annotation in (list, dict):
        return str  # JSON text
    return str


def model_columns(model: type[BaseModel], prefix: str = "", skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, tuple[str, ...], type, str]]:
    """Yield ``(column, path, python_type, description)`` for every flattened field of ``model``."""
    for name, info in model.model_fields.items():
        if name in skip:
            continue
        annotation = _unwrap(info.annotation)
        path = (name,)
        if _is_model(annotation):
            for column, sub, typ, desc in model_columns(annotation, prefix + name + "_"):
                yield column, path + sub, typ, desc
        else:
            yield prefix + name, path, _sql_type(info.annotation), info.description or ""


POSTING_COLUMNS = list(model_columns(Posting, skip=frozenset(CHILD_FIELDS)))


def _leaf(path: tuple[str, ...]) -> Any:
    """The annotation of the field a flattened column path ends at."""
    model: type[BaseModel] = Posting
    annotation: Any = None
    for part in path:
        annotation = _unwrap(model.model_fields[part].annotation)
        if _is_model(annotation):
            model = annotation
    return annotation


JSON_COLUMNS = {c for c, path, _, _ in POSTING_COLUMNS if typing.get_origin(_leaf(path)) in (list, dict)}
BOOL_COLUMNS = {c for c, path, _, _ in POSTING_COLUMNS if _leaf(path) is bool}


def flatten_posting(posting: Posting) -> dict[str, Any]:
    """A :class:`Posting` as one ``postings`` row (JSON text for lists and dicts)."""
    data = posting.model_dump(exclude=CHILD_FIELDS)
    row: dict[str, Any] = {}
    for column, path, _, _ in POSTING_COLUMNS:
        value: Any = data
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        if column in JSON_COLUMNS:
            value = json.dumps(value, ensure_ascii=False)
        elif isinstance(value, bool):
            value = int(value)
        row[column] = value
    return row


def unflatten_posting(row: dict[str, Any]) -> dict[str, Any]:
    """A ``postings`` row back into the nested shape of :class:`Posting` (child fields not filled)."""
    out: dict[str, Any] = {}
    for column, path, _, _ in POSTING_COLUMNS:
        value = row.get(column)
        if column in JSON_COLUMNS and isinstance(value, str):
            value = json.loads(value)
        elif column in BOOL_COLUMNS and value is not None:
            value = bool(value)
        target = out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = value
    return out


def column_descriptions() -> dict[str, dict[str, str]]:
    """Table → column → description, from the pydantic models (for Datasette metadata)."""
    posting = {column: desc for column, _, _, desc in POSTING_COLUMNS}
    posting.update({"raw_input_id": "Raw input this version was parsed from (or that last gave it unchanged).", "version": "Version number, 1 for the first."})
    posting.update(POSTING_EXTRA_DOCS)
    return {"postings": posting, **CHILD_TABLE_DOCS}


POSTING_EXTRA_DOCS: dict[str, str] = {}
"""Postings columns that are not fields of the model, added by later migrations."""


CHILD_TABLE_DOCS: dict[str, dict[str, str]] = {
    "skills": {
        "name": "Canonical skill name.", "category": "language, framework, gpu, compiler, tool, model, technique, infra, data, domain or soft.",
        "parent": "Broader skill (FlashAttention → attention optimization).", "aliases": "Aliases matched, English and Chinese (JSON list).",
        "frontier": "1 for frontier / emerging technology.",
    },
    "posting_skills": {
        "posting_id": "Posting.", "skill": "Canonical skill.", "section": "tags, about, requirements, responsibilities, preferred …",
        "seq": "Order of the hit in the posting (tags first, then sections in order).", "category": "Skill category.",
        "count": "Occurrences in that section.", "first_offset": "Offset of the first occurrence in the section text.",
        "matched": "Text as written.", "snippet": "About 40 characters around the first occurrence.",
    },
    "dedupe_signatures": {
        "posting_id": "Posting.", "content_hash": "Content hash the signature was computed from.",
        "signature": "MinHash signature (datasketch LeanMinHash bytes) of the requirement and responsibility bullets.",
        "company": "Company, normalized for matching.", "title": "Title, normalized for matching.",
        "city": "City, normalized for matching.", "fingerprint": "Exact content fingerprint (company, title, city, bullets).",
    },
    "clusters": {
        "id": "Cluster id.", "canonical_posting_id": "The member shown for the cluster: most complete, then earliest.",
        "size": "Members (postings) in the cluster.", "companies": "Distinct companies among members (names normalized for matching).",
        "cities": "Distinct cities among members (different openings of one job).",
        "reasons": "How members joined (JSON counts: new, b = same fingerprint, c = near-duplicate).",
        "cross_company": "1 when a member is a copy under another company (staffing agency).",
        "first_seen": "Earliest first_seen of the members.", "last_seen": "Latest last_seen of the members.",
    },
    "cluster_members": {
        "posting_id": "Posting.", "cluster_id": "Its cluster.",
        "reason": "new (first of its cluster), b (same content fingerprint), c (near-duplicate text).",
        "similarity": "Estimated Jaccard similarity with the matched posting (1.0 for new and b).",
        "matched_posting_id": "The posting it matched when it joined.",
        "cross_company": "1 when it matched a posting of another company.",
        "different_city": "1 when it matched a posting in another city.",
    },
    "meta": {"key": "Setting name (taxonomy_version: the taxonomy the stored skills come from).", "value": "Its value."},
    "raw_inputs": {
        "id": "Row id.", "source": "Spider that read the input.", "locator": "Path relative to the ingest root, or URL.",
        "sha256": "SHA-256 of the input bytes.", "size": "Bytes.", "encoding": "Encoding it was decoded with.",
        "text": "The input verbatim, decoded (texts over 16,384 characters are in text_zlib instead).",
        "body": "The bytes, kept only when undecodable.",
        "fetched_at": "When it was read (UTC).", "as_of": "Anchor for relative times (UTC).",
        "status": "parsed, partial (some postings quarantined) or quarantined, as its last parse ended.",
        "error": "Why its last parse quarantined it.",
        "postings": "Postings its last parse made.", "run_id": "Run that first stored it.",
    },
    "sections": {
        "posting_id": "Posting.", "seq": "Order of the bullet in the posting.",
        "key": "Canonical section key (about, requirements, responsibilities, preferred, benefits) or the heading as written.",
        "heading": "Heading as written.", "position": "Order of the bullet within its section.", "text": "Bullet text.",
    },
    "evaluations": {
        "posting_id": "Posting.", "scorer": "`source` (the app's own) or ours (`jobcrawl-vN`, `fit:<profile>`).",
        "overall": "综合评分 0–100.", "pay": "薪资福利 0–100.", "growth": "成长发展 0–100.",
        "worklife": "工作生活 0–100.", "mission": "使命价值 0–100.",
        "overall_level": "Level of the overall score.", "pay_level": "较低 (<60), 中等 (60–79), 较高 (≥80).",
        "growth_level": "Level of growth.", "worklife_level": "Level of work-life.", "mission_level": "Level of mission.",
        "summary": "One-line verdict.", "notes": "Further summary lines (JSON list).",
        "explanations": "Explanation per dimension (JSON).", "evidence": "Rule evidence per dimension (JSON).",
        "problems": "Inconsistencies found in the source (JSON list).", "computed_at": "When it was stored (UTC).",
    },
    "signals": {
        "posting_id": "Posting.", "scorer": "Evaluation it belongs to.", "dimension": "pay, growth, worklife or mission.",
        "position": "Order within the dimension.", "key": "Signal key (薪资信号, 技术栈 …).", "value": "Signal value.",
    },
    "posting_versions": {
        "id": "Row id.", "posting_id": "Posting.", "version": "Version number of the snapshot.",
        "content_hash": "Content hash of that version.", "superseded_at": "When a newer version replaced it (UTC).",
        "snapshot": "The whole exported record of that version (JSON).",
    },
    "quarantine": {
        "id": "Row id.", "raw_input_id": "Raw input the problem is in.", "source": "Spider.",
        "locator": "Input path or URL.", "position": "Posting index in the input; -1 for the whole input.",
        "input_sha256": "SHA-256 of the input.", "reason": "Reason code (empty, binary, truncated, no_posting …).",
        "detail": "The problem in one line.", "text": "The offending text.",
        "at": "When it was quarantined (UTC); a row stays until its input is parsed again.", "run_id": "Run that found it.",
    },
    "runs": {
        "id": "Row id.", "kind": "ingest, crawl, score, dedupe, retag.", "started": "Start (UTC).", "finished": "End (UTC).",
        "status": "running, ok, partial (some input quarantined), interrupted, failed.", "args": "Arguments (JSON).",
        "files": "Inputs read.", "found": "Postings found.", "new": "New postings.", "updated": "Postings with a new version.",
        "unchanged": "Postings seen again unchanged.", "quarantined": "Inputs or postings quarantined.",
        "closed": "Postings marked closed.", "stats": "All counters of the run (JSON).",
    },
}


# --------------------------------------------------------------------------- migrations


# m001 as it has created databases since commit 1bc4cc5 (2026-11-29). Databases made before that got fewer
# postings columns from it (m001 was then derived from the model); m002 and m003 add those there.
M001_SQL = (
    """CREATE TABLE "runs" (
   "id" INTEGER PRIMARY KEY,
   "kind" TEXT,
   "started" TEXT,
   "finished" TEXT,
   "status" TEXT,
   "args" TEXT,
   "files" INTEGER,
   "found" INTEGER,
   "new" INTEGER,
   "updated" INTEGER,
   "unchanged" INTEGER,
   "quarantined" INTEGER,
   "closed" INTEGER,
   "stats" TEXT
)""",
    """CREATE TABLE "raw_inputs" (
   "id" INTEGER PRIMARY KEY,
   "source" TEXT,
   "locator" TEXT,
   "sha256" TEXT,
   "size" INTEGER,
   "encoding" TEXT,
   "text" TEXT,
   "body" BLOB,
   "fetched_at" TEXT,
   "as_of" TEXT,
   "status" TEXT,
   "error" TEXT,
   "postings" INTEGER,
   "run_id" INTEGER REFERENCES "runs"("id")
)""",
    """CREATE UNIQUE INDEX "idx_raw_inputs_source_locator_sha256"
    ON "raw_inputs" ("source", "locator", "sha256")""",
    """CREATE TABLE "postings" (
   "id" INTEGER PRIMARY KEY,
   "key" TEXT,
   "source" TEXT,
   "source_id" TEXT,
   "locator" TEXT,
   "position" INTEGER,
   "url" TEXT,
   "company" TEXT,
   "title" TEXT,
   "city" TEXT,
   "district" TEXT,
   "location_raw" TEXT,
   "category" TEXT,
   "seniority" TEXT,
   "employment_type" TEXT,
   "work_mode" TEXT,
   "remote" INTEGER,
   "experience" TEXT,
   "experience_min_years" REAL,
   "experience_max_years" REAL,
   "education" TEXT,
   "company_info_raw" TEXT,
   "company_info_industry" TEXT,
   "company_info_funding_stage" TEXT,
   "company_info_size_min" INTEGER,
   "company_info_size_max" INTEGER,
   "posted_raw" TEXT,
   "posted_at" TEXT,
   "posted_approx" INTEGER,
   "is_new" INTEGER,
   "published_label" TEXT,
   "valid_through" TEXT,
   "tags" TEXT,
   "skills" TEXT,
   "salary_raw" TEXT,
   "salary_status" TEXT,
   "salary_min" REAL,
   "salary_max" REAL,
   "salary_currency" TEXT,
   "salary_period" TEXT,
   "salary_months" INTEGER,
   "salary_monthly_min" REAL,
   "salary_monthly_max" REAL,
   "salary_annual_min" REAL,
   "salary_annual_max" REAL,
   "salary_estimated" INTEGER,
   "salary_implausible" INTEGER,
   "salary_compare_raw" TEXT,
   "salary_vs_median" TEXT,
   "salary_compare_scope" TEXT,
   "salary_signal_raw" TEXT,
   "salary_signal_label" TEXT,
   "salary_signal_min" REAL,
   "salary_signal_max" REAL,
   "salary_signal_currency" TEXT,
   "salary_signal_period" TEXT,
   "salary_signal_estimated" INTEGER,
   "salary_signal_implausible" INTEGER,
   "company_activity_label" TEXT,
   "company_activity_raw" TEXT,
   "company_activity_city" TEXT,
   "company_activity_category" TEXT,
   "company_activity_open_jobs" INTEGER,
   "company_activity_open_jobs_approx" INTEGER,
   "company_activity_open_in_category" INTEGER,
   "market_label" TEXT,
   "market_raw" TEXT,
   "market_city" TEXT,
   "market_category" TEXT,
   "market_open_jobs" INTEGER,
   "market_open_jobs_approx" INTEGER,
   "market_open_in_category" INTEGER,
   "description" TEXT,
   "insights" TEXT,
   "extra" TEXT,
   "problems" TEXT,
   "content_hash" TEXT,
   "input_sha256" TEXT,
   "as_of" TEXT,
   "first_seen" TEXT,
   "last_seen" TEXT,
   "closed_at" TEXT,
   "complete_listing" INTEGER,
   "raw_input_id" INTEGER REFERENCES "raw_inputs"("id"),
   "version" INTEGER
)""",
    """CREATE UNIQUE INDEX "idx_postings_key"
    ON "postings" ("key")""",
    """CREATE INDEX "idx_postings_company"
    ON "postings" ("company")""",
    """CREATE INDEX "idx_postings_city"
    ON "postings" ("city")""",
    """CREATE INDEX "idx_postings_category"
    ON "postings" ("category")""",
    """CREATE INDEX "idx_postings_posted_at"
    ON "postings" ("posted_at")""",
    """CREATE INDEX "idx_postings_last_seen"
    ON "postings" ("last_seen")""",
    """CREATE INDEX "idx_postings_salary_monthly_max"
    ON "postings" ("salary_monthly_max")""",
    """CREATE TABLE "sections" (
   "posting_id" INTEGER REFERENCES "postings"("id"),
   "seq" INTEGER,
   "key" TEXT,
   "heading" TEXT,
   "position" INTEGER,
   "text" TEXT,
   PRIMARY KEY ("posting_id", "seq")
)""",
    """CREATE INDEX "idx_sections_key"
    ON "sections" ("key")""",
    """CREATE TABLE "evaluations" (
   "posting_id" INTEGER REFERENCES "postings"("id"),
   "scorer" TEXT,
   "overall" INTEGER,
   "pay" INTEGER,
   "growth" INTEGER,
   "worklife" INTEGER,
   "mission" INTEGER,
   "overall_level" TEXT,
   "pay_level" TEXT,
   "growth_level" TEXT,
   "worklife_level" TEXT,
   "mission_level" TEXT,
   "summary" TEXT,
   "notes" TEXT,
   "explanations" TEXT,
   "evidence" TEXT,
   "problems" TEXT,
   "computed_at" TEXT,
   PRIMARY KEY ("posting_id", "scorer")
)""",
    """CREATE INDEX "idx_evaluations_scorer_overall"
    ON "evaluations" ("scorer", "overall")""",
    """CREATE TABLE "signals" (
   "posting_id" INTEGER REFERENCES "postings"("id"),
   "scorer" TEXT,
   "dimension" TEXT,
   "position" INTEGER,
   "key" TEXT,
   "value" TEXT,
   PRIMARY KEY ("posting_id", "scorer", "dimension", "position")
)""",
    """CREATE TABLE "posting_versions" (
   "id" INTEGER PRIMARY KEY,
   "posting_id" INTEGER REFERENCES "postings"("id"),
   "version" INTEGER,
   "content_hash" TEXT,
   "superseded_at" TEXT,
   "snapshot" TEXT
)""",
    """CREATE UNIQUE INDEX "idx_posting_versions_posting_id_version"
    ON "posting_versions" ("posting_id", "version")""",
    """CREATE TABLE "quarantine" (
   "id" INTEGER PRIMARY KEY,
   "raw_input_id" INTEGER REFERENCES "raw_inputs"("id"),
   "source" TEXT,
   "locator" TEXT,
   "position" INTEGER,
   "input_sha256" TEXT,
   "reason" TEXT,
   "detail" TEXT,
   "text" TEXT,
   "at" TEXT,
   "run_id" INTEGER REFERENCES "runs"("id")
)""",
    """CREATE UNIQUE INDEX "idx_quarantine_source_locator_input_sha256_position"
    ON "quarantine" ("source", "locator", "input_sha256", "position")""",
)


def _add_missing_columns(db: sqlite_utils.Database, table: str, columns: tuple[tuple[str, str], ...]) -> None:
    have = {row[1] for row in db.execute(f"PRAGMA table_info([{table}])")}
    for name, sql_type in columns:
        if name not in have:
            db.execute(f"ALTER TABLE [{table}] ADD COLUMN [{name}] {sql_type}")


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    for statement in M001_SQL:
        db.execute(statement)
    # Trigram FTS over title, company and section text; rowid = postings.id, filled in batches by the writer.
    db.execute("CREATE VIRTUAL TABLE postings_fts USING fts5(title, company, body, tokenize='trigram')")


@migrations()
def m002_experience_and_company_info(db: sqlite_utils.Database) -> None:
    """Posting gained experience years and company info (industry, funding stage, size), and insights."""
    _add_missing_columns(db, "postings", (
        ("experience_min_years", "REAL"), ("experience_max_years", "REAL"), ("company_info_raw", "TEXT"),
        ("company_info_industry", "TEXT"), ("company_info_funding_stage", "TEXT"),
        ("company_info_size_min", "INTEGER"), ("company_info_size_max", "INTEGER"), ("insights", "TEXT")))


@migrations()
def m003_skills(db: sqlite_utils.Database) -> None:
    """Skill taxonomy, skills found per posting with evidence, and a key/value meta table."""
    _add_missing_columns(db, "postings", (("skills", "TEXT"),))
    db["skills"].create(
        {"name": str, "category": str, "parent": str, "aliases": str, "frontier": int}, pk="name",
        foreign_keys=[("parent", "skills", "name")],
    )
    db["skills"].create_index(["category"])
    db["posting_skills"].create(
        {"posting_id": int, "skill": str, "section": str, "seq": int, "category": str, "count": int,
         "first_offset": int, "matched": str, "snippet": str},
        pk=("posting_id", "skill", "section"),
        foreign_keys=[("posting_id", "postings", "id"), ("skill", "skills", "name")],
    )
    db["posting_skills"].create_index(["skill"])
    db["meta"].create({"key": str, "value": str}, pk="key")


@migrations()
def m004_dedupe(db: sqlite_utils.Database) -> None:
    """Near-duplicate clusters: stored MinHash signatures, clusters and their members."""
    db["dedupe_signatures"].create(
        {"posting_id": int, "content_hash": str, "signature": bytes, "company": str, "title": str, "city": str,
         "fingerprint": str},
        pk="posting_id", foreign_keys=[("posting_id", "postings", "id")],
    )
    db["dedupe_signatures"].create_index(["fingerprint"])
    db["clusters"].create(
        {"id": int, "canonical_posting_id": int, "size": int, "companies": int, "cities": int, "reasons": str,
         "cross_company": int, "first_seen": str, "last_seen": str},
        pk="id", foreign_keys=[("canonical_posting_id", "postings", "id")],
    )
    db["clusters"].create_index(["size"])
    db["cluster_members"].create(
        {"posting_id": int, "cluster_id": int, "reason": str, "similarity": float, "matched_posting_id": int,
         "cross_company": int, "different_city": int},
        pk="posting_id",
        foreign_keys=[("posting_id", "postings", "id"), ("cluster_id", "clusters", "id"),
                      ("matched_posting_id", "postings", "id")],
    )
    db["cluster_members"].create_index(["cluster_id"])



@migrations()
def m005_crawl_runs_and_listings(db: sqlite_utils.Database) -> None:
    """Crawl runs record their source, network counts and errors; listing_postings scopes closing."""
    for column, typ in (("source", str), ("requests", int), ("responses", str), ("errors", int), ("reopened", int)):
        if column not in db["runs"].columns_dict:
            db["runs"].add_column(column, typ)
    db["listing_postings"].create(
        {"listing": str, "key": str, "first_seen": str, "last_seen": str, "closed_at": str, "run_id": int},
        pk=("listing", "key"), foreign_keys=[("run_id", "runs", "id")],
    )
    db["listing_postings"].create_index(["key"])


CHILD_TABLE_DOCS["runs"].update({
    "source": "Source name from the sources file (crawls).", "requests": "HTTP requests sent (cache hits not counted).",
    "responses": "Responses by the status the server sent, 304 revalidations included (JSON).",
    "errors": "Requests that failed for good, after retries, and spider errors.",
    "reopened": "Closed postings seen again in a complete listing.",
})
CHILD_TABLE_DOCS["listing_postings"] = {
    "listing": "Complete listing (`greenhouse:gitlab`, `lever:<site>`, `ashby:<board>`, `jsonld:<site>`).",
    "key": "Posting key (postings.key) the listing has held.", "first_seen": "First run that saw it in the listing (UTC).",
    "last_seen": "Last run that saw it in the listing (UTC).",
    "closed_at": "When a complete read of the listing first missed it (UTC); null while it is listed.",
    "run_id": "Last run that saw it in the listing.",
}

def open_db(path: str | Path, *, readonly: bool = False) -> sqlite_utils.Database:
    """Open (creating if needed) a jobcrawl database: WAL mode, 16 KB pages, migrations applied.
    :class:`ReadOnlyDatabase` when the file cannot be written (:func:`crawler.db.unwritable`).

    ``readonly``: the one way commands that only read open it (:func:`crawler.db.readonly_uri`:
    ``mode=ro``, immutable on read-only media). Pending migrations are applied first where the file
    can be written, the one write such a command makes; a file that cannot be written and still
    needs them raises :class:`ReadOnlyDatabase` (its schema is older than the code reading it)."""
    path = Path(path)
    if readonly:
        db = sqlite_utils.Database(connect_readonly(path))
        if not migrations.pending(db):
            return db
        db.close()
        reason = unwritable(path)
        if reason:
            raise ReadOnlyDatabase(f"{path} {reason} and was made by an older jobcrawl (its schema needs upgrading): "
                                   "run a writing command on a writable copy first, e.g. jobcrawl dedupe --db COPY")
        open_db(path).close()
        return sqlite_utils.Database(connect_readonly(path))
    require_writable(path)
    fresh = not path.exists() or path.stat().st_size == 0
    db = connect(path, page_size=16384 if fresh else None)
    migrations.apply(db)
    return db


# Browsing (Datasette): the score a listing sorts and facets by, denormalized onto postings and kept
# by triggers on evaluations (ours, jobcrawl-v1, else the app's own), and the segmented search index.
_SCORERS = "('jobcrawl-v1', 'source')"
_SCORE_SET = f"""UPDATE postings SET (score, score_level, score_by) = (
    SELECT overall, overall_level, scorer FROM evaluations
    WHERE posting_id = {{id}} AND scorer IN {_SCORERS} AND overall IS NOT NULL
    ORDER BY scorer = 'jobcrawl-v1' DESC LIMIT 1)"""
BROWSE_COLUMN_DOCS = {"postings": {
    "score": "Overall score 0–100 the listing sorts by: ours (jobcrawl-v1) when scored, else the app's own.",
    "score_level": "Level of that score: 较低 (<60), 中等 (60–79), 较高 (≥80).",
    "score_by": "Scorer of that score: jobcrawl-v1 or source.",
}, "jobs": {
    "salary": "Upper monthly base pay in currency units (salary_monthly_max), shown as a range: 30–50K ×14.",
}}
# The listing people browse: postings' reading columns, best score first (a plain view: SQLite
# flattens it, so filters, facets and the sort use the postings indexes).
JOBS_VIEW = """CREATE VIEW jobs AS SELECT
    id, title, company, city, category, work_mode, seniority, salary_monthly_max AS salary,
    score, score_level, score_by, skills, posted_at, first_seen, last_seen, closed_at, url,
    salary_monthly_min, salary_months, salary_currency, salary_period, salary_status, salary_estimated, salary_raw
FROM postings"""


@migrations()
def m006_browse(db: sqlite_utils.Database) -> None:
    """Score columns on postings kept by triggers, the ``jobs`` view, listing indexes."""
    for column, typ in (("score", int), ("score_level", str), ("score_by", str)):
        if column not in db["postings"].columns_dict:
            db["postings"].add_column(column, typ)
    for event, ref in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
        when = f"{ref}.scorer IN {_SCORERS}" + (f" OR OLD.scorer IN {_SCORERS}" if event == "UPDATE" else "")
        update = _SCORE_SET.format(id=f"{ref}.posting_id") + f" WHERE id = {ref}.posting_id;"
        db.execute(f"CREATE TRIGGER evaluations_score_{event.lower()} AFTER {event} ON evaluations WHEN {when} "
                   f"BEGIN {update} END")
    db.execute(_SCORE_SET.format(id="postings.id"))
    for cols in (["score"], ["score_level"], ["work_mode"]):
        db["postings"].create_index(cols)
    db.execute(JOBS_VIEW)
    # It also created and filled a segmented index, postings_seg: m130 replaces both indexes by one.


@migrations()
def m007_market_stats(db: sqlite_utils.Database) -> None:
    """Market statistics of the corpus (crawler.steps.stats), replaced on every scoring run."""
    db["market_stats"].create(
        {"scope": str, "key": str, "currency": str, "n": int, "p25": float, "median": float, "p75": float,
         "computed_at": str},
    )
    db["market_stats"].create_index(["scope", "key"])


CHILD_TABLE_DOCS["market_stats"] = {
    "scope": "category or city+category (monthly salaries); company_open, company+category_open, city+category_open (counts).",
    "key": "What the statistic is over: `人工智能`, `杭州 · 人工智能`, a company.",
    "currency": "Currency of the salaries (salary scopes only).",
    "n": "Salaries in the group (salary scopes) or active postings (count scopes).",
    "p25": "25th percentile of monthly salary; null when n < 5 (样本不足).",
    "median": "Median monthly salary; null when n < 5.", "p75": "75th percentile of monthly salary; null when n < 5.",
    "computed_at": "When the statistics were computed (UTC).",
}


@migrations()
def m008_browse_listing_indexes(db: sqlite_utils.Database) -> None:
    """Indexes for the listing's usual filters: a city or category sorted by score; city, work mode and pay."""
    for cols in (["city", "score"], ["category", "score"], ["city", "work_mode", "salary_monthly_max"]):
        db["postings"].create_index(cols, if_not_exists=True)


@migrations()
def m009_browse_counts(db: sqlite_utils.Database) -> None:
    """Indexes for the listings' counts and facets (browse/facets.py): ``postings(id)``, a narrow index
    of the ids that a search's count seeks instead of the wide rows, and ``posting_skills(skill,
    posting_id)`` for the ``_skill`` filter, which replaces ``posting_skills(skill)``."""
    db["postings"].create_index(["id"], if_not_exists=True)
    db["posting_skills"].create_index(["skill", "posting_id"], if_not_exists=True)
    db.execute("DROP INDEX IF EXISTS idx_posting_skills_skill")


@migrations()
def m010_input_parses(db: sqlite_utils.Database) -> None:
    """The last complete parse of each stored input, so a re-run can skip inputs it would not change
    (crawler/ledger.py)."""
    db["input_parses"].create(
        {"raw_input_id": int, "as_of": str, "parser": str, "status": str, "postings": int, "run_id": int,
         "parsed_at": str},
        pk="raw_input_id", foreign_keys=[("raw_input_id", "raw_inputs", "id"), ("run_id", "runs", "id")],
    )


CHILD_TABLE_DOCS["input_parses"] = {
    "raw_input_id": "The input.", "as_of": "Anchor for relative times of that parse (UTC).",
    "parser": "Version of the parsing code and settings (a hash of their sources, then the title limit, "
              "then for tables a digest of --format, --preset, --map and --set).",
    "status": "parsed, partial or quarantined, as the input's parse ended.",
    "postings": "Postings the parse produced; all of them were stored before this row was written.",
    "run_id": "Run that parsed it.", "parsed_at": "When its last posting was stored (UTC).",
}


@migrations()
def m011_insights_table_to_column(db: sqlite_utils.Database) -> None:
    """Databases made before commit 648077c kept the AI-insight lists in an ``insights`` table, which later
    code neither read nor removed: copy them into ``postings.insights`` (JSON, key → items) and drop it."""
    if "insights" not in db.table_names():
        return
    grouped: dict[int, dict[str, list[str]]] = {}
    for posting_id, key, text in db.execute(
            "SELECT posting_id, key, text FROM insights ORDER BY posting_id, seq"):
        grouped.setdefault(posting_id, {}).setdefault(key, []).append(text)
    db.conn.executemany("UPDATE postings SET insights = ? WHERE id = ? AND (insights IS NULL OR insights = '{}')",
                        [(json.dumps(items, ensure_ascii=False), pid) for pid, items in grouped.items()])
    db.execute("DROP TABLE insights")


@migrations()
def m012_raw_input_reader(db: sqlite_utils.Database) -> None:
    """How to parse a raw input again without fetching it (``jobcrawl reparse``)."""
    db.execute("ALTER TABLE raw_inputs ADD COLUMN reader TEXT")


CHILD_TABLE_DOCS["raw_inputs"]["reader"] = ("How to parse it again (`jobcrawl reparse`): a web page's page class and "
                                            "arguments, a table's reading options (JSON); null for text dumps.")


# --------------------------------------------------------------------------- alerts branch (issue #29)


@migrations()
def m101_alerts_watches(db: sqlite_utils.Database) -> None:
    """Saved searches (``watches``), the postings each has seen (``watch_matches``) and every delivery of
    a match to a destination (``watch_deliveries``): crawler/db/watches.py, crawler/alerts.py."""
    db.execute("""CREATE TABLE watches (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        spec TEXT NOT NULL,
        search TEXT,
        created_at TEXT NOT NULL,
        removed_at TEXT
    )""")
    db.execute("CREATE UNIQUE INDEX idx_watches_name ON watches (name) WHERE removed_at IS NULL")
    db.execute("""CREATE TABLE watch_matches (
        watch_id INTEGER NOT NULL REFERENCES watches (id),
        posting_id INTEGER NOT NULL REFERENCES postings (id),
        matched_at TEXT NOT NULL,
        run_id INTEGER REFERENCES runs (id),
        baseline INTEGER NOT NULL DEFAULT 0,
        reasons TEXT,
        PRIMARY KEY (watch_id, posting_id)
    )""")
    db.execute("CREATE INDEX idx_watch_matches_posting ON watch_matches (posting_id)")
    db.execute("""CREATE TABLE watch_deliveries (
        watch_id INTEGER NOT NULL REFERENCES watches (id),
        posting_id INTEGER NOT NULL REFERENCES postings (id),
        destination TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        created_at TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_attempt_at TEXT,
        sent_at TEXT,
        error TEXT,
        PRIMARY KEY (watch_id, posting_id, destination)
    )""")
    db.execute("CREATE INDEX idx_watch_deliveries_status ON watch_deliveries (status)")


@migrations()
def m102_alerts_blocks(db: sqlite_utils.Database) -> None:
    """Postings a profile's blocklist hides (never deleted): the rule that matched, where and what."""
    db.execute("""CREATE TABLE posting_blocks (
        posting_id INTEGER NOT NULL REFERENCES postings (id),
        profile TEXT NOT NULL,
        rule TEXT NOT NULL,
        detail TEXT,
        PRIMARY KEY (posting_id, profile)
    )""")


@migrations()
def m103_alerts_history(db: sqlite_utils.Database) -> None:
    """Closing and reopening of postings as events (kept by triggers on ``postings.closed_at``, so no
    writer records them), and the indexes of the "changed since" filter."""
    db.execute("""CREATE TABLE posting_events (
        id INTEGER PRIMARY KEY,
        posting_id INTEGER NOT NULL REFERENCES postings (id),
        event TEXT NOT NULL,
        at TEXT NOT NULL
    )""")
    db.execute("CREATE INDEX idx_posting_events_posting ON posting_events (posting_id)")
    db.execute("CREATE INDEX idx_posting_events_at ON posting_events (at)")
    db.execute("""CREATE TRIGGER postings_closed AFTER UPDATE OF closed_at ON postings
        WHEN OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL
        BEGIN INSERT INTO posting_events (posting_id, event, at) VALUES (NEW.id, 'closed', NEW.closed_at); END""")
    db.execute("""CREATE TRIGGER postings_reopened AFTER UPDATE OF closed_at ON postings
        WHEN OLD.closed_at IS NOT NULL AND NEW.closed_at IS NULL
        BEGIN INSERT INTO posting_events (posting_id, event, at) VALUES (NEW.id, 'reopened', NEW.last_seen); END""")
    db.execute("CREATE INDEX idx_posting_versions_superseded_at ON posting_versions (superseded_at)")
    db.execute("CREATE INDEX idx_postings_first_seen ON postings (first_seen)")
    db.execute("CREATE INDEX idx_postings_closed_at ON postings (closed_at)")


# Personal fit beside the posting, one row per posting and profile, with the four parts, their reasons,
# the blocklist rule, days since last seen (counted back from the newest last_seen of the database) and,
# for JobSpy imports, the board the row came from (its `site` column).
FIT_VIEW = """CREATE VIEW fit AS SELECT
    p.id, p.title, p.company, p.city, substr(e.scorer, 5) AS profile, e.overall AS fit,
    json_extract(e.evidence, '$.overall[0].scores.skills') AS fit_skills,
    json_extract(e.evidence, '$.overall[0].scores.salary') AS fit_salary,
    json_extract(e.evidence, '$.overall[0].scores.city') AS fit_city,
    json_extract(e.evidence, '$.overall[0].scores.mode') AS fit_mode,
    json_extract(e.explanations, '$.skills') AS why_skills, json_extract(e.explanations, '$.salary') AS why_salary,
    json_extract(e.explanations, '$.city') AS why_city, json_extract(e.explanations, '$.mode') AS why_mode,
    b.rule AS blocked_by, p.salary_monthly_max AS salary, p.salary_monthly_min, p.salary_months, p.salary_currency,
    p.salary_status, p.salary_estimated, p.salary_raw, p.score, p.work_mode,
    CASE WHEN p.source = 'tabular' THEN json_extract(p.extra, '$.site') END AS site,
    CAST(julianday((SELECT max(last_seen) FROM postings)) - julianday(p.last_seen) AS INTEGER) AS days_unseen,
    p.closed_at, p.posted_at, p.first_seen, p.last_seen, p.url
FROM evaluations e JOIN postings p ON p.id = e.posting_id
LEFT JOIN posting_blocks b ON b.posting_id = e.posting_id AND b.profile = substr(e.scorer, 5)
WHERE e.scorer LIKE 'fit:%'"""


@migrations()
def m104_alerts_fit_view(db: sqlite_utils.Database) -> None:
    """The ``fit`` view (browse: sortable personal fit with its reasons)."""
    db.execute(FIT_VIEW)


CHILD_TABLE_DOCS.update({
    "watches": {
        "id": "Row id.", "name": "Name of the watch (unique among the watches not removed).",
        "spec": "What the watch asks for (JSON: search, cities, min_salary, min_fit, exclude_duplicates, "
                "changed_since, destinations).",
        "search": "Its full-text search, if any.", "created_at": "When it was added (UTC).",
        "removed_at": "When `jobcrawl watch remove` removed it (UTC); its matches and deliveries are kept.",
    },
    "watch_matches": {
        "watch_id": "Watch.", "posting_id": "Posting the watch has seen.", "matched_at": "When (UTC).",
        "run_id": "Run after which it matched (null: when the watch was added).",
        "baseline": "1 for a posting that matched when the watch was added: seen, never delivered.",
        "reasons": "Why it matched, one line per criterion (JSON list).",
    },
    "watch_deliveries": {
        "watch_id": "Watch.", "posting_id": "Posting delivered.", "destination": "Destination name of the alerts config.",
        "status": "pending (to send, or sent but not yet recorded: sent again), sent, or cancelled (watch removed).",
        "created_at": "When the match was recorded (UTC).", "attempts": "Sending attempts so far (retries included).",
        "last_attempt_at": "Last attempt (UTC).", "sent_at": "When the destination accepted it (UTC).",
        "error": "Why the last attempt failed.",
    },
    "posting_blocks": {
        "posting_id": "Posting hidden by a blocklist (never deleted).", "profile": "Profile whose blocklist matched.",
        "rule": "The rule that matched (`keyword:外包`, `company:星云人才`, `keyword:/regex/`).",
        "detail": "The field it matched in and the text around the match.",
    },
    "posting_events": {
        "id": "Row id.", "posting_id": "Posting.", "event": "closed or reopened.",
        "at": "When (UTC): the closing time, or the last_seen that reopened it.",
    },
})
_POSTING_DOCS = {column: desc for column, _, _, desc in POSTING_COLUMNS}
BROWSE_COLUMN_DOCS["fit"] = {
    **{c: _POSTING_DOCS[c] for c in ("id", "title", "company", "city", "salary_monthly_min", "salary_months",
                                      "salary_currency", "salary_status", "salary_estimated", "salary_raw", "work_mode",
                                      "closed_at", "posted_at", "first_seen", "last_seen", "url")},
    "score": BROWSE_COLUMN_DOCS["postings"]["score"],
    "profile": "Profile name (scorer fit:<profile>, `jobcrawl score --profile`).",
    "fit": "Personal fit 0–100 (0 when blocked): weighted skills, salary, city and work mode.",
    "fit_skills": "Skills part 0–100.", "fit_salary": "Salary part 0–100.", "fit_city": "City part 0–100.",
    "fit_mode": "Work-mode part 0–100.", "why_skills": "Reason of the skills part.", "why_salary": "Reason of the salary part.",
    "why_city": "Reason of the city part.", "why_mode": "Reason of the work-mode part.",
    "blocked_by": "The blocklist rule that hides the posting, if any.",
    "salary": BROWSE_COLUMN_DOCS["jobs"]["salary"],
    "site": "For JobSpy imports: the board the row came from (indeed, linkedin, glassdoor …).",
    "days_unseen": "Days between the newest last_seen of the database and this posting's.",
}


@migrations()
def m101_distributed_spool_batches(db: sqlite_utils.Database) -> None:
    """Batches stored from the Redis item spool, once each, with the writer's counts (crawler/db/spool.py)."""
    db.execute("""CREATE TABLE spool_batches (
   id TEXT PRIMARY KEY,
   run_id INTEGER REFERENCES runs(id),
   stored_at TEXT,
   counts TEXT
)""")
    db.execute("CREATE INDEX idx_spool_batches_run_id ON spool_batches (run_id)")


CHILD_TABLE_DOCS["spool_batches"] = {
    "id": "Batch id given by the worker that pushed it to the spool.", "run_id": "Run (source) the rows belong to.",
    "stored_at": "When the writer stored it (UTC).",
    "counts": "What storing it did: new, updated, unchanged, quarantined … (JSON).",
}


@migrations()
def m102_distributed_quarantine_once(db: sqlite_utils.Database) -> None:
    """A quarantined input without a hash (``input_sha256`` null) is stored once, as one with a hash is: the unique
    index treated nulls as distinct, so the same batch written twice (the Redis spool delivers at least once) or a
    re-run added a copy. Copies already there are folded into the first row."""
    db.execute("""DELETE FROM quarantine WHERE input_sha256 IS NULL AND id NOT IN (
        SELECT min(id) FROM quarantine WHERE input_sha256 IS NULL GROUP BY source, locator, position)""")
    db.execute('DROP INDEX "idx_quarantine_source_locator_input_sha256_position"')
    db.execute("""CREATE UNIQUE INDEX idx_quarantine_once
    ON quarantine (source, locator, coalesce(input_sha256, ''), position)""")


# Per-source health of crawls (crawler/db/health.py). A run *succeeded* when it ended ok, or partial with postings
# found; the state is the last run's: robots-blocked (robots.txt forbade requests and nothing was found), empty (it
# ended ok and found nothing), failing since the first run after the last success, else ok.
SOURCE_HEALTH_VIEW = """CREATE VIEW source_health AS
WITH crawl_runs AS (
    SELECT * FROM runs WHERE kind = 'crawl' AND source IS NOT NULL AND finished IS NOT NULL),
succeeded AS (
    SELECT source, max(started) AS last_success FROM crawl_runs
    WHERE status = 'ok' OR (status = 'partial' AND found > 0) GROUP BY source),
last AS (SELECT source, max(id) AS id FROM crawl_runs GROUP BY source)
SELECT r.source, r.id AS last_run, r.started AS last_run_at, r.status AS last_status, s.last_success,
    r.requests, r.responses, r.found, r.new, r.updated, r.closed, r.errors,
    coalesce(json_extract(r.stats, '$."robotstxt/forbidden"'), 0) AS robots_forbidden,
    CASE
        WHEN r.found = 0 AND coalesce(json_extract(r.stats, '$."robotstxt/forbidden"'), 0) > 0 THEN 'robots-blocked'
        WHEN r.found = 0 AND r.status = 'ok' THEN 'empty'
        WHEN s.last_success IS NULL OR s.last_success < r.started THEN 'failing since ' || (
            SELECT min(f.started) FROM crawl_runs f WHERE f.source = r.source AND f.started > coalesce(s.last_success, ''))
        ELSE 'ok'
    END AS state
FROM last JOIN crawl_runs r ON r.id = last.id LEFT JOIN succeeded s ON s.source = r.source"""


@migrations()
def m103_distributed_source_health(db: sqlite_utils.Database) -> None:
    """The ``source_health`` view: each crawled source's last run, last success, counts and state."""
    db.execute(SOURCE_HEALTH_VIEW)
    db.execute("CREATE INDEX IF NOT EXISTS idx_runs_source ON runs (source, kind)")


# --------------------------------------------------------------------------- serve branch (issues #24.5, #28.5)


@migrations()
def m130_serve_one_search_index(db: sqlite_utils.Database) -> None:
    """One full-text index (crawler/db/fts.py) replaces the trigram ``postings_fts`` and the
    segmented ``postings_seg``: title, company, city, skill names, JD text and the parts of the
    compound names of title and skills, CJK characters as tokens. Rebuilt from the stored postings."""
    from . import fts

    db.execute("DROP TABLE IF EXISTS postings_seg")
    db.execute("DROP TABLE IF EXISTS postings_fts")
    db.execute("DELETE FROM meta WHERE key = 'search_index_versions'")
    db.execute("CREATE VIRTUAL TABLE postings_fts USING fts5("
               "title, company, city, skills, body, parts, tokenize=\"unicode61 tokenchars '+#'\")")
    fts.rebuild(db.conn)


@migrations()
def m131_serve_skill_kinds(db: sqlite_utils.Database) -> None:
    """Each skill's kind (technical, domain or soft), of its category: the ``[kinds]`` table of
    normalize/data/skills.toml, which every run's taxonomy sync keeps it equal to."""
    db.execute("ALTER TABLE skills ADD COLUMN kind TEXT")
    db.execute("UPDATE skills SET kind = CASE category WHEN 'soft' THEN 'soft' WHEN 'domain' THEN 'domain'"
               " ELSE 'technical' END")
    db.execute("CREATE INDEX idx_skills_kind ON skills (kind)")


CHILD_TABLE_DOCS["skills"]["kind"] = "technical, domain or soft: the kind of its category (the skills facet shows technical skills)."


@migrations()
def m132_serve_jobs_view(db: sqlite_utils.Database) -> None:
    """The ``jobs`` listing view with the columns its page shows first (title, company, city,
    salary, score, posted, source) and the posting's source."""
    db.execute("DROP VIEW IF EXISTS jobs")
    db.execute("""CREATE VIEW jobs AS SELECT
    id, title, company, city, salary_monthly_max AS salary, score, score_level, posted_at, source,
    category, work_mode, seniority, score_by, skills, first_seen, last_seen, closed_at, url,
    salary_monthly_min, salary_months, salary_currency, salary_period, salary_status, salary_estimated, salary_raw
FROM postings""")


CHILD_TABLE_DOCS["source_health"] = {
    "source": "Source name from the sources file.", "last_run": "Its last finished crawl (runs.id).",
    "last_run_at": "When that crawl started (UTC).", "last_status": "Its status: ok, partial, failed, interrupted.",
    "last_success": "Start of its last crawl that was ok, or partial with postings found (UTC).",
    "requests": "Requests the last crawl sent.", "responses": "Its responses by status (JSON).",
    "found": "Postings it found.", "new": "New postings.", "updated": "Postings with a new version.",
    "closed": "Postings it marked closed.", "errors": "Requests that failed for good, and spider errors.",
    "robots_forbidden": "Requests robots.txt forbade.",
    "state": "ok · failing since <first failed run> · robots-blocked (nothing found, robots.txt forbade) · empty.",
}


# --------------------------------------------------------------------------- issue #27: results people can trust


@migrations()
def m101_trust_dedupe_keys(db: sqlite_utils.Database) -> None:
    """Dedupe keys per posting (identity, canonical URL, JD text or not, completeness), the corpus's boilerplate
    shingles, and member reasons as words (b → same_content, c → near_duplicate or cross_company_copy). The
    dedupe step recomputes every key and cluster with the current rules on its next run (the key version
    changed); until then the old clusters read with the new words."""
    conn = db.conn
    for column, typ in (("identity", "TEXT"), ("url", "TEXT"), ("has_jd", "INTEGER"), ("completeness", "INTEGER")):
        conn.execute(f"ALTER TABLE dedupe_signatures ADD COLUMN [{column}] {typ}")
    conn.execute("CREATE TABLE dedupe_common_shingles (hash INTEGER PRIMARY KEY) WITHOUT ROWID")
    conn.execute("UPDATE cluster_members SET reason = CASE reason WHEN 'b' THEN 'same_content' WHEN 'c' THEN"
                 " CASE WHEN cross_company THEN 'cross_company_copy' ELSE 'near_duplicate' END ELSE reason END")
    conn.execute("""UPDATE clusters SET reasons = replace(replace(reasons, '"b":', '"same_content":'),"""
                 """ '"c":', '"near_duplicate":')""")


CHILD_TABLE_DOCS["dedupe_signatures"].update({
    "signature": "MinHash signature (datasketch LeanMinHash bytes) of the JD text (requirement, responsibility and "
                 "preferred bullets); null without JD text or company.",
    "fingerprint": "Exact content fingerprint (company, title, city, JD lines); empty without JD text or company.",
    "identity": "Company, title, city and salary, hashed: how a list card without JD text joins a cluster.",
    "url": "Canonical URL (tracking parameters dropped).",
    "has_jd": "1 when the posting has JD text (at least 30 characters): only then is it compared by content.",
    "completeness": "Non-empty company, title, city, text plus JD bullets: the canonical member is the most complete.",
})
CHILD_TABLE_DOCS["dedupe_common_shingles"] = {
    "hash": "A boilerplate shingle (32-bit hash): in the JD text of more than 1 % (at least 10) of the companies; "
            "left out when JDs are compared.",
}
CHILD_TABLE_DOCS["clusters"]["reasons"] = (
    "How members joined (JSON counts: new, same_url, same_content, same_identity, near_duplicate, cross_company_copy).")
CHILD_TABLE_DOCS["cluster_members"].update({
    "reason": "new (first of its cluster), same_url, same_content (same fingerprint), same_identity (same company, "
              "title, city and salary; list cards), near_duplicate (similar JD text), cross_company_copy (near-identical "
              "JD under another company).",
    "similarity": "Estimated Jaccard similarity of the JD text with the matched posting, boilerplate left out "
                  "(1.0 for the other reasons).",
    "matched_posting_id": "The posting it matched when it joined: the canonical member, or the most similar one "
                          "when a majority of the members matched.",
})


JOBS_VIEW_V2 = """CREATE VIEW jobs AS SELECT
    id, title, coalesce(company, '（企业未公开）') AS company, city, category, work_mode, seniority,
    salary_monthly_max AS salary, score, score_level, score_by, skills, posted_at, posted_local, posted_source,
    first_seen, last_seen, closed_at, url, salary_monthly_min, salary_months, salary_currency, salary_period,
    salary_status, salary_estimated, salary_raw, salary_source
FROM postings"""


@migrations()
def m102_trust_time_and_pay_source(db: sqlite_utils.Database) -> None:
    """Where a salary was read (salary_source), what a post time rests on (posted_source), the source's time
    zone and the post time in it (tz, posted_local), the run that first saw a posting (first_run_id, for
    "new" without a post time); the jobs view shows a hidden employer as （企业未公开） and the local time.

    Old rows: salary_source 'field' where a salary was stored (the old code read no other), first_run_id the
    run that first stored the posting's raw input; posted_source and tz stay null until the posting is parsed
    again (``--reparse``)."""
    conn = db.conn
    have = {row[1] for row in conn.execute("PRAGMA table_info(postings)")}
    for column, typ in (("salary_source", "TEXT"), ("posted_source", "TEXT"), ("tz", "TEXT"), ("posted_local", "TEXT"),
                        ("first_run_id", "INTEGER")):
        if column not in have:  # m001 of a new database made the model's columns already
            conn.execute(f"ALTER TABLE postings ADD COLUMN [{column}] {typ}")
    conn.execute("UPDATE postings SET salary_source = 'field' WHERE salary_source IS NULL AND salary_status != 'missing'")
    conn.execute("UPDATE postings SET first_run_id = (SELECT run_id FROM raw_inputs WHERE raw_inputs.id = postings.raw_input_id)"
                 " WHERE first_run_id IS NULL")
    conn.execute("CREATE INDEX idx_postings_source_first_run_id ON postings (source, first_run_id)")
    conn.execute("DROP VIEW jobs")
    conn.execute(JOBS_VIEW_V2)


POSTING_EXTRA_DOCS["first_run_id"] = ("The ingest or crawl run that first saw the posting: without a post time, a "
                                      "posting is new only when a run after the first of its source saw it first.")
BROWSE_COLUMN_DOCS["jobs"]["company"] = "Company; （企业未公开） when the employer is hidden (postings.company is null)."


@migrations()
def m103_trust_evaluation_state(db: sqlite_utils.Database) -> None:
    """Evaluations say how complete they are and what they were computed from (completeness, inputs_digest:
    the scoring step rescores a posting only when its digest changes, so every evaluation made before is
    rescored once, with the current rules). The listing's score is ours when we have an overall, else the
    app's, else our level alone (信息不足)."""
    conn = db.conn
    conn.execute("ALTER TABLE evaluations ADD COLUMN completeness REAL")
    conn.execute("ALTER TABLE evaluations ADD COLUMN inputs_digest TEXT")
    choose = ("UPDATE postings SET (score, score_level, score_by) = (SELECT overall, overall_level, scorer FROM evaluations"
              f" WHERE posting_id = {{id}} AND scorer IN {_SCORERS} AND (overall IS NOT NULL OR overall_level IS NOT NULL)"
              " ORDER BY overall IS NOT NULL DESC, scorer = 'jobcrawl-v1' DESC LIMIT 1)")
    for event, ref in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
        conn.execute(f"DROP TRIGGER evaluations_score_{event.lower()}")
        when = f"{ref}.scorer IN {_SCORERS}" + (f" OR OLD.scorer IN {_SCORERS}" if event == "UPDATE" else "")
        conn.execute(f"CREATE TRIGGER evaluations_score_{event.lower()} AFTER {event} ON evaluations WHEN {when} "
                     f"BEGIN {choose.format(id=f'{ref}.posting_id')} WHERE id = {ref}.posting_id; END")
    conn.execute(choose.format(id="postings.id"))


CHILD_TABLE_DOCS["evaluations"].update({
    "overall": "综合评分 0–100: the weighted mean of the known dimensions; null when fewer than two are known.",
    "pay": "薪资福利 0–100; null when its evidence is too little (level 信息不足).",
    "growth": "成长发展 0–100; null when its evidence is too little.",
    "worklife": "工作生活 0–100; null when its evidence is too little.",
    "mission": "使命价值 0–100; null when its evidence is too little.",
    "overall_level": "Level of the overall score: 较低 (<60), 中等 (60–79), 较高 (≥80), 信息不足.",
    "pay_level": "较低 (<60), 中等 (60–79), 较高 (≥80), or 信息不足 (insufficient evidence).",
    "completeness": "Share of the overall's weight whose dimension is known (0–1); null for the app's own.",
    "inputs_digest": "Digest of everything the evaluation was computed from (facts, market figures, rules version): "
                     "an unchanged digest is not scored again.",
})
BROWSE_COLUMN_DOCS["postings"]["score_level"] = "Level of that score: 较低 (<60), 中等 (60–79), 较高 (≥80), 信息不足."
BROWSE_COLUMN_DOCS["postings"]["score"] = ("Overall score 0–100 the listing sorts by: ours (jobcrawl-v1) when it has one, "
                                           "else the app's own; null when neither has one.")


# --------------------------------------------------------------------------- after the branches of issues #27 and #28.5

JOBS_VIEW_V3 = """CREATE VIEW jobs AS SELECT
    id, title, coalesce(company, '（企业未公开）') AS company, city, salary_monthly_max AS salary, score, score_level,
    posted_at, source, posted_local, category, work_mode, seniority, score_by, skills, posted_source, first_seen,
    last_seen, closed_at, url, salary_monthly_min, salary_months, salary_currency, salary_period, salary_status,
    salary_estimated, salary_raw, salary_source
FROM postings"""


@migrations()
def m140_jobs_view(db: sqlite_utils.Database) -> None:
    """The ``jobs`` view with both the compact listing's columns first (m132) and a hidden employer shown as
    （企业未公开）, the local post time and what it rests on, and where the salary was read (m102_trust)."""
    db.execute("DROP VIEW IF EXISTS jobs")
    db.execute(JOBS_VIEW_V3)


@migrations()
def m150_stale_index(db: sqlite_utils.Database) -> None:
    """An index of (last_seen, closed_at), so that the listings' stale filter (crawler.db.history.HIDE_STALE) and
    its count read the index alone instead of every open posting's row (bench/browse.py)."""
    db.execute("CREATE INDEX IF NOT EXISTS idx_postings_last_seen_closed_at ON postings (last_seen, closed_at)")


@migrations()
def m160_raw_text_zlib(db: sqlite_utils.Database) -> None:
    """A raw input's long text is stored compressed (crawler/db/rows.py: ``pack_text``): inputs stored before
    keep their text as it is, and are read either way (``raw_text``)."""
    db.execute("ALTER TABLE raw_inputs ADD COLUMN text_zlib BLOB")


CHILD_TABLE_DOCS["raw_inputs"]["text_zlib"] = (
    "The text of an input over 16,384 characters, UTF-8 and zlib-compressed; read it with the SQL function "
    "raw_text(text, text_zlib).")
