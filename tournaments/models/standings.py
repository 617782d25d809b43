"""Standings: the live leaderboard, one row per (event, player), kept incrementally.

Each row holds what tournaments.domain.leaderboard keeps for a player: the count of games,
the best N scores (``kept``, descending), their sum, the best single game and when the total
was reached. Ranks are read from the index that matches the default tie-break order; a
finalised event also stores its frozen ranks and the advancement basis."""

from django.db import models
from django.utils import timezone


class Standing(models.Model):
    event = models.ForeignKey(
        "tournaments.Event", on_delete=models.CASCADE, related_name="standings"
    )
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="+")
    player_key = models.CharField(max_length=64)  # the external id: the last tie-break
    province = models.CharField(max_length=8)
    games = models.PositiveIntegerField(default=0)
    kept = models.JSONField(default=list)
    total = models.IntegerField(default=0)
    best = models.IntegerField(null=True, blank=True)
    reached_at = models.DateTimeField(null=True, blank=True)
    eligible = models.BooleanField(default=False)
    # Frozen at finalisation (SPEC §4):
    rank = models.PositiveIntegerField(null=True, blank=True)
    province_rank = models.PositiveIntegerField(null=True, blank=True)
    advanced = models.BooleanField(default=False)
    by_national = models.BooleanField(default=False)
    by_province = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["event", "player"], name="standing_unique_player"),
            models.CheckConstraint(
                condition=models.Q(games__gte=0), name="standing_games_non_negative"
            ),
        ]
        indexes = [
            models.Index(
                "event",
                "eligible",
                models.F("total").desc(),
                models.F("games").desc(),
                models.F("best").desc(),
                "reached_at",
                "player_key",
                name="standing_rank_idx",
            ),
            models.Index(
                "event",
                "province",
                "eligible",
                models.F("total").desc(),
                models.F("games").desc(),
                models.F("best").desc(),
                "reached_at",
                "player_key",
                name="standing_province_rank_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_id}:{self.player_key} {self.total}"
