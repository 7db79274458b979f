"""Signals step: the ghost signals of every canonical posting and the likely employer of every agency's or hidden
posting, recomputed as a whole after the dedupe and the scoring of each run (and by ``jobcrawl signals``).

The rules and thresholds are :mod:`normalize.ghost`'s; the SQL is :mod:`crawler.signals.store`'s. "Now" for
``open_long`` is the newest ``last_seen`` of the database: the time of the latest run that saw a posting, so a
history replayed with ``--as-of`` reads as it did then. A direct posting of a city is compared with an
agency's or hidden posting by its JD's MinHash signature first (stored by the dedupe), and by the exact 5-shingle
Jaccard only for the :data:`CITY_CANDIDATES` best estimates near the threshold.

The user's agency words: the file ``$JOBCRAWL_AGENCIES``, else ``agencies.txt`` in ``$XDG_CONFIG_HOME/jobcrawl``
(``~/.config/jobcrawl``); one word a line, ``#`` comments (:func:`normalize.ghost.parse_agency_words`). No file:
the built-in words alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import sqlite_utils

from crawler.signals import store
from normalize.dedupe import jd_text, low_bits, names_agree, record_from_posting, signature, signatures_from_bytes
from normalize.ghost import (
    CODES, RULES, Employer, Rules, Signal, is_agency, is_hidden, jd_shingles, likely_employer, mass_agency,
    open_long, parse_agency_words, reopened, reposted,
)
from normalize.text import fold

AGENCIES_ENV = "JOBCRAWL_AGENCIES"
CITY_CANDIDATES = 16
"""Direct postings of its city, the most similar by MinHash estimate, whose exact Jaccard with an agency's or hidden
posting is computed (a city's copies of one template would otherwise all be compared)."""
ESTIMATE_MARGIN = 0.2
"""How far below ``employer_jaccard`` a MinHash estimate may be for the exact Jaccard to be computed (the
estimate's standard error is under 0.045)."""


def agencies_path() -> Path:
    """``$JOBCRAWL_AGENCIES``, else ``agencies.txt`` in ``$XDG_CONFIG_HOME/jobcrawl`` (``~/.config``)."""
    if os.environ.get(AGENCIES_ENV):
        return Path(os.environ[AGENCIES_ENV]).expanduser()
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "jobcrawl" / "agencies.txt"


def agency_words(path: Path | None = None) -> tuple[str, ...]:
    """The user's agency words (:func:`agencies_path` unless ``path``); none when the default file does not exist.
    Raises crawler.files.ConfigFileError (naming the file) for one that cannot be read."""
    from crawler.files import ConfigFileError, read_config_text

    path = path or agencies_path()
    if not path.exists() and path != Path(os.environ.get(AGENCIES_ENV) or "\0"):
        return ()
    try:
        return parse_agency_words(read_config_text(path))
    except (ConfigFileError, UnicodeDecodeError) as err:
        raise ConfigFileError(f"{path}: {err}") from None


def refresh_signals(db: sqlite_utils.Database, *, words: tuple[str, ...] | None = None, employers: bool = True,
                    rules: Rules = RULES) -> dict[str, int]:
    """Replace the ghost signals and (unless not ``employers``: no posting changed) the likely employers of ``db``
    in one transaction (``words``: the user's agency words, default :func:`agency_words`). Returns the signals by
    code (``ghost_<code>``) and ``likely_employers``."""
    words = agency_words() if words is None else words
    conn = db.conn
    with conn:
        store.write_signals(conn, ghost_signals(conn, words, rules))
        if employers:
            store.write_employers(conn, likely_employers(conn, words, rules))
    return {**{f"ghost_{code}": 0 for code in CODES}, **store.totals(conn)}


def ghost_signals(conn, words: tuple[str, ...], rules: Rules = RULES) -> list[tuple[int, Signal]]:
    """``(canonical posting id, signal)`` of every signal, by posting and code."""
    now = store.corpus_now(conn)
    if now is None:
        return []
    found: list[tuple[int, Signal]] = []
    events = store.closing_events(conn)
    for pid, first_seen, closed_at, changed_at in store.canonical_postings(conn):
        for signal in (open_long(first_seen, changed_at, closed_at, now, rules),
                       reopened(events[pid]) if pid in events else None):
            if signal:
                found.append((pid, signal))
    for canonical, members in store.jobs(conn, min(rules.repost_postings, rules.mass_agencies)):
        head = next((m for m in members if m[0] == canonical), None)
        if head is None:
            continue
        _, _, company, employer, city, _, _ = head
        same = [(m[0], m[5]) for m in members
                if m[1] != "same_url" and employer and m[3] and names_agree(m[3], employer) and m[4] == city]
        direct = next((m[3] for m in (head, *members) if m[3] and not is_agency(m[2], words, rules)), "")
        for signal in (reposted(same, rules), mass_agency(direct, [(m[0], m[2], m[5:7]) for m in members], rules)):
            if signal:
                found.append((canonical, signal))
    return sorted(found, key=lambda f: (f[0], CODES.index(f[1].code)))


def likely_employers(conn, words: tuple[str, ...], rules: Rules = RULES) -> list[tuple[int, Employer]]:
    """``(posting id, employer)`` of every agency's or hidden posting with JD text whose employer is found."""
    every = (*rules.agency_words, *words)
    is_direct = lambda company: not is_hidden(company) and not is_agency(company, words, rules)  # noqa: E731
    targets = [row for row in store.employer_candidates(conn, [fold(w) for w in (*every, "企业未公开")])
               if not is_direct(row[1])]
    if not targets:
        return []
    texts = _Texts(conn)
    by_cluster: dict[int, list[tuple]] = {}
    for row in store.in_clusters(conn, sorted({t[3] for t in targets if t[3] is not None})):
        if is_direct(row[1]):
            by_cluster.setdefault(row[3], []).append(row)
    found = []
    for city, group in _by_city(targets):
        directs = [row for row in store.in_city(conn, city) if is_direct(row[1]) and row[4]] if city else []
        sigs = signatures_from_bytes([row[4] for row in directs]) if directs else None
        texts.load([t[0] for t in group])
        for pid, _company, _city, cluster, stored in group:
            own = texts.shingles(pid)
            near = []
            if sigs is not None:
                own_sig = signatures_from_bytes([stored])[0] if stored else low_bits(signature(texts.jd(pid)))
                estimates = (sigs == own_sig).mean(axis=1)
                close = np.flatnonzero(estimates >= rules.employer_jaccard - ESTIMATE_MARGIN)
                close = close[np.argsort(-estimates[close], kind="stable")[:CITY_CANDIDATES]]
                near = [directs[i] for i in sorted(close.tolist())]
            members = by_cluster.get(cluster, []) if cluster is not None else []
            texts.load([row[0] for row in (*near, *members)])
            employer = likely_employer(own, [(r[0], r[1], texts.shingles(r[0])) for r in members],
                                       [(r[0], r[1], texts.shingles(r[0])) for r in near], rules)
            if employer:
                found.append((pid, employer))
    return sorted(found, key=lambda f: f[0])


def _by_city(rows: list[tuple]) -> list[tuple[str, list[tuple]]]:
    groups: dict[str, list[tuple]] = {}
    for row in rows:
        groups.setdefault(row[2], []).append(row)
    return sorted(groups.items())


class _Texts:
    """The JD texts and shingles of postings, read once each."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self._jd: dict[int, str] = {}
        self._shingles: dict[int, np.ndarray] = {}

    def load(self, ids: list[int]) -> None:
        missing = [i for i in dict.fromkeys(ids) if i not in self._jd]
        for pid, posting in store.jd_records(self.conn, missing) if missing else ():
            self._jd[pid] = jd_text(record_from_posting(posting))

    def jd(self, pid: int) -> str:
        return self._jd.get(pid, "")

    def shingles(self, pid: int) -> np.ndarray:
        if pid not in self._shingles:
            self._shingles[pid] = jd_shingles(self.jd(pid))
        return self._shingles[pid]
