"""``manifest.json`` of a snapshot folder and of an ``export_set`` folder: one shape for both.

What a consumer needs to trust and place the data without the database: which snapshot (label,
version, id, ``content_sha256``, when it was made, filters, review state), what it holds (sessions and
turns, per language and task type), the files (name, format, bytes, sha256, rows; the same entries as
``SHA256SUMS``), and what it was made with (tool-schema hash per language and code version, recorded
when the snapshot was built, so a later export of the same snapshot writes the same bytes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from annotations.models import Snapshot, SnapshotItem
from annotations.snapshots import freeze
from core.version import code_version
from ehr.fhir import schema_hash

NOT_RECORDED = "not recorded"  # snapshots built before the manifest carried it


def build_provenance() -> dict[str, Any]:
    """Recorded in ``Snapshot.manifest`` at build time: what the set was made with."""
    return {
        "tool_schema_hash": {lang: schema_hash(language=lang) for lang in freeze.LANGUAGES},
        "code_version": code_version(),
    }


def counts_by_language(*, counts: dict[str, Any], languages: list[str]) -> dict[str, Any]:
    """Sessions, turns and turns per task type of each exported language (the flat rows hold every turn
    once per language; the PhysAssistBench files always carry both)."""
    return {
        lang: {
            "sessions": counts.get("sessions", 0),
            "turns": counts.get("turns", 0),
            "task_types": dict(counts.get("task_types", {})),
        }
        for lang in languages
    }


def manifest(*, snapshot: Snapshot, files: list[dict[str, Any]]) -> dict[str, Any]:
    """The manifest of a folder holding ``files`` (file entries as ``write_files`` returns them)."""
    stored = snapshot.manifest or {}
    counts = dict(stored.get("counts", {}))
    languages = list((snapshot.filters or {}).get("languages") or freeze.LANGUAGES)
    counts["by_language"] = counts_by_language(counts=counts, languages=languages)
    return {
        "label": snapshot.label,
        "version": snapshot.version,
        "snapshot_id": snapshot.pk,
        "content_sha256": snapshot.content_sha256,
        "created_at": snapshot.created.isoformat(),
        "filters": snapshot.filters,
        "review_state": snapshot.review_state,
        "counts": counts,
        "files": files,
        "tool_schema_hash": stored.get("tool_schema_hash", NOT_RECORDED),
        "code_version": stored.get("code_version", NOT_RECORDED),
        "approvals": stored.get("approvals", NOT_RECORDED),
    }


def approvals(*, snapshot: Snapshot) -> list[dict[str, Any]]:
    """Who approved which version of every frozen turn (from the items' review facts), by record id. No
    approval time: the manifest's only clock is the snapshot's ``created_at`` (same state, same manifest)."""
    out = []
    for item in SnapshotItem.objects.filter(snapshot=snapshot).order_by("record_id").only("record_id", "review"):
        for turn in item.review.get("turns", []):
            approval = turn.get("approval") or {}
            out.append(
                {
                    "record_id": item.record_id,
                    "turn_index": turn["index"],
                    "version": turn["version"],
                    "approved_version": approval.get("version"),
                    "via": approval.get("via"),
                    "approvers": approval.get("approvers", []),
                }
            )
    return out


def write_manifest(*, folder: Path, snapshot: Snapshot, files: list[dict[str, Any]]) -> Path:
    path = folder / "manifest.json"
    text = json.dumps(manifest(snapshot=snapshot, files=files), ensure_ascii=False, sort_keys=True, indent=2)
    path.write_text(text + "\n", encoding="utf-8")
    return path
