"""Failing stages and scorers for tests/test_runner.py and tests/test_score.py, importable by worker processes
(tests/ is on their path)."""

from __future__ import annotations

import os


class DyingStage:
    """A pipeline whose worker process dies (no traceback, no reply) at the first posting: a kill or a crash."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def process_item(self, item, spider=None):
        if type(item).__name__ == "RawPosting":
            os._exit(3)
        return item


def dying_score(facts):
    """A scorer whose worker process dies at its first posting, as a killed one would."""
    os._exit(3)


class ScorerDyingAtStart:
    """A scorer whose worker process dies as it starts, unpickling it, before it reads any batch."""

    def __call__(self, facts):
        raise AssertionError("never called")

    def __reduce__(self):
        return (os._exit, (3,))


class RaisingOnSeed000:
    """An engine pipeline that raises on the posting of seed 000 (raw or normalized, whichever stage it stands
    after), as an unforeseen bug would."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def process_item(self, item, spider=None):
        if type(item).__name__ in ("RawPosting", "Posting") and item.locator.startswith("000_"):
            raise ValueError("an unforeseen bug")
        return item
