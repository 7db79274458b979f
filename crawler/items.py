"""Items spiders emit. They are the pydantic models of :mod:`normalize.models` (ItemAdapter
handles pydantic models), so one schema documents spiders, pipelines, storage and Datasette.

- :class:`RawInput`: an input verbatim, yielded before anything parsed from it.
- :class:`RawPosting`: one posting, strings as written.
- :class:`Quarantined`: an input or a part of one that could not become a posting, with its reason.
- :class:`Posting`: what the normalize pipeline turns a RawPosting into.
- :class:`SeenPostings`: postings a file reader read again exactly as stored: seen, not parsed again.
"""

from normalize.models import Posting, Quarantined, RawInput, RawPosting, SeenPostings

__all__ = ["RawInput", "RawPosting", "Quarantined", "Posting", "SeenPostings"]
