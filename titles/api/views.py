"""Title API (SPEC §6, §9): one view per operation.

Public: a player's titles on a day (``/api/players/{id}/titles/``), the registry of current
Masters and Lifetime Masters, verification of a term by its code — approved data only, no
personal data. Reviewers: the review queue, approve / reject (with the version they saw;
409 when someone decided first), bulk approve, manual qualifications, International
Masters. Organisers: World Cup representatives.
"""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Player, User
from accounts.permissions import IsOrganiser, IsReviewer
from accounts.provinces import PROVINCE_CHOICES
from accounts.roles import signed_in
from core.errors import NotFoundError
from titles import selectors, services
from titles.models import (
    Confers,
    PlayerTitle,
    Qualification,
    QualificationRule,
    QualificationStatus,
    StakeRanking,
    TermState,
    TitleStatus,
)
from titles.recompute import tour_today


class PlayerSerializer(serializers.Serializer[Any]):
    class Meta:
        ref_name = "TitlesPlayer"

    id = serializers.CharField(source="external_id")
    name = serializers.CharField()
    province = serializers.CharField()


class ErrorSerializer(serializers.Serializer[Any]):
    """A refused request (core.errors): what and why; ``detail.reason`` for a 409 is
    ``stale`` (decided by someone else: reload), ``held`` or ``audit``."""

    class Meta:
        ref_name = "TitlesError"

    code = serializers.CharField()
    message = serializers.CharField()
    detail = serializers.JSONField(required=False)


def _player(external_id: str) -> Player:
    player = Player.objects.filter(external_id=external_id).first()
    if player is None:
        raise NotFoundError(f"No player {external_id!r}.")
    return player


def _qualification(pk: int) -> Qualification:
    qualification = Qualification.objects.select_related("player").filter(pk=pk).first()
    if qualification is None:
        raise NotFoundError(f"No qualification {pk}.")
    return qualification


def _staff(request: Request) -> User:
    """The signed-in staff user (the view's permission class guarantees one)."""
    return signed_in(request.user)


def _path(name: str, kind: OpenApiTypes, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, kind, OpenApiParameter.PATH, description=description)


PLAYER_ID = _path("player_id", OpenApiTypes.STR, "The player's id (game-server account id).")
QUALIFICATION_ID = _path("id", OpenApiTypes.INT, "The qualification's id.")


# --- public --------------------------------------------------------------------------------


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


class PlayerTitlesView(APIView):
    """Was this player a Master on a day, and why."""

    permission_classes = [AllowAny]

    class InputSerializer(serializers.Serializer[Any]):
        as_of = serializers.DateField(required=False)

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "PlayerTitles"

        player = PlayerSerializer()
        as_of = serializers.DateField()
        status = serializers.ChoiceField(
            choices=[s for s in TitleStatus.choices if s[0] != TitleStatus.LAPSED]
        )
        term = TitleTermSerializer(allow_null=True, help_text="The Master term covering the day.")
        lifetime_since = serializers.DateField(allow_null=True)
        qualifications = TitleQualificationSerializer(
            many=True, help_text="The approved qualifications behind the status on that day."
        )
        international_master = InternationalMasterSerializer(
            many=True, help_text="International Master records valid that day (kept apart)."
        )

    @extend_schema(
        operation_id="player_titles",
        parameters=[PLAYER_ID, InputSerializer],
        responses=OutputSerializer,
    )
    def get(self, request: Request, player_id: str) -> Response:
        params = self.InputSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        day = params.validated_data.get("as_of") or tour_today()
        titles = selectors.player_titles_on(player=_player(player_id), day=day)
        term = None
        if titles.term is not None:
            term = {
                "start": titles.term.start,
                "valid_until": titles.term.valid_until,
                "code": titles.term_code,
            }
        data = {
            "player": titles.player,
            "as_of": day,
            "status": titles.status,
            "term": term,
            "lifetime_since": titles.lifetime_since,
            "qualifications": titles.qualifications,
            "international_master": titles.international,
        }
        return Response(self.OutputSerializer(data).data)


class RegistryView(generics.ListAPIView[PlayerTitle]):
    """Current Masters (with their last valid day) and Lifetime Masters."""

    permission_classes = [AllowAny]
    filter_backends: list[Any] = []

    class InputSerializer(serializers.Serializer[Any]):
        province = serializers.ChoiceField(choices=PROVINCE_CHOICES, required=False)
        status = serializers.ChoiceField(
            choices=[TitleStatus.MASTER, TitleStatus.LIFETIME], required=False
        )

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "RegistryEntry"

        player = PlayerSerializer()
        status = serializers.ChoiceField(choices=TitleStatus.choices)
        valid_until = serializers.DateField(allow_null=True)
        lifetime_since = serializers.DateField(allow_null=True)
        code = serializers.SerializerMethodField()

        def get_code(self, obj: Any) -> str | None:
            """Verification code of the latest Master term."""
            return obj.terms[-1]["code"] if obj.terms else None

    serializer_class = OutputSerializer

    def get_queryset(self) -> Any:
        params = self.InputSerializer(data=self.request.query_params)
        params.is_valid(raise_exception=True)
        return selectors.registry(
            province=params.validated_data.get("province"),
            status=params.validated_data.get("status"),
        )

    @extend_schema(operation_id="titles_registry", parameters=[InputSerializer])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class VerifyView(APIView):
    """Verify a Master term by its code."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer[Any]):
        class Meta:
            ref_name = "VerifiedTerm"

        code = serializers.CharField()
        player = PlayerSerializer()
        start = serializers.DateField()
        valid_until = serializers.DateField()
        state = serializers.ChoiceField(choices=TermState.choices)

    @extend_schema(
        operation_id="titles_verify",
        parameters=[_path("code", OpenApiTypes.STR, "The term's verification code.")],
        responses=OutputSerializer,
    )
    def get(self, request: Request, code: str) -> Response:
        term = selectors.term_by_code(code=code)
        if term is None:
            raise NotFoundError(f"No Master term has the code {code!r}.")
        return Response(self.OutputSerializer(term).data)


# --- reviewers -----------------------------------------------------------------------------


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
        items = selectors.review_items(list(page or []))
        return self.get_paginated_response(self.OutputSerializer(items, many=True).data)


class DecisionInputSerializer(serializers.Serializer[Any]):
    expected_version = serializers.IntegerField(min_value=1)
    reason = serializers.CharField(max_length=500, allow_blank=True, default="")


class ApproveView(APIView):
    """Approve a grant at the version the reviewer saw (409 if someone decided first)."""

    permission_classes = [IsReviewer]

    @extend_schema(
        operation_id="titles_approve",
        parameters=[QUALIFICATION_ID],
        request=DecisionInputSerializer,
        responses={
            200: QualificationSerializer,
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        data = DecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        qualification = services.qualification_approve(
            qualification=_qualification(pk),
            by=_staff(request),
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
        request=DecisionInputSerializer,
        responses={
            200: QualificationSerializer,
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        data = DecisionInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        qualification = services.qualification_reject(
            qualification=_qualification(pk),
            by=_staff(request),
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
        outcome = services.qualifications_bulk_approve(
            items=[(i["id"], i["expected_version"]) for i in data.validated_data["items"]],
            by=_staff(request),
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
        rule = QualificationRule.objects.filter(key=data.validated_data["rule"]).first()
        if rule is None:
            raise NotFoundError(f"No qualification rule {data.validated_data['rule']!r}.")
        qualification = services.qualification_enter(
            player=_player(data.validated_data["player"]),
            rule=rule,
            on=data.validated_data["on"],
            source=data.validated_data["source"],
            evidence=data.validated_data["evidence"],
            reason=data.validated_data["reason"],
            by=_staff(request),
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
            player=_player(data.validated_data["player"]),
            granted_on=data.validated_data["granted_on"],
            valid_until=data.validated_data["valid_until"],
            source=data.validated_data["source"],
            by=_staff(request),
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
            player=_player(data.validated_data["player"]),
            by=_staff(request),
        )
        return Response(self.OutputSerializer(representative).data)
