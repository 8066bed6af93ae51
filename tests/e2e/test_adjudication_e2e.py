"""Two reviewers disagree (through the services); the adjudicator takes review A on one turn and
merges field by field (use B, then edit) on another, in the browser; and, with the turn's clinical context
and the side-by-side diffs on screen, takes a rejection whose button says so."""

import pytest
from django.utils import translation

from annotations import services
from annotations.content import snapshot
from annotations.models import Adjudication, Revision, RevisionKind, TurnState
from annotations.templatetags.review_i18n import field_label
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
    page.wait_for_load_state("load")  # htmx and review.js are deferred
    assert "rev_ann" in page.inner_text("#review-a") and "rev_ben" in page.inner_text("#review-b")
    # B's Chinese answer, character-level insertions in B's cell of the side-by-side table.
    assert page.locator("#adjudication-diffs tr[data-field=answer_zh] td.diff-proposed[data-review=b] ins").count() > 0
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

    # What was resolved, and the next turn of the adjudication queue, focused: Enter opens it (issue 35).
    assert "review A taken" in page.inner_text("#adjudication-feedback")
    assert page.get_attribute("#next-adjudication", "href") == f"/review/adjudicate/{merge.pk}/"
    page.wait_for_function("() => document.activeElement && document.activeElement.id === 'next-adjudication'")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/adjudicate/{merge.pk}/")
    page.wait_for_load_state("load")

    # Merge: take B's Chinese answer field, edit the English answer, approve.
    page.click("#adjudication-edit > summary")
    page.click(".take[data-target=field-answer_zh]")
    assert page.input_value("#field-answer_zh") == B_ZH
    assert page.input_value("#adjudication-chosen") == "merged"
    page.fill("#field-answer_en", before["answer_en"] + " Stable.")
    page.screenshot(path=str(screenshot_dir / "adjudication_merge.png"), full_page=True)
    # Arguments that do not parse: the error alone, and the form keeps what was typed in it.
    arguments = page.input_value("#step-0-arguments")
    page.fill("#step-0-arguments", "{oops")
    page.click("#submit-adjudication")
    page.wait_for_selector("#adjudication-feedback .banner-error:has-text('not valid JSON')")
    assert page.input_value("#field-answer_zh") == B_ZH
    assert page.input_value("#field-answer_en") == before["answer_en"] + " Stable."
    assert page.input_value("#step-0-arguments") == "{oops"
    assert Turn.objects.get(pk=merge.pk).status == TurnState.NEEDS_ADJUDICATION
    page.fill("#step-0-arguments", arguments)
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


def test_take_a_rejection_with_the_clinical_context_on_screen(page, browser, live_server, screenshot_dir):
    """A approves with an edit, B rejects: the page shows the context cards and both texts side by side; the
    take-B button names the rejection, and taking it rejects the turn without A's edit."""
    from tests.e2e.test_screens import _visit  # imported here: test_screens imports this module

    rev_a, rev_b = user_with_password("rev_amy", "reviewer"), user_with_password("rev_bob", "reviewer")
    user_with_password("adj_dora", "adjudicator")
    session = complete_session()
    for reviewer in (rev_a, rev_b):
        services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    services.submit_review(
        turn=turn, reviewer=rev_a, decision="approve", proposed={"answer_zh": B_ZH}, base_version=turn.version
    )
    turn.refresh_from_db()
    services.submit_review(
        turn=turn, reviewer=rev_b, decision="reject", reject_reason="not_grounded", base_version=turn.version
    )
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    before = snapshot(turn=turn)
    url = f"{live_server.url}/review/adjudicate/{turn.pk}/"
    out = screenshot_dir / "screens"
    out.mkdir(parents=True, exist_ok=True)

    # Chinese UI first (its own browser context): the same screen, in the other language.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": live_server.url}])
    zh = context.new_page()
    login(zh, live_server, "adj_dora")
    _visit(zh, url, language="zh", shot=out / "adjudication_context_zh.png")
    assert zh.locator("#adjudication-diffs").is_visible() and zh.locator("#evidence").is_visible()
    context.close()

    login(page, live_server, "adj_dora")
    page.set_viewport_size({"width": 1280, "height": 900})
    text = _visit(page, url, language="en", shot=out / "adjudication_context_en.png")
    for card in ("#turn", "#rubric", "#evidence", ".step code"):
        assert page.locator(card).first.is_visible(), card
    assert before["request_explicit_en"] in page.inner_text("#turn")
    assert "Observation.search" in text and before["answer_en"] in text

    row = page.locator("#adjudication-diffs tr[data-field=answer_zh]")
    with translation.override("en"):
        assert row.locator("th").inner_text() == str(field_label("answer_zh"))  # the human label, not the key
    assert row.locator("th").get_attribute("title") == "answer_zh"
    assert row.locator("td.diff-current").inner_text() == before["answer_zh"]
    cell_a = row.locator("td.diff-proposed[data-review=a]")
    assert cell_a.is_visible() and cell_a.inner_text() == B_ZH and cell_a.locator("ins").count() > 0
    assert row.locator("td.diff-unchanged[data-review=b]").inner_text() == "unchanged"

    take_b = page.locator("#take-b")
    assert take_b.inner_text() == "Take review B: reject (not grounded in the record)"
    assert page.inner_text("#take-b-consequence") == "If taken: the turn will be rejected; its content stays as it is."
    assert "approved, with this review's 1 change written to it" in page.inner_text("#take-a-consequence")
    take_b.click()
    page.wait_for_selector("#adjudicated")
    assert "rejected" in page.inner_text("#adjudicated").lower()
    turn = Turn.objects.get(pk=turn.pk)
    adjudication = Adjudication.objects.get(turn=turn)
    assert turn.status == TurnState.REJECTED and adjudication.chosen == "b"
    assert adjudication.reject_reason == "not_grounded"
    assert snapshot(turn=turn) == before  # A's edit is not written
    assert not Revision.objects.filter(turn=turn, kind=RevisionKind.ADJUDICATION).exists()
