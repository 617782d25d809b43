"""The client's address (core.clientip): ``X-Forwarded-For`` counts only from a trusted proxy,
read from the right past trusted hops."""

from typing import Any

import pytest
from django.test import RequestFactory

from core.clientip import client_ip

TRUSTED = ["10.0.0.0/8", "2001:db8::1"]


@pytest.mark.parametrize(
    ("remote", "forwarded", "expected"),
    [
        ("192.0.2.1", "", "192.0.2.1"),
        ("192.0.2.1", "203.0.113.9", "192.0.2.1"),  # not a proxy: the header is ignored
        ("10.0.0.2", "203.0.113.9", "203.0.113.9"),
        ("10.0.0.2", "198.51.100.1, 203.0.113.9", "203.0.113.9"),  # the left hop is the client's
        ("10.0.0.2", "203.0.113.9, 10.1.2.3", "203.0.113.9"),  # past a trusted inner proxy
        ("2001:db8::1", "2001:db8::2", "2001:db8::2"),
        ("10.0.0.2", "", "10.0.0.2"),  # nothing forwarded: the proxy itself
        ("10.0.0.2", "not-an-address", "10.0.0.2"),
    ],
)
def test_client_ip(settings: Any, remote: str, forwarded: str, expected: str) -> None:
    settings.TRUSTED_PROXIES = TRUSTED
    meta: dict[str, Any] = {"REMOTE_ADDR": remote}
    if forwarded:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded

    assert client_ip(RequestFactory().get("/", **meta)) == expected


def test_no_proxy_is_trusted_by_default() -> None:
    from config.settings import base

    assert base.TRUSTED_PROXIES == []
    assert base.AXES_CLIENT_IP_CALLABLE == "core.clientip.client_ip"
