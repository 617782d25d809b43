"""Players' notices (issue #27): what happened to a player, told once, and how it reached them.

* :class:`Notice` — one fact about one player (advanced, a title change, a title about to
  end, a sanction or its appeal), written once: ``key`` names the fact and is unique, so a
  producer that runs again (a flow retried, a job re-run) writes nothing new. The words are
  not stored: ``kind`` and ``params`` are, and ``notices.texts`` renders them in the reader's
  language (the msgids are Chinese).
* :class:`NoticeDelivery` — one channel's delivery of a notice: an e-mail to the address
  known when the notice was written, or one partner webhook (a ``webhooks.Delivery``). It is
  ``sent`` only once delivered: the mail backend accepted the message, or the partner
  answered 2xx (the webhooks app's record, mirrored in the attempt's transaction).
"""

from django.db import models
from django.utils import timezone


class NoticeKind(models.TextChoices):
    ADVANCED = "advanced", "advanced to the next event"
    TITLE_GRANTED = "title_granted", "Master granted"
    TITLE_EXTENDED = "title_extended", "Master extended"
    TITLE_LIFETIME = "title_lifetime", "Lifetime Master conferred"
    TITLE_EXPIRING = "title_expiring", "Master ends soon (30 or 7 days)"
    TITLE_LAPSED = "title_lapsed", "Master lapsed"
    TITLE_REVOKED = "title_revoked", "titles revoked"
    TITLE_RESTORED = "title_restored", "titles restored on appeal"
    SANCTIONED = "sanctioned", "sanctioned"
    SANCTION_REVERSED = "sanction_reversed", "sanction reversed on appeal"
    APPEAL_REJECTED = "appeal_rejected", "appeal rejected"


class Notice(models.Model):
    """One fact about one player, written once (``key``); newest first."""

    key = models.CharField(max_length=400)
    # Indexed by notice_player_newest (player first), which the feed reads.
    player = models.ForeignKey(
        "accounts.Player", on_delete=models.CASCADE, related_name="notices", db_index=False
    )
    kind = models.CharField(max_length=20, choices=NoticeKind.choices)
    params = models.JSONField(default=dict, blank=True)
    on = models.DateField(help_text="The tour day (Asia/Shanghai) the fact is dated.")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["player", "-created_at", "-id"], name="notice_player_newest"),
        ]
        constraints = [
            # One plain unique index (no LIKE twin, as unique=True would add): the writer's
            # ON CONFLICT ("key") is its only reader.
            models.UniqueConstraint(fields=["key"], name="notice_once"),
            models.CheckConstraint(condition=~models.Q(key=""), name="notice_key_given"),
        ]

    def __str__(self) -> str:
        return self.key


class Channel(models.TextChoices):
    EMAIL = "email", "e-mail"
    WEBHOOK = "webhook", "partner webhook"


class DeliveryState(models.TextChoices):
    PENDING = "pending", "pending"
    SENT = "sent", "sent (delivered)"
    FAILED = "failed", "failed (attempts exhausted)"


class NoticeDelivery(models.Model):
    """One channel's delivery of a notice; ``sent`` (with ``sent_at``) only once delivered.

    E-mail: ``email`` is the address known when the notice was written; ``attempts`` and
    ``error`` are this app's. Webhook: ``webhook`` is the partner delivery, whose status,
    attempts and last error the webhooks app records and this row mirrors.
    """

    notice = models.ForeignKey(Notice, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=8, choices=Channel.choices)
    email = models.EmailField(blank=True)
    webhook = models.OneToOneField(
        "webhooks.Delivery",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="notice_delivery",
    )
    state = models.CharField(
        max_length=8, choices=DeliveryState.choices, default=DeliveryState.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["notice_id", "id"]
        verbose_name_plural = "notice deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["notice"],
                condition=models.Q(channel="email"),
                name="notice_email_once",
            ),
            models.CheckConstraint(
                condition=models.Q(state="sent", sent_at__isnull=False)
                | (~models.Q(state="sent") & models.Q(sent_at__isnull=True)),
                name="notice_sent_when_delivered",
            ),
            models.CheckConstraint(
                condition=~models.Q(channel="email") | ~models.Q(email=""),
                name="notice_email_has_address",
            ),
        ]
        indexes = [models.Index(fields=["channel", "state"], name="notice_delivery_state")]

    def __str__(self) -> str:
        return f"{self.notice_id} {self.channel} ({self.state})"
