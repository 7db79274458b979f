"""Precision and recall of normalize.dedupe on a labeled synthetic set built from real JDs.

    .venv/bin/python bench/dedupe_accuracy.py                 # evaluate on fixtures/dedupe/bases.jsonl
    .venv/bin/python bench/dedupe_accuracy.py --refresh-bases # rebuild that file from ../shared/data + seeds

Bases (fixtures/dedupe/bases.jsonl) are distinct real JDs (智联/51job file, Apache-2.0, plus the two seeds) with
a fictional company, title and city. From each base the generator derives labeled pairs (seeded, so the set
is fixed by the file and this code):

positive (same cluster): repost (new post time and salary), title decorated (``（急招）``, ``-北京``),
bullets reordered, format reworded (punctuation, spaces, full-width), synonyms swapped, a bullet added, a
bullet removed, all light rewordings combined, another city (flag ``different_city``), a copy under a
staffing agency (flag ``cross_company``).

negative (different clusters): another title at the same company with other requirements, another JD with
the same title at the same company, another JD with the same title at another company, a sibling role
built on the same company template (shared about paragraph and generic bullets), another team's opening
with the same title and the same generic bullets but its own duties, the same JD text with the stack
swapped and retitled (Java → Python).

list cards (title, company, city, salary and benefit tags, no JD text; written for this set):
positive — the same card again under another id (same identity), a card and the JD posting it lists, a
hidden-employer posting at the URL of another; negative — cards of other companies with the same title,
city, salary and benefit tags, the same company's card with another salary, a hidden-employer card with the
same title, city and salary.

shared boilerplate (written for this set): postings of 40 companies with one title, six bullets of
boilerplate that every one of them carries and two duties of their own. Negative — two of them of different
companies; positive — a reworded repost of one of them by its own company.

Two evaluations, both with the boilerplate of the whole set left out (``common_shingles``, as the dedupe step
computes it over the database): ``pairwise`` (a fresh Clusterer per pair) and ``corpus`` (every record in one
Clusterer, in shuffled order, pairs read off the final clusters). Figures printed; tests/test_dedupe.py
asserts the targets (precision ≥ 0.99, recall ≥ 0.95).

``--shared`` also ingests each file of ../shared/data/zh (read in place) into a database of its own with the
real ``jobcrawl ingest`` and prints its largest clusters with their company and city counts.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from normalize.dedupe import Clusterer, Record, common_shingles, record_from_posting, shingles  # noqa: E402

BASES = ROOT / "fixtures" / "dedupe" / "bases.jsonl"
SHARED_ZH = ROOT.parent / "shared" / "data" / "zh" / "zhilian51job_jd_text_program_362.txt"
SEEDS = ROOT / "seeds"

POSITIVE = (
    "repost", "title_decorated", "reordered", "format_reworded", "synonyms", "bullet_added",
    "bullet_removed", "light_combined", "other_city", "agency_copy",
    "list_card_again", "list_card_of_jd", "hidden_employer_same_url", "boilerplate_repost",
)
NEGATIVE = (
    "other_title_same_company", "same_title_same_company", "same_title_other_company", "template_sibling",
    "same_title_team_variant", "stack_swap",
    "list_same_tags_other_company", "list_same_company_other_salary", "list_hidden_employer",
    "shared_boilerplate_other_company",
)

# --------------------------------------------------------------------------- bases


_HEAD = re.compile(
    r"(岗位职责|工作职责|职位描述|岗位描述|职责描述|工作内容|主要职责|职位说明|任职要求|任职资格|岗位要求|职位要求|"
    r"上岗条件|技能要求|职责\s*[:：]|要求\s*[:：])\s*[:：]?"
)
_REQ_HEADS = ("任职要求", "任职资格", "岗位要求", "职位要求", "上岗条件", "技能要求", "要求")
_SPLIT = re.compile(r"(?:(?<![\d.])\d{1,2}\s*[、.．)）](?!\d)|[①-⑩]|[；;]|●|·\s|\*)")

_TITLE_RULES = (
    (r"java(?!script)", "Java开发工程师"), (r"\.net|c#", ".NET开发工程师"), (r"python", "Python开发工程师"),
    (r"前端|html5|vue|react", "前端开发工程师"), (r"android|ios|安卓", "移动端开发工程师"),
    (r"fpga|verilog", "FPGA工程师"), (r"嵌入式|单片机|arm", "嵌入式软件工程师"), (r"硬件|电路", "硬件工程师"),
    (r"测试", "测试工程师"), (r"图像|视觉", "图像算法工程师"), (r"深度学习|机器学习|自然语言|nlp", "算法工程师"),
    (r"算法", "算法工程师"), (r"c\+\+", "C++开发工程师"), (r"数据", "数据工程师"),
)

_CITIES = ("北京", "上海", "深圳", "杭州", "广州", "成都", "南京", "苏州", "武汉", "西安")
_COMPANY_HEADS = ("星河", "云帆", "智行", "深蓝", "极光", "鲲鹏", "青禾", "远望", "天枢", "北辰", "澄明", "若水", "九章", "启明", "微澜", "长风", "海图", "松果")
_COMPANY_CORES = ("智能", "数据", "芯片", "软件", "机器人", "汽车", "医疗", "金融", "电子", "通信")
_COMPANY_FORMS = ("科技有限公司", "技术有限公司", "信息技术股份有限公司", "网络科技有限公司", "集团")
_AGENCIES = ("汇才人力资源服务有限公司", "博睿人才服务有限公司", "众聘企业管理咨询有限公司")


# Bullets naming a contact (recruiter, phone, e-mail, where to send a CV) are left out of the fixture.
_CONTACT = re.compile(r"联系|电话|邮箱|邮件|<email>|<phone>|投递|简历|先生|女士|小姐|微信号|公众号|qq|@|\d{7,}", re.I)


def split_bullets(text: str) -> tuple[list[str], list[str]]:
    """A one-line JD → (responsibilities, requirements) by its inline headings and numbering; contact
    bullets dropped."""
    resp: list[str] = []
    req: list[str] = []
    current = resp
    parts = _HEAD.split(text)
    for i, part in enumerate(parts):
        if i % 2:
            current = req if part.rstrip(":： ").startswith(_REQ_HEADS) else resp
            continue
        for seg in _SPLIT.split(part):
            seg = re.sub(r"\s+", " ", seg).strip(" ，,。:：")
            if len(seg) >= 4 and not _CONTACT.search(seg):
                current.append(seg)
    return resp, req


def _title_for(text: str) -> str:
    low = text.lower()
    for pattern, title in _TITLE_RULES:
        if re.search(pattern, low):
            return title
    return "软件工程师"


def _seed_base(path: Path) -> dict:
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]

    def block(start: str, stops: tuple[str, ...]) -> list[str]:
        i = lines.index(start) + 1
        out = []
        while i < len(lines) and lines[i] not in stops:
            if lines[i]:
                out.append(lines[i])
            i += 1
        return out

    stops = ("关于这个职位", "最低要求", "工作职责", "优先资格", "AI 洞察")
    city = next(line.split(" · ")[0] for line in lines if line.count(" · ") >= 2)
    return {
        "id": f"seed-{path.stem}", "origin": f"seeds/{path.name}", "company": lines[0], "title": lines[1],
        "city": city, "about": block("关于这个职位", stops),
        "requirements": block("最低要求", stops), "responsibilities": block("工作职责", stops),
    }


def refresh_bases(out: Path = BASES) -> int:
    """Write the bases file: the two seeds plus every distinct real JD (5-shingle Jaccard < 0.3 with all
    earlier kept ones) that has at least 3 bullets. Returns the number of bases."""
    rng = random.Random(20240501)
    bases = [_seed_base(p) for p in sorted(SEEDS.glob("*.txt"))]
    kept: list[set[str]] = [shingles("\n".join(b["requirements"] + b["responsibilities"])) for b in bases]
    companies = [h + c + f for h, c, f in itertools.product(_COMPANY_HEADS, _COMPANY_CORES, _COMPANY_FORMS)]
    rng.shuffle(companies)
    lines = SHARED_ZH.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        resp, req = split_bullets(line.strip())
        if len(resp) + len(req) < 3:
            continue
        sh = shingles("\n".join(req + resp))
        if any(len(sh & k) / len(sh | k) >= 0.3 for k in kept):
            continue
        kept.append(sh)
        bases.append({
            "id": f"zl-{number:03d}", "origin": f"zhilian51job_jd_text_program_362.txt line {number}",
            "company": companies.pop(), "title": _title_for(line), "city": rng.choice(_CITIES),
            "about": [], "requirements": req, "responsibilities": resp,
        })
    with out.open("w", encoding="utf-8") as fh:
        for base in bases:
            fh.write(json.dumps(base, ensure_ascii=False) + "\n")
    return len(bases)


def load_bases(path: Path = BASES) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# --------------------------------------------------------------------------- mutations

_SYNONYMS = (
    ("负责", "承担"), ("熟悉", "了解"), ("熟练掌握", "掌握"), ("具备", "具有"), ("良好的", "较好的"),
    ("优先", "优先考虑"), ("以上学历", "及以上学历"), ("相关专业", "相关领域专业"), ("经验", "经历"),
    ("参与", "参加"), ("开发", "研发"), ("能力", "本领"), ("工作", "任务"), ("较强", "很强"),
)
_EXTRA_BULLETS = (
    "具有良好的沟通能力和团队合作精神，责任心强",
    "能够承受一定的工作压力，学习能力强",
    "有大型项目经验者优先考虑",
    "英语读写熟练，能阅读英文技术文档",
)
_STACK_SWAPS = {"Java开发工程师": ("java", "python", "Python开发工程师"), "Python开发工程师": ("python", "java", "Java开发工程师"),
                "C++开发工程师": ("c++", "java", "Java开发工程师"), "前端开发工程师": ("前端", "后端", "后端开发工程师")}
_GENERIC = re.compile(r"沟通|团队|责任心|学历|本科|硕士|压力|学习能力|英语")


def _swap_first(text: str, old: str, new: str) -> str:
    return text.replace(old, new, 1)


def _synonyms(rng: random.Random, bullets: list[str], n: int = 3) -> list[str]:
    bullets = list(bullets)
    pairs = [p for p in _SYNONYMS if any(p[0] in b for b in bullets)]
    for old, new in rng.sample(pairs, min(n, len(pairs))):
        i = next(i for i, b in enumerate(bullets) if old in b)
        bullets[i] = _swap_first(bullets[i], old, new)
    return bullets


def _full_width(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _reformat(rng: random.Random, bullets: list[str]) -> list[str]:
    out = []
    for b in bullets:
        b = b.replace("，", ", ").replace("、", "/").replace("；", ";")
        if rng.random() < 0.4:
            b = _full_width(b)
        out.append("  " + b + " 。")
    return out


@dataclass
class LabeledSet:
    records: dict[str, dict] = field(default_factory=dict)
    pairs: list[tuple[str, str, str, bool]] = field(default_factory=list)  # (a, b, category, same)
    flags: dict[tuple[str, str], str] = field(default_factory=dict)  # pair → expected flag


def _about(base: dict, company: str) -> list[str]:
    # Every posting of a company carries the same company paragraph (a template), plus the base's own about.
    h = sum(map(ord, company))
    para = (f"{company}成立于{2005 + h % 15}年，专注于{_COMPANY_CORES[h % len(_COMPANY_CORES)]}领域，现有员工{(h % 40 + 2) * 50}余人。"
            "公司提供五险一金、带薪年假、年度体检、弹性工作等福利。")
    return [para, *base["about"]]


def render(record: dict) -> str:
    """The JD text of a generated record: about lines, then numbered responsibilities and requirements."""
    out = list(record["about"])
    for heading, key in (("工作职责：", "responsibilities"), ("任职要求：", "requirements")):
        if record[key]:
            out.append(heading)
            out.extend(f"{i}、{b}" for i, b in enumerate(record[key], 1))
    return "\n".join(out)


def to_record(record: dict) -> Record:
    """A generated record as the dedupe step sees the posting: its sections (about, responsibilities,
    requirements, benefit tags) and salary through ``record_from_posting``."""
    sections = {key: record.get(key) or [] for key in ("about", "responsibilities", "requirements", "benefits")}
    return record_from_posting({
        "key": record["key"], "company": record["company"], "title": record["title"], "city": record["city"],
        "url": record.get("url"), "first_seen": record["posted"], "salary": {"raw": record["salary"]},
        "sections": {key: lines for key, lines in sections.items() if lines}})


_BENEFIT_TAGS = ("五险一金", "带薪年假", "定期体检", "节日福利", "员工旅游", "年终奖", "餐补", "弹性工作", "股票期权",
                 "交通补助", "零食下午茶", "通讯补贴")
_SALARIES = ("10-15K", "15-25K", "20-30K·13薪", "30-50K", "8-12K", "12-18K")  # none of the JD postings' salaries
_OTHER_SALARIES = ("40-60K", "6-8K", "18-28K·15薪")  # none of the cards' either
# Bullets that every posting of an outsourcing template carries, whatever the company (written for this set).
_BOILERPLATE = (
    "本科及以上学历，计算机、软件工程或相关专业毕业",
    "具有良好的沟通表达能力和团队合作精神，工作积极主动，责任心强",
    "能够承受一定的工作压力，服从项目安排，适应快节奏的工作环境",
    "熟悉Linux常用命令，了解Git等版本管理工具的使用",
    "具备较强的学习能力和问题分析解决能力，对技术有热情",
    "有大型互联网项目或外包驻场项目经验者优先考虑",
)


def build_labeled_set(bases: list[dict], seed: int = 7) -> LabeledSet:
    """All labeled pairs derived from the bases (deterministic for a given seed)."""
    rng = random.Random(seed)
    out = LabeledSet()
    by_title: dict[str, list[dict]] = defaultdict(list)
    for b in bases:
        by_title[b["title"]].append(b)

    def make(base: dict, suffix: str, **changes) -> str:
        company = changes.pop("company", base["company"])
        rec = {
            "key": f"{base['id']}/{suffix}", "company": company, "title": base["title"], "city": base["city"],
            "about": _about(base, company) if company else list(base["about"]), "requirements": list(base["requirements"]),
            "responsibilities": list(base["responsibilities"]), "posted": "2026-11-01", "salary": "20-30K",
        }
        rec.update(changes)
        out.records[rec["key"]] = rec
        return rec["key"]

    def pair(a: str, b: str, category: str, same: bool, flag: str = "") -> None:
        out.pairs.append((a, b, category, same))
        if flag:
            out.flags[(a, b)] = flag

    for base in bases:
        req, resp = base["requirements"], base["responsibilities"]
        b0 = make(base, "base")
        pair(b0, make(base, "repost", posted="2026-11-20", salary="25-35K·14薪"), "repost", True)
        pair(b0, make(base, "title_decorated", title=base["title"] + rng.choice(("（急招）", "-" + base["city"], " 急聘"))),
             "title_decorated", True)
        shuffled_req, shuffled_resp = rng.sample(req, len(req)), rng.sample(resp, len(resp))
        pair(b0, make(base, "reordered", requirements=shuffled_req, responsibilities=shuffled_resp), "reordered", True)
        pair(b0, make(base, "format_reworded", requirements=_reformat(rng, req), responsibilities=_reformat(rng, resp)),
             "format_reworded", True)
        pair(b0, make(base, "synonyms", requirements=_synonyms(rng, req, 2), responsibilities=_synonyms(rng, resp, 2)),
             "synonyms", True)
        pair(b0, make(base, "bullet_added", requirements=[*req, rng.choice(_EXTRA_BULLETS)]), "bullet_added", True)
        if len(req) + len(resp) >= 5:
            longest = max((req, resp), key=len)
            drop = rng.randrange(len(longest))
            trimmed = [b for i, b in enumerate(longest) if i != drop]
            changes = {"requirements": trimmed} if longest is req else {"responsibilities": trimmed}
            pair(b0, make(base, "bullet_removed", **changes), "bullet_removed", True)
        pair(b0, make(base, "light_combined", requirements=_reformat(rng, _synonyms(rng, [*req, rng.choice(_EXTRA_BULLETS)], 2)),
                      responsibilities=_synonyms(rng, rng.sample(resp, len(resp)), 1), posted="2026-11-15"),
             "light_combined", True)
        city = rng.choice([c for c in _CITIES if c != base["city"]])
        a = (b0, make(base, "other_city", city=city))
        pair(*a, "other_city", True, "different_city")
        agency = rng.choice(_AGENCIES)
        copy = make(base, "agency_copy", company=agency)
        out.records[copy]["about"] = [f"本职位由{agency}代招，用人单位为某知名企业。", *base["about"]]
        pair(b0, copy, "agency_copy", True, "cross_company")

        others = [o for o in bases if o is not base and o["title"] != base["title"]]
        other = rng.choice(others)
        pair(b0, make(other, f"at-{base['id']}", company=base["company"], city=base["city"]), "other_title_same_company", False)
        same_title = [o for o in by_title[base["title"]] if o is not base]
        if same_title:
            twin = rng.choice(same_title)
            pair(b0, make(twin, f"twin-{base['id']}", company=base["company"], city=base["city"], title=base["title"]),
                 "same_title_same_company", False)
            pair(b0, f"{rng.choice(same_title)['id']}/base", "same_title_other_company", False)
        generic = [b for b in req if _GENERIC.search(b)]
        sibling = rng.choice(others)
        pair(b0, make(sibling, f"sibling-{base['id']}", company=base["company"], city=base["city"],
                      requirements=[*sibling["requirements"][:3], *generic]), "template_sibling", False)
        if generic:
            team = rng.choice(others)
            pair(b0, make(team, f"team-{base['id']}", company=base["company"], city=base["city"], title=base["title"],
                          requirements=[*generic, *team["requirements"][:2]], responsibilities=team["responsibilities"]),
                 "same_title_team_variant", False)
        swap = _STACK_SWAPS.get(base["title"])
        if swap and any(swap[0] in b.lower() for b in req + resp):
            old, new, title = swap

            def swapped(lines: list[str]) -> list[str]:
                return [re.sub(re.escape(old), new, b, flags=re.I) for b in lines]

            pair(b0, make(base, "stack_swap", title=title, requirements=swapped(req), responsibilities=swapped(resp)),
                 "stack_swap", False)
    _list_cards(rng, bases, out, make, pair)
    _shared_boilerplate(rng, bases, out, make, pair)
    # same_title_other_company may name a base whose record is made later: every base has one.
    return out


def _list_cards(rng: random.Random, bases: list[dict], out: LabeledSet, make, pair) -> None:
    """List-card pairs for every third base (see the module docstring)."""
    for base in bases[::3]:
        tags = rng.sample(_BENEFIT_TAGS, 6)
        salary = rng.choice(_SALARIES)
        card = {"requirements": [], "responsibilities": [], "about": [], "benefits": tags, "salary": salary}
        first = make(base, "card", **card, url=f"https://jobs.example.com/{base['id']}/card")
        pair(first, make(base, "card-again", **card, url=f"https://jobs.example.com/{base['id']}/card-2"),
             "list_card_again", True)
        pair(make(base, "jd-of-card", salary=salary), make(base, "card-of-jd", **card), "list_card_of_jd", True)
        other = make(base, "card-other-company", **card, company=rng.choice([b["company"] for b in bases if b is not base]))
        pair(first, other, "list_same_tags_other_company", False)
        pair(first, make(base, "card-other-salary", **{**card, "salary": rng.choice(_OTHER_SALARIES)}),
             "list_same_company_other_salary", False)
        hidden = make(base, "card-hidden", **card, company=None, url=f"https://jobs.example.com/{base['id']}/hidden")
        pair(first, hidden, "list_hidden_employer", False)
        pair(hidden, make(base, "hidden-same-url", **card, company=None, url=f"http://JOBS.example.com/{base['id']}/hidden/?utm_source=x"),
             "hidden_employer_same_url", True)


def _shared_boilerplate(rng: random.Random, bases: list[dict], out: LabeledSet, make, pair, companies: int = 40) -> None:
    """Postings of ``companies`` companies built on one outsourcing template (see the module docstring)."""
    duties = [b for base in bases for b in base["responsibilities"] if 12 <= len(b) <= 60]
    keys = []
    for i, base in enumerate(rng.sample(bases, companies)):
        own = rng.sample(duties, 2)
        keys.append(make(base, "boilerplate", title="Java开发工程师", city="北京", requirements=list(_BOILERPLATE),
                         responsibilities=own))
        if i % 4 == 0:
            pair(keys[-1], make(base, "boilerplate-repost", title="Java开发工程师", city="北京",
                                requirements=_synonyms(rng, list(_BOILERPLATE), 2), responsibilities=_synonyms(rng, own, 1),
                                posted="2026-11-20"), "boilerplate_repost", True)
    for i, key in enumerate(keys):
        for other in (keys[(i + 1) % len(keys)], keys[(i + 7) % len(keys)]):
            pair(key, other, "shared_boilerplate_other_company", False)


# --------------------------------------------------------------------------- evaluation


@dataclass
class Report:
    mode: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    flags_ok: int = 0
    flags_total: int = 0
    by_category: Counter = field(default_factory=Counter)  # category → correct
    totals: Counter = field(default_factory=Counter)
    misses: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    def count(self, a: str, b: str, category: str, same: bool, predicted: bool) -> None:
        self.totals[category] += 1
        if predicted == same:
            self.by_category[category] += 1
        else:
            self.misses.append((a, b, category))
        if same and predicted:
            self.tp += 1
        elif same:
            self.fn += 1
        elif predicted:
            self.fp += 1
        else:
            self.tn += 1


def evaluate(data: LabeledSet, mode: str = "pairwise", seed: int = 11) -> Report:
    """Score the clusterer on the labeled pairs; ``mode`` is ``pairwise`` or ``corpus``. Both leave out the
    boilerplate of the whole set, as the dedupe step leaves out the database's."""
    report = Report(mode)
    common = common_shingles(to_record(r) for r in data.records.values())
    if mode == "pairwise":
        for a, b, category, same in data.pairs:
            c = Clusterer(common=common)
            first = c.add(to_record(data.records[a]))
            second = c.add(to_record(data.records[b]))
            predicted = first.cluster_id == second.cluster_id
            report.count(a, b, category, same, predicted)
            flag = data.flags.get((a, b))
            if flag and predicted:
                report.flags_total += 1
                report.flags_ok += bool(getattr(second, flag))
        return report
    keys = list(data.records)
    random.Random(seed).shuffle(keys)
    c = Clusterer(common=common)
    assignments = {k: c.add(to_record(data.records[k])) for k in keys}
    for a, b, category, same in data.pairs:
        predicted = c.cluster_of(a) == c.cluster_of(b)
        report.count(a, b, category, same, predicted)
        flag = data.flags.get((a, b))
        if flag and predicted:
            later = assignments[b] if keys.index(b) > keys.index(a) else assignments[a]
            report.flags_total += 1
            report.flags_ok += bool(getattr(later, flag)) or later.matched_key not in (a, b)
    return report


def print_report(report: Report) -> None:
    print(f"[{report.mode}] pairs {sum(report.totals.values())}  precision {report.precision:.4f}  recall {report.recall:.4f}"
          f"  (tp {report.tp} fp {report.fp} fn {report.fn} tn {report.tn})  flags {report.flags_ok}/{report.flags_total}")
    for category in (*POSITIVE, *NEGATIVE):
        if report.totals[category]:
            print(f"    {category:26s} {report.by_category[category]:4d}/{report.totals[category]:<4d} correct")


def shared_clusters(workdir: Path, top: int = 5) -> None:
    """Per file of ../shared/data/zh: postings, clusters, the ``top`` largest with their company and city
    counts, and the clusters spanning more than two companies with the lowest similarity of a cross-company
    member (a copy must be near-identical) and of two members' JD texts of different companies
    (bench/shared.py ``cluster_report``)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from shared import cluster_report, ingested

    for name, db in ingested(workdir).items():
        report = cluster_report(db, top)
        print(f"{name}: {report['clustered']} postings, {report['clusters']} clusters, {report['duplicates']} duplicates")
        for _, size, companies, cities, reasons in report["largest"]:
            print(f"    size {size:4d}  companies {companies:3d}  cities {cities:2d}  {reasons}")
        wide = report["wide"]
        print(f"    clusters spanning more than 2 companies: {len(wide)}")
        for cid, w in wide.items():
            print(f"      #{cid} size {w['size']}: lowest similarity of a cross-company member {w['cross_company']},"
                  f" of two members of different companies {w['pairs']:.3f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refresh-bases", action="store_true", help="rebuild fixtures/dedupe/bases.jsonl from ../shared/data")
    parser.add_argument("--misses", type=int, default=0, help="print up to N misclassified pairs")
    parser.add_argument("--shared", action="store_true", help="also print the largest clusters of each ../shared/data/zh file")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/jobcrawl-bench-shared"),
                        help="where --shared keeps its databases (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.shared:
        shared_clusters(args.workdir)
    if args.refresh_bases:
        print(f"wrote {refresh_bases()} bases to {BASES.relative_to(ROOT)}")
    data = build_labeled_set(load_bases())
    pos = sum(1 for p in data.pairs if p[3])
    print(f"bases {len(load_bases())}  records {len(data.records)}  pairs {len(data.pairs)} ({pos} positive, {len(data.pairs) - pos} negative)")
    for mode in ("pairwise", "corpus"):
        report = evaluate(data, mode)
        print_report(report)
        for a, b, category in report.misses[: args.misses]:
            print("      miss", category, a, b)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
