"""The players of ingested games (SPEC §9 player block, §5 provinces).

Players unknown so far are created from the record's player block. A changed name or
province is updated and logged (``accounts.PlayerChange``, reason ``"ingest <record id>"``),
from the block of the player's latest game in the batch, unless the player has a stored game
that ended later (a late game carries an old block and must not undo a newer one). Runs in
the batch's write transaction; a changed player's row is locked (by pk) before it is written.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Max

from accounts.models import Player, PlayerChange, User
from tournaments.models import Seat
from tournaments.services.ingest_validation import CheckedGame

CHUNK = 10_000  # keys per IN (...) query


def chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _players_by_key(keys: Sequence[str]) -> dict[str, tuple[int, str, str]]:
    found: dict[str, tuple[int, str, str]] = {}
    for chunk in chunks(keys, CHUNK):
        for pk, key, name, province in Player.objects.filter(external_id__in=chunk).values_list(
            "pk", "external_id", "name", "province"
        ):
            found[key] = (pk, name, province)
    return found


def players_upsert(games: Sequence[CheckedGame], by: User | None, now: datetime) -> dict[str, int]:
    """Create unknown players, update changed ones; return key -> player pk."""
    latest: dict[str, tuple[datetime, str, str, str]] = {}
    for game in games:
        for seat in game.seats:
            seen = latest.get(seat.player_key)
            if seen is None or game.ended_at >= seen[0]:
                latest[seat.player_key] = (game.ended_at, seat.name, seat.province, game.record_id)
    keys = sorted(latest)
    known = _players_by_key(keys)
    missing = [key for key in keys if key not in known]
    if missing:
        Player.objects.bulk_create(
            [
                Player(
                    external_id=key,
                    name=latest[key][1],
                    province=latest[key][2],
                    created_at=now,
                    updated_at=now,
                )
                for key in missing
            ],
            ignore_conflicts=True,
        )
        known.update(_players_by_key(missing))
    changed = [key for key in keys if known[key][1:] != latest[key][1:3]]
    if changed:
        _players_update(changed, latest, known, by, now)
    return {key: pk for key, (pk, _, _) in known.items()}


def _players_update(
    keys: Sequence[str],
    latest: dict[str, tuple[datetime, str, str, str]],
    known: dict[str, tuple[int, str, str]],
    by: User | None,
    now: datetime,
) -> None:
    pks = sorted(known[key][0] for key in keys)
    last_game = dict(
        Seat.objects.filter(player_id__in=pks)
        .values("player_id")
        .annotate(last=Max("ended_at"))
        .values_list("player_id", "last")
    )
    changes: list[PlayerChange] = []
    for player in Player.objects.select_for_update().filter(pk__in=pks).order_by("pk"):
        ended_at, name, province, record_id = latest[player.external_id]
        stored_last = last_game.get(player.pk)
        if stored_last is not None and ended_at < stored_last:
            continue  # an older game's block: the stored one is newer
        fields = []
        for attr, new in (("name", name), ("province", province)):
            old = getattr(player, attr)
            if old != new:
                changes.append(
                    PlayerChange(
                        player=player,
                        field=attr,
                        old=old,
                        new=new,
                        at=now,
                        by=by,
                        reason=f"ingest {record_id}",
                    )
                )
                setattr(player, attr, new)
                fields.append(attr)
        if fields:
            player.updated_at = now
            player.save(update_fields=[*fields, "updated_at"])
        known[player.external_id] = (player.pk, player.name, player.province)
    PlayerChange.objects.bulk_create(changes)
