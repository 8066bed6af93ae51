"""Read-only REST endpoints for evaluation runs (mounted in the API router, see physreview.api_urls).

Reviewers, adjudicators and admins read runs (physreview.access); a reviewer lists only the turns of sessions
assigned to them. ``/api/runs/{id}/`` carries the run's
``summary.json`` and manifest; ``/api/runs/{id}/turns/`` lists its turn results with the drill-down
filters of the results pages (``show=failures|safety|replay_misses|invalid_calls``, ``language``,
``scenario``), each with its full trace.
"""

from __future__ import annotations

from django.db.models.fields.json import KT
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import ValidationError

from annotations.api.views import error_responses
from evaluation.faults import fault_summary
from evaluation.models import EvalRun, TurnResult
from evaluation.reports import IDENTITY_FIELDS
from evaluation.results.selectors import DEFAULT_PROTOCOL, run_protocol, turn_results, visible_results

TURN_FILTERS = {
    "show": ("", "failures", "safety", "replay_misses", "invalid_calls", "unknown_arguments"),
    "language": ("", "en", "zh"),
}


class EvalRunSerializer(serializers.ModelSerializer):
    protocol = serializers.SerializerMethodField(help_text="runeval --protocol the run was played under")

    class Meta:
        model = EvalRun
        fields = [
            "id",
            "model",
            "judge",
            "judge_certified",
            "status",
            "protocol",
            "rejudge_of",
            "started_at",
            "finished_at",
            "error",
        ]

    @extend_schema_field(OpenApiTypes.STR)
    def get_protocol(self, run: EvalRun) -> str:
        # Lists annotate the name (the manifest itself is deferred there).
        if hasattr(run, "protocol_name"):
            return run.protocol_name or DEFAULT_PROTOCOL
        return run_protocol(manifest=run.manifest)


class EvalRunDetailSerializer(EvalRunSerializer):
    faults = serializers.SerializerMethodField(
        help_text=(
            "Physicians' fault attributions (made after the run, so not in summary.json): the metrics on every "
            "scored turn and without task-faulted turns, counts and shares per kind, the simulator-fault rate"
        )
    )

    class Meta(EvalRunSerializer.Meta):
        fields = [*EvalRunSerializer.Meta.fields, "manifest", "summary", "faults"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_faults(self, run: EvalRun) -> dict:
        return fault_summary(run=run)


class TurnResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = TurnResult
        fields = [
            "id",
            *IDENTITY_FIELDS,
            "passed",
            "scored",
            "unscored",
            "score",
            "infra_error",
            "verdicts",
            "trace",
        ]


TURN_PARAMS = [
    OpenApiParameter("show", OpenApiTypes.STR, enum=list(TURN_FILTERS["show"][1:]), description="drill-down filter"),
    OpenApiParameter("language", OpenApiTypes.STR, enum=["en", "zh"]),
    OpenApiParameter("scenario", OpenApiTypes.STR),
]


@extend_schema_view(
    list=extend_schema(
        summary="Evaluation runs, newest first", responses={200: EvalRunSerializer, **error_responses(400, 401)}
    ),
    retrieve=extend_schema(
        summary="One run: manifest and summary.json",
        responses={200: EvalRunDetailSerializer, **error_responses(401, 404)},
    ),
)
class EvalRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    filterset_fields = ["status", "model", "judge"]

    def get_queryset(self):
        # Lists leave out the (large) summary and manifest; the detail view reads them.
        runs = EvalRun.objects.order_by("-started_at", "-pk")
        if self.action != "list":
            return runs
        return runs.defer("summary", "manifest").annotate(protocol_name=KT("manifest__protocol__name"))

    def get_serializer_class(self):
        return EvalRunSerializer if self.action == "list" else EvalRunDetailSerializer


@extend_schema_view(
    list=extend_schema(
        summary="The run's turn results with their traces (drill-down filters)",
        parameters=[OpenApiParameter("run_pk", OpenApiTypes.INT, OpenApiParameter.PATH), *TURN_PARAMS],
        responses={200: TurnResultSerializer, **error_responses(400, 401, 404)},
    ),
)
class TurnResultViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = TurnResultSerializer
    filter_backends: list = []  # the drill-down filters below, shared with the results pages

    def get_queryset(self):
        run = get_object_or_404(EvalRun, pk=self.kwargs["run_pk"])
        filters = {key: self.request.query_params.get(key, "") for key in ("show", "language", "scenario")}
        errors = {
            key: [f"must be one of {', '.join(v for v in allowed if v)}"]
            for key, allowed in TURN_FILTERS.items()
            if filters[key] not in allowed
        }
        if errors:
            raise ValidationError(errors)
        results = visible_results(user=self.request.user, results=turn_results(run=run, filters=filters)).defer(None)
        return results.order_by("session_id", "language", "variant", "trial", "turn_index", "pk")
