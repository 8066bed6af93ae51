"""Grammar 3 of the release's rubric items (issue 33 item 4, round 4): the forms ``bench/rubric_items_v3.py`` adds.

Where the phrasing comes from (read, never copied; every sentence, value and answer here is written for this test,
with labs and drugs of our own choosing that are in none of the generator's vocabularies):

* the release's read-turn rubric prompt (``pipeline/rubric_generator.py``): Information Lookup "value cited
  correctly, interpreted correctly" (one sentence may hold both), Clinical Reasoning "threshold applied, reasoning
  chain, recommendation, safety" ("include one item checking a dangerous recommendation is absent"), mixed turns
  relating the patient's report to the EHR;
* the release's prose Write/Update prompt (``pipeline/generate_discharge_planning.py``): "The model correctly
  orders <drug> at ≥<dose> <freq>" (a bound), "<class> (<drug> or equivalent)", "does NOT order a
  contraindicated drug";
* ``shared/formats/pab-release-semantics.md`` §3: the Chinese item is a separate machine translation of the
  English one (units and drugs translated: 毫克/分升, 国际单位/升; 回答 / 该回答 / 模型 openings).

Every form that compiles has the gold answer passing and a wrong answer failing; every judgement form stays
unscored with a reason that routes it to an LLM judge.
"""

from __future__ import annotations

import pytest

from evaluation.judges.rules import judge_check
from scenarios.rubric_compiler import attempt

CARVEDILOL = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Carvedilol",
        "dose": "6.25 mg",
        "route": "oral",
        "frequency": "BID",
        "indication": "heart failure",
    },
}
HEPARIN = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Heparin",
        "dose": "5000 units",
        "route": "subcutaneous",
        "frequency": "BID",
        "indication": "VTE prophylaxis",
    },
}
ALLOPURINOL = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Allopurinol",
        "dose": "100 mg",
        "route": "oral",
        "frequency": "daily",
        "indication": "gout",
    },
}
GOLD = {
    "en": "Creatine kinase is 320 IU/L, elevated (above the normal range of 30–200 IU/L). Vitamin B12 is 150 pg/mL, "
    "low (below the normal range). Carvedilol 6.25 mg oral BID for heart failure; no change is needed.",
    "zh": "肌酸激酶为320 IU/L，偏高（高于正常范围，30–200 IU/L）。维生素B12为150 pg/mL，偏低（低于正常范围）。"
    "卡维地洛6.25毫克口服 BID用于心力衰竭；无需调整。",
}
WRONG_VALUE = {
    "en": "Creatine kinase is 440 IU/L, elevated. Vitamin B12 is 206 pg/mL, low. Increase carvedilol to 50 mg BID; "
    "stop carvedilol if dizzy.",
    "zh": "肌酸激酶为440 IU/L，偏高。维生素B12为206 pg/mL，偏低。建议将卡维地洛增至50毫克 BID；头晕时停用卡维地洛。",
}
WRONG_STATUS = {
    "en": "Creatine kinase is 320 IU/L, normal. Vitamin B12 is 150 pg/mL, normal.",
    "zh": "肌酸激酶为320 IU/L，正常。维生素B12为150 pg/mL，正常。",
}


def _attempt(en: str, zh: str, *, task: str, writes: list[dict] | None = None):
    return attempt(text_en=en, text_zh=zh, task_type=task, gold_steps=writes or [])


def _passes(check: dict, answer: str, writes: list[dict] | None = None) -> bool:
    return judge_check(idx=0, check=check, answer=answer, writes=writes or []).passed


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        (
            "The answer correctly cites creatine kinase as 320 IU/L, above the normal range",
            "答案正确引用了肌酸激酶值为320国际单位/升，高于正常范围",
        ),
        (
            "The model accurately cites the creatine kinase of 320 IU/L as elevated",
            "回答准确地引用了肌酸激酶值320 IU/L，并指出其偏高",
        ),
        (
            "The answer cites creatine kinase as 320 IU/L (above the normal range of 30–200 IU/L)",
            "答案引用了肌酸激酶值为320 IU/L（高于正常范围30–200 IU/L）",
        ),
        (
            "The response cites vitamin B12 as 150 pg/mL, which is low",
            "该回答引用了维生素B12值为150皮克/毫升，属于偏低",
        ),
    ],
)
def test_a_value_with_its_interpretation_compiles_to_value_and_status(en, zh):
    out = _attempt(en, zh, task="IL")
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "all_of" and [c["kind"] for c in check["checks"]] == ["value_unit", "term"]
    for lang in ("en", "zh"):
        assert _passes(check, GOLD[lang]), lang
        assert not _passes(check, WRONG_VALUE[lang]), lang  # the value is wrong
        assert not _passes(check, WRONG_STATUS[lang]), lang  # the interpretation is wrong


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # a value with a justification, an advice, a date or a second value: more than value + status
        (
            "The answer cites creatine kinase as 320 IU/L and explains its clinical significance",
            "答案引用了肌酸激酶值为320 IU/L，并解释了其临床意义",
        ),
        (
            "The answer cites vitamin B12 as 150 pg/mL (low) and recommends supplementation",
            "答案引用了维生素B12值为150 pg/mL（偏低）并建议补充",
        ),
        (
            "The answer cites vitamin B12 as 150 pg/mL (low, measured 2180-01-02)",
            "答案引用了维生素B12值为150 pg/mL（偏低，2180-01-02测得）",
        ),
        (
            "The answer cites vitamin B12 as 150 pg/mL (repeat 180 pg/mL)",
            "答案引用了维生素B12值为150 pg/mL（复查180 pg/mL）",
        ),
    ],
)
def test_a_value_with_more_than_its_status_stays_unscored(en, zh):
    assert _attempt(en, zh, task="IL").compiled is None


def test_chinese_units_spelled_out_agree_with_the_english_unit():
    """国际单位/升 = IU/L, 皮克/毫升 = pg/mL: the translation states the same value, so both wordings compile alike."""
    for en, zh, unit in [
        ("The answer cites creatine kinase as 320 IU/L", "答案引用了肌酸激酶值为320国际单位/升", "IU/L"),
        ("The answer cites vitamin B12 as 150 pg/mL", "答案正确地引用了维生素B12值150皮克/毫升", "pg/mL"),
        ("The answer cites ionized calcium as 1.05 mmol/L", "答案引用了离子钙值为1.05毫摩尔/升", "mmol/L"),
    ]:
        out = _attempt(en, zh, task="IL")
        assert out.compiled is not None and out.compiled.languages == ("en", "zh"), (zh, out.explanation)
        assert out.compiled.check["unit"] == unit


@pytest.mark.parametrize(
    ("en", "zh", "forbidden_en", "forbidden_zh"),
    [
        (
            "The answer does not prescribe carvedilol 50 mg",
            "答案没有开具卡维地洛50毫克",
            "carvedilol 50 mg",
            "卡维地洛50毫克",
        ),
        (
            "The answer does not suggest discontinuing carvedilol",
            "答案未建议停用卡维地洛",
            "discontinue carvedilol",
            "停用卡维地洛",
        ),
        (
            "The answer avoids recommending a carvedilol dose increase",
            "答案避免建议增加卡维地洛剂量",
            "increase the carvedilol dose",
            "加量",
        ),
        (
            "The answer does not suggest that the patient stop carvedilol",
            "答案未建议患者停用卡维地洛",
            "stop carvedilol",
            "停用卡维地洛",
        ),
        (
            "The answer does NOT order carvedilol 50 mg BID",
            "答案未开具卡维地洛50毫克 BID",
            "carvedilol 50 mg",
            "卡维地洛50毫克",
        ),
        (
            "The model does not recommend stopping carvedilol based solely on the vitamin B12 result",
            "模型未仅因维生素B12结果而建议停用卡维地洛",
            "stopping carvedilol",
            "停用卡维地洛",
        ),
    ],
)
def test_negated_conduct_on_a_named_drug_compiles_to_must_not_recommend(en, zh, forbidden_en, forbidden_zh):
    out = _attempt(en, zh, task="CR")
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "must_not_recommend"
    assert _passes(check, GOLD["en"]) and _passes(check, GOLD["zh"])
    assert not _passes(check, f"Plan: {forbidden_en} today.")
    assert not _passes(check, f"计划：{forbidden_zh}。")


def test_a_context_clause_after_the_drug_is_no_second_claim():
    """ "does not recommend NSAIDs for the gout flare": the purpose clause says when, not what else."""
    out = _attempt("The answer does not recommend NSAIDs for the gout flare", "答案未建议使用非甾体抗炎药", task="CR")
    assert out.compiled is not None and out.compiled.check["kind"] == "must_not_recommend"
    assert not _passes(out.compiled.check, "Start ibuprofen 400 mg for the flare.")
    # a duration is not a context: "for 3 days" is part of what must not be recommended
    assert (
        _attempt("The answer does not recommend NSAIDs for 3 days", "答案未建议使用非甾体抗炎药3天", task="CR").compiled
        is None
    )


@pytest.mark.parametrize(
    ("en", "zh", "task"),
    [
        # advice against something must be given: an answer silent about it would pass a must-not check
        (
            "The answer recommends against increasing carvedilol above 6.25 mg",
            "答案建议不要将卡维地洛增至6.25毫克以上",
            "CR",
        ),
        ("The answer warns against NSAIDs", "答案警告避免使用非甾体抗炎药", "CR"),
        # negated conduct naming no drug or dose
        ("The answer does not recommend any contraindicated medication", "答案未推荐任何禁忌药物", "CR"),
        ("The answer does not order a contraindicated drug", "答案未开具禁忌药物", "WU"),
        # threshold applied, reasoning chain, recommendation, patient report (the read-turn prompt's CR/mixed items)
        (
            "The answer correctly applies the 200 IU/L creatine kinase threshold to the statin decision",
            "答案正确地将肌酸激酶200 IU/L的阈值应用于他汀类药物的决策",
            "CR",
        ),
        (
            "The answer notes that the creatine kinase of 320 IU/L is beyond the 200 IU/L cut-off",
            "答案指出肌酸激酶320 IU/L超出了200 IU/L的界值",
            "CR",
        ),
        (
            "The answer appropriately explains that the creatine kinase result bears on carvedilol dosing",
            "答案恰当地解释了肌酸激酶结果与卡维地洛剂量的关系",
            "CR",
        ),
        ("The answer recommends continuing carvedilol at the current dose", "答案建议以当前剂量继续使用卡维地洛", "CR"),
        (
            "The answer relates the patient-reported dizziness to the carvedilol dose",
            "答案将患者自述的头晕与卡维地洛剂量联系起来",
            "DG",
        ),
        # Write/Update prose: a dose bound, a class with equivalents
        ("The model correctly orders Carvedilol at ≥6.25 mg BID", "模型正确开具卡维地洛≥6.25 mg BID", "WU"),
        (
            "The answer orders Carvedilol at least 6.25 mg BID for heart failure",
            "答案开具卡维地洛至少6.25毫克 BID用于心力衰竭",
            "WU",
        ),
        (
            "The answer orders a beta blocker (Carvedilol or equivalent) for heart failure",
            "答案开具了β受体阻滞剂（卡维地洛或等效药物）用于心力衰竭",
            "WU",
        ),
    ],
)
def test_judgement_forms_stay_unscored_for_an_llm_judge(en, zh, task):
    out = _attempt(en, zh, task=task, writes=[CARVEDILOL] if task == "WU" else None)
    assert out.compiled is None, out.compiled
    assert out.reason in {
        "judgement",
        "negated conduct",
        "comparison",
        "partial",
        "several values",
        "languages disagree",
        "no pattern",
    }


def test_judgement_reasons_route_to_an_llm_judge():
    for en, zh in [
        ("The answer recommends against increasing carvedilol", "答案建议不要增加卡维地洛剂量"),
        ("The answer explains why the dose needs no change", "答案解释了剂量无需调整的原因"),
    ]:
        out = _attempt(en, zh, task="CR")
        assert out.compiled is None and out.reason == "judgement"
        assert "LLM judge" in out.explanation


@pytest.mark.parametrize(
    ("en", "zh", "write", "params"),
    [
        # the prose prompt's subject "The model", ZH 模型/回答 openings, frequencies translated
        (
            "The model correctly orders Carvedilol 6.25 mg BID for heart failure",
            "模型正确开具卡维地洛6.25毫克 每日两次用于心力衰竭",
            CARVEDILOL,
            {"medication", "dose", "frequency", "indication"},
        ),
        # a route word inside the Chinese indication (静脉 of 静脉血栓栓塞预防) is part of the disease name
        (
            "The answer orders Heparin at 5000 units BID for VTE prophylaxis",
            "回答开具了肝素5000单位 BID，用于静脉血栓栓塞预防",
            HEPARIN,
            {"medication", "dose", "frequency", "indication"},
        ),
        # "gives <drug> <route> <freq>", ZH 口服给予<药> …, a drug the lexicon does not know
        (
            "The answer gives Allopurinol oral daily",
            "答案口服给予别嘌醇 每天一次",
            ALLOPURINOL,
            {"medication", "route", "frequency"},
        ),
        (
            "The answer specifies oral administration twice daily",
            "答案指定口服给药，每日两次",
            CARVEDILOL,
            {"route", "frequency"},
        ),
    ],
)
def test_write_update_prose_variants_compile_against_the_gold_call(en, zh, write, params):
    out = _attempt(en, zh, task="WU", writes=[write])
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "write_call" and set(check["params"]) == params
    assert _passes(check, "", writes=[write])
    args = dict(write["arguments"])
    wrong = {**write, "arguments": {**args, "route": "IV", "dose": "999 mg", "frequency": "TID", "medication": "X"}}
    assert not _passes(check, "", writes=[wrong])
