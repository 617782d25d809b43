"""The API shapes every app shares: a player as shown (errors: :mod:`core.api`, declared for
every operation by ``core.schema.postprocess_errors``)."""

from typing import Any

from rest_framework import serializers


class PlayerSerializer(serializers.Serializer[Any]):
    """A player as the API shows one: the game's id, display name and province."""

    id = serializers.CharField(source="external_id")
    name = serializers.CharField()
    province = serializers.CharField()

    class Meta:
        ref_name = "Player"
