"""Games and their seats, as ingested from game record v1 (SPEC §3, §9)."""

from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class MoveLogField(models.JSONField):
    """A JSON value stored as PostgreSQL ``json`` (the text, checked), not ``jsonb``.

    A move log is written once, read whole and never searched inside; ``jsonb`` would build
    and compress a tree of ~500 small values per game, about four times the cost of the
    ``json`` text on the ingest path (bench stage ``replay``). psycopg reads ``json`` into
    Python values itself, so a value may arrive decoded."""

    def db_type(self, connection: Any) -> str:
        return "json"

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value is None or not isinstance(value, str | bytes):
            return value
        return super().from_db_value(value, expression, connection)


class Game(models.Model):
    """One game of an event. ``record_id`` is the game server's id (idempotency key) and
    ``digest`` the SHA-256 of the canonical record, so a different record under an existing
    id is told apart from a harmless re-send."""

    class Mode(models.TextChoices):
        SINGLES = "singles", "singles"
        DOUBLES = "doubles", "doubles"

    class EndedBy(models.TextChoices):
        OUT = "out", "out"
        TIME = "time", "time"

    record_id = models.CharField(max_length=64, unique=True)
    digest = models.CharField(max_length=64)
    # Indexed by (event, ended_at) below: no single-column index.
    event = models.ForeignKey(
        "tournaments.Event", on_delete=models.PROTECT, related_name="games", db_index=False
    )
    mode = models.CharField(max_length=8, choices=Mode.choices)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    ended_by = models.CharField(max_length=4, choices=EndedBy.choices)
    seat_count = models.PositiveSmallIntegerField()
    # The move log v1 as it replayed (SPEC §9): stored as ``json``, see MoveLogField.
    log = MoveLogField(null=True, blank=True)
    voided = models.BooleanField(default=False)
    ingested_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["event", "ended_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ended_at__gte=models.F("started_at")), name="game_times_order"
            ),
            models.CheckConstraint(
                condition=models.Q(seat_count__gte=2, seat_count__lte=10), name="game_seat_count"
            ),
            models.CheckConstraint(
                condition=models.Q(mode__in=["singles", "doubles"]), name="game_mode_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(ended_by__in=["out", "time"]), name="game_ended_by_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.record_id


class Seat(models.Model):
    """A player's seat at a game: hand left, its points and the game score it earned.

    ``event``, ``ended_at`` and ``voided`` repeat the game's so a player's scores in an
    event are read from one index without a join. The session (ip, device, client) is
    personal data: reviewers only.

    ``chances`` are the player's chances in the game's move log (to punish, to challenge a
    +4, to hand over a better hand with a 7: ``tournaments.domain.chances``; the soft-play
    detector's data), written at ingest from the replay that checked the log: flat
    quadruples (target player id, kind, chances, punished), one per player and kind; null
    when the game has no log or the player had no chance.
    The target is the player's pk (players never change seats), so the audit sums them per
    pair without a join (``integrity.sql.softplay``)."""

    # No single-column indexes on game and event: the unique (game, seat) and the (event,
    # player, ended_at) indexes lead with them, and every index costs each ingested seat.
    # The partial index of the voided seats' games costs an ingested seat nothing (seats
    # arrive unvoided) and finds the few games an audit must check for lone seats.
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats", db_index=False)
    seat = models.PositiveSmallIntegerField()
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="seats")
    team = models.PositiveSmallIntegerField(null=True, blank=True)
    hand = models.CharField(max_length=400, blank=True)
    hand_points = models.PositiveIntegerField()
    score = models.IntegerField()
    event = models.ForeignKey(
        "tournaments.Event", on_delete=models.PROTECT, related_name="+", db_index=False
    )
    ended_at = models.DateTimeField()
    voided = models.BooleanField(default=False)
    ip = models.GenericIPAddressField(null=True, blank=True)
    device = models.CharField(max_length=64, blank=True)
    client = models.CharField(max_length=32, blank=True)
    chances = ArrayField(models.BigIntegerField(), null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["event", "player", "ended_at"]),
            models.Index(fields=["game"], condition=models.Q(voided=True), name="seat_voided_game"),
            # The seats with chances, by window: an audit reads only these, and a
            # seat without a log (or without a chance) costs this index nothing.
            models.Index(
                fields=["event", "ended_at"],
                condition=models.Q(chances__isnull=False),
                name="seat_chances_window",
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["game", "seat"], name="seat_unique_position"),
            models.UniqueConstraint(fields=["game", "player"], name="seat_unique_player"),
            models.CheckConstraint(
                condition=models.Q(team__isnull=True) | models.Q(team__in=[0, 1]),
                name="seat_team_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.game_id}#{self.seat}"
