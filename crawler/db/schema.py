"""SQLite schema: created and changed only through sqlite-utils ``Migrations``.

The ``postings`` columns are the flattening of :class:`normalize.models.Posting` (nested models
become prefixed columns: ``salary.min`` → ``salary_min``), so the pydantic field descriptions are
the one documentation of every column (:func:`column_descriptions`, used by Datasette's metadata).
Sections and evaluations live in child tables; the AI-insight lists are one JSON column.

Migrations that add model fields call :func:`sync_columns`, which adds whatever column the model
has and the table lacks; on a fresh database the first migration already creates them all, so
later ones are no-ops there.
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

from . import connect, readonly_uri

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
        "text": "The input verbatim, decoded.", "body": "The bytes, kept only when undecodable.",
        "fetched_at": "When it was read (UTC).", "as_of": "Anchor for relative times (UTC).",
        "status": "parsed, partial (some postings quarantined) or quarantined.", "error": "Why it was quarantined.",
        "postings": "Postings parsed from it.", "run_id": "Run that first stored it.",
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
        "detail": "The problem in one line.", "text": "The offending text.", "at": "When it was quarantined (UTC).",
        "run_id": "Run that found it.",
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


def sync_columns(db: sqlite_utils.Database) -> None:
    """Add every model column the postings table lacks."""
    table = db["postings"]
    have = set(table.columns_dict)
    for column, _, typ, _ in POSTING_COLUMNS:
        if column not in have:
            table.add_column(column, typ)


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    db["runs"].create(
        {"id": int, "kind": str, "started": str, "finished": str, "status": str, "args": str,
         "files": int, "found": int, "new": int, "updated": int, "unchanged": int, "quarantined": int,
         "closed": int, "stats": str},
        pk="id",
    )
    db["raw_inputs"].create(
        {"id": int, "source": str, "locator": str, "sha256": str, "size": int, "encoding": str, "text": str,
         "body": bytes, "fetched_at": str, "as_of": str, "status": str, "error": str, "postings": int, "run_id": int},
        pk="id", foreign_keys=[("run_id", "runs", "id")],
    )
    db["raw_inputs"].create_index(["source", "locator", "sha256"], unique=True)

    columns: dict[str, Any] = {"id": int, "key": str}
    columns.update({c: typ for c, _, typ, _ in POSTING_COLUMNS if c not in columns})
    columns.update({"raw_input_id": int, "version": int})
    db["postings"].create(columns, pk="id", foreign_keys=[("raw_input_id", "raw_inputs", "id")])
    db["postings"].create_index(["key"], unique=True)
    for cols in (["company"], ["city"], ["category"], ["posted_at"], ["last_seen"], ["salary_monthly_max"]):
        db["postings"].create_index(cols)

    db["sections"].create(
        {"posting_id": int, "seq": int, "key": str, "heading": str, "position": int, "text": str},
        pk=("posting_id", "seq"), foreign_keys=[("posting_id", "postings", "id")],
    )
    db["sections"].create_index(["key"])

    db["evaluations"].create(
        {"posting_id": int, "scorer": str, "overall": int, "pay": int, "growth": int, "worklife": int, "mission": int,
         "overall_level": str, "pay_level": str, "growth_level": str, "worklife_level": str, "mission_level": str,
         "summary": str, "notes": str, "explanations": str, "evidence": str, "problems": str, "computed_at": str},
        pk=("posting_id", "scorer"), foreign_keys=[("posting_id", "postings", "id")],
    )
    db["evaluations"].create_index(["scorer", "overall"])
    db["signals"].create(
        {"posting_id": int, "scorer": str, "dimension": str, "position": int, "key": str, "value": str},
        pk=("posting_id", "scorer", "dimension", "position"), foreign_keys=[("posting_id", "postings", "id")],
    )
    db["posting_versions"].create(
        {"id": int, "posting_id": int, "version": int, "content_hash": str, "superseded_at": str, "snapshot": str},
        pk="id", foreign_keys=[("posting_id", "postings", "id")],
    )
    db["posting_versions"].create_index(["posting_id", "version"], unique=True)
    db["quarantine"].create(
        {"id": int, "raw_input_id": int, "source": str, "locator": str, "position": int, "input_sha256": str,
         "reason": str, "detail": str, "text": str, "at": str, "run_id": int},
        pk="id", foreign_keys=[("raw_input_id", "raw_inputs", "id"), ("run_id", "runs", "id")],
    )
    db["quarantine"].create_index(["source", "locator", "input_sha256", "position"], unique=True)
    # Trigram FTS over title, company and section text; rowid = postings.id. Filled in batches by
    # the writer (per-row triggers cost 2.5× on bulk ingest). Trigram needs ≥ 3 characters per term:
    # crawler.db.read.search() covers shorter terms.
    db.execute(
        "CREATE VIRTUAL TABLE postings_fts USING fts5(title, company, body, tokenize='trigram')"
    )


@migrations()
def m002_experience_and_company_info(db: sqlite_utils.Database) -> None:
    """Posting gained experience years and company info (industry, funding stage, size)."""
    sync_columns(db)


@migrations()
def m003_skills(db: sqlite_utils.Database) -> None:
    """Skill taxonomy, skills found per posting with evidence, and a key/value meta table."""
    sync_columns(db)
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
    """Open (creating if needed) a jobcrawl database: WAL mode, 16 KB pages, migrations applied."""
    path = Path(path)
    fresh = not path.exists() or path.stat().st_size == 0
    if readonly:
        import sqlite3

        conn = sqlite3.connect(readonly_uri(path), uri=True)
        return sqlite_utils.Database(conn)
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
    """Score columns on postings kept by triggers, the ``jobs`` view, listing indexes, segmented FTS (crawler.db.fts)."""
    from . import fts

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
    fts.create_segmented(db.conn)
    fts.rebuild(db.conn)


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
