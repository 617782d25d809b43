"""The case workflow end to end through the services (SPEC §6, §7): flag -> case -> sanction
(titles revoked for the beneficiary and the helper, the beneficiary's games voided, the
leaderboard, champion and advancement recomputed) -> appeal -> reversal, which restores
everything exactly; refused paths write nothing."""

from datetime import timedelta
from typing import Any

import pytest

from accounts.models import Player, User
from core.clock import tour_today
from core.errors import ConflictError, ServiceError
from flows.finalisation import event_finalise
from flows.grants import qualification_approve
from flows.sanctions import appeal_decide, case_sanction
from integrity.models import Appeal, Case, CaseEvent, CasePlayer, Sanction
from integrity.services.audits import audit_event
from integrity.services.cases import (
    ReviewerOnlyError,
    SameReviewerError,
    appeal_file,
    case_dismiss,
    case_take,
)
from tests.integrity.farm import monthly_with_a_farm
from tests.tournaments.factories import AFTER
from titles.models import PlayerTitle, Qualification, QualificationRule, TitleTerm
from titles.services import qualification_enter
from tournaments.models import Correction, Entry, Event, Seat, Standing

pytestmark = pytest.mark.django_db


def _master(player: Player, reviewer: User, source: str) -> Qualification:
    rule = QualificationRule.objects.get(key="monthly_champion")
    entrant, _ = User.objects.get_or_create(username="entrant")  # four eyes: not the approver
    qualification = qualification_enter(
        player=player,
        rule=rule,
        on=tour_today() - timedelta(days=30),
        source=source,
        evidence={},
        reason="entered for the test",
        by=entrant,
    )
    return qualification_approve(
        qualification=qualification,
        by=reviewer,
        reason="ok",
        expected_version=qualification.version,
    )


def _state(monthly: Event, quarterly: Event) -> dict[str, Any]:
    """Everything a sanction touches and a reversal must put back."""
    return {
        "standings": sorted(
            Standing.objects.filter(event=monthly).values_list(
                "player_key",
                "total",
                "games",
                "eligible",
                "rank",
                "province_rank",
                "advanced",
                "by_national",
                "by_province",
                "kept",
                "best",
            )
        ),
        "entries": sorted(
            Entry.objects.filter(event=quarterly).values_list(
                "player__external_id", "basis", "source__code", "reason"
            )
        ),
        "champion": Event.objects.get(pk=monthly.pk).champion_id,
        "voided_seats": Seat.objects.filter(voided=True).count(),
        # A player without any title reads the same with or without a "none" row.
        "titles": sorted(
            PlayerTitle.objects.exclude(status="none", terms=[]).values_list(
                "player__external_id", "status", "valid_until", "lifetime_since", "terms"
            ),
            key=lambda row: row[0],
        ),
        "terms": sorted(
            TitleTerm.objects.values_list(
                "player__external_id", "start", "valid_until", "sources", "code", "state"
            ),
            key=lambda row: (row[0], row[1]),
        ),
        "qualifications": sorted(
            Qualification.objects.exclude(status="voided").values_list(
                "player__external_id", "source", "status", "on"
            )
        ),
    }


@pytest.fixture
def opened(reviewer: User) -> tuple[Case, Event, Event, dict[str, Player]]:
    monthly, quarterly, players = monthly_with_a_farm()
    event_finalise(event=monthly, by=None, now=AFTER)
    _master(players["b"], reviewer, "earlier-cup")
    _master(players["h"], reviewer, "other-cup")
    run = audit_event(event=monthly)
    assert run.stats["flags"]["same_table"] == 15
    [case] = Case.objects.all()
    return case, monthly, quarterly, players


def _counts() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Sanction, Appeal, CaseEvent, Correction, Qualification, Standing, Entry)
    }


def test_flag_case_sanction_appeal_reversal_restores_everything(
    opened: tuple[Case, Event, Event, dict[str, Player]], reviewer: User, reviewer2: User
) -> None:
    case, monthly, quarterly, players = opened
    b, h, a2 = players["b"], players["h"], players["a2"]
    assert sorted(case.players.values_list("external_id", flat=True)) == ["b", "h"]
    assert (case.status, case.key) == ("open", "b|h")
    assert case.families == ["coseating", "pointflow", "sessions"]
    before = _state(monthly, quarterly)
    assert before["champion"] == b.pk
    assert [row[0] for row in before["entries"]] == ["b"]
    assert {row[0]: row[1] for row in before["titles"]} == {"b": "master", "h": "master"}
    assert [(q[0], q[1], q[2]) for q in before["qualifications"]] == [
        ("b", "event:2021-02-M:champion", "pending"),
        ("b", "manual:earlier-cup", "approved"),
        ("h", "manual:other-cup", "approved"),
    ]

    case = case_take(case=case, by=reviewer)
    case = case_sanction(
        case=case,
        by=reviewer,
        reason="farm: one device, 15 games together",
        decisions=[
            {"player": b, "role": "beneficiary", "void_games": True, "events": [monthly],
             "revoke_titles": True},
            {"player": h, "role": "helper", "revoke_titles": True, "suspend": True},
        ],
    )  # fmt: skip

    # The sanction: b's games voided, a2 champion and advanced, both titles revoked.
    assert (case.status, case.decided_by, case.version) == ("sanctioned", reviewer, 2)
    monthly.refresh_from_db()
    assert monthly.champion == a2
    sanctioned = _state(monthly, quarterly)
    assert [row[0] for row in sanctioned["entries"]] == ["a2"]
    standing_b = Standing.objects.get(event=monthly, player=b)
    assert (standing_b.games, standing_b.eligible, standing_b.rank) == (0, False, None)
    assert Seat.objects.filter(player=b, voided=False).count() == 0
    assert Seat.objects.filter(player=h, voided=True).count() == 0
    titles = dict(PlayerTitle.objects.values_list("player__external_id", "status"))
    assert (titles["b"], titles["h"]) == ("none", "none")
    assert Qualification.objects.filter(player__in=[b, h]).exclude(status="voided").count() == 0
    assert {q[0] for q in sanctioned["qualifications"]} == {"a2"}
    roles = dict(CasePlayer.objects.filter(case=case).values_list("player__external_id", "role"))
    assert roles == {"b": "beneficiary", "h": "helper"}
    sanction_b = Sanction.objects.get(case=case, player=b)
    sanction_h = Sanction.objects.get(case=case, player=h)
    assert [e.code for e in sanction_b.events.all()] == ["2021-02-M"]
    assert len(sanction_b.corrections) == 1
    assert sanction_b.revocation is not None
    assert sanction_h.revocation is not None
    assert (sanction_h.corrections, sanction_h.suspend, sanction_h.void_games) == ([], True, False)
    assert sanction_b.revocation.case_ref == f"integrity-case-{case.pk}"

    appeal = appeal_file(case=case, player=b, statement="my brother used my phone", by=reviewer2)
    appeal = appeal_decide(appeal=appeal, by=reviewer2, upheld=True, reason="evidence accepted")

    assert (appeal.status, appeal.decided_by) == ("upheld", reviewer2)
    case.refresh_from_db()
    assert case.status == "reversed"
    assert _state(monthly, quarterly) == before
    assert Sanction.objects.filter(case=case, reversed_at__isnull=True).count() == 0
    log = list(case.events.values_list("action", "by__username"))
    assert log == [
        ("opened", None),
        ("taken", "rev"),
        ("sanctioned", "rev"),
        ("appealed", "rev2"),
        ("reversed", "rev2"),
    ]
    reversed_event = case.events.get(action="reversed")
    assert reversed_event.reason == "evidence accepted"
    assert [r["player"] for r in reversed_event.data["restored"]] == ["b", "h"]


def test_the_reviewer_who_sanctioned_cannot_decide_the_appeal(
    opened: tuple[Case, Event, Event, dict[str, Player]], reviewer: User
) -> None:
    case, monthly, quarterly, players = opened
    case = case_sanction(
        case=case,
        by=reviewer,
        reason="farm",
        decisions=[{"player": players["b"], "role": "beneficiary", "revoke_titles": True}],
    )
    appeal = appeal_file(case=case, player=players["b"], statement="not me")
    counts, state = _counts(), _state(monthly, quarterly)

    with pytest.raises(SameReviewerError, match="another reviewer must"):
        appeal_decide(appeal=appeal, by=reviewer, upheld=True, reason="I was wrong")

    assert _counts() == counts
    assert _state(monthly, quarterly) == state
    appeal.refresh_from_db()
    case.refresh_from_db()
    assert (appeal.status, case.status) == ("pending", "sanctioned")


def test_a_rejected_appeal_keeps_the_sanction(
    opened: tuple[Case, Event, Event, dict[str, Player]], reviewer: User, reviewer2: User
) -> None:
    case, monthly, quarterly, players = opened
    case = case_sanction(
        case=case,
        by=reviewer,
        reason="farm",
        decisions=[
            {"player": players["b"], "role": "beneficiary", "void_games": True,
             "events": [monthly]},
        ],
    )  # fmt: skip
    state = _state(monthly, quarterly)
    appeal = appeal_file(case=case, player=players["b"], statement="not me")
    with pytest.raises(ConflictError, match="already has a pending appeal"):
        appeal_file(case=case, player=players["b"], statement="again")
    with pytest.raises(ServiceError, match="holds no sanction"):
        appeal_file(case=case, player=players["h"], statement="me too")

    appeal = appeal_decide(appeal=appeal, by=reviewer2, upheld=False, reason="same device")

    assert appeal.status == "rejected"
    case.refresh_from_db()
    assert case.status == "sanctioned"
    assert _state(monthly, quarterly) == state
    assert case.events.values_list("action", flat=True).last() == "appeal_rejected"


def test_refused_steps_write_nothing(
    opened: tuple[Case, Event, Event, dict[str, Player]],
    reviewer: User,
    reviewer2: User,
    organiser: User,
) -> None:
    case, monthly, quarterly, players = opened
    counts, state = _counts(), _state(monthly, quarterly)
    stale = Case.objects.get(pk=case.pk)
    case_take(case=case, by=reviewer)
    counts["CaseEvent"] += 1

    with pytest.raises(ConflictError, match="someone acted on it first"):
        case_dismiss(case=stale, by=reviewer2, reason="no")
    with pytest.raises(ReviewerOnlyError):
        case_take(case=Case.objects.get(pk=case.pk), by=organiser)
    fresh = Case.objects.get(pk=case.pk)
    with pytest.raises(ServiceError, match="not a player of case"):
        case_sanction(
            case=fresh,
            by=reviewer,
            reason="x",
            decisions=[{"player": players["a2"], "role": "helper", "revoke_titles": True}],
        )
    with pytest.raises(ServiceError, match="name the events"):
        case_sanction(
            case=fresh,
            by=reviewer,
            reason="x",
            decisions=[{"player": players["b"], "role": "beneficiary", "void_games": True}],
        )
    with pytest.raises(ServiceError, match="needs a reason"):
        case_dismiss(case=fresh, by=reviewer, reason=" ")
    with pytest.raises(ConflictError, match="is open"):
        appeal_file(case=fresh, player=players["b"], statement="early")

    assert _counts() == counts
    assert _state(monthly, quarterly) == state
    fresh.refresh_from_db()
    assert (fresh.status, fresh.version, fresh.assigned_to) == ("open", 1, reviewer)


def test_dismissal_clears_the_players_and_releases_the_hold(
    opened: tuple[Case, Event, Event, dict[str, Player]], reviewer: User
) -> None:
    from titles.services import player_is_held

    case, _, _, players = opened
    assert player_is_held(players["b"]) is True

    case = case_dismiss(case=case, by=reviewer, reason="a shared family tablet")

    assert (case.status, case.decided_by) == ("dismissed", reviewer)
    assert set(CasePlayer.objects.filter(case=case).values_list("role", flat=True)) == {"cleared"}
    assert player_is_held(players["b"]) is False
    assert case.events.values_list("reason", flat=True).last() == "a shared family tablet"


def test_sanctions_and_appeal_decisions_are_logged_on_commit(
    opened: tuple[Case, Event, Event, dict[str, Player]],
    reviewer: User,
    reviewer2: User,
    event_log: list[tuple[str, str, dict[str, Any]]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    case, monthly, quarterly, players = opened
    event_log.clear()
    with django_capture_on_commit_callbacks(execute=True):
        case = case_sanction(
            case=case,
            by=reviewer,
            reason="farm",
            decisions=[{"player": players["h"], "role": "helper", "suspend": True}],
        )
    sanction = Sanction.objects.get(case=case)
    appeal = appeal_file(case=case, player=players["h"], statement="not me")
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(SameReviewerError):
        appeal_decide(appeal=appeal, by=reviewer, upheld=False, reason="refused")
    with django_capture_on_commit_callbacks(execute=True):
        appeal_decide(appeal=appeal, by=reviewer2, upheld=False, reason="evidence stands")

    assert event_log == [
        (
            "unotour.integrity",
            "case_sanctioned",
            {
                "case": case.pk,
                "by": "rev",
                "reason": "farm",
                "sanctions": [
                    {
                        "sanction": sanction.pk,
                        "player": "h",
                        "role": "helper",
                        "events": [],
                        "corrections": [],
                        "revocation": None,
                        "suspend": True,
                    }
                ],
            },
        ),
        (
            "unotour.integrity",
            "case_appeal_rejected",
            {"case": case.pk, "by": "rev2", "reason": "evidence stands", "appeal": appeal.pk},
        ),
    ]
