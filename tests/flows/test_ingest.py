"""The ingest flow (SPEC §7 sanctions, §9): integrity's suspensions in force reach the
tournaments ingest, through the API batch and the JSON Lines import alike; a refused record
writes nothing (no game, seat, player change or standing)."""

import json
from datetime import date
from typing import Any

import pytest

from accounts.models import Player, PlayerChange, User
from flows.ingest import games_import, games_ingest, suspensions_in_force
from integrity.models import Case, CasePlayer, Sanction
from tests.tournaments.conftest import event, make_record, season  # noqa: F401 - fixtures
from tournaments.models import Game, Seat, Standing
from tournaments.services import ingest

pytestmark = pytest.mark.django_db


def _after(record_id: str) -> dict[str, Any]:
    """A record of a game played after the suspension took effect."""
    return make_record(
        record_id, started_at="2021-02-03T10:00:00+08:00", ended_at="2021-02-03T10:03:00+08:00"
    )


@pytest.fixture
def suspended(request: pytest.FixtureRequest, reviewer: User) -> Sanction:
    """p0000003 (``make_record``'s third seat) suspended from 2021-02-02, renamed since."""
    request.getfixturevalue("event")
    player = Player.objects.create(external_id="p0000003", name="旧名字", province="江苏")
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


def _nothing_written() -> None:
    assert (Game.objects.count(), Seat.objects.count(), Standing.objects.count()) == (0, 0, 0)
    assert PlayerChange.objects.count() == 0
    assert list(Player.objects.values_list("external_id", flat=True)) == ["p0000003"]


def test_a_suspended_players_record_is_refused_and_nothing_is_written(
    suspended: Sanction,
) -> None:
    report = games_ingest(records=[_after("g-1")], source="test")

    assert report.ingested == 0
    assert [(r.id, r.field, r.reason) for r in report.rejected] == [
        (
            "g-1",
            "seats[2].player.id",
            f"player p0000003 is suspended since 2021-02-02 (integrity case {suspended.case_id})",
        )
    ]
    _nothing_written()


def test_the_import_refuses_it_too(suspended: Sanction) -> None:
    rejects: list[dict[str, Any]] = []

    summary = games_import(lines=[json.dumps(_after("g-1"))], on_rejects=rejects.extend)

    assert (summary.ingested, summary.rejected) == (0, 1)
    assert [(r["line"], r["id"], r["field"]) for r in rejects] == [(1, "g-1", "seats[2].player.id")]
    _nothing_written()


def test_the_suspensions_are_the_unreversed_ones(suspended: Sanction) -> None:
    assert suspensions_in_force() == {
        "p0000003": ingest.Suspension(
            since=date(2021, 2, 2), ground=f"integrity case {suspended.case_id}"
        )
    }
    Sanction.objects.filter(pk=suspended.pk).update(reversed_at=suspended.decided_at)
    assert suspensions_in_force() == {}


def test_the_tournaments_ingest_asks_the_suspensions_once_per_batch(
    event: Any,  # noqa: F811 - the fixture
) -> None:
    asked: list[int] = []

    def suspensions() -> dict[str, ingest.Suspension]:
        asked.append(1)
        return {"p0000001": ingest.Suspension(since=date(2021, 2, 1), ground="a test")}

    report = ingest.games_ingest(
        records=[make_record("g-1"), _after("g-2")], suspensions=suspensions
    )

    assert (report.ingested, len(asked)) == (0, 1)
    assert {r.reason for r in report.rejected} == {
        "player p0000001 is suspended since 2021-02-01 (a test)"
    }
