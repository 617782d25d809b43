"""The client's address (docs/decisions.md, sign-in): ``REMOTE_ADDR``, unless the request came
through one of ``settings.TRUSTED_PROXIES`` (addresses or networks). Then ``X-Forwarded-For``
is read from the right, skipping trusted proxies, and the first address not trusted is the
client. A header from anyone else is ignored, so a client cannot choose its own address."""

from functools import lru_cache
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network

from django.conf import settings
from django.http import HttpRequest

Network = IPv4Network | IPv6Network


@lru_cache(maxsize=8)
def _networks(proxies: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ip_network(proxy, strict=False) for proxy in proxies)


def _trusted(address: str) -> bool:
    try:
        parsed = ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_ip(request: HttpRequest) -> str | None:
    """The address a sign-in (lockout, logs) is counted against."""
    remote: str | None = request.META.get("REMOTE_ADDR")
    if remote is None or not _trusted(remote):
        return remote
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not _trusted(hop):
            try:
                return str(ip_address(hop))
            except ValueError:
                return remote  # a malformed hop: count the proxy itself
    return remote
