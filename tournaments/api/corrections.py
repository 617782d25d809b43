"""Corrections API (SPEC §4): the log (organisers and reviewers) and one endpoint per
correction (organisers): void, restore or fix a game; void or restore a player's games."""

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
    game_fix,
    game_restore,
    game_void,
    player_games_restore,
    player_games_void,
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


class GameVoidView(APIView):
    """Void a game: none of its seats counts; everything downstream is recomputed."""

    permission_classes = [IsOrganiser]

    @extend_schema(request=GameInput, responses={201: CorrectionOutput})
    def post(self, request: Request) -> Response:
        data = GameInput(data=request.data)
        data.is_valid(raise_exception=True)
        correction = game_void(
            game=_game(data.validated_data["game"]),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(CorrectionOutput(correction).data, status=201)


class GameRestoreView(APIView):
    """Restore a voided game."""

    permission_classes = [IsOrganiser]

    @extend_schema(request=GameInput, responses={201: CorrectionOutput})
    def post(self, request: Request) -> Response:
        data = GameInput(data=request.data)
        data.is_valid(raise_exception=True)
        correction = game_restore(
            game=_game(data.validated_data["game"]),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(CorrectionOutput(correction).data, status=201)


class GameFixView(APIView):
    """Replace a game's hands (card codes per external player id) and re-score it."""

    permission_classes = [IsOrganiser]

    class GameFixInput(GameInput):
        hands = serializers.DictField(
            child=serializers.ListField(child=serializers.CharField(max_length=8))
        )

    @extend_schema(request=GameFixInput, responses={201: CorrectionOutput})
    def post(self, request: Request) -> Response:
        data = self.GameFixInput(data=request.data)
        data.is_valid(raise_exception=True)
        correction = game_fix(
            game=_game(data.validated_data["game"]),
            hands=data.validated_data["hands"],
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(CorrectionOutput(correction).data, status=201)


class PlayerInput(serializers.Serializer[Any]):
    player = serializers.CharField(max_length=64)
    events = serializers.ListField(child=serializers.CharField(max_length=32), min_length=1)
    reason = serializers.CharField(max_length=500)


class PlayerVoidView(APIView):
    """Void every game of a player in these events (a sanction); one correction per event."""

    permission_classes = [IsOrganiser]

    @extend_schema(request=PlayerInput, responses={201: CorrectionOutput(many=True)})
    def post(self, request: Request) -> Response:
        data = PlayerInput(data=request.data)
        data.is_valid(raise_exception=True)
        corrections = player_games_void(
            player=player_get(data.validated_data["player"]),
            events=_events(data.validated_data["events"]),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(CorrectionOutput(corrections, many=True).data, status=201)


class PlayerRestoreView(APIView):
    """Restore a player's voided games in these events (an appeal upheld)."""

    permission_classes = [IsOrganiser]

    @extend_schema(request=PlayerInput, responses={201: CorrectionOutput(many=True)})
    def post(self, request: Request) -> Response:
        data = PlayerInput(data=request.data)
        data.is_valid(raise_exception=True)
        corrections = player_games_restore(
            player=player_get(data.validated_data["player"]),
            events=_events(data.validated_data["events"]),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(CorrectionOutput(corrections, many=True).data, status=201)
