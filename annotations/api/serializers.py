"""API representations of sessions and turns, review action bodies and error bodies (for the schema).

Turn texts are flat ``*_en`` / ``*_zh`` fields, the same keys an edit's change set uses (see
:mod:`annotations.content`). The ``language`` query parameter (``en``, ``zh``, ``both``) picks the
texts a turn carries; the other language's text fields are ``null``.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from annotations.models import RejectReason, Review, Snapshot
from annotations.roles import is_adjudicator
from annotations.snapshots import card, freeze
from annotations.steps import contract_view
from scenarios.models import GoldStep, RubricItem, Scenario, Session, Subtype, Turn

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


class RubricChangeSerializer(serializers.Serializer):
    """Documentation only (the services validate change sets): one proposed rubric item."""

    id = serializers.IntegerField(allow_null=True, required=False, help_text="row it derives from; null = new")
    text_en = serializers.CharField()
    text_zh = serializers.CharField(required=False, allow_blank=True)
    is_safety = serializers.BooleanField(required=False)
    machine_check = serializers.JSONField(required=False, allow_null=True)


class StepChangeSerializer(serializers.Serializer):
    idx = serializers.IntegerField()
    arguments = serializers.DictField(help_text="new tool arguments (the tool itself cannot change)")


class ChangeSetSerializer(serializers.Serializer):
    """Documentation only: a partial content snapshot; omitted keys keep their value."""

    request_explicit_en = serializers.CharField(required=False, allow_blank=True)
    request_implicit_en = serializers.CharField(required=False, allow_blank=True)
    request_explicit_zh = serializers.CharField(required=False, allow_blank=True)
    request_implicit_zh = serializers.CharField(required=False, allow_blank=True)
    answer_en = serializers.CharField(required=False, allow_blank=True)
    answer_zh = serializers.CharField(required=False, allow_blank=True)
    subtype = serializers.ChoiceField(choices=Subtype.choices, required=False, allow_null=True)
    rubric = RubricChangeSerializer(many=True, required=False, help_text="the whole new rubric list")
    steps = StepChangeSerializer(many=True, required=False)


def _check_text(value: Any, where: str) -> None:
    """PostgreSQL text and jsonb hold neither NUL characters nor lone surrogates: refuse them up front."""
    if isinstance(value, str):
        if "\x00" in value:
            raise serializers.ValidationError(f"{where}: NUL characters are not allowed")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise serializers.ValidationError(f"{where}: not valid Unicode text") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_text(k, where)
            _check_text(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_text(v, f"{where}.{i}")


@extend_schema_field(ChangeSetSerializer)
class ChangeSetField(serializers.JSONField):
    """The raw change set, passed to the services unchanged (they reject unknown or malformed keys)."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be an object of content fields")
        _check_text(value, "changes")
        return value


class _ActionSerializer(serializers.Serializer):
    base_version = serializers.IntegerField(
        min_value=1, max_value=MAX_VERSION, help_text="the turn version your decision or edit starts from"
    )
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)


class ApproveSerializer(_ActionSerializer):
    changes = ChangeSetField(required=False, help_text="optional edits submitted with the approval")


class RejectSerializer(_ActionSerializer):
    reject_reason = serializers.ChoiceField(choices=RejectReason.choices)
    changes = ChangeSetField(required=False)


class EditSerializer(_ActionSerializer):
    changes = ChangeSetField()
    target = serializers.ChoiceField(
        choices=[("review", "review"), ("turn", "turn")],
        required=False,
        help_text=(
            "review: save into your blind review draft (assigned reviewers; submit it with approve/reject); "
            "turn: change the turn itself with optimistic locking (adjudicators/admins). "
            "Default, as on the review screen: review if you are assigned to the session, else turn."
        ),
    )


class ConfirmSerializer(_ActionSerializer):
    """Confirm or revert an edit of an approved turn: base_version is the edited version you looked at."""


class GateWarningSerializer(serializers.Serializer):
    gate = serializers.CharField()
    message = serializers.CharField()


class ActionResultSerializer(serializers.Serializer):
    turn = TurnSerializer()
    review = ReviewSerializer(allow_null=True, help_text="your review (null for a direct turn edit)")
    changed_fields = serializers.ListField(child=serializers.CharField(), help_text="direct edits: fields changed")
    gate_warnings = GateWarningSerializer(many=True)


# --- Errors (schema only; bodies are built by annotations.api.errors) -------------------------


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable: invalid, not_found, version_conflict, ...")
    message = serializers.CharField()
    fields = serializers.DictField(required=False, help_text="validation errors: field → messages")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


class DiffOpSerializer(serializers.Serializer):
    tag = serializers.ChoiceField(choices=["equal", "replace", "delete", "insert"])
    before = serializers.CharField(allow_blank=True)
    after = serializers.CharField(allow_blank=True)


class FieldDiffSerializer(serializers.Serializer):
    field = serializers.CharField()
    lang = serializers.CharField()
    before = serializers.CharField(allow_blank=True)
    after = serializers.CharField(allow_blank=True)
    ops = DiffOpSerializer(many=True)


class ConflictDetailSerializer(ErrorDetailSerializer):
    base_version = serializers.IntegerField()
    current_version = serializers.IntegerField()
    diff = FieldDiffSerializer(many=True, help_text="current → yours, for the fields you changed")
    current = serializers.DictField(help_text="the turn's current content")
    mine = serializers.DictField(help_text="the content you tried to save (kept as conflict revisions)")


class ConflictSerializer(serializers.Serializer):
    error = ConflictDetailSerializer()


# --- Snapshots --------------------------------------------------------------------------------


class SnapshotFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    format = serializers.CharField()
    bytes = serializers.IntegerField()
    sha256 = serializers.CharField()
    rows = serializers.IntegerField(allow_null=True)
    url = serializers.CharField(help_text="download URL (API)")


class SnapshotSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", allow_null=True, read_only=True, default=None)
    files = serializers.SerializerMethodField(help_text="data files of the manifest, with download URLs")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Snapshot
        fields = [
            "id",
            "version",
            "label",
            "status",
            "created_by",
            "created",
            "finished",
            "filters",
            "content_sha256",
            "files",
            "progress",
            "error",
        ]
        read_only_fields = fields

    @extend_schema_field(SnapshotFileSerializer(many=True))
    def get_files(self, snapshot: Snapshot) -> list[dict[str, Any]]:
        request = self.context.get("request")
        out = []
        for entry in (snapshot.manifest or {}).get("files", []):
            url = reverse("api:snapshot-file", kwargs={"label": snapshot.label, "name": entry["name"]})
            out.append({**entry, "url": request.build_absolute_uri(url) if request else url})
        return out

    @extend_schema_field(
        inline_serializer(
            "SnapshotProgress",
            {"stage": serializers.CharField(), "done": serializers.IntegerField(), "total": serializers.IntegerField()},
        )
    )
    def get_progress(self, snapshot: Snapshot) -> dict[str, Any]:
        return {"stage": snapshot.progress_stage, "done": snapshot.progress_done, "total": snapshot.progress_total}


class SnapshotDetailSerializer(SnapshotSerializer):
    """A snapshot with its review state, manifest (counts, files) and dataset card."""

    class Meta(SnapshotSerializer.Meta):
        fields = [*SnapshotSerializer.Meta.fields, "review_state", "manifest", "card_markdown"]
        read_only_fields = fields


class SnapshotCreateSerializer(serializers.Serializer):
    """Filters of a new snapshot; empty lists mean all (languages: both)."""

    scenarios = serializers.ListField(child=serializers.ChoiceField(choices=Scenario.choices), required=False)
    tiers = serializers.ListField(child=serializers.ChoiceField(choices=[1, 2, 3]), required=False)
    languages = serializers.ListField(child=serializers.ChoiceField(choices=freeze.LANGUAGES), required=False)
    ehr_provenance = serializers.ChoiceField(
        choices=card.PROVENANCE,
        default="undeclared",
        help_text="origin of the EHR store, for the dataset card's data-use note",
    )
    force = serializers.BooleanField(
        default=False,
        help_text="a new version even if its content equals the latest snapshot's (else 409 duplicate_snapshot)",
    )
