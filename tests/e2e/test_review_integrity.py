"""Review integrity in Chromium: the blind review page hides the co-reviewer, and a submission
refreshes the whole screen (no stale "pending draft")."""

import datetime as dt

import pytest
from django.utils import timezone

from annotations import services
from annotations.models import Lease
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_blind_review_page_hides_the_co_reviewer(page, live_server, screenshot_dir):
    me = user_with_password("dr_blind", "reviewer")
    partner = user_with_password("dr_hidden_partner", "reviewer")
    session = complete_session()
    for user in (me, partner):
        services.assign(session=session, reviewer=user, by=None)
    turn = session.turns.get(index=0)
    services.save_draft_review(
        turn=turn, reviewer=partner, decision="reject", reject_reason="unsafe", reason="PARTNER-REASON"
    )
    services.add_comment(turn=turn, author=partner, text="rev2 thinks answer is WRONG, will reject")
    now = timezone.now()
    Lease.objects.create(turn=turn, holder=partner, acquired_at=now, expires_at=now + dt.timedelta(minutes=2))

    login(page, live_server, "dr_blind")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.wait_for_selector("h1:has-text('Turn 1 ·')")
    page.click("#edit-panel summary")
    page.wait_for_selector("#lease[data-state=other]")
    text = page.inner_text("body")
    assert "another reviewer" in page.inner_text("#lease")
    for secret in ("dr_hidden_partner", "PARTNER-REASON", "WRONG, will reject"):
        assert secret not in text and secret not in page.content()
    page.screenshot(path=str(screenshot_dir / "review_blind.png"), full_page=True)


def test_submitting_a_draft_says_so_then_moves_on_and_the_turn_shows_the_decision(page, live_server, screenshot_dir):
    me = user_with_password("dr_submit", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=me, by=None)
    turn = session.turns.get(index=0)
    services.save_draft_review(turn=turn, reviewer=me, proposed={"answer_en": "My drafted answer."})

    login(page, live_server, "dr_submit")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.wait_for_selector("h1:has-text('Turn 1 ·')")
    assert "draft" in page.inner_text("section.card:has(h2:text-is('Reviews'))")
    # The saved draft is on the screen, and the button says what it submits (issue 35).
    assert page.input_value("#field-answer_en") == "My drafted answer."
    assert page.inner_text("#approve-btn").startswith("Approve with draft (1 change)")
    assert "draft: 1 change" in page.inner_text("#draft-badge")
    page.click("#approve-btn")
    # On to the next pending turn, which confirms what was submitted.
    page.wait_for_selector("#submitted-confirmation")
    assert "Submitted turn 1" in page.inner_text("#submitted-confirmation")
    assert page.is_visible("h1:has-text('Turn 2 ·')")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    assert "approve" in page.inner_text("#my-decision")
    reviews = page.inner_text("section.card:has(h2:text-is('Reviews'))")
    assert "draft" not in reviews and "approve" in reviews
    assert "My drafted answer." not in page.inner_text("#actions")  # the draft editor is gone
    page.screenshot(path=str(screenshot_dir / "review_submitted_refreshed.png"), full_page=True)
