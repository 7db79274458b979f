"""The market over time: hiring velocity per week (the table ``velocity_weekly``, kept by :mod:`.velocity` after
every run's corpus steps) and monthly pay quartiles (:data:`.store.PAY_SQL`, read on demand) of jobs — duplicate
clusters counted once (the view ``job_timeline``). Rules (weeks in China time, medians, the smallest sample shown)
are :mod:`normalize.market`'s; ``jobcrawl stats`` prints both, the market dashboard charts them."""
