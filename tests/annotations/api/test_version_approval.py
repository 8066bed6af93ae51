"""Issue 32, item 2: approval belongs to a version (through the API, as an admin's script would do it).

Cases from the issue: an admin edits an already approved turn with ``target=turn``; the session must
leave the next snapshot until someone other than the editor confirms (or reverts) the edit; the
snapshot manifest and the history say who approved which version.
"""

from __future__ import annotations

import json

import pytest

from annotations.models import Revision, RevisionKind, SnapshotItem, TurnApproval, TurnState
from annotations.services.confirmation import confirmation_queue
from annotations.snapshots import services as snapshot_services
from annotations.snapshots.errors import EmptySelection

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("var_dir")]


def _post(client, turn, action, **body):
    return client.post(f"/api/turns/{turn.pk}/{action}/", body, format="json")


def _snapshot_ids(world) -> list[str]:
    try:
        snap = snapshot_services.create_snapshot(user=world["users"]["admin"], force=True)
    except EmptySelection:
        return []
    return sorted(SnapshotItem.objects.filter(snapshot=snap).values_list("record_id", flat=True))


def test_edit_of_approved_turn_leaves_the_snapshot_until_someone_else_confirms(clients, world, approved):
    turn = approved.turns.get(index=1)
    assert _snapshot_ids(world) == ["med_safety_a"]
    approved_version = turn.version

    edit = _post(
        clients["admin"],
        turn,
        "edit",
        target="turn",
        base_version=turn.version,
        changes={"answer_en": "Creatinine 1.4 mg/dL on 2180-07-22; stable."},
        reason="clearer",
    )
    assert edit.status_code == 200, edit.json()
    assert edit.json()["turn"]["status"] == TurnState.NEEDS_CONFIRMATION
    turn.refresh_from_db()
    assert list(confirmation_queue()) == [turn]
    assert _snapshot_ids(world) == []  # the only curated session is out until confirmed

    # The editor cannot confirm their own edit; a reviewer cannot confirm at all.
    own = _post(clients["admin"], turn, "confirm", base_version=turn.version)
    assert own.status_code == 403, own.json()
    assert _post(clients["rev1"], turn, "confirm", base_version=turn.version).status_code == 403
    stale = _post(clients["adj"], turn, "confirm", base_version=approved_version)
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "invalid_state"

    ok = _post(clients["adj"], turn, "confirm", base_version=turn.version)
    assert ok.status_code == 200, ok.json()
    assert ok.json()["turn"]["status"] == TurnState.APPROVED
    assert _snapshot_ids(world) == ["med_safety_a"]

    # Who approved which version: in the approvals, the history and the snapshot manifest.
    versions = dict(TurnApproval.objects.filter(turn=turn).values_list("version", "approvers"))
    assert versions == {approved_version: ["rev1", "rev2"], turn.version: ["adj"]}
    status_changes = Revision.objects.filter(turn=turn, field="status", kind=RevisionKind.SYSTEM).order_by("pk")
    assert [(r.before, r.after) for r in status_changes][-2:] == [
        (TurnState.APPROVED, TurnState.NEEDS_CONFIRMATION),
        (TurnState.NEEDS_CONFIRMATION, TurnState.APPROVED),
    ]
    assert f"version {turn.version} approved by adj" in status_changes.last().reason
    latest = snapshot_services.create_snapshot(user=world["users"]["admin"], scenarios=["med_safety"], force=True)
    manifest = json.loads((snapshot_services.snapshot_dir(snapshot=latest) / "manifest.json").read_text())
    row = next(a for a in manifest["approvals"] if a["turn_index"] == 1)
    assert (row["version"], row["approved_version"], row["via"], row["approvers"]) == (
        turn.version,
        turn.version,
        "confirmation",
        ["adj"],
    )


def test_revert_restores_the_approved_content_and_its_approval(clients, world, approved):
    turn = approved.turns.get(index=0)
    before = turn.answer_en
    _post(clients["adj"], turn, "edit", target="turn", base_version=turn.version, changes={"answer_en": "wrong"})
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_CONFIRMATION
    reverted = _post(clients["admin"], turn, "revert", base_version=turn.version, reason="not supported")
    assert reverted.status_code == 200, reverted.json()
    turn.refresh_from_db()
    assert (turn.status, turn.answer_en) == (TurnState.APPROVED, before)
    assert turn.steps.order_by("idx").last().observation == before  # the invariant of item 1 holds
    approval = TurnApproval.objects.get(turn=turn, version=turn.version)
    assert approval.via == "revert" and approval.approvers == ["boss", "rev1", "rev2"]
    assert _snapshot_ids(world) == ["med_safety_a"]
