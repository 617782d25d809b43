"""The API shapes every app shares: a player as shown, a whole number in a query (errors:
:mod:`core.api`, declared for every operation by ``core.schema.postprocess_errors``)."""

import re
from typing import Any

from rest_framework import serializers


class PlayerSerializer(serializers.Serializer[Any]):
    """A player as the API shows one: the game's id, display name and province."""

    id = serializers.CharField(source="external_id")
    name = serializers.CharField()
    province = serializers.CharField()

    class Meta:
        ref_name = "Player"


class WholeNumberField(serializers.IntegerField):
    """An integer written as one: optional ``-`` and ASCII digits. DRF's ``IntegerField``
    also takes ``"0.0"``, ``" 5 "`` and non-ASCII digits, which the schema's ``integer``
    does not."""

    WHOLE = re.compile(r"-?[0-9]+")

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str) and not self.WHOLE.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)
