"""Back after a decision shows the turn as it is now, not the old page with a live Approve (issue 35: the review
pages had no Cache-Control, so the browser showed its stored copy)."""

import pytest

from annotations import services
from annotations.models import Review
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_back_after_approving_with_a_shows_the_submitted_decision(page, live_server):
    reviewer = user_with_password("dr_back", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    login(page, live_server, "dr_back")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.wait_for_selector("#approve-btn")
    page.keyboard.press("a")  # approve and move on to the next turn
    page.wait_for_url(f"**/review/turns/{session.turns.get(index=1).pk}/**")
    assert Review.objects.get(turn=turn, reviewer=reviewer).decision == "approve"
    page.go_back()  # the turn just approved, as it is now: the decision, no live Approve
    page.wait_for_selector("#my-decision")
    assert page.locator("#approve-btn").count() == 0


def test_review_pages_are_not_stored_by_the_browser(client):
    reviewer = user_with_password("dr_back_header", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    client.force_login(reviewer)
    for url in ("/review/", f"/review/turns/{session.turns.get(index=0).pk}/"):
        assert "no-store" in client.get(url)["Cache-Control"]
