"""Skill taxonomy and tagger: seeds, boundary rules, evidence, taxonomy validation, measured accuracy."""

from __future__ import annotations

import functools
import importlib.util
import random
import re
import sys
from pathlib import Path

import ahocorasick
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from normalize.skills import (
    _ASTRAL,
    _DIGITS,
    _FIRST_LETTER,
    _LAST_LETTER,
    _URL,
    _WINDOW,
    _WORD,
    CATEGORIES,
    SNIPPET_RADIUS,
    TAGS_SECTION,
    SkillHit,
    Taxonomy,
    TaxonomyError,
    _fold_window,
    _is_cjk,
    _ascii_title,
    _latin_prose,
    _match_text,
    _titled_match_text,
    _width_variants,
    hit_evidence,
    load_taxonomy,
    skills_in_order,
    tag,
    tag_posting,
)
from normalize.text import fold

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def _load_eval():
    spec = importlib.util.spec_from_file_location("skills_eval", ROOT / "bench" / "skills_eval.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- seeds
# Tags and the 关于这个职位 / 最低要求 / 工作职责 / 优先资格 lines of seeds/*.txt, copied as data.

SEED_000_TAGS = ['Cuda', 'Flashattention', 'Pytorch', '大模型', '并行计算', '性能调优', '算子优化', '计算机体系结构']

SEED_000_SECTIONS = {
    'about': [
        '本职位隶属于吉利汽车集团，专注于智能驾驶或智能座舱领域的大模型计算性能优化',
        '核心工作是负责大模型训练与推理场景下底层算子的设计、开发、适配与极致性能优化，并参与AI计算架构的前瞻性调研与设计迭代，以保障模型的核心性能指标达到最优',
    ],
    'requirements': [
        '研究生及以上学历，计算机、电子信息、微电子、软件工程等相关专业，扎实的计算机体系结构理论基础，熟悉CPU/GPU硬件架构、存储层级、并行计算、访存特性',
        '具备良好的算法与代码功底，熟悉C/C++编程，精通CUDA高性能并行编程，了解OpenCL、ROCm等异构计算架构者优先',
        '精通大模型算子开发优化，具备大模型场景算子开发实战经验，熟练掌握算子融合、量化、分块重排、访存优化、指令级优化、KV Cache优化、FlashAttention优化等核心技术',
        '熟悉大模型全链路调优逻辑，可独立完成模型编译、显存优化、通信优化、调度优化、推理解码优化等端到端性能调优工作',
        '掌握主流大模型架构与算法，熟悉 LLaMA、Qwen、Mistral、GPT 系列主流大语言模型，以及 CLIP、ViT 等多模态大模型的网络结构、计算特性、解码机制与并行训练逻辑',
        '熟练使用性能工具链，精通Nsight Compute、Nsight Systems、perf、火焰图、gperf、VTune等CPU/GPU性能排查工具，可精准定位计算、访存、通信、IO瓶颈',
        '熟练掌握PyTorch、PaddlePaddle任一主流框架底层机制，有框架底层算子定制、大模型专项适配、框架二次开发经验者优先',
        '具备复杂问题拆解与攻坚能力，对大模型、AI异构加速、下一代算力架构有持续探索热情，能够跟进行业新技术迭代',
    ],
    'responsibilities': [
        '负责大模型训练、推理场景下各类基础算子的设计、开发、适配与极致优化，保障算子核心指标最优',
        '针对主流大模型，完成全链路性能分析、瓶颈定位与优化落地',
        '联动软硬件架构师，参与AI计算架构、大模型算力调度流程、算子适配方案的前瞻性调研与设计迭代',
        '主导跨团队大模型训练/推理性能瓶颈、兼容性、稳定性问题的排查与解决，沉淀标准化技术文档，推动团队算力加速体系迭代',
    ],
    'preferred': [
        '了解OpenCL、ROCm等异构计算架构',
        '有框架底层算子定制、大模型专项适配、框架二次开发经验',
    ],
}

SEED_000_HITS = [
    ('tags', 'CUDA', 1, 'Cuda'),
    ('tags', 'FlashAttention', 1, 'Flashattention'),
    ('tags', 'PyTorch', 1, 'Pytorch'),
    ('tags', 'LLM', 1, '大模型'),
    ('tags', 'parallel computing', 1, '并行计算'),
    ('tags', 'performance tuning', 1, '性能调优'),
    ('tags', 'operator development', 1, '算子优化'),
    ('tags', 'computer architecture', 1, '计算机体系结构'),
    ('about', 'autonomous driving', 1, '智能驾驶'),
    ('about', 'smart cockpit', 1, '智能座舱'),
    ('about', 'LLM', 1, '大模型'),
    ('about', 'performance optimization', 2, '性能优化'),
    ('about', 'LLM training', 1, '大模型训练'),
    ('about', 'operator development', 1, '算子'),
    ('about', 'artificial intelligence', 1, 'AI'),
    ('requirements', 'computer architecture', 2, '计算机体系结构'),
    ('requirements', 'GPU', 2, 'GPU'),
    ('requirements', 'memory optimization', 5, '存储层级'),
    ('requirements', 'parallel computing', 2, '并行计算'),
    ('requirements', 'C', 1, 'C'),
    ('requirements', 'C++', 1, 'C++'),
    ('requirements', 'CUDA', 1, 'CUDA'),
    ('requirements', 'OpenCL', 1, 'OpenCL'),
    ('requirements', 'ROCm', 1, 'ROCm'),
    ('requirements', 'heterogeneous computing', 2, '异构计算架构'),
    ('requirements', 'LLM', 7, '大模型'),
    ('requirements', 'operator development', 3, '算子开发'),
    ('requirements', 'operator fusion', 1, '算子融合'),
    ('requirements', 'quantization', 1, '量化'),
    ('requirements', 'KV Cache', 1, 'KV Cache'),
    ('requirements', 'FlashAttention', 1, 'FlashAttention'),
    ('requirements', 'performance tuning', 2, '全链路调优'),
    ('requirements', 'AI compiler', 1, '模型编译'),
    ('requirements', 'inference optimization', 1, '推理解码优化'),
    ('requirements', 'LLaMA', 1, 'LLaMA'),
    ('requirements', 'Qwen', 1, 'Qwen'),
    ('requirements', 'Mistral', 1, 'Mistral'),
    ('requirements', 'GPT', 1, 'GPT'),
    ('requirements', 'CLIP', 1, 'CLIP'),
    ('requirements', 'ViT', 1, 'ViT'),
    ('requirements', 'multimodal LLM', 1, '多模态大模型'),
    ('requirements', 'distributed training', 1, '并行训练'),
    ('requirements', 'performance profiling', 2, '性能工具'),
    ('requirements', 'Nsight Compute', 1, 'Nsight Compute'),
    ('requirements', 'Nsight Systems', 1, 'Nsight Systems'),
    ('requirements', 'perf', 1, 'perf'),
    ('requirements', 'flame graph', 1, '火焰图'),
    ('requirements', 'gperftools', 1, 'gperf'),
    ('requirements', 'VTune', 1, 'VTune'),
    ('requirements', 'PyTorch', 1, 'PyTorch'),
    ('requirements', 'PaddlePaddle', 1, 'PaddlePaddle'),
    ('requirements', 'artificial intelligence', 1, 'AI'),
    ('requirements', 'self-motivation', 1, '热情'),
    ('responsibilities', 'LLM training', 2, '大模型训练'),
    ('responsibilities', 'operator development', 3, '算子'),
    ('responsibilities', 'LLM', 2, '大模型'),
    ('responsibilities', 'performance profiling', 2, '性能分析'),
    ('responsibilities', 'computer architecture', 1, '硬件架构'),
    ('responsibilities', 'artificial intelligence', 1, 'AI'),
    ('responsibilities', 'technical documentation', 1, '技术文档'),
    ('preferred', 'OpenCL', 1, 'OpenCL'),
    ('preferred', 'ROCm', 1, 'ROCm'),
    ('preferred', 'heterogeneous computing', 1, '异构计算架构'),
    ('preferred', 'operator development', 1, '算子'),
    ('preferred', 'LLM', 1, '大模型'),
]

SEED_003_TAGS = ['Cnn', 'Cuda', 'Detr', 'Npu', 'Pytorch', 'Tensorflow', '性能优化']

SEED_003_SECTIONS = {
    'about': [
        '该职位主要负责自动驾驶模型在多种硬件平台上的极致性能优化，包括CUDA算子开发、编译优化及训练框架调优',
        '你需要深入理解NPU/GPU硬件架构与主流深度学习模型，通过底层系统优化提升车端推理与训练效率',
    ],
    'requirements': [
        '工作2年以上，计算机/数学/物理/电子工程/自动控制专业本科及以上学历优先',
        '优秀的代码能力，熟练掌握C/C++或Python',
        '熟悉PyTorch/TensorFlow等训练框架的原理、软件架构',
        '熟悉CNN/Transformers/DETR等主流模型原理',
        '良好的团队协作能力',
        '创新性强，有良好的动手实现能力，对技术有热情',
    ],
    'responsibilities': [
        '负责多种不同硬件平台的极致性能优化，结合编译优化、并行计算优化、图融合、高效 CUDA 算子开发实现行业领先的车端推理性能',
        '针对特定NPU硬件计算平台，基于对硬件体系结构的深入理解，实现对硬件的高效利用',
        '针对Pytorch/CUDA相关GPU计算任务，进行算子和系统优化，提升训练/推理效率',
        '负责优化训练框架，尽可能高效发挥硬件和系统软件性能等',
    ],
}

SEED_003_HITS = [
    ('tags', 'CNN', 1, 'Cnn'),
    ('tags', 'CUDA', 1, 'Cuda'),
    ('tags', 'DETR', 1, 'Detr'),
    ('tags', 'NPU', 1, 'Npu'),
    ('tags', 'PyTorch', 1, 'Pytorch'),
    ('tags', 'TensorFlow', 1, 'Tensorflow'),
    ('tags', 'performance optimization', 1, '性能优化'),
    ('about', 'autonomous driving', 1, '自动驾驶'),
    ('about', 'performance optimization', 2, '性能优化'),
    ('about', 'CUDA', 1, 'CUDA'),
    ('about', 'operator development', 1, '算子开发'),
    ('about', 'compiler optimization', 1, '编译优化'),
    ('about', 'performance tuning', 1, '调优'),
    ('about', 'NPU', 1, 'NPU'),
    ('about', 'GPU', 1, 'GPU'),
    ('about', 'computer architecture', 1, '硬件架构'),
    ('about', 'deep learning', 1, '深度学习'),
    ('requirements', 'C', 1, 'C'),
    ('requirements', 'C++', 1, 'C++'),
    ('requirements', 'Python', 1, 'Python'),
    ('requirements', 'PyTorch', 1, 'PyTorch'),
    ('requirements', 'TensorFlow', 1, 'TensorFlow'),
    ('requirements', 'software architecture', 1, '软件架构'),
    ('requirements', 'CNN', 1, 'CNN'),
    ('requirements', 'Transformer', 1, 'Transformers'),
    ('requirements', 'DETR', 1, 'DETR'),
    ('requirements', 'teamwork', 1, '团队协作'),
    ('requirements', 'innovation', 1, '创新性'),
    ('requirements', 'self-motivation', 1, '热情'),
    ('responsibilities', 'performance optimization', 2, '性能优化'),
    ('responsibilities', 'compiler optimization', 1, '编译优化'),
    ('responsibilities', 'parallel computing', 1, '并行计算优化'),
    ('responsibilities', 'graph fusion', 1, '图融合'),
    ('responsibilities', 'CUDA', 2, 'CUDA'),
    ('responsibilities', 'operator development', 2, '算子开发'),
    ('responsibilities', 'NPU', 1, 'NPU'),
    ('responsibilities', 'computer architecture', 1, '硬件体系结构'),
    ('responsibilities', 'PyTorch', 1, 'Pytorch'),
    ('responsibilities', 'GPU', 1, 'GPU'),
]


REQUIRED_000 = {
    "CUDA", "FlashAttention", "PyTorch", "C", "C++", "OpenCL", "ROCm", "Nsight Compute", "Nsight Systems",
    "perf", "flame graph", "VTune", "gperftools", "PaddlePaddle", "LLaMA", "Qwen", "Mistral", "GPT", "CLIP",
    "ViT", "KV Cache", "operator fusion", "quantization", "parallel computing", "performance tuning",
    "computer architecture", "LLM",
}
REQUIRED_003 = {
    "CNN", "CUDA", "DETR", "NPU", "PyTorch", "TensorFlow", "Transformer", "C", "C++", "Python", "graph fusion",
    "compiler optimization", "parallel computing", "performance optimization",
}


@pytest.mark.parametrize(
    "tags, sections, expected",
    [
        pytest.param(SEED_000_TAGS, SEED_000_SECTIONS, SEED_000_HITS, id="seed-000"),
        pytest.param(SEED_003_TAGS, SEED_003_SECTIONS, SEED_003_HITS, id="seed-003"),
    ],
)
def test_seed_full_hit_list(tags, sections, expected):
    hits = tag(sections, tags)
    assert [(h.section, h.skill, h.count, h.matched) for h in hits] == expected


@pytest.mark.parametrize(
    "tags, sections, required",
    [
        pytest.param(SEED_000_TAGS, SEED_000_SECTIONS, REQUIRED_000, id="seed-000"),
        pytest.param(SEED_003_TAGS, SEED_003_SECTIONS, REQUIRED_003, id="seed-003"),
    ],
)
def test_seed_required_skills_present(tags, sections, required):
    assert required - set(skills_in_order(tag(sections, tags))) == set()


def test_seed_000_evidence_of_first_hits():
    hits = {(h.section, h.skill): h for h in tag(SEED_000_SECTIONS, SEED_000_TAGS)}
    gperf = hits[("requirements", "gperftools")]
    assert (gperf.matched, gperf.count, gperf.category) == ("gperf", 1, "tool")
    assert _snippets([gperf], SEED_000_SECTIONS, SEED_000_TAGS) == ["ht Systems、perf、火焰图、gperf、VTune等CPU/GPU性能排查工具"]
    text = "\n".join(SEED_000_SECTIONS["requirements"])
    assert text[gperf.first_offset:gperf.first_offset + 5] == "gperf"
    fusion = hits[("requirements", "operator fusion")]
    assert (fusion.matched, fusion.category) == ("算子融合", "compiler")
    assert text[fusion.first_offset:fusion.first_offset + 4] == "算子融合"
    assert hits[("tags", "FlashAttention")].matched == "Flashattention"


# --------------------------------------------------------------------------- boundaries and guards

BOUNDARY_CASES = [
    pytest.param('精通CUDA高性能', ['CUDA'], id='精通CUDA高性能'),
    pytest.param('熟悉C/C++编程', ['C', 'C++'], id='熟悉C-C++编程'),
    pytest.param('C/C++', ['C', 'C++'], id='C-C++'),
    pytest.param('C++11', ['C++'], id='C++11'),
    pytest.param('C#', ['C#'], id='C#'),
    pytest.param('Objective-C', ['Objective-C'], id='Objective-C'),
    pytest.param('熟练掌握C', ['C'], id='熟练掌握C'),
    pytest.param('C语言', ['C'], id='C语言'),
    pytest.param('Experience with C and Rust.', ['C', 'Rust'], id='Experience-with-C-and-Rust'),
    pytest.param('面向C端用户', [], id='面向C端用户'),
    pytest.param('B/S、C/S架构', [], id='B-S-C-S架构'),
    pytest.param('C-level executives', [], id='C-level-executives'),
    pytest.param('(c) 2024 Example Inc.', [], id='c-2024-Example-Inc'),
    pytest.param('b) 熟悉Linux；c) 具有良好的沟通能力', ['Linux', 'communication'], id='list-label-c'),
    pytest.param('C) Proficiency in Python', ['Python'], id='list-label-C'),
    pytest.param('q) SQL；r) 数据分析', ['SQL', 'data analysis'], id='list-label-r'),
    pytest.param('熟悉编程语言（C/C++、R）', ['C', 'C++', 'R'], id='in-parentheses-with-others'),
    pytest.param('Google Cloud', ['Google Cloud'], id='Google-Cloud'),
    pytest.param('Google', [], id='Google'),
    pytest.param('Golang', ['Go'], id='Golang'),
    pytest.param('熟悉Go/Python', ['Go', 'Python'], id='熟悉Go-Python'),
    pytest.param('Go语言', ['Go'], id='Go语言'),
    pytest.param("let's go to market", [], id='let-s-go-to-market'),
    pytest.param('Go-to-market strategy', [], id='Go-to-market-strategy'),
    pytest.param('JavaScript', ['JavaScript'], id='JavaScript'),
    pytest.param('Java/JavaScript', ['Java', 'JavaScript'], id='Java-JavaScript'),
    pytest.param('R&D', [], id='R-D'),
    pytest.param('研发(R&D)', [], id='研发-R-D'),
    pytest.param('R语言', ['R'], id='R语言'),
    pytest.param('熟悉Python、R、SQL', ['Python', 'R', 'SQL'], id='熟悉Python-R-SQL'),
    pytest.param('Python, R, or SQL', ['Python', 'R', 'SQL'], id='Python-R-or-SQL'),
    pytest.param('Nsight Compute and Nsight Systems', ['Nsight Compute', 'Nsight Systems'], id='Nsight-Compute-and-Nsight-Systems'),
    pytest.param('NVIDIA Nsight', ['Nsight'], id='NVIDIA-Nsight'),
    pytest.param('PyTorch', ['PyTorch'], id='PyTorch'),
    pytest.param('pytorch', ['PyTorch'], id='pytorch'),
    pytest.param('Pytorch', ['PyTorch'], id='Pytorch'),
    pytest.param('ＣＵＤＡ', ['CUDA'], id='x'),
    pytest.param('gperf', ['gperftools'], id='gperf'),
    pytest.param('火焰图', ['flame graph'], id='火焰图'),
    pytest.param('FlashAttention-2', ['FlashAttention'], id='FlashAttention-2'),
    pytest.param('flash attention', ['FlashAttention'], id='flash-attention'),
    pytest.param('Python3', ['Python'], id='Python3'),
    pytest.param('Qt5', ['Qt'], id='Qt5'),
    pytest.param('rust-proof paint', [], id='rust-proof-paint'),
    pytest.param('Apache Spark', ['Spark'], id='Apache-Spark'),
    pytest.param('熟悉spark', ['Spark'], id='熟悉spark'),
    pytest.param('ideas that spark joy', [], id='ideas-that-spark-joy'),
    pytest.param('a hive of activity', [], id='a-hive-of-activity'),
    pytest.param('Swift', ['Swift'], id='Swift'),
    pytest.param('a swift response', [], id='a-swift-response'),
    pytest.param('make sure it works', [], id='make-sure-it-works'),
    pytest.param('熟悉make/cmake', ['Make', 'CMake'], id='熟悉make-cmake'),
    pytest.param('Makefile', ['Make'], id='Makefile'),
    pytest.param('D语言', ['D'], id='D语言'),
    pytest.param('Plan D', [], id='Plan-D'),
    pytest.param('模型量化', ['quantization'], id='模型量化'),
    pytest.param('量化交易', ['quantitative trading'], id='量化交易'),
    pytest.param('可量化的目标', [], id='可量化的目标'),
    pytest.param('浇灌、施肥、剪枝、除草', [], id='浇灌-施肥-剪枝-除草'),
    pytest.param('模型剪枝', ['pruning'], id='模型剪枝'),
    pytest.param('量化、剪枝、蒸馏', ['quantization', 'pruning', 'knowledge distillation'], id='量化-剪枝-蒸馏'),
    pytest.param('LoRA微调', ['LoRA'], id='LoRA微调'),
    pytest.param('LoRa网关', [], id='LoRa网关'),
    pytest.param('见http://www.example.cn/jobs/1.html', [], id='见http-www-example-cn-jobs-1-html'),
    pytest.param('HTTP协议', ['HTTP'], id='HTTP协议'),
    pytest.param('CLIP', ['CLIP'], id='CLIP'),
    pytest.param('a video clip', [], id='a-video-clip'),
    pytest.param('CAN总线', ['CAN bus'], id='CAN总线'),
    pytest.param('熟悉CAN通信', ['CAN bus'], id='熟悉CAN通信'),
    pytest.param('we can help', [], id='we-can-help'),
    pytest.param('CV算法', ['computer vision'], id='CV算法'),
    pytest.param('send your CV', [], id='send-your-CV'),
    pytest.param('PS：即日起可预订', [], id='PS-即日起可预订'),
    pytest.param('熟练使用PS', ['Photoshop'], id='熟练使用PS'),
    pytest.param('大模型推理', ['LLM inference'], id='大模型推理'),
    pytest.param('大模型', ['LLM'], id='大模型'),
    pytest.param('算子融合', ['operator fusion'], id='算子融合'),
    pytest.param('多模态大模型', ['multimodal LLM'], id='多模态大模型'),
    pytest.param('数学、计算机等相关专业', [], id='数学-计算机等相关专业'),
    pytest.param('良好的数学基础', ['mathematics'], id='良好的数学基础'),
    pytest.param('与前端工程师密切配合', [], id='与前端工程师密切配合'),
    pytest.param('前端开发', ['web front end'], id='前端开发'),
    pytest.param('射频前端', ['RF'], id='射频前端'),
    pytest.param('DC-DC（BUCK，BOOST）', ['power electronics'], id='DC-DC-BUCK-BOOST'),
    pytest.param('熟悉Boost库', ['Boost'], id='熟悉Boost库'),
    pytest.param('抖音视频', [], id='抖音视频'),
    pytest.param('Node.js', ['Node.js'], id='Node-js'),
    pytest.param('vue.js', ['Vue'], id='vue-js'),
    pytest.param('KV Cache', ['KV Cache'], id='KV-Cache'),
    pytest.param('kvcache', ['KV Cache'], id='kvcache'),
    pytest.param('kv-cache', ['KV Cache'], id='kv-cache'),
    pytest.param('TensorRT-LLM', ['TensorRT-LLM'], id='TensorRT-LLM'),
    pytest.param('TensorRT', ['TensorRT'], id='TensorRT'),
    pytest.param('Triton Inference Server', ['Triton Inference Server'], id='Triton-Inference-Server'),
    pytest.param('Triton', ['Triton'], id='Triton'),
    pytest.param('springboot', ['Spring Boot'], id='springboot'),
    pytest.param('spring-boot', ['Spring Boot'], id='spring-boot'),
    pytest.param('in the spring of 2024', [], id='in-the-spring-of-2024'),
    pytest.param('Excel', ['Excel'], id='Excel'),
    pytest.param('excel at teamwork', ['teamwork'], id='excel-at-teamwork'),
    pytest.param('Windows', ['Windows'], id='Windows'),
    pytest.param('context windows', [], id='context-windows'),
    pytest.param('user agent string', [], id='user-agent-string'),
    pytest.param('AI agent', ['AI agents'], id='AI-agent'),
    pytest.param('Agent开发', ['AI agents'], id='Agent开发'),
    pytest.param('attention to detail', ['attention to detail'], id='attention-to-detail'),
    pytest.param('优化Attention算子', ['attention optimization'], id='优化Attention算子'),
    pytest.param('IDC/ISP', [], id='IDC-ISP'),
    pytest.param('ISP调试', ['ISP'], id='ISP调试'),
    pytest.param('自动驾驶感知', ['autonomous driving', 'perception'], id='自动驾驶感知'),
    pytest.param('用户感知', [], id='用户感知'),
    pytest.param('端到端测试', [], id='端到端测试'),
    pytest.param('端到端自动驾驶', ['end-to-end autonomous driving'], id='端到端自动驾驶'),
    pytest.param('BEV感知', ['BEV'], id='BEV感知'),
    pytest.param('ROS2', ['ROS'], id='ROS2'),
    pytest.param('STL容器', ['STL'], id='STL容器'),
]


@pytest.mark.parametrize("text, expected", BOUNDARY_CASES)
def test_boundaries_and_guards(text, expected):
    assert skills_in_order(tag({"about": [text]})) == expected


@pytest.mark.parametrize(
    "tags, expected",
    [
        pytest.param(["C"], ["C"], id="bare-C-tag"),
        pytest.param(["R"], ["R"], id="bare-R-tag"),
        pytest.param(["Go"], ["Go"], id="bare-Go-tag"),
        pytest.param(["Hive", "Spark"], ["Hive", "Spark"], id="bigdata-tags"),
        pytest.param(["go"], [], id="lowercase-go-tag"),
    ],
)
def test_tags_alone(tags, expected):
    assert skills_in_order(tag({}, tags)) == expected


# --------------------------------------------------------------------------- evidence and order


def test_hit_evidence_offsets_count_and_snippet():
    sections = {"requirements": ["熟悉Linux", "精通CUDA，了解CUDA Graph与cuda kernel"]}  # cuda kernel: an alias
    hits = tag(sections)
    assert hits == [
        SkillHit("Linux", "infra", "requirements", 1, 2, "Linux"),
        SkillHit("CUDA", "gpu", "requirements", 3, 10, "CUDA"),
    ]
    assert hit_evidence(hits, sections, ()) == [
        {"skill": "Linux", "category": "infra", "section": "requirements", "count": 1, "first_offset": 2,
         "matched": "Linux", "snippet": "熟悉Linux"},
        {"skill": "CUDA", "category": "gpu", "section": "requirements", "count": 3, "first_offset": 10,
         "matched": "CUDA", "snippet": "精通CUDA，了解CUDA Graph与cuda k"},
    ]


def _snippets(hits, sections, tags):
    """The snippets of ``hits`` as read (normalize.skills.evidence)."""
    return [e["snippet"] for e in hit_evidence(hits, sections, tags)]


def test_offsets_survive_characters_that_fold_longer():
    line = "要求……熟悉ＣＵＤＡ和Python"  # … folds to "...", full-width letters to ASCII
    (cuda, python) = tag({"about": [line]})
    assert (cuda.first_offset, cuda.matched) == (6, "ＣＵＤＡ")
    assert (python.first_offset, python.matched) == (11, "Python")


def test_order_tags_first_then_sections_as_given():
    hits = tag({"preferred": ["Docker"], "about": ["Kubernetes、Docker"]}, tags=["Redis"])
    assert [(h.section, h.skill) for h in hits] == [
        ("tags", "Redis"), ("preferred", "Docker"), ("about", "Kubernetes"), ("about", "Docker"),
    ]
    assert skills_in_order(hits) == ["Redis", "Docker", "Kubernetes"]


def test_string_section_is_one_line():
    assert skills_in_order(tag({"about": "Python与Go语言"})) == ["Python", "Go"]


def test_nothing_found():
    assert tag({"about": ["负责园区苗木的灌溉与养护"], "requirements": []}) == []


# --------------------------------------------------------------------------- the taxonomy


def test_taxonomy_size_categories_and_rows():
    taxonomy = load_taxonomy()
    assert len(taxonomy.skills) >= 500
    assert {s.category for s in taxonomy.skills} == set(CATEGORIES)
    rows = taxonomy.rows()
    assert len(rows) == len(taxonomy.skills)
    flash = next(r for r in rows if r["name"] == "FlashAttention")
    assert flash == {
        "name": "FlashAttention", "category": "technique", "parent": "attention optimization",
        "aliases": ["flash attention", "flash-attn", "flashattention2", "flashattention-2", "flashattention-3",
                    "flashinfer"],
        "frontier": True, "kind": "technical",
    }


def test_each_skill_has_the_kind_of_its_category():
    taxonomy = load_taxonomy()
    kinds = {s.category: s.kind for s in taxonomy.skills}
    assert kinds == {"language": "technical", "framework": "technical", "gpu": "technical", "compiler": "technical",
                     "tool": "technical", "model": "technical", "technique": "technical", "infra": "technical",
                     "data": "technical", "domain": "domain", "soft": "soft"}
    by_name = {s.name: s.kind for s in taxonomy.skills}
    assert (by_name["CUDA"], by_name["autonomous driving"], by_name["teamwork"]) == ("technical", "domain", "soft")
    custom = Taxonomy('[skills]\nsoft = [{ name = "Patience" }]\ndomain = [{ name = "Banking" }]\n'.encode())
    assert [(s.name, s.kind) for s in custom.skills] == [("Banking", "domain"), ("Patience", "soft")]


@pytest.mark.parametrize(
    "name, lineage",
    [
        pytest.param("FlashAttention", ["FlashAttention", "attention optimization", "inference optimization"],
                     id="flashattention"),
        pytest.param("Nsight Compute", ["Nsight Compute", "GPU profiling", "performance profiling"], id="ncu"),
        pytest.param("Qwen", ["Qwen", "LLM"], id="qwen"),
    ],
)
def test_parents(name, lineage):
    assert load_taxonomy().lineage(name) == lineage


def test_frontier_flags():
    taxonomy = load_taxonomy()
    for name in ("LLM", "FlashAttention", "KV Cache", "quantization", "MoE", "diffusion model", "BEV",
                 "occupancy network", "end-to-end autonomous driving", "Triton", "TensorRT-LLM", "vLLM"):
        assert taxonomy.skill(name).frontier, name
    for name in ("C", "MySQL", "communication"):
        assert not taxonomy.skill(name).frontier, name


def test_load_is_cached_and_version_is_a_content_hash(tmp_path):
    assert load_taxonomy() is load_taxonomy()
    packaged = (ROOT / "normalize" / "data" / "skills.toml").read_bytes()
    copy = tmp_path / "skills.toml"
    copy.write_bytes(packaged)
    assert load_taxonomy(copy).version == load_taxonomy().version
    copy.write_bytes(packaged + b"\n# changed\n")
    assert Taxonomy(copy.read_bytes()).version != load_taxonomy().version


def test_the_matcher_is_built_when_first_used_and_tags_the_same_as_one_built_at_once():
    """A process that never tags (the writer, scoring, an unchanged re-run) does not build the automata."""
    packaged = (ROOT / "normalize" / "data" / "skills.toml").read_bytes()
    lazy, ready = Taxonomy(packaged), Taxonomy(packaged).prepare()
    assert lazy._longest is None and ready._longest is not None
    assert lazy.skill("CUDA") == ready.skill("CUDA") and lazy.rows() == ready.rows()
    assert lazy._longest is None
    sections = {"requirements": ["熟悉CUDA、TensorRT与C++", "Experience with vLLM and C"]}
    assert lazy.tag(sections, ["PyTorch"]) == ready.tag(sections, ["PyTorch"]) != []
    assert lazy.scan("CUDA and R") == ready.scan("CUDA and R") != []
    assert lazy.prepare() is lazy and lazy._longest is not None


def test_custom_taxonomy_is_used_for_tagging():
    taxonomy = Taxonomy('[skills]\nlanguage = [{ name = "Zig", zh = ["Zig语言"] }]\n'.encode())
    assert skills_in_order(tag({"about": ["Zig语言与Rust"]}, taxonomy=taxonomy)) == ["Zig"]


@pytest.mark.parametrize(
    "toml, message",
    [
        pytest.param('[skills]\nweb = [{ name = "X" }]', "unknown categories", id="unknown-category"),
        pytest.param('[skills]\nlanguage = [{ name = "X" }, { name = "X" }]', "defined twice", id="duplicate-name"),
        pytest.param('[skills]\nlanguage = [{ name = "X", en = ["y"] }, { name = "Y" }]',
                     "already an alias of 'X'", id="duplicate-alias"),
        pytest.param('[skills]\nlanguage = [{ name = "X", parent = "Nope" }]', "not a skill", id="missing-parent"),
        pytest.param('[skills]\nlanguage = [{ name = "X", parent = "Y" }, { name = "Y", parent = "X" }]',
                     "parent cycle", id="parent-cycle"),
        pytest.param('[skills]\nlanguage = [{ name = "X", guarded = ["x"], guard = "nope" }]', "unknown guard",
                     id="unknown-guard"),
        pytest.param('[guards.g]\ndoc = "d"\n[skills]\nlanguage = [{ name = "X" }]', "never used",
                     id="unused-guard"),
        pytest.param('[guards.g]\ndoc = "d"\nright = ["("]\n[skills]\nlanguage = [{ name = "X" }]', "bad regex",
                     id="bad-regex"),
        pytest.param('[skills]\nlanguage = [{ name = "X", colour = "red" }]', "unknown keys", id="unknown-key"),
        pytest.param('[skills\n', "<bytes>", id="not-toml"),
        pytest.param('', "<bytes>: defines no skills", id="empty-file"),
        pytest.param('# all skills cut out\n[skills]\nlanguage = []\n', "defines no skills", id="no-skill"),
        pytest.param('[kinds]\nfun = ["soft"]', "unknown kinds", id="unknown-kind"),
        pytest.param('[kinds]\nsoft = ["chat"]', "unknown category", id="kind-of-an-unknown-category"),
        pytest.param('[kinds]\nsoft = ["soft"]\ndomain = ["soft"]', "is in soft and domain", id="category-of-two-kinds"),
        pytest.param('[kinds]\nsoft = ["soft"]', "no kind for the categories", id="category-without-a-kind"),
        pytest.param('[skills]\nlanguage = [{ name = "X", en = ["x\U0001F600"] }]', "only BMP characters",
                     id="alias-outside-the-bmp"),
    ],
)
def test_malformed_taxonomy_is_rejected(toml, message):
    with pytest.raises(TaxonomyError, match=message.replace("(", "\\(")):
        Taxonomy(toml.encode())


# --------------------------------------------------------------------------- measured accuracy


def test_accuracy_on_committed_labeled_set_meets_targets():
    skills_eval = _load_eval()
    cases = skills_eval.load_cases()
    assert len(cases) >= 60
    report = skills_eval.evaluate(cases)
    assert report.overall.precision >= skills_eval.TARGET_PRECISION
    assert report.overall.recall >= skills_eval.TARGET_RECALL


@pytest.mark.shared_data
def test_accuracy_with_reference_rows_from_shared_data():
    if not SHARED.is_dir():
        pytest.skip("../shared/data is absent")
    skills_eval = _load_eval()
    cases = skills_eval.load_cases() + skills_eval.load_reference_cases(SHARED)
    report = skills_eval.evaluate(cases)
    assert report.overall.precision >= skills_eval.TARGET_PRECISION
    assert report.overall.recall >= skills_eval.TARGET_RECALL


def test_eval_rejects_labels_that_are_not_skills():
    skills_eval = _load_eval()
    case = skills_eval.Case("x", "dev", {"about": ["Python"]}, (), frozenset({"Pythonn"}))
    with pytest.raises(ValueError, match="x: Pythonn"):
        skills_eval.evaluate([case])


# --------------------------------------------------------------------------- the scanner against its reference
# The tagger before its speed-up (pyahocorasick over UTF-16 hex digits, every overlapping match
# filtered in Python, NFKC-folded guard context), kept verbatim as the reference: the fast scanner
# must give the same hits, hit for hit, including every evidence field.


_WIDE = re.compile("[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")  # CJK, Hangul, full width


def _ref_match_text(text):
    folded = text.casefold()
    if len(folded) == len(text) and not _ASTRAL.search(folded):
        return folded, None
    pieces = []
    for ch in text:
        piece = fold(ch)
        pieces.append("\ufffd" * len(piece) if _ASTRAL.search(piece) else piece)
    offsets = [i for i, piece in enumerate(pieces) for _ in piece]
    offsets.append(len(text))
    return "".join(pieces), offsets


def _ref_hex(text):
    return text.encode("utf-16-be").hex()


@functools.cache
def _ref_automata(taxonomy):
    """The reference's two automata (UTF-16 hex digits; plain text without CJK), one-letter aliases and their regex."""
    automaton, latin_automaton, letters = ahocorasick.Automaton(), ahocorasick.Automaton(), {}
    for folded, alias in taxonomy._aliases.items():
        value = (alias.skill, alias.length, alias.check_left, alias.check_right, alias.trailing_digit, alias.guard)
        for key in {folded} | _width_variants(folded):
            if key != folded and key in taxonomy._aliases:
                continue
            if len(key) == 1 and key in _WORD:
                letters[key] = value
            else:
                automaton.add_word(_ref_hex(key), value)
                if not _WIDE.search(key):
                    latin_automaton.add_word(key, value)
    automaton.make_automaton()
    latin_automaton.make_automaton()
    word = "".join(sorted(_WORD))
    letter_re = re.compile(f"(?<![{word}])[{''.join(sorted(letters))}](?![{word}])") if letters else None
    return automaton, latin_automaton, letters, letter_re


def _ref_guard_accepts(guard, text, start, end):
    left = text[max(0, start - _WINDOW):start].rpartition("\n")[2]
    right = text[end:end + _WINDOW].partition("\n")[0]
    left = left.lower() if left.isascii() else fold(left)
    right = right.lower() if right.isascii() else fold(right)
    written = text[start:end]
    if (guard.reject_left and guard.reject_left.search(left)) or (guard.reject_right and guard.reject_right.match(right)):
        return False
    if any(lp.search(left) and rp.match(right) for lp, rp in guard.reject_around):
        return False
    if guard.case is not None and not guard.case.accepts(written):
        return False
    before, after = _LAST_LETTER.search(left), _FIRST_LETTER.match(right)
    cjk = bool((before and _is_cjk(before.group(1))) or (after and _is_cjk(after.group(1))))
    if not cjk and guard.latin_case is not None and not guard.latin_case.accepts(written):
        return False
    if (guard.cjk if cjk else guard.latin) == "accept":
        return True
    return bool((guard.left and guard.left.search(left)) or (guard.right and guard.right.match(right)))


def _ref_scan(taxonomy, text):
    automaton, latin_automaton, letters, letter_re = _ref_automata(taxonomy)
    folded, offsets = _ref_match_text(text)
    n = len(folded)
    urls = [m.span() for m in _URL.finditer(folded)] if ("://" in folded or "www." in folded) else ()
    found = []
    if not _WIDE.search(folded):
        matches, mask, shift = latin_automaton.iter(folded), 0, 0
    else:
        matches, mask, shift = automaton.iter(_ref_hex(folded)), 3, 2
    for last, (skill, length, check_left, check_right, trailing_digit, guard) in matches:
        if last & mask != mask:
            continue
        end = (last + 1) >> shift
        start = end - length
        if check_left and start > 0 and folded[start - 1] in _WORD:
            continue
        if check_right and end < n:
            nxt = folded[end]
            if nxt in _WORD and not (trailing_digit and nxt in _DIGITS):
                continue
        if urls and any(lo <= start < hi for lo, hi in urls):
            continue
        found.append((start, -end, skill, guard))
    if letter_re is not None:
        for m in letter_re.finditer(folded):
            skill, _, _, _, _, guard = letters[m.group()]
            if not (urls and any(lo <= m.start() < hi for lo, hi in urls)):
                found.append((m.start(), -m.end(), skill, guard))
    if not found:
        return []
    found.sort()
    kept = []
    reach = -1
    for start, neg_end, skill, guard in found:
        if start >= reach:
            if guard is not None:
                lo, hi = (start, -neg_end) if offsets is None else (offsets[start], offsets[-neg_end])
                if not _ref_guard_accepts(guard, text, lo, hi):
                    continue
            kept.append((start, -neg_end, skill))
            reach = -neg_end
    if offsets is not None:
        kept = [(offsets[s], offsets[e], k) for s, e, k in kept]
    return kept


def _ref_tag(taxonomy, sections, tags=()):
    return [hit for hit, _ in _ref_evidence(taxonomy, sections, tags)]


def _ref_evidence(taxonomy, sections, tags=()):
    """(hit, its snippet) of each hit, found by the plain reference scan."""
    blocks = [(TAGS_SECTION, tags)] if tags else []
    blocks += [(key, [lines] if isinstance(lines, str) else lines) for key, lines in sections.items()]
    texts = ["\n".join(lines) for _, lines in blocks]
    bounds = []
    pos = 0
    for text in texts:
        bounds.append(pos)
        pos += len(text) + 1
    whole = "\n".join(texts)
    first = [{} for _ in blocks]
    block = 0
    for start, end, skill in _ref_scan(taxonomy, whole):
        while block + 1 < len(bounds) and start >= bounds[block + 1]:
            block += 1
        entry = first[block].get(skill)
        if entry is None:
            first[block][skill] = [start, end, 1]
        else:
            entry[2] += 1
    hits = []
    for (section, _), base, found in zip(blocks, bounds, first):
        for skill, (start, end, count) in found.items():
            before = whole[max(base, start - SNIPPET_RADIUS):start].rpartition("\n")[2]
            after = whole[end:end + SNIPPET_RADIUS].partition("\n")[0]
            s = taxonomy.skills[skill]
            hits.append((SkillHit(s.name, s.category, section, count, start - base, whole[start:end]),
                         (before + whole[start:end] + after).strip()))
    return hits


def _assert_same_as_reference(taxonomy, postings):
    """tag() and scan() of every posting (sections, tags) equal the reference's, and the scanner finds the same
    hits reading each text title-cased or not (the default picks one by the text's share of spaces)."""
    for sections, tags in postings:
        ref = _ref_evidence(taxonomy, sections, tags)
        hits = taxonomy.tag(sections, tags)
        assert hits == [hit for hit, _ in ref], (sections, tags)
        if not (tags and TAGS_SECTION in sections):  # evidence reads section "tags" as the tags (as the store does)
            assert _snippets(hits, sections, tags) == [snippet for _, snippet in ref], (sections, tags)
        texts = [lines if isinstance(lines, str) else "\n".join(lines) for lines in sections.values()]
        for text in texts:
            assert taxonomy.scan(text) == _ref_scan(taxonomy, text), text
        for text in [*texts, "\n".join([*tags, *texts])]:
            assert taxonomy._hits(text, titled=True) == taxonomy._hits(text, titled=False), text


def _fixture_lines():
    skills_eval = _load_eval()
    lines = [line for case in skills_eval.load_cases() for text in case.sections.values() for line in text]
    return [line for line in lines if line.strip()] + [line for lines in SEED_000_SECTIONS.values() for line in lines]


# Pieces that exercise folding, widths, boundaries, guards, URLs and the rejection paths.
_TRICKY = [
    "C", "c", "R", "r", "Go", "go", "C/C++", "c++", "C＋＋", "ＣＵＤＡ", "Ｃ", "C语言", "R语言", "R&D", "(c)", "C-level",
    "Python3", "Qt5", "ROS2", "Google", "golang", "JavaScript", "java", "engineer", "microsoft", "gitlab", "display",
    "http://www.example.cn/a.html ", "www.x.com/c ", "https://", "量化", "可量化", "数学", "专业", "前端", "与前端",
    "ß", "ﬁ", "İ", "Ⅱ", "……", "𝐂𝐔𝐃𝐀", "\U0001F600", "\xa0", "\u3000", "，", "、", "/", "-", "_", " ", "\n", "3d", "2C",
]


def _random_texts(count, seed):
    """Texts mixing cut fixture lines with the tricky pieces, from a fixed seed."""
    rng = random.Random(seed)
    chunks = [line[i:i + rng.randint(1, 40)] for line in _fixture_lines() for i in range(0, len(line), 9)]
    return ["".join(rng.choice(chunks) if rng.random() < 0.7 else rng.choice(_TRICKY)
                    for _ in range(rng.randint(1, 40))) for _ in range(count)]


@pytest.mark.parametrize(
    "tags, sections",
    [
        pytest.param(SEED_000_TAGS, SEED_000_SECTIONS, id="seed-000"),
        pytest.param(SEED_003_TAGS, SEED_003_SECTIONS, id="seed-003"),
        pytest.param((), {"about": "Python与Go语言"}, id="string-section"),
        pytest.param(["Cuda"], {"tags": ["C/C++"], "about": []}, id="section-named-tags"),
        pytest.param((), {}, id="empty"),
    ],
)
def test_same_hits_as_reference_on_seeds(tags, sections):
    _assert_same_as_reference(load_taxonomy(), [(sections, tags)])


def test_same_hits_as_reference_on_the_evaluation_set():
    cases = _load_eval().load_cases()
    assert len(cases) >= 60
    _assert_same_as_reference(load_taxonomy(), [(case.sections, case.tags) for case in cases])


@pytest.mark.shared_data
def test_same_hits_as_reference_on_the_reference_rows_and_bench_postings():
    if not SHARED.is_dir():
        pytest.skip("../shared/data is absent")
    cases = _load_eval().load_reference_cases(SHARED)
    assert cases
    _assert_same_as_reference(load_taxonomy(), [(case.sections, case.tags) for case in cases])
    spec = importlib.util.spec_from_file_location("skills_bench", ROOT / "bench" / "skills.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    postings = bench.build_postings(60, 5000) + bench.build_postings(20, 5000, "bytes", bench.english_lines())
    _assert_same_as_reference(load_taxonomy(), [(sections, ()) for sections in postings])


@pytest.mark.parametrize("seed", [pytest.param(seed, id=f"seed-{seed}") for seed in range(4)])
def test_same_hits_as_reference_on_random_text_from_fixtures(seed):
    texts = _random_texts(examples(400), seed)
    _assert_same_as_reference(load_taxonomy(), [({"about": text.split("\n")}, ()) for text in texts])
    _assert_same_as_reference(load_taxonomy(), [({"about": texts[i:i + 5]}, texts[i + 5].split("\n"))
                                                for i in range(0, len(texts) - 6, 6)])


# A small taxonomy whose aliases nest and overlap, with guards that reject, so that random text over
# its alphabet reaches every path of the scanner (shorter aliases, Latin words, a second search).
_OVERLAPPING = """
[guards.no_x]
doc = "Rejected right before x."
latin = "accept"
cjk = "accept"
reject_right = ['x']
[guards.upper]
doc = "Upper case in Latin text."
latin = "accept"
cjk = "accept"
latin_case = "upper"
[skills]
language = [
  { name = "A", en = ["ab", "abc-d", "a b c"] },
  { name = "B", en = ["bc", "b2"], zh = ["乙丙"] },
  { name = "C", guarded = ["c"], guard = "upper", zh = ["丙丁"] },
  { name = "D", en = ["cd", "dab"], guarded = { no_x = ["bcd", "d", "丁乙"] } },
  { name = "E", zh = ["甲乙", "乙"], guarded = { no_x = ["甲", "甲乙丙丁"] } },
  { name = "F", en = ["d-a", "bc/d", "xa"] },
]
"""


@pytest.mark.parametrize(
    "text, expected",
    [
        # abc-d is followed by a letter; its shorter form abc (a variant of "a b c") stands, and dab,
        # which starts inside abc-d, is found by searching again.
        pytest.param("abc-dab ", [("A", 1, 0, "abc"), ("D", 1, 4, "dab")], id="shorter-alias-then-search-again"),
        # 甲 is rejected before x: xa starts right after it, not inside a word.
        pytest.param("甲xa", [("F", 1, 1, "xa")], id="rejected-cjk-then-latin"),
        # 甲乙丙丁 is rejected before x: 甲乙 stands, then 丙丁 (inside the rejected match).
        pytest.param("甲乙丙丁x丙丁", [("E", 1, 0, "甲乙"), ("C", 2, 2, "丙丁")], id="shorter-cjk-alias"),
        pytest.param("甲乙丙丁", [("E", 1, 0, "甲乙丙丁")], id="longest"),
        # 丁乙 is rejected before x: the one-character alias 乙 inside it stands.
        pytest.param("丁乙x", [("E", 1, 1, "乙")], id="one-character-alias-inside-a-rejected-match"),
        pytest.param("C/bc", [("C", 1, 0, "C"), ("B", 1, 2, "bc")], id="one-letter-alias"),
        pytest.param("c/bc", [("B", 1, 2, "bc")], id="one-letter-alias-rejected"),
        pytest.param("xbc bc", [("B", 1, 4, "bc")], id="inside-a-word"),
        pytest.param("ab2", [("A", 1, 0, "ab")], id="version-digit"),
        # Searching again after abc (abc-d rejected): the first window's last match, da, ends inside the
        # earlier search's "a b c" (10-15), which reaches past the window: cd comes from a second one.
        pytest.param("abc-dabc-da b cd", [("A", 1, 0, "abc"), ("F", 1, 9, "da"), ("B", 1, 12, "b"), ("D", 1, 14, "cd")],
                     id="search-again-past-a-window"),
    ],
)
def test_overlapping_aliases(text, expected):
    taxonomy = _overlapping_taxonomy()
    hits = taxonomy.tag({"a": [text]})
    assert [(h.skill, h.count, h.first_offset, h.matched) for h in hits] == expected
    assert hits == _ref_tag(taxonomy, {"a": [text]})


@settings(max_examples=examples(600), deadline=None, derandomize=True)
@given(st.text(alphabet="abcdABCDx2 -/\n甲乙丙丁，", max_size=40))
def test_same_hits_as_reference_with_overlapping_aliases(text):
    taxonomy = _overlapping_taxonomy()
    assert taxonomy.scan(text) == _ref_scan(taxonomy, text)
    assert taxonomy._hits(text, titled=True) == taxonomy._hits(text, titled=False)
    assert taxonomy.tag({"a": text.split("\n")}) == _ref_tag(taxonomy, {"a": text.split("\n")})


@functools.cache
def _overlapping_taxonomy():
    return Taxonomy(_OVERLAPPING.encode())


def test_lone_surrogate_is_read_as_a_replacement_character():
    text = "熟悉CUDA\ud800与C++"
    assert [(h.skill, h.first_offset, h.matched) for h in tag({"about": [text]})] == [
        ("CUDA", 2, "CUDA"), ("C++", 8, "C++"),
    ]


@pytest.mark.parametrize("titled", [True, False], ids=["titled", "as-folded"])
def test_lone_surrogate_either_way(titled):
    taxonomy = load_taxonomy()
    text = "Experience with CUDA\ud800kernels and C++ tests"
    assert [(taxonomy.skills[taxonomy._skill_of[key]].name, start, end) for key, start, end
            in taxonomy._hits(text, titled)] == [("CUDA", 16, 20), ("C++", 33, 36)]


def test_keys_starting_with_a_letter_or_digit_check_their_left_boundary():
    """The scanner skips the rest of a Latin word after a rejection: it relies on this."""
    taxonomy = load_taxonomy().prepare()
    assert all(taxonomy._values[index][1] == (key[0] in _WORD) for key, index in taxonomy._key_index.items())


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("熟悉C/C++编程，精通CUDA；了解：（OpenCL）\xa0与\u3000ROCm", id="common-full-width"),
        pytest.param("ＣＵＤＡ、Ｃ＋＋　ß ﬁ İ Ⅱ", id="other-full-width-and-case"),
        pytest.param("e\u0301 and é", id="combining-mark"),
        pytest.param("Python, R, or SQL", id="ascii"),
        pytest.param("，；\xa0：）（\u3000", id="each-replaced-character"),
        pytest.param("left\nright", id="line-break"),
    ],
)
def test_guard_context_fold_equals_fold(text):
    assert _fold_window(text) == fold(text)


@pytest.mark.parametrize(
    "toml, expected",
    [
        # The reference scanner raised here: pyahocorasick refuses to search with an empty automaton.
        pytest.param('[skills]\nlanguage = [{ name = "X" }]', [("tags", "X", 1), ("a", "X", 2)],
                     id="one-letter-aliases-only"),
    ],
)
def test_taxonomy_without_automaton_keys(toml, expected):
    hits = Taxonomy(toml.encode()).tag({"a": ["X and x, Y"]}, ["X"])
    assert [(h.section, h.skill, h.count) for h in hits] == expected


@pytest.mark.parametrize(
    "folded, expected",
    [
        pytest.param("cuda, c++ and node.js", "Cuda, C++ And Node.Js", id="words"),
        pytest.param("k8s 3d h100 python3x", "K8S 3D H100 Python3X", id="digits-end-no-word"),
        pytest.param("精通c语言与pytorch", "精通C语言与Pytorch", id="after-cjk"),
        pytest.param("éxx naïve ｃｕｄａ", "éXx NaïVe ｃｕｄａ", id="only-ascii-letters-are-cased"),
        pytest.param("a\ud800b", "A\ud800B", id="lone-surrogate"),
        pytest.param("", "", id="empty"),
    ],
)
def test_ascii_title(folded, expected):
    assert _ascii_title(folded) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        pytest.param("experience with distributed systems and gpu kernels", True, id="english"),
        pytest.param("熟悉c/c++编程，精通cuda与pytorch，有大模型推理优化经验", False, id="chinese-with-latin-words"),
        pytest.param("", False, id="empty"),
    ],
)
def test_latin_prose_is_read_title_cased(text, expected):
    assert _latin_prose(text) is expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("Experience with CUDA, C++ and Node.JS", id="ascii"),
        pytest.param("We’re hiring — “GPU” kernels, 熟悉 CUDA", id="quotes-dashes-cjk-do-not-fold"),
        pytest.param("Écoles and NAÏVE", id="non-ascii-upper-case-folds"),
        pytest.param("Straße", id="sharp-s-folds-longer"),
        pytest.param("ＣＵＤＡ and C++", id="full-width-upper-case-folds"),
        pytest.param("𝐂𝐔𝐃𝐀 kernels", id="outside-the-bmp"),
        pytest.param("a\ud800b C", id="lone-surrogate"),
        pytest.param("", id="empty"),
    ],
)
def test_titled_match_text_equals_casefold_then_title(text):
    folded, offsets = _match_text(text)
    assert _titled_match_text(text) == (folded, _ascii_title(folded), offsets)


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]) | st.sampled_from("aBc ÉßＣ’"),
               max_size=30))
def test_titled_match_text_property(text):
    folded, offsets = _match_text(text)
    assert _titled_match_text(text) == (folded, _ascii_title(folded), offsets)


def test_title_cased_keys_match_only_at_word_starts():
    """No alias inside a Latin word reaches the checks: the automaton does not report it."""
    taxonomy = load_taxonomy().prepare()
    text = "tests and designs"  # es, sign, ... inside words
    assert taxonomy._titled.find_matches_as_indexes(_ascii_title(text)) == []
    assert taxonomy._longest.find_matches_as_indexes(text) != []


def _normalized_and_tagged(tags: list[str], blocks: list[tuple[str, list[str]]]):
    """A raw posting of ``tags`` and JD ``blocks`` (heading, lines), normalized and tagged."""
    from normalize.models import RawPosting, RawSection
    from normalize.posting import normalize_posting

    raw = RawPosting(source="textdump", source_id="t#0", locator="t", fetched_at="2026-12-01T00:00:00Z",
                     as_of="2026-12-01T00:00:00Z", company="示例", title="推理工程师", tags=tags,
                     sections=[RawSection(heading=h, lines=lines) for h, lines in blocks])
    return tag_posting(normalize_posting(raw), load_taxonomy())


@pytest.mark.parametrize(("heading", "key"), [
    ("tags", "tags (section)"),  # the posting's own tags are section "tags"
    ("Tags", "Tags"),
    ("任职要求", "requirements"),
])
def test_a_jd_section_headed_tags_is_not_read_as_the_postings_tags(heading, key):
    posting = _normalized_and_tagged(["Python"], [(heading, ["熟悉CUDA与Python"])])
    assert posting.sections == {key: ["熟悉CUDA与Python"]}
    assert posting.section_headings == {key: heading}
    assert [(e["skill"], e["section"], e["count"], e["snippet"])
            for e in hit_evidence(posting.skill_evidence, posting.sections, posting.tags)] == [
        ("Python", "tags", 1, "Python"),
        ("CUDA", key, 1, "熟悉CUDA与Python"),
        ("Python", key, 1, "熟悉CUDA与Python"),
    ]


_HEADINGS = st.sampled_from(["tags", "Tags", "tags (section)", "任职要求", "岗位职责", "about", "", "其他", "1"])
_LINES = st.lists(st.sampled_from(["熟悉CUDA与Python", "PyTorch", "C++ 编程", "了解 vLLM、TensorRT", "沟通能力", "go"]),
                  max_size=3)


@settings(max_examples=200, deadline=None)
@given(tags=st.lists(st.sampled_from(["Python", "CUDA", "大模型", "Go"]), max_size=3),
       blocks=st.lists(st.tuples(_HEADINGS, _LINES), max_size=4))
def test_evidence_read_back_from_a_normalized_posting_is_what_the_tagger_found(tags, blocks):
    """Whatever its headings, a posting's skill evidence rendered from its sections and tags (as every reader
    renders it) names the text the tagger matched, in the section it found it in."""
    posting = _normalized_and_tagged(tags, blocks)
    read = hit_evidence(posting.skill_evidence, posting.sections, posting.tags)
    assert [(e["skill"], e["section"], e["matched"]) for e in read] == [
        (h.skill, h.section, h.matched) for h in posting.skill_evidence]
    assert len({(h.skill, h.section) for h in posting.skill_evidence}) == len(posting.skill_evidence)
