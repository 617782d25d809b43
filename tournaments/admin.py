"""The tournaments admin: every write goes through a service, with the service's own checks
run in the form so errors show on their field.

* Season: the ruleset as data, validated (``season_update_check``), with a reason for the log.
  Seasons are created with their calendar (``manage.py season_create`` or the API).
* Event: list by season, kind and status; add one (``event_add``), move it (a new window) or
  cancel it, with a reason; the "finalise" action queues ``event_finalise_task`` (refused
  with an error message, nothing queued, when the job queue is down: ``core.broker``).
* Entry, Correction, CalendarChange, Game, Seat and the seated models: read-only. A seat's
  session (IP address, device, client) is personal data, shown to title reviewers only and
  never on list pages.
"""

from datetime import time
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from accounts.roles import REVIEWER, has_role, signed_in
from core.errors import ServiceError, UnavailableError
from tournaments.models import (
    CalendarChange,
    Correction,
    Entry,
    Event,
    EventStatus,
    Game,
    Season,
    Seat,
    SeatedRound,
    SeatedTable,
    TableGame,
    TableGameCorrection,
    TableGameHand,
    TableSeat,
)
from tournaments.services.events import (
    event_add,
    event_add_check,
    event_cancel,
    event_cancel_check,
    event_move,
    event_move_check,
)
from tournaments.services.finalise import event_finalise_check
from tournaments.services.seasons import RULESET_FIELDS, season_update, season_update_check
from tournaments.tasks import event_finalise_enqueue

M = TypeVar("M", bound=Model)


def _add_errors(
    form: forms.BaseForm, exc: ServiceError, fields: dict[str, str] | None = None
) -> None:
    """Put a service error on the fields its detail names (else on the form): the whole
    message for one field, each field's own message for several."""
    named = exc.detail if isinstance(exc.detail, dict) else {}
    placed = False
    for key, message in named.items():
        field = (fields or {}).get(key, key)
        if field in form.fields:
            form.add_error(field, exc.message if len(named) == 1 else str(message))
            placed = True
    if not placed:
        form.add_error(None, exc.message)


class ReadOnlyAdmin(admin.ModelAdmin[M]):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- seasons ---------------------------------------------------------------------------------


class SeasonForm(forms.ModelForm[Season]):
    reason = forms.CharField(max_length=500, help_text="why the ruleset changes (logged)")

    class Meta:
        model = Season
        fields = RULESET_FIELDS

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        changes = {f: cleaned[f] for f in RULESET_FIELDS if f in cleaned}
        try:
            self.changes = season_update_check(season=self.instance, changes=changes)
        except ServiceError as exc:
            _add_errors(self, exc)
        return cleaned


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin[Season]):
    form = SeasonForm
    list_display = ("year", "name", "starts_on", "best_n", "minimum_games", "time_zone")
    readonly_fields = ("year", "name", "starts_on", "created_at")
    fieldsets = (
        (None, {"fields": ("year", "name", "starts_on", "created_at")}),
        ("Ruleset", {"fields": (*RULESET_FIELDS, "reason")}),
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # with its calendar: manage.py season_create or POST /api/seasons/

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Season, form: SeasonForm, change: bool) -> None:
        try:
            season_update(
                season=Season.objects.get(pk=obj.pk),
                changes=form.changes,
                by=signed_in(request.user),
                reason=form.cleaned_data["reason"],
            )
        except ServiceError as exc:
            self.message_user(request, exc.message, messages.ERROR)
        obj.refresh_from_db()


# --- events ----------------------------------------------------------------------------------


class EventAddForm(forms.ModelForm[Event]):
    reason = forms.CharField(max_length=500, help_text="why the event is added (logged)")

    class Meta:
        model = Event
        fields = (
            "season",
            "code",
            "kind",
            "format",
            "name",
            "city",
            "starts_at",
            "ends_at",
            "daily_opens",
            "daily_closes",
            "feeds",
            "open_entry",
            "champion_achievement",
        )

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        needed = ("season", "code", "kind", "format", "starts_at", "ends_at")
        if any(cleaned.get(field) is None for field in needed):
            return cleaned
        opens, closes = cleaned.get("daily_opens"), cleaned.get("daily_closes")
        if (opens is None) != (closes is None):
            self.add_error("daily_closes", "give both daily hours or neither")
            return cleaned
        self.daily_hours: tuple[time, time] | None = (
            (opens, closes) if opens is not None and closes is not None else None
        )
        try:
            event_add_check(
                season=cleaned["season"],
                code=cleaned["code"],
                kind=cleaned["kind"],
                starts_at=cleaned["starts_at"],
                ends_at=cleaned["ends_at"],
                event_format=cleaned["format"],
                feeds=cleaned.get("feeds"),
                daily_hours=self.daily_hours,
            )
        except ServiceError as exc:
            _add_errors(self, exc, {"daily_hours": "daily_closes"})
        return cleaned


class EventChangeForm(forms.ModelForm[Event]):
    cancel = forms.BooleanField(required=False, help_text="cancel the event")
    reason = forms.CharField(max_length=500, help_text="why it moves or is cancelled (logged)")

    class Meta:
        model = Event
        fields = ("starts_at", "ends_at")

    def clean(self) -> dict[str, Any]:
        super().clean()
        cleaned = self.cleaned_data
        if cleaned.get("starts_at") is None or cleaned.get("ends_at") is None:
            return cleaned
        try:
            if cleaned.get("cancel"):
                event_cancel_check(event=self.instance)
            elif self.has_changed():
                event_move_check(
                    event=self.instance, starts_at=cleaned["starts_at"], ends_at=cleaned["ends_at"]
                )
        except ServiceError as exc:
            _add_errors(self, exc)
        return cleaned


@admin.register(Event)
class EventAdmin(admin.ModelAdmin[Event]):
    list_display = (
        "code",
        "kind",
        "format",
        "station",
        "city",
        "starts_at",
        "ends_at",
        "status",
        "champion",
        "field_changed_at",
    )
    list_filter = ("season", "kind", "status", "format")
    search_fields = ("code", "name", "city")
    list_select_related = ("champion",)
    raw_id_fields = ("champion", "feeds", "finalised_by")
    actions = ("finalise",)

    def get_form(
        self, request: HttpRequest, obj: Event | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm[Event]]:
        kwargs["form"] = EventChangeForm if obj is not None else EventAddForm
        return super().get_form(request, obj, change, **kwargs)

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return (*EventAddForm.Meta.fields, "reason")
        return (*self.get_readonly_fields(request, obj), "starts_at", "ends_at", "cancel", "reason")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return ()
        return (
            "season",
            "code",
            "kind",
            "format",
            "name",
            "station",
            "city",
            "status",
            "feeds",
            "open_entry",
            "champion",
            "champion_achievement",
            "finalised_at",
            "finalised_by",
            "ruleset",
            "field_changed_at",
            "field_changed_by",
        )

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Event, form: Any, change: bool) -> None:
        reason = form.cleaned_data["reason"]
        try:
            if not change:
                data = form.cleaned_data
                created = event_add(
                    season=data["season"],
                    code=data["code"],
                    kind=data["kind"],
                    event_format=data["format"],
                    starts_at=data["starts_at"],
                    ends_at=data["ends_at"],
                    name=data["name"],
                    city=data["city"],
                    feeds=data.get("feeds"),
                    open_entry=data["open_entry"],
                    daily_hours=form.daily_hours,
                    champion_achievement=data["champion_achievement"] or None,
                    by=signed_in(request.user),
                    reason=reason,
                )
                obj.pk = created.pk
            elif form.cleaned_data["cancel"]:
                event_cancel(event=obj, by=signed_in(request.user), reason=reason)
            elif form.has_changed():
                event_move(
                    event=obj,
                    starts_at=form.cleaned_data["starts_at"],
                    ends_at=form.cleaned_data["ends_at"],
                    by=signed_in(request.user),
                    reason=reason,
                )
        except ServiceError as exc:
            self.message_user(request, exc.message, messages.ERROR)
        if obj.pk is not None:
            obj.refresh_from_db()

    @admin.action(description="Finalise the selected events (queued as a job)")
    def finalise(self, request: HttpRequest, queryset: QuerySet[Event]) -> None:
        queued = []
        for event in queryset.select_related("season").order_by("starts_at"):
            if event.status == EventStatus.FINALISED:
                continue
            try:
                event_finalise_check(event=event, force=False)
                event_finalise_enqueue(event, by=signed_in(request.user), force=False)
            except UnavailableError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                break  # the queue is down for the rest of the selection too
            except ServiceError as exc:
                self.message_user(request, exc.message, messages.ERROR)
                continue
            queued.append(event.code)
        if queued:
            self.message_user(request, f"finalisation queued: {', '.join(queued)}")


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin[Entry]):
    list_display = ("event", "player", "basis", "source", "reason", "created_at")
    list_filter = ("basis",)
    search_fields = ("event__code", "player__external_id", "player__name")
    list_select_related = ("event", "player", "source")
    raw_id_fields = ("event", "player", "source")


@admin.register(CalendarChange)
class CalendarChangeAdmin(ReadOnlyAdmin[CalendarChange]):
    list_display = ("at", "action", "season", "event", "by", "reason")
    list_filter = ("action", "season")
    list_select_related = ("season", "event", "by")


@admin.register(Correction)
class CorrectionAdmin(ReadOnlyAdmin[Correction]):
    list_display = ("at", "action", "event", "game", "player", "by", "reason")
    list_filter = ("action",)
    search_fields = ("event__code", "game__record_id", "player__external_id")
    list_select_related = ("event", "game", "player", "by")
    raw_id_fields = ("event", "game", "player", "by")


# --- games -----------------------------------------------------------------------------------

SESSION_FIELDS = ("ip", "device", "client")


class SeatInline(admin.TabularInline[Seat, Game]):
    model = Seat
    fields = ("seat", "player", "team", "hand", "hand_points", "score", "voided")
    readonly_fields = fields
    raw_id_fields = ("player",)
    can_delete = False
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Game)
class GameAdmin(ReadOnlyAdmin[Game]):
    list_display = ("record_id", "event", "mode", "ended_at", "ended_by", "seat_count", "voided")
    list_filter = ("mode", "ended_by", "voided")
    search_fields = ("record_id", "event__code")
    list_select_related = ("event",)
    raw_id_fields = ("event",)
    exclude = ("digest",)
    inlines = (SeatInline,)


@admin.register(Seat)
class SeatAdmin(ReadOnlyAdmin[Seat]):
    list_display = ("game", "seat", "player", "hand_points", "score", "voided")
    search_fields = ("game__record_id", "player__external_id")
    list_select_related = ("game", "player")
    raw_id_fields = ("game", "player", "event")

    def get_exclude(self, request: HttpRequest, obj: Any = None) -> Any:
        return () if has_role(request.user, REVIEWER) else SESSION_FIELDS


# --- seated events ---------------------------------------------------------------------------


class SeatedTableInline(admin.TabularInline[SeatedTable, SeatedRound]):
    model = SeatedTable
    fields = ("number", "result_entered_at", "result_entered_by")
    readonly_fields = fields
    can_delete = False
    extra = 0
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(SeatedRound)
class SeatedRoundAdmin(ReadOnlyAdmin[SeatedRound]):
    list_display = ("event", "number", "format", "target", "games", "seed", "created_at")
    list_select_related = ("event", "created_by")
    raw_id_fields = ("event", "created_by")
    inlines = (SeatedTableInline,)


class TableSeatInline(admin.TabularInline[TableSeat, SeatedTable]):
    model = TableSeat
    fields = ("seat", "player", "place", "points")
    readonly_fields = fields
    can_delete = False
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(SeatedTable)
class SeatedTableAdmin(ReadOnlyAdmin[SeatedTable]):
    list_display = ("round", "number", "result_entered_at", "result_entered_by")
    list_select_related = ("round__event", "result_entered_by")
    raw_id_fields = ("round", "result_entered_by")
    inlines = (TableSeatInline,)


class TableGameHandInline(admin.TabularInline[TableGameHand, TableGame]):
    model = TableGameHand
    fields = ("seat", "hand", "hand_points", "score")
    readonly_fields = fields
    can_delete = False
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class TableGameCorrectionInline(admin.TabularInline[TableGameCorrection, TableGame]):
    model = TableGameCorrection
    fields = ("at", "by", "reason", "before", "after")
    readonly_fields = fields
    can_delete = False
    extra = 0

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(TableGame)
class TableGameAdmin(ReadOnlyAdmin[TableGame]):
    """The games of match and partners tables, their hands and corrections (entered and
    corrected through the services: the API)."""

    list_display = ("table", "number", "entered_at", "entered_by")
    list_select_related = ("table__round__event", "entered_by")
    raw_id_fields = ("table", "entered_by")
    inlines = (TableGameHandInline, TableGameCorrectionInline)
