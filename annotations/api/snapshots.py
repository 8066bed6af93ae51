"""Snapshot endpoints: list, detail (``vN`` or ``latest``), file downloads and creation.

Adjudicators and admins only (403 for reviewers): a snapshot holds every curated session, while a
reviewer may see only the sessions assigned to them. Creation goes through
:func:`annotations.snapshots.background.request_snapshot` like the admin action: the row is created at
once and built by the Celery task (in-process without a broker, so then it is ready on return).
"""

from __future__ import annotations

import json

from django.http import FileResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, renderers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from annotations.api import snapshot_serializers as snap
from annotations.api.errors import error_body
from annotations.api.permissions import IsAdjudicatorOrAdmin
from annotations.api.views import error_responses
from annotations.models import Snapshot
from annotations.snapshots import background as snapshot_background
from annotations.snapshots import recovery as snapshot_recovery
from annotations.snapshots import selectors as snapshot_selectors
from annotations.snapshots.duplicates import DuplicateSnapshot
from annotations.snapshots.errors import BuildInProgress, SnapshotError, UnknownSnapshot


class BinaryRenderer(renderers.BaseRenderer):
    """Lets a client ask for ``application/octet-stream``; an error body is still JSON."""

    media_type = "application/octet-stream"
    format = "bin"
    charset = None
    render_style = "binary"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, bytes):
            return data
        return json.dumps(data, ensure_ascii=False).encode("utf-8")


LABEL_PARAM = OpenApiParameter(
    "label", OpenApiTypes.STR, OpenApiParameter.PATH, description="vN, or latest (the newest ready snapshot)"
)
SNAPSHOT_ERRORS = error_responses(401, 403, 404)


@extend_schema_view(
    list=extend_schema(
        summary="Snapshots, newest first", responses={200: snap.SnapshotSerializer, **error_responses(400, 401, 403)}
    ),
    retrieve=extend_schema(
        summary="One snapshot: manifest, checksums and dataset card",
        parameters=[LABEL_PARAM],
        responses={200: snap.SnapshotDetailSerializer, **SNAPSHOT_ERRORS},
    ),
)
class SnapshotViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    # The site's access table (DEFAULT_PERMISSION_CLASSES: physreview.access), then the object rules.
    permission_classes = [*api_settings.DEFAULT_PERMISSION_CLASSES, IsAuthenticated, IsAdjudicatorOrAdmin]
    lookup_field = "label"
    lookup_value_regex = r"v[0-9]+|latest"
    filterset_fields = ["status"]

    def get_queryset(self):
        return Snapshot.objects.select_related("created_by").order_by("-version")

    def get_serializer_class(self):
        if self.action == "create":
            return snap.SnapshotCreateSerializer
        return snap.SnapshotSerializer if self.action == "list" else snap.SnapshotDetailSerializer

    def get_object(self) -> Snapshot:
        label = self.kwargs["label"]
        try:
            if label == "latest":
                snapshot = snapshot_selectors.get_snapshot(ref="latest")
            else:
                snapshot = self.get_queryset().get(label=label)
        except (Snapshot.DoesNotExist, UnknownSnapshot) as exc:
            raise NotFound(f"no snapshot {label}" if isinstance(exc, Snapshot.DoesNotExist) else str(exc)) from None
        self.check_object_permissions(self.request, snapshot)
        return snapshot

    @extend_schema(
        summary="Make a snapshot of the curated set (adjudicators and admins)",
        request=snap.SnapshotCreateSerializer,
        responses={
            201: OpenApiResponse(snap.SnapshotDetailSerializer, description="created; status tells building/ready"),
            **error_responses(400, 401, 403, 409),
        },
    )
    def create(self, request: Request) -> Response:
        body = snap.SnapshotCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            snapshot = snapshot_background.request_snapshot(
                user=request.user,
                scenarios=data.get("scenarios"),
                tiers=data.get("tiers"),
                languages=data.get("languages"),
                ehr_provenance=data["ehr_provenance"],
                force=data["force"],
            )
        except DuplicateSnapshot as exc:
            # Nothing was created: say which snapshot already holds this content.
            body = error_body(
                code="duplicate_snapshot",
                message=f"{exc} (send force: true to make one anyway)",
                latest=exc.latest.label,
                content_sha256=exc.content_sha256,
            )
            return Response(body, status=status.HTTP_409_CONFLICT)
        except SnapshotError as exc:
            raise ValidationError({"non_field_errors": [str(exc)]}) from exc
        snapshot.refresh_from_db()
        serializer = snap.SnapshotDetailSerializer(snapshot, context=self.get_serializer_context())
        location = request.build_absolute_uri(reverse("api:snapshot-detail", kwargs={"label": snapshot.label}))
        return Response(serializer.data, status=status.HTTP_201_CREATED, headers={"Location": location})

    @extend_schema(
        summary="Resume a failed or stalled snapshot build (adjudicators and admins)",
        description="A failed build, or a building one whose heartbeat is older than JOB_STALE_SECONDS (its process "
        "died), is queued again; frozen items are reused. 409 build_in_progress while a live process builds it, "
        "409 snapshot_ready for a ready one.",
        request=None,
        parameters=[LABEL_PARAM],
        responses={202: snap.SnapshotDetailSerializer, **error_responses(401, 403, 404, 409)},
    )
    @action(detail=True, methods=["post"], url_path="resume", url_name="resume")
    def resume(self, request: Request, label: str | None = None) -> Response:
        snapshot = self.get_object()
        try:
            snapshot = snapshot_recovery.resume(snapshot=snapshot)
        except BuildInProgress as exc:
            return Response(error_body(code="build_in_progress", message=str(exc)), status=status.HTTP_409_CONFLICT)
        except SnapshotError as exc:
            return Response(error_body(code="snapshot_ready", message=str(exc)), status=status.HTTP_409_CONFLICT)
        except Exception:  # built in-process (no broker) and failed again: its status and error say why
            snapshot = self.get_object()
        snapshot.refresh_from_db()
        serializer = snap.SnapshotDetailSerializer(snapshot, context=self.get_serializer_context())
        return Response(serializer.data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        summary="Download one file of a ready snapshot (data files, card.md, manifest.json, SHA256SUMS)",
        parameters=[LABEL_PARAM, OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH)],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, **SNAPSHOT_ERRORS},
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=r"files/(?P<name>[^/]+)",
        url_name="file",
        renderer_classes=[renderers.JSONRenderer, BinaryRenderer],
    )
    def file(self, request: Request, label: str | None = None, name: str | None = None) -> FileResponse:
        snapshot = self.get_object()
        try:
            path = snapshot_selectors.snapshot_file_path(snapshot=snapshot, name=name)
        except SnapshotError as exc:
            raise NotFound(str(exc)) from None
        return FileResponse(path.open("rb"), as_attachment=True, filename=name, content_type="application/octet-stream")
