"""A reviewer edits a turn in the browser (rubric reword / safety toggle / new item, the Chinese request),
saves the draft (gate check), submits it, then rejects another turn with a reason."""

import pytest

from annotations import services
from annotations.content import snapshot
from annotations.models import Lease, Review
from tests.e2e.review_helpers import login, user_with_password
from tests.scenarios.factories import complete_session

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_edit_rubric_and_chinese_request_then_submit(page, live_server, screenshot_dir):
    reviewer = user_with_password("dr_edit", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn, other = session.turns.get(index=0), session.turns.get(index=1)
    before = snapshot(turn=turn)

    login(page, live_server, "dr_edit")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.wait_for_selector("h1:has-text('Turn 1 ·')")
    page.screenshot(path=str(screenshot_dir / "edit_review.png"), full_page=True)

    # e opens the editor and takes the lease (HTMX post; the banner shows it).
    page.keyboard.press("e")
    page.wait_for_selector("#edit-panel[open]")
    page.wait_for_selector("#lease[data-state=mine]")
    assert Lease.objects.get(turn=turn).holder == reviewer
    assert "lease until" in page.inner_text("#lease")

    page.fill("#rubric-0-text_en", "States creatinine 1.4 mg/dL (2180-07-22)")
    page.check("#rubric-0-is_safety")
    page.fill("#rubric-new-0-text_en", "Advises renal dose adjustment")
    page.fill("#rubric-new-0-text_zh", "建议根据肾功能调整剂量")
    page.check("#rubric-new-0-is_safety")
    page.click("#add-rubric")  # a second blank row appears and stays blank (ignored)
    page.wait_for_selector("#rubric-new-1-text_en")
    page.fill("#field-request_explicit_zh", "请告诉我最近一次的血肌酐结果。")
    page.screenshot(path=str(screenshot_dir / "edit_panel_open.png"), full_page=True)

    page.click("#save-draft")
    page.wait_for_selector("#actions .banner-ok:has-text('Draft saved.')")
    page.screenshot(path=str(screenshot_dir / "edit_draft_saved.png"), full_page=True)
    review = Review.objects.get(turn=turn, reviewer=reviewer)
    assert not review.submitted and review.proposed["request_explicit_zh"] == "请告诉我最近一次的血肌酐结果。"
    # The editor stays open on the draft (lease kept); the Chinese request field carries lang="zh".
    assert page.get_attribute("#field-request_explicit_zh", "lang") == "zh"
    page.wait_for_selector("#lease[data-state=mine]")

    page.click("#submit-edit")
    page.wait_for_selector("#submitted-confirmation")  # on the next pending turn, which confirms and offers Undo
    page.screenshot(path=str(screenshot_dir / "edit_submitted.png"), full_page=True)
    review.refresh_from_db()
    assert review.submitted and review.decision == "approve" and review.has_edits
    rubric = review.proposed["rubric"]
    assert rubric[0]["text_en"] == "States creatinine 1.4 mg/dL (2180-07-22)" and rubric[0]["is_safety"] is True
    assert rubric[0]["machine_check"] == before["rubric"][0]["machine_check"]
    assert rubric[1] == before["rubric"][1]
    assert rubric[2] == {
        "id": None,
        "text_en": "Advises renal dose adjustment",
        "text_zh": "建议根据肾功能调整剂量",
        "is_safety": True,
        "machine_check": None,
    }
    assert review.proposed["request_explicit_zh"] == "请告诉我最近一次的血肌酐结果。"
    assert review.proposed["answer_en"] == before["answer_en"]  # untouched fields are not sent
    assert not Lease.objects.filter(turn=turn).exists()  # the submission closed the editor

    # Reject the next turn with a reason, with the mouse this time.
    page.goto(f"{live_server.url}/review/turns/{other.pk}/")
    page.select_option("#reject-reason", "not_grounded")
    page.fill("#reject-form input[name=reason]", "no such lab in the record")
    page.click("#reject-btn")
    page.wait_for_selector("#submitted-confirmation")  # on to the next pending turn, which confirms it
    page.screenshot(path=str(screenshot_dir / "edit_rejected.png"), full_page=True)
    rejected = Review.objects.get(turn=other, reviewer=reviewer)
    assert (rejected.decision, rejected.reject_reason, rejected.reason) == (
        "reject",
        "not_grounded",
        "no such lab in the record",
    )


def test_lease_heartbeat_renews_and_closing_releases(page, live_server):
    reviewer = user_with_password("dr_lease", "reviewer")
    session = complete_session()
    services.assign(session=session, reviewer=reviewer, by=None)
    turn = session.turns.get(index=0)
    page.clock.install()  # drive htmx's "every 30s" without waiting
    login(page, live_server, "dr_lease")
    page.goto(f"{live_server.url}/review/turns/{turn.pk}/")
    page.click("#edit-panel > summary")
    page.wait_for_selector("#lease[data-state=mine]")
    first = Lease.objects.get(turn=turn).expires_at
    with page.expect_response(lambda r: r.url.endswith(f"/turns/{turn.pk}/lease/") and r.status == 200):
        page.clock.run_for("00:31")
    page.wait_for_selector("#lease[data-state=mine]")
    assert Lease.objects.get(turn=turn).expires_at > first  # renewed by the heartbeat
    with page.expect_response(lambda r: r.url.endswith("/lease/release/")):
        page.click("#edit-panel > summary")  # close the editor
    page.wait_for_selector("#lease[data-state=none]", state="attached")
    assert not Lease.objects.filter(turn=turn).exists()
