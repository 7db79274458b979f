"""The morning loop of issue #29, end to end: `jobcrawl crawl` of a Greenhouse board on the local mock
server → a watch delivers exactly the two new matching postings to a local webhook receiver and a
local SMTP server → the next crawl delivers nothing.

The board is the recorded GitLab response (fixtures/web/ats/greenhouse_gitlab_jobs.json) with jobs
added the next morning: two that match the watch (CUDA, Shanghai), one in another city and one the
profile's blocklist hides (外包).
"""

from __future__ import annotations

import copy
import html
import json
import sqlite3
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, run_cli
from mockserver import MockServer, build_docroot
from receivers import Receiver, SmtpSink
from test_crawl import QUICK_THROTTLE

pytestmark = pytest.mark.slow

GITLAB = json.loads((FIXTURES / "web" / "ats" / "greenhouse_gitlab_jobs.json").read_text(encoding="utf-8"))


def job(job_id: int, title: str, city: str, text: str) -> dict:
    """A job of the recorded board with its identity, title, location and content replaced."""
    out = copy.deepcopy(GITLAB["jobs"][1])
    out.update(id=job_id, internal_job_id=job_id, title=title, location={"name": city},
               absolute_url=f"https://job-boards.greenhouse.io/exampleai/jobs/{job_id}",
               content=html.escape(f"<p>{text}</p><ul><li>Own the {title} work end to end.</li></ul>"))
    return out


YESTERDAY = [job(101, "CUDA Performance Engineer", "Shanghai", "Tune CUDA kernels for training."),
             job(102, "Account Executive", "Shanghai", "Sell the platform.")]
MORNING = YESTERDAY + [
    job(201, "CUDA Kernel Engineer", "Shanghai", "Write CUDA kernels for LLM inference."),
    job(202, "LLM Inference Engineer", "Shanghai", "Serve models with CUDA graphs and TensorRT."),
    job(203, "CUDA Engineer", "Beijing", "Write CUDA kernels."),
    job(204, "CUDA Engineer (外包)", "Shanghai", "驻场 project with CUDA."),
]


def publish(root: Path, jobs: list[dict]) -> None:
    board = root / "greenhouse" / "v1" / "boards" / "exampleai" / "jobs.json"
    board.parent.mkdir(parents=True, exist_ok=True)
    board.write_text(json.dumps({"jobs": jobs, "meta": {"total": len(jobs)}}), encoding="utf-8")


def test_morning_loop(tmp_path, monkeypatch):
    root = build_docroot(tmp_path / "www")
    publish(root, YESTERDAY)
    db = tmp_path / "jobs.db"
    with MockServer(root, tmp_path / "requests.log") as server, Receiver() as hook, SmtpSink() as smtp:
        sources = tmp_path / "sources.toml"
        sources.write_text('contact = "https://example.org/jobcrawl-tests"\n\n[sources.exampleai]\nspider = "greenhouse"\n'
                           f'boards = ["exampleai"]\ncompany = "Example AI"\nbase_url = "{server.url("greenhouse")}"\n'
                           'allow_private = true\n',  # the local server is on 127.0.0.1 (crawler/web/safety.py)
                           encoding="utf-8")
        (tmp_path / "profile.toml").write_text((ROOT / "seeds" / "profile.toml").read_text(encoding="utf-8"), encoding="utf-8")
        config = tmp_path / "alerts.toml"
        config.write_text(f'profile = "profile.toml"\n\n[destinations.hook]\ntype = "webhook"\nurl = "{hook.url("/alerts")}"\n'
                          f'\n[destinations.mail]\ntype = "email"\nhost = "127.0.0.1"\nport = {smtp.port}\nsecurity = "none"\n'
                          'sender = "jobcrawl <alerts@example.org>"\nto = ["me@example.org"]\n', encoding="utf-8")
        monkeypatch.setenv("JOBCRAWL_ALERTS_CONFIG", str(config))

        def crawl():
            return run_cli("crawl", "exampleai", "--sources", str(sources), "--db", str(db), *QUICK_THROTTLE, check=True)

        crawl()
        added = run_cli("watch", "add", "cuda-sh", "--search", "CUDA", "--city", "Shanghai", "--db", str(db), check=True)
        assert added.stdout == ("watch cuda-sh added (#1) → hook, mail; 1 postings match already: "
                                "the baseline (never delivered)\n")

        publish(root, MORNING)
        morning = crawl()
        assert "alerts: new matches cuda-sh 2 · delivered hook 2, mail 2" in morning.stdout.splitlines()
        [request] = hook.requests
        assert [p["title"] for p in json.loads(request.body)["postings"]] == ["CUDA Kernel Engineer", "LLM Inference Engineer"]
        [message] = smtp.messages
        assert message["Subject"] == "jobcrawl: 2 new postings for cuda-sh"
        body = message.get_content()
        assert "CUDA Kernel Engineer · Example AI · Shanghai" in body and "LLM Inference Engineer · Example AI" in body
        assert "Beijing" not in body and "外包" not in body

        again = crawl()
        assert "alerts: new matches cuda-sh 0 · delivered nothing" in again.stdout.splitlines()
        assert (len(hook.requests), len(smtp.messages)) == (1, 1)

    with sqlite3.connect(db) as conn:
        blocked = conn.execute("SELECT p.title, b.rule FROM posting_blocks b JOIN postings p ON p.id = b.posting_id").fetchall()
        sent = conn.execute("SELECT destination, count(*) FROM watch_deliveries WHERE status = 'sent' GROUP BY 1").fetchall()
    assert blocked == [("CUDA Engineer (外包)", "keyword:外包")]
    assert sent == [("hook", 2), ("mail", 2)]
