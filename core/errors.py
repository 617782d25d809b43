"""Errors services raise; the API turns them into responses that say what and where.

A refusal speaks to two audiences. ``message`` is the API's (English, stable: clients and
tests read it, and ``core.api`` returns it as the error body's ``message``). ``say`` is the
same refusal for people, in the active language: the raising service builds it with gettext
(a Chinese msgid, as the project's catalogues do) when it raises, so a console request's
language is the one it speaks. Pages show ``said(exc)``; the API never sends ``say``.
"""

from typing import Any, TypeVar

_T = TypeVar("_T")


class ServiceError(Exception):
    """A refused write: nothing was changed. ``status`` is the HTTP status the API answers;
    ``say`` is the refusal for a page, in the language active when it was raised."""

    status = 400
    code = "invalid"

    def __init__(self, message: str, *, detail: Any = None, say: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.say = say


class NotFoundError(ServiceError):
    status = 404
    code = "not_found"


class ConflictError(ServiceError):
    status = 409
    code = "conflict"


class UnavailableError(ServiceError):
    status = 503
    code = "unavailable"


def said(exc: ServiceError) -> str:
    """The refusal for a page: its ``say``, or the API's ``message`` when the service gave
    none."""
    return exc.say or exc.message


def found(obj: _T | None, message: str, *, say: str | None = None) -> _T:
    """``obj``, or a 404 saying ``message`` (and ``say`` for a page) when the lookup found
    nothing."""
    if obj is None:
        raise NotFoundError(message, say=say)
    return obj
