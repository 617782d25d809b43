"""SPEC §6: a grant from an event is decidable only after the event's integrity audit has
run, and not while an open case holds the player (flows.grants.grant_audit_is_clean)."""

from typing import Any

import pytest

from accounts.models import User
from core.errors import ConflictError
from flows.finalisation import event_finalise
from flows.grants import qualification_approve
from integrity.models import Case
from integrity.services.audits import audit_event
from integrity.services.cases import case_dismiss
from tests.integrity.farm import monthly_with_a_farm
from tests.tournaments.factories import AFTER
from titles.models import Qualification

pytestmark = pytest.mark.django_db


def _approve(qualification: Qualification, reviewer: User) -> Qualification:
    return qualification_approve(
        qualification=qualification,
        by=reviewer,
        reason="ok",
        expected_version=qualification.version,
    )


def test_a_champion_grant_waits_for_the_audit_and_the_case(settings: Any, reviewer: User) -> None:
    settings.TITLES_REQUIRE_EVENT_AUDIT = True
    monthly, _, players = monthly_with_a_farm()
    event_finalise(event=monthly, by=None, now=AFTER)
    grant = Qualification.objects.get(source="event:2021-02-M:champion")
    assert grant.player == players["b"]

    with pytest.raises(ConflictError) as before_audit:
        _approve(grant, reviewer)
    assert before_audit.value.detail["reason"] == "audit"
    assert Qualification.objects.get(pk=grant.pk).status == "pending"

    audit_event(event=monthly)  # finds the farm: one device on two seats, 15 times
    [case] = Case.objects.filter(status="open")
    with pytest.raises(ConflictError) as held:
        _approve(Qualification.objects.get(pk=grant.pk), reviewer)
    assert held.value.detail["reason"] == "held"
    assert Qualification.objects.get(pk=grant.pk).status == "pending"

    case_dismiss(case=case, by=reviewer, reason="family members, checked by phone")
    approved = _approve(Qualification.objects.get(pk=grant.pk), reviewer)
    assert approved.status == "approved"
