"""Corpus steps, run after every ingest and crawl (and by their own commands): dedupe, then scoring."""

from __future__ import annotations


def corpus_steps(database) -> dict[str, dict[str, int]]:
    """Dedupe, then score: the counts of each."""
    from crawler.steps.dedupe import dedupe
    from crawler.steps.score import score_corpus

    steps = {"dedupe": dedupe(database)}
    scored = score_corpus(database)
    steps["score"] = {k: v for k, v in scored.items() if isinstance(v, int)}
    return steps


def corpus_steps_at(path: str) -> dict[str, dict[str, int]]:
    """:func:`corpus_steps` on the database file at ``path``."""
    from crawler.db.schema import open_db

    database = open_db(path)
    try:
        return corpus_steps(database)
    finally:
        database.close()
