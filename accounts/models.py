"""Users (staff and API clients), players (game accounts) and API tokens."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils import timezone

from accounts.provinces import PROVINCE_CHOICES


class User(AbstractUser):
    """A person or a machine client who signs in; roles are groups (accounts.roles)."""

    class Meta:
        db_table = "accounts_user"


class Player(models.Model):
    """A game account of the tour: external id from the game servers, name, province."""

    external_id = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=64)
    province = models.CharField(max_length=8, choices=PROVINCE_CHOICES)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="player",
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["external_id"]
        # Player search's trigram indexes (a partial id or name, any case) are created in
        # SQL by migration 0002: Django cannot state an operator class on an expression.
        indexes = [models.Index(fields=["province", "external_id"])]

    def __str__(self) -> str:
        return f"{self.name} ({self.external_id})"


class PlayerChange(models.Model):
    """A logged change of a player's name or province: who (or which source), when, why."""

    player = models.ForeignKey(Player, on_delete=models.CASCADE, related_name="changes")
    field = models.CharField(max_length=16)
    old = models.CharField(max_length=64)
    new = models.CharField(max_length=64)
    at = models.DateTimeField(default=timezone.now)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    reason = models.CharField(max_length=200)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.player_id} {self.field}: {self.old} → {self.new}"


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A hashed, expiring API token. Only the SHA-256 digest is stored; the raw token is shown
    once at creation. ``prefix`` (the first characters) identifies it in lists and logs."""

    PREFIX_LENGTH = 8

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=PREFIX_LENGTH, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @classmethod
    def issue(cls, *, user: User, name: str, days: int | None = None) -> tuple["ApiToken", str]:
        """Create a token; returns it with the raw secret, which is never stored."""
        raw = secrets.token_urlsafe(32)
        ttl = days if days is not None else settings.API_TOKEN_TTL_DAYS
        token = cls.objects.create(
            user=user,
            name=name,
            prefix=raw[: cls.PREFIX_LENGTH],
            digest=_digest(raw),
            expires_at=timezone.now() + timedelta(days=ttl),
        )
        return token, raw

    @classmethod
    def find(cls, raw: str) -> "ApiToken | None":
        return cls.objects.select_related("user").filter(digest=_digest(raw)).first()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and self.expires_at > timezone.now()
