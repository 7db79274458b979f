"""Skills through the real pipeline: the seeds carry the required skills with evidence; retag."""

from __future__ import annotations

import sqlite3

import pytest

from conftest import AS_OF, SEEDS, export_records, run_cli
from crawler.store.fts import PLAIN_SQL, register, search_ids
from normalize.skills import load_taxonomy

pytestmark = pytest.mark.slow

REQUIRED = {
    "000": ["CUDA", "FlashAttention", "PyTorch", "C", "C++", "OpenCL", "VTune", "Nsight Compute", "Nsight Systems",
            "perf", "flame graph", "VTune", "gperftools", "PaddlePaddle", "LLaMA", "Qwen", "Mistral", "GPT", "CLIP",
            "ViT", "KV Cache", "operator fusion", "quantization", "parallel computing", "performance tuning",
            "computer architecture", "LLM"],
    "003": ["CNN", "CUDA", "DETR", "NPU", "PyTorch", "TensorFlow", "Transformer", "C", "C++", "Python", "graph fusion",
            "compiler optimization", "parallel computing", "performance optimization"],
}


@pytest.fixture(scope="module")
def records(seeded_db):
    return {r["locator"][:3]: r for r in export_records(seeded_db)}


@pytest.mark.parametrize("seed", ["000", "003"])
def test_seed_carries_required_skills(records, seed):
    skills = records[seed]["skills"]
    assert [s for s in REQUIRED[seed] if s not in skills] == []
    assert not {"R", "Go", "Java", "JavaScript", "Rust", "D"} & set(skills)
    assert len(skills) == len(set(skills))


def test_skill_evidence_names_section_text_and_snippet(records):
    ev = {(e["skill"], e["section"]): e for e in records["000"]["skill_evidence"]}
    assert ev[("CUDA", "tags")]["matched"] == "Cuda"
    flame = ev[("flame graph", "requirements")]
    assert (flame["matched"], flame["count"], flame["category"]) == ("火焰图", 1, "tool")
    assert "火焰图" in flame["snippet"] and len(flame["snippet"]) <= 50
    gperf = ev[("gperftools", "requirements")]
    assert gperf["matched"] == "gperf"
    c = ev[("C", "requirements")]
    assert (c["matched"], c["snippet"]) == ("C", "具备良好的算法与代码功底，熟悉C/C++编程，精通CUDA高性能并行编程")
    # tags first, then the JD sections in order; skills are listed by first appearance
    sections = list(dict.fromkeys(e["section"] for e in records["000"]["skill_evidence"]))
    assert sections == ["tags", "about", "requirements", "responsibilities", "preferred"]
    assert records["000"]["skills"][:3] == ["CUDA", "FlashAttention", "PyTorch"]


def test_skills_table_mirrors_the_taxonomy(seeded_db):
    tax = load_taxonomy()
    conn = sqlite3.connect(seeded_db)
    assert conn.execute("SELECT count(*) FROM skills").fetchone()[0] == len(tax.skills) >= 500
    assert conn.execute("SELECT category, parent FROM skills WHERE name = 'FlashAttention'").fetchone()[1] == "attention optimization"
    assert conn.execute("SELECT value FROM meta WHERE key = 'taxonomy_version'").fetchone()[0] == tax.version


def test_retag_is_idempotent_and_follows_taxonomy_changes(tmp_path, db_path):
    run_cli("ingest", str(SEEDS), "--db", str(db_path), "--as-of", AS_OF, check=True)
    conn = sqlite3.connect(db_path)
    register(conn)
    dump = lambda: conn.execute("SELECT * FROM posting_skills ORDER BY posting_id, seq").fetchall()  # noqa: E731
    before = dump()
    proc = run_cli("retag", "--db", str(db_path), check=True)
    assert "retagged 2 postings · skills changed in 0" in proc.stdout
    assert dump() == before

    packaged = (load_taxonomy().rows())
    assert any(r["name"] == "VTune" for r in packaged)
    from normalize import skills as skills_module
    from importlib import resources

    text = resources.files(skills_module.__package__).joinpath("data/skills.toml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith('{ name = "VTune"')]
    assert len(lines) == len(text.splitlines()) - 1, "the VTune entry is one line of the taxonomy"
    custom = tmp_path / "skills.toml"
    custom.write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run_cli("retag", "--db", str(db_path), "--taxonomy", str(custom), check=True)
    assert "skills changed in 1" in proc.stdout
    [r000] = [r for r in export_records(db_path) if r["company"] == "吉利汽车"]
    assert "VTune" not in r000["skills"] and "Nsight Compute" in r000["skills"]
    assert conn.execute("SELECT count(*) FROM skills WHERE name = 'VTune'").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM posting_versions").fetchone()[0] == 0  # no new versions
    # the search index follows: VTune is still in the JD text, no longer a skill name
    skills_indexed = conn.execute(f"SELECT {PLAIN_SQL.format('skills')} FROM postings_fts WHERE rowid = ?",
                                  (r000["id"],)).fetchone()[0]
    assert "Nsight Compute" in skills_indexed and "VTune" not in skills_indexed
    assert search_ids(conn, "VTune") == [r000["id"]]
