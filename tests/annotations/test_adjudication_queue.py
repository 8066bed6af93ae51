"""The adjudication queue says why each turn needs adjudication, and resolving one confirms what was done and
offers the next turn (issue 35, "stale pages": neither was there).

Cases come from :func:`annotations.services.reviews.finalise`, which sends a turn to adjudication when its
reviews disagree or propose edits: a disagreement (reject with a reason vs approve with an edit), an agreement
with edits, and a queue of two turns resolved one after the other.
"""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse
from django.utils import translation

from annotations import adjudication_queue, services
from annotations.models import TurnState

pytestmark = pytest.mark.django_db

NEW_EN = "Creatinine rose to 1.4 mg/dL."


def _submit(turn, user, decision="approve", **kw):
    turn.refresh_from_db()
    return services.submit_review(turn=turn, reviewer=user, decision=decision, base_version=turn.version, **kw)


def _dispute(turn, reviewers):
    """Review A (first submitted) rejects as a translation error; review B approves with one edit."""
    _submit(turn, reviewers[0], decision="reject", reject_reason="translation_error")
    _submit(turn, reviewers[1], proposed={"answer_en": NEW_EN})
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    return turn


def _text(response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def test_queue_says_why_each_turn_needs_adjudication(client, assigned, reviewers, adjudicator):
    disputed = _dispute(assigned.turns.get(index=0), reviewers)
    agreed = assigned.turns.get(index=1)
    _submit(agreed, reviewers[0], proposed={"answer_en": NEW_EN})
    _submit(agreed, reviewers[1])
    client.force_login(adjudicator)
    page = client.get(reverse("annotations:queue")).content.decode()
    rows = {
        int(pk): " ".join(html.unescape(why).split())
        for pk, why in re.findall(r'<tr data-turn="(\d+)">.*?<td class="adjudication-why">(.*?)</td>', page, re.S)
    }
    assert rows == {
        disputed.pk: "Decisions differ: review A: reject (reason: translation error) vs review B: approve. "
        "Edits: review B proposes 1 change.",
        agreed.pk: "Both approve, with edits: review A proposes 1 change.",
    }
    # The adjudication screen says it too.
    screen = _text(client.get(reverse("annotations:adjudicate", args=[disputed.pk])))
    assert (
        "Why it needs adjudication: Decisions differ: review A: reject (reason: translation error) vs review B"
        in screen
    )


def test_reasons_in_chinese_and_in_one_query(assigned, reviewers, django_assert_num_queries):
    turns = [_dispute(assigned.turns.get(index=i), reviewers) for i in (0, 1, 2)]
    with django_assert_num_queries(1):
        rows = adjudication_queue.reasons(turns=turns)
    assert [t.pk for t, _why in rows] == [t.pk for t in turns]
    with translation.override("zh-hans"):
        assert adjudication_queue.reasons(turns=turns[:1])[0][1].startswith("决定不一致：审核 A：驳回（原因：翻译错误")


def test_resolving_confirms_and_offers_the_next_turn(client, assigned, reviewers, adjudicator):
    first, second = (_dispute(assigned.turns.get(index=i), reviewers) for i in (0, 1))
    client.force_login(adjudicator)
    response = client.post(
        reverse("annotations:adjudicate", args=[first.pk]), {"chosen": "b", "base_version": first.version}
    )
    first.refresh_from_db()
    assert first.status == TurnState.APPROVED
    text = _text(response)
    record = first.session.record_id
    assert f"Adjudicated turn 1 of {record} — Approved: review B taken (version {first.version})." in text
    next_link = reverse("annotations:adjudicate", args=[second.pk])
    assert re.search(rf'<a href="{next_link}" class="button" id="next-adjudication" autofocus>', response.text)
    assert f"Next to adjudicate: turn 2 of {record} →" in text and "1 turn left in the adjudication queue" in text
    assert "Why it needs adjudication" not in text  # resolved: the reason no longer applies

    response = client.post(next_link, {"chosen": "a", "base_version": second.version})
    text = _text(response)
    assert f"Adjudicated turn 2 of {record} — Rejected (reason: translation error): review A taken" in text
    assert "The adjudication queue is empty." in text and 'id="next-adjudication"' not in response.text


def test_next_turn_follows_the_queue_order_and_wraps(assigned, reviewers):
    turns = [_dispute(assigned.turns.get(index=i), reviewers) for i in (0, 1, 2)]
    assert adjudication_queue.next_turn(after=turns[0]) == turns[1]
    assert adjudication_queue.next_turn(after=turns[2]) == turns[0]  # wraps round to the first waiting
