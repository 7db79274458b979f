"""``python -m crawler.cli``: the ``jobcrawl`` command."""

from crawler.cli import main

main()
