"""Seated events API (SPEC §4): the rounds and their tables (public), seating the next round
and entering a table's result (organisers), and the audit replay of a round from its seed."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.roles import signed_in
from core.errors import found
from tournaments.api.base import OrganiserWritesView
from tournaments.models import SeatedRound, SeatedTable
from tournaments.selectors.events import event_get
from tournaments.selectors.seated import seated_round_replay, seated_round_tables, seated_rounds
from tournaments.services.seated import seated_result_enter, seated_round_create


class SeatOutput(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    player = serializers.CharField(source="player.external_id")
    name = serializers.CharField(source="player.name")
    place = serializers.IntegerField(allow_null=True)
    points = serializers.IntegerField(allow_null=True)


class TableOutput(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    result_entered_at = serializers.DateTimeField(allow_null=True)
    seats = SeatOutput(many=True)


class RoundOutput(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    seed = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    tables = TableOutput(many=True)


def _round(code: str, number: int) -> SeatedRound:
    return found(
        SeatedRound.objects.select_related("event").filter(event__code=code, number=number).first(),
        f"event {code!r} has no round {number}",
    )


class RoundsView(OrganiserWritesView):
    """GET: the event's rounds, tables and results. POST (organisers): seat the next round
    from ``seed`` (drawn at random and recorded when not given)."""

    class RoundSeatInput(serializers.Serializer[Any]):
        seed = serializers.IntegerField(min_value=0, max_value=2**63 - 1, required=False)

    @extend_schema(responses=RoundOutput(many=True))
    def get(self, request: Request, code: str) -> Response:
        return Response(RoundOutput(seated_rounds(event=event_get(code=code)), many=True).data)

    @extend_schema(request=RoundSeatInput, responses={201: RoundOutput})
    def post(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        data = self.RoundSeatInput(data=request.data)
        data.is_valid(raise_exception=True)
        seated = seated_round_create(
            event=event, by=signed_in(request.user), seed=data.validated_data.get("seed")
        )
        created = seated_rounds(event=event).get(pk=seated.pk)
        return Response(RoundOutput(created).data, status=201)


class TableResultView(OrganiserWritesView):
    """Organisers: enter (or re-enter, until the next round is seated) a table's result as
    each player's place, 1 = best; a tie shares a place (1, 1, 3, 4)."""

    class TableResultInput(serializers.Serializer[Any]):
        places = serializers.DictField(child=serializers.IntegerField(), allow_empty=False)

    @extend_schema(request=TableResultInput, responses=TableOutput)
    def post(self, request: Request, code: str, number: int, table: int) -> Response:
        seated = _round(code, number)
        row = found(
            SeatedTable.objects.filter(round=seated, number=table).first(),
            f"round {number} of {code} has no table {table}",
        )
        data = self.TableResultInput(data=request.data)
        data.is_valid(raise_exception=True)
        seated_result_enter(
            table=row, places=data.validated_data["places"], by=signed_in(request.user)
        )
        fresh = SeatedTable.objects.prefetch_related("seats__player").get(pk=row.pk)
        return Response(TableOutput(fresh).data)


class RoundReplayView(OrganiserWritesView):
    """The audit: seat the round again from its recorded seed and compare."""

    class RoundReplayOutput(serializers.Serializer[Any]):
        round = serializers.IntegerField()
        seed = serializers.IntegerField()
        reproduced = serializers.BooleanField()
        tables = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))

    @extend_schema(responses=RoundReplayOutput)
    def get(self, request: Request, code: str, number: int) -> Response:
        seated = _round(code, number)
        replayed = seated_round_replay(seated_round=seated)
        stored = seated_round_tables(seated_round=seated)
        return Response(
            self.RoundReplayOutput(
                {
                    "round": seated.number,
                    "seed": seated.seed,
                    "reproduced": replayed == stored,
                    "tables": [list(table) for table in replayed],
                }
            ).data
        )
