"""An evaluation's evidence and signals as stored (compact JSON) and as read back, losslessly.

Evidence ``{dimension: [entry, …]}``: an entry of a rule of :data:`SHAPES` is stored as ``[rule, value, …]`` (its
values in the shape's key order, without the values equal to the shape's fixed ones), or as the bare rule name
when nothing else remains (``"insufficient"``); an entry of a word rule (``rule, matched, section, snippet,
points``) as ``[rule, section, snippet, points]`` when it matched the whole snippet, else ``[rule, section,
snippet, offset, length, points]`` (the matched span in the snippet). Any other entry stays as it is (a non-dict,
or a dict whose only key is ``""``, is wrapped as ``{"": entry}``). Signals ``{dimension: [{key, value}, …]}`` are
stored as ``{dimension: [[key, value], …]}``.

An entry whose first value is exactly its posting's field (:data:`FROM_POSTING`: ``company_open``'s company, the
salary as written of ``salary_percentile`` and ``no_comparison``) is stored without it, under the rule name that
says so (``["company_open/company",2,1,null]``), and gets it back from the posting when read (:func:`from_posting`);
where the value differs it stays, as before.

The tables are part of the stored format: a shape is never changed or removed (a new one gets a new rule name),
so every stored evaluation reads back as it was written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

SHAPES: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    # rule: (keys after "rule", in order; values left out when equal to these)
    "base": (("points",), {"points": 50.0}),
    "cap": (("group", "cap", "points"), {}),
    "insufficient": (("text", "points"), {"text": "信息不足", "points": 0}),
    "unknown": (("text", "points"), {"text": "未明确", "points": 0}),
    "seniority": (("text", "points"), {}),
    "no_comparison": (("text", "points"), {"points": 0}),
    "salary_unknown": (("text", "points"), {"points": 0}),
    "salary_implausible": (("text", "points"), {"points": 0}),
    "no_peers": (("reason", "points"), {"points": 0}),
    "months": (("text", "months", "points"), {}),
    "work_mode": (("mode", "text", "points"), {}),
    "frontier_skill": (("skills", "count", "points"), {}),
    "frontier_category": (("categories", "points"), {}),
    "new_tech": (("skills", "points"), {}),
    "source_salary_signal": (("text", "estimated", "points"), {"points": 0}),
    "source_compare": (("text", "vs_median", "assumed_percentile", "points"), {}),
    "peers_too_small": (("scope", "key", "currency", "n", "min", "text", "points"), {"text": "样本不足", "points": 0}),
    "salary_percentile": (("text", "monthly", "scope", "key", "currency", "n", "p25", "median", "p75", "percentile",
                           "points"), {}),
    "salary_compare": (("text", "scope", "n", "median", "source"), {}),
    "company_open": (("company", "corpus_open", "corpus_open_in_category", "source_open"), {}),
    "city_category_open": (("key", "corpus_open", "source_open"), {}),
    "weighted_mean": (("weights", "known", "completeness", "value"),
                      {"weights": {"pay": 0.35, "growth": 0.25, "worklife": 0.2, "mission": 0.2}}),
    "stack": (("skills", "points"), {"points": 0}),
    "scope_clauses": (("clauses", "points"), {"points": 0}),
    "business": (("kinds", "points"), {"points": 0}),
}
FROM_POSTING: dict[str, tuple[str, str]] = {
    # rule as stored without its first value: (the rule as written, the postings column that value equals)
    "company_open/company": ("company_open", "company"),
    "no_comparison/salary_raw": ("no_comparison", "salary_raw"),
    "salary_percentile/salary_raw": ("salary_percentile", "salary_raw"),
}
POSTING_FIELDS = tuple(dict.fromkeys(field for _, field in FROM_POSTING.values()))
"""The postings columns :func:`pack_evidence` and :func:`from_posting` read (the view ``evaluation_evidence`` in
schema.sql reads them back the same way)."""
_LEAVE_OUT = {rule: (stored, field) for stored, (rule, field) in FROM_POSTING.items()}
WORD_KEYS = ("rule", "matched", "section", "snippet", "points")
_PLAIN = (str, int, float, bool, type(None))


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON (0 is not 0.0, 1 is not true)."""
    kind = type(b)
    if type(a) is kind:
        if kind in _PLAIN and b == b:  # one plain type: JSON-equal iff equal
            return a == b and (kind is not float or b != 0 or str(a) == str(b))  # 0.0 is not -0.0
        if kind is list:
            return len(a) == len(b) and all(map(_same, a, b))
        if kind is dict and all(type(k) is str for k in a) and all(type(k) is str for k in b):
            return list(a) == list(b) and all(map(_same, a.values(), b.values()))
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


_PLANS = {rule: (("rule", *keys), tuple(fixed.items()), tuple(k for k in keys if k not in fixed), keys)
          for rule, (keys, fixed) in SHAPES.items()}
"""Per rule of :data:`SHAPES`: its entry's keys in order, the fixed values, the keys packed when they hold them, all
keys."""


def _pack_entry(entry: Any) -> Any:
    if not isinstance(entry, dict) or len(entry) == 1 and "" in entry:
        return {"": entry}
    rule = entry.get("rule")
    plan = _PLANS.get(rule) if isinstance(rule, str) else None
    if plan is not None:
        entry_keys, fixed, free, keys = plan
        if tuple(entry) == entry_keys:
            for k, v in fixed:
                if not _same(entry[k], v):
                    values = [entry[k] for k in keys]
                    break
            else:
                values = [entry[k] for k in free]
            return [rule, *values] if values else rule
    elif isinstance(rule, str) and tuple(entry) == WORD_KEYS and isinstance(entry["snippet"], str) \
            and isinstance(entry["matched"], str):
        matched, snippet = entry["matched"], entry["snippet"]
        if matched == snippet:
            return [rule, entry["section"], snippet, entry["points"]]
        at = snippet.find(matched)
        if at >= 0:
            return [rule, entry["section"], snippet, at, len(matched), entry["points"]]
    return entry


def _unpack_entry(item: Any) -> Any:
    if isinstance(item, str):
        item = [item]
    if not isinstance(item, list):
        return item[""] if isinstance(item, dict) and list(item) == [""] else item
    rule, values = item[0], item[1:]
    if rule in SHAPES:
        keys, fixed = SHAPES[rule]
        if len(values) == len(keys):
            return {"rule": rule, **dict(zip(keys, values))}
        given = iter(values)
        return {"rule": rule, **{k: fixed[k] if k in fixed else next(given) for k in keys}}
    if len(values) == 3:
        section, snippet, points = values
        matched = snippet
    else:
        section, snippet, at, length, points = values
        matched = snippet[at:at + length]
    return {"rule": rule, "matched": matched, "section": section, "snippet": snippet, "points": points}


def without_posting(item: Any, posting: Mapping[str, Any]) -> Any:
    """A packed entry without its first value where that is exactly the posting's field (:data:`FROM_POSTING`)."""
    if type(item) is list and len(item) > 1 and item[0] in _LEAVE_OUT:
        stored, field = _LEAVE_OUT[item[0]]
        if field in posting and _same(item[1], posting[field]):
            return [stored, *item[2:]]
    return item


def from_posting(item: Any, posting: Mapping[str, Any]) -> Any:
    """A stored entry as packed before its posting's value was left out (the inverse of :func:`pack_evidence`'s
    ``posting``): ``posting`` holds the postings columns of :data:`POSTING_FIELDS`."""
    if type(item) is list and item and item[0] in FROM_POSTING:
        rule, field = FROM_POSTING[item[0]]
        return [rule, posting[field], *item[1:]]
    return item


def pack_evidence(evidence: Mapping[str, Any], posting: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Evidence as stored (see the module docstring); ``posting``: the postings columns of :data:`POSTING_FIELDS`
    of the evaluation's posting, whose values its entries leave out (none left out without it)."""
    posting = posting or {}
    return {dim: [without_posting(_pack_entry(e), posting) for e in items] if isinstance(items, list) else items
            for dim, items in evidence.items()}


def unpack_evidence(stored: Mapping[str, Any]) -> dict[str, Any]:
    """Stored evidence as the scorer gave it."""
    return {dim: [_unpack_entry(e) for e in items] if isinstance(items, list) else items
            for dim, items in stored.items()}


def pack_signals(signals: Mapping[str, Any]) -> dict[str, list[list[str]]]:
    """Signals (``Signal`` models or ``{key, value}`` dicts by dimension) as stored: ``[key, value]`` pairs, dimensions
    without signals left out."""
    out = {}
    for dim, items in signals.items():
        pairs = [[s["key"], s["value"]] if isinstance(s, Mapping) else [s.key, s.value] for s in items]
        if pairs:
            out[dim] = pairs
    return out


def unpack_signals(stored: Mapping[str, list[list[str]]], order: tuple[str, ...] = ()) -> dict[str, list[dict]]:
    """Stored signals as ``{dimension: [{key, value}, …]}``: the dimensions of ``order`` first, then the others
    sorted."""
    dims = [*(d for d in order if d in stored), *sorted(d for d in stored if d not in order)]
    return {d: [{"key": k, "value": v} for k, v in stored[d]] for d in dims}


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # made once, not per value


def dumps(value: Any) -> str:
    """JSON text as an evaluation's columns store it: no spaces, non-ASCII as is."""
    return _COMPACT(value)
