"""What the server that a run's reading workers and scoring processes are forked from (crawler/procs.py ``context``)
loads once: the modules of the ingest path and of scoring, and the packaged skill taxonomy with its matcher, built."""

from importlib import import_module

from normalize.skills import load_taxonomy

for _name in ("crawler.run.runner", "crawler.pipelines", "crawler.ingest.textdump", "crawler.score.step"):
    import_module(_name)
load_taxonomy().prepare()
