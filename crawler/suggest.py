"""``(did you mean X?)`` for a name that is not one of the names a user could have meant."""

from __future__ import annotations

import difflib
import unicodedata


def did_you_mean(word: str, choices: list[str]) -> str:
    """`` (did you mean X?)`` for the closest of ``choices`` to ``word`` (compared case-insensitively), else ``""``."""
    # One CJK character says more than one Latin letter: 岗X is close to 岗位, area is not close to team.
    cjk = any(unicodedata.east_asian_width(ch) == "W" for ch in word)
    folded = {c.casefold(): c for c in choices}
    close = difflib.get_close_matches(word.casefold(), list(folded), n=1, cutoff=0.5 if cjk else 0.6)
    return f" (did you mean {folded[close[0]]}?)" if close else ""
