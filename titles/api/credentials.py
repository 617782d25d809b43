"""The title credentials over the API (SPEC §6 Credentials, §9 paths): a term's or Lifetime
title's signed Open Badges 3.0 credential, the signed status lists they point to, and the
issuer's DID document (``/.well-known/did.json``). Public, no personal data."""

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import found
from titles.api.serializers import path_parameter
from titles.credentials.documents import credential_for_code, status_list_credential
from titles.credentials.keys import did_document


class _Credentials(APIView):
    permission_classes = [AllowAny]
    renderer_classes = [JSONRenderer]  # JSON-LD is JSON: one documented media type


class TermCredentialView(_Credentials):
    """A Master term's or a Lifetime title's signed OpenBadgeCredential (Open Badges 3.0,
    VC Data Model 2.0, ``eddsa-rdfc-2022``), whatever its state: its status list says whether
    it was revoked, its dates whether it has lapsed."""

    @extend_schema(
        operation_id="titles_term_credential",
        parameters=[
            path_parameter(
                "code", OpenApiTypes.STR, "The verification code of a term or a Lifetime title."
            )
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The signed credential."),
        },
    )
    def get(self, request: Request, code: str) -> Response:
        credential = found(
            credential_for_code(code), f"No Master term or Lifetime title has the code {code!r}."
        )
        return Response(credential)


class StatusListView(_Credentials):
    """A signed BitstringStatusListCredential (purpose ``revocation``): bit n set means the
    credential with ``statusListIndex`` n in this list was voided or revoked."""

    @extend_schema(
        operation_id="titles_status_list",
        parameters=[
            path_parameter("list", OpenApiTypes.STR, "The list's name: master-N or lifetime-N.")
        ],
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The signed status list."),
        },
    )
    def get(self, request: Request, list: str) -> Response:  # noqa: A002 (the SPEC's name)
        credential = found(status_list_credential(list), f"No status list is named {list!r}.")
        return Response(credential)


@require_GET
def did_json(request: HttpRequest) -> JsonResponse:
    """The issuer's ``did:web`` DID document: every key that signed a credential."""
    response = JsonResponse(did_document())
    response["Content-Type"] = "application/did+json"
    return response
