"""The jobcrawl database: :func:`open_db`, the postings row of a model, the columns' descriptions.

The schema is ``schema.sql`` (a new database is made from it; :mod:`crawler.store.migrations` brings an old one
to it). The ``postings`` columns are the flattening of :class:`normalize.models.Posting` (nested models
become prefixed columns: ``salary.min`` → ``salary_min``), so the pydantic field descriptions document
them; ``columns.yaml`` describes every other column (:func:`column_descriptions`, used by Datasette's
metadata). Sections and evaluations live in child tables; the fields only the app's dumps fill (:data:`APP_FIELDS`)
are the columns of ``app_market``, one row a posting that has any.

The schema is never derived from the models: a model field that needs a column gets it in ``schema.sql``
and a new migration (``ALTER TABLE … ADD COLUMN``); tests/test_migrations.py fails while a model column
has none.
"""

from __future__ import annotations

import json
import types
import typing
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping

import sqlite_utils
from pydantic import BaseModel

from normalize.models import Posting

from crawler.store import ReadOnlyDatabase, connect, connect_readonly, require_writable, unwritable
from crawler.store.migrations import migrations, upgrade  # noqa: F401  (migrations: for tests and tools)

COLUMNS_YAML = Path(__file__).with_name("columns.yaml")

# Posting fields that live in child tables, not in postings columns.
CHILD_FIELDS = {"sections", "section_headings", "source_evaluation", "skill_evidence"}


# --------------------------------------------------------------------------- model ↔ columns


def _unwrap(annotation: Any) -> Any:
    """``X | None`` → X."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _sql_type(annotation: Any) -> type:
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if annotation is bool or annotation is int:
        return int
    if annotation is float:
        return float
    if origin in (list, dict) or annotation in (list, dict):
        return str  # JSON text
    return str


def model_columns(model: type[BaseModel], prefix: str = "", skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, tuple[str, ...], type, str]]:
    """Yield ``(column, path, python_type, description)`` for every flattened field of ``model``."""
    for name, info in model.model_fields.items():
        if name in skip or info.exclude:
            continue
        annotation = _unwrap(info.annotation)
        path = (name,)
        if _is_model(annotation):
            for column, sub, typ, desc in model_columns(annotation, prefix + name + "_"):
                yield column, path + sub, typ, desc
        else:
            yield prefix + name, path, _sql_type(info.annotation), info.description or ""


MODEL_COLUMNS = list(model_columns(Posting, skip=frozenset(CHILD_FIELDS)))
APP_FIELDS = (("salary", "signal"), ("company_activity",), ("market",), ("insights",))
"""Posting fields only the app's dumps fill (its salary signal, the company's and the market's open postings, its
AI-insight lists as JSON): their columns live in ``app_market``."""
APP_COLUMNS = [c for c in MODEL_COLUMNS if any(c[1][:len(f)] == f for f in APP_FIELDS)]
POSTING_COLUMNS = [c for c in MODEL_COLUMNS if c not in APP_COLUMNS]
"""The model's columns in ``postings``."""


def _leaf(path: tuple[str, ...]) -> Any:
    """The annotation of the field a flattened column path ends at."""
    model: type[BaseModel] = Posting
    annotation: Any = None
    for part in path:
        annotation = _unwrap(model.model_fields[part].annotation)
        if _is_model(annotation):
            model = annotation
    return annotation


JSON_COLUMNS = {c for c, path, _, _ in MODEL_COLUMNS if typing.get_origin(_leaf(path)) in (list, dict)}
BOOL_COLUMNS = {c for c, path, _, _ in MODEL_COLUMNS if _leaf(path) is bool}


def _read_plan(columns: list) -> list[tuple[str, str, tuple[str, ...], bool]]:
    """(column, field, path below the field, stored as JSON) of each of ``columns``."""
    return [(column, path[0], tuple(path[1:]), column in JSON_COLUMNS) for column, path, _, _ in columns]


def _row(fields: Mapping[str, Any], plan: list) -> dict[str, Any]:
    """The columns of ``plan`` read from ``fields`` (a model's fields by name): nested models and dicts followed
    (None below a None), lists and dicts as JSON text, booleans as 0/1."""
    row: dict[str, Any] = {}
    for column, name, rest, as_json in plan:
        value = fields[name]
        for part in rest:
            value = value.get(part) if type(value) is dict else getattr(value, part, None)
        if as_json:
            value = _json_text(value)
        elif value is True or value is False:
            value = int(value)
        row[column] = value
    return row


_json_text = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(value, ensure_ascii=False), made once
_MODEL_PLAN = _read_plan(MODEL_COLUMNS)


def flatten_posting(posting: Posting) -> dict[str, Any]:
    """A :class:`Posting` as one row of every :data:`MODEL_COLUMNS` (JSON text for lists and dicts)."""
    return _row(posting.__dict__, _MODEL_PLAN)


APP_EMPTY = _row({f[0]: Posting.model_fields[f[0]].get_default(call_default_factory=True) for f in APP_FIELDS},
                 _read_plan(APP_COLUMNS))
"""The ``app_market`` values of a posting without any (salary signal none, counts not approximate): no row."""


def app_columns(app: str = "a") -> str:
    """The ``app_market`` columns of table alias ``app`` as a select list, a posting without a row reading
    :data:`APP_EMPTY` (joined by :func:`app_join`)."""
    return ", ".join(f"[{app}].[{c}]" if APP_EMPTY[c] is None
                     else f"CASE WHEN [{app}].posting_id IS NULL THEN {APP_EMPTY[c]!r} ELSE [{app}].[{c}] END AS [{c}]"
                     for c, *_ in APP_COLUMNS)


def app_join(posting: str = "p", app: str = "a") -> str:
    """``LEFT JOIN app_market`` as alias ``app`` onto the postings of alias ``posting``."""
    return f"LEFT JOIN app_market [{app}] ON [{app}].posting_id = [{posting}].id"


def source_id_of(values: dict[str, Any]) -> Any:
    """A posting's ``source_id`` from its columns: stored NULL where it is the ``url`` (a table row whose id is its
    link)."""
    return values["url"] if values["source_id"] is None else values["source_id"]


def unflatten_posting(row: dict[str, Any]) -> dict[str, Any]:
    """A ``postings`` row with its :func:`app_columns` and ``raw_input_sha256`` (the SHA-256 of its raw input) back
    into the nested shape of :class:`Posting` (child fields not filled). Two columns are stored NULL where they
    would repeat a value: ``source_id`` (:func:`source_id_of`) and ``input_sha256`` where it is its raw input's."""
    out: dict[str, Any] = {}
    for column, path, _, _ in MODEL_COLUMNS:
        value = row.get(column)
        if column in JSON_COLUMNS and isinstance(value, str):
            value = json.loads(value)
        elif column in BOOL_COLUMNS and value is not None:
            value = bool(value)
        target = out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = value
    out["source_id"] = source_id_of(out)
    if out["input_sha256"] is None:
        out["input_sha256"] = row.get("raw_input_sha256")
    return out


def column_descriptions() -> dict[str, dict[str, str]]:
    """Table or view → column → description: the model's field descriptions for ``postings`` and ``app_market``,
    then ``columns.yaml`` (for Datasette metadata)."""
    model = {column: desc for column, _, _, desc in MODEL_COLUMNS}
    documented = _documented()
    postings = {column: model[column] for column, *_ in POSTING_COLUMNS} | documented["postings"]
    out = {"postings": postings,
           "app_market": documented["app_market"] | {column: model[column] for column, *_ in APP_COLUMNS}}
    for table, columns in documented.items():
        if table not in out:
            out[table] = {column: desc if desc is not None else postings[column] for column, desc in columns.items()}
    return out


@lru_cache(maxsize=1)
def _documented() -> dict[str, dict[str, str | None]]:
    import yaml

    return yaml.safe_load(COLUMNS_YAML.read_text(encoding="utf-8"))


def open_db(path: str | Path, *, readonly: bool = False) -> sqlite_utils.Database:
    """Open (creating if needed) a jobcrawl database: WAL mode, 4 KB pages, schema up to date.
    :class:`ReadOnlyDatabase` when the file cannot be written (:func:`crawler.store.unwritable`).

    ``readonly``: the one way commands that only read open it (:func:`crawler.store.readonly_uri`:
    ``mode=ro``, immutable on read-only media). Pending migrations are applied first where the file
    can be written, the one write such a command makes; a file that cannot be written and still
    needs them raises :class:`ReadOnlyDatabase` (its schema is older than the code reading it)."""
    path = Path(path)
    if readonly:
        db = sqlite_utils.Database(connect_readonly(path))
        if not migrations.pending(db):
            return db
        db.close()
        reason = unwritable(path)
        if reason:
            raise ReadOnlyDatabase(f"{path} {reason} and was made by an older jobcrawl (its schema needs upgrading): "
                                   "run a writing command on a writable copy first, e.g. jobcrawl dedupe --db COPY")
        open_db(path).close()
        return sqlite_utils.Database(connect_readonly(path))
    require_writable(path)
    fresh = not path.exists() or path.stat().st_size == 0
    db = connect(path, page_size=4096 if fresh else None)
    upgrade(db)
    return db
