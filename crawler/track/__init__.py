"""Applications: the status of each job the user applies to (``jobcrawl track``).

A status belongs to the job, not to one copy of it: the view ``applications`` (crawler/store/schema.sql) reads
the events of every member of a posting's duplicate cluster at query time, so a status set on any member shows on
all of them and survives re-ingest, re-crawl, ``reparse``, ``dedupe --rebuild``, closing and reopening. Every
change is one row of ``application_events``, never updated or deleted (:mod:`crawler.track.store`)."""
