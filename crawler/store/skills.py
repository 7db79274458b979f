"""Skills storage: the ``skills`` table synced from the taxonomy, ``posting_skills`` rows, retagging."""

from __future__ import annotations

import json
import sqlite3
from typing import Iterable, Mapping, Sequence

import sqlite_utils

from normalize.models import SkillEvidence
from normalize.skills import Taxonomy, evidence, skills_in_order

from crawler.store import fts
from crawler.store.codes import SECTION_CODES, coded
from crawler.store.sections import stored_bullets
PS_COLS = ("posting_id", "skill", "section", "seq", "count", "first_offset", "length")


def skill_values(items: Iterable[SkillEvidence]) -> list[tuple]:
    """Evidence as its ``posting_skills`` columns after ``posting_id``: the category and the text as written are
    not stored (:func:`evidence_records` reads them back)."""
    return [(e.skill, e.section, seq, e.count, e.first_offset, len(e.matched)) for seq, e in enumerate(items)]


def skill_rows(posting_id: int, items: Iterable[SkillEvidence]) -> list[tuple]:
    return [(posting_id, *values) for values in skill_values(items)]


def evidence_records(rows: Iterable[Mapping], sections: Mapping[str, Sequence[str]], tags: Sequence[str],
                     categories: Mapping[str, str]) -> list[dict]:
    """A posting's ``posting_skills`` rows as the evidence the tagger made (normalize.skills.evidence), the
    category from ``skills``."""
    return evidence(((r["skill"], categories.get(r["skill"]), r["section"], r["count"], r["first_offset"], r["length"])
                     for r in rows), sections, tags)


def categories(db: sqlite_utils.Database) -> dict[str, str]:
    """Skill → its category (the ``skills`` table)."""
    return dict(db.execute("SELECT name, category FROM skills").fetchall())


_INSERT_PS = (f"INSERT OR REPLACE INTO posting_skills ({', '.join(c + '_stored' if c == 'section' else c for c in PS_COLS)})"
              f" VALUES ({', '.join('?' * len(PS_COLS))})")


def insert_skill_rows(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Store ``posting_skills`` rows (:data:`PS_COLS`; the section as its code, crawler/store/codes.py), replacing a
    posting's row of the same skill and section."""
    if rows:
        codes = SECTION_CODES
        conn.executemany(_INSERT_PS, [
            (pid, skill, codes[section] if section in codes else coded(section, codes), seq, count, first, length)
            for pid, skill, section, seq, count, first, length in rows])


def stored_version(db: sqlite_utils.Database) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'taxonomy_version'").fetchone()
    return row[0] if row else None


def sync_taxonomy(db: sqlite_utils.Database, taxonomy: Taxonomy) -> bool:
    """Make the ``skills`` table equal to the taxonomy. Returns True when it changed anything."""
    rows = taxonomy.rows()
    current = {r["name"]: r for r in db.query("SELECT * FROM skills")}
    wanted = {r["name"]: {**r, "aliases": json.dumps(r["aliases"], ensure_ascii=False), "frontier": int(r["frontier"])}
              for r in rows}
    if current == wanted:
        return False
    with db.conn:
        db.execute("DELETE FROM skills")
        db.conn.executemany(
            "INSERT INTO skills (name, category, parent, aliases, frontier, kind) VALUES (?, ?, ?, ?, ?, ?)",
            [(r["name"], r["category"], r["parent"], r["aliases"], r["frontier"], r["kind"]) for r in wanted.values()],
        )
    return True


def retag(db: sqlite_utils.Database, taxonomy: Taxonomy, *, batch: int = 1000) -> dict[str, int]:
    """Re-run tagging over every stored posting (no re-ingest); idempotent.

    Returns counts: postings tagged, postings whose skills changed, evidence rows written.
    """
    sync_taxonomy(db, taxonomy)
    counts = {"postings": 0, "changed": 0, "rows": 0}
    last = 0
    conn = db.conn
    while True:
        postings = conn.execute(
            "SELECT id, tags, skills FROM postings WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
        ).fetchall()
        if not postings:
            break
        ids = [p[0] for p in postings]
        q = ",".join("?" * len(ids))
        sections = stored_bullets(conn, f"posting_id IN ({q})", ids)
        rows, changed = [], []
        for pid, tags, old in postings:
            hits = taxonomy.tag(sections.get(pid, {}), json.loads(tags or "[]"))
            names = json.dumps(skills_in_order(hits), ensure_ascii=False)
            if names != old:
                counts["changed"] += 1
                changed.append((pid, names))
            rows.extend(skill_rows(pid, hits))
        with conn:
            fts.set_skills(conn, changed)
            conn.execute(f"DELETE FROM posting_skills WHERE posting_id IN ({q})", ids)
            insert_skill_rows(conn, rows)
        counts["postings"] += len(ids)
        counts["rows"] += len(rows)
        last = ids[-1]
    set_version(db, taxonomy)
    return counts


def set_version(db: sqlite_utils.Database, taxonomy: Taxonomy) -> None:
    with db.conn:
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('taxonomy_version', ?)", (taxonomy.version,))


def prepare(db: sqlite_utils.Database, taxonomy: Taxonomy) -> bool:
    """Before a run: sync the skills table. Returns True when stored postings were tagged with
    another taxonomy (or none) and must be retagged after the run."""
    sync_taxonomy(db, taxonomy)
    if stored_version(db) == taxonomy.version:
        return False
    if db.execute("SELECT count(*) FROM postings").fetchone()[0] == 0:
        set_version(db, taxonomy)
        return False
    return True
