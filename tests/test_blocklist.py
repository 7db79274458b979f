"""Blocklists (normalize/blocklist.py) and their effect on fit (normalize/fit.py): pure, table-driven."""

from __future__ import annotations

import pytest

import dataclasses

from conftest import ROOT
from normalize.blocklist import MAX_TEXT, Blocklist
from normalize.fit import ProfileError, load_profile, score_fit
from normalize.score import PostingFacts, SkillInfo
from normalize.skills import load_taxonomy

TAXONOMY = load_taxonomy()
INFO = {s.name: SkillInfo(s.category, s.parent, s.frontier) for s in TAXONOMY.skills}
EXAMPLE = load_profile((ROOT / "seeds" / "profile.toml").read_text(encoding="utf-8"), TAXONOMY)


def _hit(blocklist: Blocklist, **posting):
    hit = blocklist.check_posting(**{"title": None, "company": None, **posting})
    return hit and (hit.rule, hit.field, hit.matched)


@pytest.mark.parametrize("posting, expected", [
    pytest.param(dict(title="算法工程师（外包）"), ("keyword:外包", "title", "外包"), id="keyword-in-title"),
    pytest.param(dict(title="CUDA工程师", sections={"about": ["本岗位为派遣制"]}), ("keyword:派遣", "text", "派遣"),
                 id="keyword-in-a-bullet"),
    pytest.param(dict(title="推理工程师", description="需要驻场开发，地点上海"), ("keyword:/驻场(开发|办公)/", "text", "驻场开发"),
                 id="regex-keyword-in-description"),
    pytest.param(dict(title="推理工程师", tags=["外包项目"]), ("keyword:外包", "tags", "外包"), id="keyword-in-tags"),
    pytest.param(dict(title="推理工程师", company="星云人才"), ("company:星云人才", "company", "星云人才"),
                 id="named-company"),
    pytest.param(dict(title="推理工程师", company="上海某某人力资源服务有限公司"),
                 ("company:/人力资源(服务)?有限公司$/", "company", "人力资源服务有限公司"), id="company-regex"),
    pytest.param(dict(title="推理工程师", company="吉利汽车", sections={"about": ["不驻场"]}), None, id="nothing-matches"),
    pytest.param(dict(title="星云人才招聘的岗位", company="吉利汽车"), None, id="company-rules-read-only-the-company"),
])
def test_example_profile_blocklist(posting, expected):
    assert _hit(EXAMPLE.blocklist, **posting) == expected


@pytest.mark.parametrize("entries, posting, expected", [
    pytest.param(["Meta"], dict(company="Meta Platforms"), ("company:Meta", "company", "meta"), id="latin-word"),
    pytest.param(["Meta"], dict(company="Metaverse Labs"), None, id="latin-not-inside-a-word"),
    pytest.param(["Meta"], dict(company="ＭＥＴＡ"), ("company:Meta", "company", "meta"), id="full-width-folded"),
    pytest.param(["/^acme$/"], dict(company="ACME"), ("company:/^acme$/", "company", "acme"), id="regex-case-folded"),
    pytest.param(["/^acme$/"], dict(company="Acme Staffing"), None, id="anchored-regex"),
])
def test_company_entries(entries, posting, expected):
    assert _hit(Blocklist(companies=entries), **posting) == expected


def test_the_first_rule_written_wins_and_the_snippet_shows_its_surroundings():
    hit = Blocklist(keywords=["派遣", "外包"]).check_posting(title="外包岗位", company=None,
                                                         sections={"about": ["劳务派遣，长期项目"]})
    assert (hit.rule, hit.field, hit.snippet) == ("keyword:派遣", "text", "劳务派遣,长期项目")  # the folded text: NFKC makes ， a ,


def test_only_the_first_max_text_characters_of_a_field_are_read():
    text = "x" * MAX_TEXT + "外包"
    assert Blocklist(keywords=["外包"]).check_posting(title=None, company=None, description=text) is None
    assert Blocklist(keywords=["外包"]).check_posting(title=None, company=None, description=text[2:]) is not None


@pytest.mark.parametrize("block, message", [
    pytest.param('companies = ["/(unclosed/"]', "block: company entry '/(unclosed/': not a regular expression",
                 id="bad-regex"),
    pytest.param('keywords = ["  "]', "block: keyword entry '  ' is empty", id="empty-entry"),
    pytest.param('company = ["x"]', "block.company: Extra inputs are not permitted", id="typo-in-a-key"),
])
def test_profile_blocklist_errors_name_the_entry(block, message):
    with pytest.raises(ProfileError, match="^" + message.replace("(", r"\(").replace("[", r"\[")):
        load_profile(f'name = "t"\n[block]\n{block}\n', TAXONOMY)


def test_a_blocked_posting_has_fit_0_and_keeps_its_reasons():
    facts = PostingFacts(title="CUDA算子开发工程师（外包）", company="吉利汽车", city="杭州", salary_status="parsed",
                         monthly_min=40000, monthly_max=60000, currency="CNY", skills=("CUDA",), work_mode="混合办公")
    ev = score_fit(facts, EXAMPLE, INFO)
    unblocked = score_fit(dataclasses.replace(facts, title="CUDA算子开发工程师"), EXAMPLE, INFO)
    assert (unblocked.overall, ev.overall) == (100, 0)
    assert ev.evidence["blocked"] == [{"rule": "keyword:外包", "field": "title", "matched": "外包",
                                       "snippet": "cuda算子开发工程师(外包)"}]
    assert [(s.key, s.value) for s in ev.signals["blocked"]] == [("keyword:外包", "title: cuda算子开发工程师(外包)")]
    assert ev.summary == ("已屏蔽（keyword:外包，title：“cuda算子开发工程师(外包)”）；未屏蔽时"
                          "匹配度100：技能100、薪资100、城市100、工作模式100。")
    assert ev.evidence["overall"] == unblocked.evidence["overall"]  # the parts and reasons are kept
    assert ev.explanations == unblocked.explanations


def test_a_profile_without_a_block_table_blocks_nothing():
    profile = load_profile('name = "t"', TAXONOMY)
    assert not profile.blocklist
    assert "blocked" not in score_fit(PostingFacts(title="外包"), profile, INFO).signals
