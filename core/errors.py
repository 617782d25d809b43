"""Errors services raise; the API turns them into responses that say what and where."""

from typing import Any, TypeVar

_T = TypeVar("_T")


class ServiceError(Exception):
    """A refused write: nothing was changed. ``status`` is the HTTP status the API answers."""

    status = 400
    code = "invalid"

    def __init__(self, message: str, *, detail: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


class NotFoundError(ServiceError):
    status = 404
    code = "not_found"


class ConflictError(ServiceError):
    status = 409
    code = "conflict"


class UnavailableError(ServiceError):
    status = 503
    code = "unavailable"


def found(obj: _T | None, message: str) -> _T:
    """``obj``, or a 404 saying ``message`` when the lookup found nothing."""
    if obj is None:
        raise NotFoundError(message)
    return obj
