"""Tests for shared sessions, multi-accounting (SPEC §7: IP address and device per seat)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from integrity.domain.data import SessionObs
from integrity.domain.sessions import (
    LINK_STRENGTH,
    VERSION,
    SameTableLink,
    SessionCluster,
    detect_sessions,
)

NAT = "10.0.0.1"


def seat(game: str, player: str, ip: str = "", device: str = "", hour: int = 1) -> SessionObs:
    return SessionObs(game_id=game, player=player, ip=ip, device=device, hour=hour)


def population() -> list[SessionObs]:
    sessions = []
    # 20 strangers behind one carrier NAT address, each on their own phone.
    for i in range(20):
        sessions.append(seat(f"n{i}", f"u{i:02d}", ip=NAT, device=f"phone-{i}"))
    # A farm: three accounts on one device, from their own addresses.
    for i, player in enumerate(("f1", "f2", "f3")):
        sessions.append(seat(f"f{i}", player, ip=f"203.0.113.{i}", device="farm-pc"))
    # Two accounts on one home address (a small-degree IP), different devices.
    sessions.append(seat("h1", "h1", ip="198.51.100.7", device="dh1"))
    sessions.append(seat("h2", "h2", ip="198.51.100.7", device="dh2"))
    return sessions


def test_degree_cap_drops_the_nat_and_keeps_the_device_cluster() -> None:
    result = detect_sessions(population())
    assert result.version == VERSION == "sessions-1"
    assert result.dropped_ips == (NAT,)
    assert result.dropped_devices == ()
    assert result.clusters == (
        SessionCluster(players=("f1", "f2", "f3"), devices=("farm-pc",), ips=()),
        SessionCluster(players=("h1", "h2"), devices=(), ips=("198.51.100.7",)),
    )
    assert result.links == ()
    assert result.clusters[0].strength == LINK_STRENGTH
    assert result.clusters[0].family == "sessions"


def test_degree_cap_boundary() -> None:
    sessions = [seat(f"g{i}", f"u{i}", ip="192.0.2.1") for i in range(8)]
    assert detect_sessions(sessions).clusters[0].players == tuple(f"u{i}" for i in range(8))
    sessions.append(seat("g8", "u8", ip="192.0.2.1"))
    result = detect_sessions(sessions)
    assert (result.clusters, result.dropped_ips) == ((), ("192.0.2.1",))
    assert detect_sessions(sessions, max_degree=9).dropped_ips == ()


def test_same_table_same_device_is_near_conclusive() -> None:
    sessions = population()
    sessions += [
        seat("T1", "f1", ip="203.0.113.0", device="farm-pc"),
        seat("T1", "f2", ip="203.0.113.1", device="farm-pc"),
        seat("T1", "x", ip="192.0.2.99", device="dx"),
    ]
    links = detect_sessions(sessions).links
    assert links == (SameTableLink("T1", ("f1", "f2"), "device", "farm-pc"),)
    assert links[0].near_conclusive is True


def test_device_links_even_above_the_cap() -> None:
    # A device shared by 10 accounts is dropped from clustering, but two of them at one
    # table from it is still a link: one device cannot be two honest strangers.
    sessions = [seat(f"g{i}", f"u{i}", device="cafe") for i in range(10)]
    sessions += [seat("T", "u0", device="cafe"), seat("T", "u1", device="cafe")]
    result = detect_sessions(sessions)
    assert result.dropped_devices == ("cafe",)
    assert result.clusters == ()
    assert result.links == (SameTableLink("T", ("u0", "u1"), "device", "cafe"),)


def test_same_table_ip_links_only_under_the_cap() -> None:
    sessions = population()
    sessions += [
        seat("T2", "u00", ip=NAT, device="phone-0"),
        seat("T2", "u01", ip=NAT, device="phone-1"),
        seat("T3", "h1", ip="198.51.100.7", device="dh1"),
        seat("T3", "h2", ip="198.51.100.7", device="dh2"),
    ]
    assert detect_sessions(sessions).links == (
        SameTableLink("T3", ("h1", "h2"), "ip", "198.51.100.7"),
    )


def test_three_seats_on_one_device_make_three_links() -> None:
    sessions = [seat("T", p, device="d") for p in ("c", "a", "b")]
    assert [link.players for link in detect_sessions(sessions).links] == [
        ("a", "b"),
        ("a", "c"),
        ("b", "c"),
    ]


def test_unknown_identifiers_link_nothing() -> None:
    sessions = [seat("T", "a"), seat("T", "b"), seat("U", "a"), seat("U", "c")]
    result = detect_sessions(sessions)
    assert (result.clusters, result.links) == ((), ())


def test_clusters_chain_across_kinds() -> None:
    sessions = [
        seat("1", "a", device="d1"),
        seat("2", "b", device="d1", ip="192.0.2.5"),
        seat("3", "c", ip="192.0.2.5"),
        seat("4", "d", device="d9"),
    ]
    [cluster] = detect_sessions(sessions).clusters
    assert cluster == SessionCluster(("a", "b", "c"), ("d1",), ("192.0.2.5",))


def test_rejects_bad_cap() -> None:
    with pytest.raises(ValueError, match="max_degree"):
        detect_sessions([], max_degree=0)


edges = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]),
        st.sampled_from(["", "d1", "d2", "d3"]),
        st.sampled_from(["", "192.0.2.1", "192.0.2.2"]),
        st.sampled_from(["T1", "T2", "T3", "T4"]),
    ),
    max_size=25,
)


@given(edges=edges, data=st.data())
def test_result_independent_of_session_order(
    edges: list[tuple[str, str, str, str]], data: st.DataObject
) -> None:
    sessions = [seat(game, player, ip=ip, device=device) for player, device, ip, game in edges]
    shuffled = data.draw(st.permutations(sessions))
    assert detect_sessions(shuffled, max_degree=3) == detect_sessions(sessions, max_degree=3)
