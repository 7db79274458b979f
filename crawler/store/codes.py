"""Texts stored as small codes: each table maps the texts most rows hold to an integer that a generated column of
schema.sql reads back as the text; any other text is stored as written (:func:`coded`). Codes are only ever added at
the end of a table: a stored code never changes its meaning."""

from __future__ import annotations

import re

from normalize.models import SECTION_KEYS
from normalize.score import SCORER
from normalize.skills import TAGS_SECTION

SCORER_CODES = {SCORER: 1, "source": 2}
"""The scorers (``evaluations.scorer_stored``, ``postings.score_by_stored``)."""
TZ_CODES = {"Asia/Shanghai": 1, "UTC": 2}
"""The zones (``postings.tz_stored``): the two the normalizer gives unless ``--tz`` names another."""
SECTION_CODES = {key: code for code, key in enumerate((*SECTION_KEYS, TAGS_SECTION), 1)}
"""The canonical section keys and ``tags`` (``sections.key_stored``, ``posting_skills.section_stored``); a heading
kept as its own key is stored as written."""
HEADING_CODES = {heading: code for code, heading in enumerate((
    "", "福利待遇", "关于这个职位", "最低要求", "工作职责", "优先资格", "岗位职责：", "任职要求：", "岗位要求：", "任职资格：",
    "职位要求：", "工作内容：", "岗位描述：", "职位描述：", "工作职责：", "岗位职责", "任职要求", "加分项"), 1)}
"""The most common section headings as written (``sections.heading_stored``): the app's, the tables' 福利待遇 and the
JD headings most frequent in ../shared/data/zh."""
_SQLITE_NUMBER = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t\n\v\f\r]*")
"""A text SQLite stores as a number in a column of integer affinity."""


def coded(value: str | None, codes: dict[str, int]) -> int | str | bytes | None:
    """A text as a coded column stores it: its code in ``codes``, any other as written; a text an integer affinity
    would make a number (``'1'``, ``' 2.0'``) as the blob of its UTF-8 bytes, so that it is never a code and reads
    back (``CAST(… AS TEXT)`` in schema.sql) as the same text."""
    code = codes.get(value, value)
    return code.encode() if isinstance(code, str) and _SQLITE_NUMBER.fullmatch(code) else code


def case_sql(column: str, codes: dict[str, int]) -> str:
    """The generated column ``column`` that reads ``{column}_stored`` back as its text (schema.sql writes the same)."""
    whens = " ".join(f"WHEN {code} THEN '{text}'" for text, code in codes.items())
    return (f"{column} TEXT GENERATED ALWAYS AS (CASE {column}_stored {whens} ELSE CAST({column}_stored AS TEXT) END)"
            " VIRTUAL")
