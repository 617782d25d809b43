"""Players' notices in the admin: read-only (written by the flows, never by hand)."""

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from notices.models import Notice, NoticeDelivery


class NoticeDeliveryInline(admin.TabularInline[NoticeDelivery, Notice]):
    model = NoticeDelivery
    extra = 0
    can_delete = False
    fields = ("channel", "email", "webhook", "state", "attempts", "error", "sent_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(Notice)
class NoticeAdmin(admin.ModelAdmin[Notice]):
    list_display = ("id", "key", "player", "kind", "on", "created_at")
    list_filter = ("kind",)
    search_fields = ("key", "player__external_id")
    raw_id_fields = ("player",)
    readonly_fields = ("key", "player", "kind", "params", "on", "created_at")
    inlines = [NoticeDeliveryInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
