"""Job-description sections: heading vocabulary (zh/en) → canonical keys, and bullet cleaning.

Canonical keys: about, requirements, responsibilities, preferred, benefits (see ``models.SECTION_KEYS``).
Unknown headings are never dropped: callers keep them under their own text.
"""

from __future__ import annotations

import re

from .text import clean_line, fold

# Heading (folded, without brackets, colons or numbering) → canonical key.
HEADINGS: dict[str, str] = {
    # about
    "关于这个职位": "about", "职位描述": "about", "岗位描述": "about", "职位介绍": "about", "岗位介绍": "about",
    "职位概述": "about", "about the role": "about", "about this role": "about", "about the job": "about",
    "overview": "about", "the role": "about", "job description": "about",
    # requirements
    "最低要求": "requirements", "任职要求": "requirements", "任职资格": "requirements", "岗位要求": "requirements",
    "职位要求": "requirements", "基本要求": "requirements", "要求": "requirements",
    "requirements": "requirements", "qualifications": "requirements", "minimum qualifications": "requirements",
    "basic qualifications": "requirements", "what you'll need": "requirements", "what you will need": "requirements",
    "what we're looking for": "requirements", "who you are": "requirements",
    # responsibilities
    "工作职责": "responsibilities", "岗位职责": "responsibilities", "职责描述": "responsibilities",
    "工作内容": "responsibilities", "主要职责": "responsibilities", "职位职责": "responsibilities",
    "responsibilities": "responsibilities", "what you'll do": "responsibilities", "what you will do": "responsibilities",
    "key responsibilities": "responsibilities", "your responsibilities": "responsibilities",
    # preferred
    "优先资格": "preferred", "加分项": "preferred", "优先": "preferred", "优先条件": "preferred",
    "nice to have": "preferred", "nice to haves": "preferred", "preferred qualifications": "preferred",
    "preferred": "preferred", "bonus": "preferred", "bonus points": "preferred",
    # benefits
    "福利待遇": "benefits", "职位福利": "benefits", "福利": "benefits", "职位诱惑": "benefits",
    "benefits": "benefits", "perks": "benefits", "what we offer": "benefits",
}

_DECORATION = re.compile(r"^[\s#*【\[（(<《]*(?:\d+[.、)]\s*|[一二三四五六七八九十]+、\s*)?|[\s】\]）)>》:：]*$")


def heading_text(line: str) -> str:
    """A candidate heading without brackets, numbering, colons; folded for lookup."""
    return fold(_DECORATION.sub("", clean_line(line))).strip()


def section_key(heading: str) -> str | None:
    """Canonical key for a heading line, or None when the heading is not in the vocabulary."""
    return HEADINGS.get(heading_text(heading))


_BULLET = re.compile(r"^\s*(?:[-•·*●▪◦–—]|\d{1,2}\s*(?:[、)）]|\.(?!\d))|[(（]\d{1,2}[)）]|[①-⑳])\s*")


def clean_bullet(line: str) -> str:
    """A bullet's text without its marker (``- ``, ``1.``, ``1、``, ``(1)``, ``①``, ``•``)."""
    return clean_line(_BULLET.sub("", clean_line(line), count=1))
