"""The sanction and appeal flows (SPEC §6, §7): per player, titles revoked before games are
voided; on an upheld appeal, games restored before titles; one transaction, so a failure in
another app leaves nothing written; a refused step calls no other app. The whole workflow
with real games: tests/integrity/test_workflow.py."""

from datetime import date
from typing import Any

import pytest
from django.contrib.auth.models import Group

from accounts.models import Player, User
from accounts.roles import REVIEWER
from flows import sanctions
from integrity.models import Case, CaseEvent, CasePlayer, Sanction
from integrity.services.cases import SameReviewerError, appeal_file
from tests.tournaments.factories import make_event, make_season
from titles import services as titles
from titles.models import Revocation
from tournaments.models import Event

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer2(roles: None) -> User:
    user = User.objects.create_user(username="rev2", password="pw-for-tests-only")
    user.groups.add(Group.objects.get(name=REVIEWER))
    return user


@pytest.fixture
def case() -> Case:
    opened = Case.objects.create(key="fb|fh", families=["sessions"], score=9.0, reason="one device")
    for external_id in ("fh", "fb"):
        player = Player.objects.create(external_id=external_id, name=external_id, province="江苏")
        CasePlayer.objects.create(case=opened, player=player)
    return opened


@pytest.fixture
def event() -> Event:
    season = make_season()
    return make_event(
        season, "2021-02-M", "monthly_final", day=date(2021, 2, 16),
    )  # fmt: skip


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The other apps' steps the flows take, in order; the game corrections stand in (the
    real ones, with real games: tests/integrity/test_workflow.py)."""
    seen: list[tuple[str, str]] = []
    revoke, restore = titles.titles_revoke, titles.titles_restore

    def titles_revoke(*, player: Player, **kwargs: Any) -> None:
        seen.append(("titles_revoke", player.external_id))
        revoke(player=player, **kwargs)

    def titles_restore(*, player: Player, **kwargs: Any) -> None:
        seen.append(("titles_restore", player.external_id))
        restore(player=player, **kwargs)

    def games(name: str) -> Any:
        def correct(*, player: Player, events: list[Event], **kwargs: Any) -> list[Any]:
            seen.append((name, player.external_id))
            return []

        return correct

    monkeypatch.setattr("flows.sanctions.titles_revoke", titles_revoke)
    monkeypatch.setattr("flows.sanctions.titles_restore", titles_restore)
    monkeypatch.setattr("flows.sanctions.player_games_void", games("player_games_void"))
    monkeypatch.setattr("flows.sanctions.player_games_restore", games("player_games_restore"))
    return seen


def _sanction(case: Case, reviewer: User, event: Event) -> Case:
    fb, fh = Player.objects.get(external_id="fb"), Player.objects.get(external_id="fh")
    return sanctions.case_sanction(
        case=case,
        by=reviewer,
        reason="farm",
        decisions=[
            {"player": fh, "role": "helper", "revoke_titles": True, "suspend": True},
            {"player": fb, "role": "beneficiary", "void_games": True, "events": [event],
             "revoke_titles": True},
        ],
    )  # fmt: skip


def test_a_sanction_revokes_titles_before_voiding_games_player_by_player(
    case: Case, event: Event, reviewer: User, calls: list[tuple[str, str]]
) -> None:
    sanctioned = _sanction(case, reviewer, event)

    # fh was created first: decisions run in player order, whatever order they were given.
    assert calls == [
        ("titles_revoke", "fh"),
        ("titles_revoke", "fb"),
        ("player_games_void", "fb"),
    ]
    assert (sanctioned.status, sanctioned.version) == ("sanctioned", 1)
    revocations = {r.player.external_id: r for r in Revocation.objects.all()}
    assert sorted(revocations) == ["fb", "fh"]
    for sanction in Sanction.objects.filter(case=case):
        assert sanction.revocation == revocations[sanction.player.external_id]
        assert sanction.effective_on == revocations[sanction.player.external_id].on
    assert {r.case_ref for r in revocations.values()} == {f"integrity-case-{case.pk}"}


def test_a_failure_in_another_app_leaves_nothing_written(
    case: Case, event: Event, reviewer: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(**kwargs: Any) -> list[Any]:
        raise RuntimeError("the standings could not be recomputed")

    monkeypatch.setattr("flows.sanctions.player_games_void", fail)

    with pytest.raises(RuntimeError, match="could not be recomputed"):
        _sanction(case, reviewer, event)

    case.refresh_from_db()
    assert (case.status, case.version, case.decided_by) == ("open", 0, None)
    assert (Revocation.objects.count(), Sanction.objects.count()) == (0, 0)
    assert not CaseEvent.objects.filter(case=case).exists()
    assert set(CasePlayer.objects.values_list("role", flat=True)) == {"unknown"}


def test_an_upheld_appeal_restores_games_before_titles_and_reverses_the_case(
    case: Case,
    event: Event,
    reviewer: User,
    reviewer2: User,
    calls: list[tuple[str, str]],
) -> None:
    sanctioned = _sanction(case, reviewer, event)
    fb = Player.objects.get(external_id="fb")
    appeal = appeal_file(case=sanctioned, player=fb, statement="not me")
    calls.clear()

    decided = sanctions.appeal_decide(appeal=appeal, by=reviewer2, upheld=True, reason="accepted")

    assert calls == [
        ("titles_restore", "fh"),
        ("player_games_restore", "fb"),
        ("titles_restore", "fb"),
    ]
    assert decided.status == "upheld"
    case.refresh_from_db()
    assert case.status == "reversed"
    assert not Revocation.objects.filter(restored_at__isnull=True).exists()
    assert not Sanction.objects.filter(reversed_at__isnull=True).exists()
    reversed_step = case.events.get(action="reversed")
    assert [r["player"] for r in reversed_step.data["restored"]] == ["fh", "fb"]


def test_a_refused_appeal_decision_calls_no_other_app(
    case: Case, event: Event, reviewer: User, calls: list[tuple[str, str]]
) -> None:
    sanctioned = _sanction(case, reviewer, event)
    fb = Player.objects.get(external_id="fb")
    appeal = appeal_file(case=sanctioned, player=fb, statement="not me")
    calls.clear()

    with pytest.raises(SameReviewerError):
        sanctions.appeal_decide(appeal=appeal, by=reviewer, upheld=True, reason="I was wrong")

    assert calls == []
    case.refresh_from_db()
    assert case.status == "sanctioned"
    assert not Sanction.objects.filter(reversed_at__isnull=False).exists()
    assert Revocation.objects.filter(restored_at__isnull=True).count() == 2


def test_sanction_dates_come_from_the_tour_clock(
    case: Case, event: Event, reviewer: User, calls: list[tuple[str, str]], monkeypatch: Any
) -> None:
    monkeypatch.setattr("integrity.services.cases.tour_today", lambda: date(2021, 3, 2))

    _sanction(case, reviewer, event)

    assert set(Sanction.objects.values_list("effective_on", flat=True)) == {date(2021, 3, 2)}
    assert set(Revocation.objects.values_list("on", flat=True)) == {date(2021, 3, 2)}
