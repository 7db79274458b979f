"""Item pipelines, one concern each, in this order (``ITEM_PIPELINES`` in crawler/settings.py):

1. ``validate.ValidatePipeline`` (100): a RawPosting without company or title, or with absurd
   values, becomes a ``Quarantined`` record; missing optional fields are counted in stats
   (``jobcrawl/field/<name>/missing``).
2. ``normalize.NormalizePipeline`` (200): RawPosting → Posting (pure code in ``normalize/``).
3. ``skills.SkillsPipeline`` (300): skills from the tags and JD sections, with evidence.
4. ``store.StorePipeline`` (900): batched writes of raw inputs, postings, quarantine.

Pipelines pass items they do not handle through unchanged, and read fields through ItemAdapter.
"""
