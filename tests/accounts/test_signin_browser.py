"""Signing in in a real browser (headless Chromium, selenium): a reviewer types the password,
then the code of the authenticator (tests.accounts.signin.browser_sign_in), lands on the
review queue and signs out from the header; the sign-in, code, enrolment and reset pages
and the header of a signed-in person are shot at 1280 px and at 390 px
(docs/screenshots/signin*.png, signed-in*.png, reset*.png)."""

from typing import Any

import pytest
from django.core import mail
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from accounts.roles import REVIEWER
from tests.accounts.signin import PASSWORD, browser_sign_in, make_staff
from tests.web.test_browser import (  # noqa: F401 - driver is a fixture
    CHROMEDRIVER,
    CHROMIUM,
    css,
    driver,
    shoot,
    viewport,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (apt: chromium chromium-driver)",
    ),
]


@pytest.fixture
def browser(transactional_db: Any, live_server: Any, driver: Any) -> Any:  # noqa: F811
    driver.delete_all_cookies()
    viewport(driver, 1280, 900)
    return driver


def _both_widths(browser: Any, name: str) -> None:
    shoot(browser, name)
    viewport(browser, 390, 844, mobile=True)
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(browser, f"{name}-mobile")
    viewport(browser, 1280, 900)


def _password(browser: Any, username: str) -> None:
    """Type the password and submit; returns once the next page has loaded."""
    before = browser.current_url
    css(browser, "input[name=username]").send_keys(username)
    css(browser, "input[name=password]").send_keys(PASSWORD)
    css(browser, "form.stacked button[type=submit]").click()
    WebDriverWait(browser, 10).until(ec.url_changes(before))


def test_a_reviewer_signs_in_with_the_code_and_signs_out(browser: Any, live_server: Any) -> None:
    reviewer = make_staff("reviewer-li", role=REVIEWER)

    browser.get(f"{live_server.url}/review/")
    assert browser.current_url == f"{live_server.url}/signin/?next=/review/"
    assert css(browser, "h1").text == "工作人员登录"
    _both_widths(browser, "signin")
    _password(browser, "reviewer-li")
    assert browser.current_url == f"{live_server.url}/signin/verify/"
    _both_widths(browser, "signin-code")

    browser_sign_in(browser, live_server.url, reviewer, next_path="/review/")

    assert browser.current_url == f"{live_server.url}/review/"
    assert css(browser, "form.signout .who").text == "reviewer-li"
    _both_widths(browser, "signed-in")
    css(browser, "form.signout button").click()
    WebDriverWait(browser, 10).until(ec.url_to_be(f"{live_server.url}/"))
    assert browser.find_elements("css selector", "form.signout") == []


def test_enrolment_shows_the_qr_code(browser: Any, live_server: Any) -> None:
    make_staff("reviewer-wang", role=REVIEWER, device=False)

    browser.get(f"{live_server.url}/signin/")
    _password(browser, "reviewer-wang")

    assert browser.current_url == f"{live_server.url}/signin/enrol/"
    assert css(browser, ".qr svg").size["width"] == 180
    _both_widths(browser, "signin-enrol")


def test_the_reset_pages(browser: Any, live_server: Any) -> None:
    make_staff("reviewer-zhao", role=REVIEWER, email="zhao@example.org")

    browser.get(f"{live_server.url}/signin/")
    css(browser, "a[href='/signin/reset/']").click()
    WebDriverWait(browser, 10).until(ec.url_to_be(f"{live_server.url}/signin/reset/"))
    _both_widths(browser, "reset")
    css(browser, "input[name=email]").send_keys("zhao@example.org")
    css(browser, "form.stacked button[type=submit]").click()
    WebDriverWait(browser, 10).until(ec.url_to_be(f"{live_server.url}/signin/reset/sent/"))

    assert browser.current_url == f"{live_server.url}/signin/reset/sent/"
    assert len(mail.outbox) == 1
    _both_widths(browser, "reset-sent")
