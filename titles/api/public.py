"""Public title API (SPEC §6, §9): a player's titles on a day
(``/api/players/{id}/titles/``), the registry of current Masters and Lifetime Masters, and
the verification of a term by its code — approved data only, no personal data."""

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.provinces import PROVINCE_CHOICES
from core.clock import tour_today
from core.errors import ServiceError, found
from core.serializers import PlayerSerializer
from titles import selectors
from titles.api.serializers import (
    PLAYER_ID,
    InternationalMasterSerializer,
    TitleQualificationSerializer,
    TitleTermSerializer,
    path_parameter,
    player_of,
)
from titles.models import PlayerTitle, TermState, TitleStatus


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
        responses={200: OutputSerializer},
    )
    def get(self, request: Request, player_id: str) -> Response:
        params = self.InputSerializer(data=request.query_params)
        if not params.is_valid():
            raise ServiceError(
                f"as_of is not a date: give it as YYYY-MM-DD ({request.query_params['as_of']!r}).",
                detail=params.errors,
            )
        day = params.validated_data.get("as_of") or tour_today()
        titles = selectors.player_titles_on(player=player_of(player_id), day=day)
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
        parameters=[path_parameter("code", OpenApiTypes.STR, "The term's verification code.")],
        responses=OutputSerializer,
    )
    def get(self, request: Request, code: str) -> Response:
        term = found(selectors.term_by_code(code=code), f"No Master term has the code {code!r}.")
        return Response(self.OutputSerializer(term).data)
