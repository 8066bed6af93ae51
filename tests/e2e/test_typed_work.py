"""A physician never loses typed work (issue 35, item 1), in Chromium, on the paths a newcomer takes: Approve with the
editor open and edited, the login expiring mid-edit (its cookie deleted), and a reload mid-edit. The three cases are
the three ways issue 35 lost typed text in the browser."""

import pytest

from annotations import services
from annotations.models import Review
from tests.e2e.review_helpers import PASSWORD, login, open_editor, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

NEW_ANSWER = "Creatinine 1.4 mg/dL on the last draw; no change since the previous value."


def _reviewer_on_turn(page, live_server, username):
    reviewer = user_with_password(username, "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    login(page, live_server, username)
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    open_editor(page)
    return reviewer, turn


def test_approve_with_an_edited_editor_asks_and_submits_the_changes(page, live_server):
    reviewer, turn = _reviewer_on_turn(page, live_server, "dr_typed_a")
    page.fill("#field-answer_en", NEW_ANSWER)
    page.click("#approve-btn")
    # Not a plain approval: the dialog names the changes and offers to submit them.
    page.wait_for_selector("#unsaved-dialog[open]")
    assert page.inner_text("#approve-with-changes") == "Approve with 1 change"
    assert not Review.objects.filter(turn=turn, reviewer=reviewer, submitted_at__isnull=False).exists()
    page.click("#unsaved-cancel")  # cancel keeps the editor open with the text
    assert page.input_value("#field-answer_en") == NEW_ANSWER
    page.keyboard.press("Escape")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("a")  # the shortcut goes through the same question
    page.wait_for_selector("#unsaved-dialog[open]")
    page.click("#approve-with-changes")
    page.wait_for_selector("#submitted-confirmation")  # on to the next pending turn, which confirms it
    review = Review.objects.get(turn=turn, reviewer=reviewer)
    assert review.submitted and review.decision == "approve"
    assert review.proposed["answer_en"] == NEW_ANSWER


def test_expired_login_keeps_the_text_then_sign_in_again_and_save(page, live_server):
    reviewer, turn = _reviewer_on_turn(page, live_server, "dr_typed_b")
    page.fill("#field-answer_en", NEW_ANSWER)
    page.context.clear_cookies(name="sessionid")  # the login expired while the physician typed
    page.click("#save-draft")
    page.wait_for_selector("#signed-out:not([hidden])")
    assert "session has expired" in page.inner_text("#signed-out")
    # Nothing was swapped in: the editor and the typed text are still there, no login form in the panel.
    assert page.input_value("#field-answer_en") == NEW_ANSWER
    assert page.locator("#actions input[name=password]").count() == 0
    assert not Review.objects.filter(turn=turn, reviewer=reviewer).exists()

    with page.context.expect_page() as new_tab:
        page.click("#sign-in-again")
    tab = new_tab.value
    tab.wait_for_selector("input[name=username]")
    tab.fill("input[name=username]", "dr_typed_b")
    tab.fill("input[name=password]", PASSWORD)
    tab.click("button[type=submit]")
    tab.wait_for_load_state()
    tab.close()

    page.click("#save-draft")  # signing in rotated the CSRF token: the page sends the new one
    page.wait_for_selector("#actions .banner-ok:has-text('Draft saved.')")
    assert page.is_hidden("#signed-out")
    review = Review.objects.get(turn=turn, reviewer=reviewer)
    assert review.proposed["answer_en"] == NEW_ANSWER and not review.submitted


def test_reload_with_unsaved_changes_asks_first(page, live_server):
    _reviewer_on_turn(page, live_server, "dr_typed_c")
    page.fill("#field-answer_en", NEW_ANSWER)
    dialogs = []

    def answer(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()  # "stay on the page"

    page.on("dialog", answer)
    page.evaluate("() => { window.__marker = 1; }")
    # A navigation the page starts (a link, `j`/`k`): the browser asks first and the reviewer stays.
    page.evaluate("() => { window.location.assign(window.location.href); }")
    page.wait_for_timeout(500)
    assert dialogs == ["beforeunload"]
    assert page.evaluate("() => window.__marker") == 1  # still the same page, the text still there
    assert page.input_value("#field-answer_en") == NEW_ANSWER
    # After a save there is nothing unsaved: leaving does not ask.
    page.click("#save-draft")
    page.wait_for_selector("#actions .banner-ok:has-text('Draft saved.')")
    page.evaluate("() => { window.location.assign(window.location.href); }")
    page.wait_for_load_state()
    assert dialogs == ["beforeunload"]
