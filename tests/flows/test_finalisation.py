"""The finalisation flow (SPEC §4, §6, §7): the tournaments service finalises and calls no
other app; the flow adds the champion's title qualification, the audit (after commit) and
the webhook in the same transaction, and a failure on the titles side leaves the event
unfinalised."""

from datetime import date
from typing import Any

import pytest

from accounts.models import User
from flows import finalisation
from flows.finalisation import event_finalise
from integrity.tasks import audit_event_task
from tests.tournaments.factories import AFTER
from tests.tournaments.test_finalise import _field, _final_and_monthly
from titles.models import Qualification
from tournaments.models import Event, EventStatus
from tournaments.services import finalise

pytestmark = pytest.mark.django_db


def test_the_flow_records_the_champions_qualification_and_queues_the_audit(
    organiser: User, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    weekly, monthly = _final_and_monthly()
    finalise.event_finalise(event=weekly, by=None, now=AFTER)
    players = _field(monthly)
    queued: list[int] = []
    monkeypatch.setattr(audit_event_task, "delay", queued.append)

    with django_capture_on_commit_callbacks(execute=True):
        result = event_finalise(event=monthly, by=organiser, now=AFTER)

    assert (result.changed, result.champion) == (True, players["a1"])
    qualification = Qualification.objects.get()
    assert (qualification.player, qualification.source, qualification.on) == (
        players["a1"],
        "event:2021-02-M:champion",
        date(2021, 2, 16),
    )
    assert (qualification.status, qualification.evidence["score"]) == ("pending", 60)
    assert queued == [monthly.pk]

    with django_capture_on_commit_callbacks(execute=True) as again:
        assert event_finalise(event=monthly, by=organiser, now=AFTER).changed is False
    assert (again, queued, Qualification.objects.count()) == ([], [monthly.pk], 1)


def test_the_tournaments_service_alone_touches_no_other_app(
    django_capture_on_commit_callbacks: Any,
) -> None:
    weekly, monthly = _final_and_monthly()
    finalise.event_finalise(event=weekly, by=None, now=AFTER)
    players = _field(monthly)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = finalise.event_finalise(event=monthly, by=None, now=AFTER)

    assert (result.changed, result.champion) == (True, players["a1"])
    assert (callbacks, Qualification.objects.count()) == ([], 0)


def test_a_failure_on_the_titles_side_leaves_the_event_unfinalised(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    weekly, monthly = _final_and_monthly()
    finalise.event_finalise(event=weekly, by=None, now=AFTER)
    _field(monthly)

    def broken(**kwargs: Any) -> None:
        raise RuntimeError("titles down")

    monkeypatch.setattr(finalisation, "achievement_record", broken)
    with (
        django_capture_on_commit_callbacks(execute=False) as callbacks,
        pytest.raises(RuntimeError, match="titles down"),
    ):
        event_finalise(event=monthly, by=None, now=AFTER)

    monthly = Event.objects.get(pk=monthly.pk)
    assert (monthly.status, monthly.champion, monthly.finalised_at) == (
        EventStatus.SCHEDULED,
        None,
        None,
    )
    assert (callbacks, Qualification.objects.count()) == ([], 0)
