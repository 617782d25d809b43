"""The integrity API's output shapes (SPEC §7): cases, flags, the case log, sanctions,
appeals and audit runs, as the views of :mod:`integrity.api.views` answer them. Flags'
evidence and the linked games hold IP addresses and devices: reviewers only."""

from typing import Any

from rest_framework import serializers

from core.serializers import PlayerSerializer
from integrity.models import Appeal, AuditRun, Case, CaseEvent, CasePlayer, Flag


class CasePlayerSerializer(serializers.Serializer[Any]):
    player = PlayerSerializer()
    role = serializers.ChoiceField(choices=CasePlayer.Role.choices)


class CaseSerializer(serializers.Serializer[Any]):
    class Meta:
        ref_name = "IntegrityCase"

    id = serializers.IntegerField()
    version = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Case.Status.choices)
    key = serializers.CharField()
    players = CasePlayerSerializer(many=True, source="caseplayer_set.all")
    families = serializers.ListField(child=serializers.CharField())
    score = serializers.FloatField()
    reason = serializers.CharField()
    opened_at = serializers.DateTimeField()
    assigned_to = serializers.CharField(source="assigned_to.username", allow_null=True)
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)


class FlagSerializer(serializers.Serializer[Any]):
    class Meta:
        ref_name = "IntegrityFlag"

    id = serializers.IntegerField()
    run = serializers.CharField(source="run.key")
    detector = serializers.ChoiceField(choices=Flag.Detector.choices)
    version = serializers.CharField()
    family = serializers.ChoiceField(choices=Flag.Family.choices)
    players = serializers.ListField(child=serializers.CharField(), source="player_keys")
    statistic = serializers.FloatField(allow_null=True)
    p = serializers.FloatField(source="p_value", allow_null=True)
    q = serializers.FloatField(source="q_value", allow_null=True)
    near_conclusive = serializers.BooleanField()
    score = serializers.FloatField()
    evidence = serializers.JSONField(help_text="Detector evidence; may hold IPs and devices.")


class CaseEventSerializer(serializers.Serializer[Any]):
    action = serializers.ChoiceField(choices=CaseEvent.Action.choices)
    by = serializers.CharField(source="by.username", allow_null=True)
    at = serializers.DateTimeField()
    reason = serializers.CharField()
    details = serializers.JSONField(source="data", help_text="What the step did.")


class SanctionSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    player = serializers.CharField(source="player.external_id")
    role = serializers.CharField()
    effective_on = serializers.DateField()
    void_games = serializers.BooleanField()
    events = serializers.SerializerMethodField()
    revoke_titles = serializers.BooleanField()
    suspend = serializers.BooleanField()
    revocation = serializers.IntegerField(source="revocation_id", allow_null=True)
    corrections = serializers.ListField(child=serializers.IntegerField())
    decided_by = serializers.CharField(source="decided_by.username")
    decided_at = serializers.DateTimeField()
    reason = serializers.CharField()
    reversed_at = serializers.DateTimeField(allow_null=True)

    def get_events(self, obj: Any) -> list[str]:
        """Codes of the events whose games of the player were voided."""
        return sorted(event.code for event in obj.events.all())


class AppealSerializer(serializers.Serializer[Any]):
    class Meta:
        ref_name = "IntegrityAppeal"

    id = serializers.IntegerField()
    case = serializers.IntegerField(source="case_id")
    player = serializers.CharField(source="player.external_id")
    filed_at = serializers.DateTimeField()
    statement = serializers.CharField()
    status = serializers.ChoiceField(choices=Appeal.Status.choices)
    decided_by = serializers.CharField(source="decided_by.username", allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    decision_reason = serializers.CharField()


class AuditRunSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    key = serializers.CharField()
    event = serializers.CharField(source="event.code", allow_null=True)
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    status = serializers.ChoiceField(choices=AuditRun.Status.choices)
    attempts = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    params = serializers.JSONField()
    stats = serializers.JSONField()
    error = serializers.CharField()
