"""Corpus steps, run after every ingest and crawl (and by their own commands): dedupe, then scoring."""
