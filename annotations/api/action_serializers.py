"""What the review API's actions accept (change sets, approve/reject/edit/confirm) and answer (results, gate
warnings, errors, conflicts with their field diffs)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotations.api.serializers import MAX_VERSION, ReviewSerializer, TurnSerializer
from annotations.models import RejectReason
from scenarios.models import Subtype


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
