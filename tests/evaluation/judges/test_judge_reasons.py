"""Judge reasons: the rules judge stores the same English text as before; the UI shows it in its language.

Every reason shape the rules judge (and the release judge's harness) writes is produced here by the real
checks; the ``zh`` tests read the Chinese catalogue (locale/zh_Hans).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from django.utils import translation

from evaluation.dataset import EvalRubric
from evaluation.judges import is_model_judge
from evaluation.judges.release import parse_scores
from evaluation.judges.rules import check_write_call, judge_check, judge_item
from evaluation.templatetags.results_i18n import judge_reason
from scenarios.rubric_match import check_must_not_recommend, check_term, check_value_unit
from scenarios.rubric_reasons import TEMPLATES, display_reason, params_display, parse_reason, reason

WRITES = [{"tool": "MedicationRequest.create", "arguments": {"medication": "Apixaban", "dose": "hold"}}]
MED = "MedicationRequest.create"
TWO_VALUES = {
    "kind": "all_of",
    "checks": [
        {"kind": "value_unit", "value": 3.2, "unit": "mEq/L"},
        {"kind": "value_unit", "value": 1.5, "unit": "mg/dL"},
    ],
}


def _item(**fields) -> EvalRubric:
    return EvalRubric(idx=2, text_en="item", text_zh="条目", is_safety=False, machine_check=None, **fields)


def _compiled() -> str:
    check = {"kind": "term", "en": ["hyperkalemia"], "zh": ["高钾血症"]}
    item = _item(compiled_check=check, compiled_rule="term/entity", compiled_state="suggested")
    return judge_item(item=item, answer="Risk of hyperkalemia.", writes=[]).reason


# (key, the stored text a real check writes, that text as it was stored before the reason module)
SHAPES = [
    ("no_form", lambda: judge_item(item=_item(), answer="x", writes=[]).reason, "no machine-checkable form"),
    (
        "compiled_removed",
        lambda: (
            judge_item(
                item=_item(compiled_check={"kind": "term", "en": ["a"], "zh": []}, compiled_state="removed"),
                answer="a",
                writes=[],
            ).reason
        ),
        "compiled form removed by the reviewer",
    ),
    ("compiled", _compiled, "compiled (term/entity): mentions “hyperkalemia”"),
    (
        "found_in_sentence",
        lambda: check_value_unit(answer="Potassium (mEq/L): 5.4, 5.3.", value=5.3, unit="mEq/L")[1],
        "found 5.3 with mEq/L in the same sentence",
    ),
    (
        "found_with_unit",
        lambda: check_value_unit(answer="Creatinine 1.42 mg/dL", value=1.4, unit="mg/dL", tolerance=0.05)[1],
        "found 1.42 mg/dL",
    ),
    ("found", lambda: check_value_unit(answer="INR 2.5 today", value=2.5, unit="")[1], "found 2.5"),
    (
        "value_missing",
        lambda: check_value_unit(answer="no value", value=1.4, unit="mg/dL", tolerance=0.05)[1],
        "no 1.4 mg/dL (±0.05) in the answer",
    ),
    (
        "mentions",
        lambda: check_term(answer="Risk of 高钾血症", phrases=["hyperkalemia", "高钾血症"])[1],
        "mentions “高钾血症”",
    ),
    (
        "mentions_none",
        lambda: check_term(answer="normal", phrases=["hyperkalemia", "高钾血症"])[1],
        "none of “hyperkalemia”, “高钾血症” in the answer",
    ),
    ("no_call", lambda: check_write_call(writes=[], tool="Flag.create", params={})[1], "no Flag.create call was made"),
    (
        "called_any",
        lambda: check_write_call(writes=WRITES, tool=MED, params={})[1],
        f"{MED} called with any parameters",
    ),
    (
        "called_with",
        lambda: check_write_call(writes=WRITES, tool=MED, params={"dose": "hold"})[1],
        f"{MED} called with dose = “hold”",
    ),
    (
        "called_not_with",
        lambda: check_write_call(writes=WRITES, tool=MED, params={"dose": "2.5 mg", "frequency": None})[1],
        f"{MED} called, but not with dose = “2.5 mg”; frequency = None",
    ),
    (
        "recommends",
        lambda: check_must_not_recommend(answer="Give ibuprofen.", phrases=["ibuprofen"])[1],
        "recommends “ibuprofen”",
    ),
    (
        "recommends_none",
        lambda: check_must_not_recommend(answer="Avoid ibuprofen.", phrases=["ibuprofen"])[1],
        "does not recommend any of the listed actions",
    ),
    # An item stating several values ("cites potassium as 3.2 mEq/L and magnesium as 1.5 mg/dL"): every part holds,
    # or the first part that fails is named.
    (
        "all_of_held",
        lambda: (
            judge_check(
                idx=0, check=TWO_VALUES, answer="Potassium 3.2 mEq/L and magnesium 1.5 mg/dL.", writes=[]
            ).reason
        ),
        "all 2 parts hold: found 3.2 mEq/L · found 1.5 mg/dL",
    ),
    (
        "all_of_failed",
        lambda: judge_check(idx=0, check=TWO_VALUES, answer="Potassium 3.2 mEq/L.", writes=[]).reason,
        "part 2 of 2 fails: no 1.5 mg/dL (±0) in the answer",
    ),
    # The release judge's harness, when the model returned fewer scores than items.
    (
        "no_score",
        lambda: parse_scores(content='{"scores": []}', turn=SimpleNamespace(rubric=[_item()]))[0].reason,
        "no score returned: counted as 0",
    ),
]
KEYS = [key for key, _make, _stored in SHAPES]


def test_every_template_is_a_shape_a_judge_writes():
    assert set(TEMPLATES) == set(KEYS)


@pytest.mark.parametrize(("key", "make", "stored"), SHAPES, ids=KEYS)
def test_stored_text_is_unchanged_and_read_back(key, make, stored):
    text = make()
    assert text == stored and type(text) is str  # exports, caches and released numbers depend on it
    assert parse_reason(text)[0] == key
    assert reason(key, **parse_reason(text)[1]) == text


@pytest.mark.parametrize(("key", "make", "stored"), SHAPES, ids=KEYS)
def test_english_ui_shows_the_stored_text_without_python_values(key, make, stored):
    with translation.override("en"):
        shown = display_reason(make())
    assert shown == stored.replace("frequency = None", "frequency = —")
    assert not re.search(r"\bNone\b|\[|\]|\{|\}", shown)


@pytest.mark.parametrize(("key", "make", "stored"), SHAPES, ids=KEYS)
def test_chinese_ui_shows_every_shape_in_chinese(key, make, stored):  # needs the zh catalogue
    text = make()
    with translation.override("zh-hans"):
        shown = judge_reason(text)
    assert re.search(r"[\u4e00-\u9fff]", shown), shown
    english_words = set(re.findall(r"[a-z]{2,}", re.sub(r"%\(\w+\)s", " ", TEMPLATES[key])))
    assert not english_words & set(re.findall(r"[a-z]{2,}", shown.replace(MED, "").replace("Flag.create", ""))), shown
    # What the reason is about (phrases, numbers, units, tools) is kept as stored.
    for value in re.findall(r"“[^”]*”|\d+(?:\.\d+)?|mg/dL|mEq/L|\w+\.create", text):
        assert value in shown, (value, shown)


def test_chinese_reasons_read_as_sentences():  # needs the zh catalogue
    with translation.override("zh-hans"):
        assert judge_reason("no 1.4 mg/dL (±0.05) in the answer") == "回答中没有 1.4 mg/dL（±0.05）"
        assert judge_reason("compiled (term/entity): mentions “高钾血症”") == "编译检查（术语/实体）：提到了 “高钾血症”"
        assert judge_reason("no score returned: counted as 0") == "未返回评分：按 0 计"
        assert judge_reason(f"{MED} called, but not with dose = None") == f"已调用 {MED}，但参数不是 dose = —"


def test_values_are_text_not_python_reprs():
    stored = "Flag.create called, but not with codes = ['a', 'b']; extra = {'k': 1}; urgent = True; note = “x; y”"
    shown = params_display(stored.split(" not with ")[1])
    assert shown == "codes = “a”, “b”; extra = k: 1; urgent = yes; note = “x; y”"
    assert display_reason(stored) == f"Flag.create called, but not with {shown}"
    # A unitless value leaves two spaces in the stored text; the screen shows one.
    assert display_reason(check_value_unit(answer="x", value=5, unit="")[1]) == "no 5 (±0) in the answer"


def test_unknown_shapes_and_model_text_are_shown_as_they_are():
    llm_text = "The answer states the potassium but not the trend."
    assert parse_reason(llm_text) is None and judge_reason(llm_text) == llm_text
    assert judge_reason(None) == "" and judge_reason("") == ""
    # An LLM judge's reason is never reworded, even when it happens to look like a rules shape.
    with translation.override("zh-hans"):
        assert judge_reason("found 5.4", "gpt-4o") == "found 5.4"
    assert is_model_judge("gpt-4o") and not is_model_judge("rules") and not is_model_judge("rules (compiled)")


def test_calibration_names_the_compiled_rules_judge_as_the_judges_module_does():
    from evaluation.calibration.compiled import COMPILED_JUDGE

    assert not is_model_judge(COMPILED_JUDGE)
