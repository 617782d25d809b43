"""The observations the integrity detectors read (SPEC §7: per game, the players and seats,
each player's account session — IP address, device fingerprint — and timestamps).

Plain, immutable records, so the detectors stay pure and are tested with stand-in data:

* :class:`TableObs` — one game: its id, its hour bucket, the players in seat order, each
  seat's hand points at the end, each seat's game score, and the winning seats.
* :class:`SessionObs` — one seat's session: game id, player, IP (``""`` when unknown),
  device fingerprint (``""`` when unknown), hour bucket.

An **hour bucket** is the number of whole hours since 1970-01-01 00:00 on the tour's
clock, Asia/Shanghai (:func:`hour_bucket`), so ``bucket % 24`` is the local hour of play.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final, NamedTuple
from zoneinfo import ZoneInfo

__all__ = ["TOUR_TZ", "SessionObs", "TableObs", "hour_bucket"]

TOUR_TZ: Final = ZoneInfo("Asia/Shanghai")

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=TOUR_TZ)


def hour_bucket(moment: datetime) -> int:
    """Return the hour bucket of an aware datetime: hours since 1970-01-01 00:00 Shanghai."""
    if moment.tzinfo is None:
        raise ValueError("hour_bucket needs an aware datetime")
    local = moment.astimezone(TOUR_TZ)
    return int((local.replace(tzinfo=None) - _EPOCH.replace(tzinfo=None)).total_seconds()) // 3600


@dataclass(frozen=True, slots=True)
class TableObs:
    """One game as the detectors see it; every per-seat tuple is in seat order."""

    game_id: str
    hour: int
    players: tuple[str, ...]
    hands: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]

    def __post_init__(self) -> None:
        seats = len(self.players)
        if seats < 2 or len(set(self.players)) != seats:
            raise ValueError(f"{self.game_id}: need >= 2 distinct players, got {self.players}")
        if len(self.hands) != seats or len(self.scores) != seats:
            raise ValueError(f"{self.game_id}: hands and scores need one entry per seat")
        if not self.winners or any(not 0 <= w < seats for w in self.winners):
            raise ValueError(f"{self.game_id}: bad winner seats {self.winners}")


class SessionObs(NamedTuple):
    """One seat's account session in one game (a named tuple: an audit makes one per seat,
    and a tuple is built several times faster than a frozen dataclass)."""

    game_id: str
    player: str
    ip: str
    device: str
    hour: int
