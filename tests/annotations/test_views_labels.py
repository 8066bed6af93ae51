"""Human labels on the screens a physician reads: statuses, task types, scenarios, field keys, empty values,
machine checks as sentences, one 1-based rubric numbering, readable judge reasons, and a rendered card."""

from __future__ import annotations

import pytest
from django.utils import translation

from annotations import content as tc
from annotations import services
from annotations.templatetags import review_i18n as labels
from evaluation.judges.rules import check_must_not_recommend, check_term, check_write_call


def test_field_keys_read_as_words():
    assert labels.field_label("rubric.4.text_en") == "Rubric item 5 (English)"
    assert labels.field_label("rubric.0.text_zh") == "Rubric item 1 (Chinese)"
    assert labels.field_label("rubric.2.is_safety") == "Rubric item 3: safety flag"
    assert labels.field_label("steps.1.arguments") == "Tool call 2: arguments"
    assert labels.field_label("answer_zh") == "Gold answer (Chinese)"
    assert labels.field_label("request_explicit_en") == "Request, explicit form (English)"


def test_codes_read_as_labels_in_both_languages():
    assert labels.turn_status("needs_adjudication") == "Needs adjudication"
    assert labels.task_type_label("CR") == "Clinical reasoning (CR)"
    assert labels.scenario_label("med_safety") == "Medication safety"
    assert labels.or_dash(None) == labels.or_dash([]) == labels.or_dash("") == "—"
    assert labels.or_dash(0) == 0


def test_machine_checks_read_as_sentences():
    assert labels.check_sentence({"kind": "value_unit", "value": 0.9, "unit": "mg/dL", "tolerance": 0.05}) == (
        "value 0.9 mg/dL ± 0.05"
    )
    assert labels.check_sentence({"kind": "value_unit", "value": 5, "unit": "mg"}) == "value 5 mg"
    assert (
        labels.check_sentence({"kind": "term", "en": ["warfarin"], "zh": ["华法林"]})
        == "mentions any of “warfarin”, “华法林”"
    )
    assert labels.check_sentence({"kind": "write_call", "tool": "Flag.create", "params": {"code": "fall"}}) == (
        "calls Flag.create with code = fall"
    )
    assert labels.check_sentence(None) == "—"


def test_judge_reasons_have_no_python_reprs():
    assert check_term(answer="nothing", phrases=["a", "b"])[1] == "none of “a”, “b” in the answer"
    assert check_term(answer="take a", phrases=["a", "b"])[1] == "mentions “a”"
    assert check_must_not_recommend(answer="start heparin", phrases=["heparin"])[1] == "recommends “heparin”"
    ok, why = check_write_call(writes=[], tool="Flag.create", params={"code": "fall"})
    assert not ok and "[" not in why and "{" not in why
    ok, why = check_write_call(
        writes=[{"tool": "Flag.create", "arguments": {"code": "x"}}], tool="Flag.create", params={"code": "fall"}
    )
    assert not ok and why.startswith("Flag.create called, but not with ") and "= “fall”" in why and "{" not in why


def test_markdown_card_is_rendered_and_cleaned():
    html = str(labels.markdown_html("# Card\n\n- one\n\n<script>alert(1)</script>"))
    assert "<h1>Card</h1>" in html and "<li>one</li>" in html and "<script" not in html


@pytest.mark.django_db
def test_review_screen_uses_labels_and_one_numbering(client, turn, reviewers):
    rubric = sorted(turn.rubric_items.all(), key=lambda r: r.idx)
    first = rubric[0]
    first.machine_check = {"kind": "value_unit", "value": 0.9, "unit": "mg/dL", "tolerance": 0.05}
    first.save()
    client.force_login(reviewers[0])
    html = client.get(f"/review/turns/{turn.pk}/").content.decode()
    assert "value 0.9 mg/dL ± 0.05" in html and "<details><summary>JSON</summary>" in html
    assert f"<tr><td>{first.idx + 1}</td>" in html and f"<tr><td>{first.idx}</td><td lang" not in html
    assert "In review" in html and "status in_review" not in html
    assert f"({turn.task_type})" in html and labels.task_type_label(turn.task_type) in html
    assert labels.scenario_label(turn.session.scenario) in html


@pytest.mark.django_db
def test_queue_and_chinese_ui_show_labels(client, turn, reviewers):
    client.force_login(reviewers[0])
    html = client.get("/review/").content.decode()
    assert labels.scenario_label(turn.session.scenario) in html
    assert "in_review</td>" not in html
    client.cookies["django_language"] = "zh-hans"
    with translation.override("zh-hans"):
        zh_status = str(labels.turn_status("in_review"))
    assert zh_status in client.get("/review/").content.decode()


@pytest.mark.django_db
def test_adjudication_and_history_show_field_labels(client, turn, reviewers, adjudicator):
    for reviewer, text in ((reviewers[0], "Edited A"), (reviewers[1], "Edited B")):
        turn.refresh_from_db()
        rubric = tc.snapshot(turn=turn)["rubric"]
        rubric[0]["text_en"] = text
        services.submit_review(
            turn=turn, reviewer=reviewer, decision="approve", proposed={"rubric": rubric}, base_version=turn.version
        )
    client.force_login(adjudicator)
    html = client.get(f"/review/adjudicate/{turn.pk}/").content.decode()
    assert "Rubric item 1 (English)" in html and "<code>rubric.0.text_en</code>" not in html
    assert "Needs adjudication" in html and "needs_adjudication ·" not in html
    history = client.get(f"/review/history/{turn.pk}/").content.decode()
    assert "Status (" in history and "In review → Needs adjudication" in history
