"""Pagination for every list endpoint: page numbers with a bounded page size.

``?page_size=`` that is not a whole number of at least 1 is a 400 naming it (DRF would
quietly answer the default size); more than ``max_page_size`` is capped; empty is as if not
given."""

from typing import Any

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request


class DefaultPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int:
        given = request.query_params.get(self.page_size_query_param, "")
        if given == "":
            return self.page_size
        if not (given.isascii() and given.isdigit() and int(given) >= 1):
            raise ValidationError(
                {self.page_size_query_param: [f"a whole number of at least 1 (got {given!r})"]}
            )
        return min(int(given), self.max_page_size)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] |= {"minimum": 1}
            if parameter["name"] == self.page_query_param:
                parameter["schema"] |= {"minimum": 1}
        return parameters
