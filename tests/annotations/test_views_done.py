"""The "done" list, `a` advancing to the next queued turn, and Undo of a just-submitted review."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotations import services
from annotations.models import Decision, Review, TurnState
from annotations.services.reviews import UNDO_SECONDS

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def _approve(client, turn, **extra):
    return client.post(f"/review/turns/{turn.pk}/approve/", {"base_version": turn.version, **extra}, **HX)


def test_approve_advances_to_the_next_queued_turn_with_undo(client, assigned, reviewers):
    first, second = assigned.turns.order_by("index")[:2]
    client.force_login(reviewers[0])
    response = _approve(client, first, advance="1")
    assert response["HX-Redirect"] == f"/review/turns/{second.pk}/?undo={first.pk}"
    html = client.get(response["HX-Redirect"]).content.decode()
    assert 'id="undo-banner"' in html and f"/review/turns/{first.pk}/undo/" in html


def test_undo_withdraws_the_review_through_the_service(client, assigned, reviewers):
    first = assigned.turns.get(index=0)
    client.force_login(reviewers[0])
    _approve(client, first, advance="1")
    response = client.post(f"/review/turns/{first.pk}/undo/")
    assert response.status_code == 302 and response["Location"] == f"/review/turns/{first.pk}/"
    review = Review.objects.get(turn=first, reviewer=reviewers[0])
    assert review.submitted_at is None and review.decision == Decision.PENDING
    first.refresh_from_db()
    assert first.status == TurnState.IN_REVIEW
    html = client.get(response["Location"]).content.decode()
    assert "withdrawn" in html and 'id="approve-btn"' in html  # editable again
    assert first.pk in [t.pk for t in services.reviews.Turn.objects.filter(pk=first.pk)]


def test_no_undo_once_the_co_review_decided_the_turn(client, assigned, reviewers):
    turn = assigned.turns.get(index=0)
    services.submit_review(turn=turn, reviewer=reviewers[1], decision="approve", base_version=turn.version)
    client.force_login(reviewers[0])
    _approve(client, turn, advance="1")
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED
    # Finalising the last co-review is confirmed too (issue 35), without an Undo that would be refused.
    page = client.get(f"/review/?undo={turn.pk}").content.decode()
    assert 'id="submitted-confirmation"' in page and 'id="undo-btn"' not in page
    assert "can no longer be withdrawn" in page
    response = client.post(f"/review/turns/{turn.pk}/undo/", follow=True)
    assert "can no longer be withdrawn" in response.content.decode()
    assert Review.objects.get(turn=turn, reviewer=reviewers[0]).submitted_at is not None


@pytest.mark.parametrize(
    "back",
    [
        "https://evil.example/phish",
        "//evil.example/x",
        "/\\evil.example",
        "javascript:alert(1)",
        "http:///evil.example",
    ],
)
def test_refused_undo_never_redirects_off_site(client, assigned, reviewers, back):
    """Issue 36 F9: a refused undo answered 302 to whatever ``back`` said."""
    turn = assigned.turns.get(index=0)
    client.force_login(reviewers[0])
    response = client.post(f"/review/turns/{turn.pk}/undo/", {"back": back})  # nothing to undo: refused
    assert response.status_code == 302 and response["Location"] == "/review/done/"


def test_refused_undo_goes_back_to_a_page_of_this_site(client, assigned, reviewers):
    turn = assigned.turns.get(index=0)
    client.force_login(reviewers[0])
    response = client.post(f"/review/turns/{turn.pk}/undo/", {"back": "/review/?page=2"})
    assert response.status_code == 302 and response["Location"] == "/review/?page=2"


def test_login_next_never_leaves_the_site(client, reviewers):
    """The other redirect parameter of the site: Django's login view checks ``next`` itself."""
    reviewers[0].set_password("a-good-password")
    reviewers[0].save()
    response = client.post(
        "/accounts/login/?next=https://evil.example/",
        {"username": reviewers[0].username, "password": "a-good-password"},
    )
    assert response.status_code == 302 and not response["Location"].startswith(("http", "//"))


def test_no_undo_after_the_window(assigned, reviewers):
    turn = assigned.turns.get(index=0)
    review, _ = services.submit_review(turn=turn, reviewer=reviewers[0], decision="approve", base_version=turn.version)
    Review.objects.filter(pk=review.pk).update(submitted_at=timezone.now() - timedelta(seconds=UNDO_SECONDS + 1))
    with pytest.raises(services.InvalidState, match="Too late to undo"):
        services.reviews.undo_submission(turn=turn, reviewer=reviewers[0])


def test_done_list_shows_submitted_turns_reachable_from_the_queue(client, assigned, reviewers):
    turn = assigned.turns.get(index=1)
    services.submit_review(
        turn=turn, reviewer=reviewers[0], decision="reject", reject_reason="unsafe", base_version=turn.version
    )
    client.force_login(reviewers[0])
    assert 'href="/review/done/"' in client.get("/review/").content.decode()
    html = client.get("/review/done/").content.decode()
    assert f'data-turn="{turn.pk}"' in html and f'href="/review/turns/{turn.pk}/"' in html
    assert "Reject (unsafe)" in html and "In review" in html
    other = client.get(f"/review/turns/{turn.pk}/").content.decode()  # reopened read-only
    assert 'id="my-decision"' in other and 'id="approve-btn"' not in other


def test_done_list_is_the_users_own(client, assigned, reviewers):
    turn = assigned.turns.get(index=1)
    services.submit_review(turn=turn, reviewer=reviewers[1], decision="approve", base_version=turn.version)
    client.force_login(reviewers[0])
    assert f'data-turn="{turn.pk}"' not in client.get("/review/done/").content.decode()


def test_refusals_read_in_the_ui_language_with_status_labels(client, settings, assigned, reviewers):
    """A reviewer in the Chinese UI is told why in Chinese, with the status as the screens call it
    (not the stored code "approved" nor English service text)."""
    turn = assigned.turns.get(index=0)
    for reviewer in reviewers[:2]:  # the session's two assigned reviewers
        services.submit_review(turn=turn, reviewer=reviewer, decision="approve", base_version=turn.version)
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED
    client.force_login(reviewers[0])
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    closed = _approve(client, turn).content.decode()
    assert "该轮次的审核已关闭（当前状态：已通过）。" in closed
    assert "reviews are closed" not in closed and "(it is approved)" not in closed
    Review.objects.filter(turn=turn).update(submitted_at=timezone.now() - timedelta(seconds=UNDO_SECONDS + 1))
    late = client.post(f"/review/turns/{turn.pk}/undo/", follow=True).content.decode()
    assert f"撤销已超时：决定只能在提交后 {UNDO_SECONDS} 秒内撤回。" in late
    assert "Too late" not in late
