"""Seated events (live finals, championships): seat rounds, enter table results, keep the
standings (SPEC §4 "Seated events").

* **Seating** (``seated_round_create``): the field is the event's entrants. Round 1 is a
  random draw from a seed; every later round groups players of similar standing (points so
  far) while minimising repeat meetings — both by ``tournaments.domain.seating.seat_round``.
  The seed is stored on the round (``SeatedRound.seed``; drawn at random when the organiser
  gives none), so ``tournaments.selectors.seated.seated_round_replay`` reproduces any round
  from the seed, the earlier rounds' tables and their results. A round is seated only when
  every table of the round before has its result.
* **Results** (``seated_result_enter``): the organiser gives each player's place at the
  table, 1 = best, equal places for a tie in competition style (1, 1, 3, 4). Points come from
  the season's placement points for the table's size; tied players share the points of the
  places they occupy, the average rounded down (``placement_points``). A result may be
  re-entered until the next round is seated (its seating depended on it).
* **Standings** of a seated event: games = tables played, total = placement points, best =
  the best table, reached_at = when the last result counted was entered; every player who has
  played a table is ranked (``SEATED_MINIMUM_TABLES``), in the season's tie-break order. The
  event is finalised like any other (``event_finalise``).
* **Formats** (``SeatedRound.format``): a round is one game per table (places entered as
  above) unless the organiser seats it as a **match** (``match=MatchFormat(scoring,
  target)``: cumulative or elimination, SPEC §4 "Matches at one table"). A match table's
  games are entered one by one (``tournaments.services.table_games``); once the match is
  decided its placements are written through the same result path (``result_write``:
  places → placement points → standings), never typed in. A **rotating-partners** event's
  rounds are all seated at once by its schedule (``tournaments.services.teams``); its
  standings are the players' individual totals game by game (``games`` = games played,
  ``best`` = the best single game), not placement points.
"""

import secrets
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from tournaments.domain.leaderboard import standing_from_scores
from tournaments.domain.matches import MatchFormat
from tournaments.domain.seating import placement_points, seat_round
from tournaments.models import (
    Entry,
    Event,
    EventStatus,
    SeatedRound,
    SeatedTable,
    Standing,
    TableGameHand,
    TableSeat,
)
from tournaments.selectors.events import SEATED_MINIMUM_TABLES

SEED_BITS = 62


def _closed_says(what: str, cancelled: bool) -> str:
    """Why a write (``what``, as the API's message names it) is refused on a finalised or
    cancelled event, for people: a whole sentence per write, so each translates whole."""
    if cancelled:
        return {
            "seat a round": _("赛事 %(code)s 已取消，不能排轮次。"),
            "seat a team schedule": _("赛事 %(code)s 已取消，不能排轮换搭档赛程。"),
            "enter results": _("赛事 %(code)s 已取消，不能录入桌次成绩。"),
            "enter games": _("赛事 %(code)s 已取消，不能录入对局。"),
            "correct games": _("赛事 %(code)s 已取消，不能更正对局。"),
        }.get(what, _("赛事 %(code)s 已取消，不能更改。"))
    return {
        "seat a round": _("赛事 %(code)s 已定结果，不能再排轮次。"),
        "seat a team schedule": _("赛事 %(code)s 已定结果，不能再排轮换搭档赛程。"),
        "enter results": _("赛事 %(code)s 已定结果，桌次成绩不能再录入或更改。"),
        "enter games": _("赛事 %(code)s 已定结果，不能再录入对局。"),
        "correct games": _("赛事 %(code)s 已定结果，对局不能再更正。"),
    }.get(what, _("赛事 %(code)s 已定结果，不能再更改。"))


def locked_seated(event_id: int, what: str) -> Event:
    """The seated event, locked for a write; refused when it is not seated or not scheduled."""
    event = Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event_id)
    if event.format != Event.Format.SEATED:
        raise ServiceError(
            f"event {event.code} is not a seated event",
            say=_("赛事 %(code)s 不是现场决赛，没有座位和桌次。") % {"code": event.code},
        )
    if event.status != EventStatus.SCHEDULED:
        cancelled = event.status == EventStatus.CANCELLED
        raise ConflictError(
            f"event {event.code} is {event.status}; cannot {what}",
            say=_closed_says(what, cancelled) % {"code": event.code},
        )
    return event


def round_history(event: Event, before: int) -> list[tuple[str, ...]]:
    """The tables (external ids in seat order) of the event's rounds numbered below ``before``."""
    tables: dict[int, list[str]] = defaultdict(list)
    for table_id, key in (
        TableSeat.objects.filter(table__round__event=event, table__round__number__lt=before)
        .order_by("table__round__number", "table__number", "seat")
        .values_list("table_id", "player__external_id")
    ):
        tables[table_id].append(key)
    return [tuple(players) for players in tables.values()]


def points_before(event: Event, before: int, players: Iterable[str]) -> dict[str, float]:
    """Placement points of each player over the rounds numbered below ``before``."""
    totals = dict.fromkeys(players, 0.0)
    for key, points in (
        TableSeat.objects.filter(
            table__round__event=event, table__round__number__lt=before, points__isnull=False
        )
        .values("player__external_id")
        .annotate(points=Sum("points"))
        .values_list("player__external_id", "points")
    ):
        if key in totals and points is not None:
            totals[key] = float(points)
    return totals


def round_format_words(seated_round: SeatedRound) -> str:
    """How a round is played, in words for a message: "a cumulative match to 500"."""
    if seated_round.format == SeatedRound.Format.GAME:
        return "one game a table"
    if seated_round.format == SeatedRound.Format.PARTNERS:
        return f"rotating partners, {seated_round.games} games a table"
    article = "an" if seated_round.format == SeatedRound.Format.ELIMINATION else "a"
    return f"{article} {seated_round.format} match to {seated_round.target}"


def round_format_says(seated_round: SeatedRound) -> str:
    """How a round is played, for people (the console's words): "累积法比赛（目标 500 分）"."""
    if seated_round.format == SeatedRound.Format.GAME:
        return _("单局（每桌一局，录入名次）")
    if seated_round.format == SeatedRound.Format.PARTNERS:
        return _("轮换搭档（每桌 %(games)s 局）") % {"games": seated_round.games}
    if seated_round.format == SeatedRound.Format.ELIMINATION:
        return _("淘汰法比赛（%(target)s 分出局）") % {"target": seated_round.target}
    return _("累积法比赛（目标 %(target)s 分）") % {"target": seated_round.target}


def seed_refuse(seed: int | None) -> None:
    """Refuse a draw seed outside 0 … 2^63 - 1 (a round's seed is a signed 64-bit column)."""
    if seed is not None and not 0 <= seed < 2**63:
        raise ServiceError(
            "seed must be an integer from 0 to 2^63 - 1",
            detail={"seed": seed},
            say=_("抽签种子须为 0 到 2^63 - 1 之间的整数，填的是 %(seed)s。") % {"seed": seed},
        )


def is_partners_event(event: Event) -> bool:
    """Whether the event is a rotating-partners team event (its rounds are partners rounds)."""
    return SeatedRound.objects.filter(event=event, format=SeatedRound.Format.PARTNERS).exists()


def seated_round_create(
    *,
    event: Event,
    by: User | None,
    seed: int | None = None,
    match: MatchFormat | None = None,
) -> SeatedRound:
    """Seat the next round of a seated event from ``seed`` (random when not given); with
    ``match`` every table plays a match of that scoring and target, else one game."""
    seed_refuse(seed)
    with transaction.atomic():
        locked = locked_seated(event.pk, "seat a round")
        if is_partners_event(locked):
            raise ConflictError(
                f"event {locked.code} is a rotating-partners event: its schedule seated all "
                "its rounds",
                say=_("赛事 %(code)s 是轮换搭档赛事：赛程已排好全部轮次，不再另排下一轮。")
                % {"code": locked.code},
            )
        last = SeatedRound.objects.filter(event=locked).order_by("-number").first()
        number = 1 if last is None else last.number + 1
        if last is not None:
            open_tables = list(
                last.tables.filter(result_entered_at__isnull=True)
                .order_by("number")
                .values_list("number", flat=True)
            )
            if open_tables:
                raise ConflictError(
                    f"round {last.number} has tables without a result: "
                    f"{', '.join(map(str, open_tables))}",
                    detail={"tables": open_tables},
                    say=_("第 %(n)s 轮还有桌次没有成绩：%(tables)s 号桌；录完才能排下一轮。")
                    % {"n": last.number, "tables": "、".join(map(str, open_tables))},
                )
        players = dict(
            Entry.objects.filter(event=locked).values_list("player__external_id", "player_id")
        )
        if len(players) < 3:
            raise ServiceError(
                f"event {locked.code} has {len(players)} entrants; a table needs at least 3",
                say=_("赛事 %(code)s 只有 %(n)s 名参赛选手，一桌至少要 3 人。")
                % {"code": locked.code, "n": len(players)},
            )
        chosen = secrets.randbits(SEED_BITS) if seed is None else seed
        tables = seat_round(
            sorted(players),
            round_no=number,
            seed=chosen,
            standings=None if number == 1 else points_before(locked, number, players),
            history=round_history(locked, number),
        )
        seated = SeatedRound.objects.create(
            event=locked,
            number=number,
            seed=chosen,
            format=SeatedRound.Format.GAME if match is None else match.scoring,
            target=None if match is None else match.target,
            created_by=by,
        )
        rows = SeatedTable.objects.bulk_create(
            [SeatedTable(round=seated, number=i) for i in range(1, len(tables) + 1)]
        )
        TableSeat.objects.bulk_create(
            [
                TableSeat(table=row, player_id=players[key], seat=position)
                for row, table in zip(rows, tables, strict=True)
                for position, key in enumerate(table, start=1)
            ]
        )
    return seated


def _checked_places(places: Mapping[str, int], players: Sequence[str]) -> dict[str, int]:
    if set(places) != set(players):
        raise ServiceError(
            f"give a place for exactly the table's players: {', '.join(players)}",
            detail={"places": sorted(set(places) ^ set(players))},
            say=_("须为本桌的每位选手（且只为他们）各填一个名次：%(players)s。")
            % {"players": "、".join(players)},
        )
    size = len(players)
    for key, place in places.items():
        if isinstance(place, bool) or not isinstance(place, int) or not 1 <= place <= size:
            raise ServiceError(
                f"{key}: place must be 1 to {size}, got {place!r}",
                detail={"places": key},
                say=_("%(player)s：名次须为 1 到 %(size)s，填的是 %(place)s。")
                % {"player": key, "size": size, "place": place},
            )
        expected = 1 + sum(1 for other in places.values() if other < place)
        if place != expected:
            raise ServiceError(
                f"{key}: place {place} does not follow the others (a tie shares a place and "
                f"skips the next: 1, 1, 3, 4); expected {expected}",
                detail={"places": key},
                say=_(
                    "%(player)s：名次 %(place)s 与其他名次接不上（并列者名次相同，并跳过下一个"
                    "名次：1、1、3、4），应为 %(expected)s。"
                )
                % {"player": key, "place": place, "expected": expected},
            )
    return dict(places)


def seated_result_enter(
    *, table: SeatedTable, places: Mapping[str, int], by: User | None
) -> SeatedTable:
    """Enter (or re-enter, until the next round is seated) one table's result."""
    seated_round = SeatedRound.objects.get(pk=table.round_id)
    with transaction.atomic():
        event = locked_seated(seated_round.event_id, "enter results")
        locked = SeatedTable.objects.select_for_update().get(pk=table.pk)
        if seated_round.format != SeatedRound.Format.GAME:
            raise ConflictError(
                f"round {seated_round.number} is played as {round_format_words(seated_round)}: "
                "its tables' results follow from their games; enter the games",
                detail={"format": seated_round.format},
                say=_("第 %(n)s 轮的赛制是%(format)s：各桌成绩由每局结果得出，请逐局录入。")
                % {"n": seated_round.number, "format": round_format_says(seated_round)},
            )
        next_round_refuse(event, seated_round, "results")
        seats = list(locked.seats.select_related("player").order_by("seat"))
        result_write(event, locked, seats, places, by)
    return locked


def next_round_refuse(event: Event, seated_round: SeatedRound, what: str) -> None:
    """Refuse a change to a round's ``what`` ("results", "games") once the next round is
    seated (its seating used it)."""
    if SeatedRound.objects.filter(event=event, number__gt=seated_round.number).exists():
        say = (
            _("第 %(next)s 轮已经排座，第 %(n)s 轮的对局不能再更正。")
            if what == "games"
            else _("第 %(next)s 轮已经排座，第 %(n)s 轮的桌次成绩不能再改。")
        )
        raise ConflictError(
            f"round {seated_round.number + 1} is already seated; round "
            f"{seated_round.number}'s {what} can no longer change",
            say=say % {"next": seated_round.number + 1, "n": seated_round.number},
        )


def result_write(
    event: Event,
    table: SeatedTable,
    seats: Sequence[TableSeat],
    places: Mapping[str, int],
    by: User | None,
) -> None:
    """Write a table's places and placement points and recompute its players' standings
    (the caller's transaction, the event and the table locked)."""
    keys = [seat.player.external_id for seat in seats]
    checked = _checked_places(places, keys)
    table_points = {
        int(size): tuple(points) for size, points in event.rule("placement_points").items()
    }
    try:
        awarded = placement_points(checked, points=table_points)
    except ValueError as exc:
        raise ServiceError(
            str(exc),
            say=_("本赛季的名次积分没有 %(size)s 人一桌的设置。") % {"size": len(checked)},
        ) from None
    for seat in seats:
        seat.place = checked[seat.player.external_id]
        seat.points = awarded[seat.player.external_id]
    TableSeat.objects.bulk_update(seats, ["place", "points"])
    table.result_entered_at = timezone.now()
    table.result_entered_by = by
    table.save(update_fields=["result_entered_at", "result_entered_by"])
    seated_standings_recompute(event=event, player_ids=[seat.player_id for seat in seats])


def result_clear(event: Event, table: SeatedTable, seats: Sequence[TableSeat]) -> None:
    """Take a table's result back (a corrected match no longer decided; caller's
    transaction, the event and the table locked) and recompute its players' standings."""
    for seat in seats:
        seat.place = seat.points = None
    TableSeat.objects.bulk_update(seats, ["place", "points"])
    table.result_entered_at = None
    table.result_entered_by = None
    table.save(update_fields=["result_entered_at", "result_entered_by"])
    seated_standings_recompute(event=event, player_ids=[seat.player_id for seat in seats])


def seated_standings_recompute(*, event: Event, player_ids: Iterable[int]) -> int:
    """Rebuild the standings of these players from their table results (caller's
    transaction); returns the number of standings written."""
    ids = sorted(set(player_ids))
    if not ids:
        return 0
    players = Player.objects.in_bulk(ids)
    Standing.objects.bulk_create(
        [
            Standing(event=event, player_id=pk, player_key=p.external_id, province=p.province)
            for pk, p in sorted(players.items())
        ],
        ignore_conflicts=True,
    )
    rows = list(
        Standing.objects.select_for_update()
        .filter(event=event, player_id__in=ids)
        .order_by("player_id")
    )
    scores: defaultdict[int, list[tuple[int, datetime]]] = defaultdict(list)
    if is_partners_event(event):  # each game's score, at the time it was entered
        for player_id, score, entered_at in TableGameHand.objects.filter(
            game__table__round__event=event, seat__player_id__in=ids
        ).values_list("seat__player_id", "score", "game__entered_at"):
            scores[player_id].append((score, entered_at))
    for player_id, points, at in TableSeat.objects.filter(
        table__round__event=event,
        table__round__format__in=[
            SeatedRound.Format.GAME,
            SeatedRound.Format.CUMULATIVE,
            SeatedRound.Format.ELIMINATION,
        ],
        player_id__in=ids,
        points__isnull=False,
    ).values_list("player_id", "points", "table__result_entered_at"):
        if points is not None and at is not None:  # a table's points come with its entry time
            scores[player_id].append((points, at))
    now = timezone.now()
    for row in rows:
        played = scores[row.player_id]
        kept = standing_from_scores(row.player_key, row.province, played, max(1, len(played)))
        row.games, row.kept, row.total = kept.games, list(kept.kept), kept.total
        row.best, row.reached_at = kept.best, kept.reached_at
        row.eligible = kept.games >= SEATED_MINIMUM_TABLES
        row.updated_at = now
    Standing.objects.bulk_update(
        rows, ["games", "kept", "total", "best", "reached_at", "eligible", "updated_at"]
    )
    Event.objects.filter(pk=event.pk).update(leaderboard_version=F("leaderboard_version") + 1)
    return len(rows)
