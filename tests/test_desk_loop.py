"""The job seeker's morning loop with the desk, end to end: `jobcrawl crawl` of a Greenhouse board on the local
mock server → a watch alerts a local webhook receiver → the search listing in headless Chromium at 1280 × 900
shows the new posting on the first screen → its page marks it `applied` (the form, a real `jobcrawl serve`) and an
agent saves the other one (the MCP client) → `my_applications` and `track --list` show both → a broader watch
with its existing matches and the next morning (the applied job reposted under a new id, one new job) alert the
untracked postings only.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import run_cli, start_serve
from mockserver import MockServer, build_docroot
from receivers import Receiver
from test_browser import _checked_page, _open, _wait_for, browser  # noqa: F401 (browser: a fixture)
from test_crawl import QUICK_THROTTLE
from test_first_screen import HEIGHT, MEASURE, WIDTH
from test_mcp import tool
from test_morning import job, publish

pytestmark = [pytest.mark.slow, pytest.mark.browser]

KERNEL = job(201, "CUDA Kernel Engineer", "Shanghai", "Write CUDA kernels for LLM inference.")
INFERENCE = job(202, "LLM Inference Engineer", "Shanghai", "Serve models with CUDA graphs and TensorRT.")
YESTERDAY = [job(101, "CUDA Performance Engineer", "Shanghai", "Tune CUDA kernels for training."),
             job(102, "Account Executive", "Shanghai", "Sell the platform.")]
MORNING = YESTERDAY + [KERNEL, INFERENCE]
REPOSTED = {**KERNEL, "id": 301, "internal_job_id": 301,
            "absolute_url": "https://job-boards.greenhouse.io/exampleai/jobs/301"}
NEXT_MORNING = MORNING + [REPOSTED, job(302, "GPU Compiler Engineer", "Shanghai", "Lower CUDA kernels with MLIR.")]


def posted_titles(hook: Receiver) -> list[list[str]]:
    return [[p["title"] for p in json.loads(r.body)["postings"]] for r in hook.requests]


def test_the_morning_loop_with_the_desk(tmp_path, monkeypatch, browser):  # noqa: F811 (the fixture imported above)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    root = build_docroot(tmp_path / "www")
    publish(root, YESTERDAY)
    db = tmp_path / "jobs.db"
    with MockServer(root, tmp_path / "requests.log") as board, Receiver() as hook:
        sources = tmp_path / "sources.toml"
        sources.write_text('contact = "https://example.org/jobcrawl-tests"\n\n[sources.exampleai]\nspider = "greenhouse"\n'
                           f'boards = ["exampleai"]\ncompany = "Example AI"\nbase_url = "{board.url("greenhouse")}"\n'
                           'allow_private = true\n', encoding="utf-8")
        config = tmp_path / "alerts.toml"
        config.write_text(f'[destinations.hook]\ntype = "webhook"\nurl = "{hook.url("/alerts")}"\n', encoding="utf-8")
        monkeypatch.setenv("JOBCRAWL_ALERTS_CONFIG", str(config))

        def crawl():
            return run_cli("crawl", "exampleai", "--sources", str(sources), "--db", str(db), *QUICK_THROTTLE, check=True)

        crawl()
        run_cli("watch", "add", "cuda-sh", "--search", "CUDA", "--city", "Shanghai", "--db", str(db), check=True)
        publish(root, MORNING)
        crawl()
        assert posted_titles(hook) == [["CUDA Kernel Engineer", "LLM Inference Engineer"]]
        with sqlite3.connect(db) as conn:
            ids = dict(conn.execute("SELECT title, id FROM postings"))

        proc, base = start_serve(db)
        try:
            # the search result, at 1280 × 900: the new posting's row starts on the first screen
            browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
            _open(browser, base + "/jobs/jobs?_search=CUDA")
            assert browser.execute_script(MEASURE)["viewport"] == [WIDTH, HEIGHT]
            link = browser.find_element(By.LINK_TEXT, "CUDA Kernel Engineer")
            assert 0 <= link.rect["y"] < HEIGHT
            _checked_page(browser, base, "desk-loop-search.png")

            # its page: applied, with a note
            link.click()
            _wait_for(browser, lambda d: d.current_url == f"{base}/jobs/postings/{ids['CUDA Kernel Engineer']}")
            form = browser.find_element(By.CSS_SELECTOR, "form.track")
            Select(form.find_element(By.NAME, "status")).select_by_visible_text("applied")
            form.find_element(By.NAME, "note").send_keys("referral from a former colleague")
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            _wait_for(browser, lambda d: d.current_url == base + "/jobs/my_applications")

            # an agent saves the other one through the MCP endpoint
            saved = tool(base + "/-/mcp", "execute_writable_canned_query", database="jobs", query="track",
                         parameters={"posting_id": ids["LLM Inference Engineer"], "status": "saved", "note": ""})
            assert not saved.is_error, saved.content

            def tracked(driver) -> dict | bool:
                _open(driver, base + "/jobs/my_applications")
                rows = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td")]
                        for row in driver.find_elements(By.CSS_SELECTOR, "table.rows-and-columns tbody tr")]
                return {row[1]: row for row in rows} if len(rows) == 2 else False

            # loaded again until both rows show (at most 30 s): in two full-suite runs of 2026-12-07 the page listed
            # neither right after the agent's write, and alone it never did; the cause is not found yet
            shown = _wait_for(browser, tracked, timeout=30)
            assert set(shown) == {"CUDA Kernel Engineer", "LLM Inference Engineer"}
            assert "applied" in shown["CUDA Kernel Engineer"] and "saved" in shown["LLM Inference Engineer"]
            _checked_page(browser, base, "desk-loop-my-applications.png")
        finally:
            browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
            proc.terminate()
            proc.wait(timeout=30)

        listed = [json.loads(line) for line in run_cli("track", "--list", "--json", "--db", str(db), check=True).stdout.splitlines()]
        assert [(r["id"], r["title"], r["status"], r["notes"]) for r in listed] == [
            (ids["LLM Inference Engineer"], "LLM Inference Engineer", "saved", None),
            (ids["CUDA Kernel Engineer"], "CUDA Kernel Engineer", "applied", "referral from a former colleague")]

        # a broader watch, its existing matches included: not the two tracked jobs
        run_cli("watch", "add", "cuda-any", "--search", "CUDA", "--include-existing", "--db", str(db), check=True)
        # the next morning: the applied job reposted under a new id, and one new job; only the new one is alerted
        publish(root, NEXT_MORNING)
        crawl()
        alerted = sorted(posted_titles(hook)[1:])
        assert alerted == [["CUDA Performance Engineer", "GPU Compiler Engineer"], ["GPU Compiler Engineer"]]

    with sqlite3.connect(db) as conn:
        repost = conn.execute("SELECT p.id, a.status FROM postings p LEFT JOIN applications a ON a.posting_id = p.id"
                              " WHERE p.url LIKE '%/jobs/301'").fetchall()
    assert len(repost) == 1 and repost[0][1] == "applied"  # the copy is the same job: its status shows on it
