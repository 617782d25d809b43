"""The corrections log: every change to results after the fact, with who, when, why and the
diff of what it changed downstream (SPEC §4), and the organiser's decisions about events
whose field a correction changed after they were played (replay or keep)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class Correction(models.Model):
    class Action(models.TextChoices):
        VOID_GAME = "void_game", "void a game"
        RESTORE_GAME = "restore_game", "restore a voided game"
        FIX_GAME = "fix_game", "fix a game's hands"
        VOID_PLAYER = "void_player", "void a player's games"
        RESTORE_PLAYER = "restore_player", "restore a player's games"
        REPLAY_FIELD = "replay_field", "replay an event on its changed field"
        KEEP_FIELD = "keep_field", "keep an event's result on its changed field"

    action = models.CharField(max_length=16, choices=Action.choices)
    event = models.ForeignKey("tournaments.Event", on_delete=models.PROTECT, related_name="+")
    game = models.ForeignKey(
        "tournaments.Game", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    player = models.ForeignKey(
        "accounts.Player", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=500)
    diff = models.JSONField(default=dict)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.event_id} ({self.at:%Y-%m-%d})"
