"""A constructed corpus for the ghost-signal and likely-employer tests: jobs as CSV rows (the columns of a board's
table export) and the days before "now" each posting was first seen. The database is built by the real ingest
(tests/test_ghost.py): the CSV at ``--as-of`` 30 days before NOW, then again at NOW with E's salary changed (a new
version at NOW; every last_seen NOW). The first-seen days and the closings have no ingest option here (one ingest
per date would be a dozen runs; closing needs a complete listing): :func:`set_dates` sets them with UPDATEs, the
triggers recording the closing and reopening events as a run does."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

NOW = "2026-12-01T00:00:00+00:00"
"""The newest last_seen of the built database: the corpus's "now"."""

JD = {
    "cuda": ["负责大模型推理场景下CUDA算子的设计开发与性能调优", "熟悉GPU体系结构与访存层级，能够定位计算和带宽瓶颈",
             "精通C++与CUDA编程，有FlashAttention或算子融合经验者优先", "参与推理框架的内核适配与版本迭代"],
    "train": ["建设千卡规模的分布式训练平台并保障集群稳定运行", "熟悉PyTorch分布式、NCCL通信与混合精度训练",
              "负责训练任务调度、故障自愈与资源利用率优化", "有Kubernetes和Slurm运维经验者优先"],
    "serve": ["负责在线推理服务的高并发架构设计与容量规划", "熟练使用Go或Rust开发高性能网络服务",
              "优化vLLM与TensorRT-LLM部署链路的延迟与吞吐", "建设服务监控告警与灰度发布体系"],
    "compiler": ["负责深度学习编译器前端图优化与后端代码生成", "熟悉MLIR或TVM的中间表示与Pass开发",
                 "针对自研加速芯片完成算子调度与自动调优"],
    "label": ["规划数据标注平台的产品路线与核心功能", "协调算法与运营团队完成标注质量闭环",
              "设计标注效率与成本的度量指标体系"],
    "mlops": ["搭建模型训练到上线的MLOps流水线", "维护特征平台、模型仓库与实验追踪系统",
              "熟悉Docker、Kubernetes与CI/CD工具链"],
    "vision": ["负责目标检测与多目标跟踪算法的研发与落地", "熟悉YOLO、DETR等主流检测框架及模型压缩方法",
               "完成端侧部署与量化加速"],
    "network": ["负责RDMA与RoCE高性能网络的方案设计与调优", "熟悉InfiniBand组网、拥塞控制与网卡驱动",
                "支撑大模型训练集群的通信性能分析与故障定位", "编写网络自动化测试与巡检工具"],
    "speech": ["负责端到端语音识别模型的训练与优化", "熟悉Conformer、Transducer等声学模型结构",
               "推动流式识别在车载与客服场景落地"],
    "robot": ["负责足式机器人的运动控制算法设计与实现", "熟悉MPC、WBC等控制方法及动力学建模",
              "完成仿真到实机的迁移与参数整定", "熟练使用ROS2与C++进行实时系统开发"],
    "embedded": ["负责嵌入式Linux驱动的开发与移植", "熟悉ARM架构与设备树配置", "完成板级外设的调试与量产支持"],
}
ROBOT_CLOSE = [*JD["robot"][:3], "熟练使用ROS2与Python进行实时系统开发"]
ROBOT_FAR = [*JD["robot"][:3], "熟练使用Python进行仿真数据分析与可视化"]
NETWORK_MORE = [*JD["network"], "有超大规模集群交付经验者优先"]

# name: (title, company, city, JD lines, days before NOW first seen)
ROWS = {
    "A1": ("CUDA算子开发工程师", "甲智能科技有限公司", "上海", JD["cuda"], 80),
    "A2": ("CUDA算子开发工程师", "甲智能科技有限公司", "上海", JD["cuda"], 50),
    "A3": ("CUDA算子开发工程师", "甲智能科技有限公司", "上海", JD["cuda"], 20),
    "B1": ("大模型训练平台工程师", "乙科技有限公司", "北京", JD["train"], 40),
    "B2": ("大模型训练平台工程师", "乙科技有限公司", "北京", JD["train"], 10),
    "C1": ("推理服务后端工程师", "庚云计算有限公司", "杭州", JD["serve"], 130),
    "C2": ("推理服务后端工程师", "庚云计算有限公司", "杭州", JD["serve"], 80),
    "C3": ("推理服务后端工程师", "庚云计算有限公司", "杭州", JD["serve"], 30),
    "D": ("编译器优化工程师", "辛微电子有限公司", "成都", JD["compiler"], 61),
    "E": ("数据标注平台产品经理", "壬数据有限公司", "武汉", JD["label"], 90),
    "F": ("机器学习运维工程师", "癸科技有限公司", "西安", JD["mlops"], 59),
    "G": ("计算机视觉算法工程师", "子视觉有限公司", "南京", JD["vision"], 20),
    "H0": ("高性能网络工程师", "丙芯片有限公司", "苏州", JD["network"], 10),
    "H1": ("高性能网络工程师", "锐才人力资源服务有限公司", "苏州", NETWORK_MORE, 9),
    "H2": ("高性能网络工程师", "星辰猎头有限公司", "苏州", JD["network"], 8),
    "H3": ("高性能网络工程师", "远航外包服务有限公司", "苏州", JD["network"], 7),
    "I0": ("语音识别算法工程师", "丁数据有限公司", "长沙", JD["speech"], 10),
    "I1": ("语音识别算法工程师", "众联人力资源有限公司", "长沙", JD["speech"], 9),
    "I2": ("语音识别算法工程师", "华盛劳务派遣有限公司", "长沙", JD["speech"], 8),
    "K0": ("机器人运动控制工程师", "戊机器人有限公司", "深圳", JD["robot"], 10),
    "J1": ("机器人运动控制工程师", "", "深圳", ROBOT_CLOSE, 9),
    "J2": ("机器人运动控制工程师", "", "广州", JD["robot"], 9),
    "J3": ("机器人运动控制工程师", "", "深圳", ROBOT_FAR, 9),
    "L": ("机器人运动控制工程师", "星云人才", "深圳", JD["robot"], 8),
    "M": ("嵌入式驱动工程师", "博远外包有限公司", "重庆", JD["embedded"], 5),
}
HEADER = ["职位名称", "公司名称", "工作地点", "薪资", "职位描述", "链接"]
AGENCY_WORDS = "# our agency words\n星云人才\n"


def url(name: str) -> str:
    return f"https://jobs.example.com/{name}"


def write_csv(path: Path, salaries: dict[str, str] | None = None) -> None:
    """ROWS as a board's CSV, each 30-50K unless ``salaries`` names another."""
    with path.open("w", encoding="utf-8", newline="") as f:
        out = csv.writer(f)
        out.writerow(HEADER)
        for name, (title, company, city, lines, _days) in ROWS.items():
            out.writerow([title, company, city, (salaries or {}).get(name, "30-50K"), "\n".join(lines), url(name)])


def day(days_before: int) -> str:
    from datetime import datetime, timedelta

    return (datetime.fromisoformat(NOW) - timedelta(days=days_before)).isoformat()


def ids(db: Path) -> dict[str, int]:
    """Row name → posting id."""
    conn = sqlite3.connect(db)
    try:
        return {u.rsplit("/", 1)[1]: pid for pid, u in conn.execute("SELECT id, url FROM postings")}
    finally:
        conn.close()


def set_dates(db: Path) -> None:
    """first_seen from ROWS; C1 closed 10 days ago; G closed from 15 to 3 days ago (the triggers record the
    closing and the reopening)."""
    conn = sqlite3.connect(db)
    first, last = "first_seen_stored = nullif(?, as_of)", "last_seen_stored = nullif(?, as_of)"
    with conn:
        for name, row in ROWS.items():
            conn.execute(f"UPDATE postings SET {first} WHERE url = ?", (day(row[4]), url(name)))
        conn.execute("UPDATE postings SET closed_at = ? WHERE url = ?", (day(10), url("C1")))
        conn.execute(f"UPDATE postings SET closed_at = ?, {last} WHERE url = ?", (day(15), day(15), url("G")))
        conn.execute(f"UPDATE postings SET closed_at = NULL, {last} WHERE url = ?", (day(3), url("G")))
        conn.execute(f"UPDATE postings SET {last} WHERE url = ?", (NOW, url("G")))
    conn.close()


def build(folder: Path) -> Path:
    """The corpus's database in ``folder``, built through the real CLI (see the module's docstring), the user's
    agency words in ``folder/agencies.txt``; its signals made again by ``jobcrawl signals`` after the dates are set."""
    from conftest import run_cli

    db, table = folder / "jobs.db", folder / "jobs.csv"
    env = {"JOBCRAWL_AGENCIES": str(folder / "agencies.txt")}
    (folder / "agencies.txt").write_text(AGENCY_WORDS, encoding="utf-8")
    write_csv(table)
    run_cli("ingest", str(table), "--db", str(db), "--as-of", day(30), env=env, check=True)
    write_csv(table, {"E": "35-55K"})
    run_cli("ingest", str(table), "--db", str(db), "--as-of", NOW, env=env, check=True)
    set_dates(db)
    signals = run_cli("signals", "--db", str(db), env=env, check=True)
    assert signals.stdout == ("ghost signals: open_long 2 · reposted 1 · reopened 1 · mass_agency 1 · "
                              "likely employers: 7\n")
    return db
