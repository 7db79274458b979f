"""What the server that every run's process is forked from (crawler/procs.py ``context``) loads once: the modules of
the ingest path, of the dedupe planner and of scoring, and the packaged skill taxonomy, built."""

from importlib import import_module

from normalize.skills import load_taxonomy

for _name in ("crawler.run.runner", "crawler.pipelines", "crawler.ingest.textdump", "crawler.dedupe.step",
              "crawler.score.step"):
    import_module(_name)
load_taxonomy()
