"""Batched writes: raw inputs, postings with their child rows and FTS, versions, quarantine.

One transaction per batch (never a commit per item). A batch is all-or-nothing, so a process
killed mid-ingest leaves the database as it was after the last whole batch; re-running the
ingest skips what is stored unchanged and completes the rest.

Identity: a posting is its ``key`` (source + source_id). Same key and content hash → unchanged
(only ``last_seen`` moves forward). Same key, new hash → updated in place, version + 1, and the
previous version's exported record kept in ``posting_versions``.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Iterable

import sqlite_utils

from normalize.models import DIMENSIONS, Evaluation, Posting, Quarantined, RawInput

from .schema import POSTING_COLUMNS, flatten_posting

_POSTING_COLS = [c for c, *_ in POSTING_COLUMNS if c != "id"] + ["raw_input_id", "version"]
_INSERT_POSTING = "INSERT INTO postings (id, {cols}) VALUES (?, {qs})".format(
    cols=", ".join(f"[{c}]" for c in _POSTING_COLS), qs=", ".join("?" for _ in _POSTING_COLS)
)
_UPDATE_POSTING = "UPDATE postings SET {sets} WHERE id = ?".format(
    sets=", ".join(f"[{c}] = ?" for c in _POSTING_COLS if c not in ("first_seen",))
)
_UPDATE_COLS = [c for c in _POSTING_COLS if c != "first_seen"]
EVAL_COLS = [
    "posting_id", "scorer", "overall", "pay", "growth", "worklife", "mission",
    "overall_level", "pay_level", "growth_level", "worklife_level", "mission_level",
    "summary", "notes", "explanations", "evidence", "problems", "computed_at",
]


def utcnow() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def fts_body(posting: Posting) -> str:
    """Text indexed for full-text search besides title and company: every section bullet and tag."""
    parts = [" ".join(posting.tags)]
    for bullets in posting.sections.values():
        parts.extend(bullets)
    if posting.description and not posting.sections:
        parts.append(posting.description)
    return "\n".join(p for p in parts if p)


def evaluation_rows(posting_id: int, ev: Evaluation, computed_at: str) -> tuple[list[Any], list[tuple]]:
    """An evaluation as one ``evaluations`` row and its ``signals`` rows."""
    from normalize.posting import level_for

    row = [
        posting_id, ev.scorer, ev.overall, ev.pay, ev.growth, ev.worklife, ev.mission,
        level_for(ev.overall) if ev.overall is not None else None,
        *(ev.levels.get(d) for d in DIMENSIONS),
        ev.summary, json.dumps(ev.notes, ensure_ascii=False), json.dumps(ev.explanations, ensure_ascii=False),
        json.dumps(ev.evidence, ensure_ascii=False), json.dumps(ev.problems, ensure_ascii=False), computed_at,
    ]
    signals = [
        (posting_id, ev.scorer, dim, pos, s.key, s.value)
        for dim, items in ev.signals.items() for pos, s in enumerate(items)
    ]
    return row, signals


class Writer:
    """Buffers items and writes them in batches of ``batch_size`` postings.

    ``counts`` holds new / updated / unchanged / quarantined / inputs after each flush.
    """

    def __init__(self, db: sqlite_utils.Database, *, run_id: int | None = None, batch_size: int = 500):
        self.db = db
        self.conn: sqlite3.Connection = db.conn
        self.run_id = run_id
        self.batch_size = batch_size
        self.counts: Counter[str] = Counter()
        self.changed_ids: list[int] = []
        self._inputs: list[RawInput] = []
        self._postings: list[Posting] = []
        self._quarantine: list[Quarantined] = []
        self._input_status: dict[tuple[str, str, str], tuple[str, str | None, int]] = {}

    # ------------------------------------------------------------------ buffering

    def add_input(self, item: RawInput, *, status: str = "parsed", postings: int = 0) -> None:
        self._inputs.append(item)
        self._input_status[(item.source, item.locator, item.sha256)] = (status, item.error, postings)

    def add_posting(self, posting: Posting) -> None:
        self._postings.append(posting)
        if len(self._postings) >= self.batch_size:
            self.flush()

    def add_quarantine(self, item: Quarantined) -> None:
        self._quarantine.append(item)

    def pending(self) -> int:
        return len(self._inputs) + len(self._postings) + len(self._quarantine)

    # ------------------------------------------------------------------ flushing

    def flush(self) -> None:
        """Write everything buffered in one transaction."""
        if not self.pending():
            return
        with self.conn:  # BEGIN … COMMIT, ROLLBACK on error
            input_ids = self._write_inputs()
            self._write_postings(input_ids)
            self._write_quarantine(input_ids)
        self._inputs.clear()
        self._postings.clear()
        self._quarantine.clear()

    def _write_inputs(self) -> dict[tuple[str, str], int]:
        """Insert raw inputs (once per source, locator and content) and map (locator, sha) → id."""
        ids: dict[tuple[str, str], int] = {}
        for item in self._inputs:
            status, error, n = self._input_status[(item.source, item.locator, item.sha256)]
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO raw_inputs (source, locator, sha256, size, encoding, text, body, fetched_at,"
                " as_of, status, error, postings, run_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (item.source, item.locator, item.sha256, item.size, item.encoding, item.text, item.body,
                 item.fetched_at, item.as_of, status, error, n, self.run_id),
            )
            if cur.rowcount:
                self.counts["inputs_new"] += 1
        wanted = {(q.locator, q.input_sha256) for q in self._quarantine}
        wanted |= {(p.locator, p.input_sha256) for p in self._postings}
        wanted |= {(i.locator, i.sha256) for i in self._inputs}
        for locator, sha in wanted:
            if sha is None:
                continue
            row = self.conn.execute(
                "SELECT id FROM raw_inputs WHERE locator = ? AND sha256 = ? ORDER BY id DESC LIMIT 1", (locator, sha)
            ).fetchone()
            if row:
                ids[(locator, sha)] = row[0]
        return ids

    def _write_postings(self, input_ids: dict[tuple[str, str], int]) -> None:
        if not self._postings:
            return
        latest: dict[str, Posting] = {}
        for p in self._postings:
            latest[p.key] = p  # the same record twice in one batch: the later one wins
        keys = list(latest)
        existing: dict[str, tuple] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            q = ",".join("?" * len(part))
            for row in self.conn.execute(
                f"SELECT key, id, content_hash, first_seen, last_seen, version, closed_at FROM postings WHERE key IN ({q})",
                part,
            ):
                existing[row[0]] = row[1:]
        next_id = (self.conn.execute("SELECT coalesce(max(id), 0) FROM postings").fetchone()[0]) + 1

        inserts, updates, touches, updated_ids, fts_insert, children = [], [], [], [], [], []
        for key, p in latest.items():
            raw_input_id = input_ids.get((p.locator, p.input_sha256))
            old = existing.get(key)
            if old is None:
                pid = next_id
                next_id += 1
                row = flatten_posting(p)
                inserts.append([pid] + [row[c] for c in _POSTING_COLS[:-2]] + [raw_input_id, 1])
                self.counts["new"] += 1
            else:
                pid, old_hash, first_seen, last_seen, version, closed_at = old
                if old_hash == p.content_hash:
                    touches.append((max(last_seen or "", p.last_seen), pid))
                    self.counts["unchanged"] += 1
                    if closed_at is not None and p.complete_listing:
                        self.counts["reopened"] += 1
                    continue
                self._snapshot(pid, version, p.last_seen)
                p = p.model_copy(update={"first_seen": min(first_seen, p.first_seen), "last_seen": max(last_seen, p.last_seen)})
                row = flatten_posting(p)
                row["raw_input_id"], row["version"] = raw_input_id, version + 1
                updates.append([row[c] for c in _UPDATE_COLS] + [pid])
                updated_ids.append((pid,))
                self.counts["updated"] += 1
            children.append((pid, p))
            fts_insert.append((pid, p.title or "", p.company or "", fts_body(p)))
            self.changed_ids.append(pid)

        c = self.conn
        if touches:
            c.executemany("UPDATE postings SET last_seen = ?, closed_at = NULL WHERE id = ?", touches)
        if inserts:
            c.executemany(_INSERT_POSTING, inserts)
        if updates:
            c.executemany(_UPDATE_POSTING, updates)
            for table in ("sections", "insights"):
                c.executemany(f"DELETE FROM {table} WHERE posting_id = ?", updated_ids)
            c.executemany("DELETE FROM signals WHERE posting_id = ? AND scorer = 'source'", updated_ids)
            c.executemany("DELETE FROM evaluations WHERE posting_id = ? AND scorer = 'source'", updated_ids)
            c.executemany("DELETE FROM postings_fts WHERE rowid = ?", updated_ids)
        self._write_children(children)
        c.executemany("INSERT INTO postings_fts (rowid, title, company, body) VALUES (?, ?, ?, ?)", fts_insert)

    def _write_children(self, children: Iterable[tuple[int, Posting]]) -> None:
        sections, insights, evals, signals = [], [], [], []
        for pid, p in children:
            for rows, groups, headings in ((sections, p.sections, p.section_headings), (insights, p.insights, {})):
                seq = 0
                for key, items in groups.items():
                    for pos, text in enumerate(items):
                        rows.append((pid, seq, key, headings.get(key), pos, text))
                        seq += 1
            if p.source_evaluation:
                row, sigs = evaluation_rows(pid, p.source_evaluation, p.as_of)
                evals.append(row)
                signals.extend(sigs)
        c = self.conn
        for table, rows in (("sections", sections), ("insights", insights)):
            if rows:
                c.executemany(f"INSERT INTO {table} (posting_id, seq, key, heading, position, text) VALUES (?,?,?,?,?,?)", rows)
        if evals:
            c.executemany(
                f"INSERT OR REPLACE INTO evaluations ({', '.join(EVAL_COLS)}) VALUES ({', '.join('?' * len(EVAL_COLS))})",
                evals,
            )
        if signals:
            c.executemany(
                "INSERT OR REPLACE INTO signals (posting_id, scorer, dimension, position, key, value) VALUES (?,?,?,?,?,?)",
                signals,
            )

    def _snapshot(self, pid: int, version: int, superseded_at: str) -> None:
        """Keep the stored version's exported record before it is replaced."""
        from .read import export_record

        record = export_record(self.db, pid)
        self.conn.execute(
            "INSERT OR IGNORE INTO posting_versions (posting_id, version, content_hash, superseded_at, snapshot)"
            " VALUES (?, ?, ?, ?, ?)",
            (pid, version, record.get("content_hash"), superseded_at, json.dumps(record, ensure_ascii=False)),
        )

    def _write_quarantine(self, input_ids: dict[tuple[str, str], int]) -> None:
        now = utcnow()
        for q in self._quarantine:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO quarantine (raw_input_id, source, locator, position, input_sha256, reason, detail,"
                " text, at, run_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (input_ids.get((q.locator, q.input_sha256)), q.source, q.locator,
                 -1 if q.position is None else q.position, q.input_sha256, q.reason, q.detail, q.text, now, self.run_id),
            )
            self.counts["quarantined"] += 1
            if cur.rowcount:
                self.counts["quarantined_new"] += 1
