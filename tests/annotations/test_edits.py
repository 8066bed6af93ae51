"""Optimistic locking: a stale save is a Conflict, nothing is lost, and merging resolves it."""

import pytest

from annotations import services
from annotations.models import Revision, RevisionKind
from annotations.selectors import history


def test_second_save_from_the_same_base_conflicts_and_both_edits_are_kept(turn, adjudicator, admin_user):
    base = turn.version
    services.save_turn_edit(
        turn=turn, user=adjudicator, changes={"request_explicit_zh": "最近的肌酐是多少？"}, base_version=base
    )
    with pytest.raises(services.Conflict) as info:
        services.save_turn_edit(
            turn=turn, user=admin_user, changes={"request_explicit_zh": "最近一次血肌酐是多少？"}, base_version=base
        )
    conflict = info.value
    assert (conflict.base_version, conflict.current_version) == (base, base + 1)
    assert conflict.mine["request_explicit_zh"] == "最近一次血肌酐是多少？"
    assert conflict.current["request_explicit_zh"] == "最近的肌酐是多少？"
    [diff] = conflict.diffs
    assert diff.field == "request_explicit_zh" and diff.lang == "zh"
    assert "".join(op.before for op in diff.ops) == "最近的肌酐是多少？"
    assert "".join(op.after for op in diff.ops) == "最近一次血肌酐是多少？"
    turn.refresh_from_db()
    assert turn.request_explicit_zh == "最近的肌酐是多少？" and turn.version == base + 1
    rows = list(history(turn=turn, field="request_explicit_zh"))
    assert [(r.kind, r.author, r.after) for r in rows] == [
        (RevisionKind.REVIEW_EDIT, adjudicator, "最近的肌酐是多少？"),
        (RevisionKind.CONFLICT, admin_user, "最近一次血肌酐是多少？"),
    ]
    assert services.pending_conflicts(turn=turn, user=admin_user) == {"request_explicit_zh": "最近一次血肌酐是多少？"}

    turn, revisions, warnings = services.merge(
        turn=turn,
        user=admin_user,
        changes={"request_explicit_zh": "最近的血肌酐是多少？"},
        base_version=conflict.current_version,
    )
    assert turn.version == base + 2 and turn.request_explicit_zh == "最近的血肌酐是多少？"
    assert [r.kind for r in revisions] == [RevisionKind.MERGE]
    assert isinstance(warnings, list)
    assert services.pending_conflicts(turn=turn, user=admin_user) == {}
    assert Revision.objects.get(kind=RevisionKind.CONFLICT).resolved_at is not None


def test_save_without_change_keeps_version(turn, adjudicator):
    turn, revisions, _ = services.save_turn_edit(
        turn=turn, user=adjudicator, changes={"answer_en": turn.answer_en}, base_version=turn.version
    )
    assert revisions == [] and turn.version == 1


def test_invalid_change_stores_nothing(turn, adjudicator):
    with pytest.raises(ValueError, match="subtype"):
        services.save_turn_edit(turn=turn, user=adjudicator, changes={"subtype": "XX"}, base_version=1)
    assert not Revision.objects.exists()


def test_rubric_edit_keeps_rows_and_validates(turn, adjudicator):
    from annotations.content import snapshot

    rubric = snapshot(turn=turn)["rubric"]
    first_id = rubric[0]["id"]
    rubric[0]["is_safety"] = True
    turn, revisions, _ = services.save_turn_edit(
        turn=turn, user=adjudicator, changes={"rubric": [rubric[1], rubric[0]]}, base_version=1
    )
    assert turn.rubric_items.get(idx=1).pk == first_id and turn.rubric_items.get(idx=1).is_safety
    assert {r.field for r in revisions} >= {"rubric.0.text_en", "rubric.0.is_safety", "rubric.1.text_en"}


def test_duplicate_rubric_ids_are_refused(turn, adjudicator):
    from annotations.content import snapshot

    rubric = snapshot(turn=turn)["rubric"]
    with pytest.raises(ValueError, match="appears twice"):
        services.save_turn_edit(turn=turn, user=adjudicator, changes={"rubric": [rubric[0], rubric[0]]}, base_version=1)


def test_apply_flat_reads_merge_form_values(turn):
    """Merge forms post flattened fields: texts, subtype, rubric attributes (append / drop), JSON arguments."""
    from annotations import content as tc

    base = tc.snapshot(turn=turn)
    flat = {
        "answer_zh": tc.parse_field("answer_zh", "新答案\r\n第二行"),
        "subtype": tc.parse_field("subtype", ""),
        "rubric.0.text_en": "",  # cleared → dropped
        "rubric.1.is_safety": tc.parse_field("rubric.1.is_safety", "false"),
        "rubric.2.text_en": "Appended item",
        "steps.0.arguments": tc.parse_field("steps.0.arguments", '{"code": "potassium"}'),
    }
    merged = tc.apply_flat(base=base, flat=flat)
    assert merged["answer_zh"] == "新答案\n第二行" and merged["subtype"] is None
    assert [(r["id"], r["text_en"], r["is_safety"]) for r in merged["rubric"]] == [
        (base["rubric"][1]["id"], "Does not recommend NSAIDs", False),
        (None, "Appended item", False),
    ]
    assert merged["steps"][0]["arguments"] == {"code": "potassium"}
    assert base == tc.snapshot(turn=turn)  # the base is not modified


def test_apply_flat_names_bad_fields(turn):
    from annotations import content as tc

    base = tc.snapshot(turn=turn)
    with pytest.raises(tc.InvalidContent, match=r"steps\.0\.arguments: not valid JSON"):
        tc.parse_field("steps.0.arguments", "{nope")
    with pytest.raises(tc.InvalidContent, match=r"unknown field 'rubric\.0\.colour'"):
        tc.apply_flat(base=base, flat={"rubric.0.colour": "red"})
    with pytest.raises(tc.InvalidContent, match="the turn has no step 9"):
        tc.apply_flat(base=base, flat={"steps.9.arguments": {}})
    with pytest.raises(tc.InvalidContent, match="subtype"):
        tc.apply_flat(base=base, flat={"subtype": "XX"})
