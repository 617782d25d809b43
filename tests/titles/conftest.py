"""Fixtures for the titles tests: players, a frozen tour day, grants through the services."""

from collections.abc import Callable
from datetime import date, datetime, time
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Player, User
from core.domain.clock import TOUR_TZ
from flows import grants
from titles import services
from titles.models import Qualification


@pytest.fixture
def freeze(monkeypatch: pytest.MonkeyPatch) -> Callable[[date], None]:
    """``freeze(day)``: from now on it is noon of ``day`` in Asia/Shanghai."""

    def set_day(day: date) -> None:
        moment = datetime.combine(day, time(12), tzinfo=TOUR_TZ)
        monkeypatch.setattr(timezone, "now", lambda: moment)

    return set_day


@pytest.fixture
def make_player(db: Any) -> Callable[..., Player]:
    counter = iter(range(1, 10_000))

    def make(name: str = "", province: str = "江苏", email: str = "") -> Player:
        n = next(counter)
        user = None
        if email:
            user = User.objects.create_user(username=f"player{n}", email=email)
        return Player.objects.create(
            external_id=f"p{n:07d}", name=name or f"玩家{n}", province=province, user=user
        )

    return make


@pytest.fixture
def player(make_player: Callable[..., Player]) -> Player:
    return make_player(name="小猴子")


@pytest.fixture
def record(db: Any) -> Callable[..., Qualification]:
    """Record a pending qualification through ``achievement_record``."""

    def make(
        player: Player, source: str, on: date, achievement: str = "monthly_champion"
    ) -> Qualification:
        qualification = services.achievement_record(
            achievement=achievement,
            player=player,
            on=on,
            source=source,
            evidence={"event": source, "rank": 1, "score": 1234, "games": 15},
            by=None,
        )
        assert qualification is not None
        return qualification

    return make


@pytest.fixture
def grant(record: Callable[..., Qualification], reviewer: User) -> Callable[..., Qualification]:
    """Record and approve a qualification (a reviewer's decision)."""

    def make(
        player: Player, source: str, on: date, achievement: str = "monthly_champion"
    ) -> Qualification:
        qualification = record(player, source, on, achievement)
        return grants.qualification_approve(
            qualification=qualification,
            by=reviewer,
            reason="evidence checked",
            expected_version=qualification.version,
        )

    return make
