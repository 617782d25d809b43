"""Games played at a seated table: the games of a **match** (SPEC §4 "Matches at one table
(live finals)") and of a **rotating-partners** round (SPEC §4 "Team events"), entered one by
one as each seat's hand left, and corrected with a reason.

* **Entering** (``table_game_enter``): the organiser gives the game's number and the hand
  left of every player in the game (card codes by external player id). The hands are checked
  against the event's card table (``tournaments.domain.cards``: an unknown card, or a deal
  the deck cannot hold, is refused naming the card and the player) and valued by it. Games
  are numbered 1, 2, … in the order played: the number must be the next one. The same number
  with the same hands again (in any card order) answers the stored game and writes nothing,
  so a re-sent request is harmless; with other hands it is a conflict (correct the game).
* **Match tables** (cumulative / elimination): the games replay through
  ``tournaments.domain.matches.match_state``. A game after the match is decided is refused;
  in an elimination match an eliminated player gives no hand. When a game decides the match,
  its placements are written through the seated result path (``result_write``: the season's
  placement points by table size, ties sharing, then the standings), exactly as if the
  organiser had entered those places.
* **Partners tables**: four seats, teammates opposite, each game scored by tour doubles
  (``tournaments.domain.teams.partners_game_scores``); a table plays its round's ``games``.
  The standings are the players' individual totals, updated after every game
  (``seated_standings_recompute``); when a table's last game is entered its seats also get
  the round's total as ``points`` and their place at the table by it (ties share).
* **Corrections** (``table_game_correct``): one game's hands replaced, with a reason, logged
  as a ``TableGameCorrection`` (who, when, why, the hands before and after). A match's games
  freeze once the next round is seated (its seating used the result), as results do; a
  partners round's schedule does not depend on results, so its games stay correctable until
  the event is finalised. The match is then replayed: its result is rewritten, or taken back
  when the match is no longer decided. A correction that would decide the match before games
  already played, or eliminate a player who played a later game, is refused naming that game
  and player: nothing is rewritten silently.
* Every write is one transaction: the event, then the table, are locked (as in
  ``seated_result_enter``); entries and corrections are also logged to ``unotour.tournaments``
  when they commit.
"""

import logging
from collections.abc import Mapping, Sequence

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from core.errors import ConflictError, ServiceError
from core.logs import log_event_on_commit
from tournaments.domain.cards import CardError, CardTable, hand_points, parse_hand, validate_deal
from tournaments.domain.matches import (
    MATCH_SCORINGS,
    MatchError,
    MatchState,
    competition_places,
    game_additions,
    match_state,
)
from tournaments.domain.teams import partners_game_scores
from tournaments.models import (
    Event,
    SeatedRound,
    SeatedTable,
    TableGame,
    TableGameCorrection,
    TableGameHand,
    TableSeat,
)
from tournaments.services.hand_refusals import hand_refusal
from tournaments.services.seated import (
    locked_seated,
    next_round_refuse,
    result_clear,
    result_write,
    round_format_says,
    seated_standings_recompute,
)

logger = logging.getLogger("unotour.tournaments")

Format = SeatedRound.Format


def _table_seats(table: SeatedTable) -> list[TableSeat]:
    return list(table.seats.select_related("player").order_by("seat"))


def _games_points(table: SeatedTable, seats: Sequence[TableSeat]) -> list[list[int | None]]:
    """The hand points of every game of the table, per seat (None: the seat did not play)."""
    index = {seat.pk: i for i, seat in enumerate(seats)}
    games: dict[int, list[int | None]] = {}
    for number, seat_id, points in (
        TableGameHand.objects.filter(game__table=table)
        .order_by("game__number")
        .values_list("game__number", "seat_id", "hand_points")
    ):
        games.setdefault(number, [None] * len(seats))[index[seat_id]] = points
    return [games[number] for number in sorted(games)]


def _match_error(exc: MatchError, seats: Sequence[TableSeat], table: SeatedTable) -> str:
    where = [f"table {table.number}"]
    if exc.game is not None:
        where.append(f"game {exc.game}")
    if exc.seat is not None:
        where.append(seats[exc.seat].player.external_id)
    return f"{', '.join(where)}: {exc.reason}"


def _match_says(
    exc: MatchError,
    seated_round: SeatedRound,
    table: SeatedTable,
    seats: Sequence[TableSeat],
    played: Sequence[Sequence[int | None]],
) -> str:
    """``_match_error`` for people: the match replayed up to the refused game says whether
    the match was already decided or the player already eliminated."""
    facts: dict[str, object] = {"t": table.number, "g": exc.game}
    if exc.game is None or seated_round.target is None:
        return _("%(t)s 号桌的比赛记录有误。") % facts
    try:
        before = match_state(
            seated_round.format, seated_round.target, played[: exc.game - 1], seats=len(seats)
        )
    except MatchError:
        return _("%(t)s 号桌第 %(g)s 局的记录与比赛不符。") % facts
    if exc.seat is None:
        if before.decided_in is None:
            return _("%(t)s 号桌第 %(g)s 局的记录与比赛不符。") % facts
        return _("%(t)s 号桌第 %(g)s 局：比赛已在第 %(decided)s 局决出，之后不能再有对局。") % {
            **facts,
            "decided": before.decided_in,
        }
    facts["player"] = seats[exc.seat].player.external_id
    out = before.eliminated_in[exc.seat]
    if out is None:
        return _("%(t)s 号桌第 %(g)s 局，%(player)s：手牌分数不对。") % facts
    return _("%(t)s 号桌第 %(g)s 局：%(player)s 已在第 %(out)s 局出局，之后各局不能有其手牌。") % {
        **facts,
        "out": out,
    }


def table_match_state(
    seated_round: SeatedRound,
    table: SeatedTable,
    seats: Sequence[TableSeat],
    games: Sequence[Sequence[int | None]] | None = None,
) -> MatchState:
    """The state of a match table after its stored games (or ``games``); a stored game the
    match cannot hold is a conflict naming the game and the player."""
    if seated_round.format not in MATCH_SCORINGS or seated_round.target is None:
        raise ServiceError(
            f"round {seated_round.number} is not played as matches",
            say=_("第 %(n)s 轮不是比赛赛制（累积法或淘汰法），没有比赛进程。")
            % {"n": seated_round.number},
        )
    played = _games_points(table, seats) if games is None else games
    try:
        return match_state(seated_round.format, seated_round.target, played, seats=len(seats))
    except MatchError as exc:
        raise ConflictError(
            _match_error(exc, seats, table),
            detail={"game": exc.game, "seat": exc.seat},
            say=_match_says(exc, seated_round, table, seats, played),
        ) from None


def _checked_hands(
    event: Event,
    table: SeatedTable,
    number: int,
    playing: Sequence[TableSeat],
    seats: Sequence[TableSeat],
    hands: Mapping[str, Sequence[str]],
    eliminated_in: Mapping[str, int],
) -> list[tuple[str, ...]]:
    """The hands of the players in the game, in seat order, checked against the card table."""
    keys = [seat.player.external_id for seat in playing]
    at_table = {seat.player.external_id for seat in seats}
    where = f"table {table.number}, game {number}"
    facts: dict[str, object] = {"t": table.number, "g": number}
    for key in sorted(hands):
        if key in eliminated_in:
            raise ServiceError(
                f"{where}: {key} was eliminated in game {eliminated_in[key]} and plays no "
                "further game; give no hand for them",
                detail={"hands": {key: "eliminated"}},
                say=_(
                    "%(t)s 号桌第 %(g)s 局：%(player)s 已在第 %(out)s 局出局，不再参加之后的"
                    "对局，不要填其手牌。"
                )
                % {**facts, "player": key, "out": eliminated_in[key]},
            )
        if key not in at_table:
            raise ServiceError(
                f"{where}: {key} does not sit at this table (its players: {', '.join(keys)})",
                detail={"hands": {key: "not at this table"}},
                say=_("%(t)s 号桌第 %(g)s 局：%(player)s 不在本桌（本桌选手：%(players)s）。")
                % {**facts, "player": key, "players": "、".join(keys)},
            )
    missing = [key for key in keys if key not in hands]
    if missing:
        raise ServiceError(
            f"{where}: no hand for {', '.join(missing)}; give the hand left of every player "
            "in the game (an empty list for the player who went out)",
            detail={"hands": dict.fromkeys(missing, "required")},
            say=_(
                "%(t)s 号桌第 %(g)s 局：缺少 %(players)s 的手牌；须填本局每位选手剩下的手牌"
                "（出完牌的选手留空）。"
            )
            % {**facts, "players": "、".join(missing)},
        )
    card_table = CardTable.from_dict(event.rule("card_table"))
    try:
        parsed = [parse_hand(hands[key], card_table, seat=i) for i, key in enumerate(keys)]
        validate_deal(parsed, card_table)
    except CardError as exc:
        at = _("%(t)s 号桌第 %(g)s 局") % {"t": table.number, "g": number}
        say = hand_refusal(exc, at, keys, hands, card_table)
        if exc.seat is None:
            raise ServiceError(
                f"{where}: {exc.reason}",
                detail={"hands": exc.reason, "card": str(exc.code)},
                say=say,
            ) from None
        key = keys[exc.seat]
        raise ServiceError(
            f"{where}, {key}: {exc.reason}",
            detail={"hands": {key: exc.reason}, "card": str(exc.code)},
            say=say,
        ) from None
    limit = TableGameHand._meta.get_field("hand").max_length
    for key, hand in zip(keys, parsed, strict=True):
        if limit is not None and len(" ".join(hand)) > limit:
            raise ServiceError(
                f"{where}, {key}: the hand is longer than {limit} characters",
                detail={"hands": {key: "too long"}},
                say=_("%(t)s 号桌第 %(g)s 局，%(player)s：手牌超过 %(limit)s 个字符。")
                % {**facts, "player": key, "limit": limit},
            )
    return parsed


def _valued(
    event: Event,
    seated_round: SeatedRound,
    seats: Sequence[TableSeat],
    playing: Sequence[TableSeat],
    parsed: Sequence[tuple[str, ...]],
) -> dict[int, tuple[str, int, int]]:
    """Per playing seat (by pk): the hand as stored, its points and what the game adds to
    the seat's total (cumulative: points won; elimination: hand points; partners: tour
    doubles)."""
    card_table = CardTable.from_dict(event.rule("card_table"))
    by_seat = {seat.pk: hand for seat, hand in zip(playing, parsed, strict=True)}
    points = [
        hand_points(by_seat[seat.pk], card_table) if seat.pk in by_seat else None for seat in seats
    ]
    if seated_round.format == Format.PARTNERS:
        scores: list[int | None] = list(partners_game_scores([p or 0 for p in points]))
    else:
        scores = game_additions(seated_round.format, points)
    return {
        seat.pk: (" ".join(by_seat[seat.pk]), point, score)
        for seat, point, score in zip(seats, points, scores, strict=True)
        if point is not None and score is not None
    }


def _same_hands(game: TableGame, hands: Mapping[str, Sequence[str]]) -> bool:
    stored = {row.seat.player.external_id: sorted(row.hand.split()) for row in game.hands.all()}
    if any(isinstance(hand, str) for hand in hands.values()):
        return False
    try:
        given = {key: sorted(hand) for key, hand in hands.items()}
    except TypeError:  # not a list of card codes: not the stored hands
        return False
    return stored == given


def _settle(
    event: Event,
    seated_round: SeatedRound,
    table: SeatedTable,
    seats: Sequence[TableSeat],
    by: User | None,
) -> None:
    """Bring the table's result and its players' standings in line with its games."""
    if seated_round.format == Format.PARTNERS:
        totals = [0] * len(seats)
        index = {seat.pk: i for i, seat in enumerate(seats)}
        rows = TableGameHand.objects.filter(game__table=table).values_list("seat_id", "score")
        for seat_id, score in rows:
            totals[index[seat_id]] += score
        played = TableGame.objects.filter(table=table).count()
        if played == seated_round.games:
            ranks = competition_places([(-total,) for total in totals])
            for seat, total, place in zip(seats, totals, ranks, strict=True):
                seat.points, seat.place = total, place
            TableSeat.objects.bulk_update(seats, ["place", "points"])
            table.result_entered_at = timezone.now()
            table.result_entered_by = by
            table.save(update_fields=["result_entered_at", "result_entered_by"])
        seated_standings_recompute(event=event, player_ids=[seat.player_id for seat in seats])
        return
    state = table_match_state(seated_round, table, seats)
    if state.placements is not None:
        places = {
            seat.player.external_id: place
            for seat, place in zip(seats, state.placements, strict=True)
        }
        result_write(event, table, seats, places, by)
    elif table.result_entered_at is not None:
        result_clear(event, table, seats)


def _locked_table(table: SeatedTable, what: str) -> tuple[Event, SeatedRound, SeatedTable]:
    seated_round = SeatedRound.objects.get(pk=table.round_id)
    event = locked_seated(seated_round.event_id, what)
    locked = SeatedTable.objects.select_for_update().get(pk=table.pk)
    if seated_round.format == Format.GAME:
        raise ConflictError(
            f"round {seated_round.number} is played as one game a table: enter its places, "
            "not its games",
            detail={"format": seated_round.format},
            say=_("第 %(n)s 轮的赛制是%(format)s：请录入各桌名次，而不是逐局手牌。")
            % {"n": seated_round.number, "format": round_format_says(seated_round)},
        )
    return event, seated_round, locked


def table_game_enter(
    *,
    table: SeatedTable,
    number: int,
    hands: Mapping[str, Sequence[str]],
    by: User | None,
) -> TableGame:
    """Enter game ``number`` of a match or partners table: each playing seat's hand left
    (card codes by external player id). Idempotent per game number."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ServiceError(
            f"the game number must be 1 or more, got {number!r}",
            say=_("局号须为 1 或更大，填的是 %(number)s。") % {"number": number},
        )
    with transaction.atomic():
        event, seated_round, locked = _locked_table(table, "enter games")
        seats = _table_seats(locked)
        played = TableGame.objects.filter(table=locked).count()
        if number <= played:
            stored = (
                TableGame.objects.prefetch_related("hands__seat__player")
                .filter(table=locked)
                .get(number=number)
            )
            if _same_hands(stored, hands):
                return stored
            raise ConflictError(
                f"table {locked.number}, game {number} is already entered with other hands; "
                "correct it with a reason",
                detail={"number": number},
                say=_("%(t)s 号桌第 %(g)s 局已按另一组手牌录入；如需修改，请写明理由更正该局。")
                % {"t": locked.number, "g": number},
            )
        if number != played + 1:
            raise ServiceError(
                f"table {locked.number}: the next game is game {played + 1}, got {number}",
                detail={"number": number},
                say=_("%(t)s 号桌下一局应是第 %(next)s 局，填的是第 %(g)s 局。")
                % {"t": locked.number, "next": played + 1, "g": number},
            )
        eliminated_in: dict[str, int] = {}
        if seated_round.format == Format.PARTNERS:
            games = seated_round.games or 0
            if number > games:
                raise ConflictError(
                    f"round {seated_round.number} plays {games} games a table; table "
                    f"{locked.number}'s game {number} cannot be entered",
                    detail={"number": number},
                    say=_("第 %(n)s 轮每桌打 %(games)s 局，%(t)s 号桌不能录入第 %(g)s 局。")
                    % {"n": seated_round.number, "games": games, "t": locked.number, "g": number},
                )
            playing = seats
        else:
            state = table_match_state(seated_round, locked, seats)
            if state.finished:
                raise ConflictError(
                    f"table {locked.number}: the match was decided in game {state.decided_in}; "
                    f"game {number} cannot be entered",
                    detail={"number": number},
                    say=_("%(t)s 号桌的比赛已在第 %(decided)s 局决出，不能再录入第 %(g)s 局。")
                    % {"t": locked.number, "decided": state.decided_in, "g": number},
                )
            playing = [seats[i] for i in state.active]
            eliminated_in = {
                seat.player.external_id: out
                for seat, out in zip(seats, state.eliminated_in, strict=True)
                if out is not None
            }
        parsed = _checked_hands(event, locked, number, playing, seats, hands, eliminated_in)
        valued = _valued(event, seated_round, seats, playing, parsed)
        game = TableGame.objects.create(table=locked, number=number, entered_by=by)
        TableGameHand.objects.bulk_create(
            [
                TableGameHand(game=game, seat=seat, hand=hand, hand_points=point, score=score)
                for seat in playing
                for hand, point, score in [valued[seat.pk]]
            ]
        )
        _settle(event, seated_round, locked, seats, by)
        log_event_on_commit(
            logger,
            logging.INFO,
            "table_game_entered",
            event_code=event.code,
            round=seated_round.number,
            table=locked.number,
            game=number,
            by=None if by is None else by.pk,
        )
    return game


def table_game_correct(
    *,
    game: TableGame,
    hands: Mapping[str, Sequence[str]],
    by: User | None,
    reason: str,
) -> TableGameCorrection:
    """Replace one table game's hands, with a reason; the match or round is settled again."""
    if not reason.strip():
        raise ServiceError(
            "give a reason for the correction",
            detail={"reason": "required"},
            say=_("更正须写明理由。"),
        )
    with transaction.atomic():
        table = SeatedTable.objects.get(pk=game.table_id)
        event, seated_round, locked = _locked_table(table, "correct games")
        if seated_round.format != Format.PARTNERS:
            next_round_refuse(event, seated_round, "games")
        seats = _table_seats(locked)
        fixed = TableGame.objects.select_for_update().get(pk=game.pk)
        rows = list(fixed.hands.select_related("seat__player").order_by("seat__seat"))
        playing = [row.seat for row in rows]
        eliminated_in: dict[str, int] = {}
        if seated_round.format != Format.PARTNERS:
            earlier = _games_points(locked, seats)[: fixed.number - 1]
            state = table_match_state(seated_round, locked, seats, earlier)
            eliminated_in = {
                seat.player.external_id: out
                for seat, out in zip(seats, state.eliminated_in, strict=True)
                if out is not None
            }
        parsed = _checked_hands(event, locked, fixed.number, playing, seats, hands, eliminated_in)
        valued = _valued(event, seated_round, seats, playing, parsed)
        before = {row.seat.player.external_id: row.hand.split() for row in rows}
        for row in rows:
            row.hand, row.hand_points, row.score = valued[row.seat_id]
        TableGameHand.objects.bulk_update(rows, ["hand", "hand_points", "score"])
        after = {row.seat.player.external_id: row.hand.split() for row in rows}
        correction = TableGameCorrection.objects.create(
            game=fixed, by=by, reason=reason, before=before, after=after
        )
        _settle(event, seated_round, locked, seats, by)
        log_event_on_commit(
            logger,
            logging.INFO,
            "table_game_corrected",
            event_code=event.code,
            round=seated_round.number,
            table=locked.number,
            game=fixed.number,
            correction=correction.pk,
            by=None if by is None else by.pk,
        )
    return correction
