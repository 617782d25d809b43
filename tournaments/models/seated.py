"""Seated events (live finals, championships): rounds of tables seated by the organiser
from a recorded seed (SPEC §4), and the placements entered per table.

A round's ``format`` says how its tables play: one game whose places the organiser enters;
a match of several games to a target (cumulative or elimination, SPEC §4 "Matches at one
table"), the places following from it; or a round of a rotating-partners team event (SPEC
§4 "Team events"), each table two teams of two playing ``games`` games. The games of a match
or a partners round are kept per table (``TableGame``, the hands left per seat:
``TableGameHand``), and every correction of one with who, when and why
(``TableGameCorrection``)."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class SeatedRound(models.Model):
    class Format(models.TextChoices):
        GAME = "game", "one game (places entered)"
        CUMULATIVE = "cumulative", "match, cumulative (累积法)"
        ELIMINATION = "elimination", "match, elimination (淘汰法)"
        PARTNERS = "partners", "rotating partners (组队)"

    event = models.ForeignKey(
        "tournaments.Event", on_delete=models.CASCADE, related_name="seated_rounds"
    )
    number = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField()
    format = models.CharField(max_length=12, choices=Format.choices, default=Format.GAME)
    # A match's target (cumulative and elimination rounds only).
    target = models.PositiveIntegerField(null=True, blank=True)
    # The games each table of a partners round plays.
    games = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["event", "number"]
        constraints = [
            models.UniqueConstraint(fields=["event", "number"], name="seated_round_unique"),
            models.CheckConstraint(
                condition=models.Q(format__in=["game", "cumulative", "elimination", "partners"]),
                name="seated_round_format_valid",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(format__in=["cumulative", "elimination"], target__gte=1)
                    | (
                        ~models.Q(format__in=["cumulative", "elimination"])
                        & models.Q(target__isnull=True)
                    )
                ),
                name="seated_round_match_target",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(format="partners", games__gte=1)
                    | (~models.Q(format="partners") & models.Q(games__isnull=True))
                ),
                name="seated_round_partners_games",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} round {self.number}"


class SeatedTable(models.Model):
    round = models.ForeignKey(SeatedRound, on_delete=models.CASCADE, related_name="tables")
    number = models.PositiveSmallIntegerField()
    result_entered_at = models.DateTimeField(null=True, blank=True)
    result_entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["round", "number"]
        constraints = [
            models.UniqueConstraint(fields=["round", "number"], name="seated_table_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.round} table {self.number}"


class TableSeat(models.Model):
    table = models.ForeignKey(SeatedTable, on_delete=models.CASCADE, related_name="seats")
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="+")
    seat = models.PositiveSmallIntegerField()
    place = models.PositiveSmallIntegerField(null=True, blank=True)
    points = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["table", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["table", "seat"], name="table_seat_unique"),
            models.UniqueConstraint(fields=["table", "player"], name="table_player_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.table} seat {self.seat}"


class TableGame(models.Model):
    """One game of a match or of a partners round at a seated table, numbered from 1 in the
    order played; its hands are ``TableGameHand`` rows (none for a seat already eliminated)."""

    table = models.ForeignKey(SeatedTable, on_delete=models.CASCADE, related_name="games")
    number = models.PositiveSmallIntegerField()
    entered_at = models.DateTimeField(default=timezone.now)
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["table", "number"]
        constraints = [
            models.UniqueConstraint(fields=["table", "number"], name="table_game_unique"),
            models.CheckConstraint(condition=models.Q(number__gte=1), name="table_game_number"),
        ]

    def __str__(self) -> str:
        return f"{self.table} game {self.number}"


class TableGameHand(models.Model):
    """A seat's hand left at the end of a table game (card codes, space-separated), its
    points and what the game adds to the player's total: in a cumulative match the points
    won, in an elimination match the hand points taken, in a partners round the tour
    doubles score."""

    game = models.ForeignKey(TableGame, on_delete=models.CASCADE, related_name="hands")
    seat = models.ForeignKey(TableSeat, on_delete=models.CASCADE, related_name="hands")
    hand = models.CharField(max_length=400, blank=True)
    hand_points = models.PositiveIntegerField()
    score = models.IntegerField()

    class Meta:
        ordering = ["game", "seat__seat"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seat"], name="table_game_hand_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.game} seat {self.seat_id}"


class TableGameCorrection(models.Model):
    """The log of a table game's corrections: who, when, why, and the hands before and
    after (``{player id: [card codes]}``)."""

    game = models.ForeignKey(TableGame, on_delete=models.CASCADE, related_name="corrections")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=500)
    before = models.JSONField(default=dict)
    after = models.JSONField(default=dict)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.game} corrected ({self.at:%Y-%m-%d})"
