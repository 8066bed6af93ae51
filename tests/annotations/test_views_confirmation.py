"""The confirmation queue on the review queue page (issue 32, item 2): an approved turn edited on the
review screen is listed there; the editor cannot confirm it, another adjudicator can (or reverts)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotations import services
from annotations.models import TurnState
from tests.annotations.conftest import make_user
from tests.annotations.snapshots.conftest import approve_by_review
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def edited():
    rev1, rev2 = make_user("rev1", "reviewer"), make_user("rev2", "reviewer")
    editor, other = make_user("adj1", "adjudicator"), make_user("adj2", "adjudicator")
    session = complete_session()
    approve_by_review(session=session, reviewers=[rev1, rev2], by=editor)
    turn = session.turns.get(index=0)
    services.save_turn_edit(
        turn=turn, user=editor, changes={"answer_en": "Creatinine 1.4 mg/dL."}, base_version=turn.version
    )
    turn.refresh_from_db()
    return {"turn": turn, "editor": editor, "other": other}


def test_queue_lists_the_edit_and_only_someone_else_confirms(client, edited):
    turn = edited["turn"]
    assert turn.status == TurnState.NEEDS_CONFIRMATION
    client.force_login(edited["editor"])
    page = client.get(reverse("annotations:queue")).content.decode()
    assert 'id="confirmation-queue"' in page and f'data-turn="{turn.pk}"' in page
    url = reverse("annotations:confirm", args=[turn.pk])
    refused = client.post(url, {"base_version": turn.version, "action": "confirm"}, follow=True)
    assert "Someone other than the editor must confirm this edit." in refused.content.decode()
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_CONFIRMATION
    client.force_login(edited["other"])
    client.post(url, {"base_version": turn.version, "action": "confirm"})
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED
    # The history lists who approved which version, the current one marked.
    history = client.get(reverse("annotations:history", args=[turn.pk])).content.decode()
    assert 'data-version="1"' in history and "rev1, rev2" in history
    assert f'data-version="{turn.version}"><td>v{turn.version} · current</td><td>adj2</td>' in history


def test_revert_from_the_queue(client, edited):
    turn = edited["turn"]
    client.force_login(edited["other"])
    client.post(reverse("annotations:confirm", args=[turn.pk]), {"base_version": turn.version, "action": "revert"})
    turn.refresh_from_db()
    assert turn.status == TurnState.APPROVED and turn.answer_en != "Creatinine 1.4 mg/dL."
    assert "No edit waits for confirmation." in client.get(reverse("annotations:queue")).content.decode()
