"""The jobs listing's first screen: at 1280 × 900 in headless Chromium, the default listing and a
searched one show at least 10 posting rows whose top edge is inside the viewport; the facets stay
one click away and their links filter the listing; the listing's JSON and CSV still answer.

One served database for the module: 300 generated postings (``bench/browse.py``), the browser and
the server from ``test_browser.py``.
"""

from __future__ import annotations

import csv
import io
import json
import urllib.parse
import urllib.request

import pytest

from test_browser import _checked_page, _open, _open_until, _serving, _wait_for, browser  # noqa: F401 (browser: a fixture)

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WIDTH, HEIGHT = 1280, 900
POSTINGS = 300
SEARCH = "CUDA"

# Where the rows of the results table start and how many begin inside the viewport (scrolled to the top).
MEASURE = f"""
window.scrollTo(0, 0);
const tops = Array.from(document.querySelectorAll("table.rows-and-columns tbody tr"),
                        tr => tr.getBoundingClientRect().top);
return {{first: tops.length ? Math.round(tops[0]) : null, rows: tops.length,
        above: tops.filter(top => top >= 0 && top < {HEIGHT}).length,
        viewport: [window.innerWidth, window.innerHeight]}};
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """300 generated postings, served."""
    from bench.browse import generate

    db = tmp_path_factory.mktemp("first-screen") / "jobs.db"
    generate(db, POSTINGS)
    yield from _serving(db)


@pytest.fixture(scope="module")
def screen(browser):  # noqa: F811 (the fixture imported above)
    """The browser with a viewport of exactly 1280 × 900 CSS pixels."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    yield browser
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def measure(driver) -> dict:
    return driver.execute_script(MEASURE)


@pytest.mark.parametrize("query", ["", f"?_search={SEARCH}"], ids=["listing", "search"])
def test_ten_postings_on_the_first_screen(screen, server, query):
    seen = _open_until(screen, server + "/jobs/jobs" + query, lambda d: (m := measure(d))["rows"] and m)
    assert seen["viewport"] == [WIDTH, HEIGHT]
    assert seen["rows"] == 50  # a full page: the page size of the listing
    _checked_page(screen, server, f"first-screen-{'search' if query else 'listing'}.png")
    figures = f"first row at y = {seen['first']}, {seen['above']} rows start above y = {HEIGHT}"
    print(f"{'search' if query else 'listing'}: {figures}")  # shown with pytest -s
    assert seen["above"] >= 10, figures


def test_facet_link_filters_the_listing(screen, server):
    """A facet is a menu above the rows: folded, it opens on a click and its links are Datasette's
    (``?city=…``); the filtered listing names the chosen value on the menu."""
    from selenium.webdriver.common.by import By

    _open(screen, server + "/jobs/jobs")
    link = screen.find_element(By.CSS_SELECTOR, "#facet-city li a")
    assert not link.is_displayed()
    screen.find_element(By.CSS_SELECTOR, "#facet-city > summary").click()
    _wait_for(screen, lambda d: link.is_displayed())
    _checked_page(screen, server, "first-screen-facet.png")
    city = link.text
    count = int(link.find_element(By.XPATH, "..").text.rsplit(" ", 1)[1].replace(",", ""))
    link.click()
    _wait_for(screen, lambda d: "city=" in d.current_url)
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(screen.current_url).query)["city"] == [city]
    cities = {td.text for td in screen.find_elements(By.CSS_SELECTOR, "table.rows-and-columns td.col-city")}
    assert cities == {city}
    assert screen.find_element(By.CSS_SELECTOR, ".listing-count h3").text.startswith(f"{count:,} row")
    assert screen.find_element(By.CSS_SELECTOR, "#facet-city > summary").text == f"city: {city}"


def _get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.headers["content-type"], response.read().decode()


@pytest.mark.parametrize("args", [{}, {"_search": SEARCH}], ids=["listing", "search"])
def test_json_and_csv_still_answer(server, args):
    query = urllib.parse.urlencode({**args, "_size": 5})
    status, kind, body = _get(f"{server}/jobs/jobs.json?{query}")
    assert (status, kind.split(";")[0]) == (200, "application/json")
    data = json.loads(body)
    assert len(data["rows"]) == 5 and data["columns"][:4] == ["id", "title", "company", "city"]
    assert "salary_raw" in data["columns"]  # beyond the columns the page shows
    assert set(data["facet_results"]) == {"city", "company", "category", "work_mode", "score_level", "skills",
                                          "application_status"}
    status, kind, body = _get(f"{server}/jobs/jobs.csv?{query}")
    assert (status, kind.split(";")[0]) == (200, "text/plain")
    records = list(csv.DictReader(io.StringIO(body)))
    assert [r["id"] for r in records] == [str(row[data["columns"].index("id")]) for row in data["rows"]]
