"""Corrections API (SPEC §4): the log (organisers and reviewers) and one endpoint per
correction (organisers): void, restore or fix a game; void or restore a player's games; and
the decision about an event whose field a correction changed after it was played (replay
or keep). Every correction and decision takes ``preview``: the answer is then the plan
(200, per step the event and its diff) and nothing is written."""

from collections.abc import Callable, Sequence
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import IsOrganiser, IsReviewer
from accounts.roles import signed_in
from core.errors import ServiceError, found
from flows.corrections import (
    event_field_change_resolve,
    game_fix,
    game_restore,
    game_void,
    player_games_restore,
    player_games_void,
    preview,
)
from tournaments.api.base import page_response, paginated
from tournaments.api.events import player_get
from tournaments.models import Correction, Event, Game
from tournaments.selectors.events import event_get


class CorrectionOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    action = serializers.CharField()
    event = serializers.CharField(source="event.code")
    game = serializers.CharField(source="game.record_id", allow_null=True, default=None)
    player = serializers.CharField(source="player.external_id", allow_null=True, default=None)
    by = serializers.CharField(source="by.username", allow_null=True, default=None)
    at = serializers.DateTimeField()
    reason = serializers.CharField()
    diff = serializers.JSONField()


def _game(record_id: str) -> Game:
    return found(Game.objects.filter(record_id=record_id).first(), f"no game {record_id!r}")


def _events(codes: list[str]) -> list[Event]:
    events = list(Event.objects.filter(code__in=codes))
    missing = sorted(set(codes) - {event.code for event in events})
    if missing:
        raise ServiceError(f"no events {', '.join(missing)}", detail={"events": missing})
    return events


class PlanOutput(serializers.Serializer[Any]):
    plan = serializers.ListField(child=serializers.DictField())


def _answer(
    run: Callable[[], Correction | Sequence[Correction]], *, dry_run: bool, many: bool = False
) -> Response:
    """The plan of ``run`` when previewed (nothing written), else its logged corrections."""
    if dry_run:
        return Response({"plan": preview(run)})
    return Response(CorrectionOutput(run(), many=many).data, status=201)


class CorrectionsView(APIView):
    """The corrections log, newest first; ``event`` filters by event code."""

    permission_classes = [IsOrganiser | IsReviewer]

    class CorrectionFilterInput(serializers.Serializer[Any]):
        event = serializers.CharField(required=False)

    @extend_schema(
        parameters=[CorrectionFilterInput], responses=paginated("CorrectionPage", CorrectionOutput)
    )
    def get(self, request: Request) -> Response:
        filters = self.CorrectionFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        rows = Correction.objects.select_related("event", "game", "player", "by").order_by(
            "-at", "-id"
        )
        if "event" in filters.validated_data:
            rows = rows.filter(event=event_get(code=filters.validated_data["event"]))
        return page_response(request, self, rows, CorrectionOutput)


class GameInput(serializers.Serializer[Any]):
    game = serializers.CharField(max_length=64, help_text="the game server's record id")
    reason = serializers.CharField(max_length=500)
    preview = serializers.BooleanField(
        default=False, help_text="answer the plan (200) and write nothing"
    )


class _GameView(APIView):
    """A correction of one game (``correct``)."""

    permission_classes = [IsOrganiser]
    correct: Callable[..., Correction]

    @extend_schema(request=GameInput, responses={201: CorrectionOutput, 200: PlanOutput})
    def post(self, request: Request) -> Response:
        data = GameInput(data=request.data)
        data.is_valid(raise_exception=True)
        game, by = _game(data.validated_data["game"]), signed_in(request.user)
        correct = type(self).correct
        return _answer(
            lambda: correct(game=game, by=by, reason=data.validated_data["reason"]),
            dry_run=data.validated_data["preview"],
        )


class GameVoidView(_GameView):
    """Void a game: none of its seats counts; everything downstream is recomputed."""

    correct = staticmethod(game_void)


class GameRestoreView(_GameView):
    """Restore a voided game."""

    correct = staticmethod(game_restore)


class GameFixView(APIView):
    """Replace a game's hands (card codes per external player id) and re-score it."""

    permission_classes = [IsOrganiser]

    class GameFixInput(GameInput):
        hands = serializers.DictField(
            child=serializers.ListField(child=serializers.CharField(max_length=8))
        )

    @extend_schema(request=GameFixInput, responses={201: CorrectionOutput, 200: PlanOutput})
    def post(self, request: Request) -> Response:
        data = self.GameFixInput(data=request.data)
        data.is_valid(raise_exception=True)
        game, by = _game(data.validated_data["game"]), signed_in(request.user)
        return _answer(
            lambda: game_fix(
                game=game,
                hands=data.validated_data["hands"],
                by=by,
                reason=data.validated_data["reason"],
            ),
            dry_run=data.validated_data["preview"],
        )


class PlayerInput(serializers.Serializer[Any]):
    player = serializers.CharField(max_length=64)
    events = serializers.ListField(child=serializers.CharField(max_length=32), min_length=1)
    reason = serializers.CharField(max_length=500)
    preview = serializers.BooleanField(default=False)


class _PlayerGamesView(APIView):
    """A correction of every game of a player in the events named (``correct``)."""

    permission_classes = [IsOrganiser]
    correct: Callable[..., list[Correction]]

    @extend_schema(
        request=PlayerInput, responses={201: CorrectionOutput(many=True), 200: PlanOutput}
    )
    def post(self, request: Request) -> Response:
        data = PlayerInput(data=request.data)
        data.is_valid(raise_exception=True)
        player, events = (
            player_get(data.validated_data["player"]),
            _events(data.validated_data["events"]),
        )
        by = signed_in(request.user)
        correct = type(self).correct
        return _answer(
            lambda: correct(
                player=player, events=events, by=by, reason=data.validated_data["reason"]
            ),
            dry_run=data.validated_data["preview"],
            many=True,
        )


class PlayerVoidView(_PlayerGamesView):
    """Void every game of a player in these events (a sanction); one correction per event."""

    correct = staticmethod(player_games_void)


class PlayerRestoreView(_PlayerGamesView):
    """Restore a player's voided games in these events (an appeal upheld)."""

    correct = staticmethod(player_games_restore)


class FieldChangeView(APIView):
    """Decide about an event whose field a correction changed after it was played: replay
    it on the new field (the chain goes on) or keep its result (logged with the reason)."""

    permission_classes = [IsOrganiser]

    class FieldChangeInput(serializers.Serializer[Any]):
        decision = serializers.ChoiceField(choices=["replay", "keep"])
        reason = serializers.CharField(max_length=500)
        preview = serializers.BooleanField(default=False)

    @extend_schema(request=FieldChangeInput, responses={201: CorrectionOutput, 200: PlanOutput})
    def post(self, request: Request, code: str) -> Response:
        data = self.FieldChangeInput(data=request.data)
        data.is_valid(raise_exception=True)
        event, by = event_get(code=code), signed_in(request.user)
        return _answer(
            lambda: event_field_change_resolve(
                event=event,
                decision=data.validated_data["decision"],
                by=by,
                reason=data.validated_data["reason"],
            ),
            dry_run=data.validated_data["preview"],
        )
