"""Stage pipelines for tests/test_offload.py, importable by the stage worker (tests/ is on its path)."""

from __future__ import annotations

import os


class DyingStage:
    """A stage whose worker process dies (no traceback, no reply) at the first item: a kill or a crash."""

    @classmethod
    def from_crawler(cls, crawler):
        return cls()

    def process_item(self, item, spider=None):
        os._exit(3)
