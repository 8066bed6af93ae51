"""Permissions, blindness and the finalisation paths of blind double review."""

import pytest

from annotations import services
from annotations.models import Review, Revision, TurnState
from annotations.selectors import review_queue, visible_reviews


def submit(turn, user, decision="approve", **kw):
    turn.refresh_from_db()
    return services.submit_review(turn=turn, reviewer=user, decision=decision, base_version=turn.version, **kw)


def test_unassigned_reviewer_cannot_submit(turn, reviewers):
    with pytest.raises(services.PermissionDenied, match="not a reviewer of session"):
        submit(turn, reviewers[2])
    assert not Review.objects.exists()


def test_reviewer_cannot_adjudicate_or_edit_the_turn(turn, reviewers):
    with pytest.raises(services.PermissionDenied):
        services.adjudicate(turn=turn, adjudicator=reviewers[0], chosen="a", base_version=turn.version)
    with pytest.raises(services.PermissionDenied):
        services.save_turn_edit(turn=turn, user=reviewers[0], changes={"answer_en": "x"}, base_version=turn.version)


def test_reviews_are_blind_until_all_are_in(turn, reviewers, adjudicator):
    rev1, rev2, rev3 = reviewers
    submit(turn, rev1, proposed={"answer_en": "Creatinine 1.4 mg/dL."})
    assert [r.reviewer for r in visible_reviews(turn=turn, user=rev1)] == [rev1]
    assert visible_reviews(turn=turn, user=rev2) == []
    assert visible_reviews(turn=turn, user=rev3) == []  # not assigned
    assert len(visible_reviews(turn=turn, user=adjudicator)) == 1
    services.save_draft_review(turn=turn, reviewer=rev2, proposed={"answer_zh": "肌酐"})
    assert [r.reviewer for r in visible_reviews(turn=turn, user=rev1)] == [rev1]  # a draft is not "in"
    submit(turn, rev2)
    assert {r.reviewer for r in visible_reviews(turn=turn, user=rev1)} == {rev1, rev2}


def test_agreeing_approvals_without_edits_approve_the_turn(turn, reviewers):
    _, warnings = submit(turn, reviewers[0])
    assert isinstance(warnings, list)
    turn.refresh_from_db()
    assert turn.status == TurnState.IN_REVIEW
    submit(turn, reviewers[1])
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED
    assert turn.version == 1  # no content change
    assert Revision.objects.get(turn=turn, field="status").after == TurnState.APPROVED


def test_agreeing_rejections_reject_the_turn(turn, reviewers):
    submit(turn, reviewers[0], decision="reject", reject_reason="false_premise", reason="record says 5 mg")
    submit(turn, reviewers[1], decision="reject", reject_reason="unsafe")
    turn.refresh_from_db()
    assert turn.status == TurnState.REJECTED


def test_disagreement_goes_to_adjudication(turn, reviewers):
    submit(turn, reviewers[0])
    submit(turn, reviewers[1], decision="reject", reject_reason="not_grounded")
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION


def test_any_edit_goes_to_adjudication_and_does_not_touch_the_turn(turn, reviewers):
    submit(turn, reviewers[0], proposed={"request_explicit_zh": "最近的肌酐是多少？"})
    submit(turn, reviewers[1])
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    assert turn.request_explicit_zh == "最近一次肌酐是多少？" and turn.version == 1


def test_reject_needs_a_reason_and_submission_is_once(turn, reviewers):
    with pytest.raises(ValueError, match="needs a reason"):
        submit(turn, reviewers[0], decision="reject")
    submit(turn, reviewers[0])
    with pytest.raises(services.InvalidState):
        submit(turn, reviewers[0])


def test_invalid_proposal_is_refused_with_the_field_named(turn, reviewers):
    bad = {"rubric": [{"text_en": "x", "text_zh": "x", "machine_check": {"kind": "nope"}}]}
    with pytest.raises(ValueError, match=r"rubric item 1 \(rubric\[0\]\): machine_check unknown kind"):
        submit(turn, reviewers[0], proposed=bad)


def test_draft_keeps_work_and_queue_lists_open_turns(turn, reviewers):
    services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_en": "draft text"})
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert review.proposed["answer_en"] == "draft text" and not review.submitted
    assert turn in review_queue(user=reviewers[0])
    submit(turn, reviewers[0], proposed={"answer_en": "draft text"})
    assert turn not in review_queue(user=reviewers[0])
    assert review_queue(user=reviewers[2]).count() == 0


def test_comments_need_access(turn, reviewers, adjudicator):
    assert services.add_comment(turn=turn, author=reviewers[0], text="check the dose").text == "check the dose"
    services.add_comment(turn=turn, author=adjudicator, text="ok")
    with pytest.raises(services.PermissionDenied):
        services.add_comment(turn=turn, author=reviewers[2], text="hi")


def test_saving_again_keeps_earlier_draft_edits(turn, reviewers):
    services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_en": "edited answer"})
    services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_zh": "修改后的回答"})
    review, _ = submit(turn, reviewers[0])  # no proposal on submit: the draft's edits stay
    assert (review.proposed["answer_en"], review.proposed["answer_zh"]) == ("edited answer", "修改后的回答")
    assert review.has_edits


def test_stale_submission_with_edits_conflicts_and_keeps_the_draft(turn, reviewers, admin_user):
    services.save_turn_edit(turn=turn, user=admin_user, changes={"answer_en": "Cr 1.4 mg/dL."}, base_version=1)
    with pytest.raises(services.Conflict) as info:
        services.submit_review(
            turn=turn, reviewer=reviewers[0], decision="approve", proposed={"answer_zh": "新"}, base_version=1
        )
    assert info.value.current_version == 2 and info.value.mine["answer_en"] == "Cr 1.4 mg/dL."
    assert [d.field for d in info.value.diffs] == ["answer_zh"]
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert not review.submitted and review.proposed["answer_zh"] == "新" and review.base_version == 2
    review, _ = services.submit_review(turn=turn, reviewer=reviewers[0], decision="approve", base_version=2)
    assert review.submitted and review.proposed["answer_zh"] == "新"


def test_final_status_is_signalled_after_commit(turn, reviewers, django_capture_on_commit_callbacks):
    from annotations.signals import turn_finalised

    received = []

    def handler(sender, **kwargs):
        received.append(kwargs)

    turn_finalised.connect(handler)
    try:
        submit(turn, reviewers[0])
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            submit(turn, reviewers[1])
        assert received == []  # nothing before commit
        for callback in callbacks:
            callback()
        assert received == [{"signal": turn_finalised, "turn_id": turn.pk, "status": "approved"}]
    finally:
        turn_finalised.disconnect(handler)


def test_dashboard_counts(assigned, reviewers):
    from annotations.selectors import rejected_by_reason, status_counts

    t0, t1 = assigned.turns.get(index=0), assigned.turns.get(index=1)
    for user in reviewers[:2]:
        submit(t0, user, decision="reject", reject_reason="false_premise")
        submit(t1, user)
    assert status_counts() == {"med_safety": {"approved": 1, "in_review": 2, "rejected": 1}}
    assert status_counts(by="session__tier") == {1: {"approved": 1, "in_review": 2, "rejected": 1}}
    by_reviewer = status_counts(by="session__assignments__reviewer__username")
    assert by_reviewer["rev1"] == {"approved": 1, "in_review": 2, "rejected": 1}
    assert rejected_by_reason() == {"false_premise": 1}
