"""History view: every revision per field with an escaped before/after diff (character level for Chinese)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from annotations import services
from tests.scenarios.factories import complete_session

pytestmark = pytest.mark.django_db


def _url(turn):
    return reverse("annotations:history", args=[turn.pk])


def test_permissions(client, turn, reviewers, adjudicator, admin_user):
    response = client.get(_url(turn))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(reviewers[2])  # not assigned
    assert client.get(_url(turn)).status_code == 404
    for user in (reviewers[0], adjudicator, admin_user):
        client.force_login(user)
        response = client.get(_url(turn))
        assert response.status_code == 200 and 'id="no-history"' in response.text


def test_review_screen_links_to_history(client, turn, reviewers):
    client.force_login(reviewers[0])
    assert _url(turn) in client.get(reverse("annotations:turn", args=[turn.pk])).text


def test_every_revision_with_word_diff_markup(client, turn, admin_user, reviewers):
    services.save_turn_edit(
        turn=turn, user=admin_user, changes={"answer_en": "Creatinine is 1.4 mg/dL today."}, base_version=1
    )
    services.save_turn_edit(
        turn=turn,
        user=admin_user,
        changes={"answer_en": "Creatinine was 1.4 mg/dL today."},
        base_version=2,
        reason="tense",
    )
    client.force_login(reviewers[0])
    response = client.get(_url(turn))
    assert response.status_code == 200
    rows = response.context["fields"]["answer_en"]
    assert len(rows) == 2 and [r["revision"].version for r in rows] == [2, 3]
    text = response.text
    assert "<del>is</del> <ins>was</ins>" in text  # word level: the whole word, not letters
    assert "boss" in text and "review_edit" in text and "tense" in text and "v3" in text


def test_chinese_fields_diff_by_character(client, turn, admin_user):
    turn.refresh_from_db()
    old = turn.answer_zh
    services.save_turn_edit(turn=turn, user=admin_user, changes={"answer_zh": old + "复查"}, base_version=1)
    client.force_login(admin_user)
    response = client.get(_url(turn))
    (row,) = response.context["fields"]["answer_zh"]
    assert row["diff"].lang == "zh"
    assert [(op.tag, op.after) for op in row["diff"].ops if op.tag != "equal"] == [("insert", "复查")]
    assert '<p class="diff" lang="zh">' in response.text and "<ins>复查</ins>" in response.text


def test_revision_text_is_escaped(client, turn, admin_user):
    payload = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    services.save_turn_edit(
        turn=turn, user=admin_user, changes={"answer_en": payload}, base_version=1, reason="<b>why</b>"
    )
    client.force_login(admin_user)
    text = client.get(_url(turn)).text
    assert "<script>alert" not in text and "<img src=x" not in text and "<b>why</b>" not in text
    assert "&lt;script&gt;" in text and "&lt;b&gt;why&lt;/b&gt;" in text


def test_other_turns_history_is_not_shown(client, turn, admin_user):
    other = complete_session().turns.get(index=0)
    services.save_turn_edit(turn=other, user=admin_user, changes={"answer_en": "Other text."}, base_version=1)
    client.force_login(admin_user)
    assert client.get(_url(turn)).context["fields"] == {}
