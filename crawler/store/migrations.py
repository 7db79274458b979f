"""How a database gets the schema of ``schema.sql``: :func:`upgrade`.

A new database executes ``schema.sql`` once and records every migration as applied. A database made by an
earlier version gets its pending migrations, in their one linear order. Views and triggers hold no data: they
are defined only in ``schema.sql``, and every open makes those that differ from it again, so changing one is
an edit of ``schema.sql`` alone (the migrations that once changed one say so in their docstrings).

Migrations are frozen, explicit DDL and data changes, never derived from the models. They were once named
per branch (m101–m103 three times); a database records the names it was migrated with in
``_sqlite_migrations``, so each migration names the one it was (``was``) and a recorded old name counts as
applied. Adding a table or column: change ``schema.sql`` and add the next migration doing the same to an
old database; tests/test_migrations.py checks that both give the same schema.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timezone
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterator

import sqlite_utils
from sqlite_utils.migrations import Migrations

SCHEMA_SQL = Path(__file__).with_name("schema.sql")

migrations = Migrations("jobcrawl")
LEGACY_NAMES: dict[str, str] = {}
"""Migration name → the name databases made before the linear numbering recorded for it."""

Migration = Callable[[sqlite_utils.Database], None]


def migration(name: str, *, was: str | None = None) -> Callable[[Migration], Migration]:
    """Register the next migration as ``name``; ``was``: its name before the linear numbering (none for one made
    after it)."""
    if was is not None:
        LEGACY_NAMES[name] = was
    return migrations(name=name)


# --------------------------------------------------------------------------- statements and their comparison


def statements(sql: str) -> Iterator[str]:
    """The statements of a script, each without its leading comment lines or trailing semicolon."""
    lines: list[str] = []
    for line in sql.splitlines():
        if not lines and (not line.strip() or line.lstrip().startswith("--")):
            continue
        lines.append(line)
        text = "\n".join(lines)
        if sqlite3.complete_statement(text):
            yield text.strip().rstrip(";").rstrip()
            lines = []


_LITERAL = re.compile(r"('(?:[^']|'')*')")


def normalized(sql: str) -> str:
    """``sql`` with identifier quotes, case and spacing made uniform (string literals kept as written),
    so that the same definition written two ways compares equal."""
    parts = _LITERAL.split(sql)
    for i in range(0, len(parts), 2):
        text = re.sub(r'["\[\]`]', "", parts[i]).lower()
        text = re.sub(r"\s+", " ", text)
        parts[i] = re.sub(r" ?([(),=]) ?", r"\1", text)
    return "".join(parts).strip()


_CREATE = re.compile(r"CREATE\s+(?:UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|VIEW|TRIGGER)\s+(\w+)", re.IGNORECASE)


@lru_cache(maxsize=1)
def baseline() -> tuple[tuple[str, str, str], ...]:
    """``(type, name, statement)`` of every object ``schema.sql`` creates, in its order."""
    out = []
    for statement in statements(SCHEMA_SQL.read_text(encoding="utf-8")):
        match = _CREATE.match(statement)
        if not match:
            raise ValueError(f"{SCHEMA_SQL.name}: not a CREATE statement: {statement[:60]!r}")
        out.append((match[1].lower(), match[2], statement))
    return tuple(out)


# --------------------------------------------------------------------------- applying


REINDEX = "fts_rebuild_pending"
"""The ``meta`` key a migration that makes the full-text index again, empty, sets: :func:`upgrade` fills the index
once the views it reads are made again, and deletes the key in the same transaction."""


def upgrade(db: sqlite_utils.Database) -> None:
    """Bring ``db`` to the schema of ``schema.sql``: a database without any migration recorded is created
    from it; an older one gets its pending migrations; views and triggers that differ from ``schema.sql``
    are made again. No write when nothing differs."""
    applied = {m.name: m.applied_at for m in migrations.applied(db)}
    if not applied:
        create(db)
        return
    renamed = [(new, applied[old]) for new, old in LEGACY_NAMES.items() if old in applied and new not in applied]
    if renamed:
        with db.atomic():
            _record(db, renamed)
    if migrations.pending(db):
        migrations.apply(db)
    derive_views_and_triggers(db)
    if db.execute("SELECT 1 FROM meta WHERE key = ?", [REINDEX]).fetchone():
        from crawler.store import fts

        fts.register(db.conn)
        with db.atomic():
            fts.rebuild(db.conn)
            db.execute("DELETE FROM meta WHERE key = ?", [REINDEX])


def create(db: sqlite_utils.Database) -> None:
    """Create the schema of ``schema.sql`` in an empty database, every migration recorded as applied."""
    with db.atomic():
        migrations.ensure_migrations_table(db)
        for _, _, statement in baseline():
            db.execute(statement)
        _record(db, [(m.name, None) for m in migrations.pending(db)])


def derive_views_and_triggers(db: sqlite_utils.Database) -> None:
    """Make every view and trigger of ``schema.sql`` whose definition in ``db`` differs (or is missing) again,
    in one transaction."""
    have = {(kind, name): sql for kind, name, sql in db.execute("SELECT type, name, sql FROM sqlite_master")}
    stale = [(kind, name, statement) for kind, name, statement in baseline()
             if kind in ("view", "trigger") and normalized(have.get((kind, name)) or "") != normalized(statement)]
    if stale:
        with db.atomic():
            for kind, name, statement in stale:
                db.execute(f"DROP {kind.upper()} IF EXISTS [{name}]")
                db.execute(statement)


def _record(db: sqlite_utils.Database, names: list[tuple[str, str | None]]) -> None:
    """Record migrations as applied (at the given time, else now)."""
    now = str(datetime.now(timezone.utc))
    db[Migrations.migrations_table].insert_all(  # type: ignore[union-attr]
        {"migration_set": migrations.name, "name": name, "applied_at": at or now} for name, at in names)


# --------------------------------------------------------------------------- the migrations, in order


# The first schema. Databases made before 2026-11-29 (commit 1bc4cc5) got fewer postings columns from it (it was
# then derived from the model); 0002 and 0003 add those there.
INITIAL_SQL = """
CREATE TABLE "runs" (
   "id" INTEGER PRIMARY KEY, "kind" TEXT, "started" TEXT, "finished" TEXT, "status" TEXT, "args" TEXT, "files" INTEGER,
   "found" INTEGER, "new" INTEGER, "updated" INTEGER, "unchanged" INTEGER, "quarantined" INTEGER, "closed" INTEGER,
   "stats" TEXT
);
CREATE TABLE "raw_inputs" (
   "id" INTEGER PRIMARY KEY, "source" TEXT, "locator" TEXT, "sha256" TEXT, "size" INTEGER, "encoding" TEXT,
   "text" TEXT, "body" BLOB, "fetched_at" TEXT, "as_of" TEXT, "status" TEXT, "error" TEXT, "postings" INTEGER,
   "run_id" INTEGER REFERENCES "runs"("id")
);
CREATE UNIQUE INDEX "idx_raw_inputs_source_locator_sha256" ON "raw_inputs" ("source", "locator", "sha256");
CREATE TABLE "postings" (
   "id" INTEGER PRIMARY KEY, "key" TEXT, "source" TEXT, "source_id" TEXT, "locator" TEXT, "position" INTEGER,
   "url" TEXT, "company" TEXT, "title" TEXT, "city" TEXT, "district" TEXT, "location_raw" TEXT, "category" TEXT,
   "seniority" TEXT, "employment_type" TEXT, "work_mode" TEXT, "remote" INTEGER, "experience" TEXT,
   "experience_min_years" REAL, "experience_max_years" REAL, "education" TEXT, "company_info_raw" TEXT,
   "company_info_industry" TEXT, "company_info_funding_stage" TEXT, "company_info_size_min" INTEGER,
   "company_info_size_max" INTEGER, "posted_raw" TEXT, "posted_at" TEXT, "posted_approx" INTEGER, "is_new" INTEGER,
   "published_label" TEXT, "valid_through" TEXT, "tags" TEXT, "skills" TEXT, "salary_raw" TEXT,
   "salary_status" TEXT, "salary_min" REAL, "salary_max" REAL, "salary_currency" TEXT, "salary_period" TEXT,
   "salary_months" INTEGER, "salary_monthly_min" REAL, "salary_monthly_max" REAL, "salary_annual_min" REAL,
   "salary_annual_max" REAL, "salary_estimated" INTEGER, "salary_implausible" INTEGER, "salary_compare_raw" TEXT,
   "salary_vs_median" TEXT, "salary_compare_scope" TEXT, "salary_signal_raw" TEXT, "salary_signal_label" TEXT,
   "salary_signal_min" REAL, "salary_signal_max" REAL, "salary_signal_currency" TEXT, "salary_signal_period" TEXT,
   "salary_signal_estimated" INTEGER, "salary_signal_implausible" INTEGER, "company_activity_label" TEXT,
   "company_activity_raw" TEXT, "company_activity_city" TEXT, "company_activity_category" TEXT,
   "company_activity_open_jobs" INTEGER, "company_activity_open_jobs_approx" INTEGER,
   "company_activity_open_in_category" INTEGER, "market_label" TEXT, "market_raw" TEXT, "market_city" TEXT,
   "market_category" TEXT, "market_open_jobs" INTEGER, "market_open_jobs_approx" INTEGER,
   "market_open_in_category" INTEGER, "description" TEXT, "insights" TEXT, "extra" TEXT, "problems" TEXT,
   "content_hash" TEXT, "input_sha256" TEXT, "as_of" TEXT, "first_seen" TEXT, "last_seen" TEXT, "closed_at" TEXT,
   "complete_listing" INTEGER, "raw_input_id" INTEGER REFERENCES "raw_inputs"("id"), "version" INTEGER
);
CREATE UNIQUE INDEX "idx_postings_key" ON "postings" ("key");
CREATE INDEX "idx_postings_company" ON "postings" ("company");
CREATE INDEX "idx_postings_city" ON "postings" ("city");
CREATE INDEX "idx_postings_category" ON "postings" ("category");
CREATE INDEX "idx_postings_posted_at" ON "postings" ("posted_at");
CREATE INDEX "idx_postings_last_seen" ON "postings" ("last_seen");
CREATE INDEX "idx_postings_salary_monthly_max" ON "postings" ("salary_monthly_max");
CREATE TABLE "sections" (
   "posting_id" INTEGER REFERENCES "postings"("id"), "seq" INTEGER, "key" TEXT, "heading" TEXT, "position" INTEGER,
   "text" TEXT, PRIMARY KEY ("posting_id", "seq")
);
CREATE INDEX "idx_sections_key" ON "sections" ("key");
CREATE TABLE "evaluations" (
   "posting_id" INTEGER REFERENCES "postings"("id"), "scorer" TEXT, "overall" INTEGER, "pay" INTEGER,
   "growth" INTEGER, "worklife" INTEGER, "mission" INTEGER, "overall_level" TEXT, "pay_level" TEXT,
   "growth_level" TEXT, "worklife_level" TEXT, "mission_level" TEXT, "summary" TEXT, "notes" TEXT,
   "explanations" TEXT, "evidence" TEXT, "problems" TEXT, "computed_at" TEXT, PRIMARY KEY ("posting_id", "scorer")
);
CREATE INDEX "idx_evaluations_scorer_overall" ON "evaluations" ("scorer", "overall");
CREATE TABLE "signals" (
   "posting_id" INTEGER REFERENCES "postings"("id"), "scorer" TEXT, "dimension" TEXT, "position" INTEGER,
   "key" TEXT, "value" TEXT, PRIMARY KEY ("posting_id", "scorer", "dimension", "position")
);
CREATE TABLE "posting_versions" (
   "id" INTEGER PRIMARY KEY, "posting_id" INTEGER REFERENCES "postings"("id"), "version" INTEGER,
   "content_hash" TEXT, "superseded_at" TEXT, "snapshot" TEXT
);
CREATE UNIQUE INDEX "idx_posting_versions_posting_id_version" ON "posting_versions" ("posting_id", "version");
CREATE TABLE "quarantine" (
   "id" INTEGER PRIMARY KEY, "raw_input_id" INTEGER REFERENCES "raw_inputs"("id"), "source" TEXT, "locator" TEXT,
   "position" INTEGER, "input_sha256" TEXT, "reason" TEXT, "detail" TEXT, "text" TEXT, "at" TEXT,
   "run_id" INTEGER REFERENCES "runs"("id")
);
CREATE UNIQUE INDEX "idx_quarantine_source_locator_input_sha256_position"
    ON "quarantine" ("source", "locator", "input_sha256", "position");
-- Trigram FTS over title, company and section text (0020 replaces it).
CREATE VIRTUAL TABLE postings_fts USING fts5(title, company, body, tokenize='trigram');
"""


def _add_missing_columns(db: sqlite_utils.Database, table: str, columns: tuple[tuple[str, str], ...]) -> None:
    have = {row[1] for row in db.execute(f"PRAGMA table_info([{table}])")}
    for name, sql_type in columns:
        if name not in have:
            db.execute(f"ALTER TABLE [{table}] ADD COLUMN [{name}] {sql_type}")


@migration("0001_initial", was="m001_initial")
def m0001(db: sqlite_utils.Database) -> None:
    """Runs, raw inputs, postings, sections, evaluations, signals, versions, quarantine; trigram search."""
    for statement in statements(INITIAL_SQL):
        db.execute(statement)


@migration("0002_experience_and_company_info", was="m002_experience_and_company_info")
def m0002(db: sqlite_utils.Database) -> None:
    """Posting gained experience years and company info (industry, funding stage, size), and insights."""
    _add_missing_columns(db, "postings", (
        ("experience_min_years", "REAL"), ("experience_max_years", "REAL"), ("company_info_raw", "TEXT"),
        ("company_info_industry", "TEXT"), ("company_info_funding_stage", "TEXT"),
        ("company_info_size_min", "INTEGER"), ("company_info_size_max", "INTEGER"), ("insights", "TEXT")))


@migration("0003_skills", was="m003_skills")
def m0003(db: sqlite_utils.Database) -> None:
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


@migration("0004_dedupe", was="m004_dedupe")
def m0004(db: sqlite_utils.Database) -> None:
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


@migration("0005_crawl_runs_and_listings", was="m005_crawl_runs_and_listings")
def m0005(db: sqlite_utils.Database) -> None:
    """Crawl runs record their source, network counts and errors; listing_postings scopes closing."""
    for column, typ in (("source", str), ("requests", int), ("responses", str), ("errors", int), ("reopened", int)):
        if column not in db["runs"].columns_dict:
            db["runs"].add_column(column, typ)
    db["listing_postings"].create(
        {"listing": str, "key": str, "first_seen": str, "last_seen": str, "closed_at": str, "run_id": int},
        pk=("listing", "key"), foreign_keys=[("run_id", "runs", "id")],
    )
    db["listing_postings"].create_index(["key"])


@migration("0006_browse", was="m006_browse")
def m0006(db: sqlite_utils.Database) -> None:
    """The listing's score on postings (score, score_level, score_by: the ``evaluations_score_*`` triggers keep
    them; 0025 fills them), the ``jobs`` view, listing indexes. It also made a segmented index, postings_seg,
    which 0020 drops."""
    for column, typ in (("score", int), ("score_level", str), ("score_by", str)):
        if column not in db["postings"].columns_dict:
            db["postings"].add_column(column, typ)
    for cols in (["score"], ["score_level"], ["work_mode"]):
        db["postings"].create_index(cols)


@migration("0007_market_stats", was="m007_market_stats")
def m0007(db: sqlite_utils.Database) -> None:
    """Market statistics of the corpus (crawler.score.market), replaced on every scoring run."""
    db["market_stats"].create(
        {"scope": str, "key": str, "currency": str, "n": int, "p25": float, "median": float, "p75": float,
         "computed_at": str},
    )
    db["market_stats"].create_index(["scope", "key"])


@migration("0008_listing_indexes", was="m008_browse_listing_indexes")
def m0008(db: sqlite_utils.Database) -> None:
    """Indexes for the listing's usual filters: a city or category sorted by score; city, work mode and pay."""
    for cols in (["city", "score"], ["category", "score"], ["city", "work_mode", "salary_monthly_max"]):
        db["postings"].create_index(cols, if_not_exists=True)


@migration("0009_count_indexes", was="m009_browse_counts")
def m0009(db: sqlite_utils.Database) -> None:
    """Indexes for the listings' counts and facets (browse/facets.py): ``postings(id)``, a narrow index
    of the ids that a search's count seeks instead of the wide rows, and ``posting_skills(skill,
    posting_id)`` for the ``_skill`` filter, which replaces ``posting_skills(skill)``."""
    db["postings"].create_index(["id"], if_not_exists=True)
    db["posting_skills"].create_index(["skill", "posting_id"], if_not_exists=True)
    db.execute("DROP INDEX IF EXISTS idx_posting_skills_skill")


@migration("0010_input_parses", was="m010_input_parses")
def m0010(db: sqlite_utils.Database) -> None:
    """The last complete parse of each stored input, so a re-run can skip inputs it would not change
    (crawler/ingest/ledger.py)."""
    db["input_parses"].create(
        {"raw_input_id": int, "as_of": str, "parser": str, "status": str, "postings": int, "run_id": int,
         "parsed_at": str},
        pk="raw_input_id", foreign_keys=[("raw_input_id", "raw_inputs", "id"), ("run_id", "runs", "id")],
    )


@migration("0011_insights_table_to_column", was="m011_insights_table_to_column")
def m0011(db: sqlite_utils.Database) -> None:
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


@migration("0012_raw_input_reader", was="m012_raw_input_reader")
def m0012(db: sqlite_utils.Database) -> None:
    """How to parse a raw input again without fetching it (``jobcrawl reparse``)."""
    db.execute("ALTER TABLE raw_inputs ADD COLUMN reader TEXT")


@migration("0013_watches", was="m101_alerts_watches")
def m0013(db: sqlite_utils.Database) -> None:
    """Saved searches (``watches``), the postings each has seen (``watch_matches``) and every delivery of
    a match to a destination (``watch_deliveries``): crawler/alerts/store.py, crawler/alerts/delivery.py."""
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


@migration("0014_posting_blocks", was="m102_alerts_blocks")
def m0014(db: sqlite_utils.Database) -> None:
    """Postings a profile's blocklist hides (never deleted): the rule that matched, where and what."""
    db.execute("""CREATE TABLE posting_blocks (
        posting_id INTEGER NOT NULL REFERENCES postings (id),
        profile TEXT NOT NULL,
        rule TEXT NOT NULL,
        detail TEXT,
        PRIMARY KEY (posting_id, profile)
    )""")


@migration("0015_posting_events", was="m103_alerts_history")
def m0015(db: sqlite_utils.Database) -> None:
    """Closing and reopening of postings as events (kept by the triggers ``postings_closed`` and
    ``postings_reopened``, so no writer records them), and the indexes of the "changed since" filter."""
    db.execute("""CREATE TABLE posting_events (
        id INTEGER PRIMARY KEY,
        posting_id INTEGER NOT NULL REFERENCES postings (id),
        event TEXT NOT NULL,
        at TEXT NOT NULL
    )""")
    db.execute("CREATE INDEX idx_posting_events_posting ON posting_events (posting_id)")
    db.execute("CREATE INDEX idx_posting_events_at ON posting_events (at)")
    db.execute("CREATE INDEX idx_posting_versions_superseded_at ON posting_versions (superseded_at)")
    db.execute("CREATE INDEX idx_postings_first_seen ON postings (first_seen)")
    db.execute("CREATE INDEX idx_postings_closed_at ON postings (closed_at)")


@migration("0016_fit_view", was="m104_alerts_fit_view")
def m0016(db: sqlite_utils.Database) -> None:
    """The ``fit`` view (browse: sortable personal fit with its reasons)."""


@migration("0017_spool_batches", was="m101_distributed_spool_batches")
def m0017(db: sqlite_utils.Database) -> None:
    """Batches stored from the Redis item spool, once each, with the writer's counts (crawler/store/batches.py)."""
    db.execute("""CREATE TABLE spool_batches (
   id TEXT PRIMARY KEY,
   run_id INTEGER REFERENCES runs(id),
   stored_at TEXT,
   counts TEXT
)""")
    db.execute("CREATE INDEX idx_spool_batches_run_id ON spool_batches (run_id)")


@migration("0018_quarantine_once", was="m102_distributed_quarantine_once")
def m0018(db: sqlite_utils.Database) -> None:
    """A quarantined input without a hash (``input_sha256`` null) is stored once, as one with a hash is: the unique
    index treated nulls as distinct, so the same batch written twice (the Redis spool delivers at least once) or a
    re-run added a copy. Copies already there are folded into the first row."""
    db.execute("""DELETE FROM quarantine WHERE input_sha256 IS NULL AND id NOT IN (
        SELECT min(id) FROM quarantine WHERE input_sha256 IS NULL GROUP BY source, locator, position)""")
    db.execute('DROP INDEX "idx_quarantine_source_locator_input_sha256_position"')
    db.execute("""CREATE UNIQUE INDEX idx_quarantine_once
    ON quarantine (source, locator, coalesce(input_sha256, ''), position)""")


@migration("0019_source_health", was="m103_distributed_source_health")
def m0019(db: sqlite_utils.Database) -> None:
    """The ``source_health`` view: each crawled source's last run, last success, counts and state."""
    db.execute("CREATE INDEX IF NOT EXISTS idx_runs_source ON runs (source, kind)")


@migration("0020_one_search_index", was="m130_serve_one_search_index")
def m0020(db: sqlite_utils.Database) -> None:
    """One full-text index (crawler/store/fts.py) replaces the trigram ``postings_fts`` and the
    segmented ``postings_seg``: title, company, city, skill names, JD text and the parts of the
    compound names of title and skills, CJK characters as tokens. Filled by 0034."""
    db.execute("DROP TABLE IF EXISTS postings_seg")
    db.execute("DROP TABLE IF EXISTS postings_fts")
    db.execute("DELETE FROM meta WHERE key = 'search_index_versions'")
    db.execute("CREATE VIRTUAL TABLE postings_fts USING fts5("
               "title, company, city, skills, body, parts, tokenize=\"unicode61 tokenchars '+#'\")")


@migration("0021_skill_kinds", was="m131_serve_skill_kinds")
def m0021(db: sqlite_utils.Database) -> None:
    """Each skill's kind (technical, domain or soft), of its category: the ``[kinds]`` table of
    normalize/data/skills.toml, which every run's taxonomy sync keeps it equal to."""
    db.execute("ALTER TABLE skills ADD COLUMN kind TEXT")
    db.execute("UPDATE skills SET kind = CASE category WHEN 'soft' THEN 'soft' WHEN 'domain' THEN 'domain'"
               " ELSE 'technical' END")
    db.execute("CREATE INDEX idx_skills_kind ON skills (kind)")


@migration("0022_jobs_view_columns", was="m132_serve_jobs_view")
def m0022(db: sqlite_utils.Database) -> None:
    """The ``jobs`` view with the columns its page shows first (title, company, city, salary, score,
    posted, source) and the posting's source."""


@migration("0023_dedupe_keys", was="m101_trust_dedupe_keys")
def m0023(db: sqlite_utils.Database) -> None:
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


@migration("0024_time_and_pay_source", was="m102_trust_time_and_pay_source")
def m0024(db: sqlite_utils.Database) -> None:
    """Where a salary was read (salary_source), what a post time rests on (posted_source), the source's time
    zone and the post time in it (tz, posted_local), the run that first saw a posting (first_run_id, for
    "new" without a post time); the ``jobs`` view shows a hidden employer as （企业未公开） and the local time.

    Old rows: salary_source 'field' where a salary was stored (the old code read no other), first_run_id the
    run that first stored the posting's raw input; posted_source and tz stay null until the posting is parsed
    again (``--reparse``)."""
    conn = db.conn
    _add_missing_columns(db, "postings", (("salary_source", "TEXT"), ("posted_source", "TEXT"), ("tz", "TEXT"),
                                          ("posted_local", "TEXT"), ("first_run_id", "INTEGER")))
    conn.execute("UPDATE postings SET salary_source = 'field' WHERE salary_source IS NULL AND salary_status != 'missing'")
    conn.execute("UPDATE postings SET first_run_id = (SELECT run_id FROM raw_inputs WHERE raw_inputs.id = postings.raw_input_id)"
                 " WHERE first_run_id IS NULL")
    conn.execute("CREATE INDEX idx_postings_source_first_run_id ON postings (source, first_run_id)")


@migration("0025_evaluation_state", was="m103_trust_evaluation_state")
def m0025(db: sqlite_utils.Database) -> None:
    """Evaluations say how complete they are and what they were computed from (completeness, inputs_digest:
    the scoring step rescores a posting only when its digest changes, so every evaluation made before is
    rescored once, with the current rules). The listing's score (the ``evaluations_score_*`` triggers) is ours
    when we have an overall, else the app's, else our level alone (信息不足): every posting's is set so."""
    conn = db.conn
    conn.execute("ALTER TABLE evaluations ADD COLUMN completeness REAL")
    conn.execute("ALTER TABLE evaluations ADD COLUMN inputs_digest TEXT")
    conn.execute("UPDATE postings SET (score, score_level, score_by) = (SELECT overall, overall_level, scorer"
                 " FROM evaluations WHERE posting_id = postings.id AND scorer IN ('jobcrawl-v1', 'source')"
                 " AND (overall IS NOT NULL OR overall_level IS NOT NULL)"
                 " ORDER BY overall IS NOT NULL DESC, scorer = 'jobcrawl-v1' DESC LIMIT 1)")


@migration("0026_jobs_view", was="m140_jobs_view")
def m0026(db: sqlite_utils.Database) -> None:
    """The ``jobs`` view with both the compact listing's columns first (0022) and a hidden employer shown as
    （企业未公开）, the local post time and what it rests on, and where the salary was read (0024)."""


@migration("0027_stale_index", was="m150_stale_index")
def m0027(db: sqlite_utils.Database) -> None:
    """An index of (last_seen, closed_at), so that the listings' stale filter (crawler.store.history.HIDE_STALE) and
    its count read the index alone instead of every open posting's row (bench/browse.py)."""
    db.execute("CREATE INDEX IF NOT EXISTS idx_postings_last_seen_closed_at ON postings (last_seen, closed_at)")


@migration("0028_raw_text_zlib", was="m160_raw_text_zlib")
def m0028(db: sqlite_utils.Database) -> None:
    """A raw input's long text is stored compressed (crawler/store/rows.py: ``pack_text``): inputs stored before
    keep their text as it is, and are read either way (``raw_text``)."""
    db.execute("ALTER TABLE raw_inputs ADD COLUMN text_zlib BLOB")


@migration("0029_compact_evaluations")
def m0029(db: sqlite_utils.Database) -> None:
    """An evaluation keeps its signals in its own ``signals`` column and its evidence compact
    (normalize/evaluation.py, read back as it was): the ``signals`` table and its rows go. Every stored
    evaluation is converted here, ``source`` ones included; no posting is scored again for it."""
    from normalize.evaluation import dumps, pack_evidence

    conn = db.conn
    conn.execute("ALTER TABLE evaluations ADD COLUMN signals TEXT")
    pairs: dict[tuple[int, str], dict[str, list[list[str]]]] = {}
    for pid, scorer, dim, key, value in conn.execute(
            "SELECT posting_id, scorer, dimension, key, value FROM signals ORDER BY posting_id, scorer, dimension, position"):
        pairs.setdefault((pid, scorer), {}).setdefault(dim, []).append([key, value])
    rows = conn.execute("SELECT rowid, posting_id, scorer, evidence FROM evaluations").fetchall()
    conn.executemany("UPDATE evaluations SET evidence = ?, signals = ? WHERE rowid = ?", (
        (dumps(pack_evidence(json.loads(evidence))) if evidence else evidence, dumps(pairs.get((pid, scorer), {})), rowid)
        for rowid, pid, scorer, evidence in rows))
    conn.execute("DROP TABLE signals")


def _rebuild(db: sqlite_utils.Database, table: str, create: str, select: str, indexes: tuple[str, ...] = ()) -> None:
    """Make ``table`` again as ``create`` (its schema.sql statement, named ``{table}_new``), filled by ``select``
    from the old one, and its ``indexes``."""
    conn = db.conn
    conn.execute(create)
    conn.execute(f"INSERT INTO {table}_new {select}")
    conn.execute(f"DROP TABLE {table}")
    conn.execute(f"ALTER TABLE {table}_new RENAME TO {table}")
    for index in indexes:
        conn.execute(index)


@migration("0030_posting_skills_offsets")
def m0030(db: sqlite_utils.Database) -> None:
    """``posting_skills`` keeps where the first occurrence is (first_offset, length) and no copy of what the
    section's text and ``skills`` hold (category, matched, snippet: read back by crawler.store.skills.evidence_records);
    WITHOUT ROWID."""
    _rebuild(db, "posting_skills", """CREATE TABLE posting_skills_new (
    posting_id INTEGER REFERENCES postings (id),
    skill TEXT REFERENCES skills (name),
    section TEXT,
    seq INTEGER,
    count INTEGER,
    first_offset INTEGER,
    length INTEGER,
    PRIMARY KEY (posting_id, skill, section)
) WITHOUT ROWID""", "SELECT posting_id, skill, section, seq, count, first_offset, length(matched) FROM posting_skills",
             ("CREATE INDEX idx_posting_skills_skill_posting_id ON posting_skills (skill, posting_id)",))


@migration("0031_quarantine_points_at_input")
def m0031(db: sqlite_utils.Database) -> None:
    """A quarantine row keeps no copy of its input's whole stored text (crawler/store/rows.py: ``copies_input``):
    ``text_in_input`` says so, and the copies stored before are cleared."""
    import zlib

    from crawler.store.rows import copies_input

    conn = db.conn
    conn.execute("ALTER TABLE quarantine ADD COLUMN text_in_input INTEGER NOT NULL DEFAULT 0")
    rows = conn.execute("SELECT q.id, q.text, r.text, r.text_zlib FROM quarantine q"
                        " JOIN raw_inputs r ON r.id = q.raw_input_id WHERE q.text IS NOT NULL")
    conn.executemany("UPDATE quarantine SET text = NULL, text_in_input = 1 WHERE id = ?", [
        (qid,) for qid, text, r_text, r_zlib in rows
        if copies_input(text, r_text if r_zlib is None else zlib.decompress(r_zlib).decode("utf-8", "surrogatepass"))])


@migration("0032_no_singleton_clusters")
def m0032(db: sqlite_utils.Database) -> None:
    """A posting's cluster is kept in ``dedupe_signatures.cluster_id``; ``clusters`` and ``cluster_members`` keep rows
    only for clusters of two or more members (a member alone is new, similarity 1.0, its own canonical member): the
    rows of clusters of one member go."""
    conn = db.conn
    conn.execute("ALTER TABLE dedupe_signatures ADD COLUMN cluster_id INTEGER")
    conn.execute("UPDATE dedupe_signatures SET cluster_id = (SELECT cluster_id FROM cluster_members m"
                 " WHERE m.posting_id = dedupe_signatures.posting_id)")
    conn.execute("CREATE INDEX idx_dedupe_signatures_cluster_id ON dedupe_signatures (cluster_id)")
    alone = "SELECT cluster_id FROM cluster_members GROUP BY cluster_id HAVING count(*) < 2"
    conn.execute(f"DELETE FROM clusters WHERE id IN ({alone})")
    conn.execute(f"DELETE FROM cluster_members WHERE cluster_id IN ({alone})")


@migration("0033_compact_sections")
def m0033(db: sqlite_utils.Database) -> None:
    """``sections`` keeps one row per section, its bullets one a line (crawler/store/sections.py), WITHOUT ROWID
    and without the index on ``key`` (no query of the project's reads by key): a bullet's row, position and heading
    copy go. Sections are numbered (``seq``) in the order of their first bullet."""
    conn = db.conn
    conn.execute("""CREATE TABLE sections_new (
    posting_id INTEGER REFERENCES postings (id),
    seq INTEGER,
    key TEXT,
    heading TEXT,
    text TEXT,
    PRIMARY KEY (posting_id, seq)
) WITHOUT ROWID""")
    rows = conn.execute("SELECT posting_id, key, heading, text FROM sections ORDER BY posting_id, seq")
    for pid, group in groupby(rows, key=itemgetter(0)):
        found: dict[str, tuple[str | None, list[str]]] = {}
        for _, key, heading, text in group:
            found.setdefault(key, (heading, []))[1].append(text)
        conn.executemany("INSERT INTO sections_new VALUES (?, ?, ?, ?, ?)", (
            (pid, seq, key, heading, "\n".join(bullets)) for seq, (key, (heading, bullets)) in enumerate(found.items())))
    conn.execute("DROP TABLE sections")
    conn.execute("ALTER TABLE sections_new RENAME TO sections")


FTS_SOURCE_0034 = """CREATE VIEW postings_fts_source AS SELECT
    id, fts_text(title) AS title, fts_text(company) AS company, fts_text(city) AS city, fts_skills(skills) AS skills,
    fts_body(tags, (SELECT group_concat(text, char(10)) FROM (SELECT text FROM sections WHERE posting_id = postings.id
                                                             ORDER BY seq)), description) AS body,
    fts_parts(title, skills) AS parts
FROM postings"""
"""The index's source view as 0034 made it (before sections kept spans); :func:`upgrade` makes the view of
``schema.sql`` after the migrations, which reads the same text."""


@migration("0034_fts_external_content")
def m0034(db: sqlite_utils.Database) -> None:
    """``postings_fts`` keeps no copy of the text it indexes (``postings_fts_content``): an external-content index
    that reads it from the view ``postings_fts_source`` (crawler/store/fts.py), rebuilt from the stored postings."""
    from crawler.store import fts

    fts.register(db.conn)
    db.execute(f"DROP VIEW IF EXISTS {fts.SOURCE}")
    db.execute(FTS_SOURCE_0034)
    db.execute("DROP TABLE postings_fts")
    db.execute("CREATE VIRTUAL TABLE postings_fts USING fts5(title, company, city, skills, body, parts, "
               "content='postings_fts_source', content_rowid='id', tokenize=\"unicode61 tokenchars '+#'\")")
    fts.rebuild(db.conn)


def _drop_columns(db: sqlite_utils.Database, table: str, columns: tuple[str, ...]) -> None:
    """Make ``table`` again without ``columns``, copying its rows once (ALTER TABLE DROP COLUMN copies them once a
    column), and its indexes again. The views and triggers that name it are dropped first (renaming the new table
    checks them): :func:`upgrade` makes them again from ``schema.sql`` after the migrations."""
    conn = db.conn
    references = {row[3]: f" REFERENCES {row[2]} ({row[4]})" for row in conn.execute(f"PRAGMA foreign_key_list([{table}])")}
    kept = [(name, f"{name} {kind}{' PRIMARY KEY' * bool(pk)}{' NOT NULL' * notnull}"
                   f"{'' if default is None else f' DEFAULT {default}'}{references.get(name, '')}")
            for _, name, kind, notnull, default, pk in conn.execute(f"PRAGMA table_info([{table}])") if name not in columns]
    indexes = [sql for (sql,) in conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", (table,))]
    _drop_views_and_triggers(conn, table)
    names = ", ".join(name for name, _ in kept)
    _rebuild(db, table, f"CREATE TABLE {table}_new (\n    " + ",\n    ".join(d for _, d in kept) + "\n)",
             f"SELECT {names} FROM {table}", tuple(indexes))



def _drop_views_and_triggers(conn: sqlite3.Connection, *tables: str) -> None:
    """Drop every view and trigger whose SQL names one of ``tables`` (a column change checks them; :func:`upgrade`
    makes them again from ``schema.sql``)."""
    named = re.compile(r"\b(" + "|".join(map(re.escape, tables)) + r")\b")
    for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE type IN ('view', 'trigger')"
                                        ).fetchall():
        if named.search(sql):
            conn.execute(f"DROP {kind.upper()} [{name}]")

APP_MARKET_0035 = (
    "salary_signal_raw TEXT", "salary_signal_label TEXT", "salary_signal_min REAL", "salary_signal_max REAL",
    "salary_signal_currency TEXT", "salary_signal_period TEXT", "salary_signal_estimated INTEGER",
    "salary_signal_implausible INTEGER", "company_activity_label TEXT", "company_activity_raw TEXT",
    "company_activity_city TEXT", "company_activity_category TEXT", "company_activity_open_jobs INTEGER",
    "company_activity_open_jobs_approx INTEGER", "company_activity_open_in_category INTEGER", "market_label TEXT",
    "market_raw TEXT", "market_city TEXT", "market_category TEXT", "market_open_jobs INTEGER",
    "market_open_jobs_approx INTEGER", "market_open_in_category INTEGER")


@migration("0035_app_market")
def m0035(db: sqlite_utils.Database) -> None:
    """The 22 postings columns only the app's dumps fill (salary signal, company activity, market) move to
    ``app_market``, one row a posting with any of them set (an approximate flag other than 0 counts: a posting
    without a row reads false there)."""
    conn = db.conn
    columns = tuple(c.split()[0] for c in APP_MARKET_0035)
    conn.execute("CREATE TABLE app_market (\n    posting_id INTEGER PRIMARY KEY REFERENCES postings (id),\n    "
                 + ",\n    ".join(APP_MARKET_0035) + "\n)")
    stated = " OR ".join(f"{c} IS NOT 0" if c.endswith("_approx") else f"{c} IS NOT NULL" for c in columns)
    conn.execute(f"INSERT INTO app_market (posting_id, {', '.join(columns)}) SELECT id, {', '.join(columns)}"
                 f" FROM postings WHERE {stated}")
    _drop_columns(db, "postings", columns)


@migration("0036_values_stored_once")
def m0036(db: sqlite_utils.Database) -> None:
    """Values a row repeated are stored once: ``postings.source_id`` NULL where it is the url, ``input_sha256`` NULL
    where it is its raw input's; ``dedupe_signatures`` keeps the version of the posting its key was made from instead
    of the content hash, its fingerprint and identity as 16-byte blobs, and NULL for a url that is the posting's."""
    conn = db.conn
    conn.execute("UPDATE postings SET source_id = NULL WHERE source_id = url")
    conn.execute("UPDATE postings SET input_sha256 = NULL"
                 " WHERE input_sha256 = (SELECT sha256 FROM raw_inputs WHERE id = postings.raw_input_id)")
    conn.execute("""CREATE TABLE dedupe_signatures_new (
    posting_id INTEGER PRIMARY KEY REFERENCES postings (id),
    posting_version INTEGER,
    signature BLOB,
    company TEXT,
    title TEXT,
    city TEXT,
    fingerprint BLOB,
    identity BLOB,
    url TEXT,
    has_jd INTEGER,
    completeness INTEGER,
    cluster_id INTEGER
)""")
    rows = conn.execute(
        "SELECT s.posting_id, CASE WHEN s.content_hash IS p.content_hash THEN p.version END, s.signature, s.company,"
        " s.title, s.city, s.fingerprint, s.identity, nullif(s.url, p.url), s.has_jd, s.completeness, s.cluster_id"
        " FROM dedupe_signatures s LEFT JOIN postings p ON p.id = s.posting_id")
    conn.executemany("INSERT INTO dedupe_signatures_new VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (
        (*row[:6], bytes.fromhex(row[6] or "") or None, bytes.fromhex(row[7] or "") or None, *row[8:]) for row in rows))
    conn.execute("DROP TABLE dedupe_signatures")
    conn.execute("ALTER TABLE dedupe_signatures_new RENAME TO dedupe_signatures")
    conn.execute("CREATE INDEX idx_dedupe_signatures_fingerprint ON dedupe_signatures (fingerprint)")
    conn.execute("CREATE INDEX idx_dedupe_signatures_cluster_id ON dedupe_signatures (cluster_id)")


@migration("0037_application_events")
def m0037(db: sqlite_utils.Database) -> None:
    """``application_events``: every status change of an application (the view ``applications`` reads them)."""
    db.execute(next(statement for _, name, statement in baseline() if name == "application_events"))
    db.execute("CREATE INDEX idx_application_events_posting_id ON application_events (posting_id)")


@migration("0038_velocity_weekly")
def m0038(db: sqlite_utils.Database) -> None:
    """``velocity_weekly``: hiring velocity per week, kept by crawler/market/velocity.py."""
    db.execute(next(statement for _, name, statement in baseline() if name == "velocity_weekly"))


@migration("0039_ghost_signals")
def m0039(db: sqlite_utils.Database) -> None:
    """``ghost_signals`` and ``likely_employers``: what the signals step finds of each posting (the views ``jobs``
    and ``fit`` read them)."""
    for table in ("ghost_signals", "likely_employers"):
        db.execute(next(statement for _, name, statement in baseline() if name == table))


@migration("0040_postings_raw_hash")
def m0040(db: sqlite_utils.Database) -> None:
    """``postings.raw_hash``: the hash of the raw item a posting was last stored or seen from, so an ingest need not
    parse a row it read before (crawler/ingest/textdump.py)."""
    db.execute("ALTER TABLE postings ADD COLUMN raw_hash TEXT")


@migration("0041_postings_fewer_indexes")
def m0041(db: sqlite_utils.Database) -> None:
    """Drop the ``postings`` indexes that another index starts with (``city``, ``category``, ``last_seen``): the
    lookups, sorts and facet counts they served use ``(city, score)``, ``(category, score)`` and
    ``(last_seen, closed_at)``."""
    for name in ("idx_postings_city", "idx_postings_category", "idx_postings_last_seen"):
        db.execute(f"DROP INDEX IF EXISTS {name}")


def _entries_of_column(db: sqlite_utils.Database, entries_table: str, table: str, key: str, column: str,
                       convert: Callable[[sqlite3.Connection, list[str]], list[str | None]]) -> None:
    """Make ``entries_table`` (crawler/store/entries.py) with its hash index, then store each non-null ``column`` of
    ``table`` as ``convert`` gives it, 2,000 rows at a time in ``key`` order."""
    db.execute(next(statement for _, name, statement in baseline() if name == entries_table))
    db.execute(f"CREATE INDEX idx_{entries_table}_hash ON {entries_table} (hash)")
    conn = db.conn
    last = 0
    while rows := conn.execute(f"SELECT {key}, {column} FROM {table} WHERE {key} > ? AND {column} IS NOT NULL"
                               f" ORDER BY {key} LIMIT 2000", (last,)).fetchall():
        conn.executemany(f"UPDATE {table} SET {column} = ? WHERE {key} = ?",
                         zip(convert(conn, [value for _, value in rows]), (k for k, _ in rows)))
        last = rows[-1][0]


@migration("0042_evidence_entries")
def m0042(db: sqlite_utils.Database) -> None:
    """Evidence entries stored once (``evidence_entries``, crawler/store/evidence.py): every stored evaluation's
    evidence is converted to entry ids here, 2,000 evaluations at a time; no posting is scored again for it."""
    from crawler.store.evidence import intern_rows

    _entries_of_column(db, "evidence_entries", "evaluations", "rowid", "evidence",
                       lambda conn, values: [row[0] for row in intern_rows(conn, [(v,) for v in values], 0)])


@migration("0043_sections_spans")
def m0043(db: sqlite_utils.Database) -> None:
    """``sections.spans``: a section whose every bullet is found in its posting's description, in order, keeps
    where (normalize/sections.py: spans_of) and no ``text``; the view ``section_texts`` reads the text back."""
    from crawler.store.sections import section_bullets, stored_spans

    conn = db.conn
    conn.execute("ALTER TABLE sections ADD COLUMN spans TEXT")
    ids = [pid for (pid,) in conn.execute("SELECT DISTINCT posting_id FROM sections ORDER BY posting_id")]
    for i in range(0, len(ids), 1000):
        rows = conn.execute("SELECT s.posting_id, s.seq, s.text, p.description FROM sections s"
                            " JOIN postings p ON p.id = s.posting_id WHERE s.posting_id BETWEEN ? AND ?"
                            " AND s.text IS NOT NULL", (ids[i], ids[min(i + 1000, len(ids)) - 1])).fetchall()
        changes = [(spans, pid, seq) for pid, seq, text, description in rows
                   if (spans := stored_spans(description, section_bullets(text))) is not None]
        conn.executemany("UPDATE sections SET spans = ?, text = NULL WHERE posting_id = ? AND seq = ?", changes)


@migration("0044_signatures_16_bits")
def m0044(db: sqlite_utils.Database) -> None:
    """``dedupe_signatures.signature`` keeps the low 16 bits of each MinHash value (normalize/dedupe/minhash.py):
    a stored 525-byte signature (datasketch LeanMinHash: a 13-byte header, then 128 little-endian uint32) becomes
    its 128 values' low halves, little-endian uint16 (256 bytes), 2,000 rows at a time. Keys of the rules then
    current are recorded as of the same rules stored so; no key is computed again."""
    conn = db.conn
    last = 0
    while rows := conn.execute("SELECT posting_id, signature FROM dedupe_signatures WHERE posting_id > ?"
                               " ORDER BY posting_id LIMIT 2000", (last,)).fetchall():
        conn.executemany("UPDATE dedupe_signatures SET signature = ? WHERE posting_id = ?", (
            (b"".join(data[i : i + 2] for i in range(13, 525, 4)), pid)
            for pid, data in rows if data is not None and len(data) == 525))
        last = rows[-1][0]
    conn.execute("UPDATE meta SET value = 'minhash-affine32-p128-s1-k5-b16-jd-v2'"
                 " WHERE key = 'signature_version' AND value = 'minhash-affine32-p128-s1-k5-jd-v2'")


@migration("0045_market_figures")
def m0045(db: sqlite_utils.Database) -> None:
    """Market statistics stored small: the rows of ``market_stats`` move to ``market_figures`` in their order, the
    scope as a code (crawler/store/stats.py: SCOPES), their time once in ``meta``, without an index; the table gives
    way to the view ``market_stats`` (made from schema.sql on open) with today's columns."""
    from crawler.store.stats import SCOPES

    db.execute(next(statement for _, name, statement in baseline() if name == "market_figures"))
    codes = " ".join(f"WHEN '{scope}' THEN {code}" for code, scope in enumerate(SCOPES))
    db.execute("INSERT INTO market_figures (scope, key, currency, n, p25, median, p75)"
               f" SELECT CASE scope {codes} END, key, currency, n, p25, median, p75 FROM market_stats"
               f" WHERE scope IN ({', '.join(repr(s) for s in SCOPES)}) ORDER BY rowid")
    db.execute("INSERT OR REPLACE INTO meta (key, value) SELECT 'market_computed_at', max(computed_at)"
               " FROM market_stats HAVING count(*)")
    db.execute("DROP TABLE market_stats")


@migration("0046_extra_entries")
def m0046(db: sqlite_utils.Database) -> None:
    """A posting's extra fields stored once (``extra_entries``, crawler/store/extra.py): every stored ``extra``
    object becomes the array of its pairs' ids here (an empty one NULL), 2,000 postings at a time."""
    from crawler.store.extra import entry_texts, intern_values

    def ids(conn: sqlite3.Connection, texts: list[str]) -> list[str | None]:
        objects = [json.loads(text) for text in texts]
        stored = iter(intern_values(conn, [entry_texts(o) for o in objects if type(o) is dict]))
        return [next(stored) if type(o) is dict else text for o, text in zip(objects, texts)]

    _entries_of_column(db, "extra_entries", "postings", "id", "extra", ids)


@migration("0047_skills_fewer_indexes")
def m0047(db: sqlite_utils.Database) -> None:
    """Drop the ``skills`` indexes on ``category`` and ``kind``: the taxonomy (about 800 rows, a few values each) is
    read whole by every reader, and its two indexes were 9 of an empty database's pages."""
    for name in ("idx_skills_category", "idx_skills_kind"):
        db.execute(f"DROP INDEX IF EXISTS {name}")


@migration("0048_evaluations_inputs_digest_integer")
def m0048(db: sqlite_utils.Database) -> None:
    """``evaluations.inputs_digest`` as a 64-bit integer (normalize/score/scorer.py: digest_int) instead of 32 hex
    characters: the same first 8 bytes of the same SHA-256, so no evaluation is scored again for it."""
    from normalize.score.scorer import digest_int

    conn = db.conn
    conn.execute("ALTER TABLE evaluations RENAME COLUMN inputs_digest TO inputs_digest_hex")
    conn.execute("ALTER TABLE evaluations ADD COLUMN inputs_digest INTEGER")
    conn.create_function("digest_int", 1, lambda h: digest_int(bytes.fromhex(h)) if h else None, deterministic=True)
    conn.execute("UPDATE evaluations SET inputs_digest = digest_int(inputs_digest_hex)")
    conn.execute("ALTER TABLE evaluations DROP COLUMN inputs_digest_hex")


@migration("0049_postings_seen_times_once")
def m0049(db: sqlite_utils.Database) -> None:
    """``postings.first_seen`` and ``last_seen`` become generated: read from ``first_seen_stored`` and
    ``last_seen_stored`` (the columns renamed), or ``as_of`` where those are NULL — as they are made here wherever
    they equal it. Their indexes are made again over the generated columns."""
    conn = db.conn
    for name in ("first_seen", "last_seen"):
        conn.execute(f"ALTER TABLE postings RENAME COLUMN {name} TO {name}_stored")
        conn.execute(f"ALTER TABLE postings ADD COLUMN {name} TEXT GENERATED ALWAYS AS"
                     f" (coalesce({name}_stored, as_of)) VIRTUAL")
    conn.execute("UPDATE postings SET first_seen_stored = nullif(first_seen_stored, as_of),"
                 " last_seen_stored = nullif(last_seen_stored, as_of)"
                 " WHERE first_seen_stored = as_of OR last_seen_stored = as_of")
    conn.execute("DROP INDEX IF EXISTS idx_postings_first_seen")
    conn.execute("DROP INDEX IF EXISTS idx_postings_last_seen_closed_at")
    conn.execute("CREATE INDEX idx_postings_first_seen ON postings (first_seen)")
    conn.execute("CREATE INDEX idx_postings_last_seen_closed_at ON postings (last_seen, closed_at)")


@migration("0050_postings_content_hash_bytes")
def m0050(db: sqlite_utils.Database) -> None:
    """``postings.content_hash`` becomes generated: the hex text of ``content_hash_stored`` (the column renamed), whose
    SHA-256 texts are stored as their 32 bytes here (crawler/store/rows.py: hash_bytes)."""
    from crawler.store.rows import hash_bytes

    conn = db.conn
    conn.execute("ALTER TABLE postings RENAME COLUMN content_hash TO content_hash_stored")
    conn.execute("ALTER TABLE postings ADD COLUMN content_hash TEXT GENERATED ALWAYS AS (CASE WHEN"
                 " typeof(content_hash_stored) = 'blob' THEN lower(hex(content_hash_stored)) ELSE content_hash_stored END)"
                 " VIRTUAL")
    conn.create_function("hash_bytes", 1, hash_bytes, deterministic=True)
    conn.execute("UPDATE postings SET content_hash_stored = hash_bytes(content_hash_stored)"
                 " WHERE typeof(content_hash_stored) = 'text'")


@migration("0051_evaluations_levels_generated")
def m0051(db: sqlite_utils.Database) -> None:
    """The five ``evaluations`` levels become generated: ours (``jobcrawl-v1``) by the rule from the number
    (较低 < 60 ≤ 中等 < 80 ≤ 较高, 信息不足 where NULL), every other scorer's read from ``<level>_given`` (the columns
    renamed), which is made NULL here for ours. The score triggers are dropped first (the rename would point them at
    the stored columns); every open makes them again from schema.sql."""
    conn = db.conn
    for name in ("insert", "update", "delete"):
        conn.execute(f"DROP TRIGGER IF EXISTS evaluations_score_{name}")
    for dim in ("overall", "pay", "growth", "worklife", "mission"):
        conn.execute(f"ALTER TABLE evaluations RENAME COLUMN {dim}_level TO {dim}_level_given")
        conn.execute(f"ALTER TABLE evaluations ADD COLUMN {dim}_level TEXT GENERATED ALWAYS AS (CASE WHEN"
                     f" scorer != 'jobcrawl-v1' THEN {dim}_level_given WHEN {dim} IS NULL THEN '信息不足'"
                     f" WHEN {dim} < 60 THEN '较低' WHEN {dim} < 80 THEN '中等' ELSE '较高' END) VIRTUAL")
    conn.execute("UPDATE evaluations SET overall_level_given = NULL, pay_level_given = NULL,"
                 " growth_level_given = NULL, worklife_level_given = NULL, mission_level_given = NULL"
                 " WHERE scorer = 'jobcrawl-v1'")


@migration("0052_evaluations_evidence_positional")
def m0052(db: sqlite_utils.Database) -> None:
    """``evaluations.evidence`` positional where it can be (crawler/store/evidence.py: stored_form): our scorer's
    ``{"pay":[…],…,"market":[…]}`` becomes ``[[…],…,[…]]`` in one UPDATE; every other value stays as it is, nothing
    is scored again. The score trigger on updates is dropped first (the evidence is no score; every open makes it
    again from schema.sql)."""
    from normalize.evaluation import dumps

    from crawler.store.evidence import stored_form

    def positional(text: str) -> str:
        value = stored_form(json.loads(text))
        return dumps(value) if isinstance(value, list) else text

    conn = db.conn
    conn.execute("DROP TRIGGER IF EXISTS evaluations_score_update")
    conn.create_function("evidence_positional", 1, positional, deterministic=True)
    conn.execute("UPDATE evaluations SET evidence = evidence_positional(evidence)"
                 " WHERE evidence LIKE '{%' AND evidence != '{}'")


TIME_TEXT_0053 = ("CASE WHEN typeof({0}) = 'integer' THEN strftime('%Y-%m-%dT%H:%M:%S+00:00', {0}, 'unixepoch')"
                  " ELSE {0} END")
"""The text a time column generated by 0053 reads from ``{0}``, its stored column."""


@migration("0053_times_as_integers")
def m0053(db: sqlite_utils.Database) -> None:
    """``postings.as_of`` and ``evaluations.computed_at`` become generated: the text of ``as_of_stored`` and
    ``computed_at_stored``, columns without a declared type that hold the unix seconds of a time in the clock's form
    and any other text as written (crawler/store/rows.py: time_stored). A column's type cannot change in place: the
    stored column is added and filled, the text column dropped (each copies the rows once). ``first_seen`` and
    ``last_seen``, generated from ``as_of``, and their indexes are made again after it, and the views and triggers
    that name either table are dropped first (dropping a column checks them): :func:`upgrade` makes them again from
    ``schema.sql``."""
    from crawler.store.rows import time_stored

    conn = db.conn
    conn.create_function("time_stored", 1, time_stored, deterministic=True)
    _drop_views_and_triggers(conn, "postings", "evaluations")
    conn.execute("DROP INDEX IF EXISTS idx_postings_first_seen")
    conn.execute("DROP INDEX IF EXISTS idx_postings_last_seen_closed_at")
    conn.execute("ALTER TABLE postings DROP COLUMN first_seen")
    conn.execute("ALTER TABLE postings DROP COLUMN last_seen")
    for table, name in (("postings", "as_of"), ("evaluations", "computed_at")):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name}_stored")
        # the text made NULL as it is copied: each row shrinks in place, where it would grow (and split pages)
        conn.execute(f"UPDATE {table} SET {name}_stored = time_stored({name}), {name} = NULL WHERE {name} IS NOT NULL")
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {name}")
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {name} TEXT GENERATED ALWAYS AS"
                     f" ({TIME_TEXT_0053.format(name + '_stored')}) VIRTUAL")
    for name in ("first_seen", "last_seen"):
        conn.execute(f"ALTER TABLE postings ADD COLUMN {name} TEXT GENERATED ALWAYS AS"
                     f" (coalesce({name}_stored, as_of)) VIRTUAL")
    conn.execute("CREATE INDEX idx_postings_first_seen ON postings (first_seen)")
    conn.execute("CREATE INDEX idx_postings_last_seen_closed_at ON postings (last_seen, closed_at)")


@migration("0054_raw_inputs_zstd")
def m0054(db: sqlite_utils.Database) -> None:
    """A long raw input's text goes Zstandard-compressed: ``raw_inputs.text_zlib`` becomes ``text_zstd``, every blob
    expanded from zlib and compressed again (crawler/store/rows.py: pack_text)."""
    import zlib

    from crawler.store.rows import ZSTD_LEVEL, zstd

    conn = db.conn
    conn.execute("ALTER TABLE raw_inputs RENAME COLUMN text_zlib TO text_zstd")
    conn.create_function("zlib_to_zstd", 1, lambda b: zstd.compress(zlib.decompress(b), ZSTD_LEVEL))
    conn.execute("UPDATE raw_inputs SET text_zstd = zlib_to_zstd(text_zstd) WHERE text_zstd IS NOT NULL")


@migration("0055_postings_score_stored_small")
def m0055(db: sqlite_utils.Database) -> None:
    """``postings.score_level`` and ``score_by`` become generated. The level by the evaluations' rule from ``score``
    where the scorer is ours (``jobcrawl-v1``), else read from ``score_level_given`` (the column renamed), made NULL
    here for ours; the scorer from ``score_by_stored``: 1 for ours, 2 for ``source``, any other text as written. The
    views and triggers that name ``postings`` are dropped first (dropping a column checks them; :func:`upgrade` makes
    them again), the level's index is made again over the generated column."""
    conn = db.conn
    _drop_views_and_triggers(conn, "postings")
    conn.execute("DROP INDEX IF EXISTS idx_postings_score_level")
    conn.execute("ALTER TABLE postings RENAME COLUMN score_level TO score_level_given")
    conn.execute("ALTER TABLE postings ADD COLUMN score_by_stored")
    conn.execute("UPDATE postings SET score_by_stored = CASE score_by WHEN 'jobcrawl-v1' THEN 1 WHEN 'source' THEN 2"
                 " ELSE score_by END, score_level_given = CASE WHEN score_by = 'jobcrawl-v1' THEN NULL"
                 " ELSE score_level_given END, score_by = NULL WHERE score_by IS NOT NULL")
    conn.execute("ALTER TABLE postings DROP COLUMN score_by")
    conn.execute("ALTER TABLE postings ADD COLUMN score_by TEXT GENERATED ALWAYS AS (CASE score_by_stored"
                 " WHEN 1 THEN 'jobcrawl-v1' WHEN 2 THEN 'source' ELSE score_by_stored END) VIRTUAL")
    conn.execute("ALTER TABLE postings ADD COLUMN score_level TEXT GENERATED ALWAYS AS (CASE WHEN score_by != 'jobcrawl-v1'"
                 " THEN score_level_given WHEN score_by IS NULL THEN NULL WHEN score IS NULL THEN '信息不足'"
                 " WHEN score < 60 THEN '较低' WHEN score < 80 THEN '中等' ELSE '较高' END) VIRTUAL")
    conn.execute("CREATE INDEX idx_postings_score_level ON postings (score_level)")


LEVEL_0056 = ("{0}_level TEXT GENERATED ALWAYS AS (CASE WHEN scorer_stored != 1 THEN {0}_level_given"
              " WHEN {0} IS NULL THEN '信息不足' WHEN {0} < 60 THEN '较低' WHEN {0} < 80 THEN '中等' ELSE '较高' END) VIRTUAL")
EVALUATIONS_0056 = f"""CREATE TABLE evaluations_new (
    posting_id INTEGER REFERENCES postings (id),
    scorer_stored INTEGER,
    scorer TEXT GENERATED ALWAYS AS (CASE scorer_stored WHEN 1 THEN 'jobcrawl-v1' WHEN 2 THEN 'source'
        ELSE CAST(scorer_stored AS TEXT) END) VIRTUAL,
    overall INTEGER, pay INTEGER, growth INTEGER, worklife INTEGER, mission INTEGER,
    overall_level_given TEXT, pay_level_given TEXT, growth_level_given TEXT, worklife_level_given TEXT,
    mission_level_given TEXT,
    summary TEXT, notes TEXT, explanations TEXT, evidence TEXT, problems TEXT, completeness REAL, signals TEXT,
    inputs_digest INTEGER,
    {", ".join(LEVEL_0056.format(d) for d in ("overall", "pay", "growth", "worklife", "mission"))},
    computed_at_stored,
    computed_at TEXT GENERATED ALWAYS AS ({TIME_TEXT_0053.format('computed_at_stored')}) VIRTUAL,
    PRIMARY KEY (posting_id, scorer_stored)
)"""
"""``evaluations`` as 0056 makes it (schema.sql's, written here once more: a migration is frozen)."""


@migration("0056_evaluations_stored_small")
def m0056(db: sqlite_utils.Database) -> None:
    """``evaluations`` made again (a key's column cannot change in place) with the scorer stored as a code in
    ``scorer_stored`` (crawler/store/rows.py: scorer_stored: 1 ours, 2 ``source``, any other as its text, or its
    bytes where the integer affinity would read the text as a number), which the key and the index of scorer and
    overall hold instead of the text; ``scorer`` and the levels are generated from it. Every other stored value is
    copied as it is. The views and triggers that name ``evaluations`` are dropped first
    (:func:`upgrade` makes them again from ``schema.sql``)."""
    from crawler.store.rows import scorer_stored

    conn = db.conn
    conn.create_function("scorer_stored", 1, scorer_stored, deterministic=True)
    _drop_views_and_triggers(conn, "evaluations")
    conn.execute("DROP INDEX IF EXISTS idx_evaluations_scorer_overall")
    stored = [name for _, name, *_ in conn.execute("PRAGMA table_info(evaluations)")]  # the new table's, scorer aside
    into = ", ".join("scorer_stored" if c == "scorer" else c for c in stored)
    values = ", ".join("scorer_stored(scorer)" if c == "scorer" else c for c in stored)
    _rebuild(db, "evaluations", EVALUATIONS_0056, f"({into}) SELECT {values} FROM evaluations ORDER BY 1, 2",
             ("CREATE INDEX idx_evaluations_scorer_overall ON evaluations (scorer_stored, overall)",))


@migration("0057_evidence_reads_the_posting")
def m0057(db: sqlite_utils.Database) -> None:
    """Evidence entries without the values their posting holds (normalize/evaluation.py ``FROM_POSTING``: the
    company of ``company_open``, the salary as written of ``salary_percentile`` and ``no_comparison``): every
    evaluation naming an entry of such a rule whose value equals its posting's field names the entry without it
    instead (entries that become equal are one: ``company_open``'s counts are
    shared by every company with the same); the entries no evaluation names any more are deleted."""
    from normalize.evaluation import FROM_POSTING, POSTING_FIELDS, dumps, without_posting

    from crawler.store import entries, evidence

    conn = db.conn
    rules = sorted({rule for rule, _ in FROM_POSTING.values()})
    old = {id_: json.loads(text) for id_, text in conn.execute(
        f"SELECT id, entry FROM evidence_entries WHERE json_type(entry) = 'array'"
        f" AND json_extract(entry, '$[0]') IN ({','.join('?' * len(rules))})", rules)}
    if not old:
        return
    ids = [pid for (pid,) in conn.execute("SELECT DISTINCT posting_id FROM evaluations ORDER BY posting_id")]
    columns = ", ".join(f"p.[{c}]" for c in POSTING_FIELDS)
    for i in range(0, len(ids), 1000):
        rows = conn.execute(f"SELECT e.posting_id, e.evidence, {columns} FROM evaluations e"
                            " JOIN postings p ON p.id = e.posting_id WHERE e.posting_id BETWEEN ? AND ?"
                            " AND e.evidence IS NOT NULL", (ids[i], ids[min(i + 1000, len(ids)) - 1])).fetchall()
        changed = []  # (posting id, stored evidence, its value, {old id: new entry text})
        for pid, stored, *fields in rows:
            posting = dict(zip(POSTING_FIELDS, fields))
            value = json.loads(stored)
            lists = value if isinstance(value, list) else [v for v in value.values() if isinstance(v, list)]
            new = {e: dumps(item) for items in lists if items for e in items
                   if type(e) is int and e in old and (item := without_posting(old[e], posting)) != old[e]}
            if new:
                changed.append((pid, stored, value, new))
        found = entries.ids_of(conn, evidence.TABLE, {t for *_, new in changed for t in new.values()})
        conn.executemany("UPDATE evaluations SET evidence = ? WHERE posting_id = ? AND evidence = ?", (
            (dumps(_renamed(value, {e: found[t] for e, t in new.items()})), pid, stored)
            for pid, stored, value, new in changed))
    evidence.prune(conn, old)


def _renamed(value: Any, ids: dict[int, int]) -> Any:
    """A stored ``evidence`` value (positional or an object) with its entry ids of ``ids`` replaced."""
    def lists(items: Any) -> Any:
        return [ids.get(e, e) if type(e) is int else e for e in items] if isinstance(items, list) else items
    return [lists(v) for v in value] if isinstance(value, list) else {k: lists(v) for k, v in value.items()}


@migration("0058_fts_without_sizes")
def m0058(db: sqlite_utils.Database) -> None:
    """``postings_fts`` keeps no table of each posting's column sizes (``columnsize=0``: no ``postings_fts_docsize``,
    a row a posting). Nothing ranks by ``bm25``; FTS5 counts a size from the text when asked. Made again, empty:
    :func:`upgrade` fills it once the view it reads is made again (:data:`REINDEX`)."""
    db.execute("DROP TABLE postings_fts")
    db.execute("CREATE VIRTUAL TABLE postings_fts USING fts5(title, company, city, skills, body, parts, "
               "content='postings_fts_source', content_rowid='id', columnsize=0, "
               "tokenize=\"unicode61 tokenchars '+#'\")")
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, '1')", [REINDEX])


@migration("0059_postings_tz_code")
def m0059(db: sqlite_utils.Database) -> None:
    """``postings.tz`` becomes generated from ``tz_stored``: 1 for Asia/Shanghai, 2 for UTC, any other zone as
    written (crawler/store/codes.py: coded). The views and triggers that name ``postings`` are dropped first (dropping
    a column checks them; :func:`upgrade` makes them again)."""
    from crawler.store.codes import TZ_CODES, coded

    conn = db.conn
    conn.create_function("tz_stored", 1, lambda tz: coded(tz, TZ_CODES), deterministic=True)
    _drop_views_and_triggers(conn, "postings")
    conn.execute("ALTER TABLE postings ADD COLUMN tz_stored")
    conn.execute("UPDATE postings SET tz_stored = tz_stored(tz) WHERE tz IS NOT NULL")
    conn.execute("ALTER TABLE postings DROP COLUMN tz")
    conn.execute("ALTER TABLE postings ADD COLUMN tz TEXT GENERATED ALWAYS AS (CASE tz_stored WHEN 1 THEN"
                 " 'Asia/Shanghai' WHEN 2 THEN 'UTC' ELSE CAST(tz_stored AS TEXT) END) VIRTUAL")


@migration("0060_market_counts_when_read")
def m0060(db: sqlite_utils.Database) -> None:
    """``market_figures`` keeps the salary statistics only (scopes 0 and 1): the counts of open postings (scopes 2–4,
    a row for each company) are counted by the view ``market_stats`` when read (:func:`upgrade` makes it again)."""
    db.execute("DELETE FROM market_figures WHERE scope NOT IN (0, 1)")


@migration("0061_sections_codes")
def m0061(db: sqlite_utils.Database) -> None:
    """``sections.key`` and ``heading`` become generated from ``key_stored`` and ``heading_stored``: the canonical keys
    and the most common headings as a code (crawler/store/codes.py: SECTION_CODES, HEADING_CODES, coded), any other
    text as written. The views that name ``sections`` are dropped first (:func:`upgrade` makes them again)."""
    from crawler.store.codes import HEADING_CODES, SECTION_CODES, case_sql, coded

    conn = db.conn
    conn.create_function("key_stored", 1, lambda key: coded(key, SECTION_CODES), deterministic=True)
    conn.create_function("heading_stored", 1, lambda heading: coded(heading, HEADING_CODES), deterministic=True)
    _drop_views_and_triggers(conn, "sections")
    conn.execute("ALTER TABLE sections ADD COLUMN key_stored INTEGER")
    conn.execute("ALTER TABLE sections ADD COLUMN heading_stored INTEGER")
    conn.execute("UPDATE sections SET key_stored = key_stored(key), heading_stored = heading_stored(heading)")
    conn.execute("ALTER TABLE sections DROP COLUMN key")
    conn.execute("ALTER TABLE sections DROP COLUMN heading")
    conn.execute(f"ALTER TABLE sections ADD COLUMN {case_sql('key', SECTION_CODES)}")
    conn.execute(f"ALTER TABLE sections ADD COLUMN {case_sql('heading', HEADING_CODES)}")


@migration("0062_posting_skills_section_code")
def m0062(db: sqlite_utils.Database) -> None:
    """``posting_skills.section`` becomes generated from ``section_stored`` (the canonical keys and ``tags`` as a code,
    crawler/store/codes.py: SECTION_CODES, coded), which takes its place in the key: the table is made again. The views
    and triggers that name it are dropped first (:func:`upgrade` makes them again)."""
    from crawler.store.codes import SECTION_CODES, case_sql, coded

    conn = db.conn
    conn.create_function("section_stored", 1, lambda section: coded(section, SECTION_CODES), deterministic=True)
    _drop_views_and_triggers(conn, "posting_skills")
    conn.execute("DROP INDEX IF EXISTS idx_posting_skills_skill_posting_id")
    conn.execute("ALTER TABLE posting_skills RENAME TO posting_skills_0062")
    conn.execute("CREATE TABLE posting_skills (posting_id INTEGER REFERENCES postings (id), skill TEXT REFERENCES"
                 " skills (name), section_stored INTEGER, seq INTEGER, count INTEGER, first_offset INTEGER, length INTEGER,"
                 f" {case_sql('section', SECTION_CODES)}, PRIMARY KEY (posting_id, skill, section_stored)) WITHOUT ROWID")
    conn.execute("INSERT INTO posting_skills (posting_id, skill, section_stored, seq, count, first_offset, length)"
                 " SELECT posting_id, skill, section_stored(section), seq, count, first_offset, length"
                 " FROM posting_skills_0062 ORDER BY posting_id, skill, section")
    conn.execute("DROP TABLE posting_skills_0062")
    conn.execute("CREATE INDEX idx_posting_skills_skill_posting_id ON posting_skills (skill, posting_id)")


@migration("0063_insights_in_app_market")
def m0063(db: sqlite_utils.Database) -> None:
    """``postings.insights`` (the app's AI-insight lists, JSON) moves to ``app_market.insights``: only the app's dumps
    have them, and in the middle of a ``postings`` row their kilobytes stood between every read and the columns after
    them. A posting with lists and no ``app_market`` row gets one (its other columns as a posting without a row reads
    them). The views and triggers that name ``postings`` are dropped first (:func:`upgrade` makes them again)."""
    conn = db.conn
    _drop_views_and_triggers(conn, "postings")
    conn.execute("ALTER TABLE app_market ADD COLUMN insights TEXT")
    conn.execute("INSERT INTO app_market (posting_id, company_activity_open_jobs_approx, market_open_jobs_approx)"
                 " SELECT id, 0, 0 FROM postings WHERE insights IS NOT NULL AND insights != '{}'"
                 " AND id NOT IN (SELECT posting_id FROM app_market)")
    conn.execute("UPDATE app_market SET insights ="
                 " (SELECT p.insights FROM postings p WHERE p.id = app_market.posting_id)")
    conn.execute("ALTER TABLE postings DROP COLUMN insights")
