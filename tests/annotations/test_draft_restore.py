"""A saved draft is shown, says what Approve will submit, saves itself, and can be thrown away (issue 35, item 1:
"A returning reviewer sees the draft's values on the screen with a 'draft: N changes' badge, and the decision buttons
say what they will submit"; the report: "Coming back to a turn with a saved draft shows the original content")."""

import pytest

from annotations import services
from annotations.models import Review
from annotations.services.reviews import discard_draft

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


def test_a_returning_reviewer_sees_the_draft_open_with_its_count(client, turn, reviewers):
    services.save_draft_review(
        turn=turn, reviewer=reviewers[0], proposed={"answer_en": "Drafted.", "answer_zh": "草稿。"}
    )
    client.force_login(reviewers[0])
    page = client.get(f"/review/turns/{turn.pk}/").content.decode()
    assert '<details id="edit-panel" open' in page  # the editor is open on the draft
    assert "Drafted." in page and 'id="draft-restored"' in page
    assert "Approve with draft (2 changes)" in page and "draft: 2 changes" in page
    # Without a draft: a plain Approve, no badge text, the editor closed.
    client.force_login(reviewers[1])
    page = client.get(f"/review/turns/{turn.pk}/").content.decode()
    assert '<details id="edit-panel" open' not in page and "Approve with draft" not in page
    assert 'id="draft-restored"' not in page and "draft: " not in page


def test_an_autosave_is_a_draft_save_that_says_so(client, turn, reviewers):
    client.force_login(reviewers[0])
    response = client.post(
        f"/review/turns/{turn.pk}/edit/",
        {"base_version": turn.version, "answer_en": "Typed, then a pause.", "draft": "auto"},
        **HX,
    )
    assert response.status_code == 200 and "Draft saved automatically at" in response.text
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert review.proposed["answer_en"] == "Typed, then a pause." and not review.submitted
    assert "Approve with draft (1 change)" in response.text and "draft: 1 change" in response.text


def test_discarding_a_draft_removes_it_and_never_a_submitted_review(client, turn, reviewers):
    services.save_draft_review(turn=turn, reviewer=reviewers[0], proposed={"answer_en": "Drafted."})
    client.force_login(reviewers[0])
    response = client.post(f"/review/turns/{turn.pk}/draft/discard/", **HX)
    assert response.status_code == 204 and response["HX-Redirect"] == f"/review/turns/{turn.pk}/"
    assert not Review.objects.filter(turn=turn, reviewer=reviewers[0]).exists()
    assert discard_draft(turn=turn, reviewer=reviewers[0]) is False  # nothing left to discard
    services.submit_review(turn=turn, reviewer=reviewers[1], decision="approve", base_version=turn.version)
    with pytest.raises(services.InvalidState):
        discard_draft(turn=turn, reviewer=reviewers[1])
    assert Review.objects.get(turn=turn, reviewer=reviewers[1]).submitted
