"""Adjudication screen: adjudicators only, take A / take B / edited content over HTMX, conflicts with status 200."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotations import services
from annotations.content import snapshot
from annotations.models import Adjudication, Revision, RevisionKind, TurnState

pytestmark = pytest.mark.django_db

NEW_ZH = "2180-07-22 血肌酐 1.4 mg/dL。"


def _submit(turn, user, decision="approve", **kw):
    turn.refresh_from_db()
    return services.submit_review(turn=turn, reviewer=user, decision=decision, base_version=turn.version, **kw)


@pytest.fixture
def disputed(turn, reviewers):
    """Review A (rev1) rejects; review B (rev2) approves with an edited Chinese answer."""
    _submit(turn, reviewers[0], decision="reject", reject_reason="translation_error", reason="wrong units")
    _submit(turn, reviewers[1], proposed={"answer_zh": NEW_ZH})
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    return turn


def _url(turn):
    return reverse("annotations:adjudicate", args=[turn.pk])


def test_permissions_per_role(client, disputed, reviewers, adjudicator, admin_user):
    response = client.get(_url(disputed))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    for reviewer in reviewers:  # assigned or not, reviewers may not adjudicate
        client.force_login(reviewer)
        assert client.get(_url(disputed)).status_code == 404
        assert client.post(_url(disputed), {"chosen": "a", "base_version": disputed.version}).status_code == 404
    assert not Adjudication.objects.exists()
    for user in (adjudicator, admin_user):
        client.force_login(user)
        assert client.get(_url(disputed)).status_code == 200


def test_screen_shows_both_reviews_with_char_level_diffs(client, disputed, adjudicator):
    client.force_login(adjudicator)
    response = client.get(_url(disputed))
    assert response.status_code == 200
    text = response.text
    assert 'id="review-a"' in text and 'id="review-b"' in text
    assert "rev1" in text and "rev2" in text and "wrong units" in text
    assert 'id="take-a"' in text and 'id="take-b"' in text and 'id="submit-adjudication"' in text
    (column_b,) = [c for c in response.context["columns"] if c["label"] == "B"]
    (answer,) = [d for d in column_b["diffs"] if d.field == "answer_zh"]
    assert answer.lang == "zh" and answer.after == NEW_ZH
    # Character level: every changed op of a Chinese field is small pieces, never the whole sentence.
    assert all(len(op.after) < len(NEW_ZH) for op in answer.ops)
    assert any(op.tag == "equal" for op in answer.ops)
    assert "<ins>" in text or "<del>" in text


def test_queue_links_to_adjudication(client, disputed, adjudicator):
    client.force_login(adjudicator)
    response = client.get(reverse("annotations:queue"))
    assert _url(disputed) in response.text


def test_take_review_a(client, disputed, adjudicator):
    client.force_login(adjudicator)
    before = snapshot(turn=disputed)
    response = client.post(_url(disputed), {"chosen": "a", "base_version": 1, "reason": "A is right"})
    assert response.status_code == 200 and "banner-ok" in response.text and 'id="adjudicated"' in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.REJECTED
    assert snapshot(turn=disputed)["answer_zh"] == before["answer_zh"]
    adjudication = Adjudication.objects.get(turn=disputed)
    assert adjudication.adjudicator == adjudicator and adjudication.reject_reason == "translation_error"


def test_take_review_b(client, disputed, adjudicator):
    client.force_login(adjudicator)
    response = client.post(_url(disputed), {"chosen": "b", "base_version": 1, "reason": "B is right"})
    assert response.status_code == 200 and "banner-ok" in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.APPROVED
    assert disputed.answer_zh == NEW_ZH and disputed.version == 2
    revision = Revision.objects.get(turn=disputed, kind=RevisionKind.ADJUDICATION, field="answer_zh")
    assert revision.after == NEW_ZH and revision.author == adjudicator and revision.reason == "B is right"


def test_submit_edited_content(client, disputed, adjudicator):
    client.force_login(adjudicator)
    data = {"chosen": "edited", "base_version": 1, "answer_en": "Creatinine 1.4 mg/dL.", "answer_zh": "血肌酐 1.4。"}
    data["rubric-0-text_zh"] = "新的标准"
    response = client.post(_url(disputed), data)
    assert response.status_code == 200 and "banner-ok" in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.APPROVED and disputed.version == 2
    assert disputed.answer_en == "Creatinine 1.4 mg/dL." and disputed.answer_zh == "血肌酐 1.4。"
    assert snapshot(turn=disputed)["rubric"][0]["text_zh"] == "新的标准"
    fields = set(Revision.objects.filter(turn=disputed, kind=RevisionKind.ADJUDICATION).values_list("field", flat=True))
    assert {"answer_en", "answer_zh", "rubric.0.text_zh"} <= fields
    assert Adjudication.objects.get(turn=disputed).chosen == "edited"


def test_edited_rejection_needs_a_reason(client, disputed, adjudicator):
    client.force_login(adjudicator)
    response = client.post(_url(disputed), {"chosen": "edited", "base_version": 1, "decision": "reject"})
    assert response.status_code == 200 and "banner-error" in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.NEEDS_ADJUDICATION and disputed.version == 1


def test_stale_version_shows_conflict_banner(client, disputed, adjudicator, admin_user):
    services.save_turn_edit(turn=disputed, user=admin_user, changes={"answer_en": "Cr 1.4 mg/dL."}, base_version=1)
    client.force_login(adjudicator)
    response = client.post(_url(disputed), {"chosen": "b", "base_version": 1})
    assert response.status_code == 200
    assert "banner-error" in response.text and 'id="adjudication-conflict"' in response.text
    assert "v1 → v2" in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.NEEDS_ADJUDICATION and disputed.version == 2
    assert disputed.answer_zh != NEW_ZH
    assert Revision.objects.filter(turn=disputed, kind=RevisionKind.CONFLICT, author=adjudicator).exists()
    assert not Adjudication.objects.exists()
    # The re-rendered panel carries the new version, so a retry succeeds.
    assert 'name="base_version" value="2"' in response.text
    assert client.post(_url(disputed), {"chosen": "b", "base_version": 2}).status_code == 200
    disputed.refresh_from_db()
    assert disputed.status == TurnState.APPROVED and disputed.answer_zh == NEW_ZH


def test_turn_not_awaiting_adjudication(client, turn, adjudicator):
    client.force_login(adjudicator)
    assert client.get(_url(turn)).status_code == 404
    response = client.post(_url(turn), {"chosen": "a", "base_version": turn.version})
    assert response.status_code == 200 and "banner-error" in response.text
    assert client.post(_url(turn), {"chosen": "a"}).status_code == 404  # base_version missing


def test_merge_field_by_field(client, disputed, adjudicator):
    """The merge form offers review B's value for the field B changed; taking it posts chosen=merged."""
    client.force_login(adjudicator)
    response = client.get(_url(disputed))
    (answer_zh,) = [f for f in response.context["editor"]["answers"] if f["name"] == "answer_zh"]
    assert answer_zh["takes"] == {"B": NEW_ZH}
    assert f'data-value="{NEW_ZH}"' in response.text and 'id="adjudication-chosen"' in response.text
    current = snapshot(turn=disputed)
    data = {
        "chosen": "merged",
        "base_version": 1,
        "answer_zh": NEW_ZH,  # taken from B
        "orig-answer_zh": current["answer_zh"],
        "answer_en": current["answer_en"] + " Recheck tomorrow.",  # then edited
        "orig-answer_en": current["answer_en"],
        "rubric-0-key": str(current["rubric"][0]["id"]),
        "rubric-0-orig-is_safety": "0",
        "rubric-0-is_safety": "1",
    }
    response = client.post(_url(disputed), data)
    assert response.status_code == 200 and "banner-ok" in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.APPROVED
    final = snapshot(turn=disputed)
    assert final["answer_zh"] == NEW_ZH and final["answer_en"].endswith("Recheck tomorrow.")
    assert final["rubric"][0]["is_safety"] is True
    assert Adjudication.objects.get(turn=disputed).chosen == "merged"
