"""Integrity API (SPEC §7), reviewers only: one view per operation.

Cases ranked by score and one case with its evidence (together vs apart, flow matrix,
shared identifiers, the linked games with IP and device — personal data, hence reviewers
only); take, dismiss and sanction a case (with the version the reviewer saw: 409 when
someone acted first); file and decide appeals (403 ``same_reviewer`` when the reviewer who
sanctioned tries to decide); list audit runs and trigger one (queued as a job).
"""

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Player
from accounts.permissions import IsReviewer
from accounts.roles import signed_in
from core.errors import NotFoundError, found
from core.jobs import job_enqueue
from flows import sanctions
from integrity import selectors
from integrity.api.serializers import (
    AppealSerializer,
    AuditRunSerializer,
    CaseEventSerializer,
    CaseSerializer,
    FlagSerializer,
    SanctionSerializer,
)
from integrity.models import Appeal, AuditRun, Case, CasePlayer
from integrity.services import cases as workflow
from integrity.services.audits import day_window, event_key, window_key
from integrity.tasks import audit_event_task, audit_window_task
from tournaments.models import Event


def _path(name: str, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, OpenApiTypes.INT, OpenApiParameter.PATH, description=description)


CASE_ID = _path("id", "The case's id.")
APPEAL_ID = _path("id", "The appeal's id.")


def _case(pk: int) -> Case:
    return get_object_or_404(Case, pk=pk)


def _player(external_id: str) -> Player:
    player = Player.objects.filter(external_id=external_id).first()
    return found(player, f"No player {external_id!r}.")


class CaseListView(generics.ListAPIView[Case]):
    """Cases ranked by score (highest first) for review."""

    permission_classes = [IsReviewer]
    filter_backends: list[Any] = []
    serializer_class = CaseSerializer

    class InputSerializer(serializers.Serializer[Any]):
        status = serializers.ChoiceField(choices=Case.Status.choices, required=False)

    def get_queryset(self) -> Any:
        params = self.InputSerializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        return selectors.case_list(status=params.validated_data.get("status")).select_related(
            "assigned_to", "decided_by"
        )

    @extend_schema(operation_id="integrity_cases", parameters=[InputSerializer])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class CaseDetailView(APIView):
    """One case with its flags, log, sanctions, appeals and the evidence behind it."""

    permission_classes = [IsReviewer]

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "IntegrityCaseDetail"

        class PairSerializer(serializers.Serializer[Any]):
            players = serializers.ListField(child=serializers.CharField())
            together = serializers.IntegerField(help_text="Games at one table.")
            apart = serializers.ListField(
                child=serializers.IntegerField(), help_text="Games of each without the other."
            )
            expected = serializers.FloatField(
                allow_null=True, help_text="Games together the matchmaker explains."
            )

        class FlowSerializer(serializers.Serializer[Any]):
            feeder = serializers.CharField()
            beneficiary = serializers.CharField()
            wins = serializers.IntegerField(help_text="The beneficiary's wins with the feeder.")
            points = serializers.IntegerField(help_text="The feeder's hand points in them.")
            heaviest = serializers.IntegerField(help_text="Wins where the feeder held most.")

        class IdentifierSerializer(serializers.Serializer[Any]):
            kind = serializers.ChoiceField(choices=["ip", "device"])
            identifier = serializers.CharField()
            players = serializers.ListField(child=serializers.CharField())

        class GameSerializer(serializers.Serializer[Any]):
            class SeatSerializer(serializers.Serializer[Any]):
                seat = serializers.IntegerField()
                player = serializers.CharField()
                hand_points = serializers.IntegerField()
                score = serializers.IntegerField()
                ip = serializers.CharField(allow_null=True)
                device = serializers.CharField()

            game = serializers.CharField()
            ended_at = serializers.DateTimeField()
            seats = SeatSerializer(many=True)

        case = CaseSerializer()
        window_start = serializers.DateTimeField(allow_null=True)
        window_end = serializers.DateTimeField(allow_null=True)
        flags = FlagSerializer(many=True)
        log = CaseEventSerializer(many=True)
        sanctions = SanctionSerializer(many=True)
        appeals = AppealSerializer(many=True)
        pairs = PairSerializer(many=True)
        flows = FlowSerializer(many=True)
        identifiers = IdentifierSerializer(many=True)
        games = GameSerializer(many=True)

    @extend_schema(operation_id="integrity_case", parameters=[CASE_ID], responses=OutputSerializer)
    def get(self, request: Request, pk: int) -> Response:
        case = get_object_or_404(selectors.case_list(), pk=pk)
        evidence = selectors.case_evidence(case=case)
        data = {
            "case": case,
            "window_start": evidence.window[0],
            "window_end": evidence.window[1],
            "flags": evidence.flags,
            "log": evidence.events,
            "sanctions": case.sanctions.select_related("player", "decided_by").prefetch_related(
                "events"
            ),
            "appeals": case.appeals.select_related("player", "decided_by"),
            "pairs": evidence.pairs,
            "flows": evidence.flows,
            "identifiers": evidence.identifiers,
            "games": evidence.games,
        }
        return Response(self.OutputSerializer(data).data)


class VersionInputSerializer(serializers.Serializer[Any]):
    expected_version = serializers.IntegerField(min_value=0)


class DismissInputSerializer(VersionInputSerializer):
    reason = serializers.CharField(max_length=500)


class CaseTakeView(APIView):
    """Take an open case for review."""

    permission_classes = [IsReviewer]

    @extend_schema(
        operation_id="integrity_case_take",
        parameters=[CASE_ID],
        request=VersionInputSerializer,
        responses=CaseSerializer,
    )
    def post(self, request: Request, pk: int) -> Response:
        data = VersionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        case = workflow.case_take(
            case=_case(pk),
            by=signed_in(request.user),
            expected_version=data.validated_data["expected_version"],
        )
        return Response(CaseSerializer(selectors.case_list().get(pk=case.pk)).data)


class CaseDismissView(APIView):
    """Dismiss an open case with a reason."""

    permission_classes = [IsReviewer]

    @extend_schema(
        operation_id="integrity_case_dismiss",
        parameters=[CASE_ID],
        request=DismissInputSerializer,
        responses=CaseSerializer,
    )
    def post(self, request: Request, pk: int) -> Response:
        data = DismissInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        case = workflow.case_dismiss(
            case=_case(pk),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
            expected_version=data.validated_data["expected_version"],
        )
        return Response(CaseSerializer(selectors.case_list().get(pk=case.pk)).data)


class CaseSanctionView(APIView):
    """Sanction players of an open case: void games, revoke titles, suspend."""

    permission_classes = [IsReviewer]

    class InputSerializer(VersionInputSerializer):
        class Meta:
            ref_name = "IntegritySanctionInput"

        class DecisionSerializer(serializers.Serializer[Any]):
            player = serializers.CharField(help_text="The player's id.")
            role = serializers.ChoiceField(
                choices=[CasePlayer.Role.BENEFICIARY, CasePlayer.Role.HELPER]
            )
            void_games = serializers.BooleanField(default=False)
            events = serializers.ListField(
                child=serializers.CharField(),
                default=list,
                help_text="Codes of the events whose games of the player are voided.",
            )
            revoke_titles = serializers.BooleanField(default=False)
            suspend = serializers.BooleanField(default=False)

        reason = serializers.CharField(max_length=500)
        decisions = DecisionSerializer(many=True, allow_empty=False)

    @extend_schema(
        operation_id="integrity_case_sanction",
        parameters=[CASE_ID],
        request=InputSerializer,
        responses=CaseSerializer,
    )
    def post(self, request: Request, pk: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        decisions = []
        for item in data.validated_data["decisions"]:
            codes = sorted(set(item["events"]))
            events = list(Event.objects.filter(code__in=codes).order_by("pk"))
            missing = sorted(set(codes) - {event.code for event in events})
            if missing:
                raise NotFoundError(f"No event {missing[0]!r}.", detail={"events": missing})
            decisions.append(
                sanctions.Decision(
                    player=_player(item["player"]),
                    role=item["role"],
                    void_games=item["void_games"],
                    events=tuple(events),
                    revoke_titles=item["revoke_titles"],
                    suspend=item["suspend"],
                )
            )
        case = sanctions.case_sanction(
            case=_case(pk),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
            decisions=decisions,
            expected_version=data.validated_data["expected_version"],
        )
        return Response(CaseSerializer(selectors.case_list().get(pk=case.pk)).data)


class AppealFileView(APIView):
    """Record a sanctioned player's appeal."""

    permission_classes = [IsReviewer]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "IntegrityAppealInput"

        player = serializers.CharField(help_text="The appealing player's id.")
        statement = serializers.CharField()

    @extend_schema(
        operation_id="integrity_appeal_file",
        parameters=[CASE_ID],
        request=InputSerializer,
        responses={201: AppealSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        appeal = workflow.appeal_file(
            case=_case(pk),
            player=_player(data.validated_data["player"]),
            statement=data.validated_data["statement"],
            by=signed_in(request.user),
        )
        return Response(AppealSerializer(appeal).data, status=status.HTTP_201_CREATED)


class AppealDecideView(APIView):
    """Decide an appeal (a reviewer other than the one who sanctioned)."""

    permission_classes = [IsReviewer]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "IntegrityAppealDecision"

        upheld = serializers.BooleanField(help_text="True reverses every sanction of the case.")
        reason = serializers.CharField(max_length=500)

    @extend_schema(
        operation_id="integrity_appeal_decide",
        parameters=[APPEAL_ID],
        request=InputSerializer,
        responses=AppealSerializer,
    )
    def post(self, request: Request, pk: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        appeal = sanctions.appeal_decide(
            appeal=get_object_or_404(Appeal, pk=pk),
            by=signed_in(request.user),
            upheld=data.validated_data["upheld"],
            reason=data.validated_data["reason"],
        )
        return Response(AppealSerializer(appeal).data)


class AuditRunListView(generics.ListAPIView[AuditRun]):
    """Audit runs, most recent first, with their statistics."""

    permission_classes = [IsReviewer]
    filter_backends: list[Any] = []
    serializer_class = AuditRunSerializer

    def get_queryset(self) -> Any:
        return selectors.audit_run_list()

    @extend_schema(operation_id="integrity_runs")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class AuditTriggerView(APIView):
    """Queue an audit of an event, or of tour days ``from``..``to`` (Asia/Shanghai)."""

    permission_classes = [IsReviewer]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "IntegrityAuditTrigger"

        event = serializers.CharField(required=False, help_text="An event code.")
        first = serializers.DateField(required=False, help_text="First tour day of a window.")
        last = serializers.DateField(required=False, help_text="Last tour day of a window.")

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            window = "first" in attrs or "last" in attrs
            if ("event" in attrs) == window:
                raise serializers.ValidationError("Give either event, or first and last.")
            if window and not ("first" in attrs and "last" in attrs):
                raise serializers.ValidationError("A window needs both first and last.")
            if window and attrs["last"] < attrs["first"]:
                raise serializers.ValidationError("last is before first.")
            return attrs

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "IntegrityAuditQueued"

        key = serializers.CharField()
        queued = serializers.BooleanField()
        job = serializers.UUIDField(help_text="follow it at /api/jobs/{job}/")

    @extend_schema(
        operation_id="integrity_run_trigger",
        request=InputSerializer,
        responses={202: OutputSerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if "event" in values:
            event = found(
                Event.objects.filter(code=values["event"]).first(), f"No event {values['event']!r}."
            )
            key = event_key(event)
            job = job_enqueue(audit_event_task, event.pk, subject=key, by=signed_in(request.user))
        else:
            key = window_key(values["first"], values["last"])
            start, end = day_window(values["first"], values["last"])
            job = job_enqueue(
                audit_window_task,
                key,
                start.isoformat(),
                end.isoformat(),
                subject=key,
                by=signed_in(request.user),
            )
        return Response(
            self.OutputSerializer({"key": key, "queued": True, "job": job.id}).data,
            status=status.HTTP_202_ACCEPTED,
        )
