"""The API docs (Swagger UI, Redoc) still render in a real browser under the Content Security
Policy, and the policy blocks nothing of their own: only a request that would leave the
machine (Redoc's "powered by" logo on cdn.redoc.ly). Headless Chromium (Debian's chromium and
chromium-driver, installed by .ci/run); skipped where it is missing.

Its own module: the live server needs committed data (``transaction=True``), which cannot
share a module with the rolled-back seeded tour of the other reliability tests.
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.mark.browser
@pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="needs chromium + chromedriver"
)
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("path", "rendered"),
    [("/api/docs/", ".swagger-ui .info .title"), ("/api/redoc/", "h1")],
)
def test_the_api_docs_render_under_the_policy(
    live_server: Any, browser: Any, path: str, rendered: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("browser")  # start from an empty console
    browser.get(f"{live_server.url}{path}")
    title: Callable[[Any], Any] = lambda d: [  # noqa: E731
        e for e in d.find_elements(By.CSS_SELECTOR, rendered) if "UNO Tour API" in e.text
    ]
    WebDriverWait(browser, 20).until(title)
    console = [entry["message"] for entry in browser.get_log("browser")]
    # What the policy blocks must only be requests that would leave the machine (Redoc's
    # "powered by" logo on cdn.redoc.ly): nothing of the page itself, no inline script.
    blocked = [m for m in console if "Content Security Policy" in m]
    assert [m for m in blocked if "'https://" not in m] == [], blocked
