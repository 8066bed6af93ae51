"""Two reviewers disagree (through the services); the adjudicator takes review A on one turn and
merges field by field (use B, then edit) on another, in the browser."""

import pytest

from annotations import services
from annotations.content import snapshot
from annotations.models import Adjudication, Revision, RevisionKind, TurnState
from scenarios.models import Turn
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

B_ZH = "2180-07-22 血肌酐 1.4 mg/dL，较前稳定。"


def _disagree(turn, rev_a, rev_b):
    turn.refresh_from_db()
    services.submit_review(
        turn=turn, reviewer=rev_a, decision="reject", reject_reason="false_premise", base_version=turn.version
    )
    turn.refresh_from_db()
    services.submit_review(
        turn=turn, reviewer=rev_b, decision="approve", proposed={"answer_zh": B_ZH}, base_version=turn.version
    )
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION


def test_adjudicate_disagreements(page, live_server, screenshot_dir):
    rev_a, rev_b = user_with_password("rev_ann", "reviewer"), user_with_password("rev_ben", "reviewer")
    user_with_password("adj_carl", "adjudicator")
    session = complete_session()
    for reviewer in (rev_a, rev_b):
        services.assign(session=session, reviewer=reviewer, by=None)
    take, merge = session.turns.get(index=0), session.turns.get(index=1)
    _disagree(take, rev_a, rev_b)
    _disagree(merge, rev_a, rev_b)
    before = snapshot(turn=merge)

    login(page, live_server, "adj_carl")
    page.goto(f"{live_server.url}/review/")
    page.wait_for_selector("#adjudication-queue")
    page.click(f"#adjudication-queue a[href='/review/adjudicate/{take.pk}/']")
    page.wait_for_selector("#review-a")
    assert "rev_ann" in page.inner_text("#review-a") and "rev_ben" in page.inner_text("#review-b")
    assert page.locator("#review-b .diff ins").count() > 0  # B's Chinese answer, character-level diff
    page.screenshot(path=str(screenshot_dir / "adjudication.png"), full_page=True)

    # Take review A: its rejection becomes final.
    page.fill("#review-a input[name=reason]", "the record contradicts the premise")
    page.click("#take-a")
    page.wait_for_selector("#adjudicated")
    page.screenshot(path=str(screenshot_dir / "adjudication_taken.png"), full_page=True)
    take = Turn.objects.get(pk=take.pk)
    adjudication = Adjudication.objects.get(turn=take)
    assert take.status == TurnState.REJECTED and adjudication.chosen == "a"
    assert adjudication.reject_reason == "false_premise"

    # Merge: take B's Chinese answer field, edit the English answer, approve.
    page.goto(f"{live_server.url}/review/adjudicate/{merge.pk}/")
    page.click("#adjudication-edit > summary")
    page.click(".take[data-target=field-answer_zh]")
    assert page.input_value("#field-answer_zh") == B_ZH
    assert page.input_value("#adjudication-chosen") == "merged"
    page.fill("#field-answer_en", before["answer_en"] + " Stable.")
    page.screenshot(path=str(screenshot_dir / "adjudication_merge.png"), full_page=True)
    page.click("#submit-adjudication")
    page.wait_for_selector("#adjudicated")
    merge = Turn.objects.get(pk=merge.pk)
    assert merge.status == TurnState.APPROVED
    assert (merge.answer_zh, merge.answer_en) == (B_ZH, before["answer_en"] + " Stable.")
    assert Adjudication.objects.get(turn=merge).chosen == "merged"
    assert Revision.objects.filter(turn=merge, kind=RevisionKind.ADJUDICATION, field="answer_zh", after=B_ZH).exists()

    page.goto(f"{live_server.url}/review/history/{merge.pk}/")
    page.wait_for_selector(".history-field[data-field=answer_zh]")
    page.screenshot(path=str(screenshot_dir / "adjudication_history.png"), full_page=True)
