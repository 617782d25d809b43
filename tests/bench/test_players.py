"""The bench stages delete their players in SQL: the rows pointing at them go first."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection

from accounts.models import Player, PlayerChange
from bench.players import delete_bench_players
from notices.models import Notice, NoticeDelivery

pytestmark = pytest.mark.django_db


def test_delete_bench_players_clears_their_notices_and_rows() -> None:
    bench = Player.objects.create(external_id="bench-x-1", name="甲", province="北京")
    kept = Player.objects.create(external_id="other-1", name="乙", province="上海")
    for number, player in enumerate((bench, kept)):
        notice = Notice.objects.create(
            key=f"k{number}", player=player, kind="advanced", on=date(2026, 1, 5)
        )
        NoticeDelivery.objects.create(notice=notice, channel="email", email="a@example.org")
        PlayerChange.objects.create(player=player, field="name", old="x", new="y", reason="t")

    with connection.cursor() as cursor:
        delete_bench_players(cursor, "bench-x-", [PlayerChange])

    assert list(Player.objects.values_list("external_id", flat=True)) == ["other-1"]
    assert list(Notice.objects.values_list("player__external_id", flat=True)) == ["other-1"]
    assert NoticeDelivery.objects.get().notice.player == kept
    assert list(PlayerChange.objects.values_list("player_id", flat=True)) == [kept.pk]
