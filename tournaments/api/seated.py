"""Seated events API (SPEC §4): the rounds and their tables (public), seating the next round
(one game a table, or a match to a target) and entering a table's result (organisers), the
audit replay of a round from its seed; the games of a match or partners table (public read,
organisers enter and correct them); a rotating-partners event's schedule and standings."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.roles import signed_in
from core.errors import NotFoundError, found
from core.serializers import WholeNumberField
from tournaments.api.base import OrganiserWritesView
from tournaments.domain.matches import MATCH_SCORINGS, MatchFormat
from tournaments.domain.teams import DEFAULT_GAMES_PER_ROUND
from tournaments.models import SeatedRound, SeatedTable, TableGame
from tournaments.selectors.events import event_get
from tournaments.selectors.seated import (
    seated_round_replay,
    seated_round_tables,
    seated_rounds,
    table_games,
    team_standings,
)
from tournaments.services.seated import seated_result_enter, seated_round_create
from tournaments.services.table_games import table_game_correct, table_game_enter
from tournaments.services.teams import MAX_GAMES_PER_ROUND, team_schedule_create


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
    format = serializers.ChoiceField(
        choices=SeatedRound.Format.choices,
        help_text="game: one game a table, places entered; cumulative / elimination: a match "
        "to `target` a table; partners: a round of a rotating-partners event, `games` a table",
    )
    target = serializers.IntegerField(allow_null=True)
    games = serializers.IntegerField(allow_null=True)
    created_at = serializers.DateTimeField()
    tables = TableOutput(many=True)


class MatchInput(serializers.Serializer[Any]):
    """A match at every table of the round (SPEC §4 "Matches at one table")."""

    scoring = serializers.ChoiceField(
        choices=MATCH_SCORINGS,
        help_text="cumulative (累积法): the winner of a game adds the others' hand points, "
        "the first to reach the target wins; elimination (淘汰法): everyone adds their own "
        "hand points, reaching the target eliminates, the last one left wins",
    )
    target = WholeNumberField(min_value=1, max_value=1_000_000, help_text="e.g. 500")


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
        match = MatchInput(required=False, help_text="play the round as a match; default: one game")

    @extend_schema(responses=RoundOutput(many=True))
    def get(self, request: Request, code: str) -> Response:
        return Response(RoundOutput(seated_rounds(event=event_get(code=code)), many=True).data)

    @extend_schema(request=RoundSeatInput, responses={201: RoundOutput})
    def post(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        data = self.RoundSeatInput(data=request.data)
        data.is_valid(raise_exception=True)
        match = data.validated_data.get("match")
        seated = seated_round_create(
            event=event,
            by=signed_in(request.user),
            seed=data.validated_data.get("seed"),
            match=None if match is None else MatchFormat(match["scoring"], match["target"]),
        )
        created = seated_rounds(event=event).get(pk=seated.pk)
        return Response(RoundOutput(created).data, status=201)


def _table(code: str, number: int, table: int) -> SeatedTable:
    seated = _round(code, number)
    return found(
        SeatedTable.objects.filter(round=seated, number=table).first(),
        f"round {number} of {code} has no table {table}",
    )


class TableResultView(OrganiserWritesView):
    """Organisers: enter (or re-enter, until the next round is seated) a table's result as
    each player's place, 1 = best; a tie shares a place (1, 1, 3, 4)."""

    class TableResultInput(serializers.Serializer[Any]):
        places = serializers.DictField(child=serializers.IntegerField(), allow_empty=False)

    @extend_schema(request=TableResultInput, responses=TableOutput)
    def post(self, request: Request, code: str, number: int, table: int) -> Response:
        row = _table(code, number, table)
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


# --- games of a match or partners table -----------------------------------------------------

HandsField = serializers.DictField(
    child=serializers.ListField(child=serializers.CharField(max_length=8)),
    allow_empty=False,
    help_text="each playing player's hand left, card codes by player id (the player who went "
    "out: an empty list); in an elimination match, no hand for an eliminated player",
)


class SeatStateOutput(serializers.Serializer[Any]):
    seat = serializers.IntegerField()
    player = serializers.CharField()
    name = serializers.CharField()
    total = serializers.IntegerField(
        help_text="cumulative: points won; elimination: points taken; partners: the round's "
        "tour doubles scores"
    )
    eliminated_in = serializers.IntegerField(allow_null=True)
    place = serializers.IntegerField(allow_null=True)
    points = serializers.IntegerField(allow_null=True)


class GameHandOutput(serializers.Serializer[Any]):
    player = serializers.CharField()
    hand = serializers.ListField(child=serializers.CharField())
    hand_points = serializers.IntegerField()
    score = serializers.IntegerField(help_text="what the game added to the player's total")


class GameOutput(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    entered_at = serializers.DateTimeField()
    corrections = serializers.IntegerField()
    hands = GameHandOutput(many=True)


class TableGamesOutput(serializers.Serializer[Any]):
    round = serializers.IntegerField()
    table = serializers.IntegerField()
    format = serializers.ChoiceField(choices=SeatedRound.Format.choices)
    target = serializers.IntegerField(allow_null=True)
    games_per_table = serializers.IntegerField(allow_null=True)
    finished = serializers.BooleanField()
    decided_in = serializers.IntegerField(allow_null=True)
    seats = SeatStateOutput(many=True)
    games = GameOutput(many=True)


class TableGamesView(OrganiserWritesView):
    """GET: a match or partners table's games, each player's total and, once decided, the
    table's places and points. POST (organisers): enter the next game, each playing seat's
    hand left; the same number with the same hands again answers 200 and writes nothing."""

    class TableGameInput(serializers.Serializer[Any]):
        number = WholeNumberField(min_value=1, max_value=10_000)
        hands = HandsField

    @extend_schema(responses=TableGamesOutput)
    def get(self, request: Request, code: str, number: int, table: int) -> Response:
        return Response(TableGamesOutput(table_games(table=_table(code, number, table))).data)

    @extend_schema(request=TableGameInput, responses={201: TableGamesOutput, 200: TableGamesOutput})
    def post(self, request: Request, code: str, number: int, table: int) -> Response:
        row = _table(code, number, table)
        data = self.TableGameInput(data=request.data)
        data.is_valid(raise_exception=True)
        game_number = data.validated_data["number"]
        existed = TableGame.objects.filter(table=row, number=game_number).exists()
        table_game_enter(
            table=row,
            number=game_number,
            hands=data.validated_data["hands"],
            by=signed_in(request.user),
        )
        body = TableGamesOutput(table_games(table=row)).data
        return Response(body, status=200 if existed else 201)


class TableGameCorrectionView(OrganiserWritesView):
    """Organisers: replace one game's hands with a reason (logged: who, when, why, before and
    after). A match's games freeze once the next round is seated."""

    class TableGameCorrectionInput(serializers.Serializer[Any]):
        hands = HandsField
        reason = serializers.CharField(max_length=500)

    class TableGameCorrectionOutput(serializers.Serializer[Any]):
        correction = serializers.IntegerField()
        at = serializers.DateTimeField()
        before = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
        after = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))
        table = TableGamesOutput()

    @extend_schema(request=TableGameCorrectionInput, responses=TableGameCorrectionOutput)
    def post(self, request: Request, code: str, number: int, table: int, game: int) -> Response:
        row = _table(code, number, table)
        stored = found(
            TableGame.objects.filter(table=row, number=game).first(),
            f"table {table} of round {number} of {code} has no game {game}",
        )
        data = self.TableGameCorrectionInput(data=request.data)
        data.is_valid(raise_exception=True)
        correction = table_game_correct(
            game=stored,
            hands=data.validated_data["hands"],
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(
            self.TableGameCorrectionOutput(
                {
                    "correction": correction.pk,
                    "at": correction.at,
                    "before": correction.before,
                    "after": correction.after,
                    "table": table_games(table=row),
                }
            ).data
        )


# --- rotating-partners team events ----------------------------------------------------------


class TeamScheduleOutput(serializers.Serializer[Any]):
    seed = serializers.IntegerField()
    games_per_round = serializers.IntegerField()
    games_per_player = serializers.IntegerField()
    rounds = RoundOutput(many=True)


def _schedule_body(code: str) -> dict[str, Any]:
    event = event_get(code=code)
    rounds = list(seated_rounds(event=event).filter(format=SeatedRound.Format.PARTNERS))
    if not rounds:
        raise NotFoundError(f"event {code} has no team schedule")
    games = rounds[0].games or 0
    return {
        "seed": rounds[0].seed,
        "games_per_round": games,
        "games_per_player": games * len(rounds),
        "rounds": rounds,
    }


class TeamScheduleView(OrganiserWritesView):
    """GET: a rotating-partners event's schedule (SPEC §4 "Team events"): every round, its
    tables, teammates at seats 1 and 3, 2 and 4. POST (organisers): seat the whole schedule
    from the event's entrants (a multiple of 4) and ``seed`` (drawn at random and recorded
    when not given)."""

    class TeamScheduleInput(serializers.Serializer[Any]):
        seed = serializers.IntegerField(min_value=0, max_value=2**63 - 1, required=False)
        games_per_round = WholeNumberField(
            min_value=1, max_value=MAX_GAMES_PER_ROUND, default=DEFAULT_GAMES_PER_ROUND
        )

    @extend_schema(responses=TeamScheduleOutput)
    def get(self, request: Request, code: str) -> Response:
        return Response(TeamScheduleOutput(_schedule_body(code)).data)

    @extend_schema(request=TeamScheduleInput, responses={201: TeamScheduleOutput})
    def post(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        data = self.TeamScheduleInput(data=request.data)
        data.is_valid(raise_exception=True)
        team_schedule_create(
            event=event,
            by=signed_in(request.user),
            seed=data.validated_data.get("seed"),
            games_per_round=data.validated_data["games_per_round"],
        )
        return Response(TeamScheduleOutput(_schedule_body(code)).data, status=201)


class TeamStandingRow(serializers.Serializer[Any]):
    rank = serializers.IntegerField(allow_null=True)
    player = serializers.CharField()
    name = serializers.CharField()
    province = serializers.CharField()
    total = serializers.IntegerField(help_text="the sum of the player's game scores")
    games = serializers.IntegerField()
    best = serializers.IntegerField(allow_null=True, help_text="the best single game")


class TeamStandingsView(OrganiserWritesView):
    """A rotating-partners event's standings: individual totals over the games entered, in
    the season's tie-break order (total, games, best game, earlier, player id)."""

    class TeamStandingsOutput(serializers.Serializer[Any]):
        games_per_player = serializers.IntegerField()
        standings = TeamStandingRow(many=True)

    @extend_schema(responses=TeamStandingsOutput)
    def get(self, request: Request, code: str) -> Response:
        schedule = _schedule_body(code)
        rows = team_standings(event=event_get(code=code))
        return Response(
            self.TeamStandingsOutput(
                {"games_per_player": schedule["games_per_player"], "standings": rows}
            ).data
        )
