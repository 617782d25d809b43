"""Signing staff in from tests, for any test module to import.

* :func:`make_staff` — a user with a role (or a superuser), a known password, and, with
  ``device=True``, a confirmed TOTP device (reviewers and superusers need one).
* :func:`client_sign_in` — a Django test client signed in as a user, the second factor
  confirmed (as after the sign-in page's TOTP step) unless ``verified=False``.
* :func:`browser_sign_in` — signs in through the sign-in page in a selenium browser, typing
  the current TOTP code when asked.
* :func:`totp` — the code a device shows now.
"""

from typing import Any

from django.contrib.auth.models import Group
from django.test import Client
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.models import User
from accounts.second_factor import confirmed_device, needs_otp

PASSWORD = "pw-for-tests-only"


def make_staff(
    username: str,
    *,
    role: str | None = None,
    superuser: bool = False,
    device: bool = True,
    email: str = "",
) -> User:
    """A staff user signing in with ``PASSWORD``; ``role`` is a group of accounts.roles."""
    user = User.objects.create_user(
        username=username,
        password=PASSWORD,
        email=email,
        is_staff=superuser,
        is_superuser=superuser,
    )
    if role is not None:
        user.groups.add(Group.objects.get_or_create(name=role)[0])
    if device:
        TOTPDevice.objects.create(user=user, name="authenticator", confirmed=True)
    return user


def totp(device: TOTPDevice) -> str:
    """The six digits the device's authenticator shows now."""
    token = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift).token()
    return f"{token:0{device.digits}d}"


def client_sign_in(client: Client, user: User, *, verified: bool = True) -> Client:
    """Sign ``client`` in as ``user``; with ``verified``, a user who needs a second factor
    gets a confirmed device if it has none, and the session has confirmed it."""
    client.force_login(user)
    if verified and needs_otp(user):
        device = confirmed_device(user) or TOTPDevice.objects.create(
            user=user, name="authenticator", confirmed=True
        )
        session = client.session
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
        session.save()
    return client


def browser_sign_in(driver: Any, base_url: str, user: User, *, next_path: str = "") -> None:
    """Sign in on ``/signin/`` in the browser, typing the TOTP code when the site asks."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    query = f"?next={next_path}" if next_path else ""
    driver.get(f"{base_url}/signin/{query}")
    driver.find_element(By.NAME, "username").send_keys(user.get_username())
    driver.find_element(By.NAME, "password").send_keys(PASSWORD)
    driver.find_element(By.CSS_SELECTOR, "form.stacked button[type=submit]").click()
    WebDriverWait(driver, 10).until(ec.url_changes(f"{base_url}/signin/{query}"))
    device = confirmed_device(user)
    if device is not None and "/signin/verify/" in driver.current_url:
        driver.find_element(By.NAME, "token").send_keys(totp(device))
        driver.find_element(By.CSS_SELECTOR, "form.stacked button[type=submit]").click()
        signed_in = ec.presence_of_element_located((By.CSS_SELECTOR, "form.signout"))
        WebDriverWait(driver, 10).until(signed_in)
