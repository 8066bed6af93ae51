import pytest

from annotations import services
from annotations.models import Review
from tests.annotations.conftest import make_user
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_review_turns_from_the_keyboard(page, live_server, screenshot_dir):
    reviewer = make_user("dr_review", "reviewer")
    reviewer.set_password("pw-review-123456")
    reviewer.save()
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    # A co-reviewer who has not reviewed yet: the turn stays in review, so a decision can still be undone.
    services.assign(session=session, reviewer=make_user("dr_review_b", "reviewer"), by=None)
    first, second = session.turns.get(index=0), session.turns.get(index=1)

    page.goto(f"{live_server.url}/review/")
    assert "/accounts/login/" in page.url
    page.fill("input[name=username]", "dr_review")
    page.fill("input[name=password]", "pw-review-123456")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/review/")
    page.wait_for_selector("h1:has-text('My queue')")
    assert page.locator("#review-queue tbody tr").count() == 4
    page.screenshot(path=str(screenshot_dir / "review_queue.png"), full_page=True)

    page.click(f"a[href='/review/turns/{first.pk}/']")
    page.wait_for_selector("h1:has-text('Turn 1 ·')")
    page.wait_for_load_state("load")  # review.js is deferred: its key handlers exist only once it has run
    page.screenshot(path=str(screenshot_dir / "review_turn.png"), full_page=True)

    # j / k move between turns without the mouse.
    page.keyboard.press("j")
    page.wait_for_url(f"**/review/turns/{second.pk}/")
    page.keyboard.press("k")
    page.wait_for_url(f"**/review/turns/{first.pk}/")

    # ? opens the shortcuts help, Escape closes it.
    page.keyboard.press("?")
    page.wait_for_selector("#shortcuts[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("#shortcuts:not([open])", state="attached")

    # a approves and moves on to the next queued turn, which offers Undo for the decision just made.
    page.keyboard.press("a")
    page.wait_for_url(f"**/review/turns/{second.pk}/?undo=*")
    page.wait_for_selector("#undo-banner")
    assert "Approve" in page.inner_text("#undo-banner") or "approve" in page.inner_text("#undo-banner")
    page.screenshot(path=str(screenshot_dir / "review_approved.png"), full_page=True)
    # Undo withdraws it: the first turn is back in the queue as a draft, then approved with the button (moves on).
    page.click("#undo-btn")
    page.wait_for_url(f"**/review/turns/{first.pk}/")
    page.wait_for_selector("#approve-btn")
    page.click("#approve-btn")
    page.wait_for_url(f"**/review/turns/{second.pk}/?undo={first.pk}")

    # r to reject the second turn: a number key picks the reason, Enter submits and moves on.
    page.wait_for_selector("#reject-reason")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("r")
    assert page.evaluate("document.activeElement.id") == "reject-reason"
    false_premise = page.eval_on_selector_all(
        "#reject-reason option", "(opts) => opts.findIndex((o) => o.value === 'false_premise')"
    )
    page.keyboard.press(str(false_premise))
    assert page.input_value("#reject-reason") == "false_premise"
    page.fill("#reject-form input[name=reason]", "the record says 5 mg")
    page.focus("#reject-reason")
    page.keyboard.press("Enter")
    page.wait_for_selector("#submitted-confirmation")
    page.screenshot(path=str(screenshot_dir / "review_rejected.png"), full_page=True)

    reviews = {r.turn_id: r for r in Review.objects.filter(reviewer=reviewer, submitted_at__isnull=False)}
    assert reviews[first.pk].decision == "approve"
    assert (reviews[second.pk].decision, reviews[second.pk].reject_reason) == ("reject", "false_premise")
    assert reviews[second.pk].reason == "the record says 5 mg"
