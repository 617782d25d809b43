"""What the tournaments API views share: public reads with organiser-only writes, and the
paginated envelope (``core.pagination.DefaultPagination``) described in the schema."""

from typing import Any, Protocol

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


class Pageable(Protocol):
    """What a page is cut from: a queryset, a list or a lazy sequence such as the leaderboard."""

    def __len__(self) -> int: ...
    def __getitem__(self, key: slice, /) -> Any: ...


def paginated(name: str, item: type[serializers.Serializer[Any]]) -> serializers.Serializer[Any]:
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
    request: Request, view: APIView, rows: Pageable, item: type[serializers.Serializer[Any]]
) -> Response:
    """Page ``rows`` (a queryset or any sliceable with ``count()``) and serialise the page."""
    paginator = DefaultPagination()
    # Django's paginator takes any sized, sliceable rows; the stubs ask for a QuerySet.
    page: list[Any] | None = paginator.paginate_queryset(rows, request, view=view)  # type: ignore[arg-type]
    return paginator.get_paginated_response(item(page, many=True).data)
