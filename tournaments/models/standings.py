"""Standings: the live leaderboard, one row per (event, player), kept incrementally.

Each row holds what tournaments.domain.leaderboard keeps for a player: the count of games,
the best N scores (``kept``, descending), their sum, the best single game and when the total
was reached. Ranks are positions in the index that matches the default tie-break order, for a
live and a finalised event alike (SPEC §4): a finalised event accepts no new games, so its
index order is its frozen ranking.

``rank`` / ``province_rank`` are stored for the rows that advanced from a finalised event
only, next to ``advanced`` / ``by_national`` / ``by_province``: they are the basis of the
player's entry into the fed event (``tournaments.services.finalise``). Every other row's rank
is read from the index (``tournaments.selectors.leaderboard``).

Indexes, chosen so that each write keeps as few as it needs (ingest rewrites these rows):
``standing_unique_player`` (player, event) also serves every lookup by player;
``standing_rank_idx`` / ``standing_province_rank_idx`` serve every lookup by event (pages,
counts, ranks, deletes); ``standing_advanced_idx`` is a partial index over the few advanced
rows. The foreign keys have no index of their own: each would repeat a prefix of these.
"""

from django.db import models
from django.utils import timezone


class Standing(models.Model):
    event = models.ForeignKey(
        "tournaments.Event", on_delete=models.CASCADE, related_name="standings", db_index=False
    )
    player = models.ForeignKey(
        "accounts.Player", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    player_key = models.CharField(max_length=64)  # the external id: the last tie-break
    province = models.CharField(max_length=8)
    games = models.PositiveIntegerField(default=0)
    kept = models.JSONField(default=list)
    total = models.IntegerField(default=0)
    best = models.IntegerField(null=True, blank=True)
    reached_at = models.DateTimeField(null=True, blank=True)
    eligible = models.BooleanField(default=False)
    # Written by the finalisation for the rows that advance (SPEC §2, §4):
    rank = models.PositiveIntegerField(null=True, blank=True)
    province_rank = models.PositiveIntegerField(null=True, blank=True)
    advanced = models.BooleanField(default=False)
    by_national = models.BooleanField(default=False)
    by_province = models.BooleanField(default=False)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "event"], name="standing_unique_player"),
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
            models.Index(
                fields=["event"], condition=models.Q(advanced=True), name="standing_advanced_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_id}:{self.player_key} {self.total}"
