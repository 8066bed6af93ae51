"""Review actions through the API: same services and permission rules as the review screens."""

from __future__ import annotations

import pytest

from annotations.models import Review, Revision, RevisionKind, TurnState
from scenarios.models import Turn

pytestmark = pytest.mark.django_db


def _turn(world, session="a", index=0) -> Turn:
    return world[session].turns.get(index=index)


def _post(client, turn, action, **body):
    return client.post(f"/api/turns/{turn.pk}/{action}/", body, format="json")


def test_two_approvals_approve_the_turn(clients, world):
    turn = _turn(world)
    first = _post(clients["rev1"], turn, "approve", base_version=turn.version, reason="fine")
    assert first.status_code == 200, first.json()
    body = first.json()
    assert body["review"]["decision"] == "approve" and body["review"]["submitted"] is True
    assert body["review"]["reason"] == "fine" and body["turn"]["status"] == TurnState.IN_REVIEW
    second = _post(clients["rev2"], turn, "approve", base_version=turn.version)
    assert second.json()["turn"]["status"] == TurnState.APPROVED
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED
    # Submitting twice is refused by the service: the turn is closed.
    again = _post(clients["rev1"], turn, "approve", base_version=turn.version)
    assert again.status_code == 409 and again.json()["error"]["code"] == "invalid_state"


def test_reject_needs_a_reason_and_stores_it(clients, world):
    turn = _turn(world)
    missing = _post(clients["rev1"], turn, "reject", base_version=turn.version)
    assert missing.status_code == 400
    assert missing.json()["error"]["fields"] == {"reject_reason": ["This field is required."]}
    bad = _post(clients["rev1"], turn, "reject", base_version=turn.version, reject_reason="boring")
    assert bad.status_code == 400 and list(bad.json()["error"]["fields"]) == ["reject_reason"]
    ok = _post(clients["rev1"], turn, "reject", base_version=turn.version, reject_reason="unsafe", reason="NSAID")
    assert ok.status_code == 200
    review = Review.objects.get(turn=turn, reviewer=world["users"]["rev1"])
    assert (review.decision, review.reject_reason, review.reason, review.submitted) == (
        "reject",
        "unsafe",
        "NSAID",
        True,
    )


def test_reviewer_edit_saves_a_draft_and_approve_submits_it(clients, world):
    turn = _turn(world)
    draft = _post(clients["rev1"], turn, "edit", base_version=turn.version, changes={"answer_zh": "肌酐 1.4。"})
    assert draft.status_code == 200, draft.json()
    body = draft.json()
    assert body["review"]["submitted"] is False and body["review"]["proposed"]["answer_zh"] == "肌酐 1.4。"
    assert body["turn"]["answer_zh"] == turn.answer_zh  # the turn itself is unchanged
    submitted = _post(clients["rev1"], turn, "approve", base_version=turn.version)
    assert submitted.json()["review"]["proposed"]["answer_zh"] == "肌酐 1.4。"
    # The other reviewer cannot see rev1's review until their own is in (blind review).
    assert clients["rev2"].get(f"/api/turns/{turn.pk}/").json()["reviews"] == []
    reviews = clients["adj"].get(f"/api/turns/{turn.pk}/").json()["reviews"]
    assert [r["reviewer"] for r in reviews] == ["rev1"]


def test_adjudicator_edit_changes_the_turn_and_a_stale_version_gets_409(clients, world):
    turn = _turn(world)
    base = turn.version
    ok = _post(clients["adj"], turn, "edit", base_version=base, changes={"answer_en": "Creatinine is 1.4 mg/dL."})
    assert ok.status_code == 200, ok.json()
    assert ok.json()["changed_fields"] == ["answer_en"] and ok.json()["review"] is None
    assert ok.json()["turn"]["version"] == base + 1
    stale = _post(clients["admin"], turn, "edit", base_version=base, changes={"answer_en": "Creatinine 1.5 mg/dL."})
    assert stale.status_code == 409
    error = stale.json()["error"]
    assert error["code"] == "version_conflict"
    assert (error["base_version"], error["current_version"]) == (base, base + 1)
    assert [d["field"] for d in error["diff"]] == ["answer_en"]
    assert (
        error["diff"][0]["before"] == "Creatinine is 1.4 mg/dL."
        and error["diff"][0]["after"] == "Creatinine 1.5 mg/dL."
    )
    assert error["current"]["answer_en"] == "Creatinine is 1.4 mg/dL."
    turn.refresh_from_db()
    assert turn.version == base + 1 and turn.answer_en == "Creatinine is 1.4 mg/dL."
    # Nothing is lost: the stale attempt is kept as a conflict revision.
    kept = Revision.objects.get(turn=turn, kind=RevisionKind.CONFLICT)
    assert kept.after == "Creatinine 1.5 mg/dL." and kept.author == world["users"]["admin"]


def test_reviewer_approval_with_edits_on_a_stale_version_gets_409(clients, world):
    turn = _turn(world)
    base = turn.version
    _post(clients["adj"], turn, "edit", base_version=base, changes={"answer_zh": "管理员改过。"})
    stale = _post(clients["rev1"], turn, "approve", base_version=base, changes={"answer_en": "My wording."})
    assert stale.status_code == 409
    error = stale.json()["error"]
    assert error["current_version"] == base + 1 and error["code"] == "version_conflict"
    assert "answer_en" in {d["field"] for d in error["diff"]}
    # The draft keeps the proposal; resubmitting from the current version goes through.
    ok = _post(clients["rev1"], turn, "approve", base_version=base + 1)
    assert ok.status_code == 200 and ok.json()["review"]["proposed"]["answer_en"] == "My wording."


def test_permissions_follow_the_ui(clients, world):
    unassigned = _turn(world, "b")
    for action in ("approve", "reject", "edit"):
        body = {"base_version": 1, "reject_reason": "unsafe", "changes": {"answer_en": "x"}}
        # Not visible to a reviewer of other sessions: 404, as in the UI.
        response = _post(clients["rev1"], unassigned, action, **body)
        assert response.status_code == 404, action
        # Visible to adjudicators, but only assigned reviewers submit reviews: 403 from the service.
        if action != "edit":
            response = _post(clients["adj"], unassigned, action, **body)
            assert response.status_code == 403 and response.json()["error"]["code"] == "permission_denied"
    # A reviewer may not change the turn directly, only propose in a review.
    own = _turn(world)
    direct = _post(clients["rev1"], own, "edit", base_version=own.version, changes={"answer_en": "x"}, target="turn")
    assert direct.status_code == 403
    assert "reviewers propose edits" in direct.json()["error"]["message"]
    assert not Review.objects.filter(turn=unassigned).exists()
    assert _post(clients["anon"], own, "approve", base_version=1).status_code == 401


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ({"changes": {"answer_en": "x"}}, "base_version", "required"),
        ({"base_version": "one", "changes": {}}, "base_version", "valid integer"),
        ({"base_version": 0, "changes": {}}, "base_version", "greater than or equal to 1"),
        ({"base_version": 1}, "changes", "required"),
        ({"base_version": 1, "changes": ["answer_en"]}, "changes", "object"),
        ({"base_version": 1, "changes": {"answer_EN": "x"}}, "changes", "unknown field answer_EN"),
        ({"base_version": 1, "changes": {"subtype": "ZZ"}}, "changes", "subtype"),
        ({"base_version": 1, "changes": {"rubric": [{"text_en": ""}]}}, "changes", "rubric item 1 (rubric[0])"),
        ({"base_version": 1, "changes": {"answer_en": "a\x00b"}}, "changes", "NUL"),
        ({"base_version": 1, "changes": {}, "target": "everything"}, "target", "valid choice"),
    ],
)
def test_invalid_edit_answers_400_naming_the_field(clients, world, body, field, fragment):
    turn = _turn(world)
    response = _post(clients["adj"], turn, "edit", **body)
    assert response.status_code == 400, response.json()
    error = response.json()["error"]
    assert list(error["fields"]) == [field]
    assert fragment in " ".join(error["fields"][field])
    turn.refresh_from_db()
    assert turn.version == 1 and not Revision.objects.filter(turn=turn).exclude(kind=RevisionKind.SYSTEM).exists()


def test_session_auth_needs_csrf_token_auth_does_not(world):
    from rest_framework.test import APIClient

    turn = _turn(world)
    browser = APIClient(enforce_csrf_checks=True)
    browser.force_login(world["users"]["rev1"])
    assert browser.get("/api/turns/").status_code == 200
    refused = browser.post(f"/api/turns/{turn.pk}/approve/", {"base_version": 1}, format="json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["error"]["message"]
    assert not Review.objects.filter(turn=turn).exists()


# Issue 36, F6: a step index that is not an integer (a list, an object, a boolean) was a 500 (TypeError:
# unhashable type) on every action that takes a change set; each now answers 400 naming the step.
BAD_STEPS = [
    ([{"idx": []}], "idx must be the integer index"),
    ([{"idx": {}}], "idx must be the integer index"),
    ([{"idx": True, "arguments": {}}], "idx must be the integer index"),
    ([{"idx": "0", "arguments": {}}], "idx must be the integer index"),
    ([{}], "idx must be the integer index"),
    ([[]], "must be an object"),
    ([{"idx": 999, "arguments": {}}], "unknown step 999"),
]


ACTIONS = {
    "edit": ("rev1", "edit", {}),
    "approve": ("rev1", "approve", {}),
    "reject": ("rev1", "reject", {"reject_reason": "other", "reason": "no"}),
    "turn edit": ("adj", "edit", {"target": "turn"}),
}


def _assert_400(clients, world, action, steps, fragment):
    user, name, extra = ACTIONS[action]
    turn = _turn(world)
    response = _post(clients[user], turn, name, base_version=turn.version, changes={"steps": steps}, **extra)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert list(error["fields"]) == ["changes"] and fragment in " ".join(error["fields"]["changes"])
    turn.refresh_from_db()
    assert turn.version == 1 and not Review.objects.filter(turn=turn, submitted_at__isnull=False).exists()


@pytest.mark.parametrize("action", list(ACTIONS))
def test_list_or_missing_step_index_answers_400_on_every_action(clients, world, action):
    _assert_400(clients, world, action, [{"idx": []}], "idx must be the integer index")
    _assert_400(clients, world, action, [{}], "idx must be the integer index")


@pytest.mark.parametrize(("steps", "fragment"), BAD_STEPS)
def test_malformed_step_answers_400_on_a_turn_edit(clients, world, steps, fragment):
    _assert_400(clients, world, "turn edit", steps, fragment)
