"""The market over time on constructed timelines: ``velocity_weekly`` (jobs opened, closed, open at the end of each
ISO week in China time, the median days to close; copies of one job once), ``jobcrawl stats velocity`` and
``stats pay`` (monthly pay quartiles, 样本不足 under 10 jobs), the dashboard's queries, and the pure rules of
normalize/market.py.

The database is made by real ingests of constructed JSONL files, each at its ``--as-of`` (which sets the
postings' first_seen and last_seen). Closing needs a complete listing, which a file ingest is not: the fixture
closes postings with UPDATEs of closed_at (the triggers record the posting_events as a crawl's closing does)."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import run_cli
from crawler.cli import main
from crawler.market import velocity
from normalize.market import Kinds, every_week, median, next_week, velocity as weekly, week_monday, week_of
from normalize.shown import aligned

# ISO weeks of November 2026 (China time): W45 Mon 11-02 … Sun 11-08, W46 11-09 … 11-15, W47 11-16 … 11-22.
RUNS = {  # file → its --as-of
    "oct.jsonl": "2026-10-20T10:00:00+08:00",
    "r1.jsonl": "2026-11-02T10:00:00+08:00",  # Monday of W45
    "r2.jsonl": "2026-11-08T23:30:00+08:00",  # Sunday 23:30: still W45 (15:30 UTC)
    "r3.jsonl": "2026-11-09T00:30:00+08:00",  # Monday 00:30: W46 (Sunday 16:30 UTC)
    "r4.jsonl": "2026-11-18T09:00:00+08:00",  # Wednesday of W47: the database's newest last_seen
}
CLOSED = {  # title → closed_at (UTC)
    "推理引擎工程师": "2026-11-15T15:30:00+00:00",  # Sunday 23:30 China time: W46
    "训练框架工程师": "2026-11-15T16:30:00+00:00",  # Monday 00:30 China time: W47
    "CUDA算子开发工程师": "2026-11-16T02:00:00+00:00",  # the first copy; its job stays open while the second is
    "CUDA算子开发工程师 ": "2026-11-17T02:00:00+00:00",  # the second copy (r2): the job closes in W47
    "AI编译器工程师": "2026-11-17T15:30:00+00:00",  # Tuesday 23:30 China time: W47
}

PHRASES = ["负责芯片验证平台搭建", "编写Verilog测试用例", "参与SoC前端设计", "完成综合与时序分析", "维护仿真回归流程",
           "优化功耗与面积", "对接后端物理设计", "撰写模块设计文档", "支持流片后硅验证", "开发形式验证脚本",
           "参与IP选型评估", "搭建FPGA原型系统", "分析覆盖率并补齐用例", "支持DFT插入与检查", "编写UVM验证环境",
           "参与总线协议设计", "推动低功耗方案落地", "评审架构规格", "定位仿真失败原因", "改进自动化构建工具"]


def _row(title: str, company: str, city: str, category: str, salary: str, description: str, url: str) -> str:
    return json.dumps({"title": title, "company": company, "city": city, "category": category, "salary": salary,
                       "description": description, "url": url}, ensure_ascii=False)


def _chip_jobs(count: int, first: int, rng: random.Random, low: int) -> list[str]:
    """``count`` distinct chip jobs asking for Verilog whose monthly midpoints are ``low``, ``low`` + 2K, …"""
    rows = []
    for i in range(count):
        n = first + i
        picked = rng.sample(PHRASES, 6)
        mid = low + 2 * i
        rows.append(_row(f"芯片验证工程师{n}号岗", f"芯片公司{n}", "上海", "芯片",
                         f"{mid - 2}-{mid + 2}K", f"岗位职责：{'；'.join(picked)}；项目代号X{n * 7919}。"
                                                  f"任职要求：熟悉Verilog，{picked[0]}经验。",
                         f"https://chips.example.com/jobs/{n}"))
    return rows


def _files(folder: Path) -> list[Path]:
    rng = random.Random(41)
    october, november = _chip_jobs(9, 1, rng, 10), _chip_jobs(10, 10, rng, 10)
    copy = november[0].replace("https://chips.example.com/jobs/10", "https://mirror.example.com/chips/10")
    cuda = "岗位职责：负责CUDA算子开发与性能调优，支持大模型训练。任职要求：熟悉CUDA、C++，了解GPU体系结构。"
    rows = {
        "oct.jsonl": october,
        "r1.jsonl": [
            _row("CUDA算子开发工程师", "甲公司", "北京", "人工智能", "20-30K", cuda, "https://a.example.com/1"),
            _row("推理引擎工程师", "甲公司", "上海", "人工智能", "30-40K",
                 "岗位职责：TensorRT推理引擎优化，量化部署。任职要求：熟悉CUDA与Python，有推理框架经验。",
                 "https://a.example.com/2"),
            _row("训练框架工程师", "乙公司", "深圳", "人工智能", "25-35K",
                 "岗位职责：分布式训练框架研发，通信库调优。任职要求：熟悉PyTorch源码与NCCL。", "https://b.example.com/3"),
        ] + november,
        "r2.jsonl": [
            _row("CUDA算子开发工程师", "甲公司", "北京", "人工智能", "20-30K", cuda, "https://mirror.example.com/77"),
            _row("AI编译器工程师", "甲公司", "北京", "人工智能", "30-45K",
                 "岗位职责：深度学习编译器后端开发，MLIR图优化。任职要求：熟悉LLVM、CUDA编程。", "https://a.example.com/4"),
            copy,
        ],
        "r3.jsonl": [
            _row("分布式存储工程师", "乙公司", "上海", "人工智能", "30-50K",
                 "岗位职责：训练数据存储系统设计，对象存储缓存。任职要求：熟悉CUDA直通存储与Go语言。",
                 "https://b.example.com/6"),
            _row("集群调度工程师", "甲公司", "北京", "人工智能", "25-40K",
                 "岗位职责：GPU集群调度系统，Kubernetes资源编排。任职要求：熟悉Kubernetes与Go。", "https://a.example.com/7"),
        ],
        "r4.jsonl": [
            _row("数据平台工程师", "乙公司", "北京", "人工智能", "20-35K",
                 "岗位职责：数据湖建设与Spark作业优化。任职要求：熟悉Spark、Hive。", "https://b.example.com/8"),
        ],
    }
    folder.mkdir()
    paths = []
    for name, lines in rows.items():
        path = folder / name
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def timeline(tmp_path_factory) -> Path:
    """The database of the constructed timeline: each file ingested at its --as-of, then the closings. A copy made
    before the closings is ``before.db`` beside it."""
    work = tmp_path_factory.mktemp("market")
    db = work / "jobs.db"
    for path in _files(work / "in"):
        run_cli("ingest", str(path), "--db", str(db), "--as-of", RUNS[path.name], "--workers", "1", check=True)
    with sqlite3.connect(db) as conn, sqlite3.connect(work / "before.db") as before:
        conn.backup(before)
    with sqlite3.connect(db) as conn:
        for title, at in CLOSED.items():
            first = title == title.strip()  # the trailing space names the second copy
            conn.execute("UPDATE postings SET closed_at = ? WHERE id = (SELECT id FROM postings WHERE title = ?"
                         f" ORDER BY id {'ASC' if first else 'DESC'} LIMIT 1)", (at, title.strip()))
    conn.close()
    return db


def _sql(db: Path, query: str, *args) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(query, args).fetchall()
    finally:
        conn.close()


def _stats(db: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["stats", *args, "--db", str(db)])
    return result.exit_code, result.stdout if result.exit_code == 0 else result.stderr


def test_the_constructed_timeline(timeline):
    """What the tests below count: 28 postings, two jobs of two copies each, 26 jobs."""
    assert _sql(timeline, "SELECT count(*), count(DISTINCT first_seen) FROM postings") == [(28, 5)]
    assert _sql(timeline, "SELECT canonical_posting_id, size FROM clusters ORDER BY id") == [(10, 2), (13, 2)]
    assert _sql(timeline, "SELECT count(*) FROM job_timeline") == [(26,)]
    # the CUDA job: opened with its first copy (posting 10), closed with its last (posting 23)
    assert _sql(timeline, "SELECT * FROM job_timeline WHERE posting_id IN (10, 27) ORDER BY posting_id") == [
        (10, 2, "2026-11-02T02:00:00+00:00", "2026-11-17T02:00:00+00:00", 15.0),
        (27, 1, "2026-11-08T16:30:00+00:00", None, 9.4)]  # open: to the newest last_seen, 11-18 01:00


W = ("week", "scope", "key", "opened", "closed", "open_at_end", "median_days_to_close")
STORED = [
    # Sunday 23:30 China time (AI编译器) opens in W45, Monday 00:30 (集群调度) in W46; 推理引擎 closes on Sunday 23:30
    # (W46, 13.6 days), the CUDA job with its second copy (15.0 days) and AI编译器 (9.0 days) in W47
    pytest.param("company", "甲公司", [("2026-W45", 3, 0, 3, None), ("2026-W46", 1, 1, 3, 13.6),
                                      ("2026-W47", 0, 2, 1, 12.0)], id="company"),
    # 训练框架 closes on Monday 00:30 China time: W47
    pytest.param("company", "乙公司", [("2026-W45", 1, 0, 1, None), ("2026-W46", 1, 0, 2, None),
                                      ("2026-W47", 1, 1, 2, 13.6)], id="company-monday-close"),
    pytest.param("skill", "CUDA", [("2026-W45", 3, 0, 3, None), ("2026-W46", 1, 1, 3, 13.6),
                                   ("2026-W47", 0, 2, 1, 12.0)], id="skill"),
    pytest.param("city", "深圳", [("2026-W45", 1, 0, 1, None), ("2026-W47", 0, 1, 0, 13.6)], id="city-quiet-week"),
    pytest.param("city", "北京", [("2026-W45", 2, 0, 2, None), ("2026-W46", 1, 0, 3, None),
                                  ("2026-W47", 1, 2, 2, 12.0)], id="city"),
    # the chip jobs: 9 first seen on 10-20 (W43), 10 on 11-02 and a copy of one of them on 11-08, counted once
    pytest.param("category", "芯片", [("2026-W43", 9, 0, 9, None), ("2026-W45", 10, 0, 19, None)], id="category-copy"),
    pytest.param("skill", "Verilog", [("2026-W43", 9, 0, 9, None), ("2026-W45", 10, 0, 19, None)], id="skill-copy"),
]


@pytest.mark.parametrize("scope, key, expected", STORED)
def test_velocity_weekly_counts_each_job_once_per_week_in_china_time(timeline, scope, key, expected):
    conn = sqlite3.connect(timeline)
    try:
        velocity.refresh(conn)
        got = conn.execute("SELECT week, opened, closed, open_at_end, median_days_to_close FROM velocity_weekly"
                           " WHERE scope = ? AND key = ? ORDER BY week", (scope, key)).fetchall()
    finally:
        conn.close()
    assert got == expected


def test_jobs_of_one_kind_count_alike():
    kinds = Kinds()
    assert [kinds.of("2026-11-02T02:00:00+00:00", None),  # Monday 10:00 in China: W45
            kinds.of("2026-11-03T00:00:00+00:00", "2026-11-13T00:00:00+00:00"),
            kinds.of("2026-11-09T00:00:00+00:00", None),
            kinds.of("2026-11-08T15:00:00+00:00", None)] == [0, 1, 2, 0]  # Sunday 23:00 in China: W45 still
    timelines = kinds.timelines
    assert timelines == [("2026-W45", None, None), ("2026-W45", "2026-W46", 10.0), ("2026-W46", None, None)]
    rows = weekly(timelines, [("skill", "CUDA", 0, 2), ("skill", "CUDA", 1, 1), ("skill", "CUDA", 2, 1),
                              ("city", "杭州", 0, 2)])
    assert [tuple(r.values()) for r in rows] == [
        ("2026-W45", "city", "杭州", 2, 0, 2, None),
        ("2026-W45", "skill", "CUDA", 3, 0, 3, None),
        ("2026-W46", "skill", "CUDA", 1, 1, 3, 10.0),
    ]


def test_the_corpus_steps_keep_the_table(timeline):
    """Every run's corpus steps stored it: before the closings, nothing closed."""
    assert _sql(timeline.with_name("before.db"), "SELECT week, opened, closed, open_at_end FROM velocity_weekly"
                " WHERE scope = 'company' AND key = '甲公司' ORDER BY week") == [
        ("2026-W45", 3, 0, 3), ("2026-W46", 1, 0, 4)]


@pytest.fixture
def stale(timeline, tmp_path) -> Path:
    """A copy of the timeline before its closings, with the first closing made since its table was stored."""
    db = tmp_path / "jobs.db"
    with sqlite3.connect(timeline.with_name("before.db")) as source, sqlite3.connect(db) as copy:
        source.backup(copy)
        copy.execute("UPDATE postings SET closed_at = ? WHERE title = ?", (CLOSED["推理引擎工程师"], "推理引擎工程师"))
    source.close()
    copy.close()
    return db


def test_stats_velocity_stores_a_stale_table_again(stale):
    code, out = _stats(stale, "velocity", "--by", "company", "--key", "甲公司", "--json")
    assert (code, [json.loads(line)["closed"] for line in out.splitlines()]) == (0, [0, 1, 0])  # W47 filled in
    assert _sql(stale, "SELECT week, closed, open_at_end, median_days_to_close FROM velocity_weekly"
                       " WHERE scope = 'company' AND key = '甲公司'") == [("2026-W45", 0, 3, None), ("2026-W46", 1, 3, 13.6)]


def test_a_database_that_cannot_be_written_is_computed_without_storing(stale):
    conn = sqlite3.connect(stale)
    try:
        rows = velocity.weeks(conn, "company", "甲公司", writable=False)
        stored = conn.execute("SELECT week, closed FROM velocity_weekly WHERE key = '甲公司'").fetchall()
    finally:
        conn.close()
    assert ([r["closed"] for r in rows], stored) == ([0, 1, 0], [("2026-W45", 0), ("2026-W46", 0)])


def test_jobcrawl_dedupe_computes_the_table_again(stale):
    result = CliRunner().invoke(main, ["dedupe", "--db", str(stale)])
    assert result.exit_code == 0, result.output
    assert _sql(stale, "SELECT closed FROM velocity_weekly WHERE key = '甲公司' AND week = '2026-W46'") == [(1,)]


def test_scraped_keys_are_escaped(stale):
    with sqlite3.connect(stale) as conn:
        conn.execute("UPDATE postings SET company = ? WHERE company = '乙公司'", ("乙\x1b[31m公司\n",))
    conn.close()
    assert _stats(stale, "velocity", "--by", "company", "--top", "1", "--since", "2026-11-16") == (0, (
        "week      company           opened  closed  open  median days to close\n"
        "2026-W47  乙\\x1b[31m公司\\n       1       0     3\n"))
    code, out = _stats(stale, "velocity", "--by", "company", "--key", "乙\x1b[31m公司\n", "--json")
    assert out.splitlines()[0].startswith('{"week": "2026-W45", "scope": "company", "key": "乙\\u001b[31m公司\\n"')


def _line(week: str, scope: str, key: str, *figures) -> str:
    return json.dumps(dict(zip(W, (week, scope, key, *figures))), ensure_ascii=False) + "\n"


@pytest.mark.parametrize("args, expected", [
    pytest.param(["--by", "company", "--key", "甲公司"], [
        _line("2026-W45", "company", "甲公司", 3, 0, 3, None), _line("2026-W46", "company", "甲公司", 1, 1, 3, 13.6),
        _line("2026-W47", "company", "甲公司", 0, 2, 1, 12.0)], id="company"),
    pytest.param(["--by", "city", "--key", "深圳"], [  # the quiet week filled in
        _line("2026-W45", "city", "深圳", 1, 0, 1, None), _line("2026-W46", "city", "深圳", 0, 0, 1, None),
        _line("2026-W47", "city", "深圳", 0, 1, 0, 13.6)], id="quiet-week"),
    pytest.param(["--by", "city", "--key", "深圳", "--since", "2026-11-15"], [  # a Sunday: its week, W46
        _line("2026-W46", "city", "深圳", 0, 0, 1, None), _line("2026-W47", "city", "深圳", 0, 1, 0, 13.6)], id="since"),
    pytest.param(["--by", "city", "--key", "深圳", "--since", "2026-11-15T16:30:00+00:00"], [  # Monday 00:30 China time
        _line("2026-W47", "city", "深圳", 0, 1, 0, 13.6)], id="since-datetime"),
    pytest.param(["--by", "skill", "--key", "verilog"], [  # an alias, any case; open: filled through W47
        _line("2026-W43", "skill", "Verilog", 9, 0, 9, None), _line("2026-W44", "skill", "Verilog", 0, 0, 9, None),
        _line("2026-W45", "skill", "Verilog", 10, 0, 19, None), _line("2026-W46", "skill", "Verilog", 0, 0, 19, None),
        _line("2026-W47", "skill", "Verilog", 0, 0, 19, None)], id="skill-filled-to-the-newest-week"),
    pytest.param(["--by", "company", "--top", "1", "--since", "2026-11-02"], [
        _line("2026-W45", "company", "甲公司", 3, 0, 3, None), _line("2026-W46", "company", "甲公司", 1, 1, 3, 13.6),
        _line("2026-W47", "company", "甲公司", 0, 2, 1, 12.0)], id="top"),
])
def test_stats_velocity_json_lines(timeline, args, expected):
    assert _stats(timeline, "velocity", *args, "--json") == (0, "".join(expected))


def test_stats_velocity_prints_an_aligned_table(timeline):
    assert _stats(timeline, "velocity", "--by", "company", "--key", "甲公司") == (0, (
        "week      company  opened  closed  open  median days to close\n"
        "2026-W45  甲公司        3       0     3\n"
        "2026-W46  甲公司        1       1     3                  13.6\n"
        "2026-W47  甲公司        0       2     1                  12.0\n"))


def test_stats_velocity_by_category_has_one_row_per_key_and_week(timeline):
    lines = _stats(timeline, "velocity", "--by", "category", "--json")[1].splitlines()
    assert [(r["key"], r["week"], r["opened"], r["open_at_end"]) for r in map(json.loads, lines)] == [
        ("人工智能", "2026-W45", 4, 4), ("人工智能", "2026-W46", 2, 5), ("人工智能", "2026-W47", 1, 3),
        ("芯片", "2026-W43", 9, 9), ("芯片", "2026-W44", 0, 9), ("芯片", "2026-W45", 10, 19),
        ("芯片", "2026-W46", 0, 19), ("芯片", "2026-W47", 0, 19)]


@pytest.mark.parametrize("args, message", [
    pytest.param(["velocity", "--by", "company", "--key", "甲公"],
                 "Error: Invalid value for --key: no job has company '甲公' (did you mean 甲公司?)", id="key"),
    pytest.param(["velocity", "--by", "skill", "--key", "CUDDA"],
                 "Error: Invalid value for --key: no skill 'CUDDA' in the taxonomy (did you mean CUDA?)", id="skill"),
    pytest.param(["velocity", "--by", "city", "--since", "last week"],
                 "Error: Invalid value for --since: 'last week' is not an ISO date or datetime (e.g. 2026-10-01)",
                 id="since"),
    pytest.param(["pay", "--skill", "verilgo"],
                 "Error: Invalid value for --skill: no skill 'verilgo' in the taxonomy (did you mean Verilog?)",
                 id="pay-skill"),
])
def test_usage_errors(timeline, args, message):
    code, err = _stats(timeline, *args)
    assert (code, err.splitlines()[-1]) == (2, message)


def _pay(month, skill, city, category, jobs, p25=None, median=None, p75=None):
    note = None if p25 is not None else "样本不足"
    return json.dumps({"month": month, "skill": skill, "city": city, "category": category, "currency": "CNY",
                       "jobs": jobs, "p25": p25, "median": median, "p75": p75, "note": note}, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("args, expected", [
    # October: 9 jobs (样本不足); November: 10 (the copy of one counted once), midpoints 10K, 12K … 28K
    pytest.param(["--category", "芯片"], [_pay("2026-10", None, None, "芯片", 9),
                                          _pay("2026-11", None, None, "芯片", 10, 14500.0, 19000.0, 23500.0)],
                 id="category"),
    pytest.param(["--skill", "verilog", "--city", "上海"], [
        _pay("2026-10", "Verilog", "上海", None, 9), _pay("2026-11", "Verilog", "上海", None, 10, 14500.0, 19000.0, 23500.0)],
                 id="skill-city"),
    pytest.param(["--category", "人工智能"], [_pay("2026-11", None, None, "人工智能", 7)], id="too-few"),
])
def test_stats_pay_json_lines(timeline, args, expected):
    assert _stats(timeline, "pay", *args, "--json") == (0, "".join(expected))


def test_stats_pay_shows_too_small_samples_as_words(timeline):
    assert _stats(timeline, "pay", "--skill", "Verilog") == (0, (
        "month    currency  jobs       p25  median     p75\n"
        "2026-10  CNY          9  样本不足\n"
        "2026-11  CNY         10    14,500  19,000  23,500\n"))
    assert _stats(timeline, "pay", "--city", "广州") == (0, "")


# --------------------------------------------------------------------------- the dashboard's queries


@pytest.fixture(scope="module")
def ds(timeline):
    from crawler.serve.app import make_datasette

    conn = sqlite3.connect(timeline)
    velocity.refresh(conn)
    conn.close()
    return make_datasette(timeline)


def _query(ds, name: str, **params) -> list[tuple]:
    import asyncio

    sql = ds.metadata("queries", database="jobs")[name]["sql"]
    wanted = {p: params.get(p, "") for p in ds.metadata("queries", database="jobs")[name]["params"]}
    return [tuple(r) for r in asyncio.run(ds.get_database("jobs").execute(sql, wanted)).rows]


def test_hiring_faster_than_last_month(ds):
    """The last 4 weeks are W44-W47 (the newest last_seen is in W47), the 4 before W40-W43."""
    companies = _query(ds, "hiring_faster", scope="company")
    assert companies[:2] == [("company", "甲公司", 4, 0, 4, 1), ("company", "乙公司", 3, 0, 3, 2)]
    assert "芯片公司1" not in [key for _, key, *_ in companies]  # opened in W43 only: not faster
    assert "芯片公司10" in [key for _, key, *_ in companies]  # 1 against 0
    skills = {key: rest for _, key, *rest in _query(ds, "hiring_faster", scope="skill")}
    assert (skills["CUDA"], skills["Verilog"]) == ([4, 0, 4, 1], [10, 9, 1, 19])


def test_weekly_openings_and_pay_over_time(ds):
    assert _query(ds, "weekly_openings", scope="company", key="甲公司") == [
        ("2026-W45", "甲公司", 3, 0, 3, None), ("2026-W46", "甲公司", 1, 1, 3, 13.6), ("2026-W47", "甲公司", 0, 2, 1, 12.0)]
    # the default scope, skill: the 8 with the most jobs opened (CUDA before back end: 4 each, by name)
    assert list(dict.fromkeys(key for _, key, *_ in _query(ds, "weekly_openings"))) == [
        "CUDA", "IC design", "SoC", "Verilog", "simulation", "software testing", "technical documentation",
        "web front end"]
    assert _query(ds, "pay_over_time", category="芯片") == [
        ("2026-10", "CNY", 9, None, None, None, "样本不足"), ("2026-11", "CNY", 10, 14500.0, 19000.0, 23500.0, None)]


def test_the_trends_dashboard_renders(ds):
    from test_browse import get

    assert get(ds, "/-/dashboards/trends").status_code == 200
    charts = ds.plugin_config("datasette-dashboards")["trends"]["charts"]
    assert "scope = coalesce(nullif('company', ''), 'skill')" in charts["company-openings"]["query"]


# --------------------------------------------------------------------------- the rules


@pytest.mark.parametrize("moment, week", [
    pytest.param("2026-11-08T23:30:00+08:00", "2026-W45", id="sunday-late-china"),
    pytest.param("2026-11-09T00:30:00+08:00", "2026-W46", id="monday-early-china"),
    pytest.param("2026-11-08T16:30:00+00:00", "2026-W46", id="sunday-utc-is-monday-in-china"),
    pytest.param("2026-12-31T17:00:00+00:00", "2026-W53", id="new-year-in-week-53"),
    pytest.param("2027-01-03T16:00:00Z", "2027-W01", id="first-monday"),
    pytest.param("2026-11-02T02:00:00", "2026-W45", id="naive-is-utc"),
])
def test_week_of(moment, week):
    assert week_of(moment) == week


@pytest.mark.parametrize("week, monday, following", [
    pytest.param("2026-W45", "2026-11-02", "2026-W46", id="plain"),
    pytest.param("2026-W53", "2026-12-28", "2027-W01", id="year-end"),
])
def test_week_arithmetic(week, monday, following):
    assert (week_monday(week).isoformat(), next_week(week)) == (monday, following)


@pytest.mark.parametrize("values, expected", [
    pytest.param([], None, id="none"), pytest.param([3.0], 3.0, id="one"),
    pytest.param([9.0, 15.0], 12.0, id="even"), pytest.param([5.0, 1.0, 3.0], 3.0, id="odd"),
])
def test_median(values, expected):
    assert median(values) == expected


def test_every_week_fills_the_quiet_weeks_while_jobs_are_open():
    rows = [{"week": "2026-W52", "scope": "city", "key": "A", "opened": 2, "closed": 0, "open_at_end": 2,
             "median_days_to_close": None},
            {"week": "2026-W51", "scope": "city", "key": "B", "opened": 1, "closed": 1, "open_at_end": 0,
             "median_days_to_close": 0.5}]
    assert [(r["key"], r["week"], r["opened"], r["open_at_end"]) for r in every_week(rows, "2027-W02")] == [
        ("A", "2026-W52", 2, 2), ("A", "2026-W53", 0, 2), ("A", "2027-W01", 0, 2), ("A", "2027-W02", 0, 2),
        ("B", "2026-W51", 1, 0)]


def test_aligned_counts_wide_characters_twice_and_escapes():
    assert aligned([["key", "n"], ["甲公司", "3"], ["a\x1bb", "12"]], right=frozenset({1})) == [
        "key      n", "甲公司   3", "a\\x1bb  12"]
