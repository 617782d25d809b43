"""A suspension is enforced at ingest (SPEC §7): a suspended player's games from the day it
took effect are rejected, naming the case; earlier games still land; a reversal lifts it."""

from datetime import date

import pytest
from django.utils import timezone

from accounts.models import Player, User
from flows.ingest import games_ingest
from integrity.models import Case, CasePlayer, Sanction
from tests.tournaments.conftest import event, make_record, season  # noqa: F401 - fixtures
from tournaments.models import Game, Seat

pytestmark = pytest.mark.django_db


@pytest.fixture
def suspended(request: pytest.FixtureRequest, reviewer: User) -> Sanction:
    """In the week of ``make_record``'s event, p0000003 (its third seat) suspended from
    2021-02-02."""
    request.getfixturevalue("event")
    player = Player.objects.create(external_id="p0000003", name="玩家03", province="江苏")
    case = Case.objects.create(key="p0000003", status=Case.Status.SANCTIONED)
    CasePlayer.objects.create(case=case, player=player, role=CasePlayer.Role.BENEFICIARY)
    return Sanction.objects.create(
        case=case,
        player=player,
        role=CasePlayer.Role.BENEFICIARY,
        effective_on=date(2021, 2, 2),
        suspend=True,
        decided_by=reviewer,
        reason="farm",
    )


def test_a_game_after_the_suspension_is_rejected_and_nothing_is_written(
    suspended: Sanction,
) -> None:
    late = make_record(
        "g-after",
        started_at="2021-02-02T10:00:00+08:00",
        ended_at="2021-02-02T10:03:00+08:00",
    )

    report = games_ingest(records=[late], source="test")

    assert report.ingested == 0
    assert [(r.index, r.id, r.field, r.reason) for r in report.rejected] == [
        (
            0,
            "g-after",
            "seats[2].player.id",
            f"player p0000003 is suspended since 2021-02-02 (integrity case {suspended.case_id})",
        )
    ]
    assert Game.objects.count() == 0
    assert Seat.objects.count() == 0


def test_a_game_played_before_it_lands_and_a_reversal_lifts_it(suspended: Sanction) -> None:
    before = make_record(
        "g-before",
        started_at="2021-02-01T23:00:00+08:00",
        ended_at="2021-02-01T23:03:00+08:00",
    )
    after = make_record(
        "g-after",
        started_at="2021-02-03T10:00:00+08:00",
        ended_at="2021-02-03T10:03:00+08:00",
    )

    first = games_ingest(records=[before, after], source="test")
    Sanction.objects.filter(pk=suspended.pk).update(reversed_at=timezone.now())
    again = games_ingest(records=[after], source="test")

    assert (first.ingested, [r.id for r in first.rejected]) == (1, ["g-after"])
    assert (again.ingested, again.rejected) == (1, [])
    assert sorted(Game.objects.values_list("record_id", flat=True)) == ["g-after", "g-before"]
