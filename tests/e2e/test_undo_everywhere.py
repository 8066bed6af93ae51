"""Undo after every kind of submission (issue 35): the Approve button and Reject move on to the next pending turn, as
`a` does, and that page confirms the decision and offers Undo (button and `u`); Undo withdraws the decision and the
turn is back to review."""

import pytest

from annotations import services
from annotations.models import Review
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_undo_after_the_approve_button_and_after_reject(page, live_server):
    reviewer = user_with_password("dr_undo", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    # A second reviewer: with one, a decision completes the turn at once and there is nothing to withdraw.
    services.assign(session=session, reviewer=user_with_password("dr_undo_2", "reviewer"), by=None)
    first, second = session.turns.get(index=0), session.turns.get(index=1)
    login(page, live_server, "dr_undo")

    page.goto(f"{live_server.url}/review/turns/{first.pk}/")
    page.click("#approve-btn")
    # On to the next pending turn, which confirms the decision and offers Undo (button and `u`).
    page.wait_for_url(f"**/review/turns/{second.pk}/?undo={first.pk}")
    assert "Submitted turn 1" in page.inner_text("#submitted-confirmation")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("u")
    page.wait_for_url(f"**/review/turns/{first.pk}/")
    page.wait_for_selector("#approve-btn")
    assert not Review.objects.filter(turn=first, reviewer=reviewer, submitted_at__isnull=False).exists()

    page.select_option("#reject-reason", index=1)
    page.click("#reject-btn")
    page.wait_for_url(f"**/review/turns/{second.pk}/?undo={first.pk}")
    assert Review.objects.get(turn=first, reviewer=reviewer).decision == "reject"
    assert "reject" in page.inner_text("#submitted-confirmation").lower()
    page.click("#undo-btn")
    page.wait_for_selector("#reject-btn")
    assert not Review.objects.filter(turn=first, reviewer=reviewer, submitted_at__isnull=False).exists()
