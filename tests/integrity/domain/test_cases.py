"""Tests for grouping flags into cases (SPEC §7: flags on related players group into cases;
statistics never sanction)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from integrity.domain.cases import (
    NEAR_CONCLUSIVE_SCORE,
    VERSION,
    CaseProposal,
    Flag,
    propose_cases,
)
from integrity.domain.coseating import PairFlag
from integrity.domain.sessions import SameTableLink, SessionCluster


@dataclass(frozen=True)
class Stub:
    family: str
    players: tuple[str, ...]
    strength: float
    near_conclusive: bool = False


def pair_flag(a: str, b: str, q: float) -> PairFlag:
    return PairFlag(
        players=(a, b),
        shared=20,
        expected=1.0,
        trials=40,
        games=(60, 60),
        common_hours=20,
        p=q / 100,
        q=q,
        strength=-math.log10(q),
    )


def test_a_benefit_signal_opens_a_case_with_what_relates_the_players() -> None:
    flags: dict[str, Flag] = {
        "co-1": pair_flag("a", "b", 1e-6),
        "pf-1": Stub("pointflow", ("a", "b"), 3.0),
        "co-2": pair_flag("x", "y", 1e-4),
    }
    triage = propose_cases(flags)
    assert triage.version == VERSION == "cases-4"
    [case] = triage.cases
    assert case == CaseProposal(
        players=("a", "b"),
        families=("coseating", "pointflow"),
        flags=("co-1", "pf-1"),
        score=case.score,
        reason="benefit: pointflow; with coseating",
    )
    # co-seating relates the two and weighs nothing: the score is point flow's strength
    assert case.score == pytest.approx(3.0, rel=1e-12)
    assert triage.review == ("co-2",)


def test_one_family_alone_opens_no_case() -> None:
    flags: dict[str, Flag] = {
        "co-1": pair_flag("a", "b", 1e-3),
        "co-2": pair_flag("b", "c", 1e-9),
        "co-3": pair_flag("d", "e", 1e-9),
    }
    triage = propose_cases(flags)
    assert triage.cases == ()
    # Ranked by strength, ties by reference.
    assert triage.review == ("co-2", "co-3", "co-1")


def test_near_conclusive_alone_opens_a_case() -> None:
    flags: dict[str, Flag] = {"st-1": SameTableLink("g1", ("a", "b"), "device", "d-9f2c41")}
    [case] = propose_cases(flags).cases
    assert case.players == ("a", "b")
    assert case.families == ("sessions",)
    assert case.score == NEAR_CONCLUSIVE_SCORE
    assert case.reason == "1 near-conclusive same-table link(s)"


def test_one_address_at_one_table_is_no_case() -> None:
    # a household: two seats of one game on one address, and they queue together
    flags: dict[str, Flag] = {
        "st-1": SameTableLink("g1", ("a", "b"), "ip", "203.0.113.7"),
        "co-1": pair_flag("a", "b", 1e-8),
    }
    triage = propose_cases(flags)
    assert triage.cases == ()
    assert triage.review == ("co-1", "st-1")


def test_friends_in_a_household_are_leads_and_a_soft_player_is_a_case() -> None:
    flags: dict[str, Flag] = {
        "s-1": SessionCluster(("a", "b"), (), ("198.51.100.20",)),
        "co-1": pair_flag("a", "b", 1e-12),
        "sp-1": Stub("softplay", ("c", "d"), 2.5),
    }
    triage = propose_cases(flags)
    [case] = triage.cases
    assert (case.players, case.reason) == (("c", "d"), "benefit: softplay")
    assert triage.review == ("co-1", "s-1")


def test_a_fed_account_opens_a_case_over_the_farm_co_seating_found() -> None:
    flags: dict[str, Flag] = {
        "co-1": pair_flag("b", "f1", 1e-12),
        "co-2": pair_flag("b", "f2", 1e-12),
        "fed-1": Stub("fed", ("b", "f1", "f2"), 3.0),
    }
    triage = propose_cases(flags)
    [case] = triage.cases
    assert (case.players, case.families, case.reason) == (
        ("b", "f1", "f2"),
        ("coseating", "fed"),
        "benefit: fed; with coseating",
    )
    assert case.score == pytest.approx(3.0)
    assert triage.review == ()


def test_cards_kept_open_a_case_over_the_pair_co_seating_found() -> None:
    flags: dict[str, Flag] = {
        "co-1": pair_flag("p", "f", 1e-8),
        "kept-1": Stub("kept", ("f", "p"), 2.5),
        "co-2": pair_flag("x", "y", 1e-8),
    }
    triage = propose_cases(flags)
    [case] = triage.cases
    assert (case.players, case.families, case.reason) == (
        ("f", "p"),
        ("coseating", "kept"),
        "benefit: kept; with coseating",
    )
    assert case.score == pytest.approx(2.5)
    assert triage.review == ("co-2",)


@pytest.mark.parametrize(("strength", "cased"), [(1.9, False), (2.0, True)])
def test_a_strong_boosting_flag_stands_alone(strength: float, cased: bool) -> None:
    triage = propose_cases({"bo-1": Stub("boosting", ("z",), strength)})
    assert [c.reason for c in triage.cases] == (["1 strong boosting flag(s)"] if cased else [])
    assert triage.review == (() if cased else ("bo-1",))


def test_related_players_chain_into_one_case() -> None:
    # A device cluster {a, b, c}, a co-seating flag on (c, d), point flow on (c, d), a weak
    # boost flag on z: one cluster of related players opened by the point flow.
    flags: dict[str, Flag] = {
        "s-1": SessionCluster(("a", "b", "c"), ("farm-pc",), ()),
        "co-1": pair_flag("c", "d", 1e-5),
        "pf-1": Stub("pointflow", ("c", "d"), 2.5),
        "bo-2": Stub("boosting", ("z",), 1.5),
    }
    triage = propose_cases(flags)
    [case] = triage.cases
    assert case.players == ("a", "b", "c", "d")
    assert case.families == ("coseating", "pointflow", "sessions")
    assert case.flags == ("co-1", "pf-1", "s-1")
    assert case.score == pytest.approx(2.5)
    assert case.reason == "benefit: pointflow; with coseating, sessions"
    assert triage.review == ("bo-2",)


def test_cases_ranked_by_score_then_players() -> None:
    flags: dict[str, Flag] = {
        "1": Stub("coseating", ("m", "n"), 40.0),
        "2": Stub("pointflow", ("m", "n"), 4.0),
        "3": Stub("fed", ("c", "d"), 4.0),
        "4": Stub("boosting", ("d",), 3.0),
        "5": Stub("sessions", ("p", "q"), 0.0, near_conclusive=True),
        "6": Stub("sessions", ("p", "q"), 0.0, near_conclusive=True),
        "7": Stub("together", ("x", "y"), 4.0),
    }
    cases = propose_cases(flags).cases
    # friends who sit together at every table (co-seating 40) rank by their evidence alone
    assert [(c.players, c.score) for c in cases] == [
        (("p", "q"), 20.0),
        (("c", "d"), 7.0),
        (("m", "n"), 4.0),
        (("x", "y"), 4.0),
    ]


def test_strength_is_capped() -> None:
    flags: dict[str, Flag] = {
        "1": Stub("fed", ("a", "b"), math.inf),
        "2": Stub("pointflow", ("a", "b"), 1.0),
    }
    assert propose_cases(flags).cases[0].score == 301.0


def test_bad_flags_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown family 'chat'"):
        propose_cases({"1": Stub("chat", ("a",), 1.0)})
    with pytest.raises(ValueError, match="no players"):
        propose_cases({"1": Stub("coseating", (), 1.0)})


stubs = st.lists(
    st.builds(
        Stub,
        family=st.sampled_from(["coseating", "pointflow", "boosting", "sessions"]),
        players=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=3, unique=True).map(
            tuple
        ),
        strength=st.floats(0.0, 50.0),
        near_conclusive=st.booleans(),
    ),
    max_size=12,
)


@given(items=stubs, data=st.data())
def test_cases_independent_of_flag_order(items: list[Stub], data: st.DataObject) -> None:
    flags = {f"f{i:02d}": flag for i, flag in enumerate(items)}
    order = data.draw(st.permutations(list(flags)))
    reordered: dict[str, Flag] = {ref: flags[ref] for ref in order}
    triage = propose_cases(dict(flags))
    assert propose_cases(reordered) == triage
    # Every flag lands in exactly one place.
    placed = [ref for case in triage.cases for ref in case.flags] + list(triage.review)
    assert sorted(placed) == sorted(flags)
