"""API views: thin wrappers over annotations.selectors / services with the UI's permission rules.

Reads are scoped by :mod:`annotations.api.permissions` (objects a user may not see answer 404); review
actions call the same services as the review screens, which decide who may do what (403 otherwise).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from annotations import selectors, services
from annotations.api import action_serializers as act
from annotations.api import serializers as s
from annotations.api.filters import LANGUAGES, SessionFilter, TurnFilter
from annotations.api.permissions import visible_sessions, visible_turns
from annotations.content import InvalidContent
from annotations.models import Decision
from annotations.services import confirmation
from annotations.services.reviews import is_assigned
from scenarios.models import Turn


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    described = {
        400: "invalid input; error.fields names each bad field",
        401: "not authenticated (send `Authorization: Token <key>` or log in)",
        403: "authenticated but not allowed",
        404: "no such object, or not visible to you",
        409: "a conflict with the current state (e.g. duplicate_snapshot: the content equals the latest snapshot's)",
    }
    return {code: OpenApiResponse(act.ErrorSerializer, description=described[code]) for code in codes}


READ_ERRORS = error_responses(400, 401, 404)
LANGUAGE_PARAM = OpenApiParameter(
    "language",
    OpenApiTypes.STR,
    enum=[value for value, _ in LANGUAGES],
    description="texts to include: en, zh or both (default); the other language's text fields are null",
)


class LanguageQuerySerializer(serializers.Serializer):
    language = serializers.ChoiceField(choices=LANGUAGES, required=False)


class ListFilterMixin:
    """django-filter applies to lists only: a detail URL names one object whatever the filters say."""

    def filter_queryset(self, queryset):
        if self.action == "list":
            return super().filter_queryset(queryset)
        return queryset


@extend_schema_view(
    list=extend_schema(summary="Sessions you may see", responses={200: s.SessionSerializer, **READ_ERRORS}),
    retrieve=extend_schema(
        summary="One session with its turns", responses={200: s.SessionDetailSerializer, **READ_ERRORS}
    ),
)
class SessionViewSet(ListFilterMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    filterset_class = SessionFilter

    def get_queryset(self):
        sessions = visible_sessions(user=self.request.user).prefetch_related("assignments__reviewer")
        if self.action == "retrieve":
            sessions = sessions.prefetch_related("turns")
        return sessions.order_by("record_id")

    def get_serializer_class(self):
        return s.SessionDetailSerializer if self.action == "retrieve" else s.SessionSerializer


ACTION_RESPONSES = {
    200: act.ActionResultSerializer,
    **error_responses(400, 401, 403, 404),
    409: OpenApiResponse(
        act.ConflictSerializer,
        description="stale base_version (error.code version_conflict: current_version and diff included) "
        "or a turn closed for review (error.code invalid_state)",
    ),
}


@extend_schema_view(
    list=extend_schema(
        summary="Turns you may see, with steps and rubric", responses={200: s.TurnSerializer, **READ_ERRORS}
    ),
    retrieve=extend_schema(
        summary="One turn with steps, rubric and the reviews you may see",
        parameters=[LANGUAGE_PARAM],
        responses={200: s.TurnDetailSerializer, **READ_ERRORS},
    ),
)
class TurnViewSet(ListFilterMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    filterset_class = TurnFilter

    def get_queryset(self):
        return (
            visible_turns(user=self.request.user)
            .select_related("session")
            .prefetch_related("steps", "rubric_items")
            .order_by("session__record_id", "index")
        )

    def get_serializer_class(self):
        return s.TurnDetailSerializer if self.action == "retrieve" else s.TurnSerializer

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        LanguageQuerySerializer(data=request.query_params).is_valid(raise_exception=True)
        turn = self.get_object()
        context = {
            **self.get_serializer_context(),
            "visible_reviews": selectors.visible_reviews(turn=turn, user=request.user),
        }
        return Response(s.TurnDetailSerializer(turn, context=context).data)

    # --- review actions -------------------------------------------------------------------------

    def _body(self, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
        body = serializer_class(data=self.request.data)
        body.is_valid(raise_exception=True)
        return body.validated_data

    def _result(self, turn: Turn, *, review=None, changed: list[str] | None = None, warnings=None) -> Response:
        fresh = self.get_queryset().get(pk=turn.pk)
        context = self.get_serializer_context()
        return Response(
            {
                "turn": s.TurnSerializer(fresh, context=context).data,
                "review": s.ReviewSerializer(review).data if review is not None else None,
                "changed_fields": changed or [],
                "gate_warnings": warnings or [],
            }
        )

    def _submit(self, turn: Turn, *, decision: str, data: dict[str, Any]) -> Response:
        with _service_errors():
            review, warnings = services.submit_review(
                turn=turn,
                reviewer=self.request.user,
                decision=decision,
                reason=data["reason"],
                reject_reason=data.get("reject_reason", ""),
                proposed=data.get("changes"),
                base_version=data["base_version"],
            )
        return self._result(turn, review=review, warnings=warnings)

    @extend_schema(
        summary="Approve (optionally with edits): submit your review",
        description="Assigned reviewers only; once, while the turn is in review. Edits with a stale "
        "base_version answer 409 with the current version and the diff.",
        request=act.ApproveSerializer,
        responses=ACTION_RESPONSES,
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str | None = None) -> Response:
        turn = self.get_object()
        return self._submit(turn, decision=Decision.APPROVE, data=self._body(act.ApproveSerializer))

    @extend_schema(
        summary="Reject with a reason: submit your review",
        description="Assigned reviewers only; reject_reason is required.",
        request=act.RejectSerializer,
        responses=ACTION_RESPONSES,
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: Request, pk: str | None = None) -> Response:
        turn = self.get_object()
        return self._submit(turn, decision=Decision.REJECT, data=self._body(act.RejectSerializer))

    @extend_schema(
        summary="Edit: a change set on your review draft or on the turn itself",
        description="target=review (default when you are assigned to the session): saved into your blind "
        "review draft, which carries your earlier edits over a newer version; the version check happens when "
        "you submit. target=turn (default otherwise; adjudicators/admins only): applied to the turn if it is "
        "still at base_version, else 409 with current_version and the diff (your values are kept for merging).",
        request=act.EditSerializer,
        responses=ACTION_RESPONSES,
    )
    @action(detail=True, methods=["post"])
    def edit(self, request: Request, pk: str | None = None) -> Response:
        turn = self.get_object()
        data = self._body(act.EditSerializer)
        # Same default as the review screen: an assigned reviewer edits their draft, anyone else the turn.
        target = data.get("target") or ("review" if is_assigned(turn=turn, user=request.user) else "turn")
        if target == "turn":
            with _service_errors():
                turn, revisions, warnings = services.save_turn_edit(
                    turn=turn,
                    user=request.user,
                    changes=data["changes"],
                    base_version=data["base_version"],
                    reason=data["reason"],
                )
            return self._result(turn, changed=[r.field for r in revisions], warnings=warnings)
        with _service_errors():
            review = services.save_draft_review(
                turn=turn,
                reviewer=request.user,
                proposed=data["changes"],
                reason=data["reason"],
                base_version=data["base_version"],
            )
        return self._result(turn, review=review, warnings=review.gate_warnings)

    @extend_schema(
        summary="Confirm an edit of an approved turn (adjudicators/admins other than the editor)",
        description="The turn is in needs_confirmation (edited after approval); its current version becomes "
        "approved and the session can enter the next snapshot again. The editor cannot confirm their own edit "
        "(403); a stale base_version answers 400.",
        request=act.ConfirmSerializer,
        responses=ACTION_RESPONSES,
    )
    @action(detail=True, methods=["post"])
    def confirm(self, request: Request, pk: str | None = None) -> Response:
        turn = self.get_object()
        data = self._body(act.ConfirmSerializer)
        with _service_errors():
            confirmation.confirm_edit(turn=turn, user=request.user, base_version=data["base_version"])
        return self._result(turn)

    @extend_schema(
        summary="Revert an edit of an approved turn to the approved content (adjudicators/admins)",
        description="Writes the latest approved version's content back as a new version and approves it.",
        request=act.ConfirmSerializer,
        responses=ACTION_RESPONSES,
    )
    @action(detail=True, methods=["post"])
    def revert(self, request: Request, pk: str | None = None) -> Response:
        turn = self.get_object()
        data = self._body(act.ConfirmSerializer)
        with _service_errors():
            confirmation.revert_edit(
                turn=turn, user=request.user, base_version=data["base_version"], reason=data["reason"]
            )
        turn.refresh_from_db()
        return self._result(turn, changed=[])


@contextmanager
def _service_errors() -> Iterator[None]:
    """The services' ValueErrors as 400s naming the field (Conflict, InvalidState and PermissionDenied
    pass through to annotations.api.errors)."""
    try:
        yield
    except InvalidContent as exc:
        raise ValidationError({"changes": [str(exc)]}) from exc
    except ValueError as exc:
        raise ValidationError({"non_field_errors": [str(exc)]}) from exc


@extend_schema(exclude=True)
class NotFoundView(APIView):
    """Any other path under /api/: the API's 404 body rather than Django's HTML page."""

    permission_classes = api_settings.DEFAULT_PERMISSION_CLASSES  # the site's access table: anyone
    authentication_classes: list = []

    def http_method_not_allowed(self, request, *args, **kwargs):
        raise NotFound(f"no API endpoint at {request.path}")

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        raise NotFound(f"no API endpoint at {request.path}")
