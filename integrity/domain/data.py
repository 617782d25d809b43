"""The observations the integrity detectors read (SPEC §7: per game, the players and seats,
each player's account session — IP address, device fingerprint — and timestamps).

Plain, immutable records, so the detectors stay pure and are tested with stand-in data:

* :class:`TableObs` — one game: its id, its hour bucket, the players in seat order, each
  seat's hand points at the end, each seat's game score, the winning seats and, when read,
  the number of cards each seat kept (empty when not).
* :class:`SessionObs` — one seat's session: game id, player, IP (``""`` when unknown),
  device fingerprint (``""`` when unknown), hour bucket.

An **hour bucket** is the number of whole hours since 1970-01-01 00:00 on the tour's
clock, Asia/Shanghai (:data:`core.domain.clock.TOUR_TZ`; :func:`hour_bucket`), so
``bucket % 24`` is the local hour of play. The audit computes it in PostgreSQL
(:mod:`integrity.sql`) with the same definition.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Final, NamedTuple

from core.domain.clock import TOUR_TZ

__all__ = ["SessionObs", "TableObs", "hour_bucket", "partners_of", "trusted_table"]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=TOUR_TZ)


def hour_bucket(moment: datetime) -> int:
    """Return the hour bucket of an aware datetime: hours since 1970-01-01 00:00 Shanghai."""
    if moment.tzinfo is None:
        raise ValueError("hour_bucket needs an aware datetime")
    local = moment.astimezone(TOUR_TZ)
    return int((local.replace(tzinfo=None) - _EPOCH.replace(tzinfo=None)).total_seconds()) // 3600


class _TableFields(NamedTuple):
    game_id: str
    hour: int
    players: tuple[str, ...]
    hands: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    cards: tuple[int, ...] = ()


class TableObs(_TableFields):
    """One game as the detectors see it; every per-seat tuple is in seat order.

    A named tuple whose constructor checks the game (>= 2 distinct players, a hand and a
    score per seat, winners among the seats): an audit builds one per game, and
    :func:`trusted_table` builds one from rows that already hold these, without the checks.
    """

    __slots__ = ()

    def __new__(
        cls,
        game_id: str,
        hour: int,
        players: tuple[str, ...],
        hands: tuple[int, ...],
        scores: tuple[int, ...],
        winners: tuple[int, ...],
        cards: tuple[int, ...] = (),
    ) -> TableObs:
        seats = len(players)
        if seats < 2 or len(set(players)) != seats:
            raise ValueError(f"{game_id}: need >= 2 distinct players, got {players}")
        if len(hands) != seats or len(scores) != seats:
            raise ValueError(f"{game_id}: hands and scores need one entry per seat")
        if not winners or any(not 0 <= w < seats for w in winners):
            raise ValueError(f"{game_id}: bad winner seats {winners}")
        if cards and len(cards) != seats:
            raise ValueError(f"{game_id}: cards need one entry per seat, or none")
        return tuple.__new__(cls, (game_id, hour, players, hands, scores, winners, cards))


def partners_of(pairs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """Each player's partners in ``pairs`` (who queues with whom, both ways)."""
    partners: dict[str, set[str]] = {}
    for a, b in pairs:
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    return {player: frozenset(others) for player, others in partners.items()}


def trusted_table(
    fields: tuple[
        str,
        int,
        tuple[str, ...],
        tuple[int, ...],
        tuple[int, ...],
        tuple[int, ...],
        tuple[int, ...],
    ],
) -> TableObs:
    """A :class:`TableObs` from ``(game id, hour, players, hands, scores, winners, cards)``
    known to be a valid game (the database's seats: one per player and game), without the
    checks."""
    return tuple.__new__(TableObs, fields)


class SessionObs(NamedTuple):
    """One seat's account session in one game (a named tuple: an audit makes one per seat,
    and a tuple is built several times faster than a frozen dataclass)."""

    game_id: str
    player: str
    ip: str
    device: str
    hour: int
