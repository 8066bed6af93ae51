"""Two browser contexts edit the same turn: the lease warns the second editor, the second save
conflicts, the user merges, and afterwards no edit is lost (both versions in the history, merge current)."""

import pytest

from annotations.models import Lease, Revision, RevisionKind
from scenarios.models import Turn
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

A_TEXT = "Creatinine is 1.4 mg/dL on 2180-07-22 (stable)."
B_TEXT = "Creatinine 1.4 mg/dL; recheck in 24 h."
MERGED = "Creatinine is 1.4 mg/dL on 2180-07-22 (stable); recheck in 24 h."
B_ZH = "2180-07-22 血肌酐 1.4 mg/dL，24 小时后复查。"


def test_two_contexts_conflict_and_merge_lose_nothing(browser, live_server, screenshot_dir):
    user_with_password("adj_alice", "adjudicator")
    user_with_password("admin_bob", "admin")
    turn = complete_session().turns.get(index=0)
    url = f"{live_server.url}/review/turns/{turn.pk}/"
    alice_ctx, bob_ctx = browser.new_context(), browser.new_context()
    alice, bob = alice_ctx.new_page(), bob_ctx.new_page()
    try:
        login(alice, live_server, "adj_alice")
        login(bob, live_server, "admin_bob")
        for page in (alice, bob):
            page.goto(url)
            page.wait_for_selector("#edit-panel")

        # Alice opens the editor first and holds the lease; Bob is told who edits until when.
        alice.click("#edit-panel > summary")
        alice.wait_for_selector("#lease[data-state=mine]")
        bob.click("#edit-panel > summary")
        bob.wait_for_selector("#lease[data-state=other]")
        assert "Being edited by adj_alice until" in bob.inner_text("#lease")
        assert Lease.objects.get(turn=turn).holder.username == "adj_alice"
        bob.screenshot(path=str(screenshot_dir / "conflict_lease_warning.png"), full_page=True)

        # Both edit the gold answer from version 1; Bob also edits the Chinese answer.
        alice.fill("#field-answer_en", A_TEXT)
        bob.fill("#field-answer_en", B_TEXT)
        bob.fill("#field-answer_zh", B_ZH)
        alice.click("#save-edit")
        alice.wait_for_selector("#actions .banner-ok:has-text('Saved as version 2')")
        alice.screenshot(path=str(screenshot_dir / "conflict_first_save.png"), full_page=True)
        bob.click("#save-edit")
        bob.wait_for_selector("#merge-form")
        assert "v1 → v2" in bob.inner_text("#conflict")
        field = bob.locator(".conflict-field[data-field=answer_en]")
        assert B_TEXT in field.locator("pre.mine").inner_text()
        assert A_TEXT in field.locator("pre.current").inner_text()
        assert field.locator("p.diff ins").count() + field.locator("p.diff del").count() > 0
        bob.screenshot(path=str(screenshot_dir / "conflict_merge_form.png"), full_page=True)

        # Bob merges the English answer by hand and keeps his Chinese answer.
        field.locator("textarea").fill(MERGED)
        bob.click("#merge-btn")
        bob.wait_for_selector("#actions .banner-ok:has-text('Merged: the turn is at version 3')")
        bob.screenshot(path=str(screenshot_dir / "conflict_merge_result.png"), full_page=True)

        bob.goto(f"{live_server.url}/review/history/{turn.pk}/")
        bob.wait_for_selector(".history-field[data-field=answer_en]")
        assert bob.locator(".history-field[data-field=answer_en] .revision").count() == 3
        bob.screenshot(path=str(screenshot_dir / "conflict_history.png"), full_page=True)
    finally:
        alice_ctx.close()
        bob_ctx.close()

    # 0 lost edits: every value either user saved is in the history, and the merge is current.
    turn = Turn.objects.get(pk=turn.pk)
    assert (turn.version, turn.answer_en, turn.answer_zh) == (3, MERGED, B_ZH)
    rows = Revision.objects.filter(turn=turn).order_by("pk")
    saved = {(r.author.username, r.kind, r.field, r.after) for r in rows}
    assert ("adj_alice", RevisionKind.REVIEW_EDIT, "answer_en", A_TEXT) in saved
    assert ("admin_bob", RevisionKind.CONFLICT, "answer_en", B_TEXT) in saved
    assert ("admin_bob", RevisionKind.CONFLICT, "answer_zh", B_ZH) in saved
    assert ("admin_bob", RevisionKind.MERGE, "answer_en", MERGED) in saved
    assert ("admin_bob", RevisionKind.MERGE, "answer_zh", B_ZH) in saved
    assert not rows.filter(kind=RevisionKind.CONFLICT, resolved_at__isnull=True).exists()


def test_a_merge_field_that_does_not_parse_keeps_the_merge_form_as_typed(page, live_server, screenshot_dir):
    """The merge form answers a field it cannot parse with the error alone: what was typed stays."""
    from annotations import services

    user_with_password("adj_carol", "adjudicator")
    admin = user_with_password("admin_dan", "admin")
    turn = complete_session().turns.get(index=0)
    login(page, live_server, "adj_carol")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.click("#edit-panel > summary")
    page.wait_for_selector("#lease[data-state=mine]")
    # Someone saves version 2 meanwhile; Carol's save from version 1 conflicts on both fields she changed.
    services.save_turn_edit(turn=turn, user=admin, changes={"answer_en": A_TEXT}, base_version=1)
    page.fill("#field-answer_en", B_TEXT)
    page.fill("#step-0-arguments", '{"subject_id": 90000001, "code": "potassium"}')
    page.click("#save-edit")
    page.wait_for_selector("#merge-form")
    answer = page.locator(".conflict-field[data-field=answer_en] textarea")
    arguments = page.locator(".conflict-field[data-field='steps.0.arguments'] textarea")
    answer.fill(MERGED)
    arguments.fill('{"subject_id": 90000001, "code": potassium}')
    page.evaluate("document.getElementById('merge-form').dataset.marked = 'typed'")
    page.click("#merge-btn")
    page.wait_for_selector("#actions-feedback .banner-error:has-text('not valid JSON')")
    # The same form, not drawn again, with both texts as typed; nothing was saved.
    assert page.get_attribute("#merge-form", "data-marked") == "typed"
    assert answer.input_value() == MERGED
    assert arguments.input_value() == '{"subject_id": 90000001, "code": potassium}'
    assert Turn.objects.get(pk=turn.pk).version == 2
    page.screenshot(path=str(screenshot_dir / "conflict_merge_parse_error.png"), full_page=True)

    arguments.fill('{"subject_id": 90000001, "code": "potassium"}')
    page.click("#merge-btn")
    page.wait_for_selector("#actions .banner-ok:has-text('Merged: the turn is at version 3')")
    turn = Turn.objects.get(pk=turn.pk)
    assert (turn.version, turn.answer_en) == (3, MERGED)
    assert turn.steps.get(idx=0).arguments["code"] == "potassium"
