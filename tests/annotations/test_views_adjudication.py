"""Adjudication screen: adjudicators only, take A / take B / edited content over HTMX, conflicts with status 200."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from annotations import services
from annotations.content import snapshot
from annotations.models import Adjudication, Revision, RevisionKind, TurnState
from annotations.templatetags.review_i18n import field_label

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


# --- clinical context, side-by-side diffs, take-button wording ---------------------------------------------


def _row(text: str, field: str) -> list[str]:
    """The cells (th and td, inner HTML) of the ``#adjudication-diffs`` row of ``field``."""
    table = re.search(r'<table[^>]*id="adjudication-diffs".*?</table>', text, re.S)
    assert table, "no #adjudication-diffs table"
    row = re.search(rf'<tr data-field="{re.escape(field)}">(.*?)</tr>', table.group(), re.S)
    assert row, f"no row for {field}"
    return re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row.group(1), re.S)


def _take(text: str, label: str) -> tuple[str, str]:
    """The take button's text and the consequence line under it."""
    button = re.search(rf'<button type="submit" id="take-{label}"[^>]*>(.*?)</button>', text, re.S)
    line = re.search(rf'<p class="take-consequence" id="take-{label}-consequence">(.*?)</p>', text, re.S)
    assert button and line, f"take-{label} button or consequence missing"
    return html.unescape(button.group(1)), html.unescape(line.group(1))


def test_screen_shows_the_turns_clinical_context(client, disputed, adjudicator):
    client.force_login(adjudicator)
    text = client.get(_url(disputed)).text
    disputed.refresh_from_db()
    for value in (disputed.request_explicit_en, disputed.request_implicit_zh, disputed.answer_en):
        assert html.escape(value) in text, value
    assert 'class="request-explicit-en"' in text and 'class="answer-zh"' in text
    (step,) = disputed.steps.filter(idx=0)
    assert f"<code>{step.tool}</code>" in text  # gold tool call, with its observation below
    assert 'class="raw-json"' in text
    assert 'id="rubric"' in text and html.escape(disputed.rubric_items.first().text_en) in text
    assert 'id="evidence"' in text and 'id="evidence-search"' in text
    assert 'id="current-date"' in text
    # The reviews follow the short cards; the long ones (gold calls) come after them.
    assert text.index('id="turn"') < text.index('id="adjudication"') < text.index('id="rubric"')


def test_evidence_fragment_is_the_review_screens(client, disputed, adjudicator, django_assert_max_num_queries):
    """The evidence aside is the review screen's cached fragment: once either screen rendered it, the other
    reads it from the cache instead of the record."""

    def lab_queries(url):
        with django_assert_max_num_queries(200) as captured:
            response = client.get(url)
        assert response.status_code == 200 and 'id="evidence"' in response.text
        return [q for q in captured.captured_queries if "mimic_labevents" in q["sql"]]

    client.force_login(adjudicator)
    cache.clear()
    assert lab_queries(_url(disputed))  # cold: read from the record
    assert not lab_queries(reverse("annotations:turn", args=[disputed.pk]))
    cache.clear()
    assert lab_queries(reverse("annotations:turn", args=[disputed.pk]))
    assert not lab_queries(_url(disputed))


def test_side_by_side_cells(client, disputed, adjudicator):
    client.force_login(adjudicator)
    before = snapshot(turn=disputed)["answer_zh"]
    text = client.get(_url(disputed)).text
    header, current, cell_a, cell_b = _row(text, "answer_zh")
    assert header == field_label("answer_zh") and 'title="answer_zh"' in text
    # Whole texts side by side: the current one with removals, B's with insertions, A untouched.
    # B only inserts a character: nothing of the current text is struck out.
    assert re.sub(r"<[^>]+>", "", current) == before and "<del" not in current and "<ins>" not in current
    assert re.sub(r"<[^>]+>", "", cell_b) == NEW_ZH and "<ins>血</ins>" in cell_b and "<del" not in cell_b
    assert cell_a == "unchanged"
    assert 'id="adjudication-same-content"' not in text
    # Only fields a review changes get a row.
    assert re.findall(r'<tr data-field="([^"]+)">', text) == ["answer_zh"]


def test_take_wording_reject_without_changes_and_approve_with_one(client, disputed, adjudicator):
    client.force_login(adjudicator)
    text = client.get(_url(disputed)).text
    assert _take(text, "a") == (
        "Take review A: reject (translation error)",
        "If taken: the turn will be rejected; its content stays as it is.",
    )
    assert _take(text, "b") == (
        "Take review B: approve with 1 change",
        "If taken: the turn will be approved, with this review's 1 change written to it.",
    )


@pytest.fixture
def reject_with_edits(turn, reviewers):
    """Review A (rev1) approves as it is; review B (rev2) rejects and edits both answers."""
    _submit(turn, reviewers[0])
    _submit(
        turn,
        reviewers[1],
        decision="reject",
        reject_reason="not_grounded",
        proposed={"answer_en": "Creatinine 1.6 mg/dL.", "answer_zh": NEW_ZH},
    )
    turn.refresh_from_db()
    assert turn.status == TurnState.NEEDS_ADJUDICATION
    return turn


def test_take_wording_matches_what_taking_does(client, reject_with_edits, adjudicator):
    """The wording says what services.adjudicate does: taking a rejection with edits rejects the turn
    and writes the edits."""
    turn = reject_with_edits
    client.force_login(adjudicator)
    text = client.get(_url(turn)).text
    assert _take(text, "a") == (
        "Take review A: approve without changes",
        "If taken: the turn will be approved as it is.",
    )
    assert _take(text, "b") == (
        "Take review B: reject (not grounded in the record)",
        "If taken: the turn will be rejected, with this review's 2 changes written to it.",
    )
    _, current, cell_a, cell_b = _row(text, "answer_en")
    assert cell_a == "unchanged"
    # B replaces words: struck out (and attributed to B) in the current text, inserted in B's.
    assert '<del data-by="B"' in current and "<ins>" in cell_b
    assert re.sub(r"<[^>]+>", "", cell_b) == "Creatinine 1.6 mg/dL."
    assert client.post(_url(turn), {"chosen": "b", "base_version": turn.version}).status_code == 200
    turn.refresh_from_db()
    assert turn.status == TurnState.REJECTED
    assert (turn.answer_en, turn.answer_zh) == ("Creatinine 1.6 mg/dL.", NEW_ZH)
    written = Revision.objects.filter(turn=turn, kind=RevisionKind.ADJUDICATION).values_list("field", flat=True)
    assert sorted(written) == ["answer_en", "answer_zh"]


def test_only_the_decisions_differ(client, turn, reviewers, adjudicator):
    _submit(turn, reviewers[0])
    _submit(turn, reviewers[1], decision="reject", reject_reason="unsafe")
    client.force_login(adjudicator)
    text = client.get(_url(turn)).text
    assert 'id="adjudication-same-content"' in text and 'id="adjudication-diffs"' not in text
    assert _take(text, "b") == (
        "Take review B: reject (unsafe)",
        "If taken: the turn will be rejected; its content stays as it is.",
    )


def test_screen_query_count_is_constant(client, disputed, adjudicator, django_assert_max_num_queries):
    """The context cards read prefetched steps and rubric items: more of them add no queries."""
    client.force_login(adjudicator)
    client.get(_url(disputed))  # warm caches (session, evidence fragment)
    with django_assert_max_num_queries(40) as captured:
        assert client.get(_url(disputed)).status_code == 200
    baseline = len(captured)
    for i in range(5):
        disputed.steps.create(idx=10 + i, tool="Observation.search", arguments={"code": i}, observation={})
        disputed.rubric_items.create(idx=10 + i, text_en=f"item {i}", text_zh=f"条目 {i}")
    with django_assert_max_num_queries(baseline):
        response = client.get(_url(disputed))
    assert response.status_code == 200 and "item 4" in response.text


def test_a_merged_field_that_does_not_parse_answers_with_the_error_alone(client, disputed, adjudicator):
    """Refused before anything is stored: only the error banner, out of band, so the adjudicator's form
    (with everything typed in it) stays in the page; the turn still awaits adjudication."""
    client.force_login(adjudicator)
    current = snapshot(turn=disputed)
    step = current["steps"][0]
    data = {
        "chosen": "merged",
        "base_version": 1,
        "answer_zh": NEW_ZH,
        "orig-answer_zh": current["answer_zh"],
        f"step-{step['idx']}-arguments": '{"subject_id": oops}',
        f"orig-step-{step['idx']}-arguments": json.dumps(step["arguments"]),
    }
    response = client.post(_url(disputed), data)
    assert response.status_code == 200 and response["HX-Reswap"] == "none"
    assert 'id="adjudication-feedback" hx-swap-oob="true"' in response.text and "banner-error" in response.text
    assert "not valid JSON" in response.text and 'id="adjudication-form"' not in response.text
    disputed.refresh_from_db()
    assert disputed.status == TurnState.NEEDS_ADJUDICATION and disputed.version == 1
