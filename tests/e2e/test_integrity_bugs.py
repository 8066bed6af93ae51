"""Issue 16's integrity bugs, in Chromium: blind dashboard and comments, view-only turn admin, a partial merge
that leaves the other conflict open (and says so on reopening), the same reviewer in two tabs, and many
simultaneous first draft saves from two browser contexts. Each test asserts the fixed behaviour and the
database state after it."""

import datetime as dt

import pytest
from django.utils import timezone

from annotations import services
from annotations.models import Lease, Review, Revision, RevisionKind
from scenarios.models import Turn
from tests.e2e.review_helpers import (
    fire_draft_saves,
    leave_pages,
    login,
    open_editor,
    superuser_with_password,
    user_with_password,
)
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _pair(browser, live_server, *usernames):
    """One logged-in page per user, each in its own browser context (cookies not shared)."""
    contexts = [browser.new_context() for _ in usernames]
    pages = [c.new_page() for c in contexts]
    for page, username in zip(pages, usernames, strict=True):
        login(page, live_server, username)
    return contexts, pages


def test_blind_dashboard_and_comments_until_both_reviews_are_in(page, live_server, screenshot_dir):
    """Bug 1: the dashboard named the pair "me | partner", the lease banner and comments named the partner."""
    me, partner = user_with_password("blind_dash_me", "reviewer"), user_with_password("blind_dash_zz", "reviewer")
    session = complete_session()
    for user in (me, partner):
        services.assign(session=session, reviewer=user, by=None)
    agreed = session.turns.get(index=1)
    for user in (me, partner):
        services.submit_review(turn=agreed, reviewer=user, decision="approve", base_version=agreed.version)
    turn = session.turns.get(index=0)
    services.add_comment(turn=turn, author=partner, text="PARTNER-NOTE the dose looks wrong")
    now = timezone.now()
    Lease.objects.create(turn=turn, holder=partner, acquired_at=now, expires_at=now + dt.timedelta(minutes=2))

    login(page, live_server, me.username)
    page.goto(f"{live_server.url}/review/dashboard/")
    page.wait_for_selector("#agreement-decisions")
    pairs = page.inner_text("#agreement-decisions tbody")
    assert page.locator("#agreement-decisions tbody tr").count() == 1  # the pair is counted …
    assert "another reviewer" in pairs and me.username in pairs  # … without the partner's name
    assert partner.username not in page.content()
    page.screenshot(path=str(screenshot_dir / "bugs_blind_dashboard.png"), full_page=True)

    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.wait_for_selector("#comments")
    assert "PARTNER-NOTE" not in page.inner_text("#comments")
    assert "another reviewer" in page.inner_text("#edit-panel summary")
    assert partner.username not in page.content()

    # Once both reviews are in, the partner's comment and name are shown.
    for user in (me, partner):
        turn.refresh_from_db()
        services.submit_review(turn=turn, reviewer=user, decision="approve", base_version=turn.version)
    page.reload()
    page.wait_for_selector("#comments")
    comments = page.inner_text("#comments")
    assert "PARTNER-NOTE" in comments and partner.username in comments


def test_turn_admin_is_read_only_and_links_the_review_screen(page, live_server, screenshot_dir):
    """Bug 2: saving a turn in the Django admin changed its content without a version bump."""
    superuser_with_password("bugs_root")
    turn = complete_session().turns.get(index=0)
    before = (turn.version, turn.answer_en)
    url = f"{live_server.url}/admin/scenarios/turn/{turn.pk}/change/"
    login(page, live_server, "bugs_root")
    page.goto(url)
    page.wait_for_selector("#content")
    assert "read-only here" in page.inner_text("#content")
    for field in ("answer_en", "answer_zh", "request_explicit_en", "rubric_items-0-text_en"):
        assert page.locator(f"[name='{field}']").count() == 0, field
    assert page.locator("input[name=_save]").count() == 0
    page.screenshot(path=str(screenshot_dir / "bugs_admin_turn_read_only.png"), full_page=True)

    # A hand-made POST with a valid CSRF token is refused as well.
    status = page.evaluate(
        """async (url) => {
            const token = document.cookie.split('; ').find(c => c.startsWith('csrftoken=')).split('=')[1];
            const body = new URLSearchParams({csrfmiddlewaretoken: token, answer_en: 'changed in the admin'});
            return (await fetch(url, {method: 'POST', body})).status;
        }""",
        url,
    )
    assert status == 403
    turn.refresh_from_db()
    assert (turn.version, turn.answer_en) == before

    page.click(f"a[href='/review/turns/{turn.pk}/']")
    page.wait_for_url(f"**/review/turns/{turn.pk}/")
    page.wait_for_selector("#edit-panel")


def test_partial_merge_leaves_the_other_conflict_open_and_says_so(browser, live_server, screenshot_dir):
    """Bug 3: merging one conflict marked every open conflict of the user resolved ("merged" in the history)
    and, on reopening, the author was not told about the unapplied version."""
    user_with_password("mrg_alice", "adjudicator")
    user_with_password("mrg_bob", "admin")
    turn = complete_session().turns.get(index=0)
    url = f"{live_server.url}/review/turns/{turn.pk}/"
    (alice_ctx, bob_ctx), (alice, bob_zh) = _pair(browser, live_server, "mrg_alice", "mrg_bob")
    try:
        bob_en = bob_ctx.new_page()  # Bob's second tab, also opened at version 1
        for tab in (alice, bob_zh, bob_en):
            tab.goto(url)
            open_editor(tab)
        alice.fill("#field-answer_zh", "爱丽丝的中文回答。")
        alice.click("#save-edit")
        alice.wait_for_selector("#actions .banner-ok:has-text('Saved as version 2')")

        # Bob's Chinese save conflicts; he leaves it, and his other tab's English save conflicts too.
        bob_zh.fill("#field-answer_zh", "鲍勃的中文回答。")
        bob_zh.click("#save-edit")
        bob_zh.wait_for_selector("#merge-form .conflict-field[data-field=answer_zh]")
        bob_en.fill("#field-answer_en", "Bob's English answer.")
        bob_en.click("#save-edit")
        bob_en.wait_for_selector("#merge-form")
        assert bob_en.locator(".conflict-field").count() == 1
        bob_en.click("#merge-btn")  # his English text, on top of version 2
        bob_en.wait_for_selector("#actions .banner-ok:has-text('Merged: the turn is at version 3')")

        open_zh = Revision.objects.filter(
            turn=turn, author__username="mrg_bob", kind=RevisionKind.CONFLICT, resolved_at__isnull=True
        )
        assert list(open_zh.values_list("field", flat=True)) == ["answer_zh"]

        # The history does not call the unapplied Chinese version merged.
        bob_en.goto(f"{live_server.url}/review/history/{turn.pk}/")
        conflict = bob_en.locator(".history-field[data-field=answer_zh] .revision-conflict")
        assert conflict.count() == 1
        assert "not applied" in conflict.inner_text() and "merged" not in conflict.inner_text()
        bob_en.screenshot(path=str(screenshot_dir / "bugs_partial_merge_history.png"), full_page=True)

        # Reopening the turn tells Bob, with the merge form of that field only; keeping the current text settles it.
        bob_en.goto(url)
        bob_en.wait_for_selector("#unapplied")
        assert bob_en.locator("#merge-form textarea[name=merge-answer_zh]").count() == 1
        assert bob_en.locator("#merge-form textarea[name=merge-answer_en]").count() == 0
        assert "鲍勃的中文回答。" in bob_en.inner_text("#merge-form")
        bob_en.screenshot(path=str(screenshot_dir / "bugs_unapplied_on_reopen.png"), full_page=True)
        bob_en.click(".conflict-field[data-field=answer_zh] button.take >> nth=1")  # "use current"
        bob_en.click("#merge-btn")
        bob_en.wait_for_selector("#actions .banner-ok:has-text('Merged')")
        assert bob_en.locator("#unapplied").count() == 0
        assert not open_zh.exists()
        # Alice has no unapplied version of her own.
        alice.goto(url)
        alice.wait_for_selector("#actions")
        assert alice.locator("#unapplied").count() == 0
    finally:
        leave_pages(alice_ctx, bob_ctx, turn=turn)
    turn = Turn.objects.get(pk=turn.pk)
    assert (turn.answer_en, turn.answer_zh) == ("Bob's English answer.", "爱丽丝的中文回答。")


def _two_tab_conflict(context, live_server, username: str):
    """One reviewer, two tabs of one context at the same page: tab A saves a draft, then tab B (stale) saves."""
    reviewer = user_with_password(username, "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    tab_a, tab_b = context.new_page(), context.new_page()
    login(tab_a, live_server, reviewer.username)
    for tab in (tab_a, tab_b):
        tab.goto(f"{live_server.url}/review/turns/{turn.pk}/")
        open_editor(tab)
    tab_a.fill("#field-answer_en", "Tab A answer.")
    tab_a.click("#save-draft")
    tab_a.wait_for_selector("#actions .banner-ok:has-text('Draft saved.')")
    tab_b.fill("#field-answer_en", "Tab B answer.")
    tab_b.click("#save-draft")
    tab_b.wait_for_selector("#merge-form")
    return reviewer, turn, tab_a, tab_b


def test_same_reviewer_in_two_tabs_gets_the_conflict_flow(context, live_server, screenshot_dir):
    """Bug 4: the same reviewer's later save from a stale tab silently replaced the draft of the other tab."""
    reviewer, turn, tab_a, tab_b = _two_tab_conflict(context, live_server, "tabs_rev")
    assert "another tab" in tab_b.inner_text("#actions")
    field = tab_b.locator(".conflict-field[data-field=answer_en]")
    assert "Tab B answer." in field.locator("pre.mine").inner_text()
    assert "Tab A answer." in field.locator("pre.current").inner_text()
    assert Review.objects.get(turn=turn, reviewer=reviewer).proposed["answer_en"] == "Tab A answer."
    tab_b.screenshot(path=str(screenshot_dir / "bugs_two_tabs_conflict.png"), full_page=True)

    field.locator("textarea").fill("Merged A and B.")
    tab_b.click("#merge-btn")
    tab_b.wait_for_selector("#actions .banner-ok:has-text('Merged into your draft.')")
    review = Review.objects.get(turn=turn, reviewer=reviewer)
    assert review.proposed["answer_en"] == "Merged A and B." and review.submitted_at is None

    # Tab A is now the stale one: it gets the merge form too, the merged draft stays.
    tab_a.fill("#field-answer_en", "Tab A again.")
    tab_a.click("#save-draft")
    tab_a.wait_for_selector("#merge-form")
    assert Review.objects.get(pk=review.pk).proposed["answer_en"] == "Merged A and B."
    leave_pages(context, turn=turn)  # their lease releases land before the database is flushed


def test_two_tab_conflict_heading_does_not_claim_the_turn_changed(context, live_server):
    _reviewer, turn, _tab_a, tab_b = _two_tab_conflict(context, live_server, "tabs_head")
    heading = tab_b.inner_text("#conflict h3")
    leave_pages(context, turn=turn)
    assert f"v{turn.version} → v{turn.version}" not in heading
    assert "another tab" in heading


def test_simultaneous_first_draft_saves_from_two_contexts_never_answer_500(browser, live_server):
    """Bug 5: two first draft saves at once raised IntegrityError (HTTP 500)."""
    reviewers = [user_with_password(f"burst_rev{i}", "reviewer") for i in (1, 2)]
    session = complete_session()
    for user in reviewers:
        services.assign(session=session, reviewer=user, by=None)
    turn = session.turns.get(index=0)
    contexts, pages = _pair(browser, live_server, *(u.username for u in reviewers))
    try:
        for page in pages:
            page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
            page.wait_for_selector("#edit-form", state="attached")
        assert not Review.objects.filter(turn=turn).exists()  # every save below is a first save
        for page, user in zip(pages, reviewers, strict=True):
            fire_draft_saves(page, count=20, label=user.username)  # started, not awaited: both bursts overlap
        results = {
            user.username: page.evaluate("window.__draftSaves") for page, user in zip(pages, reviewers, strict=True)
        }
    finally:
        for context in contexts:
            context.close()

    for username, responses in results.items():
        assert len(responses) == 20
        assert [r for r in responses if not 200 <= r["status"] < 500] == [], username
        # All start from "no draft yet": one creates the draft, every other one (now stale, with other text)
        # is answered with the merge form; none overwrites it silently.
        assert all(r["saved"] or r["conflict"] for r in responses), username
        assert sum(r["saved"] for r in responses) == 1, username
    drafts = Review.objects.filter(turn=turn)
    assert sorted(drafts.values_list("reviewer__username", flat=True)) == sorted(results)
    for draft in drafts:
        assert draft.submitted_at is None
        assert draft.proposed["answer_en"].endswith(f"by {draft.reviewer.username}")
