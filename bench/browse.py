"""Benchmark: browsing 500,000 postings in Datasette through ``jobcrawl serve``.

Generates a database of N postings (default 500,000) by varying the rows the two seeds ingest to
(company, title, city, category, work mode, salary, skills, dates, both evaluations) and drawing
the JD bullets from the seeds (one posting in five), the 296 real Chinese JDs of
``fixtures/dedupe/bases.jsonl`` or a few English bullets (one in eight),
written directly with ``executemany`` into a database made by ``crawler.store.schema.open_db``, with
the skills table synced from the taxonomy, sections, evaluations, posting_skills and the
full-text index filled from the stored rows (``crawler.store.fts.rebuild``).
Then starts ``jobcrawl serve`` on 127.0.0.1 (the normal read-only mode, or ``--immutable``), waits
until it has warmed its cache, and measures over HTTP:

COLD (the figure that counts): for each kind of page, 12 URLs never requested before, one request
each, as a visitor typing new filters and searches sees them; the median, p90 and max per kind:

- the listing filtered by one city; by city + work mode + minimum monthly pay;
- the listing of one skill (``_skill=``, where the skills facet and the skill links lead);
- searches: two-character and longer Chinese terms, English words, Chinese + English (the
  listing shows the matched text of each row);
- the ``postings`` table filtered by one category, and searched;
- the ``search`` canned query (best match first, with snippets);
- posting pages; the listing of one company (as a posting page links to it: 12 distinct companies of
  postings drawn at random, so mostly large ones; the jobs view's company, which no index answers);
- the market charts' data for one city (the dashboard asks for three; reported, warmed only for
  the page without a filter).

The search terms match from 1% to 40% of the generated postings (the JD bullets come from a few
hundred JDs, so a term is in many postings). WARM: one URL per page of ``PAGES``, its first request
and the median of the repeats, which ``jobcrawl serve``'s result cache of the immutable file serves.
Also the server's start time (it loads its facet index and warms the listing, the postings table
and the charts), the database size, the generation time, the load average and the server's peak RSS.

    python bench/browse.py                       # 500,000 postings, 20 repeats per warm page
    python bench/browse.py --n 20000 --requests 5
    python bench/browse.py --db /tmp/browse.db   # reuse a database generated before (same N)
    python bench/browse.py --immutable           # jobcrawl serve --immutable

Target (issues 8 and #28.5): the cold median of every kind < 200 ms.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import random
import resource
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.store import fts  # noqa: E402
from crawler.store.codes import HEADING_CODES, SECTION_CODES, coded  # noqa: E402
from crawler.store.rows import LEVEL_COLS, STORED_AS, scorer_stored  # noqa: E402
from crawler.store.schema import open_db  # noqa: E402
from crawler.store.sections import section_bullets, section_text  # noqa: E402
from crawler.store.skills import insert_skill_rows, sync_taxonomy  # noqa: E402
from normalize.posting import level_for  # noqa: E402
from normalize.skills import load_taxonomy  # noqa: E402

ANCHOR = datetime(2026, 11, 29, 4, tzinfo=timezone.utc)
CITIES = {"北京": 18, "上海": 16, "深圳": 12, "杭州": 9, "广州": 6, "苏州": 4, "南京": 4, "成都": 4, "武汉": 3,
          "西安": 3, "合肥": 2, "重庆": 2, "天津": 2, "长沙": 2, "厦门": 1, "无锡": 1, "宁波": 1, "青岛": 1,
          "济南": 1, "郑州": 1, "珠海": 1, "东莞": 1, "佛山": 1, "大连": 1, "沈阳": 1, "Singapore": 1,
          "San Francisco": 1, "Seattle": 1, "London": 1, "Remote": 1}
CATEGORIES = {"人工智能": 20, "算法优化工程师": 10, "自动驾驶": 10, "深度学习": 8, "高性能计算": 6, "机器学习": 6,
              "计算机视觉": 6, "自然语言处理": 6, "芯片设计": 5, "后端开发": 5, "推荐算法": 4, "数据挖掘": 4,
              "嵌入式": 3, "测试开发": 2, "运维开发": 2}
WORK_MODES = {"仅现场办公": 70, "混合办公": 22, "远程办公": 8}
TITLES = ["AI算子开发工程师", "模型训练优化开发工程师", "大模型推理优化工程师", "CUDA高性能计算工程师", "AI编译器工程师",
          "自动驾驶感知算法工程师", "深度学习框架开发工程师", "GPU性能优化工程师", "端侧模型部署工程师", "分布式训练工程师",
          "LLM Inference Engineer", "GPU Kernel Engineer", "ML Systems Engineer", "Autonomous Driving Perception Engineer"]
SENIORITY = ["普通员工/个人贡献者", "资深员工", "专家", "实习生", "团队负责人"]
SYLLABLES = "星云智擎睿芯算维元启航深度量子视界天工极光灵犀智源海纳远景墨子鲲鹏北辰九章曦和云端数智奇点玄武青藤长风"
EN_BULLETS = [
    "Design and optimize CUDA kernels for transformer inference on NVIDIA GPUs",
    "Profile training jobs with Nsight Systems and remove communication bottlenecks",
    "Build the serving stack for large language models with vLLM and TensorRT-LLM",
    "Experience with PyTorch internals, custom operators and torch.compile",
    "Strong C++ and Python; familiarity with Triton or CUTLASS is a plus",
    "Own the distributed training infrastructure on Kubernetes and Slurm",
    "Work with researchers to quantize and deploy models on edge devices",
    "Improve the perception stack of our autonomous driving platform",
]


def _picker(rng: random.Random, names: list[str], weights: list[float]):
    """A function drawing one of ``names`` with the given weights."""
    cum = list(itertools.accumulate(weights))
    return lambda: rng.choices(names, cum_weights=cum)[0]


def _companies(rng: random.Random, n: int = 6000) -> tuple[list[str], list[float]]:
    names = sorted({rng.choice(SYLLABLES) + rng.choice(SYLLABLES) + rng.choice(["科技", "智能", "汽车", "半导体", "信息", "机器人"])
                    for _ in range(n * 2)})[:n]
    rng.shuffle(names)
    names[:5] = ["吉利汽车", "初速度", "地平线", "字节跳动", "阿里云"]
    return names, [1 / (r + 1) ** 0.9 for r in range(len(names))]


def _templates(workdir: Path) -> list[dict]:
    """The seeds as ingested by the real CLI: each posting row with its child rows."""
    db = workdir / "seeds.db"
    subprocess.run([sys.executable, "-m", "crawler.cli", "ingest", *map(str, sorted((ROOT / "seeds").glob("*.txt"))), "--db", str(db),
                    "--as-of", "2026-11-29T12:00:00+08:00"], cwd=ROOT, check=True, capture_output=True)
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    out = []
    for row in conn.execute("SELECT * FROM postings ORDER BY id"):
        pid = row["id"]
        out.append({
            "row": dict(row),
            "section_rows": [dict(r) for r in conn.execute("SELECT * FROM sections WHERE posting_id = ? ORDER BY seq", (pid,))],
            "evaluation": dict(conn.execute("SELECT * FROM evaluations WHERE posting_id = ? AND scorer = 'source'", (pid,)).fetchone()),
            "app": conn.execute("SELECT * FROM app_market WHERE posting_id = ?", (pid,)).fetchone(),
            "skills": json.loads(row["skills"]),
            "tags": json.loads(row["tags"]),
        })
    return out


def generate(path: Path, n: int, *, seed: int = 7, batch: int = 5000) -> None:
    """Write ``n`` varied postings with their child rows and FTS rows into a new database at ``path``."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        templates = _templates(Path(tmp))
    taxonomy = load_taxonomy()
    head = list(dict.fromkeys(s for t in templates for s in t["skills"]))
    tail = [s.name for s in taxonomy.skills if s.name not in head]
    bases = [{"title": b["title"], "sections": b} for b in map(json.loads, (ROOT / "fixtures/dedupe/bases.jsonl").open())]
    for t in templates:
        t["sections"] = {sec["key"]: section_bullets(sec["text"]) for sec in t["section_rows"]}
    skill_pool = head + tail
    skill_cum = list(itertools.accumulate(1 / (r + 1) ** 0.8 for r in range(len(skill_pool))))
    company = _picker(rng, *_companies(rng))
    city, category, work_mode = (_picker(rng, list(t), list(t.values())) for t in (CITIES, CATEGORIES, WORK_MODES))

    db = open_db(path)
    sync_taxonomy(db, taxonomy)
    conn = db.conn
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -400000")
    columns = [r[1] for r in conn.execute("PRAGMA table_info(postings)")]
    insert_posting = f"INSERT INTO postings ({', '.join(f'[{c}]' for c in columns)}) VALUES ({', '.join('?' * len(columns))})"
    ev_cols = [r[1] for r in conn.execute("PRAGMA table_info(evaluations)")]  # the stored ones, levels generated
    insert_ev = f"INSERT INTO evaluations ({', '.join(ev_cols)}) VALUES ({', '.join('?' * len(ev_cols))})"

    for start in range(0, n, batch):
        postings, apps, sections, evals, skills = [], [], [], [], []
        for i in range(start, min(n, start + batch)):
            pid = i + 1
            t = templates[i % len(templates)]
            row = dict(t["row"])
            english = rng.random() < 0.12
            lo = rng.choice([8, 12, 15, 18, 20, 25, 30, 35, 40, 45, 50, 60]) * 1000
            hi = lo * rng.choice([1.0, 1.3, 1.5, 1.6, 2.0])
            months = rng.choice([12, 12, 13, 14, 15, 16])
            negotiable = rng.random() < 0.08
            chosen = list(dict.fromkeys(rng.choices(skill_pool, cum_weights=skill_cum, k=rng.randint(8, 30))))
            first = ANCHOR - timedelta(days=rng.random() ** 2 * 180)
            ours = max(30, min(98, round(rng.gauss(68, 10))))
            source = max(30, min(98, round(rng.gauss(72, 9))))
            row.update({
                "id": pid, "key": f"bench{pid:07d}", "source_id": f"bench/{i // 100:05d}.txt#{i % 100}",
                "locator": f"bench/{i // 100:05d}.txt", "position": i % 100,
                "company": company(),
                "title": rng.choice(TITLES[10:] if english else TITLES[:10]),
                "city": city(), "category": category(), "work_mode": work_mode(), "seniority": rng.choice(SENIORITY),
                "skills": json.dumps(chosen, ensure_ascii=False),
                "salary_raw": "面议" if negotiable else f"{lo // 1000:.0f}-{hi / 1000:.0f}K·{months}薪",
                "salary_status": "negotiable" if negotiable else "parsed",
                "salary_min": None if negotiable else lo, "salary_max": None if negotiable else hi,
                "salary_months": months,
                "salary_monthly_min": None if negotiable else lo, "salary_monthly_max": None if negotiable else hi,
                "salary_annual_min": None if negotiable else lo * months,
                "salary_annual_max": None if negotiable else hi * months,
                "posted_at": first.isoformat(), "first_seen_stored": first.isoformat(),
                "last_seen_stored": (first + timedelta(days=rng.random() * 20)).isoformat(),
                "closed_at": (first + timedelta(days=25)).isoformat() if rng.random() < 0.05 else None,
                "content_hash_stored": hashlib.sha256(f"bench{pid}".encode()).digest(),
                "score": ours, "score_level": level_for(ours), "score_by": "jobcrawl-v1",
            })
            row["remote"] = int(row["work_mode"] == "远程办公")
            postings.append([row.get(c) for c in columns])
            if t["app"] is not None:
                apps.append((pid, *tuple(t["app"])[1:]))

            base = t if rng.random() < 0.2 or english else rng.choice(bases)
            keep: dict[str, tuple[str, list[str]]] = {}
            for key, heading in (("about", "关于这个职位"), ("requirements", "最低要求"), ("responsibilities", "工作职责")):
                items = list(base["sections"].get(key, []))
                if key == "requirements":
                    rng.shuffle(items)
                    items = items[: max(2, len(items) - rng.randint(0, 3))]
                if items:
                    keep[key] = (heading, items)
            if english:
                keep = {"requirements": ("Requirements", rng.sample(EN_BULLETS, 4))}
            elif base is not t:
                row["title"] = base["title"]
            keep.setdefault("responsibilities", ("工作职责", []))[1].append(
                f"参与第{pid}号项目的研发与交付，编号{pid * 7919 % 100000}")
            own = [(pid, seq, coded(key, SECTION_CODES), coded(heading, HEADING_CODES), section_text(key, items))
                   for seq, (key, (heading, items)) in enumerate(keep.items())]
            sections.extend(own)

            ev = dict(t["evaluation"], posting_id=pid, overall=source, overall_level_given=level_for(source))
            evals.append([ev[c] for c in ev_cols])
            ev |= {"scorer_stored": scorer_stored("jobcrawl-v1"), "overall": ours} | {STORED_AS[c]: None for c in LEVEL_COLS}
            evals.append([ev[c] for c in ev_cols])
            skills.extend((pid, s, "requirements", seq, 1, 0, len(s)) for seq, s in enumerate(chosen))

        with conn:
            conn.executemany(insert_ev, evals)  # before the postings rows: the score triggers find nothing to update
            conn.executemany(insert_posting, postings)
            if apps:
                conn.executemany(f"INSERT INTO app_market VALUES ({', '.join('?' * len(apps[0]))})", apps)
            conn.executemany("INSERT INTO sections (posting_id, seq, key_stored, heading_stored, text) VALUES (?,?,?,?,?)",
                             sections)
            insert_skill_rows(conn, skills)
        print(f"\r  generated {min(n, start + batch):,}/{n:,}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    with conn:
        fts.rebuild(conn)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('bench_postings', ?)", (str(n),))
    conn.execute("PRAGMA optimize")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


# --------------------------------------------------------------------------- serving and timing


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, failed: list[str] | None = None) -> float:
    """Milliseconds until the whole answer was read; an answer other than 200 raises, or is noted in
    ``failed`` when given."""
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            response.read()
    except urllib.error.HTTPError as error:
        if failed is None:
            raise RuntimeError(f"{url}: HTTP {error.code}") from error
        failed.append(f"HTTP {error.code} {urllib.parse.unquote(url)}")
    return (time.perf_counter() - start) * 1000


def _wait(url: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"jobcrawl serve exited {proc.returncode}")
        try:
            _get(url)
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not answer in {timeout} s")


PAGES = {
    "listing, default sort and facets": "/jobs/jobs",
    "filtered (city, work mode, pay ≥ 40K)": "/jobs/jobs?city=上海&work_mode=混合办公&salary__gte=40000",
    "search, 2-char Chinese (算子)": "/jobs/jobs?_search=算子",
    "search, English word (CUDA)": "/jobs/jobs?_search=CUDA",
    "search, both (算子 CUDA)": "/jobs/jobs?_search=算子 CUDA",
    "postings table, default facets": "/jobs/postings",
    "posting page": "/jobs/postings/{middle}",
}

# Cold requests: per page kind, URLs never requested before (none of them is in PAGES or shares its
# query with another), one request each, as a visitor typing new filters and searches sees them.
_SEARCH_ZH = ["算子", "推理", "量化", "感知", "训练", "编译", "部署", "芯片", "规划", "分布式", "自动驾驶", "性能优化"]
_SEARCH_EN = ["PyTorch", "Triton", "vLLM", "TensorRT", "Kubernetes", "C++", "Python", "GPU", "Nsight", "CUTLASS", "Slurm", "SLAM"]
_SEARCH_BOTH = ["感知 PyTorch", "算子 C++", "部署 Python", "性能 CUDA", "大模型 PyTorch", "推理 C++", "量化 Python",
                "训练 CUDA", "编译 C++", "芯片 Python", "规划 C++", "自动驾驶 Python"]
_CITIES = ["北京", "深圳", "杭州", "广州", "苏州", "南京", "成都", "武汉", "西安", "合肥", "重庆", "天津"]
_SKILLS = ["CUDA", "PyTorch", "C++", "Python", "Triton", "TensorRT", "Linux", "GPU", "LLM", "Docker", "Kubernetes", "FlashAttention"]
COLD_PAGES = {
    "listing, one city": [f"/jobs/jobs?city={c}" for c in _CITIES],
    "filtered (city, work mode, pay ≥)": [
        f"/jobs/jobs?city={c}&work_mode={m}&salary__gte={p}"
        for c, m, p in zip(_CITIES, itertools.cycle(["仅现场办公", "混合办公", "远程办公"]), itertools.cycle([20000, 30000, 45000, 60000]))],
    "skill link (_skill, facet and cells)": [f"/jobs/jobs?_skill={s}" for s in _SKILLS],
    "search, Chinese": [f"/jobs/jobs?_search={t}" for t in _SEARCH_ZH],
    "search, English": [f"/jobs/jobs?_search={t}" for t in _SEARCH_EN],
    "search, Chinese + English": [f"/jobs/jobs?_search={t}" for t in _SEARCH_BOTH],
    "postings table, one category": [f"/jobs/postings?category={c}" for c in list(CATEGORIES)[:12]],
    "postings table, search": [f"/jobs/postings?_search={t}" for t in ["CUDA", "感知", "vLLM", "量化 C++", "TensorRT", "编译器",
                                                                       "PyTorch 训练", "Linux", "推理", "GPU 训练", "Triton", "部署"]],
    "search canned query (snippets)": [f"/jobs/search?q={t}" for t in ["量化", "推理", "vLLM", "CUDA 算子", "感知", "Triton", "部署",
                                                                     "编译器", "TensorRT", "分布式 训练", "芯片", "PyTorch"]],
    "posting page": [f"/jobs/postings/{{n{k}}}" for k in range(12)],
    "listing, one company (a posting's link)": [f"/jobs/jobs?company={{c{k}}}" for k in range(12)],
    "market charts, one city (3 queries)": [f"@charts city={c}" for c in _CITIES],
}


def _url(base: str, path: str) -> str:
    return base + urllib.parse.quote(path, safe="/?=&_")


def _quantile(values: list[float], q: float) -> float:
    """The q-quantile with linear interpolation between the nearest ranks (numpy's default)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    lo = int(at)
    return ordered[lo] + (ordered[min(lo + 1, len(ordered) - 1)] - ordered[lo]) * (at - lo)


def _charts(base: str, params: str, failed: list[str]) -> float:
    """Milliseconds until the data of every market chart has come, asked for at once as the
    dashboard page does (``params``: its filters, ``city=…``)."""
    from concurrent.futures import ThreadPoolExecutor

    from browse.metadata import build_metadata

    charts = build_metadata()["plugins"]["datasette-dashboards"]["market"]["charts"].values()
    urls = [f"{base}/jobs.json?" + urllib.parse.urlencode({"sql": chart["query"], **dict([params.split("=", 1)]),
                                                          "min_postings": "10", "_shape": "objects"})
            for chart in charts]
    start = time.perf_counter()
    with ThreadPoolExecutor(len(urls)) as pool:
        list(pool.map(lambda url: _get(url, failed), urls))
    return (time.perf_counter() - start) * 1000


def _cold(base: str, path: str, failed: list[str]) -> float:
    if path.startswith("@charts "):
        return _charts(base, path.split(" ", 1)[1], failed)
    return _get(_url(base, path), failed)


def measure(db: Path, requests: int, n: int, *, immutable: bool = False) -> dict[str, Any]:
    """Latency in ms over HTTP, once the server has warmed its cache: every URL of ``COLD_PAGES``
    requested once (cold: never requested before), then each page of ``PAGES`` requested
    ``requests + 1`` times (its first request, then the repeats the result cache serves). Also the
    seconds until the server answered and until it was warm, its peak RSS in MB and its log lines."""
    port = _free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "crawler.cli", "serve", "--db", str(db), "--port", str(port),
                             *(["--immutable"] if immutable else [])],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(iter(proc.stderr.readline, "")), daemon=True).start()
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(11)
    ids = {f"n{k}": rng.randrange(1, n + 1) for k in range(12)}
    companies: list[str] = []  # 12 distinct companies of postings drawn at random, as a posting page links to them
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        while len(companies) < 12:
            found = conn.execute("SELECT coalesce(company, '（企业未公开）') FROM postings WHERE id = ?",
                                 (rng.randrange(1, n + 1),)).fetchone()
            if found and found[0] not in companies:
                companies.append(found[0])
    ids.update({f"c{k}": company for k, company in enumerate(companies)})
    try:
        _wait(base + "/-/versions.json", proc)
        answered = time.perf_counter() - start
        deadline = time.monotonic() + 1800
        while not any("cache warmed" in line for line in log) and time.monotonic() < deadline:
            time.sleep(0.5)
        warmed = time.perf_counter() - start
        failed: list[str] = []
        cold = {name: [_cold(base, path.format(**ids), failed) for path in paths] for name, paths in COLD_PAGES.items()}
        repeat = {}
        for name, path in PAGES.items():
            url = _url(base, path.format(middle=n // 2))
            first = _get(url)
            times = [_get(url) for _ in range(requests)]
            repeat[name] = {"first_ms": first, "median_ms": statistics.median(times), "max_ms": max(times)}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return {"cold": cold, "failed": failed, "repeat": repeat, "answered_s": answered, "warmed_s": warmed,
            "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "log": log}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500_000, help="postings to generate")
    parser.add_argument("--requests", type=int, default=20, help="measured requests per page")
    parser.add_argument("--db", type=Path, help="database to (re)use; generated when absent or of another N")
    parser.add_argument("--immutable", action="store_true", help="serve with --immutable instead of the normal read-only mode")
    args = parser.parse_args()

    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory()
        args.db = Path(tmp.name) / "jobs.db"
    have = None
    if args.db.exists():
        with sqlite3.connect(args.db) as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'bench_postings'").fetchone()
            have = int(row[0]) if row else None
    if have != args.n:
        args.db.unlink(missing_ok=True)
        start = time.perf_counter()
        generate(args.db, args.n)
        print(f"generated {args.n:,} postings in {time.perf_counter() - start:.0f} s → {args.db} "
              f"({args.db.stat().st_size / 2**20:,.0f} MB)")
    else:
        print(f"reusing {args.db} ({args.n:,} postings, {args.db.stat().st_size / 2**20:,.0f} MB)")

    m = measure(args.db, args.requests, args.n, immutable=args.immutable)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"jobcrawl serve answered after {m['answered_s']:.1f} s, warm after {m['warmed_s']:.1f} s:\n  " + "  ".join(m["log"]))
    print(f"\nhttp://127.0.0.1, {args.n:,} postings, {'--immutable' if args.immutable else 'read-only (the default)'},"
          f" load average {load}")
    print("\nCOLD — the figure that counts (#28.5: median < 200 ms): distinct URLs never requested")
    print("before, one request each")
    print(f"{'page kind':36} {'URLs':>4} {'median ms':>10} {'p90 ms':>8} {'max ms':>8}")
    for name, times in m["cold"].items():
        median = statistics.median(times)
        flag = "" if median < 200 else "  > 200 ms target"
        print(f"{name:36} {len(times):4} {median:10.0f} {_quantile(times, 0.9):8.0f} {max(times):8.0f}{flag}")
    for line in m["failed"]:
        print(f"  failed: {line}")
    print(f"\nWARM — one URL each: its first request, then the median and max of {args.requests} repeats")
    print("(repeats come from jobcrawl serve's result cache of the unchanged file; /jobs/jobs was warmed at start)")
    print(f"{'page':40} {'first ms':>9} {'repeat median':>14} {'repeat max':>11}")
    for name, r in m["repeat"].items():
        print(f"{name:40} {r['first_ms']:9.0f} {r['median_ms']:14.0f} {r['max_ms']:11.0f}")
    print(f"server peak RSS {m['rss_mb']:.0f} MB")
    if tmp:
        tmp.cleanup()


if __name__ == "__main__":
    main()
