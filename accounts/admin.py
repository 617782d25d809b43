from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from accounts.models import ApiToken, Player, PlayerChange, User

admin.site.register(User, UserAdmin)


@admin.register(Player)
class PlayerAdmin(admin.ModelAdmin[Player]):
    list_display = ("external_id", "name", "province", "user")
    list_filter = ("province",)
    search_fields = ("external_id", "name")
    raw_id_fields = ("user",)


@admin.register(PlayerChange)
class PlayerChangeAdmin(admin.ModelAdmin[PlayerChange]):
    list_display = ("player", "field", "old", "new", "at", "by", "reason")
    raw_id_fields = ("player", "by")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin[ApiToken]):
    list_display = ("name", "user", "prefix", "created_at", "expires_at", "revoked_at")
    readonly_fields = ("prefix", "digest", "created_at", "last_used_at")
    raw_id_fields = ("user",)
