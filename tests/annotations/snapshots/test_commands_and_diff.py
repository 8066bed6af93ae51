"""make_snapshot, export_set and diff_snapshots as a user runs them; diff_snapshots the service."""

from __future__ import annotations

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotations.models import Snapshot, SnapshotStatus
from annotations.snapshots import selectors
from annotations.snapshots.diff import diff_snapshots
from annotations.snapshots.services import create_snapshot
from ehr.fhir import schema_hash
from scenarios.models import Turn
from tests.annotations.conftest import approve_as_is
from tests.annotations.snapshots.conftest import approve_directly
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def run(*args) -> str:
    out = StringIO()
    quiet = ["--quiet"] if args[0] in ("make_snapshot", "export_set") else []  # no progress bar on stderr
    call_command(*args, *quiet, stdout=out)
    return out.getvalue()


def test_make_snapshot_prints_version_and_summary(curated):
    out = run("make_snapshot", "--user", "boss", "--scenario", "med_safety", "--language", "en")
    lines = out.splitlines()
    assert lines[0] == "v1"
    assert lines[1].startswith("1 sessions, 4 turns; languages en; content sha256 ")
    assert "med_safety.jsonl" in out and "turns.parquet" in out
    snap = Snapshot.objects.get()
    assert snap.created_by.username == "boss" and snap.filters["languages"] == ["en"]
    assert run("make_snapshot").splitlines()[0] == "v2"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "nobody"], "--user 'nobody': no such user"),
        (["--tier", "3"], "no session has all its turns approved"),
    ],
)
def test_make_snapshot_errors(curated, args, message):
    with pytest.raises(CommandError, match=message):
        run("make_snapshot", *args)
    assert not Snapshot.objects.exists()


def test_make_snapshot_resumes_an_interrupted_build(curated):
    from annotations.snapshots import services

    started = services.start_snapshot(user=None)  # as if the process died before building
    assert started.status == SnapshotStatus.BUILDING
    assert run("make_snapshot", "--resume", "v1").splitlines()[0] == "v1"
    started.refresh_from_db()
    assert started.status == SnapshotStatus.READY and started.items.count() == 2
    with pytest.raises(CommandError, match="snapshot v1 is already ready"):
        run("make_snapshot", "--resume", "v1")


def test_export_set_writes_files_with_manifest_checksums(curated, tmp_path):
    run("make_snapshot")
    snap = Snapshot.objects.get()
    out = run("export_set", "--snapshot", "latest", "--format", "all", "--out", str(tmp_path / "set"))
    for entry in snap.manifest["files"]:
        assert f"{entry['sha256']}  {entry['name']}" in out
        assert (tmp_path / "set" / entry["name"]).read_bytes() == selectors.snapshot_file_path(
            snapshot=snap, name=entry["name"]
        ).read_bytes()
    run("export_set", "--snapshot", "v1", "--format", "pab", "--out", str(tmp_path / "pab"))
    assert sorted(p.name for p in (tmp_path / "pab").iterdir()) == [
        "SHA256SUMS",
        "card.md",
        "croissant.json",
        "diagnostic_workup.jsonl",
        "manifest.json",
        "med_safety.jsonl",
    ]


def test_export_set_writes_the_manifest_of_the_exported_files(curated, tmp_path):
    run("make_snapshot", "--language", "en")
    snap = Snapshot.objects.get()
    run("export_set", "--format", "pab", "--format", "jsonl", "--out", str(tmp_path / "set"))
    folder = tmp_path / "set"

    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))

    assert (manifest["label"], manifest["version"], manifest["snapshot_id"]) == ("v1", 1, snap.pk)
    assert manifest["content_sha256"] == snap.content_sha256 and len(manifest["content_sha256"]) == 64
    assert manifest["created_at"] == snap.created.isoformat()
    names = ["diagnostic_workup.jsonl", "med_safety.jsonl", "turns.jsonl"]
    assert [f["name"] for f in manifest["files"]] == names  # no parquet: not exported
    sums = (folder / "SHA256SUMS").read_text().splitlines()
    for entry in manifest["files"]:
        data = (folder / entry["name"]).read_bytes()
        assert entry["bytes"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert f"{entry['sha256']}  {entry['name']}" in sums
    assert len(sums) == len(names)
    counts = manifest["counts"]
    assert (counts["sessions"], counts["turns"]) == (2, 8)
    assert list(counts["by_language"]) == ["en"]  # the snapshot's language filter
    assert counts["by_language"]["en"]["turns"] == 8
    assert sum(counts["by_language"]["en"]["task_types"].values()) == 8
    assert manifest["tool_schema_hash"] == {"en": schema_hash(language="en"), "zh": schema_hash(language="zh")}
    assert manifest["code_version"] and manifest["code_version"] != "not recorded"
    # Exporting the same snapshot again writes the same manifest bytes.
    run("export_set", "--format", "pab", "--format", "jsonl", "--out", str(tmp_path / "again"))
    assert (tmp_path / "again" / "manifest.json").read_bytes() == (folder / "manifest.json").read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--snapshot", "v7"], r"snapshot 'v7' does not exist or is not ready \(ready: v1\)"),
        (["--format", "xml"], "unknown format 'xml'"),
    ],
)
def test_export_set_errors_leave_nothing(curated, tmp_path, args, message):
    run("make_snapshot")
    with pytest.raises(CommandError, match=message):
        run("export_set", *args, "--out", str(tmp_path / "set"))
    assert list(tmp_path.iterdir()) == [tmp_path / "var"]


def test_export_set_without_snapshots(db, tmp_path):
    with pytest.raises(CommandError, match="there is no ready snapshot yet"):
        run("export_set", "--out", str(tmp_path / "set"))


def _edit(turn: Turn, **changes) -> None:
    Turn.objects.filter(pk=turn.pk).update(version=turn.version + 1, **changes)
    # The new version approved too (issue 32: a snapshot takes only approved versions).
    approve_as_is(Turn.objects.filter(pk=turn.pk))


def test_diff_sessions_and_turns(curated, people):
    v1 = create_snapshot(user=people["boss"])
    a, b = curated["approved"]
    _edit(a.turns.get(index=2), answer_zh="新的回答", request_implicit_en="And the kidney?")
    rubric = b.turns.get(index=0).rubric_items.get(idx=0)
    rubric.text_en = "States creatinine 1.40 mg/dL"
    rubric.save()
    added = complete_session(record_id="treatment_response_0", scenario="treatment_response")
    approve_directly(added)
    v2 = create_snapshot(user=people["boss"])
    result = diff_snapshots(old=v1, new=v2)
    assert result.added == ["treatment_response_0"] and result.removed == [] and result.unchanged == 0
    assert result.added_turns == 4
    changes = {c.record_id: c for c in result.changed}
    assert changes["med_safety_0"].fields == []
    assert [(t.index, t.fields) for t in changes["med_safety_0"].turns_changed] == [
        (2, ["request_implicit_en", "answer_zh"])
    ]
    assert [(t.index, t.fields) for t in changes["diagnostic_workup_0"].turns_changed] == [(0, ["rubric_en"])]
    back = diff_snapshots(old=v2, new=v1)
    assert back.removed == ["treatment_response_0"] and back.removed_turns == 4
    assert diff_snapshots(old=v1, new=v1).summary() == "v1 → v1: sessions +0 −0 ~0 (=2); turns +0 −0 ~0"
    out = run("diff_snapshots", "v1", "v2")
    assert out.splitlines()[0] == "v1 → v2: sessions +1 −0 ~2 (=0); turns +4 −0 ~2"
    assert "+ treatment_response_0" in out and "    turn 2: request_implicit_en, answer_zh" in out


def test_diff_session_level_field_and_removed_turn(curated, people):
    v1 = create_snapshot(user=people["boss"])
    a = curated["approved"][0]
    a.env_info = "Current date: 2180-07-24."
    a.save()
    a.turns.get(index=3).delete()
    v2 = create_snapshot(user=people["boss"])
    change = next(c for c in diff_snapshots(old=v1, new=v2).changed if c.record_id == a.record_id)
    assert change.fields == ["env_info"] and change.turns_removed == [3]


def test_diff_snapshots_unknown_label(curated):
    run("make_snapshot")
    with pytest.raises(CommandError, match="snapshot 'v3' does not exist"):
        run("diff_snapshots", "v1", "v3")


def test_export_set_to_an_unwritable_place_is_a_clear_error(curated):
    """Issue 36 F11: ``export_set --out /proc/x`` ended in a traceback."""
    run("make_snapshot")
    with pytest.raises(CommandError, match="--out /proc/x: cannot write there"):
        run("export_set", "--out", "/proc/x")
