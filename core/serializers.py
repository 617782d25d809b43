"""The API shapes every app shares: the error body (:mod:`core.api`) and a player as shown."""

from typing import Any

from rest_framework import serializers


class ErrorSerializer(serializers.Serializer[Any]):
    """A refused request (core.errors): what and why; ``detail.reason`` for a 409 is
    ``stale`` (decided by someone else: reload), ``held`` or ``audit``."""

    code = serializers.CharField()
    message = serializers.CharField()
    detail = serializers.JSONField(required=False)

    class Meta:
        ref_name = "Error"


class PlayerSerializer(serializers.Serializer[Any]):
    """A player as the API shows one: the game's id, display name and province."""

    id = serializers.CharField(source="external_id")
    name = serializers.CharField()
    province = serializers.CharField()

    class Meta:
        ref_name = "Player"
