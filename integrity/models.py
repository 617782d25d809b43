"""Integrity: audit runs and their flags, cases, decisions, sanctions and appeals (SPEC §7).

Every step is a row with who, when and why (``CaseEvent``); statistics open and rank cases,
reviewers decide. Personal data in evidence (IP, device) is shown to reviewers only."""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

if TYPE_CHECKING:
    from accounts.models import Player


class AuditRun(models.Model):
    """One audit over a scope (an event after it closes, or a season window). ``key`` names
    the scope, so re-running an audit replaces that run's flags instead of adding more."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        COMPLETED = "completed", "completed"
        FAILED = "failed", "failed"

    key = models.CharField(max_length=80, unique=True)
    event = models.ForeignKey(
        "tournaments.Event", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    window_start = models.DateTimeField()
    window_end = models.DateTimeField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    params = models.JSONField(default=dict)
    stats = models.JSONField(default=dict)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return self.key


class Flag(models.Model):
    """A detector's finding on a set of players, with its statistic and evidence pointers."""

    class Detector(models.TextChoices):
        COSEATING = "coseating", "co-seating beyond the matchmaker"
        POINTFLOW = "pointflow", "point flow / feeding"
        SESSIONS = "sessions", "shared sessions (多开)"
        SAME_TABLE = "same_table", "one device or IP on two seats of a table"
        BOOSTING = "boosting", "boosting (代练)"
        SOFTPLAY = "softplay", "soft play: a partner spared (放水)"
        TOGETHER = "together", "better together than apart (串谋)"
        FED = "fed", "a fed account: its group's hands in its wins (养号)"
        KEPT = "kept", "cards kept: one of a pair holds the other's cards (串谋)"

    class Family(models.TextChoices):
        BEHAVIOUR = "behaviour", "behaviour"
        LINKS = "links", "links"

    run = models.ForeignKey(AuditRun, on_delete=models.CASCADE, related_name="flags")
    detector = models.CharField(max_length=12, choices=Detector.choices)
    version = models.CharField(max_length=20)
    family = models.CharField(max_length=10, choices=Family.choices)
    players = models.ManyToManyField("accounts.Player", related_name="+")
    player_keys = models.JSONField(default=list)  # external ids, sorted: the flag's identity
    statistic = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True)
    q_value = models.FloatField(null=True, blank=True)
    near_conclusive = models.BooleanField(default=False)
    evidence = models.JSONField(default=dict)
    score = models.FloatField(default=0.0)

    class Meta:
        ordering = ["-score", "id"]
        indexes = [models.Index(fields=["run", "detector"])]

    def __str__(self) -> str:
        return f"{self.detector} {','.join(self.player_keys)}"


class Case(models.Model):
    """A cluster of related players whose flags agree across families (or one near-conclusive
    event). Pending title grants of its players are held while it is open."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        DISMISSED = "dismissed", "dismissed"
        SANCTIONED = "sanctioned", "sanctioned"
        REVERSED = "reversed", "reversed on appeal"

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    key = models.CharField(max_length=200, unique=True)  # sorted player keys of the cluster
    players: "models.ManyToManyField[Player, CasePlayer]" = models.ManyToManyField(
        "accounts.Player", through="CasePlayer", related_name="+"
    )
    flags = models.ManyToManyField(Flag, related_name="cases")
    families = models.JSONField(default=list)
    score = models.FloatField(default=0.0)
    reason = models.CharField(max_length=300, blank=True)
    opened_at = models.DateTimeField(default=timezone.now)
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-score", "id"]
        indexes = [models.Index(fields=["status", "-score"])]

    def __str__(self) -> str:
        return f"case {self.pk} ({self.status})"


class CasePlayer(models.Model):
    class Role(models.TextChoices):
        UNKNOWN = "unknown", "unknown"
        BENEFICIARY = "beneficiary", "beneficiary"
        HELPER = "helper", "helper"
        CLEARED = "cleared", "cleared"

    case = models.ForeignKey(Case, on_delete=models.CASCADE)
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT)
    role = models.CharField(max_length=12, choices=Role.choices, default=Role.UNKNOWN)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["case", "player"], name="case_player_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.case_id}:{self.player_id} {self.role}"


class CaseEvent(models.Model):
    """The log of a case: every step with who, when, why and what it did."""

    class Action(models.TextChoices):
        OPENED = "opened", "opened"
        FLAGGED_AGAIN = "flagged_again", "flagged again by an audit after the decision"
        TAKEN = "taken", "taken by a reviewer"
        DISMISSED = "dismissed", "dismissed"
        SANCTIONED = "sanctioned", "sanctioned"
        APPEALED = "appealed", "appealed"
        APPEAL_REJECTED = "appeal_rejected", "appeal rejected"
        REVERSED = "reversed", "reversed on appeal"

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=16, choices=Action.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=500, blank=True)
    data = models.JSONField(default=dict)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.case_id} {self.action}"


class Sanction(models.Model):
    """What a decision did to one player: games voided, titles revoked, suspension — with the
    references needed to undo it exactly on appeal."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="sanctions")
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="+")
    role = models.CharField(max_length=12, choices=CasePlayer.Role.choices)
    effective_on = models.DateField()
    void_games = models.BooleanField(default=False)
    events = models.ManyToManyField("tournaments.Event", related_name="+", blank=True)
    revoke_titles = models.BooleanField(default=False)
    suspend = models.BooleanField(default=False)
    revocation = models.ForeignKey(
        "titles.Revocation", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    corrections = models.JSONField(default=list)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+"
    )
    decided_at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=500)
    reversed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-decided_at", "id"]

    def __str__(self) -> str:
        return f"sanction {self.pk} on {self.player_id}"


class Appeal(models.Model):
    """A sanctioned player's appeal, decided by a reviewer other than the one who sanctioned."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        UPHELD = "upheld", "upheld (sanction reversed)"
        REJECTED = "rejected", "rejected"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="appeals")
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="+")
    filed_at = models.DateTimeField(default=timezone.now)
    statement = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-filed_at"]

    def __str__(self) -> str:
        return f"appeal {self.pk} ({self.status})"
