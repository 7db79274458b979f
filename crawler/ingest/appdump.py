"""The job app's text export → :class:`RawPosting` items.

Layout of one page (the seeds in ``seeds/`` are real examples)::

    company
    title
    title                                   (repeated)
    发布于 大约 4 小时前普通员工/个人贡献者     (post time and seniority run together)
    全职员工仅现场办公人工智能                 (employment type, work mode, category run together)
    人工智能                                 (category repeated)
    tag …                                   (one per line)
    值不值得投 · 薪资怎么样 · 发布情况 · 公司情况 · 市场机会 · 职位详情 · AI 洞察 · 职位点评   (blocks)
    Watch Jobs                              (footer; pages may be concatenated)

Blocks are optional and found by their heading lines, so a missing block (seed 003 has no
优先资格) shifts nothing. Every line is kept somewhere: unknown headings become sections or
insights under their own name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from normalize.models import RawPosting
from normalize.posting import raw_text_hash
from normalize.sections import section_key
from normalize.text import clean_lines

FOOTER = "watch jobs"
STREAM_ABOVE_CHARS = 4_000_000

# Top-level block headings → internal block names. Compared with spaces removed.
BLOCKS = {
    "值不值得投": "verdict",
    "薪资怎么样": "salary",
    "发布情况": "published",
    "公司情况": "company",
    "市场机会": "market",
    "职位详情": "details",
    "ai洞察": "insights",
    "职位点评": "review",
}
APP_SECTION_HEADINGS = {"关于这个职位", "最低要求", "工作职责", "优先资格"}
INSIGHT_GROUPS = {"优缺点分析"}  # a heading over 优点 and 缺点, with no items of its own
DIMENSION_NAMES = ("薪资福利", "成长发展", "工作生活", "使命价值")
SIGNAL_KEYS = (
    "薪资信号", "技术前沿", "技术栈", "成长机会", "业务类型",
    "工作模式", "办公地点", "加班情况", "行业发展", "社会影响", "创新程度",
)

_POSTED = re.compile(
    r"^(?P<posted>发布于\s*(?:大约\s*)?"
    r"(?:\d+\s*(?:分钟|小时|天|周|个月|月|年)前|刚刚|今天|昨天|前天"
    r"|\d{4}[-/.年]\d{1,2}[-/.月]\d{1,2}日?|\d{1,2}月\d{1,2}日|\d{1,2}-\d{1,2}))\s*(?P<rest>.*)$"
)
_WORK_MODE = re.compile(r"(仅现场办公|现场办公|远程办公|混合办公|居家办公|线下办公|可远程|远程|混合)")
_EMPLOYMENT = re.compile(r"^(全职员工|兼职员工|全职|兼职|实习生|实习|合同工|外包|劳务派遣|临时工)")
_SIGNAL = re.compile("^(" + "|".join(SIGNAL_KEYS) + ")")
_OVERALL = re.compile(r"^(?:(?P<a>\d{1,3})\s*综合评分|综合评分\s*(?P<b>\d{1,3}))$")
_COMPACT = re.compile(r"(薪资福利|成长发展|工作生活|使命价值)\s*(\d{1,3})")
_SCORE_LINE = re.compile(r"^\d{1,3}\s*(?:较低|中等|较高)?$")
# A heading the app did not use before: short, no sentence punctuation, a typical heading word last.
_HEADING_LIKE = re.compile(
    r"^[^，。,.;；:：!！?？、()（）]{2,12}"
    r"(?:要求|职责|资格|介绍|福利|待遇|描述|内容|亮点|条件|说明|信息|背景|优势|地点|时间|方式|流程|加分项)$"
)


class LayoutError(ValueError):
    """A chunk of text is not a posting in the app's layout; ``reason`` is a short code."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass
class Chunk:
    """The lines of one app page, and whether its footer was seen."""

    index: int
    lines: list[str]
    complete: bool

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def iter_pages(text: str) -> Iterator[Chunk]:
    """Cut a dump into pages at the ``Watch Jobs`` footer, lazily. Blank lines are dropped; a
    trailing page without a footer comes with ``complete=False``."""
    current: list[str] = []
    index = 0
    for line in clean_lines(text):  # every line break: LF, CRLF, CR, VT, FF, FS/GS/RS, NEL, LS, PS
        if not line:
            continue
        if len(line) == len(FOOTER) and line.casefold() == FOOTER:
            yield Chunk(index, current, True)
            index += 1
            current = []
        else:
            current.append(line)
    if current:
        yield Chunk(index, current, False)


def split_pages(text: str) -> list[Chunk]:
    """All pages of a dump (see :func:`iter_pages`)."""
    return list(iter_pages(text))


_LONGEST_BLOCK = max(len(name) for name in BLOCKS) + 2


def _block_name(line: str) -> str | None:
    if len(line) > _LONGEST_BLOCK:
        return None
    return BLOCKS.get(line) or BLOCKS.get(line.replace(" ", "").casefold())


@dataclass
class AppExportPage:
    """One page of the app export: ``to_item()`` turns its lines into a :class:`RawPosting`."""

    chunk: Chunk
    source_id: str
    locator: str
    fetched_at: str
    as_of: str
    input_sha256: str | None = None
    source: str = "textdump"
    parser: str | None = None  # the reader's parser version: the item's raw_hash is then its page's text under it
    _blocks: dict[str, list[str]] = field(default_factory=dict, init=False)
    _header: list[str] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        header: list[str] = []
        current: list[str] = header
        for line in self.chunk.lines:
            name = _block_name(line)
            if name is not None and name not in self._blocks:
                current = self._blocks.setdefault(name, [])
            else:
                current.append(line)
        self._header = header

    # ---------------------------------------------------------------- checks

    def check(self) -> None:
        """Raise :class:`LayoutError` unless this chunk is a whole posting in the app's layout."""
        if not self._blocks:
            raise LayoutError(
                "no_posting",
                "no posting found: none of the app's headings (职位详情, 值不值得投, 职位点评 …) occur",
            )
        if len(self._header) < 2:
            raise LayoutError("no_title", "posting has no company and title lines before its first heading")
        if not self.chunk.complete:
            last = next((h for h in reversed(self.chunk.lines) if _block_name(h)), None)
            raise LayoutError(
                "truncated",
                f"truncated posting: no 'Watch Jobs' footer (text ends in block {last or '?'} after "
                f"{len(self.chunk.lines)} lines)",
            )

    # ---------------------------------------------------------------- header

    def company(self) -> str:
        return self._header[0]

    def title(self) -> str:
        return self._header[1]

    def _header_fields(self) -> dict:
        """Post time, seniority, employment type, work mode, category and tags from the header."""
        lines = self._header[2:]
        out: dict = {"posted": None, "seniority": None, "employment_type": None, "work_mode": None,
                     "category": None, "tags": []}
        i = 0
        if i < len(lines) and lines[i] == self.title():
            i += 1
        if i < len(lines) and (m := _POSTED.match(lines[i])):
            out["posted"] = m.group("posted")
            out["seniority"] = m.group("rest") or None
            i += 1
        if i < len(lines):
            meta = lines[i]
            nxt = lines[i + 1] if i + 1 < len(lines) else None
            if nxt and len(nxt) < len(meta) and meta.endswith(nxt):
                out["category"] = nxt
                self._split_employment(meta[: -len(nxt)], out)
                i += 2
            elif _EMPLOYMENT.match(meta) or _WORK_MODE.search(meta):
                self._split_employment(meta, out, with_category=True)
                i += 1
        out["tags"] = lines[i:]
        return out

    @staticmethod
    def _split_employment(text: str, out: dict, with_category: bool = False) -> None:
        mode = _WORK_MODE.search(text)
        if mode:
            out["employment_type"] = text[: mode.start()] or None
            out["work_mode"] = mode.group(1)
            rest = text[mode.end():]
        else:
            emp = _EMPLOYMENT.match(text)
            out["employment_type"] = emp.group(1) if emp else text or None
            rest = text[emp.end():] if emp else ""
        if with_category and rest:
            out["category"] = rest
        elif rest and not with_category:
            out["work_mode"] = (out["work_mode"] or "") + rest

    # ---------------------------------------------------------------- blocks
    # Sections, insights and the evaluation are made as plain data: RawPosting validates them in one go.

    def salary(self) -> tuple[str | None, str | None]:
        lines = self._blocks.get("salary", [])
        value = lines[0] if lines else None
        compare = next((line for line in lines[1:] if "中位数" in line or line.startswith("比")), None)
        return value, compare

    def published(self) -> str | None:
        lines = self._blocks.get("published", [])
        return " ".join(lines) if lines else None

    def details(self) -> list[dict]:
        """The 职位详情 block as :class:`RawSection` fields."""
        sections: list[dict] = []
        for line in self._blocks.get("details", []):
            if line in APP_SECTION_HEADINGS or (len(line) <= 24 and section_key(line)) or _HEADING_LIKE.match(line):
                sections.append({"heading": line, "lines": []})
            else:
                if not sections:
                    sections.append({"heading": "", "lines": []})
                sections[-1]["lines"].append(line)
        return sections

    def insights(self) -> list[dict]:
        """The AI 洞察 block as :class:`RawSection` fields."""
        sections: list[dict] = []
        for line in self._blocks.get("insights", []):
            if line.startswith(("- ", "-", "• ", "·")):
                if not sections:
                    sections.append({"heading": "", "lines": []})
                sections[-1]["lines"].append(line)
            elif line in INSIGHT_GROUPS:
                continue
            else:
                sections.append({"heading": line, "lines": []})
        return sections

    def evaluation(self) -> dict | None:
        """The 值不值得投 and 职位点评 blocks as :class:`RawEvaluation` fields; None without either."""
        verdict = self._blocks.get("verdict")
        review = self._blocks.get("review")
        if verdict is None and review is None:
            return None
        overall_raw: list[str] = []
        summary: list[str] = []
        for line in verdict or []:
            (overall_raw if _OVERALL.match(line) else summary).append(line)
        dims: dict[str, dict] = {}

        def dimension(name: str) -> dict:
            return dims.setdefault(name, {"name": name, "score_raw": None, "compact_raw": None, "explanation": [],
                                          "signals": []})

        current: dict | None = None
        compact: list[str] = []
        for line in review or []:
            if line in DIMENSION_NAMES:
                current = dimension(line)
                continue
            if current is None:
                pairs = _COMPACT.findall(line)
                if pairs and _COMPACT.sub("", line).strip() == "":
                    compact.append(line)
                    for name, score in pairs:
                        dimension(name)["compact_raw"] = score
                    continue
                summary.append(line)
                continue
            if current["score_raw"] is None and _SCORE_LINE.match(line):
                current["score_raw"] = line
            elif signal := _SIGNAL.match(line):
                current["signals"].append({"key": signal.group(1), "value": line[signal.end():].strip()})
            else:
                current["explanation"].append(line)
        return {"overall_raw": overall_raw, "summary": summary, "compact_raw": "\n".join(compact) or None,
                "dimensions": list(dims.values())}

    def to_item(self) -> RawPosting:
        self.check()
        head = self._header_fields()
        salary, compare = self.salary()
        return RawPosting(
            source=self.source,
            source_id=self.source_id,
            locator=self.locator,
            position=self.chunk.index,
            input_sha256=self.input_sha256,
            fetched_at=self.fetched_at,
            as_of=self.as_of,
            company=self.company(),
            title=self.title(),
            posted=head["posted"],
            published=self.published(),
            seniority=head["seniority"],
            employment_type=head["employment_type"],
            work_mode=head["work_mode"],
            category=head["category"],
            tags=head["tags"],
            salary=salary,
            salary_compare=compare,
            company_activity=self._blocks.get("company", []),
            market=self._blocks.get("market", []),
            sections=self.details(),
            insights=self.insights(),
            evaluation=self.evaluation(),
            raw_hash=None if self.parser is None else raw_text_hash(self.chunk.text, self.parser),
        )


def parse_dump(body: bytes, *, locator: str, fetched_at: str, as_of: str, source: str = "textdump",
               parser: str | None = None):
    """One dump file → its :class:`RawInput` first, then a :class:`RawPosting` or a
    :class:`Quarantined` per page. Never raises: every problem becomes a quarantine record
    naming the file (and page) and the problem. With ``parser`` (the reader's parser version) each posting's
    ``raw_hash`` is its page's :func:`~normalize.posting.raw_text_hash`.
    """
    from normalize.models import Quarantined, RawInput
    from normalize.text import DecodeError, decode_bytes, sha256_hex

    sha = sha256_hex(body)
    base = dict(source=source, locator=locator, fetched_at=fetched_at)
    try:
        text, encoding = decode_bytes(body)
    except DecodeError as err:
        yield RawInput(**base, sha256=sha, size=len(body), as_of=as_of, body=body,
                       text=body.decode("utf-8", "replace"), error=str(err), status="quarantined")
        yield Quarantined(**base, input_sha256=sha, reason=err.reason, detail=str(err), text=None)
        return

    # Pass 1 decides the input's status without building items; pass 2 yields the items one by
    # one as the engine asks for them. Ordinary files are split once; a huge one (a 50 MB dump)
    # is split again in pass 2 instead of keeping all its pages in memory.
    def build(chunks):
        for chunk in chunks:
            yield AppExportPage(chunk, f"{locator}#{chunk.index}", locator, fetched_at, as_of, sha, source, parser)

    kept = list(build(iter_pages(text))) if len(text) < STREAM_ABOVE_CHARS else None

    def pages():
        return iter(kept) if kept is not None else build(iter_pages(text))

    pages_seen, postings, reasons, only_reason = 0, 0, set(), None
    for page in pages():
        pages_seen += 1
        try:
            page.check()
            postings += 1
        except LayoutError as err:
            reasons.add(err.reason)
            only_reason = err
    if pages_seen == 0:
        error = "no posting found: the file holds only blank lines"
        yield RawInput(**base, sha256=sha, size=len(body), encoding=encoding, text=text, as_of=as_of,
                       status="quarantined", error=error)
        yield Quarantined(**base, input_sha256=sha, reason="no_posting", detail=error, text=text)
        return
    whole_file_unknown = pages_seen == 1 and postings == 0 and reasons == {"no_posting"}
    status = "parsed" if postings == pages_seen else "partial" if postings else "quarantined"
    yield RawInput(**base, sha256=sha, size=len(body), encoding=encoding, text=text, as_of=as_of,
                   status=status, postings=postings, error="; ".join(sorted(reasons)) or None)
    if whole_file_unknown:  # the file as a whole is not a dump: report it once, for the file
        yield Quarantined(**base, input_sha256=sha, reason="no_posting", detail=only_reason.detail, text=text)
        return
    for page in pages():
        try:
            yield page.to_item()
        except LayoutError as err:
            yield Quarantined(**base, position=page.chunk.index, input_sha256=sha, reason=err.reason,
                              detail=err.detail, text=page.chunk.text)
        except Exception as err:  # a parser bug must not stop the run: keep the page and say why
            yield Quarantined(**base, position=page.chunk.index, input_sha256=sha, reason="parser_error",
                              detail=f"parser error: {type(err).__name__}: {err}", text=page.chunk.text)
