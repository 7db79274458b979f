"""A crawl over many machines: scrapy-redis workers, one SQLite writer, Redis in between.

::

    jobcrawl crawl --all --redis URL      coordinator: plans the run (one ``runs`` row per source),
                                          seeds each source's start requests, stores (unless
                                          --no-store), then closes, dedupes, scores and ends the runs
    jobcrawl worker --redis URL           any machine, any number: takes requests from the shared
                                          queue, runs the whole pipeline chain, pushes rows to the spool
    jobcrawl store --redis URL            the one writer: drains the spool into SQLite

Modules: :mod:`.cluster` (keys, connection, heartbeats, the run's plan), :mod:`.scheduler` (the
scrapy-redis scheduler with a reliable, leased queue), :mod:`.politeness` (per-host rate and
concurrency and the request cap, shared by the cluster), :mod:`.worker` (the worker's crawlers and
what they push), :mod:`.spool` (the item spool: push with acknowledgements, drain into the writer),
:mod:`.coordinator` (plan, seed, wait, finish).
"""
