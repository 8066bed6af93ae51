"""The curated snapshots as the API shows them (files, card, filters) and the request that makes one."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from annotations.models import Snapshot
from annotations.snapshots import card, freeze
from scenarios.models import Scenario


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
