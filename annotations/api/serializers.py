"""API representations of sessions and turns, review action bodies and error bodies (for the schema).

Turn texts are flat ``*_en`` / ``*_zh`` fields, the same keys an edit's change set uses (see
:mod:`annotations.content`). The ``language`` query parameter (``en``, ``zh``, ``both``) picks the
texts a turn carries; the other language's text fields are ``null``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotations.models import Review
from annotations.roles import is_adjudicator
from annotations.steps import contract_view
from scenarios.models import GoldStep, RubricItem, Session, Turn

MAX_VERSION = 2**31 - 1  # PositiveIntegerField range


def _language(context: dict[str, Any]) -> str:
    request = context.get("request")
    value = request.query_params.get("language", "both") if request is not None else "both"
    return value if value in ("en", "zh") else "both"


def _blank_other_language(data: dict[str, Any], language: str) -> dict[str, Any]:
    if language == "both":
        return data
    other = "_zh" if language == "en" else "_en"
    return {k: (None if k.endswith(other) else v) for k, v in data.items()}


class LanguageTextMixin:
    """Nulls the text fields of the language the request did not ask for."""

    def to_representation(self, instance):
        return _blank_other_language(super().to_representation(instance), _language(self.context))


class StepSerializer(serializers.ModelSerializer):
    arguments = serializers.SerializerMethodField(help_text="the call's arguments under the tool contract's names")

    class Meta:
        model = GoldStep
        fields = ["idx", "tool", "arguments", "observation", "dependency_list"]

    @extend_schema_field(serializers.DictField())
    def get_arguments(self, step: GoldStep) -> Any:
        # As the review screen shows them: data of an earlier version reads as the call now runs.
        return contract_view(tool=step.tool, arguments=step.arguments)


class RubricItemSerializer(LanguageTextMixin, serializers.ModelSerializer):
    """A rubric item; the text of a language not asked for is null."""

    text_en = serializers.CharField(allow_null=True)
    text_zh = serializers.CharField(allow_null=True)

    class Meta:
        model = RubricItem
        fields = ["id", "idx", "text_en", "text_zh", "is_safety", "safety_inferred", "machine_check"]


def _text(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(allow_null=True, read_only=True, **kwargs)


class TurnSerializer(LanguageTextMixin, serializers.ModelSerializer):
    """A turn with its gold steps and rubric; text fields of a language not asked for are null."""

    record_id = serializers.CharField(source="session.record_id", read_only=True)
    scenario = serializers.CharField(source="session.scenario", read_only=True)
    tier = serializers.IntegerField(source="session.tier", read_only=True)
    request_explicit_en = _text()
    request_implicit_en = _text(help_text="what the assistant is given")
    answer_en = _text()
    request_explicit_zh = _text()
    request_implicit_zh = _text()
    answer_zh = _text()
    steps = StepSerializer(many=True, read_only=True)
    rubric = RubricItemSerializer(source="rubric_items", many=True, read_only=True)

    class Meta:
        model = Turn
        fields = [
            "id",
            "session",
            "record_id",
            "scenario",
            "tier",
            "index",
            "task_type",
            "subtype",
            "is_implicit",
            "tool_source",
            "workup_mode",
            "status",
            "version",
            "request_explicit_en",
            "request_implicit_en",
            "answer_en",
            "request_explicit_zh",
            "request_implicit_zh",
            "answer_zh",
            "derivations",
            "steps",
            "rubric",
        ]
        read_only_fields = fields


class ReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.CharField(source="reviewer.username", read_only=True)
    submitted = serializers.BooleanField(read_only=True)

    class Meta:
        model = Review
        fields = [
            "id",
            "reviewer",
            "decision",
            "reject_reason",
            "reason",
            "base_version",
            "proposed",
            "gate_warnings",
            "submitted",
            "submitted_at",
            "updated",
        ]
        read_only_fields = fields


class TurnDetailSerializer(TurnSerializer):
    """A turn, its steps, rubric and the reviews the user may see."""

    reviews = serializers.SerializerMethodField(help_text="reviews the user may see (blind until all are in)")

    class Meta(TurnSerializer.Meta):
        fields = [*TurnSerializer.Meta.fields, "reviews"]
        read_only_fields = fields

    @extend_schema_field(ReviewSerializer(many=True))
    def get_reviews(self, turn: Turn) -> list[dict[str, Any]]:
        return ReviewSerializer(self.context.get("visible_reviews", []), many=True).data


class TurnSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = Turn
        fields = ["id", "index", "task_type", "subtype", "is_implicit", "tool_source", "status", "version"]
        read_only_fields = fields


class SessionSerializer(serializers.ModelSerializer):
    reviewers = serializers.SerializerMethodField(
        help_text="assigned reviewers' usernames (a reviewer sees only their own name)"
    )

    class Meta:
        model = Session
        fields = [
            "id",
            "record_id",
            "session_id",
            "scenario",
            "clinical_task_domain",
            "tier",
            "status",
            "source",
            "subject_id",
            "hadm_id",
            "current_date",
            "generated_at",
            "reviewers",
        ]
        read_only_fields = fields

    def get_reviewers(self, session: Session) -> list[str]:
        names = sorted(a.reviewer.username for a in session.assignments.all())
        request = self.context.get("request")
        if request is None or is_adjudicator(request.user):
            return names
        return [n for n in names if n == request.user.get_username()]


class SessionDetailSerializer(SessionSerializer):
    turns = TurnSummarySerializer(many=True, read_only=True)

    class Meta(SessionSerializer.Meta):
        fields = [
            *SessionSerializer.Meta.fields,
            "env_info",
            "tools",
            "tools_zh",
            "persona",
            "session_plan",
            "dep_graph",
            "turns",
        ]
        read_only_fields = fields


# --- Review actions ---------------------------------------------------------------------------
