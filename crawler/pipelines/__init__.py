"""Item pipelines, one concern each, in this order:

1. ``validate.ValidatePipeline``: a RawPosting without company or title, or with absurd values,
   becomes a ``Quarantined`` record; missing optional fields are counted in stats
   (``jobcrawl/field/<name>/missing``); lone UTF-16 surrogates are replaced by U+FFFD.
2. ``normalize.NormalizePipeline``: RawPosting → Posting (pure code in ``normalize/``).
3. ``skills.SkillsPipeline``: skills from the tags and JD sections, with evidence.
4. ``store.StorePipeline``: items as plain rows (crawler/db/rows.py), handed in batches to the
   run's sink (crawler/sinks.py): the writer of this process, or the pipe to the process that owns it.

``ITEM_PIPELINES`` (crawler/settings.py) lists them in this order; a run uses both cores by running
the whole chain in worker processes over shards of its inputs (crawler/runner.py).

Pipelines pass items they do not handle through unchanged, and read fields through ItemAdapter.
"""

from crawler.inputs import quote_name


def item_where(adapter) -> str:
    """Where an item came from, for a one-line message: ``locator#position``, or the locator alone
    (quoted when it holds a newline or another character that is not printable)."""
    position = adapter.get("position")
    return quote_name(f"{adapter.get('locator')}") + ("" if position is None else f"#{position}")
