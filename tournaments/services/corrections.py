"""Corrections of results after the fact (SPEC §4 "Corrections after finalisation", §7).

An organiser voids a game, restores a voided one or fixes a game's hands; an integrity
sanction voids every game of a player in a set of events (``player_games_void``, reversed by
``player_games_restore`` on appeal). Each runs in one transaction that also recomputes the
affected standings (``standings_recompute``) and, when the event is finalised, re-runs its
finalisation and moves everything downstream in tournaments (``event_refreeze``: champion,
advancement, the fed event's entries; a fed event already played is marked for the
organiser's decision: ``tournaments.services.cascade``). The champion's title
qualification is the other app's part: ``flows.corrections`` runs these services and
moves it (``champion_change`` reads what moved) in the same transaction; callers call the
flow. A ``Correction`` row keeps who, when, why and the diff: the standings changed (with
the corrected players' finalised ranks, read from the board's order before and after), the
champion before and after, the players whose advancement was added or removed, the fed
event's entries added or removed and whether it was marked (``fed``).

Decisions:

* Voiding a **player's** games voids their seats only: the other players of those games keep
  their scores (an honest opponent is not punished; a beneficiary of collusion is sanctioned
  by voiding their own seats). Voiding a **game** voids every seat of it.
* A seat stays voided while either its game or its player is voided: restoring a game keeps
  the seats of players whose games in that event are voided, and the other way round.
* A fixed game keeps its original record digest, so a re-send of the original record stays a
  harmless duplicate and never undoes the fix. Hands are checked against the event's card
  table and re-scored by its scoring (singles) or ``tour_doubles`` (``Event.rule``: the
  rules it was finalised with, else the season's).
* The chain goes on past the fed event as ``tournaments.services.cascade`` says: the fed
  event's entries move; one already played is marked and keeps its result until the
  organiser replays it on the new field (and the chain goes on) or keeps it.
* Locks, in a fixed order: the events (by id), then their standings (in player order).
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import Player, User
from core.errors import ConflictError, ServiceError
from tournaments.domain.cards import CardError, CardTable, hand_points, parse_hand, validate_deal
from tournaments.domain.scoring import score_game
from tournaments.models import Correction, Event, EventStatus, Game, Seat, Standing
from tournaments.selectors.leaderboard import live_ranks
from tournaments.services.cascade import fed_field_mark
from tournaments.services.finalise import event_refreeze
from tournaments.services.hand_refusals import hand_refusal
from tournaments.services.seated import seated_standings_recompute
from tournaments.services.standings import standings_recompute

Action = Correction.Action
_STANDING_FIELDS = ("total", "games", "eligible", "rank", "province_rank", "advanced")


def _need_reason(reason: str) -> None:
    if not reason.strip():
        raise ServiceError(
            "give a reason for the correction",
            detail={"reason": "required"},
            say=_("更正须写明理由。"),
        )


def _snapshot(event: Event, player_ids: Iterable[int]) -> dict[str, dict[str, Any]]:
    """The corrected players' standings; a finalised event's ranks are read from its order
    (only the advancing rows store theirs)."""
    rows = Standing.objects.filter(event=event, player_id__in=list(player_ids)).order_by(
        "player_key"
    )
    snapshot = {}
    for row in rows:
        values = {name: getattr(row, name) for name in _STANDING_FIELDS}
        if event.status == EventStatus.FINALISED:
            values["rank"], values["province_rank"] = live_ranks(row, event)
        snapshot[row.player_key] = values
    return snapshot


def _recompute(
    event: Event,
    player_ids: Sequence[int],
    *,
    action: str,
    by: User | None,
    reason: str,
    game: Game | None = None,
    player: Player | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Correction:
    """Recompute the standings of ``player_ids`` in the locked ``event``, re-freeze it when
    finalised, and log the correction with its diff."""
    before = _snapshot(event, player_ids)
    if event.format == Event.Format.SEATED:
        seated_standings_recompute(event=event, player_ids=player_ids)
    else:
        standings_recompute(event=event, player_ids=player_ids)
    diff: dict[str, Any] = dict(extra or {})
    outcome = None
    if event.status == EventStatus.FINALISED:
        outcome = event_refreeze(event=event)
        diff.update(outcome.as_diff())
    after = _snapshot(event, player_ids)
    diff["standings"] = [
        {"player": key, "before": before.get(key), "after": after.get(key)}
        for key in sorted(set(before) | set(after))
        if before.get(key) != after.get(key)
    ]
    correction = Correction.objects.create(
        action=action, event=event, game=game, player=player, by=by, reason=reason, diff=diff
    )
    if outcome is not None:
        fed = fed_field_mark(event=event, outcome=outcome, correction=correction)
        if fed:
            correction.diff["fed"] = fed
            correction.save(update_fields=["diff"])
    return correction


def _locked_event(event_id: int) -> Event:
    return Event.objects.select_for_update(of=("self",)).select_related("season").get(pk=event_id)


def _players_voided(event: Event, player_ids: Iterable[int]) -> set[int]:
    """The players whose games in ``event`` are voided by a sanction now (the last
    void/restore correction of each)."""
    latest: dict[int, str] = {}
    for player_id, action in (
        Correction.objects.filter(
            event=event,
            player_id__in=list(player_ids),
            action__in=[Action.VOID_PLAYER, Action.RESTORE_PLAYER],
        )
        .order_by("at", "id")
        .values_list("player_id", "action")
    ):
        latest[player_id] = action
    return {pk for pk, action in latest.items() if action == Action.VOID_PLAYER}


def game_void(*, game: Game, by: User | None, reason: str) -> Correction:
    """Void a game: none of its seats counts any more."""
    _need_reason(reason)
    with transaction.atomic():
        event = _locked_event(game.event_id)
        locked = Game.objects.select_for_update().get(pk=game.pk)
        if locked.voided:
            raise ConflictError(
                f"game {locked.record_id} is already voided",
                say=_("对局 %(game)s 已经作废。") % {"game": locked.record_id},
            )
        locked.voided = True
        locked.save(update_fields=["voided"])
        Seat.objects.filter(game=locked).update(voided=True)
        players = list(Seat.objects.filter(game=locked).values_list("player_id", flat=True))
        return _recompute(
            event, players, action=Action.VOID_GAME, by=by, reason=reason, game=locked
        )


def game_restore(*, game: Game, by: User | None, reason: str) -> Correction:
    """Restore a voided game (its seats count again, except sanctioned players')."""
    _need_reason(reason)
    with transaction.atomic():
        event = _locked_event(game.event_id)
        locked = Game.objects.select_for_update().get(pk=game.pk)
        if not locked.voided:
            raise ConflictError(
                f"game {locked.record_id} is not voided",
                say=_("对局 %(game)s 没有作废，无需恢复。") % {"game": locked.record_id},
            )
        locked.voided = False
        locked.save(update_fields=["voided"])
        players = list(Seat.objects.filter(game=locked).values_list("player_id", flat=True))
        sanctioned = _players_voided(event, players)
        Seat.objects.filter(game=locked).exclude(player_id__in=sanctioned).update(voided=False)
        return _recompute(
            event, players, action=Action.RESTORE_GAME, by=by, reason=reason, game=locked
        )


def game_fix(
    *, game: Game, hands: Mapping[str, Sequence[str]], by: User | None, reason: str
) -> Correction:
    """Replace a game's hands (by external player id) and re-score it."""
    _need_reason(reason)
    with transaction.atomic():
        event = _locked_event(game.event_id)
        locked = Game.objects.select_for_update().get(pk=game.pk)
        seats = list(Seat.objects.filter(game=locked).select_related("player").order_by("seat"))
        keys = [seat.player.external_id for seat in seats]
        if set(hands) != set(keys):
            raise ServiceError(
                f"give the hands of exactly the game's players: {', '.join(keys)}",
                detail={"hands": sorted(set(hands) ^ set(keys))},
                say=_("须填本局每位选手（且只填他们）的手牌：%(players)s。")
                % {"players": "、".join(keys)},
            )
        table = CardTable.from_dict(event.rule("card_table"))
        try:
            parsed = [parse_hand(hands[key], table, seat=i) for i, key in enumerate(keys)]
            validate_deal(parsed, table)
        except CardError as exc:
            raise ServiceError(
                f"bad hand: {exc}",
                detail={"hands": str(exc), "card": str(exc.code)},
                say=hand_refusal(
                    exc, _("对局 %(game)s") % {"game": locked.record_id}, keys, hands, table
                ),
            ) from None
        if locked.ended_by == Game.EndedBy.OUT and all(parsed):
            raise ServiceError(
                f"game {locked.record_id} ended 'out' but no hand is empty",
                detail={"hands": "one hand must be empty"},
                say=_("对局 %(game)s 以有人出完牌结束，须有一手牌为空。")
                % {"game": locked.record_id},
            )
        hand_limit = Seat._meta.get_field("hand").max_length
        if hand_limit is not None and any(len(" ".join(hand)) > hand_limit for hand in parsed):
            raise ServiceError(
                f"a hand is longer than {hand_limit} characters",
                say=_("有一手牌超过 %(limit)s 个字符。") % {"limit": hand_limit},
            )
        points = [hand_points(hand, table) for hand in parsed]
        if locked.mode == Game.Mode.DOUBLES:
            scores = score_game("tour_doubles", points, [seat.team for seat in seats])
        else:
            scores = score_game(event.rule("singles_scoring"), points)
        before = [[s.player.external_id, s.hand, s.hand_points, s.score] for s in seats]
        for seat, hand, point, score in zip(seats, parsed, points, scores, strict=True):
            seat.hand, seat.hand_points, seat.score = " ".join(hand), point, score
        Seat.objects.bulk_update(seats, ["hand", "hand_points", "score"])
        after = [[s.player.external_id, s.hand, s.hand_points, s.score] for s in seats]
        return _recompute(
            event,
            [seat.player_id for seat in seats],
            action=Action.FIX_GAME,
            by=by,
            reason=reason,
            game=locked,
            extra={"seats": {"before": before, "after": after}},
        )


def _player_games(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str, void: bool
) -> list[Correction]:
    _need_reason(reason)
    if not events:
        raise ServiceError(
            "name at least one event", detail={"events": "required"}, say=_("请至少选一项赛事。")
        )
    corrections = []
    with transaction.atomic():
        for event_id in sorted({event.pk for event in events}):
            event = _locked_event(event_id)
            seats = Seat.objects.filter(event=event, player=player)
            if void:
                changed = seats.filter(voided=False).update(voided=True)
            else:
                changed = seats.filter(voided=True, game__voided=False).update(voided=False)
            # Log the sanction (or its reversal) wherever it changes a seat or the record
            # game_restore reads; an event without the player's games is left alone.
            active = player.pk in _players_voided(event, [player.pk])
            needed = changed or (not active and seats.exists()) if void else changed or active
            if not needed:
                continue
            corrections.append(
                _recompute(
                    event,
                    [player.pk],
                    action=Action.VOID_PLAYER if void else Action.RESTORE_PLAYER,
                    by=by,
                    reason=reason,
                    player=player,
                    extra={"seats": changed},
                )
            )
    return corrections


def player_games_void(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Void every seat of ``player`` in ``events`` (an integrity sanction); one Correction per
    event that changed. Voiding again changes nothing."""
    return _player_games(player=player, events=events, by=by, reason=reason, void=True)


def player_games_restore(
    *, player: Player, events: Sequence[Event], by: User | None, reason: str
) -> list[Correction]:
    """Reverse ``player_games_void`` (an appeal upheld): the player's seats count again,
    except in games voided as a whole."""
    return _player_games(player=player, events=events, by=by, reason=reason, void=False)


def champion_change(correction: Correction) -> tuple[Player | None, Player | None] | None:
    """The champion before and after ``correction`` when it changed them, else None."""
    champion = correction.diff.get("champion")
    if not champion or champion["before"] == champion["after"]:
        return None
    keys = [key for key in (champion["before"], champion["after"]) if key is not None]
    players = {player.external_id: player for player in Player.objects.filter(external_id__in=keys)}
    before, after = (
        None if key is None else players[key] for key in (champion["before"], champion["after"])
    )
    return before, after
