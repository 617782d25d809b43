"""Events API: list, add, move or cancel events; leaderboards (SPEC §9
``/api/events/{code}/leaderboard/``), "why am I in or out", finalisation and entries."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import Player
from accounts.provinces import PROVINCE_SET
from accounts.roles import signed_in
from core.cache import CachedPage, cached_page
from core.domain.text import IDENT_SCHEMA, ident_problem
from core.errors import ServiceError, found
from core.pagination import DefaultPagination
from core.serializers import WholeNumberField
from tournaments.api.base import OrganiserWritesView, page_response, paginated
from tournaments.api.seasons import PlayerRef
from tournaments.models import Event, EventKind, EventStatus
from tournaments.selectors.events import (
    entry_list,
    event_get,
    event_list,
    season_get,
    station_title,
)
from tournaments.selectors.leaderboard import (
    advancement_explain,
    board_cache_seconds,
    leaderboard_player,
    leaderboard_rows,
)
from tournaments.services.entries import entry_invite
from tournaments.services.events import event_add, event_cancel, event_move
from tournaments.services.finalise import event_finalise_check
from tournaments.tasks import event_finalise_enqueue


@extend_schema_field({"type": "string", "pattern": IDENT_SCHEMA % 32})
class EventCodeField(serializers.CharField):
    """A new event's code: an identifier (core.domain.text) of at most 32 characters."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_length=32, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        problem = ident_problem(value)
        if problem is not None:
            raise ValidationError(f"an event code {problem}")
        return value


class EventOutput(serializers.Serializer[Any]):
    code = serializers.CharField()
    season = serializers.IntegerField(source="season.year")
    kind = serializers.CharField()
    format = serializers.CharField()
    name = serializers.CharField()
    station = serializers.IntegerField(allow_null=True)
    city = serializers.CharField()
    title = serializers.SerializerMethodField()
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    daily_opens = serializers.TimeField(allow_null=True)
    daily_closes = serializers.TimeField(allow_null=True)
    month = serializers.CharField()
    feeds = serializers.CharField(source="feeds.code", allow_null=True, default=None)
    open_entry = serializers.BooleanField()
    status = serializers.CharField()
    champion = PlayerRef(allow_null=True)
    champion_achievement = serializers.CharField()
    finalised_at = serializers.DateTimeField(allow_null=True)
    leaderboard_version = serializers.IntegerField()
    field_changed_at = serializers.DateTimeField(
        allow_null=True,
        help_text="a correction changed the field after the event was played: the organiser "
        "replays or keeps it (POST field-change/)",
    )
    field_changed_by = serializers.IntegerField(
        source="field_changed_by_id", allow_null=True, help_text="the correction's id"
    )
    play_ruleset = serializers.DictField(
        allow_null=True, help_text="the event's own rules of play; null: its season's"
    )

    def get_title(self, event: Event) -> str:
        return station_title(event)


def player_get(external_id: str) -> Player:
    return found(
        Player.objects.filter(external_id=external_id).first(), f"no player {external_id!r}"
    )


class EventsView(OrganiserWritesView):
    """GET: events, filtered by season, kind and status (paged). POST (organisers): add an
    event with its own code; a final kind becomes a station."""

    class EventFilterInput(serializers.Serializer[Any]):
        season = WholeNumberField(required=False)
        kind = serializers.ChoiceField(choices=EventKind.choices, required=False)
        status = serializers.ChoiceField(choices=EventStatus.choices, required=False)

    class EventAddInput(serializers.Serializer[Any]):
        season = serializers.IntegerField()
        code = EventCodeField()
        kind = serializers.ChoiceField(choices=EventKind.choices)
        format = serializers.ChoiceField(choices=Event.Format.choices, default="leaderboard")
        starts_at = serializers.DateTimeField()
        ends_at = serializers.DateTimeField()
        name = serializers.CharField(max_length=100, required=False, default="")
        city = serializers.CharField(max_length=20, required=False, default="")
        feeds = serializers.CharField(required=False, help_text="the code of the event it feeds")
        open_entry = serializers.BooleanField(default=False)
        daily_opens = serializers.TimeField(required=False)
        daily_closes = serializers.TimeField(required=False)
        champion_achievement = serializers.CharField(
            max_length=40, required=False, help_text="qualification rule key its champion earns"
        )
        play_ruleset = serializers.JSONField(
            required=False,
            help_text=(
                "rules of play: a preset name (classic, yiqiyounuo, ubisoft, wango) or "
                '{"preset": NAME, "switches": {SWITCH: VALUE}}'
            ),
        )
        reason = serializers.CharField(max_length=500)

    @extend_schema(
        operation_id="events_list",
        parameters=[EventFilterInput],
        responses=paginated("EventPage", EventOutput),
    )
    def get(self, request: Request) -> Response:
        filters = self.EventFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return page_response(request, self, event_list(**filters.validated_data), EventOutput)

    @extend_schema(request=EventAddInput, responses={201: EventOutput})
    def post(self, request: Request) -> Response:
        data = self.EventAddInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        hours = (values.get("daily_opens"), values.get("daily_closes"))
        if (hours[0] is None) != (hours[1] is None):
            raise ValidationError({"daily_closes": "give both daily hours or neither"})
        event = event_add(
            season=season_get(year=values["season"]),
            code=values["code"],
            kind=values["kind"],
            event_format=values["format"],
            starts_at=values["starts_at"],
            ends_at=values["ends_at"],
            name=values["name"],
            city=values["city"],
            feeds=event_get(code=values["feeds"]) if values.get("feeds") else None,
            open_entry=values["open_entry"],
            daily_hours=hours if hours[0] is not None else None,
            champion_achievement=values.get("champion_achievement"),
            play_ruleset=values.get("play_ruleset"),
            by=signed_in(request.user),
            reason=values["reason"],
        )
        return Response(EventOutput(event_get(code=event.code)).data, status=201)


class EventView(OrganiserWritesView):
    """GET: one event. PATCH (organisers): move it (a new window) or cancel it
    (``status: cancelled``), with a reason; the season's stations are re-numbered."""

    class EventChangeInput(serializers.Serializer[Any]):
        starts_at = serializers.DateTimeField(required=False)
        ends_at = serializers.DateTimeField(required=False)
        status = serializers.ChoiceField(choices=[EventStatus.CANCELLED], required=False)
        reason = serializers.CharField(max_length=500)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            moving = "starts_at" in attrs or "ends_at" in attrs
            if moving == ("status" in attrs):
                raise ValidationError("give a new window (starts_at, ends_at) or status")
            return attrs

    @extend_schema(responses=EventOutput)
    def get(self, request: Request, code: str) -> Response:
        return Response(EventOutput(event_get(code=code)).data)

    @extend_schema(request=EventChangeInput, responses=EventOutput)
    def patch(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        data = self.EventChangeInput(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if "status" in values:
            event_cancel(event=event, by=signed_in(request.user), reason=values["reason"])
        else:
            event_move(
                event=event,
                starts_at=values.get("starts_at", event.starts_at),
                ends_at=values.get("ends_at", event.ends_at),
                by=signed_in(request.user),
                reason=values["reason"],
            )
        return Response(EventOutput(event_get(code=code)).data)


class LeaderboardRowOutput(serializers.Serializer[Any]):
    rank = serializers.IntegerField(allow_null=True)
    province_rank = serializers.IntegerField(allow_null=True)
    player = serializers.CharField()
    name = serializers.CharField()
    province = serializers.CharField()
    total = serializers.IntegerField()
    games = serializers.IntegerField()
    best = serializers.IntegerField(allow_null=True)
    eligible = serializers.BooleanField()
    advanced = serializers.BooleanField()


class LeaderboardView(OrganiserWritesView):
    """Ranked rows, eligible first: frozen ranks once finalised; while live, the position
    (national rank on the national board, province rank with ``province``). ``player``
    gives one player's row with both live ranks. A board page's serialised rows are cached
    under the event's exact ``leaderboard_version`` (``core.cache``): a repeated page costs
    the event's query alone and is never stale past a standings write. Anonymous readers
    are answered whole from the cache in front of this view (``cached_response`` in
    ``tournaments/api/urls.py``, stale by at most ``READ_STALE_SECONDS``)."""

    class LeaderboardFilterInput(serializers.Serializer[Any]):
        province = serializers.CharField(required=False, help_text="e.g. 江苏")
        player = serializers.CharField(required=False, help_text="external id, e.g. p0000001")

        def validate_province(self, value: str) -> str:
            if value not in PROVINCE_SET:
                raise ValidationError(f"unknown province {value!r}")
            return value

    @extend_schema(
        parameters=[
            LeaderboardFilterInput,
            OpenApiParameter("page", OpenApiTypes.INT),
            OpenApiParameter(
                "page_size", OpenApiTypes.INT, description="at most 500 (a larger ask is capped)"
            ),
        ],
        responses=paginated("LeaderboardPage", LeaderboardRowOutput),
    )
    def get(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        filters = self.LeaderboardFilterInput(data=request.query_params)
        filters.is_valid(raise_exception=True)
        province = filters.validated_data.get("province")
        player = filters.validated_data.get("player")
        if player:
            rows = leaderboard_player(event, player=player, province=province)
            return page_response(request, self, rows, LeaderboardRowOutput)
        pagination = DefaultPagination()
        per_page = pagination.get_page_size(request)
        board = leaderboard_rows(event, province=province)

        def build() -> CachedPage:
            # Django's paginator takes the sliceable board; the stubs ask for a QuerySet.
            rows: list[Any] | None = pagination.paginate_queryset(board, request, view=self)  # type: ignore[arg-type]
            page: Any = pagination.page  # set by paginate_queryset
            results = LeaderboardRowOutput(rows, many=True).data
            return CachedPage(page.number, page.paginator.count, page.paginator.per_page, results)

        cached = cached_page(
            ("board-api", event.pk, event.code, province or "", per_page),
            event.leaderboard_version,
            request.query_params.get(pagination.page_query_param),
            build,
            board_cache_seconds(event),
        )
        # What paginate_queryset sets when it runs: the links are made from them.
        pagination.request = request
        pagination.page = cached.page()
        return pagination.get_paginated_response(cached.shown)


class AdvancementView(OrganiserWritesView):
    """Why a player is in or out of the event this one feeds (while live: if it ended now)."""

    class AdvancementOutput(serializers.Serializer[Any]):
        player = serializers.CharField(source="verdict.player")
        advances = serializers.BooleanField(source="verdict.advances")
        reason = serializers.CharField(source="verdict.reason")
        national_rank = serializers.IntegerField(
            source="verdict.basis.national_rank", allow_null=True, default=None
        )
        province_rank = serializers.IntegerField(
            source="verdict.basis.province_rank", allow_null=True, default=None
        )
        by_national = serializers.BooleanField(source="verdict.basis.by_national", default=False)
        by_province = serializers.BooleanField(source="verdict.basis.by_province", default=False)
        finalised = serializers.BooleanField()
        feeds = serializers.CharField(allow_null=True)

    @extend_schema(responses=AdvancementOutput)
    def get(self, request: Request, code: str, player_id: str) -> Response:
        event = event_get(code=code)
        player = player_get(player_id)
        return Response(
            self.AdvancementOutput(advancement_explain(event=event, player=player)).data
        )


class FinaliseView(OrganiserWritesView):
    """Organisers: finalise the event (a job). 202 when queued; 200 when it was already
    finalised (nothing changes). ``force`` finalises before the window ends."""

    class FinaliseInput(serializers.Serializer[Any]):
        force = serializers.BooleanField(default=False)

    class FinaliseOutput(serializers.Serializer[Any]):
        event = serializers.CharField()
        status = serializers.CharField()
        job = serializers.UUIDField(
            allow_null=True, required=False, help_text="follow it at /api/jobs/{job}/"
        )

    @extend_schema(request=FinaliseInput, responses={200: FinaliseOutput, 202: FinaliseOutput})
    def post(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        data = self.FinaliseInput(data=request.data)
        data.is_valid(raise_exception=True)
        force = data.validated_data["force"]
        if event.is_finalised:
            return Response({"event": event.code, "status": "finalised"})
        event_finalise_check(event=event, force=force)
        job = event_finalise_enqueue(event, by=signed_in(request.user), force=force)
        return Response({"event": event.code, "status": "queued", "job": str(job.id)}, status=202)


class EntriesView(OrganiserWritesView):
    """GET: the event's entrants (advanced or invited). POST (organisers): invite players."""

    class EntryOutput(serializers.Serializer[Any]):
        player = serializers.CharField(source="player.external_id")
        name = serializers.CharField(source="player.name")
        province = serializers.CharField(source="player.province")
        basis = serializers.CharField()
        # A field named "source" shadows Field.source in the stubs; DRF allows it.
        source = serializers.CharField(  # type: ignore[assignment]
            source="source.code", allow_null=True, default=None
        )
        reason = serializers.CharField()

    class EntryInviteInput(serializers.Serializer[Any]):
        players = serializers.ListField(
            child=serializers.CharField(max_length=64), min_length=1, max_length=1000
        )
        reason = serializers.CharField(max_length=500)

    @extend_schema(responses=paginated("EntryPage", EntryOutput))
    def get(self, request: Request, code: str) -> Response:
        return page_response(
            request, self, entry_list(event=event_get(code=code)), self.EntryOutput
        )

    @extend_schema(request=EntryInviteInput, responses={201: EntryOutput(many=True)})
    def post(self, request: Request, code: str) -> Response:
        event = event_get(code=code)
        data = self.EntryInviteInput(data=request.data)
        data.is_valid(raise_exception=True)
        wanted = list(dict.fromkeys(data.validated_data["players"]))
        players = list(Player.objects.filter(external_id__in=wanted))
        missing = sorted(set(wanted) - {p.external_id for p in players})
        if missing:
            raise ServiceError(f"no players {', '.join(missing[:10])}", detail={"players": missing})
        created = entry_invite(
            event=event,
            players=players,
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        return Response(self.EntryOutput(created, many=True).data, status=201)
