"""The explorer in a real browser: ``jobcrawl serve`` in a subprocess, headless Chromium via Selenium.

Opens the listing, searches it, opens a posting, the hostile posting and the market charts;
asserts the text a reader sees, that no script from the data ran (no alert, no global set by the
payloads) and that every resource came from the server itself (no network here). Screenshots go
to ``test-output/screenshots/``.

Uses Debian's ``chromium`` and ``chromedriver`` (``Service('/usr/bin/chromedriver')``, so Selenium
Manager never downloads a driver). Skips when they are absent, unless ``JOBCRAWL_REQUIRE_BROWSER=1``
(CI), when it fails instead.
"""

from __future__ import annotations

import os
import shutil

import pytest

from conftest import ROOT, start_serve
from test_browse import HOSTILE_TITLE, build_browse_db

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1400,1600", "--lang=zh-CN"]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``jobcrawl serve`` on a free port of 127.0.0.1 over the browse test database; yields its base URL."""
    db = build_browse_db(tmp_path_factory.mktemp("browser"))
    proc, base = start_serve(db)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    missing = [name for name, path in (("chromium", _chromium()), ("chromedriver", shutil.which(CHROMEDRIVER)))
               if not path]
    if missing:
        message = f"{' and '.join(missing)} not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("JOBCRAWL_REQUIRE_BROWSER") == "1":
            pytest.fail(message + "; JOBCRAWL_REQUIRE_BROWSER=1 requires the browser test")
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = _chromium()
    for flag in (*CHROME_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chrome-profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def _open(driver, url: str):
    driver.get(url)
    _no_alert(driver)
    return driver


def _no_alert(driver) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return
    pytest.fail(f"an alert opened: {text!r}")


def _wait_for(driver, condition, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _checked_page(driver, base: str, shot: str) -> None:
    """After a page: no payload global, every resource local, no console error; then a screenshot."""
    _no_alert(driver)
    assert driver.execute_script("return typeof window.__jobcrawl_pwned") == "undefined"
    resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert [r for r in resources if not r.startswith(base)] == []
    errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    driver.save_screenshot(str(SCREENSHOTS / shot))


def test_listing_search_and_facets(browser, server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    _open(browser, server + "/jobs/jobs")
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Jobs listing" in body
    assert "5 rows sorted by score descending" in body
    assert HOSTILE_TITLE in body  # the payload shows as text
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".facet-info h2, .facet-info-name")]
    assert any(h.startswith("city") for h in headers) and any(h.startswith("skills") for h in headers)
    _checked_page(browser, server, "listing.png")

    box = browser.find_element(By.NAME, "_search")
    box.send_keys("算子", Keys.ENTER)
    _wait_for(browser, lambda d: "_search=" in d.current_url)
    body = browser.find_element(By.TAG_NAME, "body").text
    assert '4 rows where search matches "算子" sorted by score descending' in body
    assert "地平线" not in body.split("rows where search matches")[1]
    _checked_page(browser, server, "search.png")


def test_postings_table_columns(browser, server):
    """The postings table shows its default columns; the column menu hides one, and its "Show all
    columns" shows all of them (not the default columns again)."""
    from selenium.webdriver.common.by import By

    def header():
        return browser.execute_script(
            "return Array.from(document.querySelectorAll('.rows-and-columns th'), th => th.dataset.column)")

    def menu(column, item):
        browser.find_element(By.CSS_SELECTOR, f'th[data-column="{column}"] .dropdown-menu-icon').click()
        link = browser.find_element(By.CSS_SELECTOR, f".dropdown-menu a.{item}")
        _wait_for(browser, lambda d: link.is_displayed())
        link.click()

    # the URL changes when a navigation starts: wait for the new page's header
    _open(browser, server + "/jobs/postings?city=苏州")
    _wait_for(browser, lambda d: len(header()) == 19)
    assert header()[:4] == ["id", "title", "company", "city"]
    _checked_page(browser, server, "postings-table.png")
    menu("company", "dropdown-hide-column")
    _wait_for(browser, lambda d: "_nocol=company" in d.current_url and len(header()) == 18)
    assert header()[:4] == ["id", "title", "city", "category"]
    menu("title", "dropdown-show-all-columns")
    _wait_for(browser, lambda d: "_columns=all" in d.current_url and len(header()) == 88)
    assert "description" in header() and "company" in header()
    _checked_page(browser, server, "postings-table-all.png")


def test_posting_page(browser, server):
    from selenium.webdriver.common.by import By

    _open(browser, server + "/jobs/postings/1")
    assert browser.find_element(By.CSS_SELECTOR, "h1.posting-title").text == "AI算子开发工程师"
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".jd-section h2")]
    assert headings == ["关于这个职位 · About", "最低要求 · Requirements", "工作职责 · Responsibilities", "优先资格 · Preferred"]
    bullets = browser.find_elements(By.CSS_SELECTOR, ".jd-requirements li")
    assert len(bullets) == 8 and bullets[1].text.startswith("具备良好的算法与代码功底，熟悉C/C++编程")
    facts = browser.find_element(By.CSS_SELECTOR, ".posting-facts").text
    assert "43K" in facts and "72 中等" in facts
    link = browser.find_element(By.CSS_SELECTOR, "a.source-url")
    assert link.get_attribute("href") == "https://careers.example.com/jobs/6"
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".evaluation h2")]
    assert headings == ["Our evaluation (jobcrawl): 72", "The app's evaluation: 72"]
    assert browser.find_element(By.LINK_TEXT, "#1").get_attribute("href") == server + "/jobs/clusters/1"
    _checked_page(browser, server, "posting.png")


def test_hostile_posting_runs_no_script(browser, server):
    from selenium.webdriver.common.by import By

    _open(browser, server + "/jobs/postings/5")
    assert browser.find_element(By.CSS_SELECTOR, "h1.posting-title").text == HOSTILE_TITLE
    lede = browser.find_element(By.CSS_SELECTOR, ".posting-lede").text
    assert lede.startswith('恶意<img src=x onerror="window.__jobcrawl_pwned=2">公司')
    requirements = [li.text for li in browser.find_elements(By.CSS_SELECTOR, ".jd-requirements li")]
    assert "<script>window.__jobcrawl_pwned=3;alert('bullet')</script>良好的团队协作能力" in requirements
    assert browser.find_elements(By.CSS_SELECTOR, "a.source-url") == []
    assert "javascript:alert(document.domain)" in browser.find_element(By.CSS_SELECTOR, ".posting-facts").text
    _checked_page(browser, server, "hostile-posting.png")


def test_market_charts(browser, server):
    from selenium.webdriver.common.by import By

    _open(browser, server + "/-/dashboards/market")
    # vega-embed draws each chart as SVG (usermeta.embedOptions.renderer) once its query returned.
    _wait_for(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#chart-salary-by-city svg text")
              and d.find_elements(By.CSS_SELECTOR, "#chart-top-skills svg text"))
    city_labels = {t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart-salary-by-city svg text")}
    assert {"苏州", "杭州", "上海", "北京", "CNY per month"} <= city_labels
    skill_labels = {t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart-top-skills svg text")}
    assert {"CUDA", "PyTorch", "Open postings"} <= skill_labels
    bars = browser.find_elements(By.CSS_SELECTOR, "#chart-top-skills svg .mark-rect path")
    assert len(bars) == 25
    assert "Monthly pay by city" in browser.find_element(By.TAG_NAME, "body").text
    _checked_page(browser, server, "market-charts.png")
