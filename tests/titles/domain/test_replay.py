"""Replaying qualifications into Master / Lifetime Master history (SPEC §6 decisions)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from titles.domain.dates import add_years
from titles.domain.replay import (
    EXTENDED,
    GRANTED,
    IGNORED,
    LAPSED,
    LIFETIME,
    LIFETIME_CONFERRED,
    MASTER,
    REASON_ALREADY_LIFETIME,
    REASON_NO_VALID_MASTER,
    Change,
    Qualification,
    Term,
    TitleHistory,
    replay,
)


def m(source: str, on: date) -> Qualification:
    """A Master qualification."""
    return Qualification(source=source, on=on, confers=MASTER)


def lt(source: str, on: date) -> Qualification:
    """A Lifetime-conferring championship (National Championship, China Masters)."""
    return Qualification(source=source, on=on, confers=LIFETIME)


def kinds(history: TitleHistory) -> list[str]:
    return [change.kind for change in history.changes]


# --- Qualification -----------------------------------------------------------------------


def test_qualification_refuses_an_unknown_confers() -> None:
    with pytest.raises(ValueError, match="confers"):
        Qualification(source="a", on=date(2021, 1, 1), confers="international")


def test_qualification_refuses_an_empty_source() -> None:
    with pytest.raises(ValueError, match="source"):
        Qualification(source="", on=date(2021, 1, 1), confers=MASTER)


def test_qualification_is_keyword_only_and_frozen() -> None:
    q = m("a", date(2021, 1, 1))

    with pytest.raises(TypeError):
        Qualification("a", date(2021, 1, 1), MASTER)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        q.on = date(2022, 1, 1)  # type: ignore[misc]


# --- Nothing yet ----------------------------------------------------------------------------


def test_no_qualifications_no_titles() -> None:
    history = replay([])

    assert history.terms == ()
    assert history.changes == ()
    assert history.lifetime_since is None
    assert history.status_on(date(2021, 1, 1)) == "none"
    assert history.valid_until_on(date(2021, 1, 1)) is None


def test_status_before_the_first_qualification_is_none() -> None:
    history = replay([m("a", date(2021, 1, 10))])

    assert history.status_on(date(2021, 1, 9)) == "none"
    assert history.valid_until_on(date(2021, 1, 9)) is None
    assert history.term_on(date(2021, 1, 9)) is None
    assert history.status_on(date(2021, 1, 10)) == "master"


# --- One term ----------------------------------------------------------------------------


def test_one_qualification_is_valid_for_one_year_inclusive() -> None:
    history = replay([m("a", date(2021, 1, 10))])

    assert history.terms == (Term(date(2021, 1, 10), date(2022, 1, 10), ("a",)),)
    assert history.status_on(date(2022, 1, 10)) == "master"
    assert history.valid_until_on(date(2021, 6, 1)) == date(2022, 1, 10)
    assert history.status_on(date(2022, 1, 11)) == "none"
    assert history.valid_until_on(date(2022, 1, 11)) is None
    assert history.changes == (Change(GRANTED, date(2021, 1, 10), "a", date(2022, 1, 10)),)


def test_29_february_start_one_qualification_ends_28_february() -> None:
    history = replay([m("a", date(2020, 2, 29))])

    assert history.terms[0].valid_until == date(2021, 2, 28)
    assert history.status_on(date(2021, 2, 28)) == "master"
    assert history.status_on(date(2021, 3, 1)) == "none"


def test_29_february_start_four_qualifications_end_29_february() -> None:
    history = replay(
        [
            m("a", date(2020, 2, 29)),
            m("b", date(2020, 8, 1)),
            m("c", date(2021, 2, 28)),
            m("d", date(2022, 6, 1)),
        ]
    )

    (term,) = history.terms
    assert term.count == 4
    # Computed from the start, not chained (chaining would give 2024-02-28).
    assert term.valid_until == date(2024, 2, 29)
    assert [c.valid_until for c in history.changes] == [
        date(2021, 2, 28),
        date(2022, 2, 28),
        date(2023, 2, 28),
        date(2024, 2, 29),
    ]


def test_a_qualification_on_valid_until_itself_extends() -> None:
    history = replay([m("a", date(2021, 1, 10)), m("b", date(2022, 1, 10))])

    assert history.terms == (Term(date(2021, 1, 10), date(2023, 1, 10), ("a", "b")),)
    assert kinds(history) == [GRANTED, EXTENDED]
    assert history.changes[1] == Change(EXTENDED, date(2022, 1, 10), "b", date(2023, 1, 10))


def test_a_qualification_on_the_day_after_valid_until_starts_a_new_term() -> None:
    history = replay([m("a", date(2021, 1, 10)), m("b", date(2022, 1, 11))])

    assert history.terms == (
        Term(date(2021, 1, 10), date(2022, 1, 10), ("a",)),
        Term(date(2022, 1, 11), date(2023, 1, 11), ("b",)),
    )
    assert history.changes == (
        Change(GRANTED, date(2021, 1, 10), "a", date(2022, 1, 10)),
        Change(LAPSED, date(2022, 1, 11), "a", date(2022, 1, 10)),
        Change(GRANTED, date(2022, 1, 11), "b", date(2023, 1, 11)),
    )
    # No gap day here: the old term's last day is followed by the new term's first day.
    assert history.valid_until_on(date(2022, 1, 10)) == date(2022, 1, 10)
    assert history.valid_until_on(date(2022, 1, 11)) == date(2023, 1, 11)


def test_a_gap_between_terms_has_no_title() -> None:
    history = replay([m("a", date(2021, 1, 10)), m("b", date(2022, 5, 1))])

    assert history.status_on(date(2022, 1, 11)) == "none"
    assert history.status_on(date(2022, 4, 30)) == "none"
    assert history.valid_until_on(date(2022, 3, 1)) is None
    assert history.status_on(date(2022, 5, 1)) == "master"


def test_two_qualifications_on_the_same_day_first_grants_second_extends() -> None:
    history = replay([m("b", date(2021, 3, 1)), m("a", date(2021, 3, 1))])

    assert history.terms == (Term(date(2021, 3, 1), date(2023, 3, 1), ("a", "b")),)
    assert history.changes == (
        Change(GRANTED, date(2021, 3, 1), "a", date(2022, 3, 1)),
        Change(EXTENDED, date(2021, 3, 1), "b", date(2023, 3, 1)),
    )


def test_a_source_counts_once() -> None:
    history = replay([m("a", date(2021, 1, 10)), m("a", date(2021, 1, 10))])

    assert history.terms == (Term(date(2021, 1, 10), date(2022, 1, 10), ("a",)),)
    assert kinds(history) == [GRANTED]
    assert history.dropped == (m("a", date(2021, 1, 10)),)


def test_a_source_seen_with_two_dates_keeps_the_earliest() -> None:
    history = replay([m("a", date(2021, 6, 1)), m("a", date(2021, 1, 10))])

    assert history.terms == (Term(date(2021, 1, 10), date(2022, 1, 10), ("a",)),)
    assert history.qualifications == (m("a", date(2021, 1, 10)),)
    assert history.dropped == (m("a", date(2021, 6, 1)),)


# --- Replays after late results and rejections ---------------------------------------------


A = m("A", date(2021, 1, 10))
B = m("B", date(2021, 12, 1))
C = m("C", date(2022, 3, 1))


def test_a_late_earlier_dated_result_merges_two_terms() -> None:
    before = replay([A, C])
    assert before.terms == (
        Term(date(2021, 1, 10), date(2022, 1, 10), ("A",)),
        Term(date(2022, 3, 1), date(2023, 3, 1), ("C",)),
    )

    after = replay([A, C, B])

    assert after.terms == (Term(date(2021, 1, 10), date(2024, 1, 10), ("A", "B", "C")),)
    assert kinds(after) == [GRANTED, EXTENDED, EXTENDED]
    assert after.status_on(date(2022, 2, 1)) == "master"


def test_rejecting_the_middle_qualification_splits_the_term() -> None:
    before = replay([A, B, C])
    assert before.valid_until_on(date(2022, 2, 1)) == date(2024, 1, 10)

    after = replay([A, C])

    assert after.status_on(date(2022, 1, 11)) == "none"
    assert after.status_on(date(2022, 2, 28)) == "none"
    assert after.valid_until_on(date(2022, 3, 1)) == date(2023, 3, 1)
    assert after.changes == (
        Change(GRANTED, date(2021, 1, 10), "A", date(2022, 1, 10)),
        Change(LAPSED, date(2022, 1, 11), "A", date(2022, 1, 10)),
        Change(GRANTED, date(2022, 3, 1), "C", date(2023, 3, 1)),
    )


def test_any_input_order_gives_the_same_history() -> None:
    qualifications = [
        A,
        B,
        C,
        m("D", date(2026, 5, 5)),
        m("E", date(2026, 5, 5)),
        lt("NC", date(2022, 11, 20)),
        lt("CM", date(2023, 1, 1)),
        m("A", date(2023, 1, 1)),
    ]
    expected = replay(qualifications)
    shuffler = random.Random(2021)

    for _ in range(30):
        shuffled = qualifications[:]
        shuffler.shuffle(shuffled)
        assert replay(shuffled) == expected


# --- Lifetime Master ----------------------------------------------------------------------


def test_lifetime_on_the_last_valid_day_confers() -> None:
    history = replay([m("a", date(2021, 1, 10)), lt("nc", date(2022, 1, 10))])

    assert history.lifetime_since == date(2022, 1, 10)
    assert history.lifetime_source == "nc"
    assert history.changes[-1] == Change(LIFETIME_CONFERRED, date(2022, 1, 10), "nc")
    assert history.status_on(date(2022, 1, 9)) == "master"
    assert history.status_on(date(2022, 1, 10)) == "lifetime"
    assert history.status_on(date(2099, 12, 31)) == "lifetime"
    # Lifetime does not extend the Master term.
    assert history.terms == (Term(date(2021, 1, 10), date(2022, 1, 10), ("a",)),)
    assert history.valid_until_on(date(2022, 1, 11)) is None


def test_lifetime_on_the_day_after_valid_until_is_ignored() -> None:
    history = replay([m("a", date(2021, 1, 10)), lt("nc", date(2022, 1, 11))])

    assert history.lifetime_since is None
    assert history.changes[-1] == Change(
        IGNORED, date(2022, 1, 11), "nc", None, REASON_NO_VALID_MASTER
    )
    assert history.status_on(date(2022, 1, 11)) == "none"
    assert history.status_on(date(2030, 1, 1)) == "none"


def test_lifetime_without_any_master_is_ignored() -> None:
    history = replay([lt("nc", date(2021, 11, 20))])

    assert history.lifetime_since is None
    assert kinds(history) == [IGNORED]
    assert history.status_on(date(2021, 11, 20)) == "none"


def test_lifetime_on_the_same_day_as_the_qualification_that_makes_the_holder_valid() -> None:
    # Given in the "wrong" order and with a source that sorts first: on one day, Master
    # qualifications still apply before Lifetime upgrades.
    history = replay([lt("a-national-championship", date(2022, 5, 1)), m("z", date(2022, 5, 1))])

    assert history.lifetime_since == date(2022, 5, 1)
    assert kinds(history) == [GRANTED, LIFETIME_CONFERRED]
    assert history.status_on(date(2022, 4, 30)) == "none"
    assert history.status_on(date(2022, 5, 1)) == "lifetime"


def test_lifetime_on_the_day_a_new_term_starts_after_a_lapse_confers() -> None:
    history = replay(
        [m("a", date(2021, 1, 10)), m("b", date(2022, 1, 11)), lt("nc", date(2022, 1, 11))]
    )

    assert kinds(history) == [GRANTED, LAPSED, GRANTED, LIFETIME_CONFERRED]
    assert history.lifetime_since == date(2022, 1, 11)


def test_lifetime_requires_master_false_always_confers() -> None:
    history = replay([lt("nc", date(2021, 11, 20))], lifetime_requires_master=False)

    assert history.lifetime_since == date(2021, 11, 20)
    assert history.changes == (Change(LIFETIME_CONFERRED, date(2021, 11, 20), "nc"),)
    assert history.status_on(date(2021, 11, 19)) == "none"
    assert history.status_on(date(2021, 11, 20)) == "lifetime"
    assert history.terms == ()
    assert history.valid_until_on(date(2021, 11, 20)) is None


def test_a_second_lifetime_is_ignored_and_the_first_stays() -> None:
    history = replay(
        [m("a", date(2021, 1, 10)), lt("nc", date(2021, 11, 20)), lt("cm", date(2021, 12, 20))]
    )

    assert history.lifetime_since == date(2021, 11, 20)
    assert history.lifetime_source == "nc"
    assert history.changes[-1] == Change(
        IGNORED, date(2021, 12, 20), "cm", None, REASON_ALREADY_LIFETIME
    )


def test_master_terms_continue_after_lifetime() -> None:
    history = replay(
        [
            m("a", date(2021, 1, 10)),
            lt("nc", date(2021, 11, 20)),
            m("b", date(2023, 6, 1)),
        ]
    )

    assert history.terms[-1] == Term(date(2023, 6, 1), date(2024, 6, 1), ("b",))
    assert history.status_on(date(2022, 6, 1)) == "lifetime"
    assert history.valid_until_on(date(2022, 6, 1)) is None
    assert history.valid_until_on(date(2023, 6, 1)) == date(2024, 6, 1)


# --- "Was X a Master on day D, and why" ------------------------------------------------------


def test_qualifications_behind_a_day() -> None:
    nc = lt("nc", date(2023, 11, 20))
    history = replay([C, nc, A, B])

    assert history.qualifications_behind(date(2020, 12, 31)) == ()
    assert history.qualifications_behind(date(2021, 6, 1)) == (A, B, C)
    assert history.qualifications_behind(date(2023, 12, 1)) == (A, B, C, nc)
    assert history.qualifications_behind(date(2030, 1, 1)) == (nc,)
    assert history.term_on(date(2021, 6, 1)) == Term(
        date(2021, 1, 10), date(2024, 1, 10), ("A", "B", "C")
    )


def test_lapses_through_includes_the_last_term_once_its_day_comes() -> None:
    history = replay([A, C])
    first_lapse = Change(LAPSED, date(2022, 1, 11), "A", date(2022, 1, 10))
    last_lapse = Change(LAPSED, date(2023, 3, 2), "C", date(2023, 3, 1))

    assert history.lapses_through(date(2022, 1, 10)) == ()
    assert history.lapses_through(date(2022, 1, 11)) == (first_lapse,)
    assert history.lapses_through(date(2023, 3, 1)) == (first_lapse,)
    assert history.lapses_through(date(2023, 3, 2)) == (first_lapse, last_lapse)


def test_changes_describe_themselves() -> None:
    history = replay([A, lt("nc", date(2021, 6, 1)), lt("cm", date(2021, 7, 1)), C])

    assert [change.describe() for change in history.changes] == [
        "2021-01-10: Master granted by A, valid until 2022-01-10",
        "2021-06-01: Lifetime Master conferred by nc",
        "2021-07-01: cm ignored: already a Lifetime Master",
        "2022-01-11: Master lapsed (last valid day 2022-01-10, last source A)",
        "2022-03-01: Master granted by C, valid until 2023-03-01",
    ]


# --- Properties ---------------------------------------------------------------------------

WINDOW_START = date(2020, 1, 1)
WINDOW_END = date(2022, 12, 31)
MAX_QUALIFICATIONS = 8
RANK = {"none": 0, "master": 1, "lifetime": 2}
# Every day on which a title can change for qualifications inside the window.
CHECK_DAYS = [
    WINDOW_START + timedelta(days=offset)
    for offset in range(-1, (add_years(WINDOW_END, MAX_QUALIFICATIONS) - WINDOW_START).days + 2)
]

# A small window around 29 February 2020 so terms touch, extend, merge and lapse often.
qualification_dates = st.dates(min_value=WINDOW_START, max_value=WINDOW_END)


@st.composite
def qualification_lists(draw: st.DrawFn, *, unique_sources: bool = True) -> list[Qualification]:
    """Lists of qualifications, mostly Master, some Lifetime."""
    size = draw(st.integers(min_value=0, max_value=MAX_QUALIFICATIONS))
    sources = (
        [f"q{i}" for i in range(size)]
        if unique_sources
        else draw(st.lists(st.sampled_from("abcde"), min_size=size, max_size=size))
    )
    return [
        Qualification(
            source=source,
            on=draw(qualification_dates),
            confers=draw(st.sampled_from([MASTER, MASTER, MASTER, LIFETIME])),
        )
        for source in sources
    ]


def ranks(history: TitleHistory) -> list[int]:
    return [RANK[history.status_on(day)] for day in CHECK_DAYS]


@given(
    qualifications=qualification_lists(unique_sources=False),
    data=st.data(),
    requires_master=st.booleans(),
)
def test_replay_is_independent_of_input_order(
    qualifications: list[Qualification], data: st.DataObject, requires_master: bool
) -> None:
    shuffled = data.draw(st.permutations(qualifications))

    assert replay(shuffled, lifetime_requires_master=requires_master) == replay(
        qualifications, lifetime_requires_master=requires_master
    )


@settings(max_examples=60)
@given(
    qualifications=qualification_lists(),
    extra=qualification_dates,
    extra_confers=st.sampled_from([MASTER, LIFETIME]),
    requires_master=st.booleans(),
)
def test_adding_a_qualification_never_takes_a_title_day_away(
    qualifications: list[Qualification],
    extra: date,
    extra_confers: str,
    requires_master: bool,
) -> None:
    added = Qualification(source="extra", on=extra, confers=extra_confers)
    before = replay(qualifications, lifetime_requires_master=requires_master)
    after = replay([*qualifications, added], lifetime_requires_master=requires_master)

    assert all(a >= b for a, b in zip(ranks(after), ranks(before), strict=True))


@settings(max_examples=60)
@given(qualifications=qualification_lists(), data=st.data(), requires_master=st.booleans())
def test_removing_a_qualification_never_adds_a_title_day(
    qualifications: list[Qualification], data: st.DataObject, requires_master: bool
) -> None:
    if not qualifications:
        return
    index = data.draw(st.integers(min_value=0, max_value=len(qualifications) - 1))
    remaining = qualifications[:index] + qualifications[index + 1 :]
    before = replay(qualifications, lifetime_requires_master=requires_master)
    after = replay(remaining, lifetime_requires_master=requires_master)

    assert all(a <= b for a, b in zip(ranks(after), ranks(before), strict=True))


@given(qualifications=qualification_lists(unique_sources=False), requires_master=st.booleans())
def test_terms_are_sorted_disjoint_and_computed_from_their_start(
    qualifications: list[Qualification], requires_master: bool
) -> None:
    history = replay(qualifications, lifetime_requires_master=requires_master)

    for term in history.terms:
        assert term.valid_until == add_years(term.start, term.count)
    for earlier, later in pairwise(history.terms):
        assert earlier.valid_until < later.start
    # Every counted Master qualification is in exactly one term.
    in_terms = [source for term in history.terms for source in term.sources]
    masters = [q.source for q in history.qualifications if q.confers == MASTER]
    assert in_terms == masters


@given(qualifications=qualification_lists(unique_sources=False), requires_master=st.booleans())
def test_status_and_validity_agree_with_the_terms(
    qualifications: list[Qualification], requires_master: bool
) -> None:
    history = replay(qualifications, lifetime_requires_master=requires_master)

    for day in CHECK_DAYS[::7]:
        covering = [term for term in history.terms if term.covers(day)]
        assert len(covering) <= 1
        assert history.term_on(day) == (covering[0] if covering else None)
        assert history.valid_until_on(day) == (covering[0].valid_until if covering else None)
        lifetime = history.lifetime_since is not None and history.lifetime_since <= day
        expected = "lifetime" if lifetime else ("master" if covering else "none")
        assert history.status_on(day) == expected
