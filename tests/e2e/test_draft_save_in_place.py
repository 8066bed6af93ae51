"""A draft save keeps the editor the reviewer is typing in (the same DOM nodes, not drawn again), and
the next save still compares against what was saved (an undo is saved); a field that does not parse
keeps everything typed."""

import pytest

from annotations import services
from annotations.content import snapshot
from annotations.models import Review
from annotations.services.reviews import current_token
from tests.e2e.review_helpers import login, open_editor, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_draft_saves_leave_the_editor_in_place(page, live_server, screenshot_dir):
    reviewer = user_with_password("dr_in_place", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    before = snapshot(turn=turn)

    login(page, live_server, "dr_in_place")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    open_editor(page)
    page.fill("#field-answer_en", "Creatinine is 1.4 mg/dL.")
    page.fill("#field-answer_zh", "肌酐为1.4 mg/dL。")
    page.evaluate("document.getElementById('field-answer_zh').dataset.marked = 'before the save'")
    page.click("#save-draft")
    page.wait_for_selector("#actions-feedback .banner-ok:has-text('Draft saved.')")
    review = Review.objects.get(turn=turn, reviewer=reviewer)
    assert review.proposed["answer_en"] == "Creatinine is 1.4 mg/dL."
    assert review.proposed["answer_zh"] == "肌酐为1.4 mg/dL。"
    # The same node (not re-rendered), with the new token and the saved text as its original.
    assert page.get_attribute("#field-answer_zh", "data-marked") == "before the save"
    assert page.input_value("#edit-draft-token") == current_token(review)
    assert page.input_value("#orig-answer_en") == "Creatinine is 1.4 mg/dL."
    assert page.is_visible("#edit-panel[open] #edit-form")
    page.screenshot(path=str(screenshot_dir / "draft_saved_in_place.png"), full_page=True)

    # Typing the original text back is an undo, saved as such (no conflict with the tab's own save).
    page.fill("#field-answer_en", before["answer_en"])
    page.click("#save-draft")
    page.wait_for_function(
        "tok => document.getElementById('edit-draft-token').value !== tok", arg=current_token(review)
    )
    review.refresh_from_db()
    assert review.proposed["answer_en"] == before["answer_en"] and review.proposed["answer_zh"] == "肌酐为1.4 mg/dL。"
    assert not page.is_visible("#merge-form")

    # Arguments that do not parse: an error, nothing stored, everything typed is still there.
    page.fill("#field-answer_en", "An answer typed with a broken call.")
    page.fill("#step-0-arguments", '{"code": ')
    page.click("#save-draft")
    page.wait_for_selector("#actions-feedback .banner-error:has-text('not valid JSON')")
    assert page.input_value("#step-0-arguments") == '{"code": '
    assert page.input_value("#field-answer_en") == "An answer typed with a broken call."
    assert Review.objects.get(pk=review.pk).proposed == review.proposed
    page.screenshot(path=str(screenshot_dir / "draft_save_error_keeps_text.png"), full_page=True)

    # Fixed, it saves; then the edit is submitted with an approval.
    page.fill("#step-0-arguments", page.input_value("#orig-step-0-arguments"))
    page.click("#save-draft")
    page.wait_for_selector("#actions-feedback .banner-ok:has-text('Draft saved.')")
    review.refresh_from_db()
    assert review.proposed["answer_en"] == "An answer typed with a broken call."
    page.click("#submit-edit")
    page.wait_for_selector("#submitted-confirmation")  # on the next pending turn, which confirms and offers Undo
    review.refresh_from_db()
    assert review.submitted and review.decision == "approve"
    assert review.proposed["answer_en"] == "An answer typed with a broken call."
