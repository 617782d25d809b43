"""Player ratings (SPEC §5): a multiplayer rating over all games, with history per player,
shown as provisional until a minimum number of games.

* :class:`Rating` — a player's current rating (OpenSkill Plackett–Luce ``mu`` and ``sigma``)
  and its display value ``ordinal`` = ``mu - 3 * sigma``, the conservative estimate that
  starts at 0 for a new player (mu 25, sigma 25/3) and rises as games confirm the skill.
  ``provisional`` is ``games < settings.RATING_PROVISIONAL_GAMES`` (default 20) when the
  row was last written.
* :class:`RatingHistory` — the rating after each game a player was rated in; at most one row
  per (player, game), so no game is ever rated twice.
* :class:`RatingState` — the single row that ``ratings.services`` locks while it works, with
  its watermarks.

All three are derived data: ``ratings_replay`` rebuilds them from the games.
"""

from django.db import models
from django.utils import timezone


class Rating(models.Model):
    player = models.OneToOneField(
        "accounts.Player", on_delete=models.CASCADE, related_name="rating"
    )
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField()
    games = models.PositiveIntegerField()
    provisional = models.BooleanField()
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["-ordinal", "player"], name="rating_rank")]

    def __str__(self) -> str:
        return f"{self.player_id}: {self.ordinal:.2f} ({self.games} games)"


class RatingHistory(models.Model):
    """A player's rating right after one game; ``games`` counts their rated games so far,
    this one included. ``ended_at`` repeats the game's so the chart reads one index."""

    player = models.ForeignKey("accounts.Player", on_delete=models.CASCADE, related_name="+")
    game = models.ForeignKey("tournaments.Game", on_delete=models.CASCADE, related_name="+")
    ended_at = models.DateTimeField()
    mu = models.FloatField()
    sigma = models.FloatField()
    ordinal = models.FloatField()
    games = models.PositiveIntegerField()

    class Meta:
        verbose_name_plural = "rating history"
        indexes = [models.Index(fields=["player", "ended_at"], name="rating_history_chart")]
        constraints = [
            models.UniqueConstraint(fields=["player", "game"], name="rating_history_once"),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} after {self.game_id}: {self.ordinal:.2f}"


class RatingState(models.Model):
    """The one row (pk 1) of the rating run's progress.

    ``scanned_game_id`` is the arrival watermark: the highest game id examined. The time
    watermark ``rated_until_*`` is the latest (ended_at, record_id) rated; a game rated
    after it although it ended earlier is counted in ``late_games`` until the next replay
    puts it back in time order.
    """

    scanned_game_id = models.PositiveBigIntegerField(default=0)
    rated_until_ended_at = models.DateTimeField(null=True, blank=True)
    rated_until_record_id = models.CharField(max_length=64, blank=True)
    games_rated = models.PositiveBigIntegerField(default=0)
    late_games = models.PositiveBigIntegerField(default=0)
    replayed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"rated {self.games_rated} games, scanned to game {self.scanned_game_id}"
