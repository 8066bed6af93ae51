"""One error body for every API error: ``{"error": {"code", "message", "fields"?}}``.

``fields`` (validation errors only) maps each offending field (or ``non_field_errors``) to its messages.
A stale edit (:class:`annotations.services.Conflict`) answers 409 with the same envelope plus
``base_version``, ``current_version``, ``diff`` (field-level diffs current → yours) and both snapshots.
Review services' :class:`InvalidState` is a 409 ``invalid_state``; their ``PermissionDenied`` a 403.
Exceptions that are not API errors are left to Django (a 500, logged), so bugs are never disguised.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.http import Http404
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from annotations.services import Conflict, InvalidState


def _codes(exc: exceptions.APIException) -> str:
    codes = exc.get_codes()
    return codes if isinstance(codes, str) else exc.default_code


def _first_message(detail: Any) -> str:
    """The first message of a (possibly nested) validation detail, prefixed with its field."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            inner = _first_message(value)
            return inner if key == "non_field_errors" else f"{key}: {inner}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def error_body(*, code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def conflict_body(conflict: Conflict) -> dict[str, Any]:
    return error_body(
        code="version_conflict",
        message=str(conflict),
        base_version=conflict.base_version,
        current_version=conflict.current_version,
        diff=[asdict(d) for d in conflict.diffs],
        current=conflict.current,
        mine=conflict.mine,
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, Conflict):
        set_rollback()
        return Response(conflict_body(exc), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, InvalidState):
        set_rollback()
        return Response(error_body(code="invalid_state", message=str(exc)), status=status.HTTP_409_CONFLICT)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        detail = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        response.data = error_body(code="invalid", message=_first_message(detail), fields=detail)
    elif isinstance(exc, exceptions.APIException):
        response.data = error_body(code=_codes(exc), message=str(exc.detail))
    else:  # Django's PermissionDenied, converted by DRF
        response.data = error_body(code="permission_denied", message=str(exc) or "Permission denied.")
    return response
