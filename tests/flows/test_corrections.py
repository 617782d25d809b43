"""The corrections flow (SPEC §4 "Corrections after finalisation", §6): a correction that
changes a finalised event's champion moves the champion's title qualification in the same
transaction; the tournaments service alone moves the champion but no title."""

from typing import Any

import pytest

from accounts.models import User
from flows import corrections as flow
from flows import finalisation
from flows.finalisation import event_finalise
from tests.tournaments.factories import AFTER, monthly_and_quarterly
from tests.tournaments.test_corrections import _best_game
from tests.tournaments.test_finalise import _field
from titles.models import Qualification
from tournaments.models import Correction, Event, Seat
from tournaments.services import corrections

pytestmark = pytest.mark.django_db


def _qualifications() -> dict[str, str]:
    return {q.player.external_id: q.status for q in Qualification.objects.select_related("player")}


def test_voiding_the_champions_best_game_moves_the_qualification(organiser: User) -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=organiser, now=AFTER)
    assert _qualifications() == {"a1": "pending"}

    correction = flow.game_void(
        game=_best_game(monthly, players["a1"]), by=organiser, reason="suspected desync"
    )

    assert correction.diff["champion"] == {"before": "a1", "after": "a2"}
    assert _qualifications() == {"a1": "voided", "a2": "pending"}
    new = Qualification.objects.get(player=players["a2"])
    assert (new.source, new.evidence["rank"]) == ("event:2021-02-M:champion", 1)


def test_a_sanction_and_its_appeal_move_the_qualification_there_and_back(
    reviewer: User,
) -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=None, now=AFTER)

    voided = flow.player_games_void(
        player=players["a1"], events=[monthly], by=reviewer, reason="farm"
    )
    assert [c.diff["champion"] for c in voided] == [{"before": "a1", "after": "a2"}]
    assert _qualifications() == {"a1": "voided", "a2": "pending"}

    restored = flow.player_games_restore(
        player=players["a1"], events=[monthly], by=reviewer, reason="appeal upheld"
    )
    assert [c.diff["champion"] for c in restored] == [{"before": "a2", "after": "a1"}]
    assert _qualifications() == {"a1": "pending", "a2": "voided"}


def test_the_tournaments_service_alone_moves_the_champion_and_no_title(organiser: User) -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=organiser, now=AFTER)

    correction = corrections.game_void(
        game=_best_game(monthly, players["a1"]), by=organiser, reason="x"
    )

    assert corrections.champion_change(correction) == (players["a1"], players["a2"])
    assert Event.objects.get(pk=monthly.pk).champion == players["a2"]
    assert _qualifications() == {"a1": "pending"}


def test_a_failure_on_the_titles_side_undoes_the_correction(
    organiser: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monthly, _ = monthly_and_quarterly()
    players = _field(monthly)
    event_finalise(event=monthly, by=organiser, now=AFTER)
    game = _best_game(monthly, players["a1"])

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("titles down")

    monkeypatch.setattr(finalisation, "achievement_withdraw", broken)
    with pytest.raises(RuntimeError, match="titles down"):
        flow.game_void(game=game, by=organiser, reason="x")

    assert Event.objects.get(pk=monthly.pk).champion == players["a1"]
    assert not Seat.objects.filter(game=game, voided=True).exists()
    assert Correction.objects.count() == 0
    assert _qualifications() == {"a1": "pending"}
