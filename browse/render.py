"""What the browse plugin shows, as plain data: salary labels, safe links, the posting page's model.

Hardly any HTML here: the template and the plugin escape everything they output (Jinja autoescape,
``markupsafe``); these functions decide what text and which links to show (:func:`highlighted`
escapes the text of a snippet and marks its matches).
"""

from __future__ import annotations

import sqlite3
from typing import Any
from urllib.parse import quote, urlsplit

import sqlite_utils
from datasette.utils import tilde_encode
from markupsafe import Markup, escape

from browse import queries
from crawler.store.fts import HIGHLIGHT, plain
from crawler.store.read import export_record, with_signals
from normalize.models import DIMENSION_LABELS, DIMENSIONS, HIDDEN_COMPANY, INSIGHT_KEYS, SECTION_KEYS

SYMBOLS = {"CNY": "", "USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "HKD": "HK$", "SGD": "S$"}
SALARY_STATUS_LABELS = {"negotiable": "面议", "undisclosed": "未披露"}
SECTION_LABELS = {"about": "关于这个职位 · About", "requirements": "最低要求 · Requirements",
                  "responsibilities": "工作职责 · Responsibilities", "preferred": "优先资格 · Preferred",
                  "compensation": "薪资待遇 · Compensation", "benefits": "福利 · Benefits"}
INSIGHT_LABELS = {"pros": "优点 · Pros", "cons": "缺点 / 挑战 · Cons", "role": "角色解读 · The role",
                  "strategy": "申请策略 · How to apply", "interview": "面试指南 · Interview"}


def _thousands(value: float) -> str:
    k = value / 1000
    return f"{k:.0f}" if k >= 100 or k == int(k) else f"{k:.1f}".rstrip("0").rstrip(".")


def salary_label(row: dict[str, Any]) -> str | None:
    """Monthly base pay as people write it: ``30–50K ×14``, ``43K``, ``$10–12.5K``, ``面议``.

    ``row`` has ``salary`` (the monthly maximum) or ``salary_monthly_max`` beside
    ``salary_monthly_min``, ``salary_months``, ``salary_currency``, ``salary_status`` and
    ``salary_estimated``; None when there is nothing to show.
    """
    high = row.get("salary", row.get("salary_monthly_max"))
    low = row.get("salary_monthly_min")
    if high is None and low is None:
        status = row.get("salary_status")
        return SALARY_STATUS_LABELS.get(status) or row.get("salary_raw") or None
    low = high if low is None else low
    high = low if high is None else high
    currency = row.get("salary_currency") or "CNY"
    symbol = SYMBOLS.get(currency, currency + " ")
    text = symbol + _thousands(low) + ("" if low == high else "–" + _thousands(high)) + "K"
    months = row.get("salary_months")
    if months and months != 12:
        text += f" ×{months}"
    if row.get("salary_estimated"):
        text += " (est.)"
    return text


def highlighted(snippet: str) -> Markup:
    """A snippet of the search index (:func:`crawler.store.fts.snippet_sql`) as HTML: the text
    escaped, each match in ``<mark>``."""
    start, end = HIGHLIGHT
    text = str(escape(plain(snippet))).replace(start, "<mark>").replace(end, "</mark>").replace("\n", " · ")
    return Markup(f'<span class="matched">{text}</span>')


def safe_url(url: str | None) -> str | None:
    """``url`` when it is an http(s) URL, else None (never a ``javascript:`` or ``data:`` link)."""
    if not url or not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    return url.strip() if parts.scheme in ("http", "https") and parts.netloc else None


def listing_url(**filters: str) -> str:
    """A link to the jobs listing with filters, e.g. ``city=上海`` or ``_skill=CUDA``."""
    return "/jobs/jobs?" + "&".join(f"{quote(k)}={quote(str(v), safe='')}" for k, v in filters.items())


def _evaluation(ev: dict[str, Any] | None, title: str) -> dict[str, Any] | None:
    if not ev:
        return None
    dims = []
    for dim in DIMENSIONS:
        dims.append({
            "key": dim, "label": DIMENSION_LABELS[dim], "score": ev.get(dim), "level": ev.get("levels", {}).get(dim),
            "explanation": ev.get("explanations", {}).get(dim),
            "signals": ev.get("signals", {}).get(dim, []),
            "evidence": [_evidence_line(e) for e in ev.get("evidence", {}).get(dim, [])],
        })
    return {"title": title, "scorer": ev["scorer"], "overall": ev.get("overall"), "summary": ev.get("summary"),
            "notes": ev.get("notes", []), "dimensions": dims, "problems": ev.get("problems", [])}


def _evidence_line(item: Any) -> str:
    """One evidence entry as a line: ``rule +points: matched (section) — snippet``."""
    if not isinstance(item, dict):
        return str(item)
    head = str(item.get("rule", ""))
    if item.get("points") is not None:
        head += f" {item['points']:+}" if isinstance(item["points"], (int, float)) else f" {item['points']}"
    details = [str(item[k]) for k in ("matched", "value", "text") if item.get(k) not in (None, "")]
    if item.get("section"):
        details.append(f"({item['section']})")
    line = head + (": " + " ".join(details) if details else "")
    if item.get("snippet"):
        line += f" — {item['snippet']}"
    rest = {k: v for k, v in item.items() if k not in ("rule", "points", "matched", "value", "text", "section", "snippet")}
    if rest:
        line += " · " + ", ".join(f"{k} {v}" for k, v in rest.items())
    return line


def posting_page(conn: sqlite3.Connection, posting_id: int) -> dict[str, Any] | None:
    """Everything the posting page shows, from the same export record ``jobcrawl export`` writes."""
    db = sqlite_utils.Database(conn, recursive_triggers=False)
    rec = export_record(db, posting_id)
    if not rec:
        return None
    with_signals(db, [rec])
    keys = [k for k in SECTION_KEYS if k in rec["sections"]] + [k for k in rec["sections"] if k not in SECTION_KEYS]
    sections = [{"key": k, "heading": SECTION_LABELS.get(k) or rec["section_headings"].get(k) or k,
                 "bullets": rec["sections"][k]} for k in keys]
    insights = [{"key": k, "heading": INSIGHT_LABELS.get(k, k), "lines": rec["insights"][k]}
                for k in (*INSIGHT_KEYS, *(k for k in rec.get("insights") or {} if k not in INSIGHT_KEYS))
                if (rec.get("insights") or {}).get(k)]
    skills: dict[str, dict[str, Any]] = {}
    for e in rec["skill_evidence"]:
        skill = skills.setdefault(e["skill"], {
            "name": e["skill"], "category": e["category"], "sections": [], "matched": [],
            "listing": listing_url(_skill=e["skill"]), "page": "/jobs/skills/" + tilde_encode(e["skill"])})
        skill["sections"].append(e["section"])
        if e["matched"] not in skill["matched"]:
            skill["matched"].append(e["matched"])
    salary = rec["salary"]
    cluster = None
    if rec.get("cluster_id") is not None:
        members = queries.cluster_members(conn, rec["cluster_id"])
        cluster = {"id": rec["cluster_id"], "duplicate_of": rec.get("duplicate_of"),
                   "members": [dict(zip(("id", "title", "company", "city", "reason", "similarity"), m))
                               for m in members if m[0] != posting_id]}
    versions = queries.version_count(conn, posting_id)
    score = queries.listing_score(conn, posting_id)
    return {
        "id": posting_id, "title": rec.get("title"), "company": rec.get("company") or HIDDEN_COMPANY, "city": rec.get("city"),
        "district": rec.get("district"), "category": rec.get("category"), "work_mode": rec.get("work_mode"),
        "seniority": rec.get("seniority"), "employment_type": rec.get("employment_type"),
        "experience": rec.get("experience"), "education": rec.get("education"),
        "posted_raw": rec.get("posted_raw"), "posted_at": rec.get("posted_local") or rec.get("posted_at"),
        # times in the posting's zone (Asia/Shanghai for Chinese boards); the UTC values stay in the database
        "first_seen": rec.get("first_seen_local") or rec.get("first_seen"),
        "last_seen": rec.get("last_seen_local") or rec.get("last_seen"),
        "closed_at": rec.get("closed_at_local") or rec.get("closed_at"), "tags": rec.get("tags") or [],
        "salary": salary_label({"salary": salary.get("monthly_max"), "salary_monthly_min": salary.get("monthly_min"),
                                "salary_months": salary.get("months"), "salary_currency": salary.get("currency"),
                                "salary_status": salary.get("status"), "salary_estimated": salary.get("estimated"),
                                "salary_raw": salary.get("raw")}),
        "salary_raw": salary.get("raw"), "salary_compare": salary.get("compare_raw"),
        "score": score[0] if score else None, "score_level": score[1] if score else None,
        "score_by": score[2] if score else None,
        "url": safe_url(rec.get("url")), "url_text": rec.get("url"), "source": rec.get("source"),
        "locator": rec.get("locator"), "description": rec.get("description"),
        "sections": sections, "insights": insights, "skills": list(skills.values()),
        "evaluations": [e for e in (_evaluation(rec.get("evaluation"), "Our evaluation (jobcrawl)"),
                                    _evaluation(rec.get("source_evaluation"), "The app's evaluation")) if e],
        "problems": rec.get("problems") or [], "cluster": cluster, "versions": versions,
        "company_activity": rec.get("company_activity") or {}, "market": rec.get("market") or {},
        "ghost_signals": rec["ghost_signals"], "likely_employer": rec["likely_employer"],
        "likely_employer_evidence": rec["likely_employer_evidence"],
    }
