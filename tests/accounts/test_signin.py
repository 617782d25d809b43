"""Staff sign-in (web.views.signin): landing by role, the TOTP step for reviewers and
superusers (refused without a code, accepted with the current one), enrolment, sign-out,
the admin's login sending people here, and anonymous visitors sent here with ``next``."""

from typing import Any

import pytest
from django.test import Client
from django.urls import Resolver404, resolve
from django_otp import DEVICE_ID_SESSION_KEY
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts.roles import ORGANISER, REVIEWER
from tests.accounts.signin import PASSWORD, client_sign_in, make_staff, totp

pytestmark = pytest.mark.django_db


def _console_or_home(prefix: str = "/") -> str:
    try:
        resolve(f"{prefix}manage/")
    except Resolver404:
        return prefix
    return f"{prefix}manage/"


def _password(client: Client, username: str, next_path: str = "", prefix: str = "/") -> Any:
    data = {"username": username, "password": PASSWORD}
    if next_path:
        data["next"] = next_path
    return client.post(f"{prefix}signin/", data, REMOTE_ADDR="192.0.2.7")


def _signed_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_sign_in_page_is_chinese_first_with_english_under_en() -> None:
    zh = Client().get("/signin/")
    en = Client().get("/en/signin/")

    assert zh.status_code == en.status_code == 200
    assert "工作人员登录" in zh.content.decode()
    assert "Staff sign-in" in en.content.decode()
    assert 'action="/en/signin/"' in en.content.decode()


def test_an_organiser_lands_on_the_console_and_signs_out_by_post() -> None:
    make_staff("org", role=ORGANISER, device=False)
    client = Client()

    response = _password(client, "org")

    assert response.status_code == 302
    assert response["Location"] == _console_or_home()
    assert _signed_in(client)
    home = client.get("/").content.decode()
    assert 'action="/signout/"' in home
    assert '<span class="who">org</span>' in home
    assert client.get("/signout/").status_code == 405  # signing out is a POST
    assert client.post("/signout/")["Location"] == "/"
    assert not _signed_in(client)


def test_an_organiser_in_english_lands_in_english() -> None:
    make_staff("org", role=ORGANISER, device=False)

    response = _password(Client(), "org", prefix="/en/")

    assert response["Location"] == _console_or_home("/en/")


def test_someone_without_a_role_lands_on_next_or_home() -> None:
    make_staff("helper", device=False)

    assert _password(Client(), "helper")["Location"] == "/"
    assert _password(Client(), "helper", "/players/")["Location"] == "/players/"
    assert _password(Client(), "helper", "https://evil.example/")["Location"] == "/"


def test_a_reviewer_is_refused_without_the_code_and_accepted_with_it(settings: Any) -> None:
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # django-otp waits 1 s after a wrong code, then 2 s…
    reviewer = make_staff("rev", role=REVIEWER)
    device = TOTPDevice.objects.get(user=reviewer)
    client = Client()

    after_password = _password(client, "rev")
    assert after_password["Location"] == "/signin/verify/"
    assert not _signed_in(client)
    assert client.get("/review/")["Location"] == "/signin/?next=/review/"

    wrong = f"{(int(totp(device)) + 1) % 1_000_000:06d}"
    refused = client.post("/signin/verify/", {"token": wrong})
    assert refused.status_code == 200
    assert "验证码不正确或已过期" in refused.content.decode()
    assert not _signed_in(client)
    device.refresh_from_db()
    assert device.throttling_failure_count == 1
    malformed = client.post("/signin/verify/", {"token": "12ab"})
    assert "验证码是 6 位数字。" in malformed.content.decode()
    assert not _signed_in(client)

    accepted = client.post("/signin/verify/", {"token": totp(device)})
    assert accepted["Location"] == "/review/"
    assert client.session["_auth_user_id"] == str(reviewer.pk)
    assert client.session[DEVICE_ID_SESSION_KEY] == device.persistent_id
    assert client.get("/review/").status_code == 200


def test_the_code_step_needs_the_password_first() -> None:
    make_staff("rev", role=REVIEWER)

    assert Client().post("/signin/verify/", {"token": "123456"})["Location"] == "/signin/"
    assert Client().get("/signin/enrol/")["Location"] == "/signin/"


def test_a_reviewer_without_a_device_enrols_one_on_the_way_in(settings: Any) -> None:
    settings.OTP_TOTP_THROTTLE_FACTOR = 0
    reviewer = make_staff("rev", role=REVIEWER, device=False)
    client = Client()

    assert _password(client, "rev", "/review/")["Location"] == "/signin/enrol/"
    page = client.get("/signin/enrol/")
    device = TOTPDevice.objects.get(user=reviewer)
    assert device.confirmed is False
    assert "<svg" in page.content.decode()
    refused = client.post("/signin/enrol/", {"token": f"{(int(totp(device)) + 1) % 10**6:06d}"})
    assert refused.status_code == 200
    assert not _signed_in(client)
    device.refresh_from_db()
    assert device.confirmed is False

    accepted = client.post("/signin/enrol/", {"token": totp(device)})

    assert accepted["Location"] == "/review/"
    device.refresh_from_db()
    assert device.confirmed is True
    assert client.session["_auth_user_id"] == str(reviewer.pk)


def test_a_superuser_needs_the_code_for_the_admin() -> None:
    boss = make_staff("boss", superuser=True)
    without = Client()
    without.force_login(boss)  # signed in, second factor not confirmed

    assert without.get("/admin/")["Location"] == "/admin/login/?next=/admin/"
    assert without.get("/admin/login/?next=/admin/")["Location"] == "/signin/?next=%2Fadmin%2F"
    assert client_sign_in(Client(), boss).get("/admin/").status_code == 200


def test_the_admin_login_form_is_the_sign_in_page() -> None:
    make_staff("boss", superuser=True)
    client = Client()

    posted = client.post("/admin/login/", {"username": "boss", "password": PASSWORD})

    assert posted["Location"] == "/signin/?next=%2Fadmin%2F"
    assert not _signed_in(client)


def test_anonymous_visitors_to_a_staff_page_go_to_sign_in_with_next() -> None:
    assert Client().get("/review/")["Location"] == "/signin/?next=/review/"
    assert Client().get("/en/review/")["Location"] == "/en/signin/?next=/en/review/"


def test_the_api_treats_a_session_without_the_second_factor_as_anonymous() -> None:
    reviewer = make_staff("rev", role=REVIEWER)

    unverified = client_sign_in(Client(), reviewer, verified=False).get("/api/me/")
    verified = client_sign_in(Client(), reviewer).get("/api/me/")

    assert unverified.status_code == 401
    assert verified.status_code == 200
    assert verified.json()["username"] == "rev"
