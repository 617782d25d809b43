"""Title API for reviewers and organisers (SPEC §6, §9): the review queue, approve / reject
(with the version the reviewer saw; 409 when someone decided first), bulk approve, manual
qualifications, International Masters; World Cup representatives (organisers). Approvals
go through ``flows.grants``, which asks the integrity audit."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import IsOrganiser, IsReviewer
from accounts.roles import signed_in
from core.errors import found
from core.serializers import PlayerSerializer
from flows import grants
from titles import selectors, services
from titles.api.serializers import (
    QUALIFICATION_ID,
    DecisionInputSerializer,
    QualificationSerializer,
    RejectInputSerializer,
    player_of,
    qualification_of,
)
from titles.models import Qualification, QualificationRule, StakeRanking


class QueueView(generics.ListAPIView[Qualification]):
    """Pending grants with their evidence and the player's integrity status."""

    permission_classes = [IsReviewer]
    filter_backends: list[Any] = []

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "QueueItem"

        qualification = QualificationSerializer()
        held = serializers.BooleanField(help_text="An open integrity case holds the player.")
        audited = serializers.BooleanField(help_text="The event's integrity audit cleared it.")

    serializer_class = OutputSerializer

    def get_queryset(self) -> Any:
        return selectors.review_queue()

    @extend_schema(operation_id="titles_queue")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        items = grants.review_items(list(page or []))
        return self.get_paginated_response(self.OutputSerializer(items, many=True).data)


class ApproveView(APIView):
    """Approve a grant at the version the reviewer saw (409 if someone decided first)."""

    permission_classes = [IsReviewer]

    @extend_schema(
        operation_id="titles_approve",
        parameters=[QUALIFICATION_ID],
        request=DecisionInputSerializer,
        responses={200: QualificationSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        data = DecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        qualification = grants.qualification_approve(
            qualification=qualification_of(pk),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
            expected_version=data.validated_data["expected_version"],
        )
        return Response(QualificationSerializer(qualification).data)


class RejectView(APIView):
    """Reject a grant, or reverse an approval, with a reason (409 if someone decided first)."""

    permission_classes = [IsReviewer]

    @extend_schema(
        operation_id="titles_reject",
        parameters=[QUALIFICATION_ID],
        request=RejectInputSerializer,
        responses={200: QualificationSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        data = RejectInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        qualification = services.qualification_reject(
            qualification=qualification_of(pk),
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
            expected_version=data.validated_data["expected_version"],
        )
        return Response(QualificationSerializer(qualification).data)


class BulkApproveView(APIView):
    """Approve several grants; each is decided on its own, refusals are listed."""

    permission_classes = [IsReviewer]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "BulkApprove"

        class ItemSerializer(serializers.Serializer[Any]):
            class Meta:
                ref_name = "BulkApproveItem"

            id = serializers.IntegerField()
            expected_version = serializers.IntegerField(min_value=1)

        # many=True makes a ListSerializer, which takes max_length; the stubs type the item one.
        items = ItemSerializer(  # type: ignore[call-arg]
            many=True, allow_empty=False, max_length=500
        )
        reason = serializers.CharField(max_length=500, allow_blank=True, default="")

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "BulkApproveResult"

        class RefusedSerializer(serializers.Serializer[Any]):
            class Meta:
                ref_name = "BulkApproveRefusal"

            id = serializers.IntegerField()
            code = serializers.CharField()
            message = serializers.CharField()

        approved = serializers.ListField(child=serializers.IntegerField())
        refused = RefusedSerializer(many=True)

    @extend_schema(
        operation_id="titles_bulk_approve", request=InputSerializer, responses=OutputSerializer
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcome = grants.qualifications_bulk_approve(
            items=[(i["id"], i["expected_version"]) for i in data.validated_data["items"]],
            by=signed_in(request.user),
            reason=data.validated_data["reason"],
        )
        refused = [{"id": pk, "code": code, "message": msg} for pk, code, msg in outcome.refused]
        return Response(
            self.OutputSerializer({"approved": outcome.approved, "refused": refused}).data
        )


class QualificationEnterView(APIView):
    """A reviewer's manual qualification (pending review like every grant)."""

    permission_classes = [IsReviewer]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "QualificationEntry"

        player = serializers.CharField(help_text="The player's id.")
        rule = serializers.SlugField(help_text="The qualification rule's key.")
        on = serializers.DateField()
        # A field named "source": the stubs see Field.source (DRF moves declared fields off).
        source = serializers.CharField(max_length=180)  # type: ignore[assignment]
        evidence = serializers.DictField(required=False, default=dict)
        reason = serializers.CharField(max_length=500)

    @extend_schema(
        operation_id="titles_qualification_enter",
        request=InputSerializer,
        responses={201: QualificationSerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        key = data.validated_data["rule"]
        rule = found(
            QualificationRule.objects.filter(key=key).first(), f"No qualification rule {key!r}."
        )
        qualification = services.qualification_enter(
            player=player_of(data.validated_data["player"]),
            rule=rule,
            on=data.validated_data["on"],
            source=data.validated_data["source"],
            evidence=data.validated_data["evidence"],
            reason=data.validated_data["reason"],
            by=signed_in(request.user),
        )
        return Response(QualificationSerializer(qualification).data, status=status.HTTP_201_CREATED)


class InternationalMasterEnterView(APIView):
    """Record an International Master title (kept apart from the national titles)."""

    permission_classes = [IsReviewer]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "InternationalMasterEntry"

        player = serializers.CharField(help_text="The player's id.")
        granted_on = serializers.DateField()
        valid_until = serializers.DateField(required=False, allow_null=True, default=None)
        # A field named "source": the stubs see Field.source (DRF moves declared fields off).
        source = serializers.CharField(max_length=200)  # type: ignore[assignment]

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "InternationalMasterRecord"

        id = serializers.IntegerField()
        player = PlayerSerializer()
        granted_on = serializers.DateField()
        valid_until = serializers.DateField(allow_null=True)
        # A field named "source": the stubs see Field.source (DRF moves declared fields off).
        source = serializers.CharField()  # type: ignore[assignment]

    @extend_schema(
        operation_id="titles_international_master_enter",
        request=InputSerializer,
        responses={201: OutputSerializer},
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        record = services.international_master_enter(
            player=player_of(data.validated_data["player"]),
            granted_on=data.validated_data["granted_on"],
            valid_until=data.validated_data["valid_until"],
            source=data.validated_data["source"],
            by=signed_in(request.user),
        )
        return Response(self.OutputSerializer(record).data, status=status.HTTP_201_CREATED)


# --- organisers ----------------------------------------------------------------------------


class WorldCupRepresentativeEnterView(APIView):
    """Enter or correct China's #1 of a World Cup stake ranking for a month."""

    permission_classes = [IsOrganiser]

    class InputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "WorldCupRepresentativeEntry"

        year = serializers.IntegerField(min_value=2000, max_value=2100)
        month = serializers.IntegerField(min_value=1, max_value=12)
        ranking = serializers.ChoiceField(choices=StakeRanking.choices)
        player = serializers.CharField(help_text="The player's id.")

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "WorldCupRepresentative"

        year = serializers.IntegerField()
        month = serializers.IntegerField()
        ranking = serializers.ChoiceField(choices=StakeRanking.choices)
        player = PlayerSerializer()
        entered_at = serializers.DateTimeField()

    @extend_schema(
        operation_id="titles_world_cup_representative_enter",
        request=InputSerializer,
        responses=OutputSerializer,
    )
    def post(self, request: Request) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        representative = services.world_cup_representative_enter(
            year=data.validated_data["year"],
            month=data.validated_data["month"],
            ranking=data.validated_data["ranking"],
            player=player_of(data.validated_data["player"]),
            by=signed_in(request.user),
        )
        return Response(self.OutputSerializer(representative).data)
