"""Who am I: the signed-in user and their roles (useful to check a token)."""

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.roles import ROLE_PERMISSIONS, has_role


class MeView(APIView):
    permission_classes = [IsAuthenticated]

    class OutputSerializer(serializers.Serializer[Any]):
        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        roles = [role for role in ROLE_PERMISSIONS if has_role(request.user, role)]
        return Response({"username": request.user.get_username(), "roles": roles})
