"""Seated events (live finals, championships): rounds of tables seated by the organiser
from a recorded seed (SPEC §4), and the placements entered per table."""

from django.conf import settings
from django.db import models
from django.utils import timezone


class SeatedRound(models.Model):
    event = models.ForeignKey(
        "tournaments.Event", on_delete=models.CASCADE, related_name="seated_rounds"
    )
    number = models.PositiveSmallIntegerField()
    seed = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["event", "number"]
        constraints = [
            models.UniqueConstraint(fields=["event", "number"], name="seated_round_unique"),
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
