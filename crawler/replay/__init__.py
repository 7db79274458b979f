"""``jobcrawl replay``: the history of a file in a git repository, ingested version by version (crawler/replay/run.py)."""
