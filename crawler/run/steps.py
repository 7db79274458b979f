"""The corpus steps after a run's postings are stored, in order: dedupe and scoring (:func:`after_run`, side by side
on two cores when the dedupe can be planned from reads), the signals and the weekly hiring velocity
(:func:`corpus_steps`), then the watches' alerts (:func:`alerts_step`). ``jobcrawl refresh`` runs the same list
(crawler/api.py: ``refresh``)."""

from __future__ import annotations

import traceback
from typing import Any

from crawler import procs as rule
from crawler.run.progress import NullProgress, Progress

SKIPPED = {"skipped": 1}
"""A corpus step's counts when a run changed no posting (see crawler/run/runner.py: ``finish_jobs``)."""


class StepFailed(RuntimeError):
    """A corpus step failed after the crawl had stored its postings.

    ``step`` names it, ``steps`` holds the results of the steps that finished before it and
    ``detail`` the error with its traceback (the child's, when the step ran in a process of its own).
    """

    def __init__(self, step: str, error: BaseException, steps: dict[str, dict[str, int]], detail: str) -> None:
        from crawler.procs import ChildFailed

        # The error's last line, as a traceback ends: "sqlite3.OperationalError: database or disk is full".
        text = str(error) if isinstance(error, ChildFailed) else traceback.format_exception_only(error)[-1]
        super().__init__(f"the {step} step failed: {text.strip().splitlines()[-1]}")
        self.step, self.steps, self.detail = step, steps, detail


def alerts_step(db: str, run_id: int | None, alerts_config: str | None) -> tuple[Any, str | None]:
    """The alerts step (crawler/alerts/delivery.py): the watches' new matches, delivered. Returns its report, or
    None and the line that says it failed (the postings are stored; the deliveries stay pending)."""
    from crawler.alerts.delivery import deliver_new_matches

    try:
        return deliver_new_matches(db, run_id, config_path=alerts_config), None
    except Exception as err:
        return None, f"the alerts step failed: {err!r}; run `jobcrawl watch deliver --db {db}` to retry"


def corpus_steps(database, *, skip: bool = False, workers: int | None = None,
                 progress: Progress | None = None) -> dict[str, dict[str, int]]:
    """The corpus steps of :func:`after_run` (their counts :data:`SKIPPED` with ``skip``), then the signals step
    (crawler/signals/step.py; its ghost signals with ``skip`` too: the corpus's "now" moves with every run, the
    likely employers only when postings changed) and the weekly hiring velocity (crawler/market/velocity.py, stored
    again when what it reads changed); once they succeeded, they are no longer pending
    (crawler.store.runs.steps_pending)."""
    from crawler.market.velocity import refresh
    from crawler.signals.step import refresh_signals
    from crawler.store.runs import set_steps_pending

    steps = {"dedupe": SKIPPED, "score": SKIPPED} if skip else after_run(database, workers=workers, progress=progress)
    for name, step in (("signals", lambda: refresh_signals(database, employers=not skip)),
                       ("velocity", lambda: _velocity(refresh(database.conn)))):
        try:
            steps[name] = step()
        except Exception as err:
            raise StepFailed(name, err, steps, traceback.format_exc()) from err
    set_steps_pending(database, False)
    return steps


def _velocity(stored: int | None) -> dict[str, int]:
    """The velocity step's counts: the rows stored, or ``unchanged`` when nothing it reads changed."""
    return {"unchanged": 1} if stored is None else {"rows": stored}


def after_run(database, *, workers: int | None = None, processes: rule.Corpus | None = None,
              progress: Progress | None = None) -> dict[str, dict[str, int]]:
    """Corpus steps run at the end of every ingest and crawl: dedupe (incremental), then market
    statistics and our evaluation of every active posting (``jobcrawl-v1``).

    ``processes`` (default: crawler/procs.py's rule for ``workers`` and this database): with
    ``dedupe_apart``, when the dedupe's work can be planned from reads (the item pipeline made every key: the
    usual case after a run), it is planned in a process of its own while this one scores, and written in the
    scoring's transaction: both steps commit together, on both cores. A step that raises ends the steps with
    :class:`StepFailed`: a failed dedupe stores no score, a failed scoring keeps the dedupe (each commits as a
    whole, so re-running it is safe). ``progress`` hears when each step starts and ends (phases dedupe, scoring).
    """
    from crawler.store import file_of
    from crawler.procs import call_in_fresh_process
    from crawler.dedupe.step import dedupe, dedupe_at, plannable
    from crawler.score.step import score_corpus
    from crawler.score.store import active_count

    if processes is None:
        processes = rule.corpus(workers, database["postings"].count, active_count(database.conn))
    progress = progress or NullProgress()
    apart = processes.dedupe_apart and bool(file_of(database))
    if apart and plannable(database.conn):
        return _steps_side_by_side(database, processes, progress)
    steps: dict[str, dict[str, int]] = {}
    step = "dedupe"
    try:
        progress.start("dedupe", processes=int(apart))
        if apart:
            steps["dedupe"] = call_in_fresh_process(dedupe_at, file_of(database), name="jobcrawl-dedupe")
        else:
            steps["dedupe"] = dedupe(database)
        progress.finish("dedupe", steps["dedupe"])
        step = "score"
        scoring = rule.scoring(workers, active_count(database.conn)) if apart else processes.scoring
        progress.start("scoring", processes=scoring if scoring > 1 else 0)
        scored = score_corpus(database, workers=scoring)
    except Exception as err:
        raise StepFailed(step, err, steps, traceback.format_exc()) from err
    steps["score"] = {k: v for k, v in scored.items() if isinstance(v, int)}
    progress.finish("scoring", steps["score"])
    return steps


def _steps_side_by_side(database, processes: rule.Corpus, progress: Progress) -> dict[str, dict[str, int]]:
    """:func:`after_run` with the dedupe planned in a fresh process while this one scores (see there)."""
    from crawler.store import file_of
    from crawler.procs import start_in_fresh_process
    from crawler.dedupe.step import apply, dedupe, plan_at
    from crawler.score.step import score_corpus

    steps: dict[str, dict[str, int]] = {}
    planned: dict[str, Any] = {}

    def dedupe_in_transaction() -> None:
        planned["step"] = "dedupe"
        plan = child.result()
        planned["counts"] = apply(database.conn, plan) if plan is not None else None

    progress.start("dedupe", processes=1)
    child = start_in_fresh_process(plan_at, file_of(database), name="jobcrawl-dedupe")
    try:
        progress.start("scoring", processes=processes.scoring if processes.scoring > 1 else 0)
        try:
            scored = score_corpus(database, before_commit=dedupe_in_transaction, workers=processes.scoring,
                                  niceness=processes.niceness)
        except Exception as err:
            if planned.get("step") == "dedupe":  # nothing stored: the scores went with it
                raise StepFailed("dedupe", err, steps, traceback.format_exc()) from err
            failed = StepFailed("score", err, steps, traceback.format_exc())
            try:  # the dedupe is stored all the same, as when it ran first
                with database.conn:
                    dedupe_in_transaction()
                steps["dedupe"] = planned["counts"] or dedupe(database)
            except Exception as dedupe_err:
                raise StepFailed("dedupe", dedupe_err, {}, traceback.format_exc()) from dedupe_err
            progress.finish("dedupe", steps["dedupe"])
            raise failed from err
        try:  # a plan made for other postings (None): the step runs again, on its own
            steps["dedupe"] = planned["counts"] or dedupe(database)
        except Exception as err:
            raise StepFailed("dedupe", err, {}, traceback.format_exc()) from err
    finally:
        child.close()
    progress.finish("dedupe", steps["dedupe"])
    steps["score"] = {k: v for k, v in scored.items() if isinstance(v, int)}
    progress.finish("scoring", steps["score"])
    return steps
