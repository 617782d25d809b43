"""What the tournaments API views share: public reads with organiser-only writes, and the
paginated envelope (``core.pagination.DefaultPagination``) described in the schema."""

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import inline_serializer
from rest_framework import serializers
from rest_framework.permissions import SAFE_METHODS, AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import IsOrganiser
from core.pagination import DefaultPagination


class OrganiserWritesView(APIView):
    """Anyone reads; only organisers write."""

    def get_permissions(self) -> list[BasePermission]:
        if self.request.method in SAFE_METHODS:
            return [AllowAny()]
        return [IsOrganiser()]


def paginated(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    """The schema of a page: count, next, previous and the results."""
    return inline_serializer(
        name=name,
        fields={
            "count": serializers.IntegerField(),
            "next": serializers.CharField(allow_null=True),
            "previous": serializers.CharField(allow_null=True),
            "results": item(many=True),
        },
    )


def page_response(
    request: Request, view: APIView, rows: Sequence[Any], item: type[serializers.Serializer]
) -> Response:
    """Page ``rows`` (a queryset or any sliceable with ``count()``) and serialise the page."""
    paginator = DefaultPagination()
    page = paginator.paginate_queryset(rows, request, view=view)
    return paginator.get_paginated_response(item(page, many=True).data)
