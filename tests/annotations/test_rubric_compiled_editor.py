"""The rubric compiler's suggestion in the review editor: accept, edit, remove (and restore), each a revision."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from annotations.content import snapshot
from annotations.models import Review, Revision
from scenarios.models import CompiledState, RubricItem
from scenarios.rubric_compiler.services import compile_stored
from tests.annotations.test_views_editor import form_data

pytestmark = pytest.mark.django_db


def _compiled(turn):
    """Turn 0's items as official records have them: no machine check, the compiler's suggestion."""
    RubricItem.objects.filter(turn=turn).update(machine_check=None)
    compile_stored(items=RubricItem.objects.filter(turn=turn))
    items = list(turn.rubric_items.order_by("idx"))
    assert [i.compiled_state for i in items] == ["suggested", "suggested"]
    return items


def _post(client, turn, **edits):
    content = snapshot(turn=turn)
    data = form_data(content, turn.version, **edits)
    for i, item in enumerate(content["rubric"]):
        if item.get("compiled"):
            shown = json.dumps(item["compiled"]["check"], ensure_ascii=False)
            data.setdefault(f"rubric-{i}-compiled_json", shown)
            data[f"orig-rubric-{i}-compiled_json"] = shown
    return client.post(reverse("annotations:edit", args=[turn.pk]), data)


def test_the_editor_shows_the_suggestion_in_both_languages(client, turn, adjudicator):
    _compiled(turn)
    client.force_login(adjudicator)
    page = client.get(reverse("annotations:turn", args=[turn.pk]))
    assert "compiled suggestion" in page.text and 'name="rubric-0-compiled"' in page.text
    assert "value_unit" in page.text and "accept (use as machine check)" in page.text
    client.cookies.load({"django_language": "zh-hans"})
    zh = client.get(reverse("annotations:turn", args=[turn.pk]))
    assert "编译建议" in zh.text and "采纳（作为机器校验）" in zh.text


def test_accept_edit_remove_and_restore_are_revisions(client, turn, adjudicator):
    value, safety = _compiled(turn)
    client.force_login(adjudicator)
    response = _post(client, turn, **{"rubric-0-compiled": "accept", "rubric-1-compiled": "remove"})
    assert response.status_code == 200 and "Saved as version 2" in response.text, response.text[:1500]
    value.refresh_from_db()
    safety.refresh_from_db()
    assert value.compiled_state == CompiledState.ACCEPTED and value.machine_check == value.compiled_check
    assert safety.compiled_state == CompiledState.REMOVED and safety.scoring_check is None
    changed = {r.field: r.after for r in Revision.objects.filter(turn=turn, version=2)}
    assert changed["rubric.0.compiled_state"] == "accepted" and changed["rubric.1.compiled_state"] == "removed"
    assert changed["rubric.0.machine_check"] == value.compiled_check

    edited = {"kind": "must_not_recommend", "en": ["ibuprofen", "naproxen"], "zh": ["布洛芬"]}
    turn.refresh_from_db()
    response = _post(client, turn, **{"rubric-1-compiled_json": json.dumps(edited, ensure_ascii=False)})
    assert "Saved as version 3" in response.text, response.text[:1500]
    safety.refresh_from_db()
    assert safety.compiled_state == CompiledState.EDITED and safety.machine_check == edited
    assert safety.compiled_check["kind"] == "must_not_recommend"  # the suggestion itself is kept

    turn.refresh_from_db()
    _post(client, turn, **{"rubric-0-compiled": "remove"})
    value.refresh_from_db()
    assert value.compiled_state == CompiledState.REMOVED and value.machine_check is None  # acceptance taken back
    turn.refresh_from_db()
    _post(client, turn, **{"rubric-0-compiled": "restore"})
    value.refresh_from_db()
    assert value.compiled_state == CompiledState.SUGGESTED

    states = list(
        Revision.objects.filter(turn=turn, field="rubric.0.compiled_state")
        .order_by("pk")
        .values_list("after", flat=True)
    )
    assert states == ["accepted", "removed", "suggested"]
    history = client.get(reverse("annotations:history", args=[turn.pk]))
    assert "rubric.0.compiled_state" in history.text and "rubric.1.machine_check" in history.text


def test_bad_edited_json_is_refused_and_nothing_is_saved(client, turn, adjudicator):
    _compiled(turn)
    client.force_login(adjudicator)
    response = _post(client, turn, **{"rubric-0-compiled_json": '{"kind": "value_unit"'})
    assert "banner-error" in response.text and "not valid JSON" in response.text
    response = _post(client, turn, **{"rubric-0-compiled_json": '{"kind": "value_unit", "value": "x", "unit": ""}'})
    assert "banner-error" in response.text and "value_unit" in response.text
    turn.refresh_from_db()
    assert turn.version == 1 and not Revision.objects.filter(turn=turn).exists()


def test_a_reviewer_proposes_the_decision_in_their_draft(client, turn, reviewers):
    _compiled(turn)
    client.force_login(reviewers[0])
    response = _post(client, turn, **{"rubric-1-compiled": "remove"})
    assert response.status_code == 200 and "Draft saved." in response.text
    proposed = Review.objects.get(turn=turn, reviewer=reviewers[0]).proposed
    assert proposed["rubric"][1]["compiled_state"] == "removed"
    assert proposed["rubric"][0]["compiled_state"] == "suggested"
    assert RubricItem.objects.get(turn=turn, idx=1).compiled_state == "suggested"  # the turn waits for adjudication
