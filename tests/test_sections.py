"""JD section splitting: heading vocabulary, inline headings, bullets, and no text lost.

The Chinese examples are shortened excerpts of real 智联/51job descriptions (Apache-2.0, see
fixtures/jd_examples/ATTRIBUTION.md); the optional `shared_data` tests run over every JD in
../shared/data/zh/ and print how often requirements and responsibilities are found.
"""

from __future__ import annotations

import csv
import re
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, SHARED_DATA, examples
from normalize import sections
from normalize.sections import HEADINGS, clean_bullet, heading_text, section_key, sections_dict, split_bullets, split_sections

P = pytest.param

# --------------------------------------------------------------------------- section_key on headings as written

HEADING_KEYS = [
    P("【岗位职责】", "responsibilities", id="zh-bracketed"),
    P("[任职要求]", "requirements", id="zh-square-brackets"),
    P("任职要求：", "requirements", id="zh-fullwidth-colon"),
    P("岗位职责;", "responsibilities", id="zh-semicolon-as-colon"),
    P("一、岗位职责", "responsibilities", id="zh-numbered"),
    P("（二）任职资格：", "requirements", id="zh-paren-numbered"),
    P("1．工作内容", "responsibilities", id="zh-fullwidth-dot"),
    P("● 要求", "requirements", id="zh-bullet-symbol"),
    P("加分项：", "preferred", id="zh-bonus"),
    P("福利待遇", "benefits", id="zh-benefits"),
    P("岗位职责及要求：", "responsibilities", id="zh-combined-takes-first"),
    P("职位描述：", "responsibilities", id="zh-job-description-holds-duties"),
    P("关于这个职位", "about", id="app-about"),
    P("最低要求", "requirements", id="app-minimum"),
    P("优先资格", "preferred", id="app-preferred"),
    P("Requirements:", "requirements", id="en-colon"),
    P("1. Requirements", "requirements", id="en-numbered"),
    P("## What you’ll do", "responsibilities", id="en-markdown-curly-apostrophe"),
    P("**Nice to have:**", "preferred", id="en-bold"),
    P("ＲＥＱＵＩＲＥＭＥＮＴＳ：", "requirements", id="en-fullwidth-upper"),
    P("About the role", "about", id="en-about"),
    P("What we offer", "benefits", id="en-benefits"),
    P("薪资福利", None, id="app-dimension-label-is-not-a-heading"),
    P("工作地点：", None, id="unknown"),
]


@pytest.mark.parametrize("heading, key", HEADING_KEYS)
def test_section_key(heading, key):
    assert section_key(heading) == key


def test_heading_text_strips_decoration_and_folds():
    assert heading_text("  **【 Nice To Have 】：**") == "nice to have"


# --------------------------------------------------------------------------- bullets

BULLETS = [
    P("1.负责A；2.负责B；3.负责C", ["负责A", "负责B", "负责C"], id="numbered-run-together"),
    P("1、负责X 2、负责Y", ["负责X", "负责Y"], id="dun-numbered"),
    P("（1）追踪科研动态。（2）对学术文章进行初审。", ["追踪科研动态。", "对学术文章进行初审。"], id="fullwidth-paren"),
    P("(1) a (2) b", ["a", "b"], id="ascii-paren"),
    P("1) 硕士；2) 电子工程", ["硕士", "电子工程"], id="close-paren"),
    P("①熟悉CUDA②熟悉Triton", ["熟悉CUDA", "熟悉Triton"], id="circled"),
    P("73 个在招 \u00ad· 其中算法优化工程师 2 个", ["73 个在招", "其中算法优化工程师 2 个"], id="format-character-before-a-marker"),
    P("熟悉CUDA \u200b- 熟悉Triton", ["熟悉CUDA", "熟悉Triton"], id="zero-width-space-before-a-dash"),
    P("• Python\n• SQL", ["Python", "SQL"], id="bullet-symbol-lines"),
    P("- Write CUDA kernels\n- Profile inference", ["Write CUDA kernels", "Profile inference"], id="dash-lines"),
    P("· 熟悉Linux\n· 熟悉Git", ["熟悉Linux", "熟悉Git"], id="middle-dot-lines"),
    P("负责A；负责B;负责C", ["负责A", "负责B", "负责C"], id="semicolons-without-numbers"),
    P("一、甲方案；二、乙方案", ["甲方案", "乙方案"], id="chinese-numerals"),
    P("１．本科；２．熟悉Go", ["本科", "熟悉Go"], id="fullwidth-digits"),
    P("1. 系统设计和接口定义2. 用C或C++来设计嵌入式软件3. 系统调试",
      ["系统设计和接口定义", "用C或C++来设计嵌入式软件", "系统调试"], id="numbers-glued-to-text"),
    P("4.对机器学习常用算法有基本理解，如SVM，PCA5.有opencv开发经验者优先",
      ["对机器学习常用算法有基本理解，如SVM，PCA", "有opencv开发经验者优先"], id="number-glued-to-latin-then-cjk"),
    P("1.熟悉COMSOL2. Practical experience", ["熟悉COMSOL", "Practical experience"], id="number-glued-to-latin-then-space"),
    P("1、2年以上研发经验；2、熟悉MySQL", ["2年以上研发经验", "熟悉MySQL"], id="item-starting-with-a-number"),
    P("1、熟悉6、7种语言中的至少一种", ["熟悉6、7种语言中的至少一种"], id="enumerated-numbers-are-not-markers"),
    P("有2、3年经验者优先", ["有2、3年经验者优先"], id="dun-between-numbers"),
    P("薪资2.5K-3.5万，Python 3.10，熟悉C++", ["薪资2.5K-3.5万，Python 3.10，熟悉C++"], id="decimals-versions-cplusplus"),
    P("1.熟悉C++；2.月薪2.5万", ["熟悉C++", "月薪2.5万"], id="decimal-inside-an-item"),
    P("5、有pcie2、pcie3的FPGA经验", ["有pcie2、pcie3的FPGA经验"], id="numbers-inside-words"),
    P("统一、规范的接口", ["统一、规范的接口"], id="chinese-numeral-inside-a-word"),
    P("Experience Required: 7 - 10 Years", ["Experience Required: 7 - 10 Years"], id="range-dash"),
    P("具备以下条件者优先：-- 研究生学历；-- 熟悉制造业",
      ["具备以下条件者优先：", "研究生学历", "熟悉制造业"], id="double-dash-after-punctuation"),
    P("学历*有独立解决问题的能力*两年以上经验", ["学历", "有独立解决问题的能力", "两年以上经验"], id="star-between-cjk"),
    P("熟悉A*算法", ["熟悉A*算法"], id="star-in-a-name"),
    P("3、负责X。3、负责Y。4、负责Z", ["负责X。", "负责Y。", "负责Z"], id="repeated-number"),
    P("1、负责X；2、负责Y；4、负责Z", ["负责X", "负责Y", "负责Z"], id="skipped-number"),
    P("*****", [], id="masked-only-is-dropped"),
    P("", [], id="empty"),
    P(
        "1.负责液体姿控动力系统总体方案设计、系统仿真计算，2.负责组织动力系统级冷热试验；",
        ["负责液体姿控动力系统总体方案设计、系统仿真计算", "负责组织动力系统级冷热试验"],
        id="real-comma-before-next-number",
    ),
    P(
        "1、负责脑电信号获取、分析与处理单元算法设计与实现，寻找特征值；2、负责设计，开展脑电生理实验",
        ["负责脑电信号获取、分析与处理单元算法设计与实现，寻找特征值", "负责设计，开展脑电生理实验"],
        id="real-numbered-semicolons",
    ),
    P(
        "1.硕士及以上学历；2.至少3年及以上架构师工作经验；3.3年及以上Linux使用开发经验",
        ["硕士及以上学历", "至少3年及以上架构师工作经验", "3年及以上Linux使用开发经验"],
        id="real-next-item-starting-with-years",
    ),
    P("熟悉Linux，有2.5年经验", ["熟悉Linux，有2.5年经验"], id="decimal-years-outside-a-list"),
    P("1、熟悉X，工作年限2.5年", ["熟悉X，工作年限2.5年"], id="decimal-years-inside-an-item"),
    P(
        "1、熟悉Linux；2.5年以上经验",
        ["熟悉Linux", "2.5年以上经验"],
        id="decimal-years-where-the-next-item-would-be",
        marks=pytest.mark.xfail(strict=True, reason="`；2.5年` at item 2's place reads as item 2 + `5年`"),
    ),
]


@pytest.mark.parametrize("text, expected", BULLETS)
def test_split_bullets(text, expected):
    assert split_bullets(text) == expected


def test_numbered_sequence_continues_across_lines():
    text = "1、负责X；\n2、负责Y，包括3个模块\n3、负责Z"
    assert split_bullets(text) == ["负责X", "负责Y，包括3个模块", "负责Z"]


CLEAN_BULLET = [
    P("- Python", "Python", id="dash"),
    P("1. 熟悉CUDA", "熟悉CUDA", id="dot"),
    P("1、熟悉CUDA", "熟悉CUDA", id="dun"),
    P("（1）熟悉CUDA", "熟悉CUDA", id="fullwidth-paren"),
    P("① 熟悉CUDA", "熟悉CUDA", id="circled"),
    P("• 熟悉CUDA", "熟悉CUDA", id="bullet"),
    P("一、熟悉CUDA", "熟悉CUDA", id="chinese-numeral"),
    P("2.5K以上", "2.5K以上", id="decimal-kept"),
    P("--  Python", "Python", id="run-of-dashes"),
    P("•- 熟悉CUDA", "熟悉CUDA", id="run-of-marks"),
    P("- 1、熟悉CUDA", "1、熟悉CUDA", id="mark-then-number-kept"),
    P("·\u3000熟悉CUDA", "熟悉CUDA", id="mark-then-ideographic-space"),
    P("熟悉CUDA", "熟悉CUDA", id="no-marker"),
    P("五年以上经验", "五年以上经验", id="chinese-numeral-without-mark-kept"),
]


@pytest.mark.parametrize("line, expected", CLEAN_BULLET)
def test_clean_bullet(line, expected):
    assert clean_bullet(line) == expected


# --------------------------------------------------------------------------- sections

RESP, REQ, PREF, BEN, ABOUT = "responsibilities", "requirements", "preferred", "benefits", "about"

SECTIONS = [
    P(
        "岗位职责：1、负责微信小程序的开发和维护工作；2、独立开发微信小程序公用模块以及相关业务需求； 任职要求： "
        "1、2年以上研发经验，精通php开发，掌握WXML、WXSS 2、熟悉MYSQL或其他大型数据库；3、具有vue开发经验者优先。",
        [
            (RESP, "岗位职责：", ["负责微信小程序的开发和维护工作", "独立开发微信小程序公用模块以及相关业务需求"]),
            (REQ, "任职要求：", ["2年以上研发经验，精通php开发，掌握WXML、WXSS", "熟悉MYSQL或其他大型数据库", "具有vue开发经验者优先。"]),
        ],
        id="inline-one-line-优先-in-sentence-is-not-a-heading",
    ),
    P(
        "1．岗位职责（1）追踪科研动态，策划选题。（2）对学术文章进行初审。2．任职要求（1）热爱科技期刊编辑事业；（2）年龄35岁以下，身体健康；",
        [
            (RESP, "1．岗位职责", ["追踪科研动态，策划选题。", "对学术文章进行初审。"]),
            (REQ, "2．任职要求", ["热爱科技期刊编辑事业", "年龄35岁以下，身体健康"]),
        ],
        id="numbered-headings-without-colon",
    ),
    P(
        "【工作职责】1.制定产品光学系统研发实施方案；2.实施仪器光学系统和光学零件设计；【任职要求】1.应用物理、应用光学等相关专业。2.熟练阅读应用英文文献和技术资料。",
        [
            (RESP, "【工作职责】", ["制定产品光学系统研发实施方案", "实施仪器光学系统和光学零件设计"]),
            (REQ, "【任职要求】", ["应用物理、应用光学等相关专业。", "熟练阅读应用英文文献和技术资料。"]),
        ],
        id="bracketed-inline",
    ),
    P(
        "岗位职责：1. 系统设计、功能模块划分和接口定义2. 用C或C++来设计和实现嵌入式软件系统3. 系统调试任职要求：1. 本科及以上学历；2. 熟悉DSP或 ARM架构；",
        [
            (RESP, "岗位职责：", ["系统设计、功能模块划分和接口定义", "用C或C++来设计和实现嵌入式软件系统", "系统调试"]),
            (REQ, "任职要求：", ["本科及以上学历", "熟悉DSP或 ARM架构"]),
        ],
        id="heading-glued-to-the-last-item",
    ),
    P(
        "一、岗位职责1、协助产品完善需求，提供技术实现方案。2、负责信息化技术管理工作。\xa0二、任职要求1、硕士及以上学历， 1年以上管理经验。2、熟练掌握JAVA基础知识。",
        [
            (RESP, "一、岗位职责", ["协助产品完善需求，提供技术实现方案。", "负责信息化技术管理工作。"]),
            (REQ, "二、任职要求", ["硕士及以上学历， 1年以上管理经验。", "熟练掌握JAVA基础知识。"]),
        ],
        id="chinese-numbered-headings",
    ),
    P(
        "岗位职责:职责描述：1. 完成软件系统代码的实现；2. 辅助进行系统的功能定义。 任职资格:任职要求：1.大学本科以上学历；2.有Vxworks系统开发经验者优先；",
        [
            (RESP, "岗位职责:", []),
            (RESP, "职责描述：", ["完成软件系统代码的实现", "辅助进行系统的功能定义。"]),
            (REQ, "任职资格:", []),
            (REQ, "任职要求：", ["大学本科以上学历", "有Vxworks系统开发经验者优先"]),
        ],
        id="doubled-headings",
    ),
    P(
        "大数据算法工程师岗位职责：1、负责数据采集、清洗、入库等ETL流程；2、负责建立数据模型。任职要求：1、研究生及以上学历；2、精通Python、C/C++等语言；",
        [
            (ABOUT, "", ["大数据算法工程师"]),
            (RESP, "岗位职责：", ["负责数据采集、清洗、入库等ETL流程", "负责建立数据模型。"]),
            (REQ, "任职要求：", ["研究生及以上学历", "精通Python、C/C++等语言"]),
        ],
        id="title-glued-before-heading-goes-to-about",
    ),
    P(
        "岗位职责从事人脸等生物特征的核心识别技术研究;参与人脸识别的相关评测。 职位要求计算机、模式识别相关专业;熟练使用C/C++编程;对深度学习算法有深入研究者优先考虑。",
        [
            (RESP, "岗位职责", ["从事人脸等生物特征的核心识别技术研究", "参与人脸识别的相关评测。"]),
            (REQ, "职位要求", ["计算机、模式识别相关专业", "熟练使用C/C++编程", "对深度学习算法有深入研究者优先考虑。"]),
        ],
        id="solid-headings-glued-to-text",
    ),
    P(
        "岗位职责;1.\xa0\xa0\xa0负责原清单的制作；2.\xa0\xa0\xa0负责空气质量模型的安装。任职资格：1.\xa0\xa0\xa0硕士及以上学历；",
        [
            (RESP, "岗位职责;", ["负责原清单的制作", "负责空气质量模型的安装。"]),
            (REQ, "任职资格：", ["硕士及以上学历"]),
        ],
        id="semicolon-after-heading",
    ),
    P(
        "●职责\xa01.大数据处理系统设计2.数据挖掘/图挖掘\xa0●要求\xa01.计算机等相关专业硕士二年级以上；2.熟悉docker/spark数据库；",
        [
            (RESP, "●职责", ["大数据处理系统设计", "数据挖掘/图挖掘"]),
            (REQ, "●要求", ["计算机等相关专业硕士二年级以上", "熟悉docker/spark数据库"]),
        ],
        id="weak-headings-after-bullet-symbols",
    ),
    P(
        "职位描述：开发及维护半导体器件建模软件。工作内容将会涉及软件的整个开发过程。任职要求：1、电子信息相关专业；",
        [
            (RESP, "职位描述：", ["开发及维护半导体器件建模软件。工作内容将会涉及软件的整个开发过程。"]),
            (REQ, "任职要求：", ["电子信息相关专业"]),
        ],
        id="heading-word-in-a-sentence-is-not-a-heading",
    ),
    P(
        "岗位职责1.设计、开发、测试医学图像处理应用程序2.书写相关文档 职位要求1.硕士以上学历2.良好的沟通能力 薪资待遇：1、五险一金完备；2、有薪假期：法定节假日、年休假。",
        [
            (RESP, "岗位职责", ["设计、开发、测试医学图像处理应用程序", "书写相关文档"]),
            (REQ, "职位要求", ["硕士以上学历", "良好的沟通能力"]),
            ("compensation", "薪资待遇：", ["五险一金完备", "有薪假期：法定节假日、年休假。"]),  # a pay heading (#27.4)
        ],
        id="three-sections-with-pay",
    ),
    P(
        "我们是一家做大模型推理的公司。\n\n岗位职责：\n1. 负责CUDA算子开发；\n2. 负责推理性能优化；\n任职要求：\n1. 熟悉C++；\n2. 熟悉Python 3.10\n加分项：\n有TensorRT经验\n福利待遇：五险一金；带薪年假",
        [
            (ABOUT, "", ["我们是一家做大模型推理的公司。"]),
            (RESP, "岗位职责：", ["负责CUDA算子开发", "负责推理性能优化"]),
            (REQ, "任职要求：", ["熟悉C++", "熟悉Python 3.10"]),
            (PREF, "加分项：", ["有TensorRT经验"]),
            (BEN, "福利待遇：", ["五险一金", "带薪年假"]),
        ],
        id="multi-line-export",
    ),
    P(
        "About the role\nWe build inference systems.\n\n## What you'll do\n- Write CUDA kernels\n- Profile LLM serving\n\n"
        "**Requirements:**\n* 3+ years of C++\n* Python 3.10\n\nNice to have: Triton; TensorRT\nBenefits\n- Equity",
        [
            (ABOUT, "About the role", ["We build inference systems."]),
            (RESP, "## What you'll do", ["Write CUDA kernels", "Profile LLM serving"]),
            (REQ, "**Requirements:**", ["3+ years of C++", "Python 3.10"]),
            (PREF, "Nice to have:", ["Triton", "TensorRT"]),
            (BEN, "Benefits", ["Equity"]),
        ],
        id="english-markdown",
    ),
    P(
        "An overview of this role\nYou will own the serving stack.\nWhat you’ll do\n- Ship features\nWhat you’ll bring\n"
        "- Fluent Go\nEven better if:\n- Rust\nAbout the team\nWe are remote.",
        [
            (ABOUT, "An overview of this role", ["You will own the serving stack."]),
            (RESP, "What you’ll do", ["Ship features"]),
            (REQ, "What you’ll bring", ["Fluent Go"]),
            (PREF, "Even better if:", ["Rust"]),
            (ABOUT, "About the team", ["We are remote."]),
        ],
        id="english-ats-headings-on-their-own-lines",
    ),
    P(
        "Responsibilities: design the API. Requirements: 5 years of Go. The requirements of the team are high.",
        [
            (RESP, "Responsibilities:", ["design the API."]),
            (REQ, "Requirements:", ["5 years of Go. The requirements of the team are high."]),
        ],
        id="english-inline",
    ),
    P(
        "【工作地点】北京市海淀区\n岗位职责：负责算子开发",
        [("工作地点", "【工作地点】", ["北京市海淀区"]), (RESP, "岗位职责：", ["负责算子开发"])],
        id="unknown-bracketed-heading-keeps-its-own-text",
    ),
    P(
        "公司简介\n其他信息：\n工作时间9:00-18:00",
        [(ABOUT, "公司简介", []), ("其他信息", "其他信息：", ["工作时间9:00-18:00"])],
        id="unknown-colon-line-outside-known-sections",
    ),
    P(
        "任职要求：\n具备以下条件：\n1. 本科",
        [(REQ, "任职要求：", ["具备以下条件：", "本科"])],
        id="colon-line-inside-a-known-section-is-text",
    ),
    P("熟悉CUDA；熟悉Triton", [(ABOUT, "", ["熟悉CUDA", "熟悉Triton"])], id="no-heading-all-about"),
    P("", [], id="empty"),
    P(
        "岗位职责：负责\ud800算子开发。任职要求：本科",
        [(RESP, "岗位职责：", ["负责\ud800算子开发。"]), (REQ, "任职要求：", ["本科"])],
        id="lone-surrogate-kept-headings-found",
    ),
    P(
        "●职责算法实现与调试●要求1.计算机等相关专业本科以上；2.C++编程熟练",
        [(RESP, "●职责", ["算法实现与调试"]), (REQ, "●要求", ["计算机等相关专业本科以上", "C++编程熟练"])],
        id="weak-heading-glued-to-its-text",
        marks=pytest.mark.xfail(strict=True, reason="`职责` followed directly by text is too ambiguous to take as a heading"),
    ),
    P(
        "到岗日期2018-11-30任职资格财务管理、会计及相关专业大学本科及以上学历",
        [(ABOUT, "", ["到岗日期2018-11-30"]), (REQ, "任职资格", ["财务管理、会计及相关专业大学本科及以上学历"])],
        id="solid-heading-glued-on-both-sides",
        marks=pytest.mark.xfail(strict=True, reason="no colon, list or sentence end around the heading"),
    ),
]


@pytest.mark.parametrize("text, expected", SECTIONS)
def test_split_sections(text, expected):
    assert split_sections(text) == expected


def test_sections_dict_merges_repeated_keys_in_order():
    text = "岗位描述：1、负责A；2、负责B。岗位职责：1、负责C。任职要求：1、本科"
    assert sections_dict(text) == {RESP: ["负责A", "负责B。", "负责C。"], REQ: ["本科"]}


# --------------------------------------------------------------------------- nothing lost

_CN_NUMERALS = set("一二三四五六七八九十")


def lost_letters(text: str) -> str:
    """Letters of ``text`` missing from headings + bullets (in order); list numerals `一、` may go."""
    out = [part for _, heading, bullets in split_sections(text) for part in (heading, *bullets)]
    got = [c for c in "".join(out) if c.isalpha()]
    position, lost = 0, []
    for char in (c for c in text if c.isalpha()):
        if position < len(got) and got[position] == char:
            position += 1
        elif char not in _CN_NUMERALS:
            lost.append(char)
    assert position == len(got), "output holds letters the input does not (or out of order)"
    return "".join(lost)


def sample_jds() -> list[tuple[str, str]]:
    rows = (FIXTURES / "jd_examples" / "zhilian_sample.tsv").read_text(encoding="utf-8").split("\n")[1:]
    return [tuple(row.split("\t", 1)) for row in rows if row]


def _marker_spans(pattern: re.Pattern[str], text: str) -> list[tuple[str | None, int, int]]:
    return [(m.lastgroup, *m.span()) for m in pattern.finditer(sections._fold1(text))]


_UNGUARDED_MARK = re.compile(sections._MARKERS)  # the same marker forms, without the lookahead


@pytest.mark.parametrize("text", [example.values[0] for example in BULLETS] + [text for _, text in sample_jds()][:40]
                         + ["⑴a⒈b●c•d(1)e(一)f1.g2、h3.5年i4)j5 k一、l - m:-- n中*文 o—p·q–r"])
def test_marker_lookahead_hides_no_marker(text):
    # _MARK starts with a lookahead of the characters a marker can start with; a new marker form
    # whose first character is missing from _MARK_FIRST would be skipped. The same scan without it:
    assert _UNGUARDED_MARK.pattern != sections._MARK.pattern
    assert _marker_spans(sections._MARK, text) == _marker_spans(_UNGUARDED_MARK, text)


@given(st.text(alphabet=st.sampled_from("①⑴⒈●•■-*·—–()（）1234567890.、一二三十 :;；中文abc\n"), max_size=60))
@settings(max_examples=examples(300), deadline=None)
def test_marker_lookahead_hides_no_marker_in_any_text(text):
    assert _marker_spans(sections._MARK, text) == _marker_spans(_UNGUARDED_MARK, text)


@pytest.mark.parametrize("line, text", sample_jds())
def test_real_jd_loses_no_letter(line, text):
    assert lost_letters(text) == ""


def test_real_sample_headings_map_back_to_their_keys():
    for _, text in sample_jds():
        for key, heading, _ in split_sections(text):
            if heading and key in HEADINGS.values():
                assert section_key(heading) == key, heading


_PIECES = st.sampled_from(
    [
        "岗位职责", "任职要求", "优先", "加分项", "福利待遇", "Requirements", "What you'll do", "Nice to have",
        "：", ":", "；", ";", "。", "，", ". ", " ", "\n", "\t", "【", "】", "[", "]", "(", ")", "（", "）", "**", "## ",
        "1.", "2.", "3、", "(1)", "（2）", "①", "②", "•", "●", "- ", "· ", "*", "一、", "二、", "十", "2.5K", "3.5万",
        "Python 3.10", "C++", "负责", "熟悉CUDA", "经验者", "本科", "有XX经验者优先", "设计", "Go", "A", "é",
    ]
)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(alphabet=string.ascii_letters + "中文字", max_size=4)), max_size=30))
def test_property_no_letter_lost(pieces):
    assert lost_letters("".join(pieces)) == ""


# --------------------------------------------------------------------------- the shared data (optional)

# A JD "contains a known heading of both kinds" when these words occur in it at all; the test then
# asks the splitter to find both sections. Plain substrings, so prose mentions count against us.
_RESP_WORDS = ("岗位职责", "工作职责", "职责描述", "主要职责", "工作内容", "岗位描述", "职位描述")
_REQ_WORDS = ("任职要求", "任职资格", "岗位要求", "职位要求", "任职条件")


def _shared_jds() -> dict[str, list[str]]:
    zh = SHARED_DATA / "zh"
    jds = {"zhilian51job_jd_text_program_362.txt": [
        line for line in (zh / "zhilian51job_jd_text_program_362.txt").read_text(encoding="utf-8").split("\n") if line.strip()
    ]}
    for name in ("boss_horti_295_with_jd.csv", "lagou_horti_63_with_jd.csv"):
        with open(zh / name, encoding="utf-8-sig", newline="") as handle:
            jds[name] = [row["职位描述"] for row in csv.DictReader(handle) if (row["职位描述"] or "").strip()]
    return jds


# The same test over every 4+ character Chinese word of the vocabulary (工作任务, 技能要求, …), which
# prose uses more often: printed for comparison.
_RESP_ALL = tuple(w for w, k in HEADINGS.items() if k == RESP and len(w) >= 4 and not w.isascii())
_REQ_ALL = tuple(w for w, k in HEADINGS.items() if k == REQ and len(w) >= 4 and not w.isascii())


def _both_found(texts: list[str], resp_words: tuple[str, ...], req_words: tuple[str, ...]) -> tuple[int, int]:
    eligible = [t for t in texts if any(w in t for w in resp_words) and any(w in t for w in req_words)]
    return sum(1 for t in eligible if (d := sections_dict(t)).get(RESP) and d.get(REQ)), len(eligible)


@pytest.mark.shared_data
def test_shared_data_sections_found():
    totals = [0, 0, 0, 0]
    for name, texts in _shared_jds().items():
        found, eligible = _both_found(texts, _RESP_WORDS, _REQ_WORDS)
        found_all, eligible_all = _both_found(texts, _RESP_ALL, _REQ_ALL)
        any_heading = sum(1 for t in texts if any(k in HEADINGS.values() for k, h, _ in split_sections(t) if h))
        print(f"\n{name}: {len(texts)} JDs, {any_heading} with a known heading found; "
              f"{eligible} name both kinds, both found in {found} ({found / max(1, eligible):.1%}); "
              f"by any vocabulary word {found_all}/{eligible_all}")
        totals = [a + b for a, b in zip(totals, (found, eligible, found_all, eligible_all))]
    share = totals[0] / totals[1]
    print(f"all: requirements and responsibilities found in {totals[0]}/{totals[1]} = {share:.1%} "
          f"(by any vocabulary word: {totals[2]}/{totals[3]} = {totals[2] / totals[3]:.1%})")
    assert share >= 0.95


@pytest.mark.shared_data
def test_shared_data_loses_no_letter():
    lost = {name: [i for i, t in enumerate(texts) if lost_letters(t)] for name, texts in _shared_jds().items()}
    assert lost == {name: [] for name in lost}
