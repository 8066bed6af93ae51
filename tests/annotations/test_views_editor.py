"""The editor on the review screen: only changed fields are saved, rubric add/remove/reword/toggle,
subtype, tool-call arguments as JSON (re-executed), reviewer drafts vs direct edits, conflicts and merge."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from django.urls import reverse

from annotations import services
from annotations.content import snapshot
from annotations.models import Review, Revision, RevisionKind
from annotations.services.reviews import current_token
from annotations.steps import rerun_step
from annotations.views.editor_form import editor_fields
from scenarios.models import Turn

pytestmark = pytest.mark.django_db


def _url(turn, name="edit"):
    return reverse(f"annotations:{name}", args=[turn.pk])


def form_data(content, base_version, **edits):
    """What the editor form posts when nothing is touched (every field with its hidden original), then ``edits``."""
    fields = editor_fields(content)
    data = {"base_version": base_version}
    for _label, cells in fields["requests"]:
        for f in cells:
            data[f["name"]] = data[f"orig-{f['name']}"] = f["value"]
    for f in fields["answers"]:
        data[f["name"]] = data[f"orig-{f['name']}"] = f["value"]
    data["subtype"] = data["orig-subtype"] = fields["subtype"]
    for i, item in enumerate(fields["rubric"]):
        data[f"rubric-{i}-key"] = item["key"]
        for attr in ("text_en", "text_zh"):
            data[f"rubric-{i}-{attr}"] = data[f"orig-rubric-{i}-{attr}"] = item[attr]
        data[f"rubric-{i}-orig-is_safety"] = "1" if item["is_safety"] else "0"
        if item["is_safety"]:
            data[f"rubric-{i}-is_safety"] = "1"
    data["rubric-new-0-text_en"] = data["rubric-new-0-text_zh"] = ""
    for step in fields["steps"]:
        data[f"step-{step['idx']}-arguments"] = data[f"orig-step-{step['idx']}-arguments"] = step["json"]
    data.update(edits)
    return data


def test_reviewer_edits_every_kind_of_field(client, turn, reviewers):
    client.force_login(reviewers[0])
    before = snapshot(turn=turn)
    data = form_data(
        before,
        turn.version,
        request_implicit_zh="肌酐呢？",
        subtype="AE",
        **{
            "rubric-0-text_en": "States creatinine 1.4 mg/dL on 07-22",
            "rubric-0-is_safety": "1",  # toggled on
            "rubric-1-remove": "1",
            "rubric-new-0-text_en": "Mentions renal dosing",
            "rubric-new-0-text_zh": "提及肾功能剂量调整",
            "rubric-new-0-is_safety": "1",
        },
    )
    response = client.post(_url(turn), data)
    assert response.status_code == 200 and "Draft saved." in response.text, response.text[:2000]
    proposed = Review.objects.get(turn=turn, reviewer=reviewers[0]).proposed
    assert proposed["request_implicit_zh"] == "肌酐呢？" and proposed["subtype"] == "AE"
    assert proposed["request_explicit_zh"] == before["request_explicit_zh"]
    first, new = proposed["rubric"]
    assert first["id"] == before["rubric"][0]["id"] and first["is_safety"] is True
    assert first["text_en"] == "States creatinine 1.4 mg/dL on 07-22"
    assert first["machine_check"] == before["rubric"][0]["machine_check"]  # kept for existing items
    assert new == {
        "id": None,
        "text_en": "Mentions renal dosing",
        "text_zh": "提及肾功能剂量调整",
        "is_safety": True,
        "machine_check": None,
    }
    # The turn itself is untouched until adjudication.
    assert snapshot(turn=turn) == before
    # The re-rendered editor shows the draft (new item keyed by its position).
    assert 'value="n1"' in response.text and "肌酐呢？" in response.text


def test_two_tabs_editing_different_fields_keep_both(client, turn, reviewers):
    client.force_login(reviewers[0])
    shown = snapshot(turn=turn)  # both tabs loaded the same page
    tab1 = form_data(shown, turn.version, answer_en="Creatinine is 1.4 mg/dL.")
    tab2 = form_data(shown, turn.version, **{"rubric-1-text_zh": "不建议使用布洛芬等药物"})
    assert client.post(_url(turn), tab1).status_code == 200
    assert client.post(_url(turn), tab2).status_code == 200
    proposed = Review.objects.get(turn=turn, reviewer=reviewers[0]).proposed
    assert proposed["answer_en"] == "Creatinine is 1.4 mg/dL."  # tab 2 did not send it back
    assert proposed["rubric"][1]["text_zh"] == "不建议使用布洛芬等药物"
    assert proposed["rubric"][0] == shown["rubric"][0]


def test_invalid_json_arguments_name_the_step_and_save_nothing(client, turn, reviewers, adjudicator):
    for user in (reviewers[0], adjudicator):
        client.force_login(user)
        data = form_data(snapshot(turn=turn), turn.version, answer_en="changed", **{"step-0-arguments": '{"code": '})
        response = client.post(_url(turn), data)
        assert response.status_code == 200
        assert "banner-error" in response.text and "step 0 (Observation.search)" in response.text
        assert "not valid JSON" in response.text
        data["step-0-arguments"] = "[1, 2]"
        assert "must be a JSON object" in client.post(_url(turn), data).text
    assert not Review.objects.exists()
    turn.refresh_from_db()
    assert turn.version == 1 and turn.answer_en != "changed"


def test_arguments_outside_the_tool_contract_are_refused(client, turn, reviewers, adjudicator):
    typed = {"subject_id": turn.session.subject_id, "code": "potassium", "units": "mmol/L"}
    for user in (reviewers[0], adjudicator):
        client.force_login(user)
        data = form_data(snapshot(turn=turn), turn.version, **{"step-0-arguments": json.dumps(typed)})
        text = client.post(_url(turn), data).text
        assert "banner-error" in text and "step 0 (Observation.search)" in text
        assert "takes no argument units" in text and "subject_id, hadm_id, category, code" in text
    assert not Review.objects.exists()
    turn.refresh_from_db()
    assert turn.version == 1


def test_the_editor_shows_stored_arguments_in_the_contracts_terms(client, turn, adjudicator):
    step = turn.steps.get(idx=0)
    step.arguments = {"patient": turn.session.subject_id, "encounter": turn.session.hadm_id, "code": "creatinine"}
    step.save(update_fields=["arguments"])  # as stored by an earlier version
    client.force_login(adjudicator)
    page = client.get(_url(turn, "turn"))
    shown = json.loads(page.context["editor"]["steps"][0]["json"])
    assert shown == {"subject_id": turn.session.subject_id, "hadm_id": turn.session.hadm_id, "code": "creatinine"}
    assert "&quot;patient&quot;" not in page.text


def test_changed_arguments_are_previewed_for_a_draft(client, turn, reviewers):
    client.force_login(reviewers[0])
    # Typed with alias names and a placeholder: kept under the tool contract's names.
    typed = {"patient": turn.session.subject_id, "test_name": "potassium", "date_from": ""}
    arguments = {"subject_id": turn.session.subject_id, "code": "potassium"}
    data = form_data(snapshot(turn=turn), turn.version, **{"step-0-arguments": json.dumps(typed)})
    response = client.post(_url(turn), data)
    assert response.status_code == 200 and 'id="step-previews"' in response.text
    assert response.context["previews"][0]["arguments"] == arguments
    # (re-run for real: the factory's patient is not in the record, so the tool says so; nothing was dropped)
    assert "not found" in response.context["previews"][0]["observation"]["error"]
    assert "warnings" not in response.context["previews"][0]["observation"]
    # ... on the screen too, with its hint (not only inside the raw JSON).
    shown = response.text.split('id="step-previews"')[1]
    assert 'class="banner banner-error tool-error"' in shown and "The tool refused the call:" in shown
    assert f"Patient {turn.session.subject_id} not found" in shown.split("</div>")[0]
    # ... and in the Chinese UI in Chinese, the model-facing English unchanged.
    zh = client.post(_url(turn), data, HTTP_ACCEPT_LANGUAGE="zh-CN").text.split('id="step-previews"')[1]
    banner = zh.split('class="banner banner-error tool-error"')[1].split("</div>")[0]
    assert "工具拒绝了此次调用" in banner and f"未找到患者 {turn.session.subject_id}" in banner
    assert "not found" not in banner and 'lang="en"' not in banner
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert review.proposed["steps"][0]["arguments"] == arguments
    assert turn.steps.get(idx=0).arguments["code"] == "creatinine"  # only a preview


def test_direct_edit_by_adjudicator_writes_a_version(client, turn, adjudicator):
    client.force_login(adjudicator)
    page = client.get(_url(turn, "turn"))
    assert 'id="save-edit"' in page.text and 'id="approve-btn"' not in page.text
    arguments = {"subject_id": turn.session.subject_id, "code": "potassium"}
    data = form_data(
        snapshot(turn=turn),
        1,
        request_explicit_zh="请查看最近的血钾。",
        reason="clearer",
        **{"step-0-arguments": json.dumps(arguments), "rubric-1-is_safety": ""},
    )
    del data["rubric-1-is_safety"]  # unchecked box: not posted
    response = client.post(_url(turn), data)
    assert response.status_code == 200 and "Saved as version 2" in response.text
    assert "fields changed)" in response.text and "(s)" not in response.text  # issue 35: a proper plural
    turn.refresh_from_db()
    assert turn.version == 2 and turn.request_explicit_zh == "请查看最近的血钾。"
    step = turn.steps.get(idx=0)
    assert step.arguments == arguments
    assert step.observation == rerun_step(session=turn.session, tool=step.tool, arguments=arguments)  # re-executed
    assert step.observation != {"resourceType": "Bundle", "type": "searchset", "total": 0, "entry": []}
    assert response.context["previews"][0]["observation"] == step.observation and 'id="reload-turn"' in response.text
    assert not turn.rubric_items.get(idx=1).is_safety
    fields = set(Revision.objects.filter(turn=turn, kind=RevisionKind.REVIEW_EDIT).values_list("field", flat=True))
    assert fields == {"request_explicit_zh", "steps.0.arguments", "rubric.1.is_safety"}
    # Nothing changed → no new version.
    response = client.post(_url(turn), form_data(snapshot(turn=turn), 2))
    assert "Nothing changed." in response.text
    turn.refresh_from_db()
    assert turn.version == 2


def test_direct_edit_conflict_then_merge_keeps_both_versions(client, turn, adjudicator, admin_user):
    shown = snapshot(turn=turn)
    services.save_turn_edit(turn=turn, user=admin_user, changes={"answer_en": "Admin's answer."}, base_version=1)
    client.force_login(adjudicator)
    response = client.post(_url(turn), form_data(shown, 1, answer_en="Adjudicator's answer."))
    assert response.status_code == 200 and 'id="merge-form"' in response.text
    assert "v1 → v2" in response.text
    assert 'name="merge-answer_en"' in response.text and 'name="base_version" value="2"' in response.text
    conflict = Revision.objects.get(turn=turn, kind=RevisionKind.CONFLICT)
    assert conflict.after == "Adjudicator's answer." and conflict.resolved_at is None
    merged = "Admin's answer. Adjudicator's answer."
    response = client.post(_url(turn, "merge"), {"base_version": 2, "merge-answer_en": merged})
    assert response.status_code == 200 and "Merged: the turn is at version 3" in response.text
    turn.refresh_from_db()
    assert turn.answer_en == merged and turn.version == 3
    history = list(Revision.objects.filter(turn=turn, field="answer_en").order_by("pk").values_list("kind", "after"))
    assert history == [
        ("review_edit", "Admin's answer."),
        ("conflict", "Adjudicator's answer."),
        ("merge", merged),
    ]
    conflict.refresh_from_db()
    assert conflict.resolved_at is not None


def test_merge_of_a_stale_merge_conflicts_again(client, turn, adjudicator, admin_user):
    services.save_turn_edit(turn=turn, user=admin_user, changes={"answer_en": "v2"}, base_version=1)
    client.force_login(adjudicator)
    response = client.post(_url(turn, "merge"), {"base_version": 1, "merge-answer_en": "mine"})
    assert 'id="merge-form"' in response.text and 'name="base_version" value="2"' in response.text
    turn.refresh_from_db()
    assert turn.answer_en == "v2"


def test_merge_form_rubric_and_json_fields(client, turn, adjudicator):
    client.force_login(adjudicator)
    data = {
        "base_version": 1,
        "merge-rubric.0.text_en": "",  # cleared: the item is removed
        "merge-rubric.2.text_en": "New merged item",
        "merge-rubric.2.is_safety": "true",
        "merge-subtype": "",
    }
    response = client.post(_url(turn, "merge"), data)
    assert "banner-ok" in response.text, response.text[:1500]
    rubric = snapshot(turn=turn)["rubric"]
    assert [r["text_en"] for r in rubric] == ["Does not recommend NSAIDs", "New merged item"]
    assert rubric[1]["is_safety"] is True and rubric[1]["machine_check"] is None
    response = client.post(_url(turn, "merge"), {"base_version": 2, "merge-steps.0.arguments": "{oops"})
    assert "banner-error" in response.text and "steps.0.arguments: not valid JSON" in response.text
    # Only the banner, out of band: the merge form stays in the page with what was typed in it.
    assert response["HX-Reswap"] == "none" and 'id="merge-form"' not in response.text
    assert Turn.objects.get(pk=turn.pk).version == 2


def test_stale_reviewer_submit_shows_merge_ui_and_merge_resubmits(client, turn, reviewers, admin_user):
    client.force_login(reviewers[0])
    shown = snapshot(turn=turn)
    services.save_turn_edit(
        turn=turn,
        user=admin_user,
        changes={"answer_en": "Admin's answer.", "request_explicit_en": "Admin's request."},
        base_version=1,
    )
    data = form_data(shown, 1, answer_en="Reviewer's answer.", submit_edit="1")
    response = client.post(_url(turn), data)
    assert response.status_code == 200 and 'id="merge-form"' in response.text
    # Only the reviewer's own field is offered for merging (not the admin's request they never touched).
    assert [d.field for d in response.context["conflict"].diffs] == ["answer_en"]
    assert 'name="decision" value="approve"' in response.text
    assert not Review.objects.get(turn=turn, reviewer=reviewers[0]).submitted
    merged = "Admin's answer, reviewed."
    response = client.post(
        _url(turn, "merge"), {"base_version": 2, "merge-answer_en": merged, "decision": "approve", "reason": ""}
    )
    assert response.status_code == 200 and "Review submitted." in response.text, response.text[:1500]
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert review.submitted and review.decision == "approve" and review.base_version == 2
    assert review.proposed["answer_en"] == merged
    assert review.proposed["request_explicit_en"] == "Admin's request."  # the admin's edit is not undone


def test_reviewer_draft_merge_without_decision(client, turn, reviewers, admin_user):
    client.force_login(reviewers[0])
    client.post(_url(turn), form_data(snapshot(turn=turn), 1, answer_en="Draft answer."))
    services.save_turn_edit(turn=turn, user=admin_user, changes={"answer_zh": "新的答案。"}, base_version=1)
    page = client.get(_url(turn, "turn"))
    assert 'id="stale-draft"' in page.text
    response = client.post(_url(turn, "merge"), {"base_version": 2, "merge-answer_en": "Draft answer."})
    assert "Merged into your draft." in response.text
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    assert review.base_version == 2 and not review.submitted
    assert review.proposed["answer_en"] == "Draft answer." and review.proposed["answer_zh"] == "新的答案。"


def test_new_rubric_item_needs_english(client, turn, reviewers):
    client.force_login(reviewers[0])
    data = form_data(snapshot(turn=turn), 1, **{"rubric-new-0-text_zh": "只有中文"})
    response = client.post(_url(turn), data)
    assert "banner-error" in response.text and "English text is required" in response.text
    assert not Review.objects.exists()


def test_permissions(client, turn, reviewers):
    for name in ("merge", "lease", "release_lease"):
        response = client.post(_url(turn, name), {"base_version": 1})
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(reviewers[2])  # not assigned
    for name in ("edit", "merge", "lease", "release_lease"):
        assert client.post(_url(turn, name), {"base_version": 1, "merge-answer_en": "x"}).status_code == 404
    client.force_login(reviewers[0])
    assert client.get(_url(turn, "merge")).status_code == 405
    assert client.get(_url(turn, "lease")).status_code == 405
    assert not Review.objects.exists()
    assert Turn.objects.get(pk=turn.pk).version == 1


def _oob_inputs(html: str) -> dict[str, str]:
    """The out-of-band inputs of a response (id to value), as htmx would swap them into the page."""
    oob = re.compile(r'<input type="hidden" id="(?P<id>[^"]+)" name="[^"]+" value="(?P<value>[^"]*)" hx-swap-oob')
    return {m["id"]: unescape(m["value"]) for m in oob.finditer(html)}


def test_a_text_draft_save_leaves_the_editor_in_place(client, turn, reviewers, django_assert_max_num_queries):
    """Only the feedback, the previews, the version/token inputs and the twins of what changed come
    back (HX-Reswap: none): the form the reviewer types in is not drawn again."""
    client.force_login(reviewers[0])
    before = snapshot(turn=turn)
    data = form_data(before, turn.version, answer_en="Creatinine is 1.4 mg/dL.", draft="1", draft_token="")
    with django_assert_max_num_queries(16):  # no comments, lease or co-reviewer reads
        response = client.post(_url(turn), data, HTTP_HX_REQUEST="true")
    text = response.text
    assert response["HX-Reswap"] == "none"
    assert 'id="edit-form"' not in text and 'id="comments"' not in text
    assert re.search(r'<div id="actions-feedback" hx-swap-oob="true">.*Draft saved\.', text, re.S)
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    swapped = _oob_inputs(text)
    assert swapped["edit-draft-token"] == current_token(review)
    assert swapped["edit-base-version"] == swapped["approve-base-version"] == swapped["reject-base-version"] == "1"
    # Only the twin of the changed field, now holding the saved text.
    assert {k: v for k, v in swapped.items() if "orig" in k} == {"orig-answer_en": "Creatinine is 1.4 mg/dL."}

    # The page with those inputs swapped in: typing the original text back undoes the edit.
    data.update({"orig-answer_en": swapped["orig-answer_en"], "draft_token": swapped["edit-draft-token"]})
    data["answer_en"] = before["answer_en"]
    again = client.post(_url(turn), data, HTTP_HX_REQUEST="true")
    assert again["HX-Reswap"] == "none" and "Draft saved." in again.text
    review.refresh_from_db()
    assert review.proposed["answer_en"] == before["answer_en"]
    assert _oob_inputs(again.text)["orig-answer_en"] == before["answer_en"]


def test_a_draft_save_that_adds_or_removes_rubric_rows_draws_the_editor_again(client, turn, reviewers):
    client.force_login(reviewers[0])
    data = form_data(snapshot(turn=turn), turn.version, **{"rubric-new-0-text_en": "Mentions renal dosing"})
    response = client.post(_url(turn), data, HTTP_HX_REQUEST="true")
    assert "HX-Reswap" not in response and 'id="edit-form"' in response.text and 'value="n2"' in response.text
    # A removal, from the page as it is now (three rows keyed 1, 2, n2).
    page = client.get(_url(turn, "turn"))
    data = form_data(page.context["my_review"].proposed, turn.version, **{"rubric-2-remove": "1"})
    data["draft_token"] = current_token(page.context["my_review"])
    response = client.post(_url(turn), data, HTTP_HX_REQUEST="true")
    assert "HX-Reswap" not in response and 'id="edit-form"' in response.text and 'value="n2"' not in response.text
    assert len(Review.objects.get(turn=turn, reviewer=reviewers[0]).proposed["rubric"]) == 2


def test_a_field_that_does_not_parse_keeps_what_the_user_typed(client, turn, reviewers):
    """Nothing is stored and only the error banner comes back, so the editor (with the other edits
    typed into it) stays on the screen as it is."""
    client.force_login(reviewers[0])
    data = form_data(snapshot(turn=turn), turn.version, answer_en="typed", **{"step-0-arguments": "{oops"})
    response = client.post(_url(turn), data, HTTP_HX_REQUEST="true")
    assert response["HX-Reswap"] == "none" and 'id="edit-form"' not in response.text
    assert "banner-error" in response.text and "step 0 (Observation.search)" in response.text
    assert "edit-draft-token" not in response.text  # the draft did not change
    assert not Review.objects.exists()


def test_the_stale_draft_banner_follows_the_save(client, turn, reviewers, adjudicator):
    client.force_login(reviewers[0])
    data = form_data(snapshot(turn=turn), 1, answer_en="Draft on version 1.")
    client.post(_url(turn), data, HTTP_HX_REQUEST="true")
    services.save_turn_edit(turn=turn, user=adjudicator, changes={"answer_zh": "新的答案。"}, base_version=1)
    turn.refresh_from_db()
    token = current_token(Review.objects.get(turn=turn, reviewer=reviewers[0]))
    # Saved from the old page: still on version 1, the banner says so.
    old_page = {**data, "answer_en": "Still on version 1.", "draft_token": token}
    response = client.post(_url(turn), old_page, HTTP_HX_REQUEST="true")
    assert 'id="stale-draft"' in response.text
    # Saved from the reloaded page (version 2): rebased, the banner goes.
    review = Review.objects.get(turn=turn, reviewer=reviewers[0])
    shown = {**snapshot(turn=turn), "answer_en": review.proposed["answer_en"]}  # the draft over version 2
    reloaded = form_data(shown, 2, answer_en="Now on version 2.", draft_token=current_token(review))
    response = client.post(_url(turn), reloaded, HTTP_HX_REQUEST="true")
    assert re.search(r'<div id="stale-draft-slot" hx-swap-oob="true">\s*</div>', response.text)
    assert _oob_inputs(response.text) == {
        "edit-base-version": "2",
        "approve-base-version": "2",
        "reject-base-version": "2",
        "edit-draft-token": current_token(Review.objects.get(pk=review.pk)),
        "orig-answer_en": "Now on version 2.",
    }
