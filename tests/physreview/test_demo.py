"""Pieces of the demo preparation: the review plan and the demo users' stored passwords."""

import json
from collections import Counter

import pytest
from django.contrib.auth import get_user_model

from physreview import demo


def test_review_plan_is_deterministic_and_shaped_as_documented():
    plans = {p: demo.review_plan(p, 4) for p in range(48)}
    assert plans == {p: demo.review_plan(p, 4) for p in range(48)}
    # Fully reviewed: both reviewers decide every turn; some turns are then adjudicated.
    for p in demo.FULLY_REVIEWED:
        reviews = Counter(s.index for s in plans[p] if s.who != "adjudicate")
        assert reviews == {0: 2, 1: 2, 2: 2, 3: 2}
    # An adjudication follows exactly the turns whose reviews disagree or edit.
    for p in range(48):
        by_turn: dict[int, list] = {}
        for step in plans[p]:
            by_turn.setdefault(step.index, []).append(step)
        for index, steps in by_turn.items():
            reviews = [s for s in steps if s.who != "adjudicate"]
            disputed = len(reviews) == 2 and (len({s.decision for s in reviews}) > 1 or any(s.edit for s in reviews))
            adjudicated = any(s.who == "adjudicate" for s in steps)
            assert adjudicated == (disputed and p in demo.FULLY_REVIEWED), (p, index)
    # Awaiting adjudication: one disputed turn per session; pending: only demo_reviewer2, or nothing.
    for p in demo.AWAITING_ADJUDICATION:
        assert sum(1 for s in plans[p] if s.edit or s.decision == "reject") == 1
    for p in demo.HALF_REVIEWED:
        assert {s.who for s in plans[p]} == {"demo_reviewer2"}
    assert all(plans[p] == [] for p in range(40, 48))
    # Rejections always carry a reason with an explanation.
    for step in (s for plan in plans.values() for s in plan if s.decision == "reject"):
        assert step.reject_reason in demo.REJECT_REASONS


def test_demo_users_keep_passwords_from_an_older_credentials_file(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    (tmp_path / "demo_credentials.json").write_text(json.dumps({"reviewer": "old-reviewer-pw", "admin": "old-admin"}))
    users = {u.username: u for u in demo.ensure_demo_users()}
    assert set(users) == {"demo_reviewer", "demo_reviewer2", "demo_adjudicator", "demo_admin"}
    assert users["demo_reviewer"].password == "old-reviewer-pw" and users["demo_admin"].password == "old-admin"
    stored = json.loads((tmp_path / "demo_credentials.json").read_text())
    assert set(stored) == {"reviewer", "reviewer2", "adjudicator", "admin"}
    assert oct((tmp_path / "demo_credentials.json").stat().st_mode & 0o777) == "0o600"
    user_model = get_user_model()
    for username, user in users.items():
        assert user_model.objects.get(username=username).check_password(user.password)
    hashes = dict(user_model.objects.values_list("username", "password"))
    demo.ensure_demo_users()
    assert dict(user_model.objects.values_list("username", "password")) == hashes  # not re-hashed


@pytest.mark.parametrize("edit", sorted(demo.EDITS))
def test_demo_edits_are_valid_change_sets(edit, db):
    from annotations import content as tc
    from tests.scenarios.factories import complete_session

    turn = complete_session().turns.get(index=0)
    base = tc.snapshot(turn=turn)
    changes = demo.EDITS[edit](turn)
    proposed = tc.apply_changes(base=base, changes=changes)
    assert proposed != base and tc.changes_between(base=base, proposed=proposed)


def test_demo_steps_never_redo_or_override_what_someone_already_did(db):
    """A second demo run skips turns a person (or the first run) already reviewed or adjudicated."""
    from annotations import services
    from annotations.models import Review, TurnState
    from tests.annotations.conftest import make_user
    from tests.scenarios.factories import complete_session

    users = {name: make_user(name, "reviewer") for name in demo.REVIEWERS}
    users["demo_adjudicator"] = make_user("demo_adjudicator", "adjudicator")
    session = complete_session()
    for name in demo.REVIEWERS:
        services.assign(session=session, reviewer=users[name], by=None)
    turn = session.turns.get(index=0)
    # A person reviewing as demo_reviewer first: the planned demo review of that turn is skipped.
    services.submit_review(turn=turn, reviewer=users["demo_reviewer"], decision="approve", base_version=turn.version)
    assert demo._review(turn, demo.Step(0, "demo_reviewer", "reject", reject_reason="unsafe"), users) is False
    assert Review.objects.get(turn=turn, reviewer=users["demo_reviewer"]).decision == "approve"
    # The other planned review goes through the service and is marked as demo data; a repeat is skipped.
    step = demo.Step(0, "demo_reviewer2", "reject", reject_reason="unsafe")
    assert demo._review(turn, step, users) is True
    assert demo._review(turn, step, users) is False
    review = Review.objects.get(turn=turn, reviewer=users["demo_reviewer2"])
    assert review.is_demo and review.reason == demo.REJECT_REASONS["unsafe"]
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    adjudication = demo.Step(0, "adjudicate", "reject", reject_reason="unsafe", take="demo_reviewer2", note="ok")
    assert demo._adjudicate(turn, adjudication, users) is True
    turn.refresh_from_db()
    assert turn.status == TurnState.REJECTED and turn.adjudications.get().is_demo
    assert turn.adjudications.get().chosen == "b"  # demo_reviewer2 submitted second
    assert demo._adjudicate(turn, adjudication, users) is False
