"""Binding a file's header to fields: by a preset, a ``--map`` mapping, or the preset sniffed from the header."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from crawler.ingest.table.presets import PRESETS, Derived, Preset
from normalize.text import fold


def column_key(name: str) -> str:
    """A header name as compared: NFKC (full-width brackets), case-folded, without spaces, ``_`` and ``-``."""
    return re.sub(r"[\s_\-\ufeff]+", "", fold(name))


@dataclass
class Binding:
    """How one file's columns fill fields: ``fields`` maps a field to the header names joined into it."""

    preset: str | None
    fields: dict[str, tuple[str, ...]]
    derived: list[Derived]
    consumed: frozenset[str]
    matched: int

    @property
    def binds_title(self) -> bool:
        return "title" in self.fields


def bind(header: list[str], columns: Mapping[str, tuple[str, ...]], derived: tuple[Derived, ...] = (),
         preset: str | None = None) -> Binding:
    """Bind a preset's (or a mapping's) column names to ``header``; names compare by :func:`column_key`."""
    index: dict[str, str] = {}
    for name in header:
        index.setdefault(column_key(name), name)
    fields: dict[str, tuple[str, ...]] = {}
    used: set[str] = set()
    for name, alternatives in columns.items():
        for alt in alternatives:
            parts = [index.get(column_key(part)) for part in alt.split("+") if part.strip()]
            if parts and all(parts):
                fields[name] = tuple(parts)  # type: ignore[arg-type]
                used.update(parts)  # type: ignore[arg-type]
                break
    bound_derived = []
    for d in derived:
        present = {c: index[column_key(c)] for c in d.columns if column_key(c) in index}
        if present:
            bound_derived.append(Derived(columns=tuple(present.values()), fn=_renamed(d.fn, present)))
            used.update(present.values())
    return Binding(preset, fields, bound_derived, frozenset(used), len(used))


def _renamed(fn: Callable[[dict[str, str]], dict[str, Any]], names: dict[str, str]):
    """``fn`` reading cells under the preset's spelling of the header names."""
    if all(k == v for k, v in names.items()):
        return fn
    return lambda cells: fn({key: cells.get(actual, "") for key, actual in names.items()})


def missing_columns(mapping: Mapping[str, str], header: list[str]) -> list[tuple[str, str, str]]:
    """``(field, spec, column)`` for each column a mapping names that ``header`` does not have (names
    compare as :func:`bind` compares them)."""
    keys = {column_key(h) for h in header}
    return [(name, spec, part) for name, spec in mapping.items() if spec
            for part in spec.split("+") if column_key(part) not in keys]


def sniff_preset(header: list[str]) -> tuple[Preset | None, int]:
    """The preset explaining the most header columns (ties: the one naming fewer columns) and how many it
    explains; ``(None, 0)`` when no preset binds a title column."""
    best: tuple[tuple[int, int], Preset] | None = None
    for preset in PRESETS.values():
        binding = bind(header, preset.columns, preset.derived, preset.name)
        if not binding.binds_title:
            continue
        score = (binding.matched, not preset.loses_ties, -len(_names(preset)))
        if best is None or score > best[0]:
            best = (score, preset)
    return (best[1], best[0][0]) if best else (None, 0)


def _names(preset: Preset) -> set[str]:
    """The column names a preset knows, as compared."""
    out = {column_key(part) for alts in preset.columns.values() for alt in alts for part in alt.split("+")}
    return out | {column_key(c) for d in preset.derived for c in d.columns}
