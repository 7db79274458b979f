"""Generate realistic app-export postings by varying the two real seeds (for benchmarks and tests).

Varied: company, title, salary, city, post time, and the order and subset of the JD bullets.
Everything else keeps the seeds' real layout, so the parser does its real work.
"""

from __future__ import annotations

import random
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED_FILES = sorted((ROOT / "seeds").glob("*.txt"))
FOOTER = "Watch Jobs"  # the line after every page of the app's export (crawler/ingest/appdump.py)

COMPANIES = ["吉利汽车", "初速度", "地平线", "小鹏汽车", "理想汽车", "蔚来", "百度", "阿里云", "腾讯", "字节跳动",
             "商汤科技", "旷视科技", "华为", "寒武纪", "摩尔线程", "壁仞科技", "燧原科技", "智谱", "月之暗面", "MiniMax"]
TITLES = ["AI算子开发工程师", "模型训练优化开发工程师", "大模型推理优化工程师", "CUDA高性能计算工程师", "AI编译器工程师",
          "自动驾驶感知算法工程师", "深度学习框架开发工程师", "GPU性能优化工程师", "端侧模型部署工程师", "分布式训练工程师"]
CITIES = ["北京", "上海", "杭州", "深圳", "苏州", "广州", "南京", "成都", "武汉", "西安"]
SALARIES = ["43K", "3.5万", "30-50K", "25-40K·14薪", "4-6万", "35K-60K/月", "面议", "2.8万", "50-80K·16薪", "18-30K"]
AGES = ["发布于 大约 4 小时前", "发布于 2 小时前", "发布于 1 天前", "发布于 大约 3 天前", "发布于 30 分钟前"]


def _seed_texts() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in SEED_FILES]


def _block(lines: list[str], start: str, ends: tuple[str, ...]) -> tuple[int, int]:
    i = lines.index(start) + 1
    j = i
    while j < len(lines) and lines[j] not in ends:
        j += 1
    return i, j


def variant(text: str, rng: random.Random, serial: int) -> str:
    """One posting derived from a seed page (without its footer line)."""
    lines = text.strip().split("\n")
    if lines[-1] == FOOTER:
        lines = lines[:-1]
    company = f"{rng.choice(COMPANIES)}{serial % 97}"
    title = rng.choice(TITLES)
    city = rng.choice(CITIES)
    lines[0], lines[1], lines[2] = company, title, title
    lines[3] = rng.choice(AGES) + lines[3].split("前", 1)[1]
    k = lines.index("薪资怎么样") + 1
    lines[k] = rng.choice(SALARIES)
    m = lines.index("市场机会") + 2
    parts = lines[m].split(" · ")
    lines[m] = " · ".join([city, *parts[1:-1], f"约 {rng.randint(5, 500)} 个在招"])
    for heading in ("最低要求", "工作职责"):
        if heading in lines:
            i, j = _block(lines, heading, ("工作职责", "优先资格", "AI 洞察"))
            bullets = lines[i:j]
            rng.shuffle(bullets)
            keep = bullets[: max(2, len(bullets) - rng.randint(0, 2))]
            keep.append(f"参与第{serial}号项目的研发与交付，编号{serial * 7919 % 100000}")
            lines[i:j] = keep
    return "\n".join(lines)


def postings(n: int, seed: int = 7) -> list[str]:
    """``n`` distinct posting pages (without footers)."""
    rng = random.Random(seed)
    texts = _seed_texts()
    return [variant(texts[i % len(texts)], rng, i) for i in range(n)]


def _write(folder: Path, pages: list[str], per_file: int) -> list[Path]:
    """Pages as dump files of ``per_file`` pages each (footer after every page); returns the files."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for f in range(0, len(pages), per_file):
        path = folder / f"dump_{f // per_file:05d}.txt"
        path.write_text("".join(f"{page}\n{FOOTER}\n" for page in pages[f : f + per_file]), encoding="utf-8")
        files.append(path)
    return files


def write_dumps(folder: Path, n: int, per_file: int = 100, seed: int = 7) -> list[Path]:
    """Write ``n`` seed variants (:func:`postings`) as dump files of ``per_file`` pages each."""
    return _write(folder, postings(n, seed), per_file)


# --------------------------------------------------------------------------- diverse postings

BASES_FILE = ROOT / "fixtures" / "dedupe" / "bases.jsonl"
MORE_TITLES = TITLES + [
    "Java开发工程师", "Python开发工程师", "前端开发工程师", "数据分析师", "测试开发工程师", "运维工程师", "算法工程师",
    "嵌入式软件工程师", "C++开发工程师", "大数据开发工程师", "机器学习工程师", "计算机视觉工程师", "产品经理", "安卓开发工程师",
    "iOS开发工程师", "数据库管理员", "网络安全工程师", "推荐算法工程师", "语音识别工程师", "高性能计算工程师",
]
TAG_POOL = ["Cuda", "Pytorch", "Python", "Java", "C++", "Linux", "Docker", "Kubernetes", "MySQL", "Redis", "Spark",
            "大模型", "并行计算", "性能调优", "算子优化", "分布式", "微服务", "机器学习", "深度学习", "自动驾驶"]


def _bases() -> list[dict]:
    import json

    return [json.loads(line) for line in BASES_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _replace_block(lines: list[str], heading: str, ends: tuple[str, ...], new: list[str]) -> list[str]:
    if heading not in lines:
        return lines
    i, j = _block(lines, heading, ends)
    return lines[:i] + new + lines[j:]


def mixed_postings(n: int, seed: int = 7, repost_share: float = 0.1) -> list[str]:
    """``n`` postings in the app's layout (seed 000 as the template) with real, mostly distinct JDs:
    requirements and responsibilities drawn from different real JDs (``fixtures/dedupe/bases.jsonl``,
    Apache-2.0 智联/51job lines), varied company, title, city, salary, tags and post time. About
    ``repost_share`` of them repost an earlier one (new post time and salary), as job boards do."""
    rng = random.Random(seed)
    bases = _bases()
    template = (ROOT / "seeds" / "000_7c4373297891d5ca.txt").read_text(encoding="utf-8").strip().split("\n")[:-1]
    out: list[str] = []
    for i in range(n):
        if out and rng.random() < repost_share:
            lines = out[rng.randrange(len(out))].split("\n")
            lines[3] = rng.choice(AGES) + "普通员工/个人贡献者"
            lines[lines.index("薪资怎么样") + 1] = rng.choice(SALARIES)
            out.append("\n".join(lines))
            continue
        a, b = rng.choice(bases), rng.choice(bases)
        lines = list(template)
        title = rng.choice(MORE_TITLES)
        lines[0], lines[1], lines[2] = f"{rng.choice(COMPANIES)}{i % 211}", title, title
        lines[3] = rng.choice(AGES) + "普通员工/个人贡献者"
        tags = rng.sample(TAG_POOL, rng.randint(3, 8))
        lines = _replace_block(lines, "人工智能", ("值不值得投",), tags) if lines[5] == "人工智能" else lines
        lines[lines.index("薪资怎么样") + 1] = rng.choice(SALARIES)
        m = lines.index("市场机会") + 2
        lines[m] = f"{rng.choice(CITIES)} · 人工智能 · 约 {rng.randint(5, 500)} 个在招"
        lines = _replace_block(lines, "关于这个职位", ("最低要求",), a.get("about") or b.get("about") or ["负责相关研发工作"])
        lines = _replace_block(lines, "最低要求", ("工作职责",), a["requirements"] or ["本科及以上学历"])
        lines = _replace_block(lines, "工作职责", ("优先资格", "AI 洞察"), b["responsibilities"] or ["负责相关研发工作"])
        out.append("\n".join(lines))
    return out


def write_mixed_dumps(folder: Path, n: int, per_file: int = 100, seed: int = 7) -> list[Path]:
    """Write ``n`` :func:`mixed_postings` as dump files of ``per_file`` pages each."""
    return _write(folder, mixed_postings(n, seed), per_file)
