"""The first build of the title materialisation (``titles_recompute_all`` on an empty state:
no title row, term or history) equals the incremental replay of the same ledger — every
grant decided one at a time through the services, in random order, some reversed — value
for value: the title rows (status, last day, Lifetime, terms shown, fingerprint), the live
terms and the live history. It is also the same in one chunk or many, and a second run
writes nothing."""

import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from accounts.models import Player, User
from flows import grants
from titles import services
from titles.models import (
    REPLAY_KINDS,
    PlayerTitle,
    Qualification,
    QualificationRule,
    TermState,
    TitleChange,
    TitleTerm,
)
from titles.recompute import fingerprint, player_history, titles_recompute_all

pytestmark = pytest.mark.django_db

TODAY = date(2021, 6, 1)


def state() -> tuple[dict[int, tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """What the materialisation shows: the title rows by player, the terms that are not void,
    and the live history (entries of replay kinds no later entry retracted), sorted."""
    titles = {
        pid: tuple(row)
        for pid, *row in PlayerTitle.objects.values_list(
            "player_id", "status", "valid_until", "lifetime_since", "terms", "fingerprint"
        )
    }
    terms = sorted(
        TitleTerm.objects.exclude(state=TermState.VOID).values_list(
            "player_id", "start", "valid_until", "sources", "code", "state"
        )
    )
    live = sorted(
        TitleChange.objects.filter(kind__in=REPLAY_KINDS, retraction__isnull=True).values_list(
            "player_id", "kind", "on", "source", "valid_until", "note"
        ),
        key=repr,
    )
    return titles, terms, live


def clear() -> None:
    """Empty the materialisation (the ledger stays)."""
    TitleChange.objects.filter(retracts__isnull=False).delete()
    TitleChange.objects.all().delete()
    TitleTerm.objects.all().delete()
    PlayerTitle.objects.all().delete()


def decide_at_random(make_player: Callable[..., Player], reviewer: User, seed: int) -> set[int]:
    """25 players with 0–7 qualifications each over 2017–2021 (Master and Lifetime), decided
    one at a time in random order: most approved, some rejected, some approved then
    rejected. Returns the players with an approved qualification."""
    rng = random.Random(seed)
    pending = []
    for _ in range(25):
        player = make_player()
        for n in range(rng.randrange(8)):
            achievement = "national_championship" if rng.random() < 0.15 else "monthly_champion"
            qualification = services.achievement_record(
                achievement=achievement,
                player=player,
                on=date(2017, 1, 1) + timedelta(days=rng.randrange(4 * 365 + 150)),
                source=f"event:{n}",
                evidence={},
                by=None,
            )
            assert qualification is not None
            pending.append(qualification)
    rng.shuffle(pending)
    for qualification in pending:
        fate = rng.choice(["approve"] * 7 + ["reject", "reverse"])
        if fate == "reject":
            services.qualification_reject(
                qualification=qualification, by=reviewer, reason="no", expected_version=1
            )
            continue
        grants.qualification_approve(
            qualification=qualification, by=reviewer, reason="ok", expected_version=1
        )
        if fate == "reverse":
            services.qualification_reject(
                qualification=qualification, by=reviewer, reason="reversed", expected_version=2
            )
    return set(Qualification.objects.filter(status="approved").values_list("player_id", flat=True))


@pytest.fixture
def incremental(
    freeze: Callable[[date], None], make_player: Callable[..., Player], reviewer: User
) -> tuple[set[int], Any]:
    """The approved players and the state the incremental replay left."""
    freeze(TODAY)
    approved = decide_at_random(make_player, reviewer, seed=5)
    return approved, state()


@pytest.mark.parametrize("chunk", [5000, 7, 1])
def test_the_first_build_equals_the_incremental_replay(
    incremental: tuple[set[int], Any], chunk: int
) -> None:
    approved, (titles, terms, live) = incremental
    empty = fingerprint(player_history(-1))
    # Players whose every grant was refused keep the row their first lock made: no title.
    for pid in titles.keys() - approved:
        assert titles.pop(pid) == ("none", None, None, [], empty)
    clear()

    assert titles_recompute_all(reason="first build", chunk=chunk) == len(approved)

    assert state() == (titles, terms, live)
    assert len(titles) == len(approved) > 15
    assert {status for status, *_ in titles.values()} >= {"master", "lapsed", "lifetime"}
    assert {term_state for *_, term_state in terms} == {"current", "lapsed"}
    assert all(digest == fingerprint(player_history(pid)) for pid, (*_, digest) in titles.items())


def test_a_second_run_after_the_first_build_writes_nothing(
    incremental: tuple[set[int], Any],
) -> None:
    clear()
    titles_recompute_all(reason="first build")
    first = (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )

    titles_recompute_all(reason="again")

    assert first == (
        list(PlayerTitle.objects.order_by("pk").values()),
        list(TitleTerm.objects.order_by("pk").values()),
        list(TitleChange.objects.order_by("pk").values()),
    )


def test_the_first_build_of_a_known_ledger_has_exact_values(
    freeze: Callable[[date], None], make_player: Callable[..., Player]
) -> None:
    """An imported ledger (approved rows, no title row): two Master terms, the first lapsed
    and extended once, the second current; exact rows."""
    freeze(TODAY)
    player = make_player()
    rule = QualificationRule.objects.get(key="monthly_champion")
    for source, on in (("a", date(2018, 3, 1)), ("b", date(2018, 9, 1)), ("c", date(2021, 2, 1))):
        Qualification.objects.create(
            player=player, source=source, rule=rule, on=on, confers="master", status="approved"
        )

    assert titles_recompute_all(reason="import") == 1

    title = PlayerTitle.objects.get(player=player)
    assert (title.status, title.valid_until, title.lifetime_since) == (
        "master",
        date(2022, 2, 1),
        None,
    )
    assert list(
        TitleTerm.objects.order_by("start").values_list("start", "valid_until", "sources", "state")
    ) == [
        (date(2018, 3, 1), date(2020, 3, 1), ["a", "b"], "lapsed"),
        (date(2021, 2, 1), date(2022, 2, 1), ["c"], "current"),
    ]
    assert list(
        TitleChange.objects.order_by("id").values_list("kind", "on", "source", "valid_until")
    ) == [
        ("granted", date(2018, 3, 1), "a", date(2019, 3, 1)),
        ("extended", date(2018, 9, 1), "b", date(2020, 3, 1)),
        ("lapsed", date(2020, 3, 2), "b", date(2020, 3, 1)),
        ("granted", date(2021, 2, 1), "c", date(2022, 2, 1)),
    ]
