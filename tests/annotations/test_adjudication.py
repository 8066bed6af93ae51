"""Adjudication writes the final content to the turn, bumps version and stores revisions."""

import pytest

from annotations import services
from annotations.models import Adjudication, Revision, RevisionKind, TurnState
from annotations.selectors import adjudication_queue, history


def submit(turn, user, decision="approve", **kw):
    turn.refresh_from_db()
    return services.submit_review(turn=turn, reviewer=user, decision=decision, base_version=turn.version, **kw)


@pytest.fixture
def disputed(turn, reviewers):
    rubric = [
        {**item, "text_zh": item["text_zh"] + "（修订）"} if i == 0 else item for i, item in enumerate(_rubric(turn))
    ][:1]  # rev2 keeps item 0 reworded, drops item 1
    submit(turn, reviewers[0], decision="reject", reject_reason="translation_error")
    submit(turn, reviewers[1], proposed={"answer_zh": "2180-07-22 血肌酐 1.4 mg/dL。", "rubric": rubric})
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    return turn


def _rubric(turn):
    from annotations.content import snapshot

    return snapshot(turn=turn)["rubric"]


def test_taking_review_b_writes_its_content(disputed, adjudicator, reviewers):
    assert disputed in adjudication_queue()
    adj = services.adjudicate(turn=disputed, adjudicator=adjudicator, chosen="b", base_version=1, reason="b is right")
    disputed.refresh_from_db()
    assert (disputed.status, disputed.version) == (TurnState.APPROVED, 2)
    assert disputed.answer_zh == "2180-07-22 血肌酐 1.4 mg/dL。"
    items = list(disputed.rubric_items.order_by("idx"))
    assert [i.text_zh for i in items] == ["指出肌酐 1.4 mg/dL（修订）"]
    assert adj.decision == "approve" and adj.review_b.reviewer == reviewers[1]
    assert adj.content["answer_zh"] == disputed.answer_zh
    revs = {r.field: r for r in Revision.objects.filter(turn=disputed, kind=RevisionKind.ADJUDICATION)}
    assert revs["answer_zh"].before == "2180-07-22 肌酐 1.4 mg/dL。"
    assert revs["answer_zh"].after == disputed.answer_zh and revs["answer_zh"].author == adjudicator
    assert revs["rubric.0.text_zh"].after.endswith("（修订）")
    assert revs["rubric.1.text_en"].before == "Does not recommend NSAIDs" and revs["rubric.1.text_en"].after is None
    assert all(r.version == 2 and r.base_version == 1 for r in revs.values())
    assert [r.after for r in history(turn=disputed, field="answer_zh")] == [disputed.answer_zh]


def test_taking_review_a_rejects(disputed, adjudicator):
    services.adjudicate(turn=disputed, adjudicator=adjudicator, chosen="a", base_version=1)
    disputed.refresh_from_db()
    assert disputed.status == TurnState.REJECTED and disputed.version == 1  # review A changed nothing
    assert Adjudication.objects.get(turn=disputed).reject_reason == "translation_error"


def test_edited_content_and_step_arguments(disputed, adjudicator):
    changes = {
        "request_implicit_en": "Creatinine trend?",
        "subtype": "PE",
        "steps": [{"idx": 0, "arguments": {"subject_id": 90000001, "code": "creatinine", "_count": 3}}],
        "rubric": [*_rubric(disputed), {"id": None, "text_en": "Gives the date", "text_zh": "给出日期"}],
    }
    services.adjudicate(
        turn=disputed, adjudicator=adjudicator, chosen="edited", content=changes, base_version=1, reason="fix"
    )
    disputed.refresh_from_db()
    assert disputed.request_implicit_en == "Creatinine trend?" and disputed.subtype == "PE"
    assert disputed.steps.get(idx=0).arguments["_count"] == 3
    assert disputed.rubric_items.count() == 3
    fields = set(Revision.objects.filter(turn=disputed, kind="adjudication").values_list("field", flat=True))
    assert {"request_implicit_en", "subtype", "steps.0.arguments", "rubric.2.text_en"} <= fields


def test_stale_adjudication_is_a_conflict_and_is_kept(disputed, adjudicator, admin_user):
    services.save_turn_edit(turn=disputed, user=admin_user, changes={"answer_en": "Cr 1.4 mg/dL."}, base_version=1)
    with pytest.raises(services.Conflict) as info:
        services.adjudicate(turn=disputed, adjudicator=adjudicator, chosen="b", base_version=1)
    assert info.value.current_version == 2
    disputed.refresh_from_db()
    assert disputed.status == TurnState.NEEDS_ADJUDICATION
    assert Revision.objects.filter(turn=disputed, kind="conflict", author=adjudicator, field="answer_zh").exists()


def test_only_disputed_turns_are_adjudicated(turn, adjudicator):
    with pytest.raises(services.InvalidState, match=r"no longer needs adjudication \(it is In review\)"):
        services.adjudicate(turn=turn, adjudicator=adjudicator, chosen="merged", content={}, base_version=1)
