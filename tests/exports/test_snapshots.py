"""Monthly registry snapshots: kept once per month (idempotent job), listed and downloadable."""

import csv
import io
import json
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from exports.models import RegistrySnapshot
from exports.services import registry_snapshot_take
from exports.tasks import snapshot_registry
from flows import grants
from tests.tournaments.factories import local
from tests.web.tour import Tour

pytestmark = pytest.mark.django_db


def test_the_job_runs_on_the_first_of_each_month() -> None:
    entry = settings.CELERY_BEAT_SCHEDULE["exports-snapshot-registry"]
    assert entry["task"] == "exports.snapshot_registry"
    schedule = entry["schedule"]
    assert (schedule.day_of_month, schedule.hour, schedule.minute) == ({1}, {0}, {45})


def test_one_snapshot_per_month(tour: Tour, monkeypatch: pytest.MonkeyPatch) -> None:
    assert snapshot_registry.delay().get() == 1
    snapshot = RegistrySnapshot.objects.get()
    assert (snapshot.month, str(snapshot.taken_on), snapshot.count) == ("2021-02", "2021-02-08", 2)
    assert [(row["player"], row["status"]) for row in snapshot.rows] == [
        ("p0000001", "master"),
        ("p0000008", "lifetime"),
    ]
    grants.qualification_approve(
        qualification=tour.pending, by=tour.reviewer, reason="ok", expected_version=1
    )
    assert snapshot_registry.delay().get() == 0
    again, written = registry_snapshot_take()
    assert (again.pk, written) == (snapshot.pk, False)
    assert RegistrySnapshot.objects.get().rows == snapshot.rows

    monkeypatch.setattr(timezone, "now", lambda: local(2021, 3, 1, 0, 45))
    assert snapshot_registry.delay().get() == 1
    march = RegistrySnapshot.objects.get(month="2021-03")
    assert [row["player"] for row in march.rows] == ["p0000001", "p0000003", "p0000008"]
    assert RegistrySnapshot.objects.count() == 2


def test_snapshots_page_and_downloads(tour: Tour) -> None:
    registry_snapshot_take()
    client = Client()
    html = client.get("/exports/snapshots/").content.decode()
    assert '<td class="date">2021-02</td>' in html
    assert 'href="/exports/snapshots/2021-02.csv"' in html
    assert 'href="/exports/snapshots/2021-02.json"' in html

    response = client.get("/exports/snapshots/2021-02.csv")
    assert response["Content-Disposition"] == 'attachment; filename="masters-2021-02.csv"'
    assert response.streaming
    text = response.getvalue().decode()
    assert text.startswith("\ufeffplayer,name,province,status,valid_until,lifetime_since,code\r\n")
    rows = list(csv.DictReader(io.StringIO(text[1:])))
    assert [(row["name"], row["valid_until"]) for row in rows] == [
        ("小猴子", "2022-02-02"),
        ("黄丽", "2021-06-01"),
    ]
    response = client.get("/exports/snapshots/2021-02.json")
    assert response.streaming
    data: dict[str, Any] = json.loads(response.getvalue())
    assert {key: data[key] for key in ("month", "taken_on", "count")} == {
        "month": "2021-02",
        "taken_on": "2021-02-08",
        "count": 2,
    }
    assert data["rows"] == RegistrySnapshot.objects.get().rows
