"""Seasons with their ruleset as data, and their events (SPEC §2, §4)."""

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from tournaments.domain.calendar import EventKind as PlannedKind
from tournaments.domain.cards import CLASSIC
from tournaments.domain.cities import DEFAULT_CITIES
from tournaments.domain.leaderboard import DEFAULT_ORDER
from tournaments.domain.rules import Ruleset, ruleset_from_spec


def default_quotas() -> dict[str, dict[str, int]]:
    """SPEC §2: who advances from each kind of event to the one it feeds."""
    return {
        "weekly_qualifier": {"national": 0, "per_province": 100},
        "weekly_final": {"national": 100, "per_province": 10},
        "monthly_final": {"national": 50, "per_province": 3},
        "quarterly_final": {"national": 10, "per_province": 1},
        "annual_final": {"national": 0, "per_province": 0},
    }


def default_card_table() -> dict[str, object]:
    return CLASSIC.to_dict()


def default_tiebreaks() -> list[str]:
    return list(DEFAULT_ORDER)


def default_cities() -> list[str]:
    return list(DEFAULT_CITIES)


def default_play_ruleset() -> dict[str, object]:
    """The rules of play a season starts with: the classic preset (SPEC §3)."""
    return {"preset": "classic", "switches": {}}


def default_placement_points() -> dict[str, list[int]]:
    return {"3": [4, 2, 0], "4": [4, 2, 1, 0], "5": [4, 2, 1, 0, 0]}


class Season(models.Model):
    """One year of the tour and its ruleset (editable in the admin, read by every service)."""

    class SinglesScoring(models.TextChoices):
        TOUR = "tour_singles", "tour singles (margins)"
        CUMULATIVE = "cumulative", "cumulative (累积法)"
        PENALTY = "penalty", "penalty (淘汰法)"

    year = models.PositiveSmallIntegerField(unique=True)
    name = models.CharField(max_length=100)
    starts_on = models.DateField()
    time_zone = models.CharField(max_length=40, default="Asia/Shanghai")
    best_n = models.PositiveSmallIntegerField(default=15)
    minimum_games = models.PositiveSmallIntegerField(default=15)
    quotas = models.JSONField(default=default_quotas)
    card_table = models.JSONField(default=default_card_table)
    singles_scoring = models.CharField(
        max_length=20, choices=SinglesScoring.choices, default=SinglesScoring.TOUR
    )
    tiebreak_order = models.JSONField(default=default_tiebreaks)
    cities = models.JSONField(default=default_cities)
    placement_points = models.JSONField(default=default_placement_points)
    # The rules of play (``tournaments.domain.rules``): a preset and its changed switches.
    play_ruleset = models.JSONField(default=default_play_ruleset)
    created_at = models.DateTimeField(default=timezone.now)

    #: The ruleset fields each finalised event keeps (``Event.ruleset``).
    rule_fields = (
        "best_n",
        "minimum_games",
        "quotas",
        "card_table",
        "singles_scoring",
        "placement_points",
        "tiebreak_order",
    )

    class Meta:
        ordering = ["-year"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(best_n__gte=1), name="season_best_n_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name or str(self.year)


class EventKind(models.TextChoices):
    """The five online kinds of SPEC §2 (values as ``tournaments.domain.calendar.EventKind``),
    and the events organisers add: championships and custom events."""

    WEEKLY_QUALIFIER = PlannedKind.WEEKLY_QUALIFIER.value, "周预选赛 weekly qualifier"
    WEEKLY_FINAL = PlannedKind.WEEKLY_FINAL.value, "周赛 weekly final"
    MONTHLY_FINAL = PlannedKind.MONTHLY_FINAL.value, "月赛 monthly final"
    QUARTERLY_FINAL = PlannedKind.QUARTERLY_FINAL.value, "季赛 quarterly final"
    ANNUAL_FINAL = PlannedKind.ANNUAL_FINAL.value, "年赛 annual final"
    CHAMPIONSHIP = "championship", "锦标赛 championship"
    CUSTOM = "custom", "特别赛事 custom"


class EventStatus(models.TextChoices):
    SCHEDULED = "scheduled", "scheduled"
    FINALISED = "finalised", "finalised"
    CANCELLED = "cancelled", "cancelled"


class Event(models.Model):
    """An event of a season: a leaderboard window (online kinds) or a seated final.

    ``open_entry`` events (weekly qualifiers) enter every player automatically; the others
    accept games only from their entrants. ``leaderboard_version`` grows with every change
    of the event's standings, so cached pages key on it and are never stale past a write.
    """

    class Format(models.TextChoices):
        LEADERBOARD = "leaderboard", "leaderboard (best N)"
        SEATED = "seated", "seated tables"

    season = models.ForeignKey(Season, on_delete=models.PROTECT, related_name="events")
    code = models.CharField(max_length=32, unique=True)
    kind = models.CharField(max_length=20, choices=EventKind.choices)
    format = models.CharField(max_length=12, choices=Format.choices, default=Format.LEADERBOARD)
    name = models.CharField(max_length=100, blank=True)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    daily_opens = models.TimeField(null=True, blank=True)
    daily_closes = models.TimeField(null=True, blank=True)
    month = models.CharField(max_length=7, blank=True)
    station = models.PositiveSmallIntegerField(null=True, blank=True)
    city = models.CharField(max_length=20, blank=True)
    feeds = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="fed_by"
    )
    open_entry = models.BooleanField(default=False)
    status = models.CharField(
        max_length=12, choices=EventStatus.choices, default=EventStatus.SCHEDULED
    )
    champion = models.ForeignKey(
        "accounts.Player", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # The qualification rule (titles.QualificationRule.key) the champion earns, if any.
    champion_achievement = models.CharField(max_length=40, blank=True)
    finalised_at = models.DateTimeField(null=True, blank=True)
    finalised_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    leaderboard_version = models.PositiveBigIntegerField(default=0)
    # The season's result rules the event was finalised with (``Season.rule_fields``);
    # empty while it is not finalised: it follows the season's current ruleset.
    ruleset = models.JSONField(default=dict, blank=True)
    # The event's own rules of play, when it does not follow its season's ``play_ruleset``.
    play_ruleset = models.JSONField(null=True, blank=True)
    # Set when a correction upstream changed the field of this event after it was played;
    # cleared by the organiser's decision (replay or keep).
    field_changed_at = models.DateTimeField(null=True, blank=True)
    field_changed_by = models.ForeignKey(
        "tournaments.Correction",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["starts_at", "code"]
        indexes = [models.Index(fields=["season", "starts_at"])]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="event_window_order"
            ),
            models.UniqueConstraint(
                fields=["season", "station"],
                condition=models.Q(station__isnull=False) & ~models.Q(status="cancelled"),
                name="event_station_unique_in_season",
            ),
        ]

    def __str__(self) -> str:
        return self.code

    @property
    def is_finalised(self) -> bool:
        return self.status == EventStatus.FINALISED

    def play_rules(self) -> Ruleset:
        """The rules of play of this event: its own ruleset, else its season's (SPEC §3).
        Raises ValueError when the stored spec is broken."""
        spec = self.play_ruleset if self.play_ruleset is not None else self.season.play_ruleset
        return ruleset_from_spec(spec)

    def rule(self, name: str) -> Any:
        """A result rule of this event: the one it was finalised with, else the season's."""
        if name in self.ruleset:
            return self.ruleset[name]
        return getattr(self.season, name)


class Entry(models.Model):
    """A player entered in an event with a closed entry: advanced from the feeding event, or
    invited (championships)."""

    class Basis(models.TextChoices):
        ADVANCED = "advanced", "advanced"
        INVITED = "invited", "invited"

    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="entries")
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="+")
    basis = models.CharField(max_length=10, choices=Basis.choices)
    source = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "entries"
        constraints = [
            models.UniqueConstraint(fields=["event", "player"], name="entry_unique_player"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id}:{self.player_id}"


class CalendarChange(models.Model):
    """The log of an organiser's changes to a season's calendar and ruleset: who, when, why
    and what (``diff``: the values before and after). ``event`` is empty for a change of
    the season itself (its creation, its ruleset)."""

    class Action(models.TextChoices):
        SEASON_CREATE = "season_create", "create the season and its calendar"
        RULESET = "ruleset", "change the ruleset"
        ADD = "add", "add an event"
        MOVE = "move", "move an event"
        CANCEL = "cancel", "cancel an event"
        INVITE = "invite", "invite players"

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="changes")
    event = models.ForeignKey(
        Event, null=True, blank=True, on_delete=models.CASCADE, related_name="changes"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=500)
    diff = models.JSONField(default=dict)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.event_id or self.season_id} ({self.at:%Y-%m-%d})"
