"""The one writer: plain-row batches (crawler/store/rows.py) into SQLite, one transaction each.

It does not care where a batch was made: by the store stage in this process, in a worker process
or on another machine. A batch is all-or-nothing, so a process killed mid-run leaves the database
as it was after the last whole batch; re-running completes the rest.

A batch the database refuses for its data (a value SQLite cannot hold, a constraint) is written again in the
same transaction one posting at a time, each under a savepoint: a posting refused again becomes a quarantine row
with the error (``store_error``), and the rest of the batch is stored. Any other error (the disk, the lock) fails
the batch.

A raw input is stored once per source, locator and content. One sent again (parsed again) takes that parse's
outcome (status, error, postings) and loses its earlier quarantine rows, which the parse sends again if they
still hold; the head of a file over the size cap, stored before, gives way to the whole file. A new content
at a locator retires the quarantine rows of the contents stored there before.

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
from dataclasses import replace
from typing import Iterable

import sqlite_utils

from normalize.clock import now_iso

from crawler.store import batches as spool
from crawler.store import dedupe, evidence, extra, fts
from crawler.store.codes import HEADING_CODES, SECTION_CODES, TZ_CODES, coded
from crawler.store.rows import (APP_COLS, EVAL_COLS, INPUT_COLS, NOTHING_READ, POSTING_COLS, QUARANTINE_COLS, SEEN_COLS,
                                Batch, PostingRow, copies_input, hash_bytes, kept_whole, listing_score, raw_text,
                                row_values, scorer_stored, stored_columns, time_stored)
from crawler.store.skills import insert_skill_rows

_ALL_COLS = POSTING_COLS + ("raw_input_id", "version", "raw_hash")
_INSERT_COLS = _ALL_COLS + ("first_run_id", "score", "score_level", "score_by")
_INSERT_POSTING = "INSERT INTO postings (id, {cols}) VALUES (?, {qs})".format(
    cols=stored_columns(_INSERT_COLS), qs=", ".join("?" for _ in _INSERT_COLS))
"""A new posting, with the listing's score of its source evaluation (:func:`listing_score`): the score trigger on
that evaluation's insert finds it set and leaves the row as it is."""
_UPDATE_COLS = tuple(c for c in _ALL_COLS if c != "first_seen")
_UPDATE_POSTING = ("UPDATE postings SET {sets}, first_seen_stored = nullif(min(first_seen, ?), ?) WHERE id = ?"
                   .format(sets=stored_columns(_UPDATE_COLS, "[{}] = ?")))
_LAST_SEEN = POSTING_COLS.index("last_seen")
_FIRST_SEEN = POSTING_COLS.index("first_seen")
_POSTING_AS_OF = POSTING_COLS.index("as_of")
_CONTENT_HASH = POSTING_COLS.index("content_hash")
_TZ = POSTING_COLS.index("tz")
_CLOSED_AT = POSTING_COLS.index("closed_at")
_INPUT_SHA = POSTING_COLS.index("input_sha256")
_EXTRA = POSTING_COLS.index("extra")
_TOUCH = ("UPDATE postings SET last_seen_stored = nullif(?1, as_of), input_sha256 = CASE WHEN ?2 IS NULL THEN input_sha256 ELSE nullif("
          "coalesce(input_sha256, (SELECT sha256 FROM raw_inputs WHERE id = postings.raw_input_id)),"
          " (SELECT sha256 FROM raw_inputs WHERE id = ?2)) END, raw_input_id = coalesce(?2, raw_input_id),"
          " closed_at = ?4, raw_hash = coalesce(?5, raw_hash) WHERE id = ?3")
"""An unchanged posting seen again: its raw input becomes the one it was seen in, and its ``input_sha256`` (the
input it was parsed from) is stored where it now differs from that input's; ``closed_at`` is :func:`still_closed`;
``raw_hash`` the hash of the raw item it was seen in, when its reader made one."""
_INSERT_INPUT = "INSERT OR IGNORE INTO raw_inputs ({cols}, run_id) VALUES ({qs}, ?)".format(
    cols=", ".join(INPUT_COLS), qs=", ".join("?" * len(INPUT_COLS)))
_INSERT_QUARANTINE = "INSERT OR IGNORE INTO quarantine ({cols}, raw_input_id, at, run_id, text_in_input) VALUES ({qs}, ?, ?, ?, ?)".format(
    cols=", ".join(QUARANTINE_COLS), qs=", ".join("?" * len(QUARANTINE_COLS)))
_Q_TEXT = QUARANTINE_COLS.index("text")
_INSERT_EVAL = f"INSERT OR REPLACE INTO evaluations ({stored_columns(EVAL_COLS)}) VALUES ({', '.join('?' * len(EVAL_COLS))})"
_EVIDENCE_AT = EVAL_COLS.index("evidence")
_INSERT_APP = f"INSERT INTO app_market (posting_id, {', '.join(APP_COLS)}) VALUES (?{', ?' * len(APP_COLS)})"
_INSERT_SECTION = ("INSERT INTO sections (posting_id, seq, key_stored, heading_stored, text, spans)"
                   " VALUES (?,?,?,?,?,?)")
_SRC, _LOC, _SHA, _STATUS, _POSTINGS, _AS_OF, _READER = (INPUT_COLS.index(c) for c in (
    "source", "locator", "sha256", "status", "postings", "as_of", "reader"))
_SOURCE = POSTING_COLS.index("source")
_SEEN_KEY, _SEEN_SOURCE, _SEEN_LOC, _SEEN_SHA, _SEEN_AT, _SEEN_COMPLETE, _SEEN_HASH = range(len(SEEN_COLS))
_OUTCOME = ("status", "error", "postings")
_CONTENT = ("size", "encoding", "text", "text_zstd", "body", "reader")
_DATA_ERRORS = (OverflowError, ValueError, TypeError, sqlite3.IntegrityError, sqlite3.InterfaceError,
                sqlite3.DataError)
"""Errors that say a row is wrong, not the database: the batch is written again one posting at a time."""


class Writer:
    """Writes :class:`~crawler.store.rows.Batch` es into ``db``, each in one transaction.

    ``counts`` holds, per run id, new / updated / unchanged / quarantined / reopened / inputs_new;
    ``changed_ids`` the ids of postings stored new or changed. For the inputs of the sources a batch
    names in ``parsers`` (crawler/ingest/ledger.py), the writer records in ``input_parses`` each input whose
    postings have all been stored, in the transaction that stores the last of them.
    """

    def __init__(self, db: sqlite_utils.Database):
        self.db = db
        self.conn: sqlite3.Connection = db.conn
        self.counts: dict[int | None, Counter[str]] = {}
        self.changed_ids: list[int] = []
        # (source, locator, sha256) of an input being stored → [as_of, status, postings, still to store, parser]
        self._pending: dict[tuple[str, str, str], list] = {}

    def counts_of(self, run_id: int | None) -> dict[str, int]:
        return dict(self.counts.get(run_id, {}))

    def write(self, batch: Batch) -> None:
        """Write one batch in one transaction (ROLLBACK on error, and the counts with it)."""
        counts = self.counts.setdefault(batch.run_id, Counter())
        before, changed = counts.copy(), len(self.changed_ids)
        pending = {key: list(entry) for key, entry in self._pending.items()}
        for one_by_one in (False, True):
            try:
                self._write(batch, counts, one_by_one=one_by_one)
                return
            except BaseException as err:
                counts.clear()
                counts.update(before)
                del self.changed_ids[changed:]
                self._pending = {key: list(entry) for key, entry in pending.items()}
                if one_by_one or not batch.postings or not isinstance(err, _DATA_ERRORS):
                    raise

    def _write(self, batch: Batch, counts: Counter, *, one_by_one: bool = False) -> None:
        with self.conn:
            # Take the write lock first: ids are allocated from max(id) below.
            self.conn.execute("BEGIN IMMEDIATE")
            if batch.id is not None and spool.stored(self.conn, batch.id):
                counts["spooled_again"] += 1  # delivered again by the Redis spool: stored already
                return
            before = counts.copy()
            input_ids = self._write_inputs(batch, counts)
            if one_by_one:
                stored, refused = self._write_one_by_one(batch, input_ids, counts)
                batch = replace(batch, postings=stored, quarantine=batch.quarantine + refused)
            else:
                self._write_postings(batch.postings, input_ids, counts, batch.run_id)
            self._write_seen(batch.seen, input_ids, counts)
            self._write_quarantine(batch, input_ids, counts)
            if self._pending:
                self._record_parses(batch, input_ids)
            if batch.id is not None:
                spool.record(self.conn, batch.id, batch.run_id, dict(counts - before))

    def _write_one_by_one(self, batch: Batch, input_ids: dict[tuple[str, str], int], counts: Counter
                          ) -> tuple[list[PostingRow], list[tuple]]:
        """Each posting of ``batch`` under a savepoint: (the postings stored, quarantine rows of those refused)."""
        stored, refused = [], []
        for row in batch.postings:
            kept, changed = counts.copy(), len(self.changed_ids)
            self.conn.execute("SAVEPOINT posting")
            try:
                self._write_postings([row], input_ids, counts, batch.run_id)
                stored.append(row)
            except _DATA_ERRORS as err:
                self.conn.execute("ROLLBACK TO posting")
                counts.clear()
                counts.update(kept)
                del self.changed_ids[changed:]
                refused.append(refused_row(row, err))
            self.conn.execute("RELEASE posting")
        return stored, refused

    def close(self) -> None:
        """Nothing is buffered here: a no-op (:class:`BackgroundWriter` waits for its thread)."""

    # ------------------------------------------------------------------ parts

    def _write_inputs(self, batch: Batch, counts: Counter) -> dict[tuple[str, str], int]:
        """Insert raw inputs (once per source, locator and content) and map (locator, sha) → id."""
        for row in batch.inputs:
            if self.conn.execute(_INSERT_INPUT, (*row, batch.run_id)).rowcount:
                counts["inputs_new"] += 1
                self._retire_earlier_versions(row)
            else:
                self._parsed_again(row)
            parser = batch.parsers.get(row[_SRC])
            if parser is not None:
                self._pending[(row[_SRC], row[_LOC], row[_SHA])] = [row[_AS_OF], row[_STATUS], row[_POSTINGS],
                                                                    row[_POSTINGS], parser]
        wanted = {(q[1], q[3]) for q in batch.quarantine}
        wanted |= {(p.locator, p.input_sha256) for p in batch.postings}
        wanted |= {(s[_SEEN_LOC], s[_SEEN_SHA]) for s in batch.seen}
        wanted |= {(i[_LOC], i[_SHA]) for i in batch.inputs}
        ids: dict[tuple[str, str], int] = {}
        for locator, sha in wanted:
            if sha is None:
                continue
            row = self.conn.execute(
                "SELECT id FROM raw_inputs WHERE locator = ? AND sha256 = ? ORDER BY id DESC LIMIT 1", (locator, sha)
            ).fetchone()
            if row:
                ids[(locator, sha)] = row[0]
        for row in batch.inputs:  # parsed again from here: its earlier parse no longer vouches for it
            if row[_SRC] in batch.parsers and (row[_LOC], row[_SHA]) in ids:
                self.conn.execute("DELETE FROM input_parses WHERE raw_input_id = ?", (ids[(row[_LOC], row[_SHA])],))
        return ids

    def _retire_earlier_versions(self, row: tuple) -> None:
        """A new input at a locator: the quarantine rows of what was there before go (a file edited to fix it, a
        page whose content changed), or, for a block of a streamed table (one of several inputs at one locator),
        only the row of a file that could not be read at all."""
        streamed = row[_READER] is not None and json.loads(row[_READER]).get("streamed")
        self.conn.execute(f"DELETE FROM quarantine WHERE source = ? AND locator = ? AND input_sha256 {'=' if streamed else '!='} ?",
                          (row[_SRC], row[_LOC], NOTHING_READ if streamed else row[_SHA]))

    def _parsed_again(self, row: tuple) -> None:
        """An input stored before, parsed again: this parse's outcome replaces the earlier one's, its earlier
        quarantine rows go (what still fails comes again with this parse), and a part of it stored before (the
        head of a file over the size cap) gives way to the whole input."""
        new = dict(zip(INPUT_COLS, row))
        key = (new["source"], new["locator"], new["sha256"])
        stored = self.conn.execute("SELECT id, status FROM raw_inputs WHERE source = ? AND locator = ? AND sha256 = ?",
                                   key).fetchone()
        if stored is None:
            return
        raw_id, status = stored
        self.conn.execute("DELETE FROM quarantine WHERE source = ? AND locator = ? AND input_sha256 = ?", key)
        columns = _OUTCOME
        # Only a quarantined input may be kept in part; the stored text is read only then.
        if status == "quarantined" and not self._kept_whole(raw_id) \
                and kept_whole(new | {"text": raw_text(new["text"], new["text_zstd"])}) is not None:
            columns += _CONTENT
        self.conn.execute(f"UPDATE raw_inputs SET {', '.join(f'{c} = ?' for c in columns)} WHERE id = ?",
                          (*(new[c] for c in columns), raw_id))

    def _input_text(self, raw_id: int, length: int, seen: dict[int, list]) -> str | None:
        """The stored text of input ``raw_id`` when a text of ``length`` characters can be all of it (its size in
        bytes allows it: a row of a large table never is, and the input is not expanded for it); read once a batch."""
        row = seen.get(raw_id)
        if row is None:
            row = seen[raw_id] = list(self.conn.execute(
                "SELECT size, text, text_zstd FROM raw_inputs WHERE id = ?", (raw_id,)).fetchone())
        size = row[0]
        if size is not None and not length <= size <= 4 * length + 4:  # 1–4 bytes a character, a BOM
            return None
        if len(row) == 3:
            row.append(raw_text(row[1], row[2]))
        return row[3]

    def _kept_whole(self, raw_id: int) -> bool:
        sha, text, text_zstd, body, encoding = self.conn.execute(
            "SELECT sha256, text, text_zstd, body, encoding FROM raw_inputs WHERE id = ?", (raw_id,)).fetchone()
        return kept_whole({"sha256": sha, "text": raw_text(text, text_zstd), "body": body, "encoding": encoding}) is not None

    def _record_parses(self, batch: Batch, input_ids: dict[tuple[str, str], int]) -> None:
        """Record the inputs whose last posting this batch stored, and those of the batch that had none."""
        done = [key for key in ((i[_SRC], i[_LOC], i[_SHA]) for i in batch.inputs if i[_POSTINGS] == 0)
                if key in self._pending]
        stored = [(p.values[_SOURCE], p.locator, p.input_sha256) for p in batch.postings]
        stored += [(s[_SEEN_SOURCE], s[_SEEN_LOC], s[_SEEN_SHA]) for s in batch.seen]
        for key in stored:
            entry = self._pending.get(key)
            if entry is not None:
                entry[3] -= 1
                if entry[3] == 0:
                    done.append(key)
        now = now_iso()
        for key in done:
            as_of, status, count, _, parser = self._pending.pop(key)
            raw_id = input_ids.get(key[1:])
            if raw_id is not None:
                self.conn.execute(
                    "INSERT OR REPLACE INTO input_parses (raw_input_id, as_of, parser, status, postings, run_id,"
                    " parsed_at) VALUES (?, ?, ?, ?, ?, ?, ?)", (raw_id, as_of, parser, status, count, batch.run_id, now))

    def _write_postings(self, postings: list[PostingRow], input_ids: dict[tuple[str, str], int],
                        counts: Counter, batch_run_id: int | None) -> None:
        if not postings:
            return
        latest: dict[str, PostingRow] = {}
        for p in postings:
            latest[p.key] = p  # the same record twice in one batch: the later one wins
        existing = self._stored(list(latest), "id, content_hash, last_seen, version, closed_at, extra")
        next_id = self.conn.execute("SELECT coalesce(max(id), 0) FROM postings").fetchone()[0] + 1
        changed = [p for key, p in latest.items() if key not in existing or existing[key][1] != p.content_hash]
        stored_extra = dict(zip((p.key for p in changed),
                                extra.intern_values(self.conn, [p.values[_EXTRA] for p in changed])))

        inserts, updates, touches, updated_ids, search, children, replaced = [], [], [], [], [], [], []
        for key, p in latest.items():
            raw_input_id = input_ids.get((p.locator, p.input_sha256))
            old = existing.get(key)
            if old is not None and old[1] == p.content_hash:
                touches.append(_touch(old[0], old[2], old[4], p.last_seen, raw_input_id, p.complete_listing,
                                      p.raw_hash, counts))
                continue
            values = list(p.values)
            values[_EXTRA] = stored_extra[key]
            if raw_input_id is not None:  # its raw input's hash: read from there (crawler.store.schema.unflatten_posting)
                values[_INPUT_SHA] = None
            as_of = values[_POSTING_AS_OF]
            values[_CONTENT_HASH] = hash_bytes(p.content_hash)
            values[_POSTING_AS_OF] = time_stored(as_of)
            values[_TZ] = coded(values[_TZ], TZ_CODES)
            if old is None:
                pid = next_id
                next_id += 1
                values[_FIRST_SEEN], values[_LAST_SEEN] = _seen(p.first_seen, as_of), _seen(p.last_seen, as_of)
                inserts.append((pid, *values, raw_input_id, 1, p.raw_hash, batch_run_id, *listing_score(p.evaluation)))
                counts["new"] += 1
            else:
                pid, _, last_seen, version, closed_at, old_extra = old
                self._snapshot(pid, version, p.last_seen)
                if old_extra != values[_EXTRA]:
                    replaced.extend(extra.ids_in(old_extra))
                values[_LAST_SEEN] = _seen(max(last_seen or "", p.last_seen), as_of)
                values[_CLOSED_AT] = still_closed(closed_at, p.last_seen)
                values += [raw_input_id, version + 1, p.raw_hash]
                updates.append((*(values[i] for i in _UPDATE_INDEXES), p.first_seen, as_of, pid))
                updated_ids.append((pid,))
                counts["updated"] += 1
            children.append((pid, 1 if old is None else version + 1, p))
            search.append((pid, *p.search))
            self.changed_ids.append(pid)

        c = self.conn
        if touches:
            c.executemany(_TOUCH, touches)
        if inserts:
            c.executemany(_INSERT_POSTING, inserts)
        if updates:
            fts.delete_rows(c, updated_ids)  # first: the index reads the values it holds from the rows
            c.executemany(_UPDATE_POSTING, updates)
            c.executemany("DELETE FROM app_market WHERE posting_id = ?", updated_ids)
            c.executemany("DELETE FROM sections WHERE posting_id = ?", updated_ids)
            c.executemany("DELETE FROM posting_skills WHERE posting_id = ?", updated_ids)
            c.executemany(f"DELETE FROM evaluations WHERE posting_id = ? AND scorer_stored = {scorer_stored('source')}",
                          updated_ids)
            extra.prune(c, set(replaced).difference(*map(extra.ids_in, stored_extra.values())))
        self._write_children(children)
        fts.insert_prepared(c, search)

    def _stored(self, keys: list[str], columns: str) -> dict[str, tuple]:
        """``key → (columns…)`` of the stored postings among ``keys``."""
        existing: dict[str, tuple] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            for row in self.conn.execute(
                    f"SELECT key, {columns} FROM postings WHERE key IN ({','.join('?' * len(part))})", part):
                existing[row[0]] = row[1:]
        return existing

    def _write_seen(self, seen: list[tuple], input_ids: dict[tuple[str, str], int], counts: Counter) -> None:
        """Postings read again exactly as stored (:data:`~crawler.store.rows.SEEN_COLS`): seen at their time in the
        input they were read from, as an unchanged posting is (a posting no longer stored is left out)."""
        latest = {row[_SEEN_KEY]: row for row in seen}
        existing = self._stored(list(latest), "id, last_seen, closed_at")
        touches = [_touch(*existing[key], row[_SEEN_AT], input_ids.get((row[_SEEN_LOC], row[_SEEN_SHA])),
                          row[_SEEN_COMPLETE], row[_SEEN_HASH], counts)
                   for key, row in latest.items() if key in existing]
        if touches:
            self.conn.executemany(_TOUCH, touches)

    def _write_children(self, children: Iterable[tuple[int, int, PostingRow]]) -> None:
        """The child rows of postings stored new or changed: (id, version, row) each."""
        apps, sections, skills, evals, keys = [], [], [], [], []
        for pid, version, p in children:
            if p.app is not None:
                apps.append((pid, *p.app))
            if p.dedupe is not None:
                keys.append((pid, version, *p.dedupe))
            sections.extend((pid, seq, coded(key, SECTION_CODES), coded(heading, HEADING_CODES), text, spans)
                            for seq, key, heading, text, spans in p.sections)
            skills.extend((pid, *s) for s in p.skills)
            if p.evaluation is not None:
                evals.append((pid, *p.evaluation))
        c = self.conn
        if apps:
            c.executemany(_INSERT_APP, apps)
        insert_skill_rows(c, skills)
        if sections:
            c.executemany(_INSERT_SECTION, sections)
        if evals:
            c.executemany(_INSERT_EVAL, evidence.intern_rows(c, evals, _EVIDENCE_AT))
        if keys:
            dedupe.store_keys(c, keys)

    def _snapshot(self, pid: int, version: int, superseded_at: str) -> None:
        """Keep the stored version's exported record before it is replaced."""
        from crawler.store.read import export_record

        record = export_record(self.db, pid)
        self.conn.execute(
            "INSERT OR IGNORE INTO posting_versions (posting_id, version, content_hash, superseded_at, snapshot)"
            " VALUES (?, ?, ?, ?, ?)",
            (pid, version, record.get("content_hash"), superseded_at, json.dumps(record, ensure_ascii=False)))

    def _write_quarantine(self, batch: Batch, input_ids: dict[tuple[str, str], int], counts: Counter) -> None:
        """The quarantine rows, none with a copy of its input's stored text (:func:`copies_input`)."""
        now = now_iso()
        inputs: dict[int, list] = {}
        for q in batch.quarantine:
            raw_id, text = input_ids.get((q[1], q[3])), q[_Q_TEXT]
            in_input = (text is not None and raw_id is not None
                        and copies_input(text, self._input_text(raw_id, len(text), inputs)))
            if in_input:
                q = (*q[:_Q_TEXT], None, *q[_Q_TEXT + 1:])
            cur = self.conn.execute(_INSERT_QUARANTINE, (*q, raw_id, now, batch.run_id, int(in_input)))
            counts["quarantined"] += 1
            if cur.rowcount:
                counts["quarantined_new"] += 1


_UPDATE_INDEXES = tuple(_ALL_COLS.index(c) for c in _UPDATE_COLS)


def _touch(pid: int, last_seen: str | None, closed_at: str | None, seen: str, raw_input_id: int | None,
           complete_listing: bool, raw_hash: str | None, counts: Counter) -> tuple:
    """The :data:`_TOUCH` values of an unchanged posting seen again at ``seen``, counted unchanged (and reopened)."""
    closed = still_closed(closed_at, seen)
    counts["unchanged"] += 1
    if closed_at is not None and closed is None and complete_listing:
        counts["reopened"] += 1
    return max(last_seen or "", seen), raw_input_id, pid, closed, raw_hash


def _seen(at: str | None, as_of: str | None) -> str | None:
    """``first_seen`` or ``last_seen`` as stored: None where it is the posting's ``as_of`` (schema.sql)."""
    return None if at == as_of else at


def still_closed(closed_at: str | None, seen: str) -> str | None:
    """A stored posting's ``closed_at`` once it is seen again at ``seen``: a sighting from before its closing (an
    older input parsed again, an earlier snapshot) leaves it closed; a later one reopens it (None)."""
    return closed_at if closed_at is not None and seen < closed_at else None


def refused_row(row: PostingRow, err: BaseException) -> tuple:
    """The quarantine row (:data:`QUARANTINE_COLS`) of a posting the database refused, its values as JSON."""
    values = row_values(row)
    return (values["source"], row.locator, values["position"], row.input_sha256, "store_error",
            f"not stored: {type(err).__name__}: {err}", json.dumps(values, ensure_ascii=False, default=str))


class BackgroundWriter(Writer):
    """A :class:`Writer` of its own connection whose batches are written by a thread of its own.

    SQLite releases the GIL while it works, so the producer (the engine, or the loop reading worker
    pipes) prepares the next batch while this thread writes the previous one. Batches keep their
    order and their one-transaction-each guarantee; at most ``depth`` wait in the queue
    (back-pressure: the writer is the slower side, a longer queue only holds more rows in memory).
    """

    def __init__(self, db_path: str, *, depth: int = 1):
        self.db_path = db_path
        self.counts, self.changed_ids, self._pending = {}, [], {}
        self._queue: queue.Queue[Batch | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="jobcrawl-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from crawler.store import connect

        db = connect(self.db_path)
        self.db, self.conn = db, db.conn
        try:
            while (batch := self._queue.get()) is not None:
                if self._error is None:
                    try:
                        Writer.write(self, batch)
                    except BaseException as err:  # re-raised by the next write() or close()
                        self._error = err
        finally:
            db.close()

    @property
    def error(self) -> BaseException | None:
        return self._error

    def write(self, batch: Batch) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(batch)

    def close(self) -> None:
        """Wait for every queued batch; raise the first error a batch met."""
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()
        if self._error is not None:
            raise self._error
