"""Admin for integrity (SPEC §7): audit runs and flags read-only (statistics are written by
audits only), cases with their players and log, sanctions and appeals. Decisions go through
the workflow services (the API), so the admin never edits a case's status or a sanction."""

from typing import Any, TypeVar

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from integrity.models import Appeal, AuditRun, Case, CaseEvent, CasePlayer, Flag, Sanction

M = TypeVar("M", bound=Model)


class ReadOnlyAdmin(admin.ModelAdmin[M]):
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AuditRun)
class AuditRunAdmin(ReadOnlyAdmin[AuditRun]):
    list_display = ("key", "event", "status", "attempts", "started_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("key",)
    date_hierarchy = "started_at"


@admin.register(Flag)
class FlagAdmin(ReadOnlyAdmin[Flag]):
    list_display = ("id", "run", "detector", "version", "player_keys", "q_value", "score")
    list_filter = ("detector", "family", "near_conclusive")
    search_fields = ("run__key", "player_keys")
    list_select_related = ("run",)
    raw_id_fields = ("run", "players")


class ReadOnlyInline(admin.TabularInline[M, Case]):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class CasePlayerInline(ReadOnlyInline[CasePlayer]):
    model = CasePlayer
    fields = ("player", "role")
    readonly_fields = fields


class CaseEventInline(ReadOnlyInline[CaseEvent]):
    model = CaseEvent
    fields = ("at", "action", "by", "reason", "data")
    readonly_fields = fields


@admin.register(Case)
class CaseAdmin(ReadOnlyAdmin[Case]):
    list_display = ("id", "status", "score", "families", "key", "assigned_to", "opened_at")
    list_filter = ("status",)
    search_fields = ("key",)
    inlines = (CasePlayerInline, CaseEventInline)
    exclude = ("flags",)


@admin.register(Sanction)
class SanctionAdmin(ReadOnlyAdmin[Sanction]):
    list_display = ("id", "case", "player", "role", "effective_on", "reversed_at")
    list_filter = ("role", "void_games", "revoke_titles", "suspend")
    raw_id_fields = ("case", "player", "revocation", "events")


@admin.register(Appeal)
class AppealAdmin(ReadOnlyAdmin[Appeal]):
    list_display = ("id", "case", "player", "status", "filed_at", "decided_by")
    list_filter = ("status",)
    raw_id_fields = ("case", "player")
