import pytest
from django.template.loader import render_to_string
from django.utils.html import strip_tags

from annotations.diffs import (
    Op,
    Segment,
    diff_content,
    diff_field,
    diff_text,
    insertions,
    removals,
    side_by_side,
    tokens,
)


def test_chinese_is_diffed_by_character():
    ops = diff_text("最近一次肌酐是多少？", "最近一次血肌酐是多少？", lang="zh")
    assert ops == (
        Op("equal", "最近一次", "最近一次"),
        Op("insert", "", "血"),
        Op("equal", "肌酐是多少？", "肌酐是多少？"),
    )


def test_english_is_diffed_by_word():
    ops = diff_text("Hold apixaban 5 mg today.", "Hold warfarin 5 mg today.", lang="en")
    assert [op for op in ops if op.tag != "equal"] == [Op("replace", "apixaban", "warfarin")]
    assert tokens("a  b.", lang="en") == ["a", "  ", "b", "."]
    # Numbers, dates and ratios stay whole.
    assert tokens("Cr 1.4 on 2180-07-22, 5/10", lang="en") == [
        "Cr",
        " ",
        "1.4",
        " ",
        "on",
        " ",
        "2180-07-22",
        ",",
        " ",
        "5/10",
    ]


def test_ops_rebuild_both_texts():
    a, b = "Creatinine 1.4 mg/dL on 2180-07-22.", "Creatinine 1.6 mg/dL (rising) on 2180-07-22."
    ops = diff_text(a, b, lang="en")
    assert "".join(o.before for o in ops) == a and "".join(o.after for o in ops) == b


def test_content_diff_is_field_level():
    before = {
        "answer_zh": "肌酐 1.4",
        "answer_en": "Cr 1.4",
        "rubric": [{"text_en": "x", "text_zh": "甲", "is_safety": False, "machine_check": None}],
        "steps": [{"idx": 0, "tool": "Observation.search", "arguments": {"code": "creatinine"}}],
    }
    after = {
        **before,
        "answer_zh": "肌酐 1.6",
        "rubric": [],
        "steps": [{"idx": 0, "tool": "Observation.search", "arguments": {"code": "creatinine", "_count": 3}}],
    }
    diffs = {d.field: d for d in diff_content(before, after)}
    assert set(diffs) == {
        "answer_zh",
        "rubric.0.text_en",
        "rubric.0.text_zh",
        "rubric.0.is_safety",
        "steps.0.arguments",
    }
    assert diffs["answer_zh"].lang == "zh"
    assert [o for o in diffs["answer_zh"].ops if o.tag != "equal"] == [Op("replace", "4", "6")]
    assert diffs["rubric.0.text_zh"].after == ""
    assert '"_count": 3' in diffs["steps.0.arguments"].after


def test_insertions_keep_the_whole_new_text():
    before, after = "Hold apixaban today.", "Hold apixaban 5 mg today, then restart."
    segments = insertions(before, after, lang="en")
    assert "".join(s.text for s in segments) == after
    assert [s.text.strip() for s in segments if s.marks] == ["5 mg", ", then restart"]


def test_removals_name_the_proposals_that_remove_each_run():
    before = "Creatinine 1.4 mg/dL today."
    segments = removals(before, {"A": "Creatinine 1.6 mg/dL today.", "B": "Creatinine 1.6 mg/dL."}, lang="en")
    assert "".join(s.text for s in segments) == before
    assert [(s.text, s.marks) for s in segments if s.marks] == [("1.4", ("A", "B")), (" today", ("B",))]


def test_chinese_removals_are_per_character():
    segments = removals("血肌酐升高", {"A": "肌酐升高"}, lang="zh")
    assert segments == (Segment("血", ("A",)), Segment("肌酐升高"))


def test_side_by_side_has_a_row_per_field_any_proposal_changes():
    current = {"answer_en": "Cr 1.4", "answer_zh": "肌酐 1.4", "subtype": None, "rubric": [], "steps": []}
    a = {**current, "answer_zh": "肌酐 1.6"}
    b = {**current, "answer_en": "Cr 1.6", "answer_zh": "肌酐 1.6"}
    rows = side_by_side(current, {"A": a, "B": b})
    assert [r.field for r in rows] == ["answer_en", "answer_zh"]  # the content's order, not the proposals'
    en, zh = rows
    assert [(p.label, p.changed) for p in en.proposals] == [("A", False), ("B", True)]
    assert en.proposals[0].segments == ()  # "unchanged": the template shows no text for A
    assert "".join(s.text for s in en.proposals[1].segments) == "Cr 1.6"
    assert [s.marks for s in en.current if s.marks] == [("B",)]
    assert zh.lang == "zh" and [s.marks for s in zh.current if s.marks] == [("A", "B")]


def test_side_by_side_of_unchanged_proposals_is_empty():
    current = {"answer_en": "Cr 1.4", "rubric": [], "steps": []}
    assert side_by_side(current, {"A": dict(current), "B": dict(current)}) == []


# Issue 35 (polish): a reviewer read "ReportsTAB creatinineTWO" for "Reports creatinine" → "TAB TWO": each word
# was its own <del>/<ins> pair with nothing between the deleted and the inserted word.
def test_changes_separated_by_a_space_are_one_change():
    ops = diff_text("Reports creatinine", "TAB TWO", lang="en")
    assert ops == (Op("replace", "Reports creatinine", "TAB TWO"),)
    ops = diff_text("Reports creatinine, potassium", "TAB TWO, potassium", lang="en")
    assert [op for op in ops if op.tag != "equal"] == [Op("replace", "Reports creatinine", "TAB TWO")]
    # Chinese stays character level, and both texts are still rebuilt from the ops.
    assert diff_text("甲 乙", "丙 丁", lang="zh")[1] == Op("equal", " ", " ")
    a, b = "Hold apixaban 5 mg today, recheck.", "Give warfarin 2 mg today recheck soon."
    ops = diff_text(a, b, lang="en")
    assert "".join(o.before for o in ops) == a and "".join(o.after for o in ops) == b


@pytest.mark.parametrize(
    ("before", "after", "reads"),
    [
        ("Reports creatinine", "TAB TWO", "Reports creatinine TAB TWO"),
        ("Creatinine is 1.4 today.", "Creatinine was 1.6 today.", "Creatinine is 1.4 was 1.6 today."),
        ("Hold apixaban.", "Hold apixaban and warfarin.", "Hold apixaban and warfarin."),
    ],
)
def test_rendered_diff_keeps_spaces_between_words(before, after, reads):
    html = render_to_string("annotations/_diff.html", {"d": diff_field("answer_en", before, after)})
    assert " ".join(strip_tags(html).split()) == reads


def test_rendered_chinese_diff_adds_no_space():
    html = render_to_string("annotations/_diff.html", {"d": diff_field("answer_zh", "肌酐升高", "肌酐下降")})
    assert strip_tags(html).strip() == "肌酐升高下降"  # a guard: Chinese gets no added space
