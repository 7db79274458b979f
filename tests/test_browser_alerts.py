"""Issue #29's Datasette parts in a real headless Chromium (tests/test_browser.py's way): the fit view hides
blocked and stale postings until its toggle is clicked, and the posting page shows its history.
Screenshots: test-output/screenshots/fit*.png, posting-history.png."""

from __future__ import annotations

import pytest

from conftest import start_serve
from test_browse_alerts import build_alerts_db
from test_browser import _checked_page, _open, _open_until, _wait_for, browser  # noqa: F401 (the browser fixture)

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc, base = start_serve(build_alerts_db(tmp_path_factory.mktemp("browser-alerts")))
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _rows(driver) -> list[str]:
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('.rows-and-columns tbody tr td.col-id'), td => td.innerText.trim())")


def test_fit_view_and_its_toggle(browser, server):
    from selenium.webdriver.common.by import By

    rows = _open_until(browser, server + "/jobs/fit", _rows)
    assert sorted(rows, key=int) == ["1", "2", "5", "6", "7", "8"]
    note = browser.find_element(By.CSS_SELECTOR, "p.jobcrawl-hidden")
    assert note.text.startswith("Hidden: 1 posting closed or not seen since") and "1 blocked by your blocklist" in note.text
    header = browser.execute_script(
        "return Array.from(document.querySelectorAll('.rows-and-columns th'), th => th.dataset.column)")
    assert {"fit", "why_skills", "why_salary", "blocked_by", "site"} <= set(header)
    _checked_page(browser, server, "fit.png")
    note.find_element(By.LINK_TEXT, "show them").click()
    _wait_for(browser, lambda d: "_stale=1" in d.current_url and len(_rows(d)) == 8)
    assert "Showing closed, stale and blocked postings" in browser.find_element(By.CSS_SELECTOR, "p.jobcrawl-hidden").text
    _checked_page(browser, server, "fit-all.png")


def test_posting_page_history(browser, server):
    from selenium.webdriver.common.by import By

    _open(browser, server + "/jobs/postings/4")
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".posting-history ol.history > li")]
    assert items[:2] == ["2026-11-29 04:00 v1: 首次出现 first seen", "2026-11-29 04:00 v2:\n薪资 salary: 20–30K → 25–35K"]
    assert items[2].endswith("已关闭 closed")
    _checked_page(browser, server, "posting-history.png")
