"""The title API's shared shapes and lookups (the per-view input and output serializers stay
with their view): a qualification, a term, an International Master record, a decision, the
path parameters, and the lookups that answer 404."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from accounts.models import Player
from core.errors import found
from core.serializers import PlayerSerializer
from titles.models import Confers, Qualification, QualificationStatus


def player_of(external_id: str) -> Player:
    """The player with that game-server id, or 404."""
    return found(
        Player.objects.filter(external_id=external_id).first(), f"No player {external_id!r}."
    )


def qualification_of(pk: int) -> Qualification:
    """The qualification (with its player), or 404."""
    return found(
        Qualification.objects.select_related("player").filter(pk=pk).first(),
        f"No qualification {pk}.",
    )


def path_parameter(name: str, kind: OpenApiTypes, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, kind, OpenApiParameter.PATH, description=description)


PLAYER_ID = path_parameter(
    "player_id", OpenApiTypes.STR, "The player's id (game-server account id)."
)
QUALIFICATION_ID = path_parameter("id", OpenApiTypes.INT, "The qualification's id.")


class TitleQualificationSerializer(serializers.Serializer[Any]):
    # A field named "source": the stubs see Field.source (DRF moves declared fields off).
    source = serializers.CharField()  # type: ignore[assignment]
    on = serializers.DateField()
    confers = serializers.ChoiceField(choices=Confers.choices)
    rule = serializers.CharField(source="rule.key")
    description = serializers.CharField(source="rule.description")


class TitleTermSerializer(serializers.Serializer[Any]):
    start = serializers.DateField()
    valid_until = serializers.DateField()
    code = serializers.CharField()


class InternationalMasterSerializer(serializers.Serializer[Any]):
    granted_on = serializers.DateField()
    valid_until = serializers.DateField(allow_null=True)
    # A field named "source": the stubs see Field.source (DRF moves declared fields off).
    source = serializers.CharField()  # type: ignore[assignment]


class QualificationSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    player = PlayerSerializer()
    # A field named "source": the stubs see Field.source (DRF moves declared fields off).
    source = serializers.CharField()  # type: ignore[assignment]
    rule = serializers.CharField(source="rule.key")
    confers = serializers.ChoiceField(choices=Confers.choices)
    on = serializers.DateField()
    status = serializers.ChoiceField(choices=QualificationStatus.choices)
    evidence = serializers.JSONField()
    created_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_reason = serializers.CharField()


class DecisionInputSerializer(serializers.Serializer[Any]):
    expected_version = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(max_length=500, allow_blank=True, default="")


class RejectInputSerializer(serializers.Serializer[Any]):
    """A rejection (or reversal) always says why."""

    expected_version = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(max_length=500)
