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
import queue
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping

import sqlite_utils

from normalize.models import DIMENSIONS, Evaluation, Posting, Quarantined, RawInput

from . import fts
from .schema import POSTING_COLUMNS, flatten_posting
from .skills import insert_skill_rows, skill_rows

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


@dataclass
class Batch:
    """What one transaction writes."""

    inputs: list[RawInput] = field(default_factory=list)
    postings: list[Posting] = field(default_factory=list)
    quarantine: list[Quarantined] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.inputs) + len(self.postings) + len(self.quarantine)


class Writer:
    """Buffers items and writes them in batches of ``batch_size`` postings, one transaction each.

    ``counts`` holds new / updated / unchanged / quarantined after :meth:`close` (or each flush).
    With ``parsers`` (source → :func:`crawler.ledger.parser_version`) it records in ``input_parses`` each
    input of those sources whose postings have all been stored, in the transaction that stores the last
    of them.
    """

    def __init__(self, db: sqlite_utils.Database, *, run_id: int | None = None, batch_size: int = 500,
                 parsers: Mapping[str, str] | None = None):
        self.db = db
        self.conn: sqlite3.Connection = db.conn
        self._start(run_id, batch_size, parsers)

    def _start(self, run_id: int | None, batch_size: int, parsers: Mapping[str, str] | None) -> None:
        """The options and the empty state of a writer (shared with :class:`BackgroundWriter`)."""
        self.run_id = run_id
        self.batch_size = batch_size
        self.parsers = dict(parsers or {})
        self.counts: Counter[str] = Counter()
        self.changed_ids: list[int] = []
        self._batch = Batch()
        # (locator, sha256) of an input being stored → [as_of, status, postings, postings still to store, parser]
        self._pending: dict[tuple[str, str], list] = {}

    # ------------------------------------------------------------------ buffering

    def add_input(self, item: RawInput) -> None:
        self._batch.inputs.append(item)

    def add_posting(self, posting: Posting) -> None:
        self._batch.postings.append(posting)
        if len(self._batch.postings) >= self.batch_size:
            self.flush()

    def add_quarantine(self, item: Quarantined) -> None:
        self._batch.quarantine.append(item)

    def flush(self) -> None:
        """Write everything buffered."""
        batch, self._batch = self._batch, Batch()
        if batch:
            self.write(batch)

    def close(self) -> None:
        self.flush()

    # ------------------------------------------------------------------ writing

    def write(self, batch: Batch) -> None:
        """Write one batch in one transaction (ROLLBACK on error)."""
        with self.conn:
            # Take the write lock first: ids are allocated from max(id) below, and several crawlers
            # of one process each write through their own connection.
            self.conn.execute("BEGIN IMMEDIATE")
            input_ids = self._write_inputs(batch)
            self._write_postings(batch.postings, input_ids)
            self._write_quarantine(batch.quarantine, input_ids)
            if self._pending:
                self._record_parses(batch, input_ids)

    def _write_inputs(self, batch: Batch) -> dict[tuple[str, str], int]:
        """Insert raw inputs (once per source, locator and content) and map (locator, sha) → id."""
        ids: dict[tuple[str, str], int] = {}
        for item in batch.inputs:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO raw_inputs (source, locator, sha256, size, encoding, text, body, fetched_at,"
                " as_of, status, error, postings, run_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (item.source, item.locator, item.sha256, item.size, item.encoding, item.text, item.body,
                 item.fetched_at, item.as_of, item.status, item.error, item.postings, self.run_id),
            )
            if cur.rowcount:
                self.counts["inputs_new"] += 1
            parser = self.parsers.get(item.source)
            if parser is not None:
                self._pending[(item.locator, item.sha256)] = [item.as_of, item.status, item.postings, item.postings, parser]
        wanted = {(q.locator, q.input_sha256) for q in batch.quarantine}
        wanted |= {(p.locator, p.input_sha256) for p in batch.postings}
        wanted |= {(i.locator, i.sha256) for i in batch.inputs}
        for locator, sha in wanted:
            if sha is None:
                continue
            row = self.conn.execute(
                "SELECT id FROM raw_inputs WHERE locator = ? AND sha256 = ? ORDER BY id DESC LIMIT 1", (locator, sha)
            ).fetchone()
            if row:
                ids[(locator, sha)] = row[0]
        for item in batch.inputs:  # parsed again from here: its earlier parse no longer vouches for it
            if item.source in self.parsers and (item.locator, item.sha256) in ids:
                self.conn.execute("DELETE FROM input_parses WHERE raw_input_id = ?", (ids[(item.locator, item.sha256)],))
        return ids

    def _record_parses(self, batch: Batch, input_ids: dict[tuple[str, str], int]) -> None:
        """Record the inputs whose last posting this batch stored, and those of the batch that had none.

        Each of them is an input or a posting of this batch, so ``input_ids`` holds its row id."""
        done = [key for key in ((i.locator, i.sha256) for i in batch.inputs if i.postings == 0) if key in self._pending]
        for p in batch.postings:
            entry = self._pending.get((p.locator, p.input_sha256))
            if entry is not None:
                entry[3] -= 1
                if entry[3] == 0:
                    done.append((p.locator, p.input_sha256))
        now = utcnow()
        for key in done:
            as_of, status, count, _, parser = self._pending.pop(key)
            if key in input_ids:
                self.conn.execute(
                    "INSERT OR REPLACE INTO input_parses (raw_input_id, as_of, parser, status, postings, run_id,"
                    " parsed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (input_ids[key], as_of, parser, status, count, self.run_id, now))

    def _write_postings(self, postings: list[Posting], input_ids: dict[tuple[str, str], int]) -> None:
        if not postings:
            return
        latest: dict[str, Posting] = {}
        for p in postings:
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
                    touches.append((max(last_seen or "", p.last_seen), raw_input_id, pid))
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
            fts_insert.append((pid, p.title, p.company, p.city, p.skills, fts_body(p)))
            self.changed_ids.append(pid)

        c = self.conn
        if touches:
            c.executemany("UPDATE postings SET last_seen = ?, raw_input_id = coalesce(?, raw_input_id), closed_at = NULL"
                          " WHERE id = ?", touches)
        if inserts:
            c.executemany(_INSERT_POSTING, inserts)
        if updates:
            c.executemany(_UPDATE_POSTING, updates)
            c.executemany("DELETE FROM sections WHERE posting_id = ?", updated_ids)
            c.executemany("DELETE FROM posting_skills WHERE posting_id = ?", updated_ids)
            c.executemany("DELETE FROM signals WHERE posting_id = ? AND scorer = 'source'", updated_ids)
            c.executemany("DELETE FROM evaluations WHERE posting_id = ? AND scorer = 'source'", updated_ids)
            fts.delete_rows(c, updated_ids)
        self._write_children(children)
        fts.insert_rows(c, fts_insert)

    def _write_children(self, children: Iterable[tuple[int, Posting]]) -> None:
        sections, evals, signals, skills = [], [], [], []
        for pid, p in children:
            skills.extend(skill_rows(pid, p.skill_evidence))
            seq = 0
            for key, items in p.sections.items():
                heading = p.section_headings.get(key)
                for pos, text in enumerate(items):
                    sections.append((pid, seq, key, heading, pos, text))
                    seq += 1
            if p.source_evaluation:
                row, sigs = evaluation_rows(pid, p.source_evaluation, p.as_of)
                evals.append(row)
                signals.extend(sigs)
        c = self.conn
        insert_skill_rows(c, skills)
        if sections:
            c.executemany("INSERT INTO sections (posting_id, seq, key, heading, position, text) VALUES (?,?,?,?,?,?)", sections)
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

    def _write_quarantine(self, quarantine: list[Quarantined], input_ids: dict[tuple[str, str], int]) -> None:
        now = utcnow()
        for q in quarantine:
            cur = self.conn.execute(
                "INSERT OR IGNORE INTO quarantine (raw_input_id, source, locator, position, input_sha256, reason, detail,"
                " text, at, run_id) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (input_ids.get((q.locator, q.input_sha256)), q.source, q.locator,
                 -1 if q.position is None else q.position, q.input_sha256, q.reason, q.detail, q.text, now, self.run_id),
            )
            self.counts["quarantined"] += 1
            if cur.rowcount:
                self.counts["quarantined_new"] += 1


class BackgroundWriter(Writer):
    """A :class:`Writer` whose batches are written by a thread of their own.

    SQLite releases the GIL while it works, so the engine parses and normalizes the next batch on
    one core while this thread writes the previous one on the other. Batches keep their order and
    their one-transaction-each guarantee; at most one waits in the queue (back-pressure): the writer
    is the slower side, so a longer queue only holds more postings in memory (bench/ingest.py 10k:
    the stage worker peaked at 232-235 MB with two, 203-206 MB with one, in no more time).
    """

    def __init__(self, db_path: str, *, run_id: int | None = None, batch_size: int = 500,
                 parsers: Mapping[str, str] | None = None):
        self.db_path = db_path
        self._start(run_id, batch_size, parsers)
        self._queue: queue.Queue[Batch | None] = queue.Queue(maxsize=1)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="jobcrawl-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from .schema import open_db

        db = open_db(self.db_path)
        self.db, self.conn = db, db.conn
        try:
            while (batch := self._queue.get()) is not None:
                if self._error is None:
                    try:
                        Writer.write(self, batch)
                    except BaseException as err:  # re-raised in the engine's thread by close()
                        self._error = err
        finally:
            db.close()

    def write(self, batch: Batch) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(batch)

    def close(self) -> None:
        self.flush()
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error
