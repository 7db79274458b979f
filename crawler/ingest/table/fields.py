"""The fields a table column may fill, and the text of a cell: what ``--map`` and ``--value`` name, how a list cell
splits, how a JSON value becomes text."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

FIELDS = (
    "title", "company", "url", "location", "salary", "posted", "published", "valid_through", "description",
    "tags", "seniority", "employment_type", "work_mode", "category", "experience", "education", "benefits",
    "company_info", "source_id",
)
"""Raw fields a column may fill (``RawPosting`` fields, plus ``benefits`` → a section and ``company_info``)."""

FIELD_ALIASES = {"city": "location", "id": "source_id", "link": "url", "jd": "description", "welfare": "benefits"}
LIST_FIELDS = frozenset({"tags", "benefits"})
JOINERS = {"description": "\n", "location": "·"}
"""How the values of a field mapped to several columns are joined (default: a space)."""
REQUIRED = ("title", "company")
BENEFITS_HEADING = "福利待遇"

_LIST_SEP = re.compile(r"\s*(?:[,，、;；|｜\n\r]\s*)+")


def flatten(value: Any) -> list[str]:
    """The non-blank items of a value, nested lists and tuples flattened, each as stripped text."""
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in flatten(v)]
    if value is None:
        return []
    text = str(value).strip()
    return [text] if text else []


def split_list(text: str | None) -> list[str]:
    """Items of a tags/benefits cell: a JSON or Python list literal (nested lists flattened), else the
    text split on ``, ， 、 ; ； | ｜`` and line breaks. Empty items are dropped."""
    text = (text or "").strip()
    if not text:
        return []
    if text[0] == "[" and text[-1] == "]" and len(text) < 200_000:
        for load in (json.loads, ast.literal_eval):
            try:
                return flatten(load(text))
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return [item for item in _LIST_SEP.split(text) if item]


def canonical_field(name: str) -> str:
    """Our field name for ``name`` (``city`` → ``location``); ValueError naming the choices otherwise."""
    key = name.strip().lower().replace("-", "_")
    key = FIELD_ALIASES.get(key, key)
    if key not in FIELDS:
        raise ValueError(f"unknown field {name!r}; fields: {', '.join(FIELDS)} (aliases: {', '.join(FIELD_ALIASES)})")
    return key


def parse_assignments(pairs: list[str] | tuple[str, ...], what: str) -> dict[str, str]:
    """``["title=职位", "city=城市"]`` → ``{"title": "职位", "location": "城市"}``; ValueError for a pair
    without ``=`` or an unknown field. ``what`` names the option in the message."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"{what} {pair!r}: expected FIELD=VALUE")
        out[canonical_field(name)] = value.strip()
    return out


_MARKDOWN_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def unescape_markdown(text: str) -> str:
    """Markdown text with its backslash escapes undone (``next\\-generation`` → ``next-generation``): a backslash
    before ASCII punctuation is that character (CommonMark)."""
    return _MARKDOWN_ESCAPE.sub(r"\1", text)


def cell(value: Any) -> str:
    """A cell or JSON value as text: stripped (without a spreadsheet's formula guard ``'``), lists and objects as
    JSON, booleans as ``true``/``false``."""
    if value is None:
        return ""
    if isinstance(value, str):
        value = value.strip()
        # A spreadsheet's mark for text that would start a formula (`jobcrawl export` writes it): not part of it.
        return value[1:] if value[:1] == "'" and value[1:2] in ("=", "+", "-", "@") and len(value) > 1 else value
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value) if isinstance(value, bool) else str(value)


_JSON_KINDS = ((bool, "boolean"), (int, "number"), (float, "number"), (list, "list"), (dict, "object"))


def as_text(name: str, value: Any) -> tuple[str, str | None]:
    """The value of a JSON key mapped to field ``name`` as text, and a repair note when it was not
    text where text is expected: a number or boolean as written in JSON, a list of plain values
    joined (lines for the description, ``, `` otherwise), anything else as its JSON text. Lists
    are what list fields (tags, benefits) expect, and a number is a common id: neither is noted."""
    if value is None or isinstance(value, str):
        return cell(value), None
    if (name in LIST_FIELDS and isinstance(value, list)) or (name == "source_id" and type(value) in (int, float)):
        return cell(value), None
    kind = next((k for t, k in _JSON_KINDS if isinstance(value, t)), type(value).__name__)
    objects = value if isinstance(value, list) else [value]
    keys = [_name_of(v) for v in objects]
    if isinstance(value, list) and all(v is None or isinstance(v, (str, int, float)) for v in value):
        text = ("\n" if name == "description" else ", ").join(t for v in value if (t := cell(v)))
        how = f"its {len(value)} items joined"
    elif objects and all(keys):  # {"name": "Beijing", "id": 3}: an API's location, office, department
        text = ", ".join(cell(v[key]) for v, key in zip(objects, keys))
        shown_keys = "/".join(repr(key) for key in sorted(set(keys)))
        how = f"its {shown_keys} read" if isinstance(value, dict) else f"the {shown_keys} of its {len(value)} items joined"
    else:
        text = cell(value)
        how = "read as text"
    shown = text if len(text) <= 40 else text[:39] + "…"
    return text, f"{name} is a JSON {kind}, not text: {how} ({json.dumps(shown, ensure_ascii=False)})"


_NAME_KEYS = ("name", "label", "text", "title", "displayName", "value")


def _name_of(value: Any) -> str | None:
    """The key of the text that names a JSON object (``name`` of ``{"name": "Beijing", "id": 3}``), else None."""
    if not isinstance(value, dict):
        return None
    return next((key for key in _NAME_KEYS if isinstance(value.get(key), str) and value[key].strip()), None)
