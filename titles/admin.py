"""Title admin: rules are editable data; the ledger is decided only through the services
(approve / reject actions); state and history are read-only (SPEC §6)."""

from typing import Any, TypeVar

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from core.errors import ServiceError
from flows import grants
from titles import services
from titles.models import (
    InternationalMaster,
    Notification,
    PlayerTitle,
    Qualification,
    QualificationRule,
    Revocation,
    TitleChange,
    TitleTerm,
    WorldCupRepresentative,
)

M = TypeVar("M", bound=Model)


@admin.register(QualificationRule)
class QualificationRuleAdmin(admin.ModelAdmin[QualificationRule]):
    list_display = ("key", "confers", "requires_valid_master", "active", "description")
    list_filter = ("confers", "active")
    search_fields = ("key", "description")


class ReadOnlyAdmin(admin.ModelAdmin[M]):
    """State written by services only: viewable, never added, edited or deleted here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _decide(
    admin_view: admin.ModelAdmin[Qualification],
    request: HttpRequest,
    rows: QuerySet[Qualification],
    decide: Any,
    verb: str,
) -> None:
    done, refused = 0, []
    for qualification in rows.select_related("player").order_by("id"):
        try:
            decide(
                qualification=qualification,
                by=request.user,
                reason=f"{verb} in the admin",
                expected_version=qualification.version,
            )
        except ServiceError as exc:
            refused.append(f"{qualification.pk}: {exc.message}")
        else:
            done += 1
    admin_view.message_user(request, f"{done} {verb}.", messages.SUCCESS)
    if refused:
        admin_view.message_user(request, "Refused — " + "; ".join(refused), messages.WARNING)


@admin.register(Qualification)
class QualificationAdmin(ReadOnlyAdmin[Qualification]):
    list_display = ("player", "source", "rule", "on", "confers", "status", "version", "created_at")
    list_filter = ("status", "confers", "rule")
    search_fields = ("player__external_id", "player__name", "source")
    date_hierarchy = "on"
    actions = ["approve", "reject"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Needed for the actions; every field stays read-only.
        return obj is None and request.user.has_perm("titles.change_qualification")

    @admin.action(description="Approve the selected grants", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[Qualification]) -> None:
        _decide(self, request, queryset, grants.qualification_approve, "approved")

    @admin.action(description="Reject the selected grants", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[Qualification]) -> None:
        _decide(self, request, queryset, services.qualification_reject, "rejected")


@admin.register(PlayerTitle)
class PlayerTitleAdmin(ReadOnlyAdmin[PlayerTitle]):
    list_display = ("player", "status", "valid_until", "lifetime_since", "updated_at")
    list_filter = ("status",)
    search_fields = ("player__external_id", "player__name")


@admin.register(TitleTerm)
class TitleTermAdmin(ReadOnlyAdmin[TitleTerm]):
    list_display = ("code", "player", "start", "valid_until", "state")
    list_filter = ("state",)
    search_fields = ("code", "player__external_id", "player__name")


@admin.register(TitleChange)
class TitleChangeAdmin(ReadOnlyAdmin[TitleChange]):
    list_display = ("player", "kind", "on", "valid_until", "source", "by", "at", "reason")
    list_filter = ("kind",)
    search_fields = ("player__external_id", "player__name", "source")


@admin.register(Revocation)
class RevocationAdmin(ReadOnlyAdmin[Revocation]):
    list_display = ("player", "on", "case_ref", "by", "at", "restored_at")
    search_fields = ("player__external_id", "case_ref")


@admin.register(WorldCupRepresentative)
class WorldCupRepresentativeAdmin(ReadOnlyAdmin[WorldCupRepresentative]):
    list_display = ("year", "month", "ranking", "player", "entered_by", "entered_at")
    list_filter = ("year", "ranking")


@admin.register(InternationalMaster)
class InternationalMasterAdmin(ReadOnlyAdmin[InternationalMaster]):
    list_display = ("player", "granted_on", "valid_until", "source", "entered_by")
    search_fields = ("player__external_id", "player__name", "source")


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin[Notification]):
    list_display = ("player", "term", "valid_until", "days", "channel", "email", "sent_at")
    list_filter = ("days",)
