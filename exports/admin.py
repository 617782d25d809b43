from django.contrib import admin

from exports.models import RegistrySnapshot


@admin.register(RegistrySnapshot)
class RegistrySnapshotAdmin(admin.ModelAdmin[RegistrySnapshot]):
    """Snapshots are written by the monthly job only: read-only here."""

    list_display = ("month", "taken_on", "count", "created_at")
    fields = ("month", "taken_on", "count", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request: object) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False
