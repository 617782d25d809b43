"""Sign-in lockout (accounts.lockout, django-axes): per address over any usernames, per
username over any addresses, per username at one address; the client's address read from
``X-Forwarded-For`` only behind a trusted proxy (core.clientip)."""

from typing import Any

import pytest
from django.test import Client

from accounts.roles import ORGANISER
from tests.accounts.signin import PASSWORD, make_staff

pytestmark = pytest.mark.django_db


class Attempt:
    """One sign-in from a fresh client: the answer and whether it signed anyone in."""

    def __init__(self, username: str, password: str, **meta: Any) -> None:
        client = Client()
        response = client.post("/signin/", {"username": username, "password": password}, **meta)
        self.status_code = response.status_code
        self.content = response.content
        self.signed_in = "_auth_user_id" in client.session


def test_thirty_usernames_from_one_address_lock_the_address() -> None:
    make_staff("org", role=ORGANISER, device=False)
    address = {"REMOTE_ADDR": "198.51.100.20"}

    answers = [Attempt(f"guess-{i:02d}", "password1", **address).status_code for i in range(30)]
    refused = Attempt("org", PASSWORD, **address)
    elsewhere = Attempt("org", PASSWORD, REMOTE_ADDR="198.51.100.21")

    assert answers == [200] * 29 + [429]  # the 30th failure locks the address
    assert refused.status_code == 429  # the 31st attempt, the right password of a real user
    assert refused.signed_in is False
    assert "登录失败次数过多" in refused.content.decode()
    assert elsewhere.status_code == 302
    assert elsewhere.signed_in is True


def test_twenty_addresses_trying_one_username_lock_the_username() -> None:
    make_staff("org", role=ORGANISER, device=False)

    answers = [
        Attempt("org", "password1", REMOTE_ADDR=f"203.0.113.{i}").status_code for i in range(1, 21)
    ]
    refused = Attempt("org", PASSWORD, REMOTE_ADDR="203.0.113.99")

    assert answers == [200] * 19 + [429]
    assert refused.status_code == 429
    assert refused.signed_in is False


def test_the_limits_come_from_settings(settings: Any) -> None:
    settings.AXES_ADDRESS_FAILURE_LIMIT = 3
    address = {"REMOTE_ADDR": "198.51.100.30"}

    answers = [Attempt(f"guess-{i}", "password1", **address).status_code for i in range(3)]

    assert answers == [200, 200, 429]


def test_a_spoofed_forwarded_for_does_not_change_the_address() -> None:
    answers = [
        Attempt(
            f"guess-{i:02d}",
            "password1",
            REMOTE_ADDR="198.51.100.40",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{i}",
        ).status_code
        for i in range(30)
    ]

    assert answers[-1] == 429  # counted against REMOTE_ADDR: no proxy is trusted


def test_behind_a_trusted_proxy_each_client_is_counted_apart(settings: Any) -> None:
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    make_staff("org", role=ORGANISER, device=False)
    proxy = {"REMOTE_ADDR": "10.0.0.2"}

    answers = [
        Attempt(f"guess-{i:02d}", "password1", HTTP_X_FORWARDED_FOR="198.51.100.50", **proxy)
        for i in range(30)
    ]
    other_client = Attempt("org", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.51", **proxy)
    locked_client = Attempt("org", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.50", **proxy)

    assert [a.status_code for a in answers] == [200] * 29 + [429]
    assert other_client.status_code == 302  # the proxy's address is not what was locked
    assert other_client.signed_in is True
    assert locked_client.status_code == 429


def test_the_lockout_parameters_match_their_limits() -> None:
    from django.conf import settings

    from accounts.lockout import LIMIT_SETTINGS

    expected = [list(fields) if len(fields) > 1 else fields[0] for fields, _ in LIMIT_SETTINGS]
    assert expected == settings.AXES_LOCKOUT_PARAMETERS
    assert settings.AXES_HANDLER == "accounts.lockout.LockoutHandler"
