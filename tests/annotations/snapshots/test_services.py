"""create_snapshot: selection, frozen content, files, manifest, card, immutability, errors."""

from __future__ import annotations

import hashlib
import json

import pytest

from annotations.models import ImmutableSnapshot, Snapshot, SnapshotItem, SnapshotStatus
from annotations.snapshots import selectors, services
from annotations.snapshots.errors import EmptySelection, SnapshotError
from scenarios.models import GoldStep, Turn
from tests.annotations.conftest import approve_as_is
from tests.annotations.snapshots.conftest import approve_directly
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def test_snapshot_takes_only_fully_approved_sessions(curated, people, var_dir):
    snap = services.create_snapshot(user=people["boss"])
    assert (snap.version, snap.label, snap.status) == (1, "v1", SnapshotStatus.READY)
    assert snap.created_by == people["boss"]
    assert list(snap.items.order_by("record_id").values_list("record_id", flat=True)) == [
        "diagnostic_workup_0",
        "med_safety_0",
    ]
    names = [f["name"] for f in snap.manifest["files"]]
    assert names == ["diagnostic_workup.jsonl", "med_safety.jsonl", "turns.jsonl", "turns.parquet"]
    folder = var_dir / "snapshots" / "v1"
    for entry in snap.manifest["files"]:
        data = (folder / entry["name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] and len(data) == entry["bytes"]
    assert {f["name"]: f["rows"] for f in snap.manifest["files"]}["turns.jsonl"] == 2 * 4 * 2  # turns × languages
    assert snap.manifest["counts"]["sessions"] == 2 and snap.manifest["counts"]["turns"] == 8
    sums = (folder / "SHA256SUMS").read_text()
    assert hashlib.sha256(sums.encode()).hexdigest() == snap.content_sha256
    assert json.loads((folder / "manifest.json").read_text())["files"] == snap.manifest["files"]
    assert snap.review_state["turn_status_counts"] == {"approved": 8, "in_review": 4}
    assert (folder / "card.md").read_text() == snap.card_markdown


def test_card_contents(curated, people):
    snap = services.create_snapshot(user=people["boss"], ehr_provenance="synthetic")
    card = snap.card_markdown
    assert "| med_safety | 1 | 0 | 0 | 1 |" in card and "| diagnostic_workup | 0 | 1 | 0 | 1 |" in card
    assert "| Information Lookup (IL) | 2 |" in card and "| Write/Update (WU) | 2 |" in card
    assert "| write | 2 |" in card and "| PE | 2 |" in card
    assert "rev1 (8), rev2 (8)" in card
    assert "| rev1 / rev2 | 8 | 100.0 |" in card
    assert "| rules | — | 1 |" in card and "| not recorded | — | 1 |" in card
    assert "| generated | 2 | derived from a synthetic cohort" in card
    assert "bound by the PhysioNet credentialed data-use agreement; synthetic content is not" in card


def test_imported_sessions_are_marked_mimic_derived(people):
    session = complete_session(source="imported")
    approve_directly(session)
    card = services.create_snapshot(user=people["boss"], ehr_provenance="synthetic").card_markdown
    assert "| imported | 1 | derived from MIMIC-IV: bound by the PhysioNet Credentialed" in card


def test_frozen_content_survives_later_edits(curated, people, var_dir):
    snap = services.create_snapshot(user=people["boss"])
    before = {f["name"]: f["sha256"] for f in snap.manifest["files"]}
    turn = curated["approved"][0].turns.get(index=0)
    Turn.objects.filter(pk=turn.pk).update(answer_en="edited later", version=turn.version + 1)
    GoldStep.objects.filter(turn=turn, tool="prepare_to_answer").update(observation="edited later")
    approve_as_is(Turn.objects.filter(pk=turn.pk))  # the edit confirmed (issue 32: approval per version)
    out = var_dir / "re"
    out.mkdir()
    files = services.export_snapshot(snapshot=snap, formats="all", out_dir=out)
    assert {f["name"]: f["sha256"] for f in files} == before
    for name in before:
        assert (out / name).read_bytes() == (var_dir / "snapshots" / "v1" / name).read_bytes()
    # A new snapshot sees the edit, in the changed file only.
    snap2 = services.create_snapshot(user=people["boss"])
    after = {f["name"]: f["sha256"] for f in snap2.manifest["files"]}
    assert after["diagnostic_workup.jsonl"] == before["diagnostic_workup.jsonl"]
    assert after["med_safety.jsonl"] != before["med_safety.jsonl"]


def test_same_state_same_files(curated, people):
    one = services.create_snapshot(user=people["boss"])
    two = services.create_snapshot(user=people["rev1"], force=True)  # same content: refused unless forced
    assert two.version == 2
    assert one.manifest["files"] == two.manifest["files"]
    assert one.content_sha256 == two.content_sha256


def test_filters(curated, people):
    snap = services.create_snapshot(user=people["boss"], scenarios=["med_safety"], languages=["zh"])
    assert list(snap.items.values_list("record_id", flat=True)) == ["med_safety_0"]
    assert [f["name"] for f in snap.manifest["files"]] == ["med_safety.jsonl", "turns.jsonl", "turns.parquet"]
    assert snap.filters == {
        "scenarios": ["med_safety"],
        "tiers": [],
        "languages": ["zh"],
        "ehr_provenance": "undeclared",
    }
    rows = [json.loads(line) for line in selectors.snapshot_file_path(snapshot=snap, name="turns.jsonl").open()]
    assert {r["language"] for r in rows} == {"zh"} and len(rows) == 4
    assert services.create_snapshot(user=None, tiers=[2]).items.get().record_id == "diagnostic_workup_0"


def test_language_filter_needs_complete_text(curated, people):
    Turn.objects.filter(session=curated["approved"][0], index=1).update(answer_zh="")
    snap = services.create_snapshot(user=people["boss"], languages=["zh"])
    assert list(snap.items.values_list("record_id", flat=True)) == ["diagnostic_workup_0"]
    assert services.create_snapshot(user=people["boss"], languages=["en"]).items.count() == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scenarios": ["surgery"]}, "unknown scenario: surgery"),
        ({"tiers": [4]}, "unknown tier: 4"),
        ({"languages": ["fr"]}, "unknown language: fr"),
        ({"tiers": [3]}, "no session has all its turns approved"),
        ({"ehr_provenance": "moon"}, "unknown EHR provenance"),
    ],
)
def test_bad_arguments_create_nothing(curated, people, kwargs, message, var_dir):
    with pytest.raises(SnapshotError, match=message.replace("(", r"\(").replace(")", r"\)")):
        services.create_snapshot(user=people["boss"], **kwargs)
    assert not Snapshot.objects.exists()
    assert not (var_dir / "snapshots").exists() or not any((var_dir / "snapshots").iterdir())


def test_empty_database_is_a_clear_error(people):
    with pytest.raises(EmptySelection, match="no session has all its turns approved"):
        services.create_snapshot(user=people["boss"])
    assert not Snapshot.objects.exists()


def test_ready_snapshots_are_immutable(curated, people):
    snap = services.create_snapshot(user=people["boss"])
    snap.card_markdown = "changed"
    with pytest.raises(ImmutableSnapshot):
        snap.save()
    with pytest.raises(ImmutableSnapshot):
        snap.delete()
    with pytest.raises(ImmutableSnapshot):
        Snapshot.objects.filter(pk=snap.pk).update(card_markdown="x")
    with pytest.raises(ImmutableSnapshot):
        Snapshot.objects.all().delete()
    item = snap.items.first()
    item.record_json = "{}"
    with pytest.raises(ImmutableSnapshot):
        item.save()
    with pytest.raises(ImmutableSnapshot):
        SnapshotItem.objects.filter(snapshot=snap).update(record_json="{}")
    with pytest.raises(ImmutableSnapshot):
        item.delete()
    snap.refresh_from_db()
    assert snap.card_markdown != "changed" and snap.items.count() == 2


def test_failed_build_is_recorded(curated, people, monkeypatch):
    def boom(**kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(services, "export_snapshot", boom)
    with pytest.raises(OSError, match="disk full"):
        services.create_snapshot(user=people["boss"])
    snap = Snapshot.objects.get()
    assert snap.status == SnapshotStatus.FAILED and "disk full" in snap.error
    assert not (selectors.snapshots_root() / "v1").exists()
    assert [p.name for p in selectors.snapshots_root().iterdir()] == []  # no half-written folder
    monkeypatch.undo()  # the disk has room again: the same snapshot is built from its frozen items
    snap = services.build_snapshot(snapshot_id=snap.pk)
    assert (snap.label, snap.status, snap.error) == ("v1", SnapshotStatus.READY, "")
    assert [p.name for p in selectors.snapshots_root().iterdir()] == ["v1"]


def test_snapshot_file_path_only_serves_manifest_files(curated, people):
    snap = services.create_snapshot(user=people["boss"])
    assert selectors.snapshot_file_path(snapshot=snap, name="turns.parquet").is_file()
    assert selectors.snapshot_file_path(snapshot=snap, name="card.md").is_file()
    for bad in ("../v1/turns.jsonl", "nope.jsonl", "/etc/passwd"):
        with pytest.raises(SnapshotError):
            selectors.snapshot_file_path(snapshot=snap, name=bad)


def test_get_snapshot(curated, people):
    services.create_snapshot(user=people["boss"])
    services.create_snapshot(user=people["boss"], force=True)
    assert selectors.get_snapshot(ref="latest").label == "v2"
    assert selectors.get_snapshot(ref="v1").version == 1
    assert selectors.get_snapshot(ref="1").version == 1
    with pytest.raises(SnapshotError, match=r"'v9' does not exist or is not ready \(ready: v1, v2\)"):
        selectors.get_snapshot(ref="v9")
    with pytest.raises(SnapshotError, match="expected 'latest', 'vN' or N"):
        selectors.get_snapshot(ref="newest")
