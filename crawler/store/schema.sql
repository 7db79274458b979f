-- The jobcrawl schema as a new database gets it, in final form: crawler/store/migrations.py brings a database
-- made by an earlier version to exactly this (tests/test_migrations.py). Column descriptions: columns.yaml
-- and the field descriptions of normalize.models.Posting (the postings columns are its flattened fields).
-- Column order is the order migrations added the columns in, so old and new databases read alike.

-- ---------------------------------------------------------------------------------------------- runs and inputs

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    kind TEXT,
    started TEXT,
    finished TEXT,
    status TEXT,
    args TEXT,
    files INTEGER,
    found INTEGER,
    new INTEGER,
    updated INTEGER,
    unchanged INTEGER,
    quarantined INTEGER,
    closed INTEGER,
    stats TEXT,
    source TEXT,
    requests INTEGER,
    responses TEXT,
    errors INTEGER,
    reopened INTEGER
);
CREATE INDEX idx_runs_source ON runs (source, kind);

CREATE TABLE raw_inputs (
    id INTEGER PRIMARY KEY,
    source TEXT,
    locator TEXT,
    sha256 TEXT,
    size INTEGER,
    encoding TEXT,
    text TEXT,
    body BLOB,
    fetched_at TEXT,
    as_of TEXT,
    status TEXT,
    error TEXT,
    postings INTEGER,
    run_id INTEGER REFERENCES runs (id),
    reader TEXT,
    text_zstd BLOB
);
CREATE UNIQUE INDEX idx_raw_inputs_source_locator_sha256 ON raw_inputs (source, locator, sha256);

-- The last complete parse of each stored input (crawler/ingest/ledger.py).
CREATE TABLE input_parses (
    raw_input_id INTEGER PRIMARY KEY REFERENCES raw_inputs (id),
    as_of TEXT,
    parser TEXT,
    status TEXT,
    postings INTEGER,
    run_id INTEGER REFERENCES runs (id),
    parsed_at TEXT
);

CREATE TABLE quarantine (
    id INTEGER PRIMARY KEY,
    raw_input_id INTEGER REFERENCES raw_inputs (id),
    source TEXT,
    locator TEXT,
    position INTEGER,
    input_sha256 TEXT,
    reason TEXT,
    detail TEXT,
    text TEXT,
    at TEXT,
    run_id INTEGER REFERENCES runs (id),
    text_in_input INTEGER NOT NULL DEFAULT 0
);
-- A quarantined input without a hash is stored once too (a unique index treats nulls as distinct).
CREATE UNIQUE INDEX idx_quarantine_once ON quarantine (source, locator, coalesce(input_sha256, ''), position);

-- Batches stored from the Redis item spool, once each (crawler/store/batches.py).
CREATE TABLE spool_batches (
    id TEXT PRIMARY KEY,
    run_id INTEGER REFERENCES runs (id),
    stored_at TEXT,
    counts TEXT
);
CREATE INDEX idx_spool_batches_run_id ON spool_batches (run_id);

-- ---------------------------------------------------------------------------------------------- postings

-- normalize.models.Posting flattened (salary.min → salary_min), then the columns of storage and browsing.
-- first_seen and last_seen are read from first_seen_stored and last_seen_stored, or are as_of where those are NULL
-- (most postings are seen once, at the time of their input): the writer stores only a time that differs.
-- content_hash is the hex text of content_hash_stored: 32 bytes (a hash written otherwise is kept as written).
-- as_of is the text of as_of_stored: the unix seconds of a time the clock wrote (UTC to the second,
-- crawler/store/rows.py: time_stored), or a text written in any other form, kept as written. The column has no
-- declared type, so that neither is converted to the other (TEXT would store the number as text, INTEGER a numeric text
-- as a number).
-- tz is the text of tz_stored: 1 Asia/Shanghai, 2 UTC, any other zone as written (crawler/store/codes.py: coded).
CREATE TABLE postings (
    id INTEGER PRIMARY KEY,
    key TEXT,
    source TEXT,
    source_id TEXT,
    locator TEXT,
    position INTEGER,
    url TEXT,
    company TEXT,
    title TEXT,
    city TEXT,
    district TEXT,
    location_raw TEXT,
    category TEXT,
    seniority TEXT,
    employment_type TEXT,
    work_mode TEXT,
    remote INTEGER,
    experience TEXT,
    experience_min_years REAL,
    experience_max_years REAL,
    education TEXT,
    company_info_raw TEXT,
    company_info_industry TEXT,
    company_info_funding_stage TEXT,
    company_info_size_min INTEGER,
    company_info_size_max INTEGER,
    posted_raw TEXT,
    posted_at TEXT,
    posted_approx INTEGER,
    is_new INTEGER,
    published_label TEXT,
    valid_through TEXT,
    tags TEXT,
    skills TEXT,
    salary_raw TEXT,
    salary_status TEXT,
    salary_min REAL,
    salary_max REAL,
    salary_currency TEXT,
    salary_period TEXT,
    salary_months INTEGER,
    salary_monthly_min REAL,
    salary_monthly_max REAL,
    salary_annual_min REAL,
    salary_annual_max REAL,
    salary_estimated INTEGER,
    salary_implausible INTEGER,
    salary_compare_raw TEXT,
    salary_vs_median TEXT,
    salary_compare_scope TEXT,
    description TEXT,
    extra TEXT,
    problems TEXT,
    content_hash_stored TEXT,
    input_sha256 TEXT,
    first_seen_stored TEXT,
    last_seen_stored TEXT,
    closed_at TEXT,
    complete_listing INTEGER,
    raw_input_id INTEGER REFERENCES raw_inputs (id),
    version INTEGER,
    score INTEGER,
    score_level_given TEXT,
    salary_source TEXT,
    posted_source TEXT,
    posted_local TEXT,
    first_run_id INTEGER,
    raw_hash TEXT,
    content_hash TEXT GENERATED ALWAYS AS (CASE WHEN typeof(content_hash_stored) = 'blob' THEN lower(hex(content_hash_stored))
                                           ELSE content_hash_stored END) VIRTUAL,
    as_of_stored,
    as_of TEXT GENERATED ALWAYS AS (CASE WHEN typeof(as_of_stored) = 'integer'
        THEN strftime('%Y-%m-%dT%H:%M:%S+00:00', as_of_stored, 'unixepoch') ELSE as_of_stored END) VIRTUAL,
    first_seen TEXT GENERATED ALWAYS AS (coalesce(first_seen_stored, as_of)) VIRTUAL,
    last_seen TEXT GENERATED ALWAYS AS (coalesce(last_seen_stored, as_of)) VIRTUAL,
    score_by_stored,
    score_by TEXT GENERATED ALWAYS AS (CASE score_by_stored WHEN 1 THEN 'jobcrawl-v1' WHEN 2 THEN 'source'
        ELSE score_by_stored END) VIRTUAL,
    score_level TEXT GENERATED ALWAYS AS (CASE WHEN score_by != 'jobcrawl-v1' THEN score_level_given
        WHEN score_by IS NULL THEN NULL WHEN score IS NULL THEN '信息不足' WHEN score < 60 THEN '较低'
        WHEN score < 80 THEN '中等' ELSE '较高' END) VIRTUAL,
    tz_stored,
    tz TEXT GENERATED ALWAYS AS (CASE tz_stored WHEN 1 THEN 'Asia/Shanghai' WHEN 2 THEN 'UTC'
        ELSE CAST(tz_stored AS TEXT) END) VIRTUAL
);
CREATE UNIQUE INDEX idx_postings_key ON postings (key);
CREATE INDEX idx_postings_company ON postings (company);
CREATE INDEX idx_postings_posted_at ON postings (posted_at);
CREATE INDEX idx_postings_first_seen ON postings (first_seen);
CREATE INDEX idx_postings_closed_at ON postings (closed_at);
CREATE INDEX idx_postings_salary_monthly_max ON postings (salary_monthly_max);
CREATE INDEX idx_postings_source_first_run_id ON postings (source, first_run_id);
-- The listings: sorts, usual filters, counts (a narrow index of the ids), the stale filter (history.HIDE_STALE).
CREATE INDEX idx_postings_score ON postings (score);
CREATE INDEX idx_postings_score_level ON postings (score_level);
CREATE INDEX idx_postings_work_mode ON postings (work_mode);
CREATE INDEX idx_postings_city_score ON postings (city, score);
CREATE INDEX idx_postings_category_score ON postings (category, score);
CREATE INDEX idx_postings_city_work_mode_salary_monthly_max ON postings (city, work_mode, salary_monthly_max);
CREATE INDEX idx_postings_id ON postings (id);
CREATE INDEX idx_postings_last_seen_closed_at ON postings (last_seen, closed_at);

-- What only the app's dumps state of a posting (normalize.models.Posting: salary.signal, company_activity, market,
-- insights), one row a posting that states any of it; a posting without a row reads crawler.store.schema.APP_EMPTY.
CREATE TABLE app_market (
    posting_id INTEGER PRIMARY KEY REFERENCES postings (id),
    salary_signal_raw TEXT,
    salary_signal_label TEXT,
    salary_signal_min REAL,
    salary_signal_max REAL,
    salary_signal_currency TEXT,
    salary_signal_period TEXT,
    salary_signal_estimated INTEGER,
    salary_signal_implausible INTEGER,
    company_activity_label TEXT,
    company_activity_raw TEXT,
    company_activity_city TEXT,
    company_activity_category TEXT,
    company_activity_open_jobs INTEGER,
    company_activity_open_jobs_approx INTEGER,
    company_activity_open_in_category INTEGER,
    market_label TEXT,
    market_raw TEXT,
    market_city TEXT,
    market_category TEXT,
    market_open_jobs INTEGER,
    market_open_jobs_approx INTEGER,
    market_open_in_category INTEGER,
    insights TEXT
);

-- key and heading are the texts of key_stored and heading_stored: the canonical keys and the most common headings as
-- a code (crawler/store/codes.py: SECTION_CODES, HEADING_CODES), any other text as written.
CREATE TABLE sections (
    posting_id INTEGER REFERENCES postings (id),
    seq INTEGER,
    text TEXT,
    spans TEXT,
    key_stored INTEGER,
    heading_stored INTEGER,
    key TEXT GENERATED ALWAYS AS (CASE key_stored WHEN 1 THEN 'about' WHEN 2 THEN 'requirements'
        WHEN 3 THEN 'responsibilities' WHEN 4 THEN 'preferred' WHEN 5 THEN 'compensation' WHEN 6 THEN 'benefits'
        WHEN 7 THEN 'tags' ELSE CAST(key_stored AS TEXT) END) VIRTUAL,
    heading TEXT GENERATED ALWAYS AS (CASE heading_stored WHEN 1 THEN '' WHEN 2 THEN '福利待遇' WHEN 3 THEN '关于这个职位'
        WHEN 4 THEN '最低要求' WHEN 5 THEN '工作职责' WHEN 6 THEN '优先资格' WHEN 7 THEN '岗位职责：' WHEN 8 THEN '任职要求：'
        WHEN 9 THEN '岗位要求：' WHEN 10 THEN '任职资格：' WHEN 11 THEN '职位要求：' WHEN 12 THEN '工作内容：' WHEN 13 THEN '岗位描述：'
        WHEN 14 THEN '职位描述：' WHEN 15 THEN '工作职责：' WHEN 16 THEN '岗位职责' WHEN 17 THEN '任职要求' WHEN 18 THEN '加分项'
        ELSE CAST(heading_stored AS TEXT) END) VIRTUAL,
    PRIMARY KEY (posting_id, seq)
) WITHOUT ROWID;

CREATE TABLE posting_versions (
    id INTEGER PRIMARY KEY,
    posting_id INTEGER REFERENCES postings (id),
    version INTEGER,
    content_hash TEXT,
    superseded_at TEXT,
    snapshot TEXT
);
CREATE UNIQUE INDEX idx_posting_versions_posting_id_version ON posting_versions (posting_id, version);
CREATE INDEX idx_posting_versions_superseded_at ON posting_versions (superseded_at);

-- Closing and reopening as events, kept by the triggers below (no writer records them).
CREATE TABLE posting_events (
    id INTEGER PRIMARY KEY,
    posting_id INTEGER NOT NULL REFERENCES postings (id),
    event TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX idx_posting_events_posting ON posting_events (posting_id);
CREATE INDEX idx_posting_events_at ON posting_events (at);

CREATE TRIGGER postings_closed AFTER UPDATE OF closed_at ON postings
    WHEN OLD.closed_at IS NULL AND NEW.closed_at IS NOT NULL
    BEGIN INSERT INTO posting_events (posting_id, event, at) VALUES (NEW.id, 'closed', NEW.closed_at); END;
CREATE TRIGGER postings_reopened AFTER UPDATE OF closed_at ON postings
    WHEN OLD.closed_at IS NOT NULL AND NEW.closed_at IS NULL
    BEGIN INSERT INTO posting_events (posting_id, event, at) VALUES (NEW.id, 'reopened', NEW.last_seen); END;

CREATE TABLE listing_postings (
    listing TEXT,
    key TEXT,
    first_seen TEXT,
    last_seen TEXT,
    closed_at TEXT,
    run_id INTEGER REFERENCES runs (id),
    PRIMARY KEY (listing, key)
);
CREATE INDEX idx_listing_postings_key ON listing_postings (key);

-- One full-text index (crawler/store/fts.py): rowid = postings.id, filled by the writer. It keeps no copy of the
-- text: it reads it from the view postings_fts_source (below) when it needs it; nor each posting's column sizes
-- (columnsize=0): nothing ranks by bm25, and FTS5 counts them from the text when asked.
CREATE VIRTUAL TABLE postings_fts USING fts5(title, company, city, skills, body, parts, content='postings_fts_source', content_rowid='id', columnsize=0, tokenize="unicode61 tokenchars '+#'");

-- ---------------------------------------------------------------------------------------------- skills

CREATE TABLE skills (
    name TEXT PRIMARY KEY,
    category TEXT,
    parent TEXT REFERENCES skills (name),
    aliases TEXT,
    frontier INTEGER,
    kind TEXT
);

-- A skill's evidence in a section: its category, the text as written and the snippet are read from ``skills`` and
-- the section's text (crawler/store/skills.py: evidence_records, the export's ``skill_evidence``). section is the text
-- of section_stored: the canonical keys and tags as a code (crawler/store/codes.py: SECTION_CODES), any other as
-- written.
CREATE TABLE posting_skills (
    posting_id INTEGER REFERENCES postings (id),
    skill TEXT REFERENCES skills (name),
    section_stored INTEGER,
    seq INTEGER,
    count INTEGER,
    first_offset INTEGER,
    length INTEGER,
    section TEXT GENERATED ALWAYS AS (CASE section_stored WHEN 1 THEN 'about' WHEN 2 THEN 'requirements'
        WHEN 3 THEN 'responsibilities' WHEN 4 THEN 'preferred' WHEN 5 THEN 'compensation' WHEN 6 THEN 'benefits'
        WHEN 7 THEN 'tags' ELSE CAST(section_stored AS TEXT) END) VIRTUAL,
    PRIMARY KEY (posting_id, skill, section_stored)
) WITHOUT ROWID;
CREATE INDEX idx_posting_skills_skill_posting_id ON posting_skills (skill, posting_id);

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT
);

-- ---------------------------------------------------------------------------------------------- scores

-- The scorer is stored as a code (scorer_stored: 1 ours, jobcrawl-v1; 2 the app's own, source; any other scorer, e.g.
-- fit:<profile>, as its text, or as the blob of its bytes where the column's integer affinity would read the text as
-- a number: crawler/store/rows.py scorer_stored) and read as its text (scorer). The affinity lets Datasette, which
-- passes key values as text, find a row by its key. A rowid table: the app's own evaluation is ~2 KB, more than an
-- index b-tree (WITHOUT ROWID) keeps in a 4 KB page; it would spill to overflow pages. The five levels are
-- generated: ours by the rule of normalize/posting.py level_for from the number (信息不足 where it is NULL), every
-- other scorer's as stored in its *_level_given column (NULL for ours). computed_at is read from computed_at_stored
-- as postings.as_of is from as_of_stored.
CREATE TABLE evaluations (
    posting_id INTEGER REFERENCES postings (id),
    scorer_stored INTEGER,
    scorer TEXT GENERATED ALWAYS AS (CASE scorer_stored WHEN 1 THEN 'jobcrawl-v1' WHEN 2 THEN 'source'
        ELSE CAST(scorer_stored AS TEXT) END) VIRTUAL,
    overall INTEGER,
    pay INTEGER,
    growth INTEGER,
    worklife INTEGER,
    mission INTEGER,
    overall_level_given TEXT,
    pay_level_given TEXT,
    growth_level_given TEXT,
    worklife_level_given TEXT,
    mission_level_given TEXT,
    summary TEXT,
    notes TEXT,
    explanations TEXT,
    evidence TEXT,
    problems TEXT,
    completeness REAL,
    signals TEXT,
    inputs_digest INTEGER,
    overall_level TEXT GENERATED ALWAYS AS (CASE WHEN scorer_stored != 1 THEN overall_level_given
        WHEN overall IS NULL THEN '信息不足' WHEN overall < 60 THEN '较低' WHEN overall < 80 THEN '中等' ELSE '较高' END) VIRTUAL,
    pay_level TEXT GENERATED ALWAYS AS (CASE WHEN scorer_stored != 1 THEN pay_level_given
        WHEN pay IS NULL THEN '信息不足' WHEN pay < 60 THEN '较低' WHEN pay < 80 THEN '中等' ELSE '较高' END) VIRTUAL,
    growth_level TEXT GENERATED ALWAYS AS (CASE WHEN scorer_stored != 1 THEN growth_level_given
        WHEN growth IS NULL THEN '信息不足' WHEN growth < 60 THEN '较低' WHEN growth < 80 THEN '中等' ELSE '较高' END) VIRTUAL,
    worklife_level TEXT GENERATED ALWAYS AS (CASE WHEN scorer_stored != 1 THEN worklife_level_given
        WHEN worklife IS NULL THEN '信息不足' WHEN worklife < 60 THEN '较低' WHEN worklife < 80 THEN '中等' ELSE '较高' END) VIRTUAL,
    mission_level TEXT GENERATED ALWAYS AS (CASE WHEN scorer_stored != 1 THEN mission_level_given
        WHEN mission IS NULL THEN '信息不足' WHEN mission < 60 THEN '较低' WHEN mission < 80 THEN '中等' ELSE '较高' END) VIRTUAL,
    computed_at_stored,
    computed_at TEXT GENERATED ALWAYS AS (CASE WHEN typeof(computed_at_stored) = 'integer'
        THEN strftime('%Y-%m-%dT%H:%M:%S+00:00', computed_at_stored, 'unixepoch') ELSE computed_at_stored END) VIRTUAL,
    PRIMARY KEY (posting_id, scorer_stored)
);
CREATE INDEX idx_evaluations_scorer_overall ON evaluations (scorer_stored, overall);

-- Each distinct evidence entry once (crawler/store/evidence.py): an evaluation's evidence refers to them by id.
CREATE TABLE evidence_entries (
    id INTEGER PRIMARY KEY,
    hash INTEGER NOT NULL,
    entry TEXT NOT NULL
);
CREATE INDEX idx_evidence_entries_hash ON evidence_entries (hash);

-- Each distinct [key, value] pair of the postings' extra once (crawler/store/extra.py): postings.extra is the JSON
-- array of their ids in the object's key order.
CREATE TABLE extra_entries (
    id INTEGER PRIMARY KEY,
    hash INTEGER NOT NULL,
    entry TEXT NOT NULL
);
CREATE INDEX idx_extra_entries_hash ON extra_entries (hash);

-- postings.score, score_level and score_by: the listing's score, kept by these triggers. Ours (jobcrawl-v1) when
-- it has an overall, else the app's own (source), else our level alone (信息不足). Like an evaluation's, the level
-- is generated from the score for ours, stored (score_level_given) for the source's; the scorer is stored as a
-- code (score_by_stored: 1 ours, 2 the source's, as evaluations.scorer_stored), so that scoring a posting hardly
-- grows its row. A posting row is rewritten only when its listing's score changes: ours with an overall always
-- wins, so its insert sets it directly; every other change picks the winner again and compares. The writer stores
-- a new posting with its source evaluation's score set already (crawler/store/rows.py: listing_score).
CREATE TRIGGER evaluations_score_insert_ours AFTER INSERT ON evaluations
    WHEN NEW.scorer_stored = 1 AND NEW.overall IS NOT NULL
BEGIN
    UPDATE postings SET (score, score_level_given, score_by_stored) = (NEW.overall, NEW.overall_level_given, 1)
    WHERE id = NEW.posting_id
        AND (score, score_level_given, score_by_stored) IS NOT (NEW.overall, NEW.overall_level_given, 1);
END;
CREATE TRIGGER evaluations_score_insert AFTER INSERT ON evaluations
    WHEN NEW.scorer_stored = 2 OR NEW.scorer_stored = 1 AND NEW.overall IS NULL
BEGIN
    UPDATE postings SET (score, score_level_given, score_by_stored) = (
        SELECT overall, overall_level_given, scorer_stored FROM evaluations
        WHERE posting_id = NEW.posting_id AND scorer_stored IN (1, 2)
            AND (overall IS NOT NULL OR overall_level IS NOT NULL)
        ORDER BY overall IS NOT NULL DESC, scorer_stored = 1 DESC LIMIT 1)
    WHERE id = NEW.posting_id AND (score, score_level_given, score_by_stored) IS NOT (
        SELECT overall, overall_level_given, scorer_stored FROM evaluations
        WHERE posting_id = NEW.posting_id AND scorer_stored IN (1, 2)
            AND (overall IS NOT NULL OR overall_level IS NOT NULL)
        ORDER BY overall IS NOT NULL DESC, scorer_stored = 1 DESC LIMIT 1);
END;
CREATE TRIGGER evaluations_score_update AFTER UPDATE ON evaluations
    WHEN NEW.scorer_stored IN (1, 2) OR OLD.scorer_stored IN (1, 2)
BEGIN
    UPDATE postings SET (score, score_level_given, score_by_stored) = (
        SELECT overall, overall_level_given, scorer_stored FROM evaluations
        WHERE posting_id = NEW.posting_id AND scorer_stored IN (1, 2)
            AND (overall IS NOT NULL OR overall_level IS NOT NULL)
        ORDER BY overall IS NOT NULL DESC, scorer_stored = 1 DESC LIMIT 1)
    WHERE id = NEW.posting_id AND (score, score_level_given, score_by_stored) IS NOT (
        SELECT overall, overall_level_given, scorer_stored FROM evaluations
        WHERE posting_id = NEW.posting_id AND scorer_stored IN (1, 2)
            AND (overall IS NOT NULL OR overall_level IS NOT NULL)
        ORDER BY overall IS NOT NULL DESC, scorer_stored = 1 DESC LIMIT 1);
END;
CREATE TRIGGER evaluations_score_delete AFTER DELETE ON evaluations WHEN OLD.scorer_stored IN (1, 2)
BEGIN
    UPDATE postings SET (score, score_level_given, score_by_stored) = (
        SELECT overall, overall_level_given, scorer_stored FROM evaluations
        WHERE posting_id = OLD.posting_id AND scorer_stored IN (1, 2)
            AND (overall IS NOT NULL OR overall_level IS NOT NULL)
        ORDER BY overall IS NOT NULL DESC, scorer_stored = 1 DESC LIMIT 1)
    WHERE id = OLD.posting_id AND (score, score_level_given, score_by_stored) IS NOT (
        SELECT overall, overall_level_given, scorer_stored FROM evaluations
        WHERE posting_id = OLD.posting_id AND scorer_stored IN (1, 2)
            AND (overall IS NOT NULL OR overall_level IS NOT NULL)
        ORDER BY overall IS NOT NULL DESC, scorer_stored = 1 DESC LIMIT 1);
END;


-- The salary statistics of the corpus (crawler.score.market), replaced on every scoring run (its time once, in meta:
-- market_computed_at): one row per peer group, its scope as a code (crawler/store/stats.py: SCOPES; 0 category,
-- 1 city+category). Read them in the view market_stats, beside the counts of open postings.
CREATE TABLE market_figures (
    scope INTEGER,
    key TEXT,
    currency TEXT,
    n INTEGER,
    p25 REAL,
    median REAL,
    p75 REAL
);

-- Hiring velocity per ISO week in China time (normalize/market.py), kept by crawler/market/velocity.py after every
-- run's corpus steps and by jobcrawl stats velocity when the database changed since: one row per scope (company,
-- city, category, skill), key and week in which a job of the key opened or closed.
CREATE TABLE velocity_weekly (
    week TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    opened INTEGER NOT NULL,
    closed INTEGER NOT NULL,
    open_at_end INTEGER NOT NULL,
    median_days_to_close REAL,
    PRIMARY KEY (scope, key, week)
) WITHOUT ROWID;

-- ---------------------------------------------------------------------------------------------- duplicates

-- A posting's dedupe key (crawler/store/dedupe.py: KEY_COLUMNS), made from its version posting_version.
CREATE TABLE dedupe_signatures (
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
);
CREATE INDEX idx_dedupe_signatures_fingerprint ON dedupe_signatures (fingerprint);
CREATE INDEX idx_dedupe_signatures_cluster_id ON dedupe_signatures (cluster_id);

CREATE TABLE dedupe_common_shingles (hash INTEGER PRIMARY KEY) WITHOUT ROWID;

-- Every clustered posting has its cluster in dedupe_signatures.cluster_id; clusters and cluster_members hold rows
-- only for clusters of two or more members. A posting without a member row is alone in its cluster: reason new,
-- similarity 1.0, its own canonical member (crawler/store/dedupe.py).
CREATE TABLE clusters (
    id INTEGER PRIMARY KEY,
    canonical_posting_id INTEGER REFERENCES postings (id),
    size INTEGER,
    companies INTEGER,
    cities INTEGER,
    reasons TEXT,
    cross_company INTEGER,
    first_seen TEXT,
    last_seen TEXT
);
CREATE INDEX idx_clusters_size ON clusters (size);

CREATE TABLE cluster_members (
    posting_id INTEGER PRIMARY KEY REFERENCES postings (id),
    cluster_id INTEGER REFERENCES clusters (id),
    reason TEXT,
    similarity REAL,
    matched_posting_id INTEGER REFERENCES postings (id),
    cross_company INTEGER,
    different_city INTEGER
);
CREATE INDEX idx_cluster_members_cluster_id ON cluster_members (cluster_id);

-- Ghost signals of the canonical postings (crawler/signals/, rules and thresholds in normalize/ghost.py): a row per
-- posting and code (open_long, reposted, reopened, mass_agency) with its evidence as numbers; the sentence is made
-- when read. The likely employer of an agency's or hidden posting: the company of a direct posting of the same job
-- (evidence_posting_id), their JD similarity and the rule (cluster, city). Both are replaced by each signals step.
CREATE TABLE ghost_signals (
    posting_id INTEGER NOT NULL REFERENCES postings (id),
    code TEXT NOT NULL,
    n INTEGER,
    days INTEGER,
    at TEXT,
    ids TEXT,
    PRIMARY KEY (posting_id, code)
) WITHOUT ROWID;

CREATE TABLE likely_employers (
    posting_id INTEGER PRIMARY KEY REFERENCES postings (id),
    company TEXT NOT NULL,
    evidence_posting_id INTEGER NOT NULL REFERENCES postings (id),
    similarity REAL NOT NULL,
    rule TEXT NOT NULL
);

-- ---------------------------------------------------------------------------------------------- watches and alerts

CREATE TABLE watches (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    spec TEXT NOT NULL,
    search TEXT,
    created_at TEXT NOT NULL,
    removed_at TEXT
);
CREATE UNIQUE INDEX idx_watches_name ON watches (name) WHERE removed_at IS NULL;

CREATE TABLE watch_matches (
    watch_id INTEGER NOT NULL REFERENCES watches (id),
    posting_id INTEGER NOT NULL REFERENCES postings (id),
    matched_at TEXT NOT NULL,
    run_id INTEGER REFERENCES runs (id),
    baseline INTEGER NOT NULL DEFAULT 0,
    reasons TEXT,
    PRIMARY KEY (watch_id, posting_id)
);
CREATE INDEX idx_watch_matches_posting ON watch_matches (posting_id);

CREATE TABLE watch_deliveries (
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
);
CREATE INDEX idx_watch_deliveries_status ON watch_deliveries (status);

-- Postings a profile's blocklist hides (never deleted).
CREATE TABLE posting_blocks (
    posting_id INTEGER NOT NULL REFERENCES postings (id),
    profile TEXT NOT NULL,
    rule TEXT NOT NULL,
    detail TEXT,
    PRIMARY KEY (posting_id, profile)
);

-- ---------------------------------------------------------------------------------------------- applications

-- Every change of an application's status (jobcrawl track, the posting page's form, an agent), never updated or
-- deleted. A status belongs to the job, not to one copy: see the view applications.
CREATE TABLE application_events (
    id INTEGER PRIMARY KEY,
    posting_id INTEGER NOT NULL REFERENCES postings (id),
    status TEXT NOT NULL CHECK (status IN ('saved', 'applied', 'interviewing', 'offer', 'accepted', 'rejected',
                                           'withdrawn')),
    note TEXT,
    at TEXT NOT NULL
);
CREATE INDEX idx_application_events_posting_id ON application_events (posting_id);

-- A note is a line or a paragraph, not a document: at most 2,000 characters (crawler.track.store.NOTE_CHARS), from
-- every writer (jobcrawl track, the form, an agent through the canned query).
CREATE TRIGGER application_events_note_length BEFORE INSERT ON application_events WHEN length(NEW.note) > 2000
BEGIN
    SELECT RAISE(ABORT, 'a note holds at most 2,000 characters');
END;

-- ---------------------------------------------------------------------------------------------- views

-- The listing people browse: a plain view, so SQLite flattens it and filters, facets and the sort use the
-- postings indexes. application_status is the view applications' status of the posting's job (its newest event on
-- any member of its duplicate cluster, by at then entry order), read through the indexes of dedupe_signatures and
-- application_events for the rows a query returns: the view applications, evaluated for each row, would read every
-- event each time.
-- ghost: the posting's ghost signal codes as a JSON array (NULL: none); likely_employer: the company behind an
-- agency's or hidden posting.
CREATE VIEW jobs AS SELECT
    id, title, coalesce(company, '（企业未公开）') AS company, city, salary_monthly_max AS salary, score, score_level,
    posted_at, source, posted_local, category, work_mode, seniority, score_by, skills, posted_source, first_seen,
    last_seen, closed_at, url, salary_monthly_min, salary_months, salary_currency, salary_period, salary_status,
    salary_estimated, salary_raw, salary_source,
    (SELECT e.status FROM application_events e WHERE e.posting_id IN (
        SELECT m.posting_id FROM dedupe_signatures m
        WHERE m.cluster_id = (SELECT s.cluster_id FROM dedupe_signatures s WHERE s.posting_id = postings.id)
        UNION ALL SELECT postings.id)
     ORDER BY e.at DESC, e.id DESC LIMIT 1) AS application_status,
    (SELECT json_group_array(code) FROM ghost_signals g WHERE g.posting_id = postings.id HAVING count(*)) AS ghost,
    (SELECT company FROM likely_employers l WHERE l.posting_id = postings.id) AS likely_employer
FROM postings;

-- The sections with their text, one row per sections row: the text as stored, or, where the row keeps spans of the
-- posting's description instead ([[start, length], …] in characters, normalize/sections.py: spans_of), those spans
-- of it one a line. Every reader of a section's text reads it here. Plain SQL without a table-valued function
-- (json_each): the full-text index reads this view through postings_fts_source, and FTS5 refuses virtual tables there.
CREATE VIEW section_texts AS SELECT
    s.posting_id, s.seq, s.key, s.heading,
    CASE WHEN s.spans IS NULL THEN s.text ELSE (
        WITH RECURSIVE span(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM span WHERE i + 1 < json_array_length(s.spans))
        SELECT group_concat(substr(p.description, json_extract(s.spans, '$[' || i || '][0]') + 1,
                                   json_extract(s.spans, '$[' || i || '][1]')), char(10)) FROM span) END AS text
FROM sections s LEFT JOIN postings p ON p.id = s.posting_id;

-- The text of postings_fts, as it indexes it, from the stored values (crawler/store/fts.py: index_values); the
-- fts_* functions are registered on every connection that reads it (crawler.store.connect, the Datasette plugin).
CREATE VIEW postings_fts_source AS SELECT
    id, fts_text(title) AS title, fts_text(company) AS company, fts_text(city) AS city, fts_skills(skills) AS skills,
    fts_body(tags, (SELECT group_concat(text, char(10)) FROM (SELECT text FROM section_texts WHERE posting_id = postings.id
                                                                  ORDER BY seq)), description) AS body,
    fts_parts(title, skills) AS parts
FROM postings;

-- Every posting's extra fields one a row, in the object's key order (the value as SQL reads JSON: text for a string).
CREATE VIEW posting_extra AS SELECT
    p.id AS posting_id, i.key AS position, json_extract(x.entry, '$[0]') AS key, json_extract(x.entry, '$[1]') AS value
FROM postings p, json_each(p.extra) i JOIN extra_entries x ON x.id = i.value
WHERE p.extra IS NOT NULL;

-- Personal fit beside the posting, one row per posting and profile: the four parts, their reasons, the blocklist
-- rule, days since last seen (counted back from the newest last_seen of the database), for JobSpy imports
-- the board the row came from (its `site` column), and the posting's ghost signal codes (a JSON array; NULL: none).
CREATE VIEW fit AS SELECT
    p.id, p.title, p.company, p.city, substr(e.scorer, 5) AS profile, e.overall AS fit,
    json_extract(x.entry, '$.scores.skills') AS fit_skills, json_extract(x.entry, '$.scores.salary') AS fit_salary,
    json_extract(x.entry, '$.scores.city') AS fit_city, json_extract(x.entry, '$.scores.mode') AS fit_mode,
    json_extract(e.explanations, '$.skills') AS why_skills, json_extract(e.explanations, '$.salary') AS why_salary,
    json_extract(e.explanations, '$.city') AS why_city, json_extract(e.explanations, '$.mode') AS why_mode,
    b.rule AS blocked_by, p.salary_monthly_max AS salary, p.salary_monthly_min, p.salary_months, p.salary_currency,
    p.salary_status, p.salary_estimated, p.salary_raw, p.score, p.work_mode,
    CASE WHEN p.source = 'tabular' THEN (SELECT value FROM posting_extra WHERE posting_id = p.id AND key = 'site') END AS site,
    CAST(julianday((SELECT max(last_seen) FROM postings)) - julianday(p.last_seen) AS INTEGER) AS days_unseen,
    p.closed_at, p.posted_at, p.first_seen, p.last_seen, p.url,
    (SELECT json_group_array(code) FROM ghost_signals g WHERE g.posting_id = p.id HAVING count(*)) AS ghost
FROM evaluations e JOIN postings p ON p.id = e.posting_id
LEFT JOIN evidence_entries x ON x.id = json_extract(e.evidence, '$.overall[0]')
LEFT JOIN posting_blocks b ON b.posting_id = e.posting_id AND b.profile = substr(e.scorer, 5)
WHERE e.scorer LIKE 'fit:%';

-- The market statistics the scoring step compares postings with (crawler.score.market), in the order it computes
-- them: the salary groups of market_figures with their scope's name, then the open postings per company, company +
-- category and city + category, counted when read as the step counts them (crawler/store/stats.py: OPENINGS, one
-- pass over the postings); computed_at is the time of the last scoring run (no row before the first).
CREATE VIEW market_stats AS
WITH computed (at) AS (SELECT value FROM meta WHERE key = 'market_computed_at'),
openings (company, city, category, n) AS MATERIALIZED (
    SELECT company, city, category, count(*) FROM postings WHERE closed_at IS NULL GROUP BY company, city, category)
SELECT scope, key, currency, n, p25, median, p75, (SELECT at FROM computed) AS computed_at
FROM (
    SELECT 0 AS part, rowid AS o1, NULL AS o2, CASE scope WHEN 0 THEN 'category' WHEN 1 THEN 'city+category' END AS scope,
        key, currency, n, p25, median, p75
    FROM market_figures
    UNION ALL SELECT 1, company, NULL, 'company_open', company, NULL, sum(n), NULL, NULL, NULL
    FROM openings WHERE company != '' GROUP BY company
    UNION ALL SELECT 2, company, category, 'company+category_open', company || ' · ' || category, NULL, sum(n), NULL,
        NULL, NULL
    FROM openings WHERE company != '' AND category != '' GROUP BY company, category
    UNION ALL SELECT 3, city, category, 'city+category_open', city || ' · ' || category, NULL, sum(n), NULL, NULL, NULL
    FROM openings WHERE city != '' AND category != '' GROUP BY city, category)
WHERE EXISTS (SELECT 1 FROM computed)
ORDER BY part, o1, o2;

-- Every evaluation's evidence one entry a row, in order, as normalize/evaluation.py packs it (the rule first), with
-- the value an entry leaves out read back from its posting (normalize/evaluation.py FROM_POSTING, one WHEN a rule:
-- a stored ["company_open/company",2,1,null] reads ["company_open","<the posting's company>",2,1,null]). The dimension of a
-- positional evidence (an array: crawler/store/evidence.py) is named by its place, in the order of evidence.ORDER;
-- a missing trailing dimension has no entries, so no row.
CREATE VIEW evaluation_evidence AS SELECT
    e.posting_id, e.scorer,
    CASE WHEN typeof(d.key) = 'integer' THEN json_extract('["pay","growth","worklife","mission","overall","market"]',
        d.fullkey) ELSE d.key END AS dimension,
    i.key AS position,
    CASE json_extract(x.entry, '$[0]')
        WHEN 'company_open/company' THEN '["company_open",' || json_quote(p.company) || substr(x.entry, 24)
        WHEN 'no_comparison/salary_raw' THEN '["no_comparison",' || json_quote(p.salary_raw) || substr(x.entry, 28)
        WHEN 'salary_percentile/salary_raw' THEN '["salary_percentile",' || json_quote(p.salary_raw) || substr(x.entry, 32)
        ELSE x.entry END AS entry
FROM evaluations e JOIN postings p ON p.id = e.posting_id, json_each(e.evidence) d, json_each(d.value) i
    JOIN evidence_entries x ON x.id = i.value
WHERE d.type = 'array';

-- Per-source health of crawls (crawler/store/health.py). A run succeeded when it ended ok, or partial with postings
-- found; the state is the last run's: robots-blocked (robots.txt forbade requests and nothing was found), empty (it
-- ended ok and found nothing), failing since the first run after the last success, else ok.
CREATE VIEW source_health AS
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
FROM last JOIN crawl_runs r ON r.id = last.id LEFT JOIN succeeded s ON s.source = r.source;

-- The application status of every posting of a tracked job, one row a posting. A job is a posting's duplicate
-- cluster (dedupe_signatures.cluster_id), else the posting alone; its status is that of its newest event on any
-- member (by at, then entry order; event_id is that event, tracked_id its posting: the job's row is the one whose
-- posting_id is tracked_id), since when the job has had it (the first event of its latest run of that
-- status), and its notes oldest first, one a line. Read at query time, so it follows dedupe --rebuild.
CREATE VIEW applications AS
WITH events AS (
    SELECT e.id, e.posting_id, e.status, e.note, e.at, coalesce(s.cluster_id, -e.posting_id) AS job
    FROM application_events e LEFT JOIN dedupe_signatures s ON s.posting_id = e.posting_id),
marked AS (
    SELECT job, id, posting_id, status, at, status IS NOT lag(status) OVER (PARTITION BY job ORDER BY at, id) AS changed,
        row_number() OVER (PARTITION BY job ORDER BY at DESC, id DESC) AS newest
    FROM events),
state AS (
    SELECT job, max(CASE WHEN newest = 1 THEN status END) AS status, max(CASE WHEN newest = 1 THEN at END) AS updated,
        max(CASE WHEN newest = 1 THEN id END) AS event_id, max(CASE WHEN newest = 1 THEN posting_id END) AS tracked_id,
        max(CASE WHEN changed THEN at END) AS since
    FROM marked GROUP BY job)
SELECT coalesce(s.posting_id, -j.job) AS posting_id, j.status, j.since, j.updated, j.event_id, j.tracked_id,
    (SELECT group_concat(note, char(10)) FROM (
        SELECT note FROM events n WHERE n.job = j.job AND n.note IS NOT NULL AND n.note != '' ORDER BY n.at, n.id)
    ) AS notes
FROM state j LEFT JOIN dedupe_signatures s ON j.job > 0 AND s.cluster_id = j.job;

-- One row a job: its duplicate cluster (dedupe_signatures.cluster_id), else the posting alone, so copies of one job
-- count once. posting_id is the cluster's canonical posting (its company, city, category, skills and pay stand for
-- the job); opened_at the first first_seen of its copies; closed_at the last closed_at once every copy is closed
-- (else null: open); days_open from opened_at to closed_at, or to the newest last_seen of the database while open.
-- Read at query time (normalize/market.py, crawler/market/).
CREATE VIEW job_timeline AS
WITH jobs AS (
    SELECT coalesce(c.canonical_posting_id, p.id) AS posting_id, count(*) AS copies, min(p.first_seen) AS opened_at,
        CASE WHEN count(p.closed_at) = count(*) THEN max(p.closed_at) END AS closed_at
    FROM postings p LEFT JOIN dedupe_signatures s ON s.posting_id = p.id LEFT JOIN clusters c ON c.id = s.cluster_id
    WHERE p.first_seen IS NOT NULL
    GROUP BY 1)
SELECT posting_id, copies, opened_at, closed_at,
    round(julianday(coalesce(closed_at, (SELECT max(last_seen) FROM postings))) - julianday(opened_at), 1) AS days_open
FROM jobs;
