"""Item pipelines, one concern each, in this order:

1. ``validate.ValidatePipeline``: a RawPosting without company or title, or with absurd values,
   becomes a ``Quarantined`` record; missing optional fields are counted in stats
   (``jobcrawl/field/<name>/missing``); lone UTF-16 surrogates are replaced by U+FFFD.
2. ``normalize.NormalizePipeline``: RawPosting → Posting (pure code in ``normalize/``).
3. ``skills.SkillsPipeline``: skills from the tags and JD sections, with evidence.
4. ``store.StorePipeline``: batched writes of raw inputs, postings, quarantine.

``ITEM_PIPELINES`` (crawler/settings.py) lists validate and ``offload.OffloadPipeline``, which runs
2–4 (``JOBCRAWL_STAGE_PIPELINES``) in a worker process so that they use the second core.

Pipelines pass items they do not handle through unchanged, and read fields through ItemAdapter.
"""

from crawler.inputs import quote_name


def item_where(adapter) -> str:
    """Where an item came from, for a one-line message: ``locator#position``, or the locator alone
    (quoted when it holds a newline or another character that is not printable)."""
    position = adapter.get("position")
    return quote_name(f"{adapter.get('locator')}") + ("" if position is None else f"#{position}")
