from annotations.diffs import Op, diff_content, diff_text, tokens


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
