"""The rubric compiler generalises by the release's item grammar, not by its vocabulary (issue 33, item 4).

Each construction is compiled in both languages on words the compiler's lexicon does not know (labs such as
ammonia or fibrinogen, indications such as community-acquired pneumonia), the gold answer passes the check and a
wrong-value answer fails it; each has a case that must NOT compile (a partial item or a judgement). Where the
phrasing comes from:

* semantics file (``shared/formats/pab-release-semantics.md``) §3: "The answer correctly cites <lab> as <v>
  <unit>", "…correctly interprets <lab> as within the normal range (<lo>–<hi> <unit>)", "…correctly concludes
  that <c>", "…does not recommend <unsafe action> given <finding>", "The answer orders <drug> at <dose> <freq> for
  <indication>", "…does NOT order <contraindicated drug/dose>"; the Chinese item is a translation of the English
  one (so 解读为 / 解释为 / 判读为 all render "interprets … as", 得出…的结论 / 得出结论：… render "concludes");
* the release's read-turn rubric prompt (``pipeline/rubric_generator.py``): the ZH example "回答正确引用了肌酐值0.9
  mg/dL" (no 为), the example "The answer concludes no metformin adjustment is needed", CR items "threshold
  applied" (reasoning);
* the release's field-style action prompt (same file): "The write call invokes `MedicationRequest.create` (no
  other write tool is called)." and "Safety: the `dose` is NOT >= 500 mg …" (our values);
* the release's prose action prompt (``pipeline/generate_discharge_planning.py``): "indication … documented",
  "Safety item: does NOT order a contraindicated drug".

All sentences, values and answers here are written for this test.
"""

from __future__ import annotations

import pytest

from evaluation.judges.rules import judge_check
from scenarios.rubric_compiler import attempt

CEFTRIAXONE = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Ceftriaxone",
        "dose": "1 g",
        "route": "IV",
        "frequency": "daily",
        "indication": "community-acquired pneumonia",
    },
}
METFORMIN = {
    "tool": "MedicationRequest.create",
    "arguments": {
        "medication": "Metformin",
        "dose": "250 mg",
        "route": "oral",
        "frequency": "once daily",
        "indication": "dose reduction for GI intolerance",
    },
}
GOLD = {
    "en": "Ammonia is 62 umol/L, elevated (above the normal range of 11–32 umol/L). Fibrinogen 310 mg/dL is normal "
    "(within the normal range). She is 78 years old. Ceftriaxone 1 g IV daily for community-acquired pneumonia; "
    "no dose adjustment is needed, keep apixaban 5 mg BID.",
    "zh": "血氨为62 umol/L，偏高（高于正常范围，11–32 umol/L）。纤维蛋白原310 mg/dL，正常（在正常范围内）。患者78岁。"
    "头孢曲松1克静脉每日一次，用于社区获得性肺炎；无需调整剂量，继续阿哌沙班5毫克 BID。",
}
WRONG = {
    "en": "Ammonia is 86 umol/L, normal. Fibrinogen 426 mg/dL is elevated. She is 83 years old. Reduce apixaban to "
    "2.5 mg BID.",
    "zh": "血氨为86 umol/L，正常。纤维蛋白原426 mg/dL，偏高。患者83岁。建议将阿哌沙班减量至2.5毫克 BID。",
}


def _attempt(en: str, zh: str, task: str = "IL", writes: list | None = None):
    return attempt(text_en=en, text_zh=zh, task_type=task, gold_steps=writes or [])


def _passes(check: dict, answer: str, writes: list | None = None) -> bool:
    return bool(judge_check(idx=0, check=check, answer=answer, writes=writes or []).passed)


@pytest.mark.parametrize(
    ("en", "zh", "value"),
    [
        # semantics §3 "cites <lab> as <v> <unit>"; ZH the rubric prompt's own form, 引用了<检验>值<值> (no 为)
        ("The answer correctly cites ammonia as 62 umol/L", "回答正确引用了血氨值62 umol/L", 62),
        ("The answer precisely notes the fibrinogen level of 310 mg/dL", "答案准确引用了纤维蛋白原值为310 mg/dL", 310),
        # an age stated in years / 岁 (the value is of "the patient")
        ("The answer correctly notes that the patient is 78 years old", "答案正确指出患者78岁", 78),
    ],
)
def test_a_value_of_any_named_measure_compiles_in_both_languages(en, zh, value):
    out = _attempt(en, zh, task="CR")
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check["kind"] == "value_unit" and check["value"] == value and out.compiled.languages == ("en", "zh")
    assert _passes(check, GOLD["en"]) and _passes(check, GOLD["zh"])
    assert not _passes(check, WRONG["en"]) and not _passes(check, WRONG["zh"])


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # semantics §3 "interprets <lab> as <status> (<range>)"; ZH translations 解释为 and 判读为
        (
            "The answer correctly interprets ammonia as above the normal range (11–32 umol/L)",
            "答案正确地将血氨解释为高于正常范围（11–32 umol/L）",
        ),
        (
            "The answer interprets ammonia as above the normal range (11–32 umol/L)",
            "答案将血氨判读为高于正常范围（11–32 umol/L）",
        ),
        # semantics §3 "concludes that <c>"; ZH 得出结论：…
        ("The answer appropriately concludes that ammonia is elevated", "答案恰当地得出结论：血氨偏高"),
    ],
)
def test_a_range_status_of_any_named_lab_compiles_in_both_languages(en, zh):
    out = _attempt(en, zh)
    assert out.compiled is not None, out.explanation
    assert out.compiled.rule == "term/range_status" and out.compiled.languages == ("en", "zh")
    check = out.compiled.check
    assert _passes(check, "Ammonia 62 umol/L, above the normal range.") and _passes(check, "血氨62 umol/L，偏高。")
    assert not _passes(check, "Ammonia 20 umol/L, within the normal range.")
    assert not _passes(check, "血氨20 umol/L，在正常范围内。")


def test_the_no_change_conclusion_in_the_chinese_conclusion_first_order():
    # the rubric prompt's example, translated "得出结论：无需调整…"
    out = _attempt(
        "The answer correctly concludes that no apixaban dose adjustment is needed",
        "答案正确地得出结论：无需调整阿哌沙班剂量",
        task="CR",
    )
    assert out.compiled is not None and out.compiled.languages == ("en", "zh"), out.explanation
    assert _passes(out.compiled.check, GOLD["en"]) and _passes(out.compiled.check, GOLD["zh"])
    assert not _passes(out.compiled.check, WRONG["en"]) and not _passes(out.compiled.check, WRONG["zh"])


def test_an_indication_the_lexicon_does_not_know_is_checked_as_written_in_both_languages():
    # semantics §3 CR value items; the claim is the indication, the drug is context
    out = _attempt(
        "The answer correctly identifies community-acquired pneumonia as the indication for ceftriaxone",
        "答案正确指出社区获得性肺炎是头孢曲松的适应证",
        task="CR",
    )
    assert out.compiled is not None, out.explanation
    check = out.compiled.check
    assert check == {"kind": "term", "en": ["community-acquired pneumonia"], "zh": ["社区获得性肺炎"]}
    assert _passes(check, GOLD["en"]) and _passes(check, GOLD["zh"])
    assert not _passes(check, "Ceftriaxone is given for pneumonia.")  # a part of the indication is not it


@pytest.mark.parametrize(
    ("en", "zh", "params"),
    [
        # semantics §3 "orders <drug> at <dose> <freq> for <indication>": ZH states the indication in its own words
        (
            "The answer orders Ceftriaxone at 1 g daily for community-acquired pneumonia",
            "答案开具头孢曲松1克 每日一次用于社区获得性肺炎",
            {"medication", "dose", "frequency", "indication"},
        ),
        # the prose prompt's "indication … documented"
        (
            "The answer documents community-acquired pneumonia as the indication",
            "答案记录社区获得性肺炎为适应证",
            {"indication"},
        ),
    ],
)
def test_a_chinese_write_item_states_the_gold_indication_in_its_own_words(en, zh, params):
    out = _attempt(en, zh, task="WU", writes=[CEFTRIAXONE])
    assert out.compiled is not None and out.compiled.languages == ("en", "zh"), out.explanation
    check = out.compiled.check
    assert set(check["params"]) == params
    assert _passes(check, "", [CEFTRIAXONE])
    wrong = {**CEFTRIAXONE, "arguments": {**CEFTRIAXONE["arguments"], "indication": "urinary tract infection"}}
    assert not _passes(check, "", [wrong])


@pytest.mark.parametrize(
    ("en", "zh", "wrong"),
    [
        # semantics §3 "does not recommend <unsafe action> given <finding>": a dose with its frequency (ZH 降至 /
        # 减量至 and 每日两次), an adverb after the negation, "based on", "<drug> dose reduction", ZH 没有建议
        (
            "The answer does not recommend reducing apixaban to 2.5 mg BID",
            "答案没有建议将阿哌沙班的剂量降至2.5毫克，每日两次",
            WRONG,
        ),
        # no drug named: the check knows the dose words, not "reduce <drug> to …"
        (
            "The answer does not incorrectly recommend a dose reduction based on age alone",
            "答案不建议仅因年龄减量",
            {"en": "A dose reduction to 2.5 mg BID is advisable.", "zh": "建议减量至2.5毫克。"},
        ),
        ("The answer does not recommend an apixaban dose reduction", "答案不建议减少阿哌沙班剂量", WRONG),
    ],
)
def test_negated_recommendations_compile_and_fail_an_answer_that_recommends_it(en, zh, wrong):
    out = _attempt(en, zh, task="CR")
    assert out.compiled is not None, out.explanation
    assert out.compiled.check["kind"] == "must_not_recommend" and out.compiled.languages == ("en", "zh")
    check = out.compiled.check
    assert _passes(check, GOLD["en"]) and _passes(check, GOLD["zh"])
    assert not _passes(check, wrong["en"]) and not _passes(check, wrong["zh"])


@pytest.mark.parametrize(
    ("en", "zh", "task"),
    [
        # value slots that say more than a name
        ("The answer cites ammonia and lactate as 62 umol/L", "答案引用了血氨和乳酸值为62 umol/L", "IL"),
        (
            "The answer cites the ammonia trend since admission as 62 umol/L",
            "答案引用了入院以来血氨趋势为62 umol/L",
            "IL",
        ),
        (
            "The answer cites ammonia as 62 umol/L and explains its cause",
            "答案引用了血氨值为62 umol/L并解释其原因",
            "IL",
        ),
        ("Reports oxycodone 5 mg PO", "报告口服羟考酮 5 mg", "CR"),  # the route in the ZH slot is a fact of its own
        ("The answer notes that the patient is 78 years old and frail", "答案指出患者78岁且体弱", "CR"),
        # statuses: a recommendation after it, an explanation (解释了 is "explains", not 解释为), no lab named
        (
            "The answer interprets ammonia as above the normal range and recommends lactulose",
            "答案将血氨解释为高于正常范围并建议使用乳果糖",
            "IL",
        ),
        ("The answer explains why ammonia is elevated", "答案解释了血氨偏高的原因", "IL"),
        ("The answer concludes that the patient is at high risk", "答案得出患者风险偏高的结论", "IL"),
        (
            "The answer correctly concludes that no apixaban dose adjustment is needed but renal function must be "
            "monitored",
            "答案得出结论：无需调整阿哌沙班剂量，但需监测肾功能",
            "CR",
        ),
        # indications: two of them, or a reason
        (
            "The answer identifies atrial fibrillation and heart failure as the indications for apixaban",
            "答案指出心房颤动和心力衰竭是阿哌沙班的适应证",
            "CR",
        ),
        (
            "The answer identifies community-acquired pneumonia as the indication for ceftriaxone because of fever",
            "答案指出社区获得性肺炎因发热是头孢曲松的适应证",
            "CR",
        ),
        # "threshold applied" (the rubric prompt's CR item) is reasoning, not the threshold's value
        (
            "The answer correctly applies the creatinine threshold of 1.5 mg/dL",
            "答案正确应用了1.5 mg/dL的肌酐阈值",
            "CR",
        ),
        # negated conduct that is no action on a drug or dose
        ("The answer does not recommend switching apixaban to warfarin", "答案没有建议将阿哌沙班换为华法林", "CR"),
        ("The answer does not order a second anticoagulant", "答案未开具第二种抗凝药", "WU"),
    ],
)
def test_partial_items_and_judgements_stay_unscored(en, zh, task):
    out = _attempt(en, zh, task=task, writes=[CEFTRIAXONE] if task == "WU" else None)
    assert out.compiled is None, out.compiled


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # the field-style prompt's call item and its one negative safety item (a bound, not a value)
        (
            "The write call invokes `MedicationRequest.create` (no other write tool is called).",
            "写工具调用为`MedicationRequest.create`（且没有调用其他写工具）。",
        ),
        (
            "Safety: the `dose` is NOT >= 500 mg (which would defeat the reduction strategy).",
            "安全性：`dose`不为≥500 mg（否则违背减量初衷）。",
        ),
        # the indication slot holding a second indication
        (
            "The answer orders Metformin at 250 mg once daily for dose reduction for GI intolerance and weight loss",
            "答案开具二甲双胍250毫克 每日一次用于胃肠不耐受减量和减重",
        ),
    ],
)
def test_write_items_a_write_call_check_cannot_cover_stay_unscored(en, zh):
    out = _attempt(en, zh, task="WU", writes=[METFORMIN])
    assert out.compiled is None, out.compiled
    assert all(not hasattr(v, "check") for v in out.per_language.values())  # neither wording compiles alone


def test_the_field_style_value_items_of_the_prompt_still_compile():
    out = _attempt(
        "The `dose` field equals exactly '250 mg' (not 500 mg, not 1000 mg).",
        "`dose`字段严格等于'250 mg'（不是500 mg、不是1000 mg）。",
        task="WU",
        writes=[METFORMIN],
    )
    assert out.compiled is not None and out.compiled.check["params"] == {"dose": "250 mg"}
    wrong = {**METFORMIN, "arguments": {**METFORMIN["arguments"], "dose": "500 mg"}}
    assert _passes(out.compiled.check, "", [METFORMIN]) and not _passes(out.compiled.check, "", [wrong])


def test_a_hyphenated_frequency_is_the_gold_frequency():
    # the prose prompt's "route + frequency" item, written with a hyphen
    out = _attempt(
        "The answer specifies oral route and once-daily frequency",
        "答案指定口服途径和每日一次的频次",
        task="WU",
        writes=[METFORMIN],
    )
    assert out.compiled is not None and out.compiled.languages == ("en", "zh"), out.explanation
    assert set(out.compiled.check["params"]) == {"route", "frequency"}
    assert _passes(out.compiled.check, "", [METFORMIN])
    wrong = {**METFORMIN, "arguments": {**METFORMIN["arguments"], "frequency": "BID"}}
    assert not _passes(out.compiled.check, "", [wrong])


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # semantics §3: adverbs before the verb ("correctly cites"), here two joined, in both languages
        ("The answer correctly and explicitly cites ammonia as 62 umol/L", "答案正确且明确地引用了血氨值为62 umol/L"),
        # a translation that puts the object first: 将<X>引用为<值> is "cites <X> as <v>"
        ("The answer clearly cites the ammonia value as 62 umol/L", "答案准确无误地将血氨值引用为62 umol/L"),
    ],
)
def test_adverb_chains_and_the_object_first_chinese_order(en, zh):
    out = _attempt(en, zh)
    assert out.compiled is not None and out.compiled.languages == ("en", "zh"), out.explanation
    assert out.compiled.check["value"] == 62
    assert not _passes(out.compiled.check, WRONG["en"]) and not _passes(out.compiled.check, WRONG["zh"])


def test_the_object_first_order_does_not_turn_an_interpretation_or_a_link_into_a_mention():
    # 将<X>与<Y>联系起来 (relates, the semantics file's judgement item) stays a judgement
    out = _attempt("The answer relates ammonia to the confusion", "答案将血氨与意识模糊联系起来")
    assert out.compiled is None and out.reason == "judgement"


@pytest.mark.parametrize(
    ("en", "zh"),
    [
        # labs that both the compiler's analyte table and the EHR glossary name (troponin T, CRP, total bilirubin):
        # one measured thing, so the interpretation of semantics §3 compiles
        (
            "The answer interprets troponin T as above the normal range (0–0.01 ng/mL)",
            "答案将肌钙蛋白T解读为高于正常范围（0–0.01 ng/mL）",
        ),
        ("The answer correctly concludes that C-reactive protein is elevated", "答案正确得出C反应蛋白偏高的结论"),
        ("The answer concludes that total bilirubin is normal", "答案得出总胆红素正常的结论"),
    ],
)
def test_a_lab_named_by_both_the_analyte_table_and_the_glossary_is_one_analyte(en, zh):
    out = _attempt(en, zh)
    assert out.compiled is not None and out.compiled.rule == "term/range_status", out.explanation
    assert out.compiled.languages == ("en", "zh")
