"""Seasons API (SPEC §9 paths): list and create seasons, read and edit a ruleset, and the
stations of a season with their champions."""

import datetime
from typing import Any
from zoneinfo import ZoneInfo

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.roles import signed_in
from tournaments.api.base import OrganiserWritesView, page_response, paginated
from tournaments.models import Event, Season
from tournaments.selectors.events import season_get, season_list, station_list, station_title
from tournaments.services.seasons import RULESET_FIELDS, season_create, season_update


class PlayerRef(serializers.Serializer[Any]):
    id = serializers.CharField(source="external_id")
    name = serializers.CharField()


class SeasonSummary(serializers.Serializer[Any]):
    year = serializers.IntegerField()
    name = serializers.CharField()
    starts_on = serializers.DateField()
    time_zone = serializers.CharField()
    events = serializers.IntegerField(source="events_count")
    stations = serializers.IntegerField(source="stations_count")


class Ruleset(serializers.Serializer[Any]):
    best_n = serializers.IntegerField()
    minimum_games = serializers.IntegerField()
    quotas = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    card_table = serializers.DictField()
    singles_scoring = serializers.CharField()
    tiebreak_order = serializers.ListField(child=serializers.CharField())
    time_zone = serializers.CharField()
    cities = serializers.ListField(child=serializers.CharField())
    placement_points = serializers.DictField(
        child=serializers.ListField(child=serializers.IntegerField())
    )
    play_ruleset = serializers.DictField(help_text="rules of play: preset and changed switches")


class SeasonDetail(serializers.Serializer[Any]):
    year = serializers.IntegerField()
    name = serializers.CharField()
    starts_on = serializers.DateField()
    ruleset = Ruleset(source="*")


class SeasonsView(OrganiserWritesView):
    """GET: the seasons, newest first. POST (organisers): create a season and its calendar."""

    class SeasonCreateInput(serializers.Serializer[Any]):
        year = serializers.IntegerField(min_value=2000, max_value=2100)
        start = serializers.DateField(help_text="the first Monday (weekly qualifier 1)")
        quarterly = serializers.ListField(child=serializers.DateField(), required=False)
        annual = serializers.DateField(required=False)
        weeks = serializers.IntegerField(min_value=1, max_value=60, default=52)
        name = serializers.CharField(max_length=100, required=False, default="")
        play_ruleset = serializers.JSONField(
            required=False,
            help_text=(
                "rules of play: a preset name (classic, yiqiyounuo, ubisoft, wango) or "
                '{"preset": NAME, "switches": {SWITCH: VALUE}}'
            ),
        )

    @extend_schema(operation_id="seasons_list", responses=paginated("SeasonPage", SeasonSummary))
    def get(self, request: Request) -> Response:
        return page_response(request, self, season_list(), SeasonSummary)

    @extend_schema(request=SeasonCreateInput, responses={201: SeasonDetail})
    def post(self, request: Request) -> Response:
        data = self.SeasonCreateInput(data=request.data)
        data.is_valid(raise_exception=True)
        season = season_create(
            year=data.validated_data["year"],
            start=data.validated_data["start"],
            quarterly_dates=data.validated_data.get("quarterly"),
            annual_date=data.validated_data.get("annual"),
            weeks=data.validated_data["weeks"],
            name=data.validated_data["name"],
            ruleset=(
                {"play_ruleset": data.validated_data["play_ruleset"]}
                if "play_ruleset" in data.validated_data
                else None
            ),
            by=signed_in(request.user),
        )
        return Response(SeasonDetail(season).data, status=status.HTTP_201_CREATED)


class SeasonView(OrganiserWritesView):
    """GET: a season and its ruleset. PATCH (organisers): change ruleset fields, with a
    reason; errors name the field."""

    class SeasonUpdateInput(serializers.Serializer[Any]):
        reason = serializers.CharField(max_length=500)
        best_n = serializers.JSONField(required=False)
        minimum_games = serializers.JSONField(required=False)
        quotas = serializers.JSONField(required=False)
        card_table = serializers.JSONField(required=False)
        singles_scoring = serializers.JSONField(required=False)
        tiebreak_order = serializers.JSONField(required=False)
        time_zone = serializers.JSONField(required=False)
        cities = serializers.JSONField(required=False)
        placement_points = serializers.JSONField(required=False)
        play_ruleset = serializers.JSONField(required=False)

    @extend_schema(responses=SeasonDetail)
    def get(self, request: Request, year: int) -> Response:
        return Response(SeasonDetail(season_get(year=year)).data)

    @extend_schema(request=SeasonUpdateInput, responses=SeasonDetail)
    def patch(self, request: Request, year: int) -> Response:
        season = season_get(year=year)
        data = self.SeasonUpdateInput(data=request.data)
        data.is_valid(raise_exception=True)
        changes = {f: v for f, v in data.validated_data.items() if f in RULESET_FIELDS}
        updated: Season = season_update(
            season=season,
            changes=changes,
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(SeasonDetail(updated).data)


class StationsView(OrganiserWritesView):
    """The season's stations in number order: city, date, kind, event code and champion."""

    class StationOutput(serializers.Serializer[Any]):
        number = serializers.IntegerField(source="station")
        city = serializers.CharField()
        date = serializers.SerializerMethodField()
        kind = serializers.CharField()
        event = serializers.CharField(source="code")
        status = serializers.CharField()
        champion = PlayerRef(allow_null=True)
        title = serializers.SerializerMethodField()

        def get_date(self, event: Event) -> datetime.date:
            return event.starts_at.astimezone(self.context["zone"]).date()

        def get_title(self, event: Event) -> str:
            return station_title(event)

    @extend_schema(responses=StationOutput(many=True))
    def get(self, request: Request, year: int) -> Response:
        season = season_get(year=year)
        stations = station_list(season=season)
        context = {"zone": ZoneInfo(season.time_zone)}
        return Response(self.StationOutput(stations, many=True, context=context).data)
