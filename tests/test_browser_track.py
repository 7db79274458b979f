"""Tracking an application in a real browser: on a posting's page (``jobcrawl serve`` on 127.0.0.1, headless
Chromium) choose ``applied`` with a note and save; the form posts to the writable canned query ``track`` with
Datasette's CSRF token, lands on ``my_applications`` with the job and the note, and the applications view of
the file has the status on every posting of the job's duplicate cluster."""

from __future__ import annotations

import sqlite3

import pytest

from test_browse import build_browse_db
from test_browser import _checked_page, _open, _serving, _wait_for, browser  # noqa: F401 (browser: a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The browse test database (postings 1 and 3 are one job), served: (base URL, database path)."""
    db = build_browse_db(tmp_path_factory.mktemp("browser-track"))
    for base in _serving(db):
        yield base, db


def test_set_a_status_on_the_posting_page_and_see_it_in_my_applications(browser, served):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    base, db = served
    _open(browser, base + "/jobs/postings/3")
    assert browser.find_element(By.CSS_SELECTOR, ".application-status").text == "Not tracked. · my applications"
    form = browser.find_element(By.CSS_SELECTOR, "form.track")
    Select(form.find_element(By.NAME, "status")).select_by_visible_text("applied")
    form.find_element(By.NAME, "note").send_keys("sent CV to <b>HR</b>")
    _checked_page(browser, base, "posting-track.png")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    _wait_for(browser, lambda d: d.current_url == base + "/jobs/my_applications")

    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Status saved." in body
    rows = browser.find_elements(By.CSS_SELECTOR, ".rows-and-columns tbody tr")
    cells = [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]
    assert [c[:5] + [c[7]] for c in cells] == [["3", "AI算子开发工程师", "星云人才", "上海", "applied", "sent CV to <b>HR</b>"]]
    link = rows[0].find_element(By.LINK_TEXT, "AI算子开发工程师")
    assert link.get_attribute("href") == base + "/jobs/postings/3"
    _checked_page(browser, base, "my-applications.png")

    with sqlite3.connect(db) as conn:
        shown = conn.execute("SELECT posting_id, status, notes FROM applications ORDER BY posting_id").fetchall()
    assert shown == [(1, "applied", "sent CV to <b>HR</b>"), (3, "applied", "sent CV to <b>HR</b>")]

    link.click()
    _wait_for(browser, lambda d: d.current_url == base + "/jobs/postings/3")
    status = browser.find_element(By.CSS_SELECTOR, ".application-status").text
    assert status.startswith("applied since 20")
    assert Select(browser.find_element(By.NAME, "status")).first_selected_option.text == "applied"
