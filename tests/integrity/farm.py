"""A farm in the monthly final 2021-02-M of
:func:`~tests.tournaments.factories.monthly_and_quarterly`: ``b`` and her helper ``h``
share one device and sit together in 15 games that ``b`` wins while ``h`` holds 100
points; ``a2`` wins 15 honest games by small margins against ``a5``, ``a3`` and ``a4``.
``b`` is the champion; without ``b``'s games ``a2`` is. Every game is written by
:func:`tests.integrity.conftest.play`, with the sessions the audit reads."""

from collections.abc import Mapping
from datetime import timedelta

from accounts.models import Player
from tests.integrity.conftest import play
from tests.tournaments.factories import local, monthly_and_quarterly
from tournaments.models import Event

#: The farm's players: external id -> (name, province).
PEOPLE: dict[str, tuple[str, str]] = {
    "b": ("B", "江苏"),
    "h": ("H", "江苏"),
    "a2": ("A2", "浙江"),
    "a3": ("A3", "广东"),
    "a4": ("A4", "北京"),
    "a5": ("A5", "上海"),
}


def farm_games(monthly: Event, p: Mapping[str, Player]) -> None:
    """The 30 games of the module docstring, two every four minutes from 10:09."""
    moment = local(2021, 2, 16, 10, 5)
    small = (["R1"], ["R2"], ["R3"])
    for i in range(15):
        moment += timedelta(minutes=4)
        play(
            monthly,
            [
                (p["b"], [], "198.51.100.7", "d-farm"),
                (p["h"], ["WD4", "W"], "198.51.100.8", "d-farm"),
                (p["a3"], ["R5"], "203.0.113.3", "d-a3"),
                (p["a4"], ["G7"], "203.0.113.4", "d-a4"),
            ],
            ended_at=moment,
        )
        play(
            monthly,
            [
                (p["a2"], [], "203.0.113.2", "d-a2"),
                (p["a5"], small[i % 3], "203.0.113.5", "d-a5"),
                (p["a3"], small[(i + 1) % 3], "203.0.113.3", "d-a3"),
                (p["a4"], small[(i + 2) % 3], "203.0.113.4", "d-a4"),
            ],
            ended_at=moment + timedelta(seconds=30),
        )


def monthly_with_a_farm(
    people: Mapping[str, tuple[str, str]] = PEOPLE,
) -> tuple[Event, Event, dict[str, Player]]:
    """The monthly final with the farm's games (not finalised), the quarterly it feeds, and
    the players (``people``: external id -> (name, province))."""
    monthly, quarterly = monthly_and_quarterly()
    players = {
        key: Player.objects.create(external_id=key, name=name, province=province)
        for key, (name, province) in people.items()
    }
    farm_games(monthly, players)
    return monthly, quarterly, players
