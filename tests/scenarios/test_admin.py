"""The admin pages of sessions and turns render with their inlines."""

import pytest
from django.urls import reverse

from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def test_session_and_turn_pages(admin_client) -> None:
    session = complete_session(record_id="admin_1")
    turn = session.turns.get(index=2)

    page = admin_client.get(reverse("admin:scenarios_session_change", args=[session.pk]))
    assert page.status_code == 200
    assert "Creatinine?" in page.content.decode()  # turns inline

    page = admin_client.get(reverse("admin:scenarios_turn_change", args=[turn.pk]))
    text = page.content.decode()
    assert page.status_code == 200
    assert "prepare_to_answer" in text and "不建议使用非甾体抗炎药" in text  # steps and rubric inline

    for name in ("session", "turn", "generationrun"):
        assert admin_client.get(reverse(f"admin:scenarios_{name}_changelist")).status_code == 200


def test_admin_cannot_change_turn_content(admin_client) -> None:
    """The turn page is view-only (a save would bypass versions and revisions) and links the review screen."""
    session = complete_session(record_id="admin_2")
    turn = session.turns.get(index=0)
    item = turn.rubric_items.get(idx=0)
    url = reverse("admin:scenarios_turn_change", args=[turn.pk])
    page = admin_client.get(url)
    text = page.content.decode()
    assert page.status_code == 200
    assert reverse("annotations:turn", args=[turn.pk]) in text and "read-only here" in text
    assert 'name="answer_en"' not in text and 'name="rubric_items-0-text_en"' not in text

    data = {
        "answer_en": "changed behind the reviewers' backs",
        "rubric_items-TOTAL_FORMS": "1",
        "rubric_items-INITIAL_FORMS": "1",
        "rubric_items-0-id": str(item.pk),
        "rubric_items-0-text_en": "changed item",
    }
    assert admin_client.post(url, data).status_code == 403
    assert admin_client.post(reverse("admin:scenarios_turn_add"), data).status_code == 403
    turn.refresh_from_db()
    item.refresh_from_db()
    assert turn.answer_en != data["answer_en"] and turn.version == 1 and item.text_en != "changed item"
