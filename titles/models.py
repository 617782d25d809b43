"""Title models (SPEC §6): the qualification ledger and the materialised title state.

* :class:`QualificationRule` — which achievements qualify, as data an admin edits.
* :class:`Qualification` — the ledger: one row per (player, source), pending until reviewed.
* :class:`PlayerTitle`, :class:`TitleTerm` — the replay of a player's approved, non-voided
  qualifications, materialised by ``titles.recompute`` in the transaction that changed them.
* :class:`TitleChange` — the append-only history of every change: who, when, why, source.
* :class:`Revocation` — a sanction that took the national titles, and its reversal on appeal.
* :class:`WorldCupRepresentative` — China's #1 per World Cup stake ranking per month.
* :class:`InternationalMaster` — 国际大师, recorded separately; never replayed.
* :class:`Notification` — an expiry reminder, sent once.
* :class:`LifetimeTitle`, :class:`StatusList` — what the verifiable credentials need: a
  Lifetime title's code and status index, and the revocation bits (``titles.credentials``).
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from titles.domain import replay


class Confers(models.TextChoices):
    MASTER = replay.MASTER, "Master (大师)"
    LIFETIME = replay.LIFETIME, "Lifetime Master (终身大师)"


class QualificationRule(models.Model):
    """An achievement that qualifies (seeds: 大师资格), keyed by the name callers use.

    The defaults (``titles.services.rules_ensure_defaults``) cover the seeds' qualifications
    (1) and (3) and the Lifetime championships; the seeds' missing (2) is added here, in the
    admin, without code. ``requires_valid_master`` (Lifetime rules only) off means the
    championship confers Lifetime even without a valid Master (SPEC §6: "unless an admin's
    rule says so"). Editing a rule affects qualifications recorded afterwards: the ledger
    keeps what each rule conferred when it was recorded.
    """

    key = models.SlugField(max_length=64, unique=True)
    confers = models.CharField(max_length=8, choices=Confers.choices)
    requires_valid_master = models.BooleanField(default=True)
    active = models.BooleanField(default=True)
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class QualificationStatus(models.TextChoices):
    PENDING = "pending", "pending review"
    APPROVED = "approved", "approved"
    REJECTED = "rejected", "rejected"
    VOIDED = "voided", "voided"


class Qualification(models.Model):
    """One achievement of one player in the ledger; only approved ones count (SPEC §6).

    ``source`` names the achievement (``event:2021-03-M``, ``world_cup:2021-03:80x``,
    ``manual:…``) and is unique per player: the same achievement never counts twice.
    ``version`` grows with every write; decisions are conditional on it (optimistic
    locking). ``revocation`` is set when a sanction voided it, so an appeal can restore it.
    """

    player = models.ForeignKey(
        "accounts.Player", on_delete=models.PROTECT, related_name="qualifications"
    )
    source = models.CharField(max_length=200)
    rule = models.ForeignKey(QualificationRule, on_delete=models.PROTECT, related_name="+")
    on = models.DateField()
    confers = models.CharField(max_length=8, choices=Confers.choices)
    requires_valid_master = models.BooleanField(default=True)
    status = models.CharField(
        max_length=8, choices=QualificationStatus.choices, default=QualificationStatus.PENDING
    )
    evidence = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.CharField(max_length=500, blank=True)
    version = models.PositiveIntegerField(default=1)
    revocation = models.ForeignKey(
        "Revocation", null=True, blank=True, on_delete=models.PROTECT, related_name="qualifications"
    )

    class Meta:
        ordering = ["player_id", "on", "source"]
        constraints = [
            models.UniqueConstraint(fields=["player", "source"], name="qualification_once"),
            # What the replay reads must be a qualification it can replay (SPEC §6).
            models.CheckConstraint(
                condition=models.Q(confers__in=Confers.values), name="qualification_confers_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(source=""), name="qualification_source_given"
            ),
        ]
        indexes = [models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"{self.player_id}:{self.source} ({self.status})"


class TitleStatus(models.TextChoices):
    NONE = replay.STATUS_NONE, "none"
    MASTER = replay.STATUS_MASTER, "Master"
    LAPSED = "lapsed", "lapsed Master"
    LIFETIME = replay.STATUS_LIFETIME, "Lifetime Master"


class PlayerTitle(models.Model):
    """A player's national titles as of today (Asia/Shanghai), from the last replay.

    ``valid_until`` is the last valid day of the latest Master term (also kept for a
    Lifetime Master); ``terms`` lists every term as ``{"start", "valid_until", "sources",
    "code"}``. ``status`` is ``lapsed`` once the latest term has ended (the daily sweep).
    ``fingerprint`` hashes the replay this row, the player's terms and history were last
    materialised from (``titles.recompute``); ``None`` when unknown.
    """

    player = models.OneToOneField(
        "accounts.Player", primary_key=True, on_delete=models.CASCADE, related_name="title"
    )
    status = models.CharField(max_length=8, choices=TitleStatus.choices, default=TitleStatus.NONE)
    valid_until = models.DateField(null=True, blank=True)
    lifetime_since = models.DateField(null=True, blank=True)
    terms = models.JSONField(default=list, blank=True)
    fingerprint = models.BigIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["status", "valid_until"])]

    def __str__(self) -> str:
        return f"{self.player_id}: {self.status}"


class TermState(models.TextChoices):
    CURRENT = "current", "current"
    LAPSED = "lapsed", "lapsed"
    VOID = "void", "void (its qualifications no longer count)"
    REVOKED = "revoked", "revoked by a sanction"


class TitleTerm(models.Model):
    """One Master term of a player, identified by its start and verified by ``code``.

    A term that a later replay no longer produces is kept with state ``void`` (its
    qualifications were rejected, voided or merged into an earlier term) or ``revoked`` (a
    sanction), so its code still verifies — as no longer valid.
    """

    # Indexed by the unique (player, start) constraint. No database foreign key here nor on
    # TitleChange.player: replaying 1,000,000 qualifications writes ~370,000 terms and
    # ~1,300,000 history rows, and checking each row's player (one lookup per row, at once
    # or at commit) cost about as much as writing the rows (manage.py bench titles).
    # Nothing is lost: only titles.recompute and titles.services write these rows, under
    # the player's locked PlayerTitle row (whose foreign key is checked), and a player with
    # titles has qualifications or revocations, which PROTECT them from deletion in the ORM
    # and in the database. Django still cascades a deleted player to these rows.
    player = models.ForeignKey(
        "accounts.Player",
        on_delete=models.CASCADE,
        related_name="terms",
        db_index=False,
        db_constraint=False,
    )
    start = models.DateField()
    valid_until = models.DateField()
    sources = models.JSONField(default=list)
    code = models.CharField(max_length=16)
    state = models.CharField(max_length=8, choices=TermState.choices)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["player_id", "start"]
        constraints = [
            models.UniqueConstraint(fields=["player", "start"], name="term_once_per_start"),
            # One byte-wise index (PostgreSQL) instead of unique=True's two (plain and LIKE):
            # it serves the lookup by code, and codes are random, so each insert descends
            # the btree, cheaper without collation.
            models.UniqueConstraint(
                fields=["code"], name="term_code_once", opclasses=["varchar_pattern_ops"]
            ),
        ]
        indexes = [models.Index(fields=["state", "valid_until"])]

    def __str__(self) -> str:
        return f"{self.code} {self.start}..{self.valid_until} ({self.state})"


class LifetimeTitle(models.Model):
    """A player's Lifetime Master title conferred on ``since``, verified by ``code``.

    Kept by ``titles.writing`` beside ``PlayerTitle.lifetime_since``, like a term: one a
    later replay no longer confers becomes ``void`` (or ``revoked`` by a sanction) and one it
    confers again ``current``, so its credential's status follows (``titles.credentials``).
    Its ``id`` is the credential's status index in the ``lifetime`` status lists.
    """

    player = models.ForeignKey(
        "accounts.Player", on_delete=models.CASCADE, related_name="lifetime_titles"
    )
    since = models.DateField()
    code = models.CharField(max_length=16, unique=True)
    state = models.CharField(max_length=8, choices=TermState.choices)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["player_id", "since"]
        constraints = [
            models.UniqueConstraint(fields=["player", "since"], name="lifetime_once_per_day"),
        ]

    def __str__(self) -> str:
        return f"{self.code} lifetime since {self.since} ({self.state})"


class StatusList(models.Model):
    """One Bitstring Status List of the title credentials (SPEC §6, Credentials).

    ``name`` is ``master-N`` (Master terms, status index = ``TitleTerm.id``) or
    ``lifetime-N`` (``LifetimeTitle.id``); ``bits`` holds
    :data:`titles.domain.credentials.STATUS_LIST_SIZE` bits, a set bit meaning revoked (the
    term or title is ``void`` or ``revoked``). Only ``titles.credentials.status`` writes it,
    inside the transaction of the title change, with the row locked.
    """

    name = models.CharField(max_length=32, unique=True)
    bits = models.BinaryField()
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ChangeKind(models.TextChoices):
    GRANTED = replay.GRANTED, "Master granted"
    EXTENDED = replay.EXTENDED, "Master extended"
    LAPSED = replay.LAPSED, "Master lapsed"
    LIFETIME = replay.LIFETIME_CONFERRED, "Lifetime Master conferred"
    IGNORED = replay.IGNORED, "qualification conferred nothing"
    RETRACTED = "retracted", "an earlier change no longer holds"
    REVOKED = "revoked", "titles revoked by a sanction"
    RESTORED = "restored", "titles restored on appeal"


#: Kinds that come from the replay (and are compared between two materialisations).
REPLAY_KINDS = (
    ChangeKind.GRANTED,
    ChangeKind.EXTENDED,
    ChangeKind.LAPSED,
    ChangeKind.LIFETIME,
    ChangeKind.IGNORED,
)


class TitleChange(models.Model):
    """One entry of a player's title history; rows are only ever added.

    Replay kinds carry the replay's account (``on``, ``source``, ``valid_until``, ``note``);
    when a later replay no longer produces one, a ``retracted`` row pointing at it is added.
    ``by``, ``at`` and ``reason`` say who changed the ledger, when, and why.
    """

    player = models.ForeignKey(
        "accounts.Player",
        on_delete=models.CASCADE,
        related_name="title_changes",
        db_constraint=False,  # see TitleTerm.player
    )
    kind = models.CharField(max_length=10, choices=ChangeKind.choices)
    on = models.DateField()
    valid_until = models.DateField(null=True, blank=True)
    source = models.CharField(max_length=200, blank=True)
    note = models.CharField(max_length=200, blank=True)
    # At most one retraction per entry (the partial unique index below, which also serves
    # ``retraction__isnull``): almost every entry retracts nothing, so the index skips them.
    retracts = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="retraction",
        db_index=False,
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    at = models.DateTimeField(default=timezone.now)
    reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["player_id", "at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["retracts"],
                condition=models.Q(retracts__isnull=False),
                name="change_retracted_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} {self.kind} {self.on} {self.source}"


class Revocation(models.Model):
    """A sanction that took a player's national titles (SPEC §6, §7) and its appeal.

    ``voided`` lists ``[qualification id, status before]`` for the qualifications this
    revocation voided, so :func:`titles.services.titles_restore` puts back exactly those.
    """

    player = models.ForeignKey(
        "accounts.Player", on_delete=models.PROTECT, related_name="revocations"
    )
    on = models.DateField()
    case_ref = models.CharField(max_length=100, blank=True)
    reason = models.CharField(max_length=500)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    voided = models.JSONField(default=list)
    restored_at = models.DateTimeField(null=True, blank=True)
    restored_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    restore_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"revocation {self.pk} of {self.player_id} on {self.on}"


class StakeRanking(models.TextChoices):
    X80 = "80x", "80× stake"
    X8 = "8x", "8× stake"
    X1 = "1x", "1× classic"


class WorldCupRepresentative(models.Model):
    """China's #1 in one World Cup stake ranking at the end of one month (SPEC §2).

    Entered by organisers; the month-end snapshot turns each into a Master qualification
    dated the last day of the month (seeds: 以月末为准, at most 36 a year).
    """

    year = models.PositiveSmallIntegerField()
    month = models.PositiveSmallIntegerField()
    ranking = models.CharField(max_length=4, choices=StakeRanking.choices)
    player = models.ForeignKey("accounts.Player", on_delete=models.PROTECT, related_name="+")
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    entered_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["year", "month", "ranking"]
        constraints = [
            models.UniqueConstraint(
                fields=["year", "month", "ranking"], name="world_cup_one_per_ranking"
            ),
            models.CheckConstraint(
                condition=models.Q(month__gte=1, month__lte=12), name="world_cup_month_range"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.year}-{self.month:02d} {self.ranking}: {self.player_id}"


class InternationalMaster(models.Model):
    """国际大师, awarded by the world UNO federation: recorded here, validity kept apart.

    Never part of the national replay (SPEC §6 rule 4).
    """

    player = models.ForeignKey(
        "accounts.Player", on_delete=models.PROTECT, related_name="international_masters"
    )
    granted_on = models.DateField()
    valid_until = models.DateField(null=True, blank=True)
    source = models.CharField(max_length=200)
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    entered_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["player_id", "granted_on"]
        constraints = [
            models.UniqueConstraint(fields=["player", "source"], name="international_once"),
            models.CheckConstraint(
                condition=models.Q(valid_until__isnull=True)
                | models.Q(valid_until__gte=models.F("granted_on")),
                name="international_valid_after_grant",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.player_id} international {self.granted_on}"


class NotificationChannel(models.TextChoices):
    """How a reminder reached its holder: ``none`` is a reminder due that no channel could
    carry (no e-mail address yet); it is sent once the holder has one."""

    EMAIL = "email", "e-mail"
    NONE = "none", "no channel"


class Notification(models.Model):
    """An expiry reminder (SPEC §8), ``days`` before ``valid_until`` of a term; sent once.

    Unique per term, expiry day and threshold: a term extended to a new ``valid_until``
    gets reminders again for its new end. ``sent_at`` is set only when it was delivered.
    """

    player = models.ForeignKey("accounts.Player", on_delete=models.CASCADE, related_name="+")
    term = models.ForeignKey(TitleTerm, on_delete=models.CASCADE, related_name="notifications")
    valid_until = models.DateField()
    days = models.PositiveSmallIntegerField()
    email = models.EmailField(blank=True)
    channel = models.CharField(
        max_length=8, choices=NotificationChannel.choices, default=NotificationChannel.EMAIL
    )
    sent_at = models.DateTimeField(null=True, blank=True, default=timezone.now)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["player", "term", "valid_until", "days"], name="reminder_once"
            ),
            models.CheckConstraint(
                condition=models.Q(channel="none", sent_at__isnull=True)
                | models.Q(~models.Q(channel="none"), sent_at__isnull=False),
                name="reminder_sent_when_delivered",
            ),
        ]

    def __str__(self) -> str:
        return f"reminder {self.days}d {self.term_id} ({self.valid_until})"
