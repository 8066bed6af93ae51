"""Rubric compiler, issue 33 round 3: several values in one item, units by their form, drugs the lexicon does not know.

Each construction compiles in both languages, the gold answer passes the check and a wrong-value answer fails it;
each has a case that must NOT compile. Where the phrasing comes from:

* the release's read-turn rubric prompt (``pipeline/rubric_generator.py``): Data Gathering "each value cited" —
  one item may cite two values ("cites <lab> as <v> <unit> and <lab> as <v> <unit>"); the semantics file
  (``shared/formats/pab-release-semantics.md``) §3: "The answer correctly cites <lab> as <v> <unit>", the Chinese
  item a translation of the English one (so both must state the same values);
* semantics file §3: ZH items "keep BID" (a dose with its frequency: "cites the <drug> dose as <dose> <freq>",
  the release's compact order lines "5mg PO/NG"); both the dose and the frequency are the item;
* semantics file §3 "…cites <lab> as <v> <unit>" with any lab the EHR charts, hence units no table lists (fL,
  uIU/mL);
* semantics file §3 "The answer orders <drug> at <dose> <freq> for <indication>" / "…does NOT order
  <contraindicated drug/dose>", ZH 开具<药><剂量>…用于<适应证>; the prompt's "concludes no metformin adjustment is
  needed"; "…does not recommend <unsafe action>" (ZH 不建议停用<药>) — with drugs the lexicon does not know.

Labs, drugs, values and sentences are chosen for this test (none is in the dev or held-out vocabularies).
"""

from __future__ import annotations

import pytest

from annotations.templatetags.review_i18n import check_sentence
from evaluation.judges.rules import judge_check
from scenarios.rubric_checks import validate_rubric_check
from scenarios.rubric_compiler import attempt

GOLD = {
    "en": "Potassium is 3.2 mEq/L and magnesium 1.5 mg/dL, both low. MCV is 78 fL (below 82–98 fL); TSH 0.2 uIU/mL. "
    "Digoxin 0.125 mg PO daily continues for atrial flutter; no dose adjustment is needed.",
    "zh": "血钾3.2 mEq/L，血镁1.5 mg/dL，均偏低。平均红细胞体积78 fL（低于82–98 fL）；促甲状腺激素0.2 uIU/mL。"
    "地高辛0.125毫克口服每日一次，继续用于心房扑动；无需调整剂量。",
}
ONE_WRONG = {
    "en": "Potassium is 3.2 mEq/L and magnesium 2.1 mg/dL. MCV is 91 fL; TSH 1.4 uIU/mL. "
    "Stop digoxin; digoxin 0.25 mg.",
    "zh": "血钾3.2 mEq/L，血镁2.1 mg/dL。平均红细胞体积91 fL；促甲状腺激素1.4 uIU/mL。停用地高辛；地高辛0.25毫克。",
}
DIGOXIN = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Digoxin",
        "dose": "0.125 mg",
        "route": "oral",
        "frequency": "daily",
        "indication": "heart failure with reduced ejection fraction",
    },
}


def _compile(en: str, zh: str, *, task: str = "DG", writes: list | None = None):
    return attempt(text_en=en, text_zh=zh, task_type=task, gold_steps=writes or [])


def _passes(check: dict, answer: str, writes: list | None = None) -> bool:
    return bool(judge_check(idx=0, check=check, answer=answer, writes=writes or []).passed)


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        (
            "The answer correctly cites potassium as 3.2 mEq/L and magnesium as 1.5 mg/dL",
            "答案正确引用了血钾值为3.2 mEq/L，血镁值为1.5 mg/dL",
        ),
        (
            "The answer reports the potassium level of 3.2 mEq/L, and the magnesium level of 1.5 mg/dL",
            "答案引用了血钾3.2 mEq/L和血镁1.5 mg/dL",
        ),
    ],
)
def test_an_item_citing_two_values_compiles_to_a_check_of_both(en, zh):
    out = _compile(en, zh)
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "all_of" and out.compiled.languages == ("en", "zh")
    assert [(c["value"], c["unit"]) for c in check["checks"]] == [(3.2, "mEq/L"), (1.5, "mg/dL")]
    assert _passes(check, GOLD["en"]) and _passes(check, GOLD["zh"])
    # one of the two values wrong: the item fails (a check of some of its values is not the item)
    assert not _passes(check, ONE_WRONG["en"]) and not _passes(check, ONE_WRONG["zh"])
    verdict = judge_check(idx=0, check=check, answer=ONE_WRONG["en"], writes=[])
    assert verdict.reason.startswith("part 2 of 2 fails: no 1.5 mg/dL")


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # a part that is no stated value: a relation, a comparison, a drug with its frequency
        (
            "The answer correctly cites potassium as 3.2 mEq/L and explains the magnesium trend",
            "答案正确引用了血钾值为3.2 mEq/L，并解释了血镁趋势",
        ),
        (
            "The answer cites potassium as 3.2 mEq/L and magnesium above 2.0 mg/dL",
            "答案引用了血钾值为3.2 mEq/L，血镁高于2.0 mg/dL",
        ),
        (
            "The answer cites potassium as 3.2 mEq/L and digoxin 0.125 mg daily",
            "答案引用了血钾值为3.2 mEq/L和地高辛0.125毫克每日一次",
        ),
        # the translation states another value: the wordings disagree
        (
            "The answer cites potassium as 3.2 mEq/L and magnesium as 1.5 mg/dL",
            "答案引用了血钾值为3.2 mEq/L，血镁值为1.6 mg/dL",
        ),
        # relating two values is reasoning, whatever values it names
        ("The answer relates potassium 3.2 mEq/L to magnesium 1.5 mg/dL", "答案将血钾3.2 mEq/L与血镁1.5 mg/dL联系起来"),
    ],
)
def test_several_values_with_a_part_no_value_check_covers_stay_unscored(en, zh):
    assert _compile(en, zh).compiled is None


@pytest.mark.parametrize(
    ("en", "zh", "value", "unit"),
    [
        (
            "The answer accurately cites mean corpuscular volume as 78 fL",
            "答案准确引用了平均红细胞体积值为78 fL",
            78,
            "fL",
        ),
        (
            "The answer states that the latest thyroid stimulating hormone is 0.2 uIU/mL",
            "答案引用了促甲状腺激素值0.2 uIU/mL",
            0.2,
            "uIU/mL",
        ),
    ],
)
def test_a_unit_no_table_lists_is_a_unit_by_its_form(en, zh, value, unit):
    out = _compile(en, zh, task="IL")
    assert out.compiled is not None, out.explanation
    assert out.compiled.check["value"] == value and out.compiled.check["unit"] == unit
    assert _passes(out.compiled.check, GOLD["en"]) and _passes(out.compiled.check, GOLD["zh"])
    assert not _passes(out.compiled.check, ONE_WRONG["en"]) and not _passes(out.compiled.check, ONE_WRONG["zh"])


def test_a_number_followed_by_a_word_is_still_no_value_with_a_unit():
    out = _compile("The answer states the course as 5 days", "答案说明疗程为5天", task="CR")
    assert out.compiled is None


def test_a_chinese_write_item_names_a_drug_the_lexicon_does_not_know_in_its_drug_slot():
    en = "The answer orders Digoxin at 0.125 mg daily for heart failure with reduced ejection fraction"
    zh = "答案开具地高辛0.125毫克 每日一次用于射血分数降低的心力衰竭"
    out = _compile(en, zh, task="WU", writes=[DIGOXIN])
    assert out.compiled is not None, out.explanation
    assert out.compiled.languages == ("en", "zh")
    assert out.compiled.check["params"] == {
        "medication": "Digoxin",
        "dose": "0.125 mg",
        "frequency": "daily",
        "indication": "heart failure with reduced ejection fraction",
    }
    assert _passes(out.compiled.check, "", [DIGOXIN])
    wrong = {**DIGOXIN, "arguments": {**DIGOXIN["arguments"], "dose": "0.25 mg"}}
    assert not _passes(out.compiled.check, "", [wrong])


@pytest.mark.parametrize(
    "zh",
    [
        "答案开具强心苷类（地高辛或等效药物）0.125毫克 每日一次用于射血分数降低的心力衰竭",  # a class "or equivalent"
        "答案开具阿哌沙班0.125毫克 每日一次用于射血分数降低的心力衰竭",  # another drug the lexicon knows
        "答案开具地高辛0.125毫克 每日一次用于心力衰竭和心房颤动",  # two indications
    ],
)
def test_a_chinese_write_item_saying_more_or_another_drug_is_not_compiled(zh):
    en = "The answer orders Digoxin at 0.125 mg daily for heart failure with reduced ejection fraction"
    assert _compile(en, zh, task="WU", writes=[DIGOXIN]).compiled is None


@pytest.mark.parametrize(
    ("en", "zh", "task"),
    [
        ("The answer does NOT order digoxin 0.25 mg", "答案未开具地高辛0.25毫克", "WU"),
        ("The answer does not recommend stopping digoxin", "答案不建议停用地高辛", "CR"),
    ],
)
def test_negated_items_on_a_drug_the_lexicon_does_not_know(en, zh, task):
    out = _compile(en, zh, task=task, writes=[DIGOXIN] if task == "WU" else [])
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "must_not_recommend" and check["en"] and check["zh"]
    assert _passes(check, GOLD["en"]) and _passes(check, GOLD["zh"])
    assert not _passes(check, ONE_WRONG["en"]) and not _passes(check, ONE_WRONG["zh"])


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        ("The answer does NOT order a higher dose 0.25 mg", "答案未开具更高剂量0.25毫克"),
        ("The answer does not recommend stopping the anticoagulation plan abruptly", "答案不建议突然停止抗凝计划"),
    ],
)
def test_negated_items_on_no_plain_drug_name_stay_unscored(en, zh):
    assert _compile(en, zh, task="CR").compiled is None


def test_the_no_change_conclusion_on_a_drug_the_lexicon_does_not_know():
    en = "The answer correctly concludes that no digoxin dose adjustment is needed"
    out = _compile(en, "答案正确得出无需调整地高辛剂量的结论", task="CR")
    assert out.compiled is not None and out.compiled.rule == "term/no_dose_change"
    assert _passes(out.compiled.check, GOLD["en"]) and _passes(out.compiled.check, GOLD["zh"])
    # more than one drug's dose (or a reason) in the slot: more than the check
    two = _compile(
        "The answer concludes that no digoxin or amiodarone dose adjustment is needed",
        "答案得出无需调整地高辛或胺碘酮剂量的结论",
        task="CR",
    )
    assert two.compiled is None


def test_all_of_checks_are_validated_and_shown():
    part = {"kind": "value_unit", "value": 3.2, "unit": "mEq/L", "tolerance": 0.05}
    validate_rubric_check({"kind": "all_of", "checks": [part, {**part, "value": 1.5, "unit": "mg/dL"}]})
    for bad in (
        {"kind": "all_of", "checks": [part]},  # one part is no conjunction
        {"kind": "all_of", "checks": [part, {"kind": "all_of", "checks": [part, part]}]},  # no nesting
        {"kind": "all_of", "checks": [part, {"kind": "value_unit", "value": "x", "unit": ""}]},  # an invalid part
    ):
        with pytest.raises(ValueError, match="all_of"):
            validate_rubric_check(bad)
    shown = check_sentence({"kind": "all_of", "checks": [part, {**part, "value": 1.5, "unit": "mg/dL"}]})
    assert "3.2 mEq/L" in shown and "1.5 mg/dL" in shown


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        ("The answer correctly cites the digoxin dose as 0.125 mg BID", "答案正确引用了地高辛剂量为0.125毫克 BID"),
        ("The answer states digoxin as 0.125 mg twice daily", "答案引用了地高辛为0.125毫克每日两次"),
    ],
)
def test_a_dose_with_its_frequency_checks_both(en, zh):
    out = _compile(en, zh)
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "all_of" and out.compiled.rule == "all_of/dose_frequency"
    for answer in ("Digoxin 0.125 mg BID is active.", "地高辛0.125毫克BID。", "digoxin 0.125 mg twice daily"):
        assert _passes(check, answer), answer
    for answer in ("Digoxin 0.25 mg BID.", "Digoxin 0.125 mg daily; comorbidities noted.", "地高辛0.125毫克每日一次"):
        assert not _passes(check, answer), answer


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # "daily" is inside "twice daily": no check tells them apart, so the item stays with a reader
        ("The answer cites the digoxin dose as 0.125 mg daily", "答案引用了地高辛剂量为0.125毫克每日一次"),
        # more than the dose and frequency
        (
            "The answer cites the digoxin dose as 0.125 mg BID and explains it",
            "答案引用了地高辛剂量为0.125毫克 BID并解释",
        ),
        # the translation states another frequency
        ("The answer cites the digoxin dose as 0.125 mg BID", "答案引用了地高辛剂量为0.125毫克每日三次"),
    ],
)
def test_a_dose_with_a_frequency_no_check_can_hold_stays_unscored(en, zh):
    assert _compile(en, zh).compiled is None
