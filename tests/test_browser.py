"""The explorer in a real browser: ``jobcrawl serve`` in a subprocess, headless Chromium via Selenium.

Opens the compact listing, searches it (the matched text highlighted), the postings table (the
column documentation folded away), a posting, the hostile posting, the search canned query and the
market charts (on a generated database of 3,000 postings: one screen, n on every label); asserts
the text a reader sees, that no script from the data ran (no alert, no global set by the
payloads) and that every resource came from the server itself (no network here). Screenshots of
each page go to ``test-output/screenshots/``.

Uses Debian's ``chromium`` and ``chromedriver`` (``Service('/usr/bin/chromedriver')``, so Selenium
Manager never downloads a driver). Skips when they are absent, unless ``JOBCRAWL_REQUIRE_BROWSER=1``
(CI), when it fails instead.
"""

from __future__ import annotations

import os
import shutil

import pytest

from conftest import ROOT, start_serve
from crawler.store.schema import open_db
from test_browse import HOSTILE_TITLE, build_browse_db

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = ROOT / "test-output" / "screenshots"
CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1400,1600", "--lang=zh-CN"]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _serving(db):
    """``jobcrawl serve`` on a free port of 127.0.0.1 over ``db``: yields its base URL."""
    proc, base = start_serve(db)
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The browse test database, served."""
    yield from _serving(build_browse_db(tmp_path_factory.mktemp("browser")))


@pytest.fixture(scope="module")
def market_server(tmp_path_factory):
    """3,000 generated postings (bench/browse.py), enough for the charts' minimum samples, served."""
    from bench.browse import generate

    db = tmp_path_factory.mktemp("market") / "jobs.db"
    generate(db, 3000)
    yield from _serving(db)


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


def _open_until(driver, url: str, shown, timeout: float = 30):
    """Open ``url`` and load it again until ``shown(driver)`` is true (at most ``timeout`` s); returns its value.
    In full-suite runs on 2 cores a served page has come back without its rows a few times (the desk loop, the first
    screen, the fit view; never alone, nor beside CPU hogs): the cause is not found, so the page's text is kept
    for the failure message when it never shows them."""
    from selenium.common.exceptions import TimeoutException

    def loaded(d):
        _open(d, url)
        return shown(d)

    try:
        return _wait_for(driver, loaded, timeout=timeout)
    except TimeoutException:
        text = driver.execute_script("return document.body ? document.body.innerText : ''")
        pytest.fail(f"{url} never showed what the test waits for in {timeout:.0f} s; the page read: {text[:800]!r}")


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
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".rows-and-columns th")]
    assert headers == ["title", "company", "city", "salary", "score ▲", "posted_at", "source"]
    first = browser.find_elements(By.CSS_SELECTOR, ".rows-and-columns tbody tr")[0]
    assert [td.text for td in first.find_elements(By.TAG_NAME, "td")][3:] == ["35K", "75 中等", "2026-11-29", "textdump"]
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".facet-info h2, .facet-info-name")]
    assert any(h.startswith("city") for h in headers) and any(h.startswith("skills") for h in headers)
    _checked_page(browser, server, "listing.png")

    box = browser.find_element(By.NAME, "_search")
    box.send_keys("算子", Keys.ENTER)
    _wait_for(browser, lambda d: "_search=" in d.current_url)
    body = browser.find_element(By.TAG_NAME, "body").text
    assert '4 rows where search matches "算子" sorted by score descending' in body
    assert "地平线" not in body.split("rows where search matches")[1]
    marks = browser.find_elements(By.CSS_SELECTOR, "td.col-matched mark")
    assert marks and {m.text for m in marks} == {"算子"}
    _checked_page(browser, server, "search.png")

    link = browser.find_element(By.LINK_TEXT, "AI算子开发工程师")
    link.click()
    _wait_for(browser, lambda d: "/jobs/postings/" in d.current_url)
    assert browser.find_element(By.CSS_SELECTOR, "h1.posting-title").text == "AI算子开发工程师"


def test_postings_table_columns(browser, server):
    """The postings table shows its default columns, the column documentation folded under
    "columns" above the rows; the column menu hides one, and its "Show all columns" shows all of
    them (not the default columns again)."""
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
    docs = browser.find_element(By.CSS_SELECTOR, "details.column-docs")
    assert docs.get_attribute("open") is None and not browser.find_element(By.CSS_SELECTOR, "dl.column-descriptions").is_displayed()
    folded = browser.execute_script("return document.querySelector('details.column-docs').getBoundingClientRect().height")
    assert folded < 40  # before: about 1,000 px of documentation above the rows
    _checked_page(browser, server, "postings-table.png")
    docs.find_element(By.TAG_NAME, "summary").click()
    _wait_for(browser, lambda d: d.find_element(By.CSS_SELECTOR, "dl.column-descriptions").is_displayed())
    unfolded = browser.execute_script("return document.querySelector('details.column-docs').getBoundingClientRect().height")
    assert unfolded > 10 * folded
    assert "salary_monthly_max" in browser.find_element(By.CSS_SELECTOR, "dl.column-descriptions").text
    menu("company", "dropdown-hide-column")
    _wait_for(browser, lambda d: "_nocol=company" in d.current_url and len(header()) == 18)
    assert header()[:4] == ["id", "title", "city", "category"]
    menu("title", "dropdown-show-all-columns")
    every = len(open_db(":memory:").execute("PRAGMA table_xinfo(postings)").fetchall())  # every column, generated too
    _wait_for(browser, lambda d: "_columns=all" in d.current_url and len(header()) == every)
    assert "description" in header() and "company" in header()
    _checked_page(browser, server, "postings-table-all.png")


def test_search_canned_query(browser, server):
    from selenium.webdriver.common.by import By

    _open(browser, server + "/jobs/search?q=Kafka")
    assert browser.find_elements(By.CSS_SELECTOR, "textarea") == []  # hide_sql
    assert browser.title == "Search · jobs"
    assert [m.text for m in browser.find_elements(By.CSS_SELECTOR, "td.col-matched mark")] == ["Kafka"]
    link = browser.find_element(By.LINK_TEXT, "后端开发工程师")
    assert link.get_attribute("href") == server + "/jobs/postings/4"
    _checked_page(browser, server, "search-query.png")


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


def test_market_charts(browser, market_server):
    """The dashboard fits one screen (a 1400 × 1000 window), each salary label carries its n, every group
    has at least the minimum sample, and the skills chart shows technical skills."""
    from selenium.webdriver.common.by import By

    browser.set_window_size(1400, 1000)
    try:
        _open(browser, market_server + "/-/dashboards/market")
        assert "min_postings=10" in browser.current_url  # the filter's default
        # vega-embed draws each chart as SVG (usermeta.embedOptions.renderer) once its query returned.
        _wait_for(browser, lambda d: all(d.find_elements(By.CSS_SELECTOR, f"#chart-{c} svg text")
                                         for c in ("salary-by-city", "salary-by-category", "top-skills")))
        texts = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart-salary-by-city svg .role-axis-label text")]
        labels = [text for text in texts if " · n=" in text]
        assert len(labels) == 10 and all(int(label.split("n=")[1]) >= 10 for label in labels), texts
        skill_labels = {t.text for t in browser.find_elements(By.CSS_SELECTOR, "#chart-top-skills svg .role-axis-label text")}
        assert {"CUDA", "PyTorch"} <= skill_labels and not skill_labels & {"teamwork", "communication", "self-motivation"}
        assert len(browser.find_elements(By.CSS_SELECTOR, "#chart-top-skills svg .mark-rect path")) == 25
        height = browser.execute_script("return document.documentElement.scrollHeight")
        inner = browser.execute_script("return window.innerHeight")
        assert height <= inner, (height, inner)
        _checked_page(browser, market_server, "market-charts.png")
    finally:
        browser.set_window_size(1400, 1600)
